/* go.i: the Go layer of rig.i (included only when SWIG generates Go, with -cgo -intgosize 64).
 *
 * SWIG writes it into the Go module's internal package rig.dev/rig/internal/raw (bindings/go/internal/raw,
 * `go generate` there runs gen.sh), so `go doc rig.dev/rig` shows only the Go API. The raw functions keep
 * rig's shape: they return the status, and take Go slices where C takes an out-pointer (the result is
 * element 0) or a byte range. Handles are uintptr; C pointers rig gives back (strings, exports) are
 * unsafe.Pointer, so no uintptr is ever turned back into a pointer (go vet's unsafeptr check). The module's
 * own Go files (bindings/go/*.go) build the objects on top: handles with finalizers, error values carrying
 * rig_last_error() (read on the same OS thread: the Go layer locks the goroutine to its thread around
 * each call and its message), and callbacks as Go functions.
 *
 * Callbacks: a C trampoline here calls a function the Go package exports (rigGo*); `user` carries a
 * runtime/cgo.Handle naming the Go side's state. A Go callback never panics through librig's frames: the
 * exported function recovers, answers rig with a status, and the Go layer panics again once the rig call
 * has returned. Go memory is never kept by rig beyond a call (cgo's rule): wrapping copies Go bytes into
 * C memory that rig frees, and probe ops allocate host memory with C.malloc. */

%{
/* Exported by bindings/go/callbacks.go (package rig, cgo //export); resolved when a program links. */
extern void rigGoAccess(uintptr_t handle, void *bytes, size_t length);
extern void rigGoKernel(uintptr_t handle, void *spans, size_t count);
extern int rigGoProbeOp(uintptr_t handle, int op, void *a, void *b, size_t length, void **out);
extern uint64_t rigGoProbeNow(uintptr_t handle);
extern void rigGoLog(uintptr_t handle, char *message);
extern int rigGoFact(uintptr_t handle, int fact);

/* The operations of rigGoProbeOp, in the order of rig_probe_ops. */
enum { RIG_GO_REGISTER = 1, RIG_GO_UNREGISTER, RIG_GO_ALLOC, RIG_GO_FREE, RIG_GO_ROUND_TRIP, RIG_GO_UPLOAD };

static void rig_go_read_tramp(void *user, const void *bytes, size_t length) {
  rigGoAccess((uintptr_t)user, (void *)bytes, length);
}
static void rig_go_write_tramp(void *user, void *bytes, size_t length) {
  rigGoAccess((uintptr_t)user, bytes, length);
}
static void rig_go_kernel_tramp(void *user, const rig_span *slots, size_t slot_count) {
  rigGoKernel((uintptr_t)user, (void *)slots, slot_count);
}
static rig_status rig_go_op_register(void *user, void *host, size_t length) {
  return (rig_status)rigGoProbeOp((uintptr_t)user, RIG_GO_REGISTER, host, NULL, length, NULL);
}
static rig_status rig_go_op_unregister(void *user, void *host, size_t length) {
  return (rig_status)rigGoProbeOp((uintptr_t)user, RIG_GO_UNREGISTER, host, NULL, length, NULL);
}
static rig_status rig_go_op_alloc(void *user, size_t length, void **host) {
  return (rig_status)rigGoProbeOp((uintptr_t)user, RIG_GO_ALLOC, NULL, NULL, length, host);
}
static rig_status rig_go_op_free(void *user, void *host, size_t length) {
  return (rig_status)rigGoProbeOp((uintptr_t)user, RIG_GO_FREE, host, NULL, length, NULL);
}
static rig_status rig_go_op_round_trip(void *user, const void *host, void *into, size_t length) {
  return (rig_status)rigGoProbeOp((uintptr_t)user, RIG_GO_ROUND_TRIP, (void *)host, into, length, NULL);
}
static rig_status rig_go_op_upload(void *user, const void *host, size_t length) {
  return (rig_status)rigGoProbeOp((uintptr_t)user, RIG_GO_UPLOAD, (void *)host, NULL, length, NULL);
}
static uint64_t rig_go_op_now(void *user) { return rigGoProbeNow((uintptr_t)user); }
static void rig_go_log_tramp(void *user, const char *message) {
  rigGoLog((uintptr_t)user, (char *)message);
}
static int rig_go_fact_tramp(void *user, rig_device_fact fact) {
  return rigGoFact((uintptr_t)user, (int)fact);
}
static void rig_go_free(void *user) { free(user); }

static void rig_go_fill_ops(rig_probe_ops *ops, uintptr_t handle, int with_clock) {
  memset(ops, 0, sizeof *ops);
  ops->size = sizeof *ops;
  ops->user = (void *)handle;
  ops->register_host = rig_go_op_register;
  ops->unregister_host = rig_go_op_unregister;
  ops->alloc_host = rig_go_op_alloc;
  ops->free_host = rig_go_op_free;
  ops->round_trip = rig_go_op_round_trip;
  ops->upload = rig_go_op_upload;
  ops->now_ns = with_clock ? rig_go_op_now : NULL;
}
static void rig_go_fill_options(rig_probe_options *options, double min_relative_speed, uintptr_t log) {
  memset(options, 0, sizeof *options);
  options->size = sizeof *options;
  options->min_relative_speed = min_relative_speed;
  options->log = log ? rig_go_log_tramp : NULL;
  options->log_user = (void *)log;
}
%}

/* ---- handles, and the cgo.Handle values carried as `user`, are uintptr in the raw layer ---- */
%typemap(gotype) uintptr_t "uintptr"
%typemap(in) uintptr_t %{ $1 = (uintptr_t)$input; %}

%define RIG_GO_HANDLE(TYPE)
%typemap(gotype) TYPE "uintptr"
%typemap(in) TYPE %{ $1 = ($1_ltype)$input; %}
%typemap(out) TYPE %{ $result = $1; %}
%enddef
RIG_GO_HANDLE(rig_device)
RIG_GO_HANDLE(rig_buffer)
RIG_GO_HANDLE(rig_submission)
RIG_GO_HANDLE(rig_run)
RIG_GO_HANDLE(rig_module)
RIG_GO_HANDLE(rig_verdict)
RIG_GO_HANDLE(rig_swig_parts *)

/* ---- out-pointers: a slice whose element 0 receives the result (as Go's typemaps.i OUTPUT) ---- */
%define RIG_GO_OUT(CTYPE, GOTYPE, NAMES)
%typemap(gotype) CTYPE *NAMES "[]GOTYPE"
%typemap(in) CTYPE *NAMES {
  if ($input.len < 1) _swig_gopanic("rig: an out slice needs one element");
  $1 = ($1_ltype)$input.array;
}
%typemap(argout) CTYPE *NAMES ""
%enddef
RIG_GO_OUT(rig_device, uintptr, out)
RIG_GO_OUT(rig_device, uintptr, device)
RIG_GO_OUT(rig_buffer, uintptr, out)
RIG_GO_OUT(rig_submission, uintptr, out)
RIG_GO_OUT(rig_run, uintptr, out)
RIG_GO_OUT(rig_module, uintptr, out)
RIG_GO_OUT(rig_verdict, uintptr, out)
RIG_GO_OUT(rig_verdict, uintptr, decided)
RIG_GO_OUT(uint64_t, uint64, value)
RIG_GO_OUT(rig_point, uint64, out)
RIG_GO_OUT(size_t, uint64, length)
RIG_GO_OUT(int, int32, cacheable)
RIG_GO_OUT(int, int32, registered)
RIG_GO_OUT(rig_verdict_kind, int32, kind)
RIG_GO_OUT(rig_refusal, int32, refusal)
RIG_GO_OUT(double, float64, registered)
RIG_GO_OUT(double, float64, staged)
RIG_GO_OUT(const char *, unsafe.Pointer, why)
RIG_GO_OUT(const char *, unsafe.Pointer, reason)
RIG_GO_OUT(const char *, unsafe.Pointer, text)
RIG_GO_OUT(const char *, unsafe.Pointer, strings)
RIG_GO_OUT(void *, unsafe.Pointer, data)
RIG_GO_OUT(int64_t, int64, numbers)

/* rig_submit's point is nullable: an empty slice passes NULL. */
%typemap(gotype) rig_point *point "[]uint64"
%typemap(in) rig_point *point %{ $1 = $input.len ? ($1_ltype)$input.array : NULL; %}

/* ---- byte ranges and waits: Go slices, used by rig only during the call ---- */
%typemap(gotype) (const void *src, size_t length), (void *dst, size_t length), (const void *bytes, size_t length),
    (void *host, size_t length), (const void *host, size_t length), (const void *map, size_t map_length),
    (const void *reference, size_t reference_length) "[]byte"
%typemap(in) (const void *src, size_t length), (void *dst, size_t length), (const void *bytes, size_t length),
    (void *host, size_t length), (const void *host, size_t length), (const void *map, size_t map_length),
    (const void *reference, size_t reference_length) {
  $1 = ($1_ltype)$input.array;
  $2 = (size_t)$input.len;
}
%typemap(gotype) void *host "[]byte"
%typemap(in) void *host %{ $1 = ($1_ltype)$input.array; %}
%typemap(gotype) (const rig_point *waits, size_t wait_count) "[]uint64"
%typemap(in) (const rig_point *waits, size_t wait_count) {
  $1 = ($1_ltype)$input.array;
  $2 = (size_t)$input.len;
}

%inline %{
/* A host buffer over a C copy of Go's bytes (Go memory cannot stay lent to C past a call): rig frees the
 * copy when it no longer uses it. Read-write unless read_only. */
static rig_status rig_go_wrap_copy(const void *src, size_t length, int read_only, rig_buffer *out) {
  void *copy = malloc(length ? length : 1);
  if (!copy) return RIG_OUT_OF_MEMORY;
  if (length) memcpy(copy, src, length);
  rig_status status = rig_buffer_wrap(copy, length, read_only ? RIG_ACCESS_READ : RIG_ACCESS_READ_WRITE,
                                      rig_go_free, copy, out);
  if (status != RIG_OK) free(copy); /* rig calls no release for a wrap that failed */
  return status;
}

/* rig_buffer_wrap over C memory the caller owns (C.malloc, mmap): rig calls nothing when done; the caller
 * frees it only after releasing every buffer over it and waiting for their use. */
static rig_status rig_go_wrap_c(uintptr_t data, size_t length, int read_only, rig_buffer *out) {
  return rig_buffer_wrap((void *)data, length, read_only ? RIG_ACCESS_READ : RIG_ACCESS_READ_WRITE, NULL,
                         NULL, out);
}

static rig_status rig_go_buffer_read(rig_buffer buffer, uintptr_t handle) {
  return rig_buffer_read(buffer, rig_go_read_tramp, (void *)handle);
}
static rig_status rig_go_buffer_write(rig_buffer buffer, uintptr_t handle) {
  return rig_buffer_write(buffer, rig_go_write_tramp, (void *)handle);
}

/* Adds a host-kernel part; handle names the Go kernel (the Submission holds it). */
static int rig_go_parts_host_kernel(rig_swig_parts *p, uintptr_t handle) {
  rig_part *part = rig_swig_parts_push(p);
  if (!part) return -1;
  part->kind = RIG_PART_HOST_KERNEL;
  part->fn = rig_go_kernel_tramp;
  part->user = (void *)handle;
  return 0;
}

/* The device's info: strings[0..2] = name, framework, model (C strings valid while the device lives),
 * numbers[0..5] = kind, index, memory_bytes, integrated, lost. */
static rig_status rig_go_device_info(rig_device device, const char **strings, int64_t *numbers) {
  rig_device_info info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  rig_status status = rig_device_get_info(device, &info);
  if (status != RIG_OK) return status;
  strings[0] = info.name;
  strings[1] = info.framework;
  strings[2] = info.model;
  numbers[0] = info.kind;
  numbers[1] = info.index;
  numbers[2] = (int64_t)info.memory_bytes;
  numbers[3] = info.integrated;
  numbers[4] = info.lost;
  return RIG_OK;
}

/* rig_probe_with over ops written in Go (handle: the Go ops state; log: a handle or 0). */
static rig_status rig_go_probe_with(uintptr_t handle, int with_clock, const void *map, size_t map_length,
                                    const void *reference, size_t reference_length, double min_relative_speed,
                                    uintptr_t log, rig_verdict *out) {
  if (map_length != reference_length) return RIG_INVALID_ARGUMENT;
  rig_probe_ops ops;
  rig_probe_options options;
  rig_go_fill_ops(&ops, handle, with_clock);
  rig_go_fill_options(&options, min_relative_speed, log);
  return rig_probe_with(&ops, map, reference, map_length, &options, out);
}

static rig_status rig_go_probe(rig_device device, const void *map, size_t map_length, const void *reference,
                               size_t reference_length, double min_relative_speed, uintptr_t log,
                               rig_verdict *out) {
  if (map_length != reference_length) return RIG_INVALID_ARGUMENT;
  rig_probe_options options;
  rig_go_fill_options(&options, min_relative_speed, log);
  return rig_probe(device, map, reference, map_length, &options, out);
}

/* rig_static_verdict_for; facts is a handle naming a Go function, or 0 (every fact reads -1). */
static rig_status rig_go_static_verdict_for(const char *framework, int kind, uintptr_t facts,
                                            rig_verdict *decided) {
  return rig_static_verdict_for(framework, (rig_device_kind)kind, facts ? rig_go_fact_tramp : NULL,
                                (void *)facts, decided);
}
%}
