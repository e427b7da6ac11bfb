/* go_interop.i: rig_interop.h in the Go raw layer, where Go programs use it: points as descriptors
 * (eventfd, sync file, timeline semaphore) and native device pointers as buffers; included by rig.i after
 * rig.h, Go only. Native streams and events, IPC handles, memory fds and DLPack are not bound yet. */

%{
#include <rig_interop.h>

/* Exported by bindings/go/callbacks.go: runs and forgets the Go release function a handle names. */
extern void rigGoRelease(uintptr_t handle);
static void rig_go_release_tramp(void *user) { rigGoRelease((uintptr_t)user); }
%}

%ignore rig_stream_wait_point;
%ignore rig_stream_point;
%ignore rig_point_export_event;
%ignore rig_point_import_event;
%ignore rig_buffer_wrap_device;
%ignore rig_ipc_handle;
%ignore rig_buffer_export_ipc;
%ignore rig_buffer_import_ipc;
%ignore rig_point_export_ipc;
%ignore rig_point_export_ipc_close;
%ignore rig_point_import_ipc;
%ignore rig_buffer_export_fd;
%ignore rig_buffer_import_fd;
%ignore rig_buffer_dlpack_device;
%ignore rig_buffer_to_dlpack;

RIG_GO_OUT(int, int32, fd)
RIG_GO_OUT(int, int32, supported)
RIG_GO_OUT(uint64_t, uint64, address)

%inline %{
/* rig_buffer_wrap_device; release is a handle naming a Go function (run once rig is done), or 0. */
static rig_status rig_go_wrap_device(rig_device device, uint64_t address, size_t length, uintptr_t release,
                                     rig_buffer *out) {
  return rig_buffer_wrap_device(device, address, length, release ? rig_go_release_tramp : NULL,
                                (void *)release, out);
}
%}

%include <rig_interop.h>
