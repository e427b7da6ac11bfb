/* rig_interop.h: rig's points and buffers meet code that is not rig's, through native handles: CUDA and HIP
 * streams and events (PyTorch's current stream, NCCL's, an MPIX stream's), device pointers made elsewhere
 * (a tensor's memory), a host file descriptor for event loops, and DLPack. It includes rig.h, whose
 * conventions (status, handles, ownership, nullability, domains, loss) every function here follows.
 * docs/interop.md shows how rig composes with NCCL, MPI and UCX.
 *
 * Native handles cross this header as `void *` (a CUstream, hipStream_t, CUevent, hipEvent_t as the
 * program's own API gives it), so the header needs no GPU SDK. rig cannot tell a stream from an event by
 * looking: the driver's answer to a handle of the wrong kind becomes RIG_INVALID_ARGUMENT with the
 * driver's words, never a crash of rig's own; a handle that is not one of the driver's at all is undefined
 * behaviour of the driver, as in the driver's own API.
 *
 * Which device's API: `device` (a CUDA or HIP device opened with rig_device_open) names the API (its
 * framework) and the GPU whose context the native stream or event belongs to. A native stream or event
 * stays the caller's: rig never destroys one it did not make, and destroys the events it makes itself
 * before the call returns, except one it hands over (rig_point_export_event), which the caller destroys.
 *
 * A point taken from a native stream or event (rig_stream_point, rig_point_import_event) is a value of
 * `device`'s own timeline: `device`'s queue waits for the native work, then the value is reached. So rule 1
 * applies to it: every later value of `device` follows that native work too. Where that would hold up other
 * work, open a second device on the same GPU (rig_device_open("cuda:0") again gives a device with a queue
 * of its own) and take the points there.
 */
#ifndef RIG_INTEROP_H
#define RIG_INTEROP_H

#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

RIG_NULLABILITY_BEGIN

/* ---------------------------------------------------------------------------------------------------- */
/* Capabilities                                                                                         */

/* What rig can do with a native handle, per device (and per producer, for waits). Values are pinned. */
typedef enum rig_interop_kind {
  RIG_INTEROP_STREAM_WAIT = 1,     /* a native stream of `device` waits in its queue for `producer`'s points */
  RIG_INTEROP_STREAM_POINT = 2,    /* a point of `device` follows the work enqueued on a native stream */
  RIG_INTEROP_EXPORT_EVENT = 3,    /* `producer`'s points become native events of its API */
  RIG_INTEROP_IMPORT_EVENT = 4,    /* a native event becomes a point of `device` */
  RIG_INTEROP_DEVICE_POINTER = 5,  /* a native device pointer of `device` becomes a rig buffer */
  RIG_INTEROP_HOST_FD = 6,         /* `producer`'s points become host file descriptors (every device) */
  RIG_INTEROP_DLPACK = 7,          /* buffers of `device` become DLPack tensors */
  RIG_INTEROP_IPC_MEMORY = 8,      /* buffers of `device` go to and come from other processes (CUDA IPC) */
  RIG_INTEROP_IPC_EVENT = 9,       /* points of `device` go to and come from other processes (IPC events) */
  RIG_INTEROP_MEMORY_FD = 10,      /* buffers of `device` leave and come back as memory fds (Vulkan) */
  RIG_INTEROP_SEMAPHORE_FD = 11,   /* points of `device` leave and come back as timeline semaphore fds (Vulkan) */
  RIG_INTEROP_SYNC_FD = 12,        /* points of `device` leave and come back as sync files (Vulkan) */
  RIG_INTEROP_KIND_MAX_ENUM = 0x7fffffff
} rig_interop_kind;

/* Writes 1 to *supported where `kind` works for `device` (and, for RIG_INTEROP_STREAM_WAIT and
 * RIG_INTEROP_EXPORT_EVENT, for points of `producer`), else 0. `producer` is nullable: null means `device`
 * itself (the other kinds ignore it). A yes is decided by the devices alone (their API and GPU), never by
 * the moment: a call of that kind then fails only on bad input, a loss or a driver failure. Pure read:
 * waits for nothing, holds no lock. RIG_INVALID_ARGUMENT for an unknown kind. */
RIG_API rig_status rig_interop_supported(rig_device RIG_NONNULL device, rig_device RIG_NULLABLE producer,
                                         rig_interop_kind kind, int *RIG_NONNULL supported);

/* ---------------------------------------------------------------------------------------------------- */
/* Native streams (CUDA, HIP)                                                                           */

/* Makes the native stream `native_stream` (a CUstream / hipStream_t of `device`'s GPU; null is the
 * legacy default stream) wait in its queue for `point`: work the caller enqueues on the stream after this
 * call runs after the point is reached. Never blocks the host: it commits the point's device (a no-op for
 * CUDA and HIP) and enqueues the wait (cuStreamWaitEvent on the event that marks the point, or, for a
 * timeline kept with stream memory operations, on an event recorded after it, which may wait a little
 * longer). A point already reached, the point 0, and points of memory devices (whose work is done when
 * rig_submit returns) enqueue nothing. Points of another API or of a device whose queue a native stream
 * cannot wait on (Vulkan) answer RIG_UNSUPPORTED with the reason, enqueuing nothing and never waiting on
 * the host: wait for them with rig_wait_point first (rig_interop_supported says which beforehand).
 * RIG_LOST where the point's device was lost short of it, or `device` is lost or released; RIG_NOT_FOUND for
 * a point of no device; RIG_INVALID_ARGUMENT for a value past its device's submitted, and for the driver's
 * refusal of the stream (its words in the message); RIG_UNSUPPORTED where `device` is not CUDA or HIP.
 * Locks: briefly the table of streams' waits, and the producer's turn where its held work must be committed
 * first (rig_submit's lock); never waits on the host while holding either. A loss of the point's
 * device after this call leaves the native stream waiting (CUDA gives no way to cancel a queued wait);
 * rig answers RIG_LOST for every point taken later from that stream (rig_stream_point). */
RIG_API rig_status rig_stream_wait_point(rig_device RIG_NONNULL device, void *RIG_NULLABLE native_stream,
                                         rig_point point);

/* Writes to *point a new point of `device` that follows the work enqueued so far on `native_stream` (of
 * `device`'s GPU; null is the legacy default stream): holding the device's turn, as a submit does, rig
 * records an event of `device`'s own on the native stream (one event per device, reused: a wait captures
 * the record it follows), makes `device`'s queue wait for it and takes the next value of `device`. rig's later work that names the point
 * (through stamps or rule 2) waits for it in queue where its device can, on the host where it cannot, as
 * for any point. Never blocks the host. Waits the native stream was given with rig_stream_wait_point are
 * carried into the point: if one of their devices is lost short of the value waited for, rig's waits for
 * this point answer RIG_LOST instead of waiting for ever. The driver's refusal of the stream answers
 * RIG_INVALID_ARGUMENT with nothing assigned; RIG_LOST for a lost or released `device`. Allocates nothing
 * on the heap (rig_stream_wait_point: only a stream's entry in rig's table, at its first wait). */
RIG_API rig_status rig_stream_point(rig_device RIG_NONNULL device, void *RIG_NULLABLE native_stream,
                                    rig_point *RIG_NONNULL point);

/* ---------------------------------------------------------------------------------------------------- */
/* Points as native events (CUDA, HIP)                                                                  */

/* Writes to *native_event a new event (CUevent / hipEvent_t, timing disabled, made in the context of the
 * point's GPU) that completes once `point` is reached: cuEventQuery, cuEventSynchronize and
 * cuStreamWaitEvent on it see the point. The caller owns the event and destroys it (cuEventDestroy /
 * hipEventDestroy), at any time: CUDA keeps queued waits on it valid. The event is recorded at the tail of
 * the point's device's stream as of this call, so it completes no earlier than the point and possibly
 * after later work of that device; an event for a point already reached is never recorded (complete at
 * once, as CUDA defines an unrecorded event). RIG_UNSUPPORTED for a point of a device of no native event
 * (memory devices, Vulkan); RIG_LOST where its device was lost short of it; RIG_INVALID_ARGUMENT for the
 * point 0 (no device to make the event in) or a value past its device's submitted. Never blocks; no lock
 * held. */
RIG_API rig_status rig_point_export_event(rig_point point, void *RIG_NONNULL *RIG_NONNULL native_event);

/* Writes to *point a new point of `device` that follows `native_event`'s latest record as of this call
 * (an event of `device`'s API, of any GPU of that API): `device`'s queue waits for it (cuStreamWaitEvent)
 * and takes the next value, holding the device's turn as a submit does. The event stays the caller's (it
 * may destroy it once this returns). An event never recorded is complete (CUDA's rule): the point is
 * reached as soon as `device`'s earlier work is. An event whose record never completes (its stream waits
 * for ever) leaves the point unreached: rig_wait_point with a timeout answers RIG_TIMEOUT. The driver's
 * refusal of the event (a stream or a destroyed event passed as one) answers RIG_INVALID_ARGUMENT with
 * nothing assigned. Never blocks the host. */
RIG_API rig_status rig_point_import_event(rig_device RIG_NONNULL device, void *RIG_NONNULL native_event,
                                          rig_point *RIG_NONNULL point);

/* ---------------------------------------------------------------------------------------------------- */
/* Points as host file descriptors                                                                      */

/* Writes to *fd a new file descriptor (an eventfd, close-on-exec) that becomes readable once `point` is
 * reached, or once it can never be (its device lost short of it): then rig_wait_point(point, 0) says which.
 * For event loops (poll, epoll, io_uring) and MPI progress threads. The caller closes *fd, at any time:
 * rig signals a descriptor of its own on the same eventfd, so a closed one is never written. A point not
 * yet reached is waited for by a thread rig starts for it (on the host, holding no lock), which ends once
 * the point is settled. The point 0 and points already reached give a descriptor readable at once.
 * RIG_NOT_FOUND for a point of no device; RIG_DRIVER where the system refuses an eventfd or a thread. */
RIG_API rig_status rig_point_fd(rig_point point, int *RIG_NONNULL fd);

/* ---------------------------------------------------------------------------------------------------- */
/* Native memory                                                                                        */

/* A buffer of `device` over `length` bytes of its memory at `address`, made elsewhere (a PyTorch tensor's
 * data_ptr, a cudaMalloc'd pointer; for a memory device, host memory): a new allocation with stamps of its
 * own, taking part in every rule from now on. rig never frees the memory: `release` (nullable) is called
 * once the last buffer over it is released and every use of it is reached, and the memory's owner must
 * keep it valid until then. rig does not see the owner's own work on it: order that through
 * rig_stream_point and rig_stream_wait_point. rig cannot check that the memory is `device`'s: the caller
 * states it. RIG_INVALID_ARGUMENT for a null address with a length, or a range that wraps around;
 * RIG_UNSUPPORTED for a device with no addressable memory (Vulkan). Waits for nothing. */
RIG_API rig_status rig_buffer_wrap_device(rig_device RIG_NONNULL device, uint64_t address, size_t length,
                                          rig_release_fn RIG_NULLABLE release, void *RIG_NULLABLE user,
                                          rig_buffer *RIG_NONNULL out);

/* The device address of the buffer's first byte as its device's work sees it (a CUdeviceptr for CUDA and
 * HIP, the host address for memory devices and the host). Ordered by nothing: code that uses it orders
 * itself through rig_stream_wait_point and rig_stream_point. RIG_UNSUPPORTED where work addresses memory
 * by no pointer (Vulkan). Valid until the last buffer over the allocation is released. Pure read. */
RIG_API rig_status rig_buffer_device_address(rig_buffer RIG_NONNULL buffer, uint64_t *RIG_NONNULL address);

/* Records `point` in the stamps of `buffer`'s allocation as a use by the point's device, and, where
 * `access` writes, as its last write: work outside rig that rig_stream_point (or rig_point_import_event)
 * turned into `point` then takes part in rules 3, 4 and 6 like rig's own (a later rig write waits for a
 * torch kernel's read; a later rig read for its write). The point must be submitted; for a write it must
 * follow the allocation's previous last write (the caller ordered it, with rig_stream_wait_point). A write
 * holds the point's device's turn for a moment (as its submits do), a read takes no lock; waits for nothing
 * and allocates nothing (the first stamp of a device other than the buffer's makes that device's word).
 * RIG_INVALID_ARGUMENT for the point 0, a value past its device's submitted, or a point of the host. */
RIG_API rig_status rig_buffer_stamp(rig_buffer RIG_NONNULL buffer, rig_point point, rig_access access);

/* ---------------------------------------------------------------------------------------------------- */
/* Across processes on one host (CUDA, HIP)                                                             */

/* A buffer or a point of one process as bytes another process of the host opens: rig's header (what it
 * names, the API, the exporting process, the range) around the API's own 64-byte handle (CUipcMemHandle,
 * CUipcEventHandle, or HIP's). Plain bytes: send them over whatever the program uses (a UNIX socket, a
 * pipe, MPI). Every import checks the header: bytes that are no rig handle (garbage, another version), a
 * handle of the other kind (a point's where a buffer's is asked, or the reverse), of another API than the
 * importing device's, or exported by the importing process itself answer RIG_INVALID_ARGUMENT saying which.
 * What the header cannot see (an exporter that has since freed or closed what the handle names, or exited)
 * the driver answers when the handle is opened: RIG_INVALID_ARGUMENT with the driver's words. */
#define RIG_IPC_HANDLE_SIZE 128
typedef struct rig_ipc_handle {
  uint8_t bytes[RIG_IPC_HANDLE_SIZE];
} rig_ipc_handle;

/* Writes to *out a handle of the buffer's bytes (cuIpcGetMemHandle of its allocation, with the buffer's
 * offset and length). Waits for nothing and orders nothing: send a point with it (rig_buffer_last_write
 * exported with rig_point_export_ipc) for the importer to follow. The exporting process keeps the buffer's
 * allocation (a buffer over it) until every use the importer makes of it is reached (its point sent back);
 * exporting holds nothing, so there is nothing to close. RIG_UNSUPPORTED for memory the API cannot share (a
 * device without RIG_INTEROP_IPC_MEMORY, pinned or mapped host memory, an empty buffer, memory itself
 * imported from another process); RIG_LOST for a lost device. Holds no lock of rig's. */
RIG_API rig_status rig_buffer_export_ipc(rig_buffer RIG_NONNULL buffer, rig_ipc_handle *RIG_NONNULL out);

/* Writes to *out a new buffer of `device` over another process's exported bytes (cuIpcOpenMemHandle on
 * `device`'s GPU, with peer access where the memory is another GPU's): a new allocation with stamps of its
 * own, taking part in every rule from now on. rig closes the mapping (cuIpcCloseMemHandle) once the last
 * buffer over it is released and every use of it is reached. rig does not see the exporter's work on the
 * bytes: import its point (rig_point_import_ipc) and let the importer's first use follow it. Waits for
 * nothing. RIG_INVALID_ARGUMENT for bad bytes (above) and the driver's refusal; RIG_UNSUPPORTED for a
 * device without RIG_INTEROP_IPC_MEMORY, or memory on another GPU that `device`'s cannot reach as a peer;
 * RIG_LOST for a lost or released device. */
RIG_API rig_status rig_buffer_import_ipc(rig_device RIG_NONNULL device, const rig_ipc_handle *RIG_NONNULL handle,
                                         rig_buffer *RIG_NONNULL out);

/* Writes to *out a handle of `point` for another process: rig makes an interprocess event
 * (CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) recorded at the tail of the point's device's stream as
 * of this call (so it completes no earlier than the point, possibly after later work of that device; never
 * recorded, so complete, where the point is reached). The event is the exporting process's: it lives until
 * rig_point_export_ipc_close(handle) in this process, or until the process exits; close it only once the
 * importer's point that followed it is reached (CUDA leaves waits on an event destroyed in its exporter
 * undefined). Never blocks; no lock held. RIG_INVALID_ARGUMENT for the point 0 or a value past its device's
 * submitted; RIG_UNSUPPORTED for a device without RIG_INTEROP_IPC_EVENT; RIG_LOST where its device was lost
 * short of it. */
RIG_API rig_status rig_point_export_ipc(rig_point point, rig_ipc_handle *RIG_NONNULL out);

/* Ends an export made by this process with rig_point_export_ipc: destroys its event. RIG_INVALID_ARGUMENT
 * for bytes that are no rig handle, a buffer's handle (exporting memory holds nothing), or a handle another
 * process exported (only the exporter closes); RIG_NOT_FOUND for an export closed already. Never blocks. */
RIG_API rig_status rig_point_export_ipc_close(const rig_ipc_handle *RIG_NONNULL handle);

/* Writes to *point a new point of `device` that follows the exported event's latest record as of this call
 * (cuIpcOpenEventHandle, then cuStreamWaitEvent in `device`'s queue, holding its turn as a submit does; the
 * opened event is destroyed before return, the queued wait keeping it). Never blocks the host. An exporter
 * whose work never completes (its stream waits for ever, or it died holding the record) leaves the point
 * unreached: rig_wait_point with a timeout answers RIG_TIMEOUT. RIG_INVALID_ARGUMENT for bad bytes (above),
 * an export closed or of an exited process (the driver's refusal), with nothing assigned; RIG_UNSUPPORTED
 * for a device without RIG_INTEROP_IPC_EVENT; RIG_LOST for a lost or released device. */
RIG_API rig_status rig_point_import_ipc(rig_device RIG_NONNULL device, const rig_ipc_handle *RIG_NONNULL handle,
                                        rig_point *RIG_NONNULL point);

/* Buffers as file descriptors (Vulkan: VK_KHR_external_memory_fd, opaque fds). A descriptor carries a whole
 * allocation's device memory; send it over a UNIX socket with SCM_RIGHTS, or keep it across a fork. The
 * importer needs the length too (an opaque fd does not say it) and a device of the same driver and GPU.
 * Descriptors order nothing: the exporter sends after the write the importer must see is reached
 * (rig_wait_point), and keeps nothing alive: the memory lives while either side's buffer does. */

/* Writes to *fd a new descriptor of the buffer's memory (vkGetMemoryFdKHR), which the caller owns (closes,
 * or sends), and to *length the buffer's length. Waits for nothing. RIG_UNSUPPORTED for a device without
 * RIG_INTEROP_MEMORY_FD and for host-visible memory (RIG_MEMORY_PINNED, RIG_MEMORY_MAPPED: only
 * RIG_MEMORY_DEVICE buffers are made exportable); RIG_INVALID_ARGUMENT for a view (export the whole buffer,
 * make the view on the importing side) and for a loaded tensor whose memory is shared with other tensors
 * (rig_load.h: copy it into a buffer of rig_buffer_create); RIG_LOST for a lost device. Holds no lock of
 * rig's. */
RIG_API rig_status rig_buffer_export_fd(rig_buffer RIG_NONNULL buffer, int *RIG_NONNULL fd,
                                        size_t *RIG_NONNULL length);

/* Writes to *out a new buffer of `device` over the memory of descriptor `fd` (an export of
 * rig_buffer_export_fd, in this process or another, of `length` bytes): a new allocation with stamps of its
 * own; its memory is freed once the last buffer over it is released and every use reached. `fd` stays the
 * caller's, to close whenever (rig imports a duplicate).
 * RIG_INVALID_ARGUMENT for a descriptor not open in this process, a pipe or a socket, a length of 0, and the
 * driver's refusal
 * (VK_ERROR_INVALID_EXTERNAL_HANDLE: not an opaque memory fd of this driver); RIG_UNSUPPORTED for a device
 * without RIG_INTEROP_MEMORY_FD; RIG_LOST for a lost or released device. Waits for nothing. */
RIG_API rig_status rig_buffer_import_fd(rig_device RIG_NONNULL device, int fd, size_t length,
                                        rig_buffer *RIG_NONNULL out);

/* Points as semaphore descriptors (Vulkan: VK_KHR_external_semaphore_fd). A point leaves as the opaque fd
 * of its device's timeline semaphore with the value to wait for (any Vulkan code of the same driver and GPU
 * imports it, in this process or another: vkImportSemaphoreFdKHR, then a wait for the value), or as a sync
 * file (a binary semaphore's payload, also what Linux's dma-fence consumers take). A descriptor comes back
 * as a point of a Vulkan device whose queue waits for it. rig_interop_supported says which device can
 * (RIG_INTEROP_SEMAPHORE_FD, RIG_INTEROP_SYNC_FD), from the driver's own answer
 * (vkGetPhysicalDeviceExternalSemaphoreProperties); timeline descriptors are opt-in, for devices opened
 * with RIG_VULKAN_SEMAPHORE_FD=1 set (an unexplained validation report on the import path, docs/interop.md);
 * elsewhere (lavapipe, CUDA, HIP, memory devices, a device not opted in) every
 * call below answers RIG_UNSUPPORTED with the reason. */

/* Writes to *fd a new descriptor of the timeline semaphore of the point's device, which the caller owns
 * (closes, or sends), and to *value the semaphore value that covers the point: the semaphore reaches it
 * once the point is reached (possibly with later work of that device in the same batch). The descriptor
 * names the whole timeline, not one point: every later point of the device is a later value of it, and an
 * importer can wait for any (keep it, export again only for the value). Commits the point (a wait never
 * waits on held work); waits for nothing else. RIG_INVALID_ARGUMENT for the point 0 or a value past its
 * device's submitted; RIG_NOT_FOUND for a point of no device; RIG_UNSUPPORTED for a device without
 * RIG_INTEROP_SEMAPHORE_FD; RIG_LOST where its device was lost short of it. Takes its device's recording
 * lock for a moment (as a submit does), never while waiting. */
RIG_API rig_status rig_point_export_semaphore_fd(rig_point point, int *RIG_NONNULL fd, uint64_t *RIG_NONNULL value);

/* Writes to *point a new point of `device` that follows the timeline semaphore of descriptor `fd` reaching
 * `value` (an export of rig_point_export_semaphore_fd, or any Vulkan timeline semaphore's opaque fd of the
 * same driver and GPU): `device`'s queue waits for it (a wait semaphore of its next batch), holding the
 * device's turn as a submit does, and takes the next value. Never blocks the host. `fd` stays the
 * caller's, to close whenever (rig imports a duplicate); the imported semaphore is `device`'s, destroyed
 * once the wait is reached. A semaphore that never reaches `value` leaves the point unreached:
 * rig_wait_point with a timeout answers RIG_TIMEOUT, and rule 1 holds every later point of `device` behind
 * it (import on a device of its own where that matters); a value the exporter has not submitted yet (past
 * the exported one) may hold `device`'s VkQueue, which the exporter shares where the GPU has one queue.
 * RIG_INVALID_ARGUMENT for a descriptor not open in this process, a pipe or a socket, and the driver's
 * refusal (not a timeline semaphore's fd of this driver), with nothing assigned; RIG_UNSUPPORTED for a
 * device without RIG_INTEROP_SEMAPHORE_FD; RIG_LOST for a lost or released device. */
RIG_API rig_status rig_point_import_semaphore_fd(rig_device RIG_NONNULL device, int fd, uint64_t value,
                                                 rig_point *RIG_NONNULL point);

/* Writes to *fd a new sync file that signals once `point` is reached, which the caller owns (closes, or
 * sends): rig submits an empty batch that waits for the point on its device's timeline and signals a
 * binary semaphore, and exports that (the semaphore is destroyed by rig once the batch completes). Commits
 * the point; waits for nothing else. *fd may be -1 where the point is already reached (the driver's
 * choice, Vulkan's convention for a signaled sync file; rig_point_import_sync_fd takes it). Statuses as
 * rig_point_export_semaphore_fd, with RIG_INTEROP_SYNC_FD; RIG_LOST also where the driver refuses the batch.
 * Takes its device's recording and queue locks for a moment (as a commit does), never while waiting. */
RIG_API rig_status rig_point_export_sync_fd(rig_point point, int *RIG_NONNULL fd);

/* Writes to *point a new point of `device` that follows sync file `fd` (an export of
 * rig_point_export_sync_fd, or any sync file the driver takes): as rig_point_import_semaphore_fd, with the
 * sync file imported temporarily (Vulkan's only way): the one wait of `device`'s queue consumes it. `fd`
 * stays the caller's; -1 is a sync file already signaled (the point follows only `device`'s earlier work).
 * Statuses as rig_point_import_semaphore_fd, with RIG_INTEROP_SYNC_FD. */
RIG_API rig_status rig_point_import_sync_fd(rig_device RIG_NONNULL device, int fd, rig_point *RIG_NONNULL point);

/* ---------------------------------------------------------------------------------------------------- */
/* DLPack                                                                                               */

/* DLPack's tensor (dlpack/dlpack.h, version 0.6 and later: DLManagedTensor is unchanged since 0.2).
 * Declared incomplete so that this header needs no dlpack.h; include dlpack.h to read it. */
struct DLManagedTensor;

/* The DLPack device type and id of the buffer's device ({kDLCUDA = 2, ordinal} for CUDA, {kDLROCM = 10,
 * ordinal} for HIP, {kDLCPU = 1, 0} for the host and memory devices); RIG_UNSUPPORTED for Vulkan. Pure read. */
RIG_API rig_status rig_buffer_dlpack_device(rig_buffer RIG_NONNULL buffer, int32_t *RIG_NONNULL device_type,
                                            int32_t *RIG_NONNULL device_id);

/* Writes to *out a new DLManagedTensor over the buffer's bytes without a copy: a one-dimensional tensor of
 * length / (bits / 8 * lanes) elements of DLPack data type (code, bits, lanes) (kDLUInt = 1, kDLInt = 0,
 * kDLFloat = 2); the length must be a whole number of elements. The tensor keeps the buffer's allocation
 * alive until its deleter runs (the consumer calls it once, as DLPack says; rig frees the struct there).
 * Ordered by nothing: the consumer orders its reads after rig's last write (rig_stream_wait_point with
 * the allocation's last write, rig_buffer_last_write, or a host wait) and rig's later work after its own
 * (rig_stream_point). RIG_UNSUPPORTED where the device has no DLPack device (Vulkan). Waits for nothing. */
RIG_API rig_status rig_buffer_to_dlpack(rig_buffer RIG_NONNULL buffer, uint8_t code, uint8_t bits,
                                        uint16_t lanes, struct DLManagedTensor *RIG_NULLABLE *RIG_NONNULL out);

/* The allocation's last write (stamps, rule 5) as a point, 0 if none: what a consumer of the bytes outside
 * rig must follow (rig_stream_wait_point, rig_wait_point, rig_point_fd). Pure read. */
RIG_API rig_status rig_buffer_last_write(rig_buffer RIG_NONNULL buffer, rig_point *RIG_NONNULL point);

RIG_NULLABILITY_END

#ifdef __cplusplus
}
#endif

#endif /* RIG_INTEROP_H */
