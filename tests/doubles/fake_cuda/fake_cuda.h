/* The fake libcuda's control surface, for tests that load it through RIG_CUDA_LIBRARY (find the functions
 * with dlopen(path, RTLD_NOLOAD) + dlsym: rig loads the library RTLD_LOCAL). The fake HIP runtime is the same
 * implementation under HIP's names (tests/doubles/fake_stream), so these switches and counters are its too
 * (fake_hip.h adds HIP's false successes: false_unregister_713, the false_successes counter).
 *
 * Switches (also read from the environment at cuInit as FAKECUDA_<NAME in upper case>):
 *   devices                      number of GPUs (default 2)
 *   integrated                   attribute 18's answer (default 0)
 *   integrated_query_fails       1: querying attribute 18 fails (CUDA_ERROR_INVALID_VALUE)
 *   pageable_host_page_tables    attribute 100's answer (default 0)
 *   read_only_supported          attribute 113's answer (default 1); 0 also makes the flag fail (801)
 *   host_register_supported      attribute 99's answer (default 1)
 *   memops                       attribute 122 (default 1); 0 also makes cuStream*Value64 answer 801
 *   peer_access                  cuDeviceCanAccessPeer's answer between two devices (default 1); 0 also makes
 *                                cuIpcOpenMemHandle of another device's memory answer 217 (an IPC handle names
 *                                its device; the lazy flag opens it as a peer, as cuCtxEnablePeerAccess would)
 *   register_refuse              a CUresult (e.g. 1, 800) every cuMemHostRegister returns (default 0)
 *   register_refuse_after        N: N more registrations succeed, then every one answers out of memory
 *                                (2), until set again (0: off)
 *   register_wrong_bytes         1: registration succeeds but the device sees other bytes than the host's
 *   unregister_fail              1: the next cuMemHostUnregister answers 713 (once); 2: every one does
 *   registered_upload_ns_per_kib cuMemcpyHtoD from a registered file mapping takes this long per KiB
 *                                (registered anonymous memory counts as pinned: pinned_upload_ns_per_kib)
 *   pinned_upload_ns_per_kib     ... from cuMemHostAlloc memory
 *   pageable_upload_ns_per_kib   ... from any other host memory
 *   fail_launch_at               N: the Nth launch enqueued from now fails when it runs (sticky 719)
 *   launch_delay_us, copy_delay_us  each launch / async copy sleeps this long when it runs (exposes a
 *                                missing wait: work that should have waited reads stale bytes)
 *   pageable_dma_delay_us        cuMemcpyHtoD from pageable memory returns at once and its DMA lands this
 *                                much later on the legacy stream, as in CUDA (default 100)
 *   read_only_pages_need_flag    1: cuMemHostRegister without the read-only flag of pages the process cannot write
 *                                (PROT_READ) answers 1 (invalid value), as the real driver does
 *   ignore_waits                 1: cuStreamWaitEvent and cuStreamWaitValue64 enqueue nothing (a broken
 *                                driver: the order tests must then fail)
 *   device_memory_limit          bytes of device memory in all (every live allocation, of every device); an
 *                                allocation past it answers 2 (out of memory). 0 (default): no limit
 *   stream_calls_need_context    1: every call naming a stream answers 201 (invalid context) unless the
 *                                stream's context is current (default 0: the stream's context is used, as
 *                                CUDA does): a stricter library, which rig answers by making it current
 *   reset                        (any value) all switches to defaults (FAKECUDA_* of the environment
 *                                still apply), sticky errors cleared, counters 0
 * Counters (fakecuda_query): register_calls (every cuMemHostRegister call), registers, unregisters,
 *   last_register_flags, launches, copies, wait_values, write_values, event_waits, event_records,
 *   event_queries, event_syncs, live_allocations, live_streams, live_modules, ops_pending (work enqueued on
 *   any stream and not yet run), sticky (of device 0), sticky1 (of device 1), device_bytes (device memory
 *   in use, not reset: tests/doubles/common/fake_device_memory.h, which the fake HIP runtime shares);
 *   calls:FIELD for each entry point of the stream table by its field in src/drivers/stream/calls.h
 *   ("calls:copy_async" counts cuMemcpyAsync, "calls:get_current" cuCtxGetCurrent): every time it was entered.
 *
 * Batches: cuMemcpyBatchAsync (12.8's signature) and _v2 (13's) check every copy and run them last to first
 * (CUDA promises no order inside a batch); stream capture (cuStreamBeginCapture_v2, cuStreamEndCapture) holds
 * launches, copies and fills, and a launched executable graph (cuGraphInstantiateWithFlags, cuGraphLaunch)
 * runs them in capture order as one operation of the stream.
 *
 * Beyond rig's entry points: cuLaunchHostFunc (the fake libnccl's collectives run through it).
 *
 * Kernels: cuModuleLoadDataEx takes PTX text (or any text) and binds every `.entry NAME` whose NAME is a
 * built-in host function: rig_add_u32, rig_chain_step, rig_fill_u32, rig_delay, rig_fault (see
 * tests/cuda/kernels.ptx for their meaning). Text containing "fakecuda:invalid" fails as bad PTX; ELF or
 * fatbin bytes answer CUDA_ERROR_NO_BINARY_FOR_GPU.
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#ifdef __cplusplus
extern "C" {
#endif

/* Sets switch `name` to `value`; returns 0, or -1 for an unknown name. */
typedef int (*fakecuda_control_fn)(const char *name, long long value);
/* Reads counter or switch `name`; -1 for an unknown name. */
typedef long long (*fakecuda_query_fn)(const char *name);

int fakecuda_control(const char *name, long long value);
long long fakecuda_query(const char *name);

#ifdef __cplusplus
}
#endif

#endif
