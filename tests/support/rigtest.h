/* Shared helpers of the C tests: checked calls, one-part submissions, and the device kinds a suite runs
 * over (RIG_TEST_KINDS: "memory+test" by default; "memory+cuda", "cuda", "vulkan", ... for drivers). */
#ifndef RIG_RIGTEST_H
#define RIG_RIGTEST_H

#include <rig.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fails the test with rig's message unless the call returned RIG_OK. */
#define OK(call) rt_ok((call), #call, __FILE__, __LINE__)
void rt_ok(rig_status s, const char *call, const char *file, int line);
/* Fails unless the call returned `want`; checks the message is not empty. */
#define STATUS(want, call) rt_status((want), (call), #call, __FILE__, __LINE__)
void rt_status(rig_status want, rig_status got, const char *call, const char *file, int line);

/* A copy of the whole of slot 0 into slot 1 (the part rt_copy submits), for tests that make their own runs. */
rig_part rt_copy_part(void);
/* A fill of the whole of slot 0 with `byte` (the part rt_fill submits). */
rig_part rt_fill_part(uint8_t byte);
/* A run on d of `parts` over `buffers` (slot i = buffers[i], with access[i]), to submit repeatedly: its
 * submission is released (the run keeps it). Fails the test where a call fails. */
rig_run rt_run(rig_device d, const rig_part *parts, size_t part_count, const rig_buffer *buffers,
               const rig_access *access, size_t n);
/* A run of rt_copy_part on d from src into dst, to submit repeatedly (it keeps its submission). */
rig_run rt_copy_run(rig_device d, rig_buffer src, rig_buffer dst);
/* A run of rt_fill_part on d over dst. */
rig_run rt_fill_run(rig_device d, rig_buffer dst, uint8_t byte);
/* Submits one part on d over the given buffers (each slot's access given), returning the point. */
rig_point rt_copy(rig_device d, rig_buffer src, rig_buffer dst);
rig_point rt_fill(rig_device d, rig_buffer dst, uint8_t byte);
rig_point rt_kernel(rig_device d, rig_host_kernel_fn fn, void *user, const rig_buffer *buffers,
                    const rig_access *access, size_t n, const rig_point *waits, size_t wait_count);
rig_status rt_try_copy(rig_device d, rig_buffer src, rig_buffer dst, const rig_point *waits, size_t wait_count,
                       rig_point *point);
/* A buffer on d borrowed from b (fails the test if it cannot). */
rig_buffer rt_borrow(rig_device d, rig_buffer b);
/* rt_borrow, but a device that cannot map the memory (Vulkan borrows no host memory by default) skips the
 * test with the reason instead of failing it. */
rig_buffer rt_borrow_or_skip(rig_device d, rig_buffer b);
rig_buffer rt_create(rig_device d, size_t n);
/* A buffer other devices will borrow: RIG_MEMORY_MAPPED, which the host (and so memory devices) address. */
rig_buffer rt_create_shared(rig_device d, size_t n);
uint64_t rt_submitted(rig_device d);
uint64_t rt_signaled(rig_device d);

/* The kinds of the suite's devices, from RIG_TEST_KINDS. Device i of a test is of kind i % count. */
size_t rt_kind_count(void);
const char *rt_kind(size_t i);
/* Opens device i of the suite's kinds, named name (a GPU kind's devices take the machine's GPUs in turn).
 * Returns 0 and skips the test (or fails it, when RIG_REQUIRE names the kind) where it cannot be opened. */
int rt_open_kind(size_t i, const char *name, rig_device *out);
/* 1 if device d is a test-driver device (its queue runs only when stepped or waited). */
int rt_is_test_driver(rig_device d);
/* Skips the running test with a visible reason, counted for rt_finish. */
void rt_skip(const char *why);

/* The counters of the driver double rig loaded (fakecuda_query / fakehip_query), or NULL on a real driver
 * or none: the same file rig dlopened (RTLD_NOLOAD: never a second instance); the HIP shim forwards to a
 * fake libcuda. */
typedef long long (*rt_query_fn)(const char *);
rt_query_fn rt_double_query(void);
/* A test program's exit status: cmocka's failures, else 77 (meson's SKIP) if any test skipped, so a skipped
 * case is never counted as a pass. */
int rt_finish(int failures);
/* 1 if RIG_REQUIRE names `backend` (comma or plus separated). */
int rt_required(const char *backend);

#ifdef __cplusplus
}
#endif

#endif
