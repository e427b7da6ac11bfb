/* rig: order the work of several devices by the memory it uses.
 *
 * rig.h is the whole public face of librig. It compiles as C99 and as C++.
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
 *   Pointer arguments are non-null unless the contract says "nullable".
 * - Ownership: a call that makes a handle (create, open, wrap, view, borrow, make, take) gives the caller a
 *   handle to release with its rig_*_release. rig keeps alive what it still needs: a run keeps its
 *   submission and buffers, a buffer keeps its allocation, a borrow keeps the buffer it borrows.
 * - A callback is never called when the call that would call it fails before reaching it.
 * - Structs that may grow start with a `size` field the caller sets to sizeof(the struct).
 * - Domains (threads): every function may be called from any thread. Only these waits hold a lock of rig's:
 *   opening a device (its name's lock, while the driver opens it), a submit whose hand-over may block (the
 *   device's turn, while the driver takes the work), a commit made by a wait (the committed device's turn),
 *   and a first borrow (the allocation's lock, while the driver maps the memory). No other wait holds a
 *   lock; none is held while waiting for a device to reach a value. A run is used by one thread at a time.
 * - Commits: a driver may hold handed-over work until it is committed. Every wait (host or in another
 *   device's queue) commits first; rig_device_signaled() commits nothing. Memory devices, CUDA and HIP
 *   commit at hand-over (the work is on its stream when rig_submit returns); Vulkan holds work in an open
 *   command buffer and commits at a wait for one of its values, or by itself every 8 values.
 * - Loss: a driver fault loses a device once and for good. Every later wait that must pass an unreached
 *   point of a lost device returns RIG_LOST.
 */
#ifndef RIG_H
#define RIG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define RIG_API __declspec(dllimport)
#elif defined(__GNUC__)
#define RIG_API __attribute__((visibility("default")))
#else
#define RIG_API
#endif

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
/* Handles                                                                                              */

typedef struct rig_device_h *rig_device;         /* a device: the host, a memory device, a GPU */
typedef struct rig_buffer_h *rig_buffer;         /* bytes of one allocation, seen by one device */
typedef struct rig_submission_h *rig_submission; /* the parts of some work and its buffer slots */
typedef struct rig_run_h *rig_run;               /* a submission taken with a buffer table, submittable */
typedef struct rig_module_h *rig_module;         /* device code loaded on one device */
typedef struct rig_verdict_h *rig_verdict;       /* an answer of mapped registration (see Verdicts) */

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
RIG_API rig_status rig_host(rig_device *out);

/* Opens (or makes) the memory device called `name` (any non-empty string up to 255 bytes). Each call makes
 * a new device with a new index, even for a name already open. Holds the name's lock while opening. */
RIG_API rig_status rig_memory_device(const char *name, rig_device *out);

/* Opens a driver's device by name: "cuda:0", "hip:1", "vulkan:0". RIG_NOT_FOUND where the driver cannot
 * be loaded or has no such device (the message says which); RIG_LOST where the GPU can run nothing more in
 * this process (a fault ended its context: CUDA ends it for the process). Each call opens a new device (a
 * new index). Holds the name's lock while the driver opens it. */
RIG_API rig_status rig_device_open(const char *name, rig_device *out);

/* Writes up to `capacity` device names that rig_device_open accepts into `names` (static strings, valid
 * until the process ends) and their count into *count (which may exceed capacity). Loads each driver once;
 * a driver that fails to load is left out (rig_last_error keeps nothing). `names` nullable if capacity 0. */
RIG_API rig_status rig_device_list(const char **names, size_t capacity, size_t *count);

/* Fills `info` (info->size set by the caller). Pure read; valid on a lost device. */
RIG_API rig_status rig_device_get_info(rig_device device, rig_device_info *info);

/* The last value given on the device's timeline (0 before any). Never decreases. Pure read. */
RIG_API rig_status rig_device_submitted(rig_device device, uint64_t *value);

/* The last value the device's timeline shows reached (its work completed, its writes visible to the host).
 * A pure read: commits nothing, so polling it may spin forever on held work. Valid on a lost device. */
RIG_API rig_status rig_device_signaled(rig_device device, uint64_t *value);

/* Waits until the device reached `value`, committing its held work first. No lock held while waiting.
 * timeout_ns: UINT64_MAX waits forever, 0 only checks. RIG_INVALID_ARGUMENT if value > submitted,
 * RIG_TIMEOUT, RIG_INTERRUPTED (see rig_interrupt_waits), RIG_LOST if the device is or becomes lost. */
RIG_API rig_status rig_device_wait(rig_device device, uint64_t value, uint64_t timeout_ns);

/* rig_device_wait for the point's device and value. The point 0 is reached at once. RIG_NOT_FOUND for a
 * point of no device opened in this process. Points of a released device count as reached. */
RIG_API rig_status rig_wait_point(rig_point point, uint64_t timeout_ns);

/* The point of `value` of this device (value 1..submitted). */
RIG_API rig_status rig_device_point(rig_device device, uint64_t value, rig_point *out);

/* Why the device was lost, in *why (a string valid while the device handle lives); null if it is not lost.
 * Pure read. */
RIG_API rig_status rig_device_lost_reason(rig_device device, const char **why);

/* Releases the handle. Waits (on the host, holding no lock) for all work submitted to the device; a lost
 * device is released at once. Buffers on it stay valid handles, but new work on it and new buffers answer
 * RIG_LOST ("released"). Its points count as reached; its driver objects are kept until the process exits,
 * its memory returns as its buffers are released. Releasing the host does nothing. */
RIG_API rig_status rig_device_release(rig_device device);

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
RIG_API rig_status rig_buffer_create(rig_device device, size_t length, rig_memory memory, rig_buffer *out);

/* Called once rig no longer uses wrapped memory: after the last buffer over it is released and every use
 * of it is reached. Runs on whichever thread made that happen. */
typedef void (*rig_release_fn)(void *user);

/* A buffer on the host over the caller's `length` bytes at `data`, without a copy: a new allocation with
 * stamps of its own on every call, even over bytes another call wraps (wrap once, share through views and
 * borrows). `access` says what rig may do to the bytes (RIG_ACCESS_READ for a read-only mapping).
 * `release` (nullable) is called as rig_release_fn says; the bytes must stay valid until then. */
RIG_API rig_status rig_buffer_wrap(void *data, size_t length, rig_access access, rig_release_fn release,
                                   void *user, rig_buffer *out);

/* A buffer over bytes [offset, offset+length) of `buffer`: same device, same allocation and stamps.
 * RIG_INVALID_ARGUMENT where the range leaves the buffer (overflow included). Waits for nothing. */
RIG_API rig_status rig_buffer_view(rig_buffer buffer, size_t offset, size_t length, rig_buffer *out);

/* A buffer on `device` over `buffer`'s bytes without a copy, sharing its allocation's stamps. Memory
 * devices borrow any host memory; a GPU borrows host memory its driver can register and a peer's memory
 * where peer access exists; otherwise RIG_UNMAPPABLE with the reason. The mapping (one per device and
 * allocation) is made at the first borrow and released only after work through it is reached. May call
 * the driver to register memory; holds the allocation's lock meanwhile, waiting for no device. */
RIG_API rig_status rig_buffer_borrow(rig_device device, rig_buffer buffer, rig_buffer *out);

/* The buffer's length in bytes and its device (the device handle is borrowed: do not release it). */
RIG_API rig_status rig_buffer_length(rig_buffer buffer, size_t *length);
RIG_API rig_status rig_buffer_device(rig_buffer buffer, rig_device *device);

/* Host reads (rule 5): waits for the allocation's last write (committing its device), then runs
 * `fn(user, bytes, length)`. The bytes are valid only during fn; device memory is staged through host
 * memory. No lock is held while waiting or while fn runs. */
typedef void (*rig_read_fn)(void *user, const void *bytes, size_t length);
RIG_API rig_status rig_buffer_read(rig_buffer buffer, rig_read_fn fn, void *user);

/* Host writes (rule 6): waits for every use of the allocation by every device, then runs
 * `fn(user, bytes, length)` whose writes land in the buffer. Valid only during fn. No lock held. */
typedef void (*rig_write_fn)(void *user, void *bytes, size_t length);
RIG_API rig_status rig_buffer_write(rig_buffer buffer, rig_write_fn fn, void *user);

/* Copies buffer bytes [offset, offset+length) into `dst` after the last write (rule 5). */
RIG_API rig_status rig_buffer_read_into(rig_buffer buffer, size_t offset, void *dst, size_t length);
/* Copies `length` bytes from `src` into the buffer at `offset` after every use (rule 6). */
RIG_API rig_status rig_buffer_write_from(rig_buffer buffer, size_t offset, const void *src, size_t length);

/* A host pointer to the buffer's bytes, ordered only as of this call: it waits for every use now; host
 * accesses through the pointer later follow nothing. Valid until the last buffer over the allocation is
 * released. RIG_UNSUPPORTED for memory the host does not address (GPU device memory). */
RIG_API rig_status rig_buffer_export(rig_buffer buffer, void **data);

/* Releases the handle. The allocation's memory is returned (after every use of it is reached, rule 6)
 * once its last buffer is released and no run holds it. May wait for devices; holds no lock meanwhile. */
RIG_API rig_status rig_buffer_release(rig_buffer buffer);

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
RIG_API rig_status rig_module_load(rig_device device, rig_module_format format, const void *bytes,
                                   size_t length, rig_module *out);
/* Releases the module; kept alive while a submission uses it. */
RIG_API rig_status rig_module_release(rig_module module);

/* ---------------------------------------------------------------------------------------------------- */
/* Submissions                                                                                          */

/* A host kernel: a C function that a memory device runs on the host over the bound slots' bytes. */
typedef struct rig_span {
  void *data;
  size_t length;
} rig_span;
typedef void (*rig_host_kernel_fn)(void *user, const rig_span *slots, size_t slot_count);

typedef enum rig_part_kind {
  RIG_PART_COPY = 1,        /* copy bytes from one slot to another (or within one slot, not overlapping) */
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
 * on a GPU). Copies what it needs of `parts`. Waits for nothing. */
RIG_API rig_status rig_submission_make(rig_device device, const rig_part *parts, size_t part_count,
                                       const rig_access *slot_access, size_t slot_count,
                                       rig_submission *out);
/* Releases the handle; runs taken from it keep what they need. Waits for nothing. RIG_INVALID_HANDLE for a
 * null, released or foreign handle. */
RIG_API rig_status rig_submission_release(rig_submission submission);

/* Takes a run of the submission (the page's `take`): a buffer table with one entry per slot, all empty,
 * and room for scalars. A run may be submitted any number of times. Waits for nothing. */
RIG_API rig_status rig_run_take(rig_submission submission, rig_run *out);

/* Puts `buffer` in slot `slot` of the run's table. The buffer must be on the submission's device (memory
 * of another device is reached only through a borrow: RIG_INVALID_ARGUMENT otherwise), large enough for
 * every part's range in that slot, and writable if the slot writes (not a read-only wrap). The run keeps
 * the buffer alive. */
RIG_API rig_status rig_run_set_buffer(rig_run run, uint32_t slot, rig_buffer buffer);

/* Sets the scalar bytes passed to launches (copied; at most 4096 bytes). */
RIG_API rig_status rig_run_set_scalars(rig_run run, const void *bytes, size_t length);

/* Submits the run on its device and writes its point to *point (nullable). Every slot must be set.
 * What it waits for (docs/ordering-model.md, "What a submit does"): the last write of every allocation it
 * reads and every other device's last use of every allocation it writes (rules 3, 4), and `waits`
 * (rule 2, each value at most its device's submitted, else RIG_INVALID_ARGUMENT; nullable if count 0).
 * Points not yet reached are committed, then waited for in the device's queue where its driver can,
 * else on the host with no lock held. Then it takes the device's turn (a lock: held while the driver
 * takes the work, which may block on a full queue), assigns submitted+1, hands over and raises the stamps.
 * A submit with no parts still takes a value. No heap allocation unless it waits on the host.
 * RIG_LOST if the device, or a point it must pass, is lost (then nothing is assigned).
 * RIG_INVALID_ARGUMENT, before any wait and with nothing assigned, for a slot not set, a range outside its
 * buffer, or a binding the device cannot take (Vulkan: longer than maxStorageBufferRange); the device is
 * left as it was. */
RIG_API rig_status rig_submit(rig_run run, const rig_point *waits, size_t wait_count, rig_point *point);

/* Releases the handle; work already submitted goes on (memory returns only once work using it is
 * reached). Waits for nothing.
 * RIG_INVALID_HANDLE for a null, released or foreign handle. */
RIG_API rig_status rig_run_release(rig_run run);

/* ---------------------------------------------------------------------------------------------------- */
/* Verdicts (mapped registration)                                                                       */

/* Can a device copy straight from a file mapping registered with its driver? A driver's return code does
 * not say (HIP answers success for a PROT_NONE mapping, a tmpfs file, a range registered twice), so the
 * answer is a verdict reached in two steps: rig_static_verdict, from the device and its framework alone,
 * then rig_probe, a self-test that registers two windows of a real file's mapping, copies them to the
 * device and back, compares the bytes with an independent read of the file and times the registered copy
 * against the staged one it would replace. docs/mapped.md says what each verdict means for a caller.
 * rig keeps no cache of verdicts and maps no file: the caller owns both. */

/* Values are pinned. Switch with a default branch: kinds and refusals may be added. */
typedef enum rig_verdict_kind {
  RIG_VERDICT_USABLE = 1,          /* registered copies return the file's bytes and are fast enough */
  RIG_VERDICT_NOT_NEEDED = 2,      /* the device reads host memory directly: copy from the mapping */
  RIG_VERDICT_REFUSED = 3,         /* do not register on this device; rig_verdict_refusal says why */
  RIG_VERDICT_TOO_SLOW = 4,        /* right bytes, but slower than staging by more than the margin */
  RIG_VERDICT_INCONCLUSIVE = 5,    /* no verdict: the reason says what got in the way */
  RIG_VERDICT_STILL_REGISTERED = 6 /* a window could not be released: never unmap the probed mapping */
} rig_verdict_kind;

typedef enum rig_refusal {
  RIG_REFUSAL_NONE = 0,                /* the verdict is not RIG_VERDICT_REFUSED */
  RIG_REFUSAL_INTEGRATED_GPU = 1,      /* shares system memory: nothing to gain, the probe would load it */
  RIG_REFUSAL_DEVICE_KIND_UNKNOWN = 2, /* could not tell integrated from discrete: refused, not guessed */
  RIG_REFUSAL_KERNEL_HAZARD = 3,       /* registering is known to harm the machine (Vulkan): never tried */
  RIG_REFUSAL_NOT_MEASURED = 4,        /* no measurement shows the capability on this framework */
  RIG_REFUSAL_WRONG_BYTES = 5          /* the driver accepted the registration and copied wrong bytes */
} rig_refusal;

/* The verdict's kind. Pure read of an immutable handle. RIG_INVALID_HANDLE for anything but a live verdict. */
RIG_API rig_status rig_verdict_get_kind(rig_verdict verdict, rig_verdict_kind *kind);
/* Why a RIG_VERDICT_REFUSED verdict refuses; RIG_REFUSAL_NONE for every other kind. Pure read. */
RIG_API rig_status rig_verdict_refusal(rig_verdict verdict, rig_refusal *refusal);
/* The verdict's words (why not needed, too slow, inconclusive, still registered; the speeds when usable),
 * "" where it has none. *reason is valid while the handle lives. Pure read. */
RIG_API rig_status rig_verdict_reason(rig_verdict verdict, const char **reason);
/* *cacheable = 1 only for what the self-test established about the machine: RIG_VERDICT_USABLE and
 * RIG_REFUSAL_WRONG_BYTES; 0 for the rest (static verdicts cost nothing to recompute and some rest on a
 * query that can fail for a moment; the others depend on load or a transient failure). Pure read. */
RIG_API rig_status rig_verdict_cacheable(rig_verdict verdict, int *cacheable);
/* The verdict in one line ("Refused (Wrong_bytes)", "Too_slow: registered 9.1 GB/s, ..."), valid while the
 * handle lives. Pure read. */
RIG_API rig_status rig_verdict_to_string(rig_verdict verdict, const char **text);
/* The best-of-7 speeds the self-test measured, in bytes per second, registered and staged; both 0 where it
 * measured none (static verdicts, a probe that stopped before timing). Pure read. */
RIG_API rig_status rig_verdict_speeds(rig_verdict verdict, double *registered, double *staged);
/* Releases the handle. Waits for nothing. */
RIG_API rig_status rig_verdict_release(rig_verdict verdict);

/* Static names: "Usable", "Not_needed", ...; "Integrated_gpu", ...; "unknown" for other values. */
RIG_API const char *rig_verdict_kind_name(rig_verdict_kind kind);
RIG_API const char *rig_refusal_name(rig_refusal refusal);

/* A fact the static table asks of a device. */
typedef enum rig_device_fact {
  RIG_FACT_INTEGRATED = 1,                    /* the device shares system memory */
  RIG_FACT_PAGEABLE_USES_HOST_PAGE_TABLES = 2 /* it reads pageable memory through the host's page tables */
} rig_device_fact;
/* Answers one fact: 1 yes, 0 no, -1 could not be read. Called on the caller's thread, during the call. */
typedef int (*rig_device_fact_fn)(void *user, rig_device_fact fact);

/* The static verdict of `device`, decided from its framework (rig_device_info.framework) and kind alone:
 * *decided is a verdict handle (caller releases it), or NULL when the self-test is required. Registers and
 * copies nothing; for CUDA and HIP reads the integrated attribute (and, for a discrete device, whether it
 * reads pageable memory through the host's page tables: then Not_needed). Vulkan is refused before any
 * query. The rows are rig_static_verdict_for's. Waits for nothing but that driver query. */
RIG_API rig_status rig_static_verdict(rig_device device, rig_verdict *decided);

/* The static table for a bare framework name, for devices rig does not open. Rows, first match wins:
 *   "Vulkan"                   Refused (Kernel_hazard), before `facts` is called, whatever the environment;
 *   "CUDA", "HIP"              integrated: Refused (Integrated_gpu); discrete: Not_needed if the device
 *                              reads pageable memory through the host's page tables, else self-test;
 *                              query failed: CUDA Refused (Device_kind_unknown), HIP Refused
 *                              (Integrated_gpu: HIP counts a failed query as integrated; not cacheable);
 *   "Metal"                    Not_needed (unified memory);
 *   "OpenCL"                   Not_needed on a RIG_DEVICE_CPU device, else Refused (Not_measured);
 *   "memory", "host", "Native", "CPU", or any RIG_DEVICE_CPU/MEMORY/HOST device: Not_needed;
 *   any other name             Refused (Not_measured).
 * A name matches its row also as a family variant: "CUDA/PTX" is of "CUDA" (ASCII case ignored).
 * `facts` nullable: every fact then reads as -1. RIG_INVALID_ARGUMENT for a null or empty framework. */
RIG_API rig_status rig_static_verdict_for(const char *framework, rig_device_kind kind,
                                          rig_device_fact_fn facts, void *user, rig_verdict *decided);

/* Options of a probe. Nullable as a whole (all defaults). */
typedef struct rig_probe_options {
  size_t size;               /* sizeof(rig_probe_options) */
  double min_relative_speed; /* the fraction of the staged copy's speed the registered one must reach,
                                best of 7 against best of 7: a margin for noise. 0: the default, 0.8 */
  void (*log)(void *user, const char *message); /* nullable: progress and every failed release */
  void *log_user;
} rig_probe_options;

/* The ways the self-test talks to a device, for rig_probe_with: a backend or a test's double fills it, or
 * rig_probe_ops_open makes one over a rig device. Every callback returns RIG_OK or a failure; `user` is
 * passed to each. A callback's RIG_OUT_OF_MEMORY or RIG_INTERRUPTED is returned as the probe's own error;
 * every other failure makes the verdict Inconclusive. */
typedef struct rig_probe_ops {
  size_t size; /* sizeof(rig_probe_ops) */
  void *user;
  rig_status (*register_host)(void *user, void *host, size_t length);   /* may refuse */
  rig_status (*unregister_host)(void *user, void *host, size_t length); /* may fail (HIP: 713) */
  rig_status (*alloc_host)(void *user, size_t length, void **host);     /* page-locked where it can */
  rig_status (*free_host)(void *user, void *host, size_t length);
  /* copies host[0, length) to the device, then back into into[0, length) */
  rig_status (*round_trip)(void *user, const void *host, void *into, size_t length);
  /* the host-to-device half alone: what the speed test times */
  rig_status (*upload)(void *user, const void *host, size_t length);
  /* nullable: a monotonic clock in nanoseconds (the probe's own clock where null) */
  uint64_t (*now_ns)(void *user);
} rig_probe_ops;

/* The self-test alone, without the static check. Each of two windows is half of `length` rounded down to
 * 64 KiB: [0, w) and [w, 2w) of `map`; bytes beyond them are neither registered nor compared. In order:
 * the windows of map are compared with those of `reference` (the same file region read independently, by
 * pread): a reference that differs, an unreadable map, or two windows holding the same bytes answer
 * Inconclusive with nothing registered; then both windows are registered, copied to the device and back
 * and compared (wrong bytes while map still equals reference: Refused (Wrong_bytes)); then each of 7
 * registered uploads and 7 staged copies (memcpy into alloc_host memory, then upload) is timed; then both
 * windows are released. A failed release is retried (each window: 3 tries when the probe reached that
 * release, 2 when it stopped earlier) and passed to the log; a window left registered answers
 * Still_registered, a release that failed and then succeeded answers Inconclusive, as do a callback's
 * failure, a region under 128 KiB, a clock that gave no positive duration and a buffer not freed.
 * Everything registered or allocated is released or its release tried, whatever happens. `map` must start
 * on a page boundary (checked at 4 KiB) and so must every offset at which the caller slices a mapping.
 * RIG_INVALID_ARGUMENT for null pointers, a missing callback, an unaligned map or a bad option; OUT_OF_MEMORY
 * and INTERRUPTED as above. Waits for what the callbacks wait for; holds no lock of rig's. */
RIG_API rig_status rig_probe_with(const rig_probe_ops *ops, const void *map, const void *reference,
                                  size_t length, const rig_probe_options *options, rig_verdict *out);

/* The capability on a rig device: rig_static_verdict, then, where it asks for it, rig_probe_with over
 * rig_probe_ops_open(device). A device decided statically is answered without reading map or reference.
 * map must not overlap a range registered in this process (the range table refuses it: Inconclusive).
 * A window whose release fails stays in the range table (rig_host_is_registered stays 1): never unmap it.
 * Probe a scratch mapping of the file, not the one the weights are read from. The driver may never return
 * for some mappings (a MAP_PRIVATE file mapping with CUDA): run it in a child process with a deadline
 * where that matters (what `rig probe` does). Errors as rig_probe_with's, and RIG_UNSUPPORTED where the
 * self-test is required but the device's driver registers no host memory. */
RIG_API rig_status rig_probe(rig_device device, const void *map, const void *reference, size_t length,
                             const rig_probe_options *options, rig_verdict *out);

/* Fills `ops` with callbacks over `device`: registration through the range table (read-only flag where
 * the device supports it), page-locked host memory, and a device buffer of `bytes` bytes that round_trip
 * and upload use (at least half the region to probe). ops->user names the opened state; callbacks after
 * close answer RIG_INVALID_HANDLE. RIG_UNSUPPORTED for a device whose static verdict is Refused (Vulkan
 * above all: registration is never reachable through this on a refused device) or whose driver registers
 * no host memory; RIG_OUT_OF_MEMORY if the buffer cannot be made. Waits for the driver's allocation. */
RIG_API rig_status rig_probe_ops_open(rig_device device, size_t bytes, rig_probe_ops *ops);
/* Frees the device buffer of ops opened by rig_probe_ops_open; the ops answer RIG_INVALID_HANDLE after.
 * Ranges still registered through them stay registered. RIG_INVALID_HANDLE for ops not open. */
RIG_API rig_status rig_probe_ops_close(rig_probe_ops *ops);

/* The registered-range table: every registration rig makes goes through one process-wide table, so a
 * range that overlaps a live registration is refused (RIG_BUSY, naming it) before the driver is called.
 * Registers [host, host+length) with `device`'s driver, read-only flag where access is RIG_ACCESS_READ
 * and the device supports it. RIG_UNSUPPORTED where the driver registers no host memory or the static
 * verdict refuses the device. Holds the table's lock while the driver registers. */
RIG_API rig_status rig_host_register(rig_device device, void *host, size_t length, rig_access access);
/* Unregisters the range that starts at `host`, registered through `device`. Where the driver's unregister
 * fails the range stays listed (it may still be registered: never unmap it) and the driver's status is
 * returned. RIG_INVALID_ARGUMENT if no range registered through this device starts at host. */
RIG_API rig_status rig_host_unregister(rig_device device, void *host);
/* *registered = 1 if any range in the table overlaps [host, host+length) (length 0: the byte at host),
 * whichever device registered it; 0 otherwise. Pure read of the table under its lock. */
RIG_API rig_status rig_host_is_registered(const void *host, size_t length, int *registered);

/* ---------------------------------------------------------------------------------------------------- */
/* Testing hooks: not for production use; kept in the ABI so bindings' tests can use them.            */

/* Loses a memory device as a driver fault would, with `why`. Later waits that must pass its unreached
 * points return RIG_LOST. RIG_UNSUPPORTED for other devices. */
RIG_API rig_status rig_testing_lose_device(rig_device device, const char *why);

#ifdef __cplusplus
}
#endif

#endif /* RIG_H */
