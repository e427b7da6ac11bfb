/* Helpers of the Vulkan tests: opening vulkan:0 (skip, or fail under RIG_REQUIRE=vulkan), loading the
 * shaders compiled at build time, launching, and the validation-layer check every test group ends with. */
#ifndef RIG_VK_COMMON_H
#define RIG_VK_COMMON_H

#include <rig.h>

#include <stddef.h>
#include <stdint.h>

#include "rigtest.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hidden observation hooks of the driver (src/drivers/vulkan/testing.cpp), reachable because the tests
 * link the internal archive. */
int vulkan_testing_validation(uint64_t *messages);
uint64_t vulkan_testing_commit_every(void);
uint64_t vulkan_testing_imports(void);
void vulkan_testing_record_ahead(int on);

/* Where vulkan:0 did not open (rig's message says why): fails the test when RIG_REQUIRE names vulkan, else
 * skips it with the reason. */
void vk_missing(void);

/* Opens vulkan:0 as a new rig device. Returns 0 after skipping the test (with the reason) where it cannot,
 * or fails the test when RIG_REQUIRE names vulkan. */
int vk_open(rig_device *out);

/* Loads SPIR-V words on d (fails the test if it cannot). */
rig_module vk_module(rig_device d, const uint32_t *words, size_t bytes);

/* A run of one launch of `function` over n buffers (slot i = binding i) with the given scalars, grid.x
 * workgroups of block.x invocations, to submit repeatedly (rt_run). */
rig_run vk_launch_run(rig_device d, rig_module m, const char *function, const rig_buffer *buffers,
                      const rig_access *access, uint32_t n, const void *scalars, size_t scalar_bytes,
                      uint32_t grid_x, uint32_t block_x);

/* Submits one launch of `function` over n buffers (slot i = binding i) with the given scalars, grid.x
 * workgroups of block.x invocations. Returns the point. */
rig_point vk_launch(rig_device d, rig_module m, const char *function, const rig_buffer *buffers,
                    const rig_access *access, uint32_t n, const void *scalars, size_t scalar_bytes,
                    uint32_t grid_x, uint32_t block_x, const rig_point *waits, size_t wait_count);

/* A buffer of n bytes and memory kind `memory` on d. */
rig_buffer vk_buffer(rig_device d, size_t n, rig_memory memory);

/* The bytes of b's first n that are not `want` (read after its last write, rig_buffer_read_into). */
size_t vk_mismatches(rig_buffer b, size_t n, uint8_t want);

/* Polls rig_device_signaled (which commits nothing) for up to `ms` milliseconds until it reaches `value`;
 * returns the last value seen. */
uint64_t vk_poll_signaled(rig_device d, uint64_t value, unsigned ms);

/* A cmocka group teardown: fails when the validation layer (RIG_VULKAN_VALIDATION=1) counted any message,
 * and says so when it is not active. */
int vk_validation_teardown(void **state);

#ifdef __cplusplus
}
#endif

#endif
