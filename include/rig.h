/* rig: order the work of several devices by the memory it uses.
 *
 * rig.h is the ordering face of librig: devices, buffers, submissions, points and waits. Mapped
 * registration (verdicts, the self-test probe, registered host ranges) is in rig_mapped.h, which includes
 * this header. Both compile as C99 and as C++.
 *
 * ## The model in one paragraph
 * Each device numbers its submits 1, 2, 3 ...: its timeline. A point names one value of one device
 * (rig_point). Each allocation of memory records the point of its last write and, per device, the point of
 * its last use: its stamps. A submit reads the stamps of the memory its work uses, makes the work follow the
 * points they name, and raises them to its own point. So a program never names an event or a fence:
 *   rule 1  device order: value v of a device starts after every earlier value of that device completed;
 *   rule 2  explicit waits: a submit follows every point in its waits (only needed for work sharing no memory);
 *   rule 3  a device read follows the allocation's last write made by another device;
 *   rule 4  a device write follows every other device's last use, then becomes the last write;
 *   rule 5  a host read (rig_buffer_read, read_into) follows the last write, committing the writer;
 *   rule 6  a host write (rig_buffer_write, write_from), a release and a reuse follow every use.
 * The full statement, with examples: docs/ordering-model.md (docs/ordering.md: where each rule lives).
 *
 * ## Conventions, followed by every function
 * - Every function returns rig_status; results go through out-pointers, written only on RIG_OK.
 *   On failure rig_last_error() says why in words (thread-local, valid until the thread's next rig call).
 * - Handles are opaque. A null, released, stale or forged handle gives RIG_INVALID_HANDLE, never a crash.
 * - Nullability: every pointer parameter (handles included) is marked. RIG_NONNULL: the caller passes a
 *   valid pointer; null is still answered (RIG_INVALID_ARGUMENT, or RIG_INVALID_HANDLE for a handle),
 *   never a crash. RIG_NULLABLE: null has the meaning the contract gives it. Under clang the markers are
 *   _Nonnull and _Nullable (for bindgen and the analyzer); elsewhere they expand to nothing. Struct fields
 *   and results are described in words.
 * - Ownership: a call that makes a handle (create, open, wrap, view, borrow, make, take) gives the caller a
 *   handle to release with its rig_*_release. rig keeps alive what it still needs: a run keeps its
 *   submission and buffers, a buffer keeps its allocation, a borrow keeps the buffer it borrows.
 * - A callback is never called when the call that would call it fails before reaching it.
 * - Structs that may grow start with a `size` field the caller sets to sizeof(the struct).
 * - Domains (threads): every function may be called from any thread. Only these waits hold a lock of rig's:
 *   opening a device (its name's lock, while the driver opens it), a submit whose hand-over may block (the
 *   device's turn, while the driver takes the work), a commit made by a wait (the committed device's turn),
 *   and a first borrow (the allocation's lock, while the driver maps the memory). No other wait holds a
 *   lock; none is held while waiting for a device to reach a value. A run is used by one thread at a time:
 *   rig_submit, rig_run_set_buffer or rig_run_set_scalars called while another call on the same run is in
 *   progress on another thread is refused with RIG_BUSY and changes nothing.
 * - Commits: a driver may hold handed-over work until it is committed. Every wait (host or in another
 *   device's queue) commits first; rig_device_signaled() commits nothing. Memory devices, CUDA and HIP
 *   commit at hand-over (the work is on its stream when rig_submit returns); Vulkan holds work in an open
 *   command buffer and commits at a wait for one of its values, or by itself every 8 values.
 * - Loss: a driver fault loses a device once and for good. From the loss on the device reaches no further
 *   value: the values it had reached stay reached, every later one is never reached, and every wait that
 *   must pass one returns RIG_LOST (rig_device_wait says exactly which). A wait's answer never changes.
 * - Fork: in a child of fork(), every device the parent had opened is lost ("inherited across fork"): its
 *   waits and submits answer RIG_LOST at once, whatever a parent thread held. Devices the child opens work.
 *   A handle a parent thread was inside a call with (a run being submitted) is free in the child: its calls
 *   never answer RIG_BUSY for that thread, and releasing it does not wait. Do not fork from inside a
 *   callback rig runs (a host kernel, a progress callback): the child would drop that call's hold too.
 */
#ifndef RIG_H
#define RIG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* RIG_API marks every function of librig. The library is built with RIG_BUILDING defined, which exports
 * the function (hidden is the build's default); a caller sees a plain extern declaration (dllimport on
 * Windows unless RIG_STATIC says it links a static librig). A binding generator may define RIG_API first. */
#ifndef RIG_API
#if defined(RIG_BUILDING)
#if defined(_WIN32)
#define RIG_API __declspec(dllexport)
#elif defined(__GNUC__)
#define RIG_API __attribute__((visibility("default")))
#else
#define RIG_API
#endif
#else
#if defined(_WIN32) && !defined(RIG_STATIC)
#define RIG_API __declspec(dllimport)
#else
#define RIG_API extern
#endif
#endif
#endif /* RIG_API */

/* Nullability markers (see Conventions). The header marks parameters, not fields or results, so clang's
 * completeness warning is silenced for rig's headers alone (RIG_NULLABILITY_BEGIN/END around them). */
#if defined(__clang__)
#define RIG_NULLABLE _Nullable
#define RIG_NONNULL _Nonnull
#define RIG_NULLABILITY_BEGIN \
  _Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Wnullability-completeness\"") \
  _Pragma("clang diagnostic ignored \"-Wnullability-extension\"")
#define RIG_NULLABILITY_END _Pragma("clang diagnostic pop")
#else
#define RIG_NULLABLE
#define RIG_NONNULL
#define RIG_NULLABILITY_BEGIN
#define RIG_NULLABILITY_END
#endif

RIG_NULLABILITY_BEGIN

/* ---------------------------------------------------------------------------------------------------- */
/* Version                                                                                              */

#define RIG_VERSION_MAJOR 0
#define RIG_VERSION_MINOR 1
#define RIG_VERSION_PATCH 0
#define RIG_VERSION_NUMBER (RIG_VERSION_MAJOR * 10000 + RIG_VERSION_MINOR * 100 + RIG_VERSION_PATCH)

/* The library's run-time version, RIG_VERSION_NUMBER of the build that made it. Waits for nothing. */
RIG_API unsigned rig_version_number(void);
/* The run-time version as "MAJOR.MINOR.PATCH", a static string. Waits for nothing. */
RIG_API const char *rig_version_string(void);

/* ---------------------------------------------------------------------------------------------------- */
/* Status                                                                                               */

/* Values are pinned: they never change between versions. Switch with a default branch: codes may be added.
 * Every enum of this header has a *_MAX_ENUM member so that it is 32 bits wide and any value a binding
 * passes is a valid value of the type inside rig (which answers RIG_INVALID_ARGUMENT for unknown ones). */
typedef enum rig_status {
  RIG_OK = 0,
  RIG_INVALID_ARGUMENT = 1, /* a size, range, slot, access, value or pointer is wrong */
  RIG_INVALID_HANDLE = 2,   /* null, released, stale or forged handle, or a handle of the wrong type */
  RIG_UNSUPPORTED = 3,      /* the device or its driver cannot do this (a host kernel on a GPU, ...) */
  RIG_UNMAPPABLE = 4,       /* a borrow the device cannot map (foreign memory, unaligned host memory) */
  RIG_OUT_OF_MEMORY = 5,    /* host or device memory exhausted */
  RIG_LOST = 6,             /* the device, or a device the work waits for, is lost */
  RIG_TIMEOUT = 7,          /* a wait's timeout passed; nothing changed */
  RIG_INTERRUPTED = 8,      /* a wait was interrupted; nothing changed, no device lost */
  RIG_DRIVER = 9,           /* a driver call failed without losing the device (message names the call) */
  RIG_NOT_FOUND = 10,       /* no such device, driver or kernel */
  RIG_BUSY = 11,            /* the resource is in use (a range registered by another, a live export) */
  RIG_STATUS_MAX_ENUM = 0x7fffffff /* keeps the enum 32-bit; never returned */
} rig_status;

/* The last failure's message on this thread: a static or thread-local string, never null ("" after OK).
 * Valid until this thread's next rig call. Waits for nothing. */
RIG_API const char *rig_last_error(void);
/* The status code's name ("RIG_LOST"), a static string; "RIG_UNKNOWN_STATUS" for other values. */
RIG_API const char *rig_status_name(rig_status status);

/* ---------------------------------------------------------------------------------------------------- */
/* Diagnostics                                                                                          */

/* How much a diagnostic matters. Values are pinned. */
typedef enum rig_log_level {
  RIG_LOG_DEBUG = 0,   /* a trace asked for by an environment variable (RIG_LOAD_TRACE's milestones) */
  RIG_LOG_INFO = 1,    /* reserved: nothing is said at this level yet */
  RIG_LOG_WARNING = 2, /* something asked for cannot be done as asked; a validation layer's warning */
  RIG_LOG_ERROR = 3,   /* a defect found (a validation message counted against the process) */
  RIG_LOG_LEVEL_MAX_ENUM = 0x7fffffff
} rig_log_level;

/* Receives one diagnostic: `message` is one line without its newline, valid only during the call.
 * Called on the thread that says it (the caller's inside a rig call, a load's thread, a driver's thread,
 * or an exit handler at process exit), possibly on several threads at once, possibly while rig holds a
 * lock: it must not call any rig function, and should return quickly. */
typedef void (*rig_log_fn)(void *user, rig_log_level level, const char *message);

/* Sends every diagnostic of `min_level` or above to `fn(user, ...)` from now on, and drops the others.
 * `fn` null restores the default: each message and a newline on stderr (also filtered by `min_level`).
 * The default before any call is stderr at RIG_LOG_DEBUG. Either way the environment variables decide
 * what is said at all (docs/environment.md): a callback receives RIG_LOAD_TRACE's milestones only where
 * RIG_LOAD_TRACE=1. A message being said on another thread when this returns may still reach the previous
 * `fn`; a message said after it returns never does. Keep `fn` and `user` valid until the process exits,
 * or restore the default before they go (an exit handler may still say something). RIG_INVALID_ARGUMENT
 * for an unknown level. Waits for nothing; holds no lock of rig's but the log's own, briefly. */
RIG_API rig_status rig_set_log(rig_log_fn RIG_NULLABLE fn, void *RIG_NULLABLE user, rig_log_level min_level);

/* ---------------------------------------------------------------------------------------------------- */
/* Handles                                                                                              */

typedef struct rig_device_h *rig_device;         /* a device: the host, a memory device, a GPU */
typedef struct rig_buffer_h *rig_buffer;         /* bytes of one allocation, seen by one device */
typedef struct rig_submission_h *rig_submission; /* the parts of some work and its buffer slots */
typedef struct rig_run_h *rig_run;               /* a submission taken with a buffer table, submittable */
typedef struct rig_module_h *rig_module;         /* device code loaded on one device */

/* ---------------------------------------------------------------------------------------------------- */
/* Points                                                                                               */

/* A point, one 64-bit word: device index in bits 47..62 (1..65535, never reused in a process), value in
 * bits 0..46. 0 is "no point". */
typedef uint64_t rig_point;
#define RIG_POINT_VALUE_BITS 47
#define RIG_POINT_VALUE_MASK ((((uint64_t)1) << RIG_POINT_VALUE_BITS) - 1)

/* The point of value `value` of the device with index `device_index`; 0 if either is out of range. */
static inline rig_point rig_point_make(uint32_t device_index, uint64_t value) {
  if (device_index == 0 || device_index > 65535 || value == 0 || value > RIG_POINT_VALUE_MASK) return 0;
  return ((uint64_t)device_index << RIG_POINT_VALUE_BITS) | value;
}
/* The point's device index (0 for no point). */
static inline uint32_t rig_point_device_index(rig_point p) {
  return (uint32_t)((p >> RIG_POINT_VALUE_BITS) & 0xffffu);
}
/* The point's value (0 for no point). */
static inline uint64_t rig_point_value(rig_point p) { return p & RIG_POINT_VALUE_MASK; }

/* ---------------------------------------------------------------------------------------------------- */
/* Devices                                                                                              */

typedef enum rig_device_kind {
  RIG_DEVICE_HOST = 0,   /* the caller's own code: runs no work, never stamped */
  RIG_DEVICE_MEMORY = 1, /* host memory; work runs before rig_submit returns */
  RIG_DEVICE_GPU = 2,    /* a driver's device: work runs after rig_submit returns */
  RIG_DEVICE_CPU = 3,    /* a driver's CPU device (Vulkan lavapipe): work runs after rig_submit returns */
  RIG_DEVICE_KIND_MAX_ENUM = 0x7fffffff
} rig_device_kind;

typedef struct rig_device_info {
  size_t size;             /* set by the caller: sizeof(rig_device_info) */
  const char *name;        /* "A", "cuda:0", "vulkan:1": valid while the device handle lives */
  const char *framework;   /* "host", "memory", "CUDA", "HIP", "Vulkan", "test" */
  const char *model;       /* the driver's name for the hardware ("NVIDIA H200"); "" if none */
  rig_device_kind kind;
  uint32_t index;          /* the device index used in its points, 1..65535; 0 for the host */
  uint64_t memory_bytes;   /* total device memory; 0 where not meaningful */
  int integrated;          /* 1 shares system memory, 0 discrete, -1 unknown */
  int lost;                /* 1 once the device is lost */
} rig_device_info;

/* The host as a device: its buffers are host memory, it runs no work and is never stamped. The handle
 * is always valid; releasing it is accepted and does nothing. Waits for nothing. */
RIG_API rig_status rig_host(rig_device *RIG_NONNULL out);

/* Opens (or makes) the memory device called `name` (any non-empty string up to 255 bytes). Each call makes
 * a new device with a new index, even for a name already open. Holds the name's lock while opening. */
RIG_API rig_status rig_memory_device(const char *RIG_NONNULL name, rig_device *RIG_NONNULL out);

/* Opens a driver's device by name: "cuda:0", "hip:1", "vulkan:0". RIG_INVALID_ARGUMENT for a name not
 * DRIVER:N and for "memory:NAME" (rig_memory_device opens those; the message says so). RIG_NOT_FOUND
 * where the driver cannot be loaded or has no such device (the message says which); RIG_LOST where the GPU
 * can run nothing more in this process (a fault ended its context: CUDA ends it for the process). Each
 * call opens a new device (a new index). Holds the name's lock while the driver opens it. */
RIG_API rig_status rig_device_open(const char *RIG_NONNULL name, rig_device *RIG_NONNULL out);

/* Writes up to `capacity` device names that rig_device_open accepts into `names` (static strings, valid
 * until the process ends) and their count into *count (which may exceed capacity). Loads each driver once;
 * a driver that fails to load is left out (rig_last_error keeps nothing). `names` nullable if capacity 0. */
RIG_API rig_status rig_device_list(const char **RIG_NULLABLE names, size_t capacity,
                                   size_t *RIG_NONNULL count);

/* Fills `info` (info->size set by the caller). Pure read; valid on a lost device. */
RIG_API rig_status rig_device_get_info(rig_device RIG_NONNULL device, rig_device_info *RIG_NONNULL info);

/* The last value given on the device's timeline (0 before any). Never decreases. Pure read. */
RIG_API rig_status rig_device_submitted(rig_device RIG_NONNULL device, uint64_t *RIG_NONNULL value);

/* The last value the device's timeline shows reached (its work completed, its writes visible to the host).
 * A pure read: commits nothing, so polling it may spin forever on held work. Never decreases; on a lost
 * device it stays at the last value reached at the loss. */
RIG_API rig_status rig_device_signaled(rig_device RIG_NONNULL device, uint64_t *RIG_NONNULL value);

/* Waits until the device reached `value`, committing its held work first. No lock held while waiting.
 * timeout_ns: UINT64_MAX waits forever, 0 only checks. RIG_INVALID_ARGUMENT if value > submitted,
 * RIG_TIMEOUT, RIG_INTERRUPTED (see rig_interrupt_waits). RIG_LOST exactly for a value above the last one
 * the device had reached when it was lost (rig_device_signaled's value from the loss on; 0 for a device
 * inherited across fork), whether the loss came before or during the wait: such a value is never reached,
 * so the same wait answers RIG_LOST ever after. A value at or below it answers RIG_OK, before and after. */
RIG_API rig_status rig_device_wait(rig_device RIG_NONNULL device, uint64_t value, uint64_t timeout_ns);

/* rig_device_wait for the point's device and value. The point 0 is reached at once. RIG_NOT_FOUND for a
 * point of no device opened in this process. Points of a released device count as reached, except those a
 * lost device never reached (RIG_LOST, as rig_device_wait). */
RIG_API rig_status rig_wait_point(rig_point point, uint64_t timeout_ns);

/* The point of `value` of this device (value 1..submitted). */
RIG_API rig_status rig_device_point(rig_device RIG_NONNULL device, uint64_t value,
                                    rig_point *RIG_NONNULL out);

/* Why the device was lost, in *why (a string valid while the device handle lives); null if it is not lost.
 * Pure read. */
RIG_API rig_status rig_device_lost_reason(rig_device RIG_NONNULL device, const char **RIG_NONNULL why);

/* Releases the handle. Waits (on the host, holding no lock) for all work submitted to the device; a lost
 * device is released at once. Buffers on it stay valid handles, but new work on it and new buffers answer
 * RIG_LOST ("released"). Its points count as reached (a lost device's: only those it reached before the
 * loss); its driver objects are kept until the process exits, its memory returns as its buffers are
 * released. Releasing the host does nothing. */
RIG_API rig_status rig_device_release(rig_device RIG_NONNULL device);

/* Makes every wait in progress, and every later wait until rig_interrupt_waits(0), return RIG_INTERRUPTED
 * (nothing assigned, nothing lost). For a signal handler's thread: async-signal-safe. */
RIG_API void rig_interrupt_waits(int on);

/* ---------------------------------------------------------------------------------------------------- */
/* Buffers                                                                                              */

typedef enum rig_memory {
  RIG_MEMORY_DEVICE = 0, /* the device's own memory */
  RIG_MEMORY_PINNED = 1, /* host memory page-locked for the device; host-addressable (rig_buffer_export) */
  RIG_MEMORY_MAPPED = 2, /* device memory the host also addresses where the device has it, else PINNED */
  RIG_MEMORY_MAX_ENUM = 0x7fffffff
} rig_memory;

typedef enum rig_access {
  RIG_ACCESS_READ = 1,
  RIG_ACCESS_WRITE = 2,
  RIG_ACCESS_READ_WRITE = 3,
  RIG_ACCESS_MAX_ENUM = 0x7fffffff
} rig_access;

/* A new allocation of `length` bytes on `device` (unspecified contents) with stamps of its own. On the
 * host and memory devices the memory is host memory, page-aligned from 64 KiB. length 0 is accepted.
 * Waits for nothing. */
RIG_API rig_status rig_buffer_create(rig_device RIG_NONNULL device, size_t length, rig_memory memory,
                                     rig_buffer *RIG_NONNULL out);

/* Called once rig no longer uses wrapped memory: after the last buffer over it is released and every use
 * of it is reached. Runs on whichever thread made that happen. */
typedef void (*rig_release_fn)(void *user);

/* A buffer on the host over the caller's `length` bytes at `data`, without a copy: a new allocation with
 * stamps of its own on every call, even over bytes another call wraps (wrap once, share through views and
 * borrows). `access` says what rig may do to the bytes (RIG_ACCESS_READ for a read-only mapping).
 * `release` (nullable) is called as rig_release_fn says; the bytes must stay valid until then. */
RIG_API rig_status rig_buffer_wrap(void *RIG_NULLABLE data, size_t length, rig_access access,
                                   rig_release_fn RIG_NULLABLE release, void *RIG_NULLABLE user,
                                   rig_buffer *RIG_NONNULL out);

/* A buffer over bytes [offset, offset+length) of `buffer`: same device, same allocation and stamps.
 * RIG_INVALID_ARGUMENT where the range leaves the buffer (overflow included). Waits for nothing. */
RIG_API rig_status rig_buffer_view(rig_buffer RIG_NONNULL buffer, size_t offset, size_t length,
                                   rig_buffer *RIG_NONNULL out);

/* A buffer on `device` over `buffer`'s bytes without a copy, sharing its allocation's stamps. Memory
 * devices borrow any host memory; a GPU borrows host memory its driver can register and a peer's memory
 * where peer access exists; otherwise RIG_UNMAPPABLE with the reason. CUDA and HIP borrow host memory of
 * any alignment, any number of ranges whatever pages they share, borrowed and released in any order: rig
 * registers the enclosing pages once for every wrap on them, registering only pages not registered yet,
 * and splits a copy where two registrations meet (RIG_UNMAPPABLE where the pages overlap a range of
 * rig_host_register, or where a writable wrap reaches pages registered read-only for a read-only mapping).
 * Vulkan borrows host memory of any alignment where the device offers VK_EXT_external_memory_host,
 * each borrow importing its enclosing pages (docs/ordering-model.md), unless RIG_VULKAN_HOST_IMPORT=0; it
 * refuses shared and read-only file mappings (the kernel hazard, docs/mapped.md). Where a borrow is
 * refused, use the portable upload and download, rig_buffer_write_from and rig_buffer_read_into, on a
 * buffer of the device. The mapping (one per device and allocation) is made at
 * the first borrow and released only after work through it is reached. May call the driver to register
 * memory; holds the allocation's lock and the range table's lock meanwhile, waiting for no device. */
RIG_API rig_status rig_buffer_borrow(rig_device RIG_NONNULL device, rig_buffer RIG_NONNULL buffer,
                                     rig_buffer *RIG_NONNULL out);

/* The buffer's length in bytes and its device (the device handle is borrowed: do not release it). */
RIG_API rig_status rig_buffer_length(rig_buffer RIG_NONNULL buffer, size_t *RIG_NONNULL length);
RIG_API rig_status rig_buffer_device(rig_buffer RIG_NONNULL buffer, rig_device *RIG_NONNULL device);

/* Host reads (rule 5): waits for the allocation's last write (committing its device), then runs
 * `fn(user, bytes, length)`. The bytes are valid only during fn; device memory is staged through host
 * memory. No lock is held while waiting or while fn runs. */
typedef void (*rig_read_fn)(void *user, const void *bytes, size_t length);
RIG_API rig_status rig_buffer_read(rig_buffer RIG_NONNULL buffer, rig_read_fn RIG_NONNULL fn,
                                   void *RIG_NULLABLE user);

/* Host writes (rule 6): waits for every use of the allocation by every device, then runs
 * `fn(user, bytes, length)` whose writes land in the buffer. Valid only during fn. No lock held. */
typedef void (*rig_write_fn)(void *user, void *bytes, size_t length);
RIG_API rig_status rig_buffer_write(rig_buffer RIG_NONNULL buffer, rig_write_fn RIG_NONNULL fn,
                                    void *RIG_NULLABLE user);

/* Copies buffer bytes [offset, offset+length) into `dst` after the last write (rule 5). With
 * rig_buffer_write_from, the portable download and upload: they work on every device, whether or not it
 * can borrow host memory. */
RIG_API rig_status rig_buffer_read_into(rig_buffer RIG_NONNULL buffer, size_t offset, void *RIG_NULLABLE dst,
                                        size_t length);
/* Copies `length` bytes from `src` into the buffer at `offset` after every use (rule 6). */
RIG_API rig_status rig_buffer_write_from(rig_buffer RIG_NONNULL buffer, size_t offset,
                                         const void *RIG_NULLABLE src, size_t length);

/* A host pointer to the buffer's bytes, ordered only as of this call: it waits for every use now; host
 * accesses through the pointer later follow nothing. Valid until the last buffer over the allocation is
 * released. RIG_UNSUPPORTED for memory the host does not address (GPU device memory). */
RIG_API rig_status rig_buffer_export(rig_buffer RIG_NONNULL buffer, void **RIG_NONNULL data);

/* Releases the handle. The allocation's memory is returned (after every use of it is reached, rule 6)
 * once its last buffer is released and no run holds it. May wait for devices; holds no lock meanwhile. */
RIG_API rig_status rig_buffer_release(rig_buffer RIG_NONNULL buffer);

/* ---------------------------------------------------------------------------------------------------- */
/* Modules (device code)                                                                                */

typedef enum rig_module_format {
  RIG_MODULE_PTX = 1,    /* CUDA: PTX text (NUL-terminated or not) */
  RIG_MODULE_CUBIN = 2,  /* CUDA: cubin or fatbin bytes */
  RIG_MODULE_SPIRV = 3,  /* Vulkan: SPIR-V words */
  RIG_MODULE_HIP_CODE_OBJECT = 4, /* HIP: a code object */
  RIG_MODULE_FORMAT_MAX_ENUM = 0x7fffffff
} rig_module_format;

/* Loads device code on `device`. RIG_UNSUPPORTED where the device takes no such format. May block in the
 * driver (compiling); holds no lock of rig's. */
RIG_API rig_status rig_module_load(rig_device RIG_NONNULL device, rig_module_format format,
                                   const void *RIG_NONNULL bytes, size_t length, rig_module *RIG_NONNULL out);
/* Releases the module; kept alive while a submission uses it. */
RIG_API rig_status rig_module_release(rig_module RIG_NONNULL module);

/* ---------------------------------------------------------------------------------------------------- */
/* Submissions                                                                                          */

/* A host kernel: a C function that a memory device runs on the host over the bound slots' bytes. */
typedef struct rig_span {
  void *data;
  size_t length;
} rig_span;
typedef void (*rig_host_kernel_fn)(void *user, const rig_span *slots, size_t slot_count);

typedef enum rig_part_kind {
  RIG_PART_COPY = 1,        /* copy bytes from one slot to another, or within one (never overlapping) */
  RIG_PART_FILL = 2,        /* fill a slot's range with a byte */
  RIG_PART_HOST_KERNEL = 3, /* memory devices (and the test driver): run a C function */
  RIG_PART_LAUNCH = 4,      /* GPU: launch a kernel of a module */
  RIG_PART_KIND_MAX_ENUM = 0x7fffffff
} rig_part_kind;

#define RIG_WHOLE SIZE_MAX /* as a length: to the end of the slot's buffer */

typedef struct rig_part {
  size_t size; /* sizeof(rig_part) */
  rig_part_kind kind;
  /* COPY: src_slot/src_offset -> dst_slot/dst_offset, length bytes (RIG_WHOLE: the source from offset).
   * FILL: dst_slot/dst_offset, length bytes of `byte`. */
  uint32_t src_slot, dst_slot;
  size_t src_offset, dst_offset, length;
  uint8_t byte;
  /* HOST_KERNEL: fn(user, spans of every slot of the submission) */
  rig_host_kernel_fn fn;
  void *user;
  /* LAUNCH: `function` of `module` on grid x block threads with shared_bytes of dynamic shared memory.
   * Its parameters are, in order: the device address of each of the submission's slots in `slots`
   * (slot_count of them), then the run's scalar bytes (rig_run_set_scalars) as one block (CUDA/HIP), or
   * as push constants (Vulkan, where slot i is binding i of set 0). */
  rig_module module;
  const char *function;
  uint32_t grid[3], block[3];
  uint32_t shared_bytes;
  const uint32_t *slots;
  uint32_t slot_count;
} rig_part;

/* Makes a submission for `device`: its parts in order and, for each of slot_count slots, the access its
 * parts make (what the stamps record). Checks each part against the slots (indices, access: a copy's
 * destination must be writable, its source readable) and the device (RIG_UNSUPPORTED for a host kernel
 * on a GPU). Copies what it needs of `parts`. Waits for nothing.
 * The overlap rule, the same on every device: a copy whose source and destination share bytes of one
 * allocation is refused with RIG_INVALID_ARGUMENT (never run as memmove, never left undefined): here
 * where both are in one slot, else by rig_submit once rig_run_set_buffer bound such buffers. */
RIG_API rig_status rig_submission_make(rig_device RIG_NONNULL device, const rig_part *RIG_NULLABLE parts,
                                       size_t part_count, const rig_access *RIG_NULLABLE slot_access,
                                       size_t slot_count, rig_submission *RIG_NONNULL out);
/* Releases the handle; runs taken from it keep what they need. Waits for nothing. RIG_INVALID_HANDLE for a
 * null, released or foreign handle. */
RIG_API rig_status rig_submission_release(rig_submission RIG_NONNULL submission);

/* Takes a run of the submission (the page's `take`): a buffer table with one entry per slot, all empty,
 * and room for scalars. A run may be submitted any number of times. Waits for nothing. */
RIG_API rig_status rig_run_take(rig_submission RIG_NONNULL submission, rig_run *RIG_NONNULL out);

/* Puts `buffer` in slot `slot` of the run's table. The buffer must be on the submission's device (memory
 * of another device is reached only through a borrow: RIG_INVALID_ARGUMENT otherwise), large enough for
 * every part's range in that slot, and writable if the slot writes (not a read-only wrap). The run keeps
 * the buffer alive. A copy whose source and destination then share bytes of one allocation (two views of
 * one buffer, say) makes rig_submit answer RIG_INVALID_ARGUMENT until a slot is set again (the overlap
 * rule, rig_submission_make); the check is made here, never on the submit path.
 * Once every slot is set, the device's driver prepares the run's hand-over here (CUDA/HIP: each part's
 * call; Vulkan: a command buffer of the run's own), so that a repeated rig_submit works nothing out again:
 * set a run once, submit it many times. Waits for nothing. */
RIG_API rig_status rig_run_set_buffer(rig_run RIG_NONNULL run, uint32_t slot, rig_buffer RIG_NONNULL buffer);

/* Sets the scalar bytes passed to launches (copied; at most 4096 bytes). A ready run's hand-over is
 * prepared again here, as by rig_run_set_buffer; submits already made run with the scalars they were
 * made with. Waits for nothing. */
RIG_API rig_status rig_run_set_scalars(rig_run RIG_NONNULL run, const void *RIG_NULLABLE bytes,
                                       size_t length);

/* Submits the run on its device and writes its point to *point (nullable). Every slot must be set.
 * What it waits for (docs/ordering-model.md, "What a submit does"): the last write of every allocation it
 * reads and every other device's last use of every allocation it writes (rules 3, 4), and `waits`
 * (rule 2, each value at most its device's submitted, else RIG_INVALID_ARGUMENT; nullable if count 0).
 * Points not yet reached are committed, then waited for in the device's queue where its driver can,
 * else on the host with no lock held. Then it takes the device's turn (a lock: held while the driver
 * takes the work, which may block on a full queue), assigns submitted+1, hands over and raises the stamps.
 * A submit with no parts still takes a value. No heap allocation unless it waits on the host.
 * RIG_BUSY, with nothing assigned, while another thread's call on the same run is in progress.
 * RIG_LOST if the device, or a point it must pass, is lost (then nothing is assigned). A submit whose
 * hand-over had begun when the device was lost returns RIG_OK and its point, which is never reached.
 * RIG_INVALID_ARGUMENT, before any wait and with nothing assigned, for a slot not set, a range outside its
 * buffer, or a binding the device cannot take (Vulkan: longer than maxStorageBufferRange); the device is
 * left as it was. */
RIG_API rig_status rig_submit(rig_run RIG_NONNULL run, const rig_point *RIG_NULLABLE waits,
                              size_t wait_count, rig_point *RIG_NULLABLE point);

/* The most runs one rig_submit_many takes: the batch is kept on the caller's stack, never the heap. */
#define RIG_SUBMIT_MANY_MAX 64

/* Submits runs[0..run_count) of one device as consecutive values, in order: runs[i] gets submitted+1+i, its
 * point in points[i] (nullable: run_count points out). Each run is ordered exactly as if it were submitted
 * alone right after runs[i-1] with the same `waits` (docs/ordering-model.md, "Batches"): a run that uses what
 * an earlier run of the batch wrote follows it by rule 1, and every point of another device that any run
 * must follow is committed and waited for (in the device's queue where its driver can, else on the host
 * with no lock held) before the turn. Then the turn is taken once, the driver takes the whole batch (CUDA:
 * consecutive independent copies as one cuMemcpyBatchAsync where the driver has it; a batch of the same
 * recorded runs seen before as one graph launch) and the stamps are raised run by run. No heap allocation unless it waits on the host.
 * RIG_INVALID_ARGUMENT, before any wait and with nothing assigned, for run_count 0 or above
 * RIG_SUBMIT_MANY_MAX, null runs, runs of more than one device, or any run rig_submit would refuse (a slot
 * not set, a range outside its buffer); RIG_INVALID_HANDLE for a released run; RIG_BUSY, nothing assigned,
 * while another call holds one of the runs (a run named twice in one batch included). RIG_LOST as
 * rig_submit: if the device or a point it must pass is lost nothing is assigned; a batch whose hand-over had
 * begun when the device was lost returns RIG_OK and points that are never reached. */
RIG_API rig_status rig_submit_many(const rig_run *RIG_NULLABLE runs, size_t run_count,
                                   const rig_point *RIG_NULLABLE waits, size_t wait_count,
                                   rig_point *RIG_NULLABLE points);

/* Releases the handle; work already submitted goes on (memory returns only once work using it is
 * reached). Waits for nothing.
 * RIG_INVALID_HANDLE for a null, released or foreign handle. */
RIG_API rig_status rig_run_release(rig_run RIG_NONNULL run);

RIG_NULLABILITY_END

#ifdef __cplusplus
}
#endif

#endif /* RIG_H */
