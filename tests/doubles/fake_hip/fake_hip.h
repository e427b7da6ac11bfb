/* The fake libamdhip64's control surface, for tests that load it through RIG_HIP_LIBRARY (find the functions
 * with dlopen(path, RTLD_NOLOAD) + dlsym: rig loads the library RTLD_LOCAL). It is the fake libcuda renamed
 * (tests/doubles/fake_stream: one implementation, two faces): every switch and counter of fake_cuda.h works
 * here too, under FAKEHIP_ in the environment, except what HIP does not do (IPC, pageable uploads landing
 * later); below, what is HIP's own.
 *
 * It reproduces the false successes measured on an RX 7900 XTX with ROCm 7.2.4 (docs/mapped.md):
 * hipHostRegister answers success for a PROT_NONE mapping, a file on tmpfs (or a memfd), a range registered
 * twice and a range overlapping a registration. Such a registration cannot serve: the device then reads other
 * bytes than the host's through it (zeros for PROT_NONE, the complement of the bytes at registration time
 * otherwise), and hipHostUnregister of it answers 713 (hipErrorHostMemoryNotRegistered). A registration of
 * ordinary memory (anonymous, or a file on a disk file system) serves the host's bytes. The device address of
 * a registered range (hipHostGetDevicePointer) is not the host pointer: device code that is handed the raw
 * host pointer faults (illegal address), as it may on a GPU.
 *
 * Switches (also read from the environment at hipInit as FAKEHIP_<NAME in upper case>):
 *   devices                       number of GPUs (default 2)
 *   integrated                    hipDeviceAttributeIntegrated's answer (default 0)
 *   integrated_query_fails        1: querying hipDeviceAttributeIntegrated fails (hipErrorInvalidValue)
 *   host_register_supported       hipDeviceAttributeHostRegisterSupported (default 1; -1: the query fails,
 *                                 as on runtimes older than the attribute)
 *   memops                        hipDeviceAttributeCanUseStreamWaitValue (default 1); 0 also makes
 *                                 hipStream{Write,Wait}Value64 answer 801
 *   peer_access                   hipDeviceCanAccessPeer's answer between two devices (default 1)
 *   register_refuse               a hipError_t every hipHostRegister returns (default 0)
 *   register_refuse_after         N: N more registrations succeed, then every one answers out of memory
 *                                 (2), until set again (0: off)
 *   false_unregister_713          1 (default): unregistering a registration that cannot serve answers 713
 *                                 and leaves it; 0: it unregisters
 *   unregister_fail               1: the next hipHostUnregister of any registration answers 713 (once);
 *                                 2: every one does
 *   registered_upload_ns_per_kib  hipMemcpyHtoD from a registered file mapping takes this long per KiB
 *                                 (registered anonymous memory counts as pinned: pinned_upload_ns_per_kib)
 *   pinned_upload_ns_per_kib      ... from hipHostMalloc memory
 *   pageable_upload_ns_per_kib    ... from any other host memory
 *   fail_launch_at                N: the Nth launch enqueued from now fails when it runs (sticky 719)
 *   launch_delay_us, copy_delay_us  each launch / async copy sleeps this long when it runs
 *   read_only_pages_need_flag    1: hipHostRegister without the read-only flag of pages the process cannot write
 *                                (PROT_READ) answers 1 (invalid value), as the real driver does
 *   ignore_waits                  1: hipStreamWaitValue64 and hipStreamWaitEvent answer success and wait for
 *                                 nothing (a broken runtime: the tests must fail on it)
 *   device_memory_limit           bytes of device memory in all (every live allocation, of every device); an
 *                                 allocation past it answers 2 (out of memory). 0 (default): no limit
 *   reset                         (any value) all switches to defaults (the environment's where set), sticky errors cleared, counters 0
 * Counters (fakehip_query): register_calls (every hipHostRegister), registers (successes, false ones
 *   included), false_successes, unregisters (that succeeded), last_register_flags, launches, copies,
 *   wait_values, write_values, event_waits, event_records, event_queries, live_allocations, live_streams,
 *   live_modules, ops_pending (work enqueued on any stream and not yet run), sticky (of device 0), sticky1
 *   (of device 1); and, not reset (live_* neither), device_bytes (device memory in use,
 *   tests/doubles/common/fake_device_memory.h): the fake libcuda's name for the same
 *   thing. calls:FIELD counts each entry point of the stream table by its field in
 *   src/drivers/stream/calls.h ("calls:get_current" counts hipGetDevice).
 *
 * There are no IPC calls at all here, so no interprocess handle for any memory.
 *
 * Kernels: hipModuleLoadData takes text (the tests pass tests/cuda/kernels.ptx as their "code object") and
 * binds every `.entry NAME` whose NAME is a built-in host function: rig_add_u32, rig_chain_step,
 * rig_fill_u32, rig_delay, rig_fault. Text containing "fakehip:invalid" fails (hipErrorInvalidKernelFile);
 * ELF bytes answer hipErrorNoBinaryForGpu.
 */
#ifndef FAKE_HIP_H
#define FAKE_HIP_H

#ifdef __cplusplus
extern "C" {
#endif

/* Sets switch `name` to `value`; returns 0, or -1 for an unknown name. */
typedef int (*fakehip_control_fn)(const char *name, long long value);
/* Reads counter or switch `name`; -1 for an unknown name. */
typedef long long (*fakehip_query_fn)(const char *name);

int fakehip_control(const char *name, long long value);
long long fakehip_query(const char *name);

#ifdef __cplusplus
}
#endif

#endif
