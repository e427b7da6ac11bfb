/* rig_mapped.h: mapped registration, the part of librig that decides whether a device can copy straight
 * from a registered file mapping: verdicts (a static table, then a self-test probe) and the registered-range
 * table every host registration of rig goes through. It includes rig.h, whose conventions (status, handles,
 * ownership, nullability, domains) every function here follows. docs/mapped.md says what each verdict
 * means for a caller. */
#ifndef RIG_MAPPED_H
#define RIG_MAPPED_H

#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

RIG_NULLABILITY_BEGIN

/* ---------------------------------------------------------------------------------------------------- */
/* Verdicts                                                                                             */

typedef struct rig_verdict_h *rig_verdict; /* an answer of mapped registration, immutable */

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
  RIG_VERDICT_STILL_REGISTERED = 6, /* a window could not be released: never unmap the probed mapping */
  RIG_VERDICT_KIND_MAX_ENUM = 0x7fffffff /* keeps the enum 32-bit (see rig_status); never a verdict */
} rig_verdict_kind;

typedef enum rig_refusal {
  RIG_REFUSAL_NONE = 0,                /* the verdict is not RIG_VERDICT_REFUSED */
  RIG_REFUSAL_INTEGRATED_GPU = 1,      /* shares system memory: nothing to gain, the probe would load it */
  RIG_REFUSAL_DEVICE_KIND_UNKNOWN = 2, /* could not tell integrated from discrete: refused, not guessed */
  RIG_REFUSAL_KERNEL_HAZARD = 3,       /* registering is known to harm the machine (Vulkan): never tried */
  RIG_REFUSAL_NOT_MEASURED = 4,        /* no measurement shows the capability on this framework */
  RIG_REFUSAL_WRONG_BYTES = 5,         /* the driver accepted the registration and copied wrong bytes */
  RIG_REFUSAL_MAX_ENUM = 0x7fffffff    /* keeps the enum 32-bit; never a refusal */
} rig_refusal;

/* The verdict's kind. Pure read of an immutable handle. RIG_INVALID_HANDLE for anything but a live verdict. */
RIG_API rig_status rig_verdict_get_kind(rig_verdict RIG_NONNULL verdict, rig_verdict_kind *RIG_NONNULL kind);
/* Why a RIG_VERDICT_REFUSED verdict refuses; RIG_REFUSAL_NONE for every other kind. Pure read. */
RIG_API rig_status rig_verdict_refusal(rig_verdict RIG_NONNULL verdict, rig_refusal *RIG_NONNULL refusal);
/* The verdict's words (why not needed, too slow, inconclusive, still registered; the speeds when usable),
 * "" where it has none. *reason is valid while the handle lives. Pure read. */
RIG_API rig_status rig_verdict_reason(rig_verdict RIG_NONNULL verdict, const char **RIG_NONNULL reason);
/* *cacheable = 1 only for what the self-test established about the machine: RIG_VERDICT_USABLE and
 * RIG_REFUSAL_WRONG_BYTES; 0 for the rest (static verdicts cost nothing to recompute and some rest on a
 * query that can fail for a moment; the others depend on load or a transient failure). Pure read. */
RIG_API rig_status rig_verdict_cacheable(rig_verdict RIG_NONNULL verdict, int *RIG_NONNULL cacheable);
/* The verdict in one line ("Refused (Wrong_bytes)", "Too_slow: registered 9.1 GB/s, ..."), valid while the
 * handle lives. Pure read. */
RIG_API rig_status rig_verdict_to_string(rig_verdict RIG_NONNULL verdict, const char **RIG_NONNULL text);
/* The best-of-7 speeds the self-test measured, in bytes per second, registered and staged; both 0 where it
 * measured none (static verdicts, a probe that stopped before timing). Pure read. */
RIG_API rig_status rig_verdict_speeds(rig_verdict RIG_NONNULL verdict, double *RIG_NONNULL registered,
                                      double *RIG_NONNULL staged);
/* Releases the handle. Waits for nothing. */
RIG_API rig_status rig_verdict_release(rig_verdict RIG_NONNULL verdict);

/* Static names: "Usable", "Not_needed", ...; "Integrated_gpu", ...; "unknown" for other values. */
RIG_API const char *rig_verdict_kind_name(rig_verdict_kind kind);
RIG_API const char *rig_refusal_name(rig_refusal refusal);

/* A fact the static table asks of a device. */
typedef enum rig_device_fact {
  RIG_FACT_INTEGRATED = 1,                    /* the device shares system memory */
  RIG_FACT_PAGEABLE_USES_HOST_PAGE_TABLES = 2, /* it reads pageable memory through the host's page tables */
  RIG_FACT_MAX_ENUM = 0x7fffffff               /* keeps the enum 32-bit; never asked */
} rig_device_fact;
/* Answers one fact: 1 yes, 0 no, -1 could not be read. Called on the caller's thread, during the call. */
typedef int (*rig_device_fact_fn)(void *user, rig_device_fact fact);

/* The static verdict of `device`, decided from its framework (rig_device_info.framework) and kind alone:
 * *decided is a verdict handle (caller releases it), or NULL when the self-test is required. Registers and
 * copies nothing; for CUDA and HIP reads the integrated attribute (and, for a discrete device, whether it
 * reads pageable memory through the host's page tables: then Not_needed). Vulkan is refused before any
 * query. The rows are rig_static_verdict_for's. Waits for nothing but that driver query. */
RIG_API rig_status rig_static_verdict(rig_device RIG_NONNULL device, rig_verdict *RIG_NONNULL decided);

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
RIG_API rig_status rig_static_verdict_for(const char *RIG_NONNULL framework, rig_device_kind kind,
                                          rig_device_fact_fn RIG_NULLABLE facts, void *RIG_NULLABLE user,
                                          rig_verdict *RIG_NONNULL decided);

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
RIG_API rig_status rig_probe_with(const rig_probe_ops *RIG_NONNULL ops, const void *RIG_NONNULL map,
                                  const void *RIG_NONNULL reference, size_t length,
                                  const rig_probe_options *RIG_NULLABLE options,
                                  rig_verdict *RIG_NONNULL out);

/* The capability on a rig device: rig_static_verdict, then, where it asks for it, rig_probe_with over
 * rig_probe_ops_open(device). A device decided statically is answered without reading map or reference.
 * map must not overlap a range registered in this process (the range table refuses it: Inconclusive).
 * A window whose release fails stays in the range table (rig_host_is_registered stays 1): never unmap it.
 * Probe a scratch mapping of the file, not the one the weights are read from. The driver may never return
 * for some mappings (a MAP_PRIVATE file mapping with CUDA): run it in a child process with a deadline
 * where that matters (what `rig probe` does). Errors as rig_probe_with's, and RIG_UNSUPPORTED where the
 * self-test is required but the device's driver registers no host memory. */
RIG_API rig_status rig_probe(rig_device RIG_NONNULL device, const void *RIG_NONNULL map,
                             const void *RIG_NONNULL reference, size_t length,
                             const rig_probe_options *RIG_NULLABLE options, rig_verdict *RIG_NONNULL out);

/* Fills `ops` with callbacks over `device`: registration through the range table (read-only flag where
 * the device supports it), page-locked host memory, and a device buffer of `bytes` bytes that round_trip
 * and upload use (at least half the region to probe). ops->user names the opened state; callbacks after
 * close answer RIG_INVALID_HANDLE. RIG_UNSUPPORTED for a device whose static verdict is Refused (Vulkan
 * above all: registration is never reachable through this on a refused device) or whose driver registers
 * no host memory; RIG_OUT_OF_MEMORY if the buffer cannot be made. Waits for the driver's allocation. */
RIG_API rig_status rig_probe_ops_open(rig_device RIG_NONNULL device, size_t bytes,
                                      rig_probe_ops *RIG_NONNULL ops);
/* Frees the device buffer of ops opened by rig_probe_ops_open; the ops answer RIG_INVALID_HANDLE after.
 * Ranges still registered through them stay registered. RIG_INVALID_HANDLE for ops not open. */
RIG_API rig_status rig_probe_ops_close(rig_probe_ops *RIG_NONNULL ops);

/* The registered-range table: every registration rig makes goes through one process-wide table, so a
 * range that overlaps a live registration is refused (RIG_BUSY, naming it) before the driver is called.
 * Registers [host, host+length) with `device`'s driver, read-only flag where access is RIG_ACCESS_READ
 * and the device supports it. RIG_UNSUPPORTED where the driver registers no host memory or the static
 * verdict refuses the device. Holds the table's lock while the driver registers. */
RIG_API rig_status rig_host_register(rig_device RIG_NONNULL device, void *RIG_NONNULL host, size_t length,
                                     rig_access access);
/* Unregisters the range that starts at `host`, registered through `device`. Where the driver's unregister
 * fails the range stays listed (it may still be registered: never unmap it) and the driver's status is
 * returned. RIG_INVALID_ARGUMENT if no range registered through this device starts at host. */
RIG_API rig_status rig_host_unregister(rig_device RIG_NONNULL device, void *RIG_NONNULL host);
/* *registered = 1 if any range in the table overlaps [host, host+length) (length 0: the byte at host),
 * whichever device registered it; 0 otherwise. Pure read of the table under its lock. */
RIG_API rig_status rig_host_is_registered(const void *RIG_NONNULL host, size_t length,
                                          int *RIG_NONNULL registered);

RIG_NULLABILITY_END

#ifdef __cplusplus
}
#endif

#endif /* RIG_MAPPED_H */
