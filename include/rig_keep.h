/* rig_keep.h: a keeper holds a loaded checkpoint in its process and hands every tensor, with the point after
 * which it holds the file's bytes, to the processes that attach over a UNIX socket: an engine that restarts
 * maps the weights again instead of loading them again. docs/keep.md says what the protocol's messages are,
 * who may attach and how an engine would use it.
 *
 * It includes rig.h and rig_load.h, whose conventions every function here follows: every call returns
 * rig_status with rig_last_error() saying why; out-pointers are written only on RIG_OK; every pointer
 * parameter is marked RIG_NONNULL (null is still answered, never followed) or RIG_NULLABLE; structs start
 * with their size; only the waits named here block, and none of them holds a lock of rig's while it waits.
 *
 * Memory: a memory device's tensor leaves as a sealed memfd (it cannot shrink, so a mapping never faults;
 * clients map it read-only unless the keeper allows writes), sent once the copy into it is reached: the
 * client has nothing to wait for but the tensor's message. A CUDA or HIP device's tensor leaves as IPC
 * handles of the keeper's arena holding it (one per arena) and of the point after the copy into it, sent
 * at once: the client's buffer carries that point as its last write, so the client's work on it waits in
 * queue for that copy only (and rig refuses the client's writes unless the keeper allows them). A Vulkan
 * device's tensor leaves as the memory fd of its arena (one import per arena), sent once its copy is in.
 *
 * Statuses for what happens between processes:
 *   RIG_NOT_FOUND         no keeper listens at the socket path; a tensor or device the keeper does not have;
 *   RIG_UNSUPPORTED       the keeper refused this process (its uid and gid are not allowed: the message
 *                         says whose are), or speaks another protocol version (both named);
 *   RIG_BUSY              the keeper serves its most clients already;
 *   RIG_LOST              the keeper closed the connection (stopped, or died) before the call's answer;
 *   RIG_INVALID_ARGUMENT  a reply that breaks the protocol (a truncated message, a descriptor that is no
 *                         sealed memfd or is shorter than its tensor), with words.
 */
#ifndef RIG_KEEP_H
#define RIG_KEEP_H

#include "rig.h"
#include "rig_load.h"

#ifdef __cplusplus
extern "C" {
#endif

RIG_NULLABILITY_BEGIN

typedef struct rig_keeper_h *rig_keeper;         /* a keeper serving one checkpoint on one socket */
typedef struct rig_attachment_h *rig_attachment; /* one connection to a keeper and the tensors it gave */

/* Called on the keeper's loading thread just before tensor `index` (file order) is published, one call at a
 * time: for a caller that logs the load, or a test that holds a tensor back. Must not call rig_keep_* on the
 * same keeper; while it runs, later tensors wait (earlier ones are served). */
typedef void (*rig_keep_tensor_fn)(void *user, size_t index);
/* Called with one line of the keeper's log (listening, a client attached, refused or gone, the load's
 * end), from the keeper's threads, one call at a time. */
typedef void (*rig_keep_log_fn)(void *user, const char *line);

typedef struct rig_keep_options {
  size_t size;          /* sizeof(rig_keep_options) */
  uint32_t socket_mode; /* the socket file's permission bits; 0: 0600 (only the keeper's user connects) */
  int has_uid;          /* 1: peers of `uid` may attach instead of those of the keeper's effective uid */
  uint32_t uid;
  int has_gid;          /* 1: peers whose gid is `gid` may attach too (with socket_mode letting them connect) */
  uint32_t gid;
  int writable;         /* 1: clients map the tensors writable (a write is every client's); 0: read-only */
  size_t max_clients;   /* connections served at once; more are answered RIG_BUSY and closed. 0: 64 */
  rig_keep_tensor_fn before_publish; /* nullable */
  rig_keep_log_fn log;               /* nullable */
  void *user;                        /* passed to both */
} rig_keep_options;

/* Loads the checkpoint at `checkpoint` (any layout rig_load_open takes) onto every one of `devices` (1..64
 * distinct memory devices, devices with RIG_INTEROP_IPC_MEMORY and RIG_INTEROP_IPC_EVENT, or devices with
 * RIG_INTEROP_MEMORY_FD, which must stay open until rig_keep_stop returns: a released device's tensors
 * answer RIG_LOST to the clients still to get them) and serves it on a new UNIX socket at
 * `socket_path`, made with options' socket_mode: clients may attach at once, while the load runs, and get
 * each tensor as it lands. The path appears only once the socket listens (it is bound beside the path and
 * linked there), so a peer that sees it is never refused. `options` null: every default. Waits for the
 * checkpoint's headers and the load's start; returns while threads load, publish and serve. RIG_BUSY where
 * `socket_path` exists (remove a stale one first), RIG_INVALID_ARGUMENT for a path too long for a socket,
 * rig_load_open's and rig_load_start's statuses, RIG_UNSUPPORTED for a device whose tensors cannot leave
 * the process (a Vulkan device without VK_KHR_external_memory_fd). */
RIG_API rig_status rig_keep_start(const char *RIG_NONNULL checkpoint, const rig_device *RIG_NONNULL devices,
                                  size_t device_count, const char *RIG_NONNULL socket_path,
                                  const rig_keep_options *RIG_NULLABLE options, rig_keeper *RIG_NONNULL out);

/* Waits (on the host, no lock held) until every tensor of the generation now served is published and the
 * loader's own copy of them released, and answers the load's status. */
RIG_API rig_status rig_keep_wait_loaded(rig_keeper RIG_NONNULL keeper);

/* The number of connections the keeper serves now. Pure read; waits for nothing. */
RIG_API rig_status rig_keep_client_count(rig_keeper RIG_NONNULL keeper, size_t *RIG_NONNULL count);

/* Loads the checkpoint again, as its files are now, as the keeper's next generation, on the same devices:
 * clients that attach from now on get it (while it still loads, as ever). Connections attached before keep
 * the generation they attached to, every tensor of it, until they let go; its memory goes with the last of
 * them. A checkpoint whose files changed is reloaded only so, when asked: never on its own. Waits for the
 * new load's start (rig_keep_start's waits), holding no lock of rig's; the keeper serves meanwhile. On
 * failure (rig_load_open's and rig_load_start's statuses) the generation served stays. RIG_BUSY while
 * another reload of this keeper starts. */
RIG_API rig_status rig_keep_reload(rig_keeper RIG_NONNULL keeper);

/* Stops listening at once (the socket file is removed), then waits up to `timeout_ns` (UINT64_MAX: for
 * ever) for every client to let go (detach, close or exit), closes the connections left, cancels a load
 * still running and releases the keeper and its handle. RIG_TIMEOUT where clients had to be cut off (the
 * keeper is released all the same; their mapped tensors stay valid memory). Waits on the host, holding no
 * lock of rig's; a before_publish call in progress must return, and so must calls on the keeper in progress
 * in other threads (a rig_keep_wait_loaded: the handle is retired first, then its calls drain). */
RIG_API rig_status rig_keep_stop(rig_keeper RIG_NONNULL keeper, uint64_t timeout_ns);

/* One tensor as the keeper describes it. */
typedef struct rig_keep_tensor {
  size_t size;      /* set by the caller: sizeof(rig_keep_tensor) */
  const char *name; /* UTF-8, NUL-terminated; valid while the attachment lives */
  rig_dtype dtype;
  uint32_t ggml_type;
  uint32_t rank;
  uint64_t shape[RIG_LOAD_MAX_DIMS]; /* outermost first, unused entries 0 */
  uint64_t length;  /* bytes */
  int writable;     /* 1 where the keeper lets clients write it (known once the buffer was received) */
} rig_keep_tensor;

/* Connects to the keeper at `socket_path`, asks for its table and attaches every tensor for `device` (a
 * memory device gets the keeper's first memory device's tensors; a CUDA, HIP or Vulkan device those of the
 * keeper's device of the same name, "cuda:0", "vulkan:0"). Returns once the table is in; tensors arrive as
 * the keeper publishes them (rig_attachment_get waits for each). Waits for the connection and the table,
 * holding no lock. Statuses: see above; RIG_NOT_FOUND where the keeper holds nothing on `device`, its
 * message naming the devices it does hold tensors on. */
RIG_API rig_status rig_attach(const char *RIG_NONNULL socket_path, rig_device RIG_NONNULL device,
                              rig_attachment *RIG_NONNULL out);

/* The number of tensors the keeper serves (its checkpoint's, in file order). Pure read; waits for nothing. */
RIG_API rig_status rig_attachment_count(rig_attachment RIG_NONNULL attachment, size_t *RIG_NONNULL count);

/* The index of the tensor called `name` (exact bytes); RIG_NOT_FOUND if none. Pure read. */
RIG_API rig_status rig_attachment_find(rig_attachment RIG_NONNULL attachment, const char *RIG_NONNULL name,
                                       size_t *RIG_NONNULL index);

/* Tensor `index`: its description into `info` (nullable; info->size set by the caller) and, where `buffer`
 * is not null, a new buffer of the attachment's device over its memory, whose bytes are the file's. With a
 * buffer asked, waits on the host (holding the attachment's lock, not rig's) until the keeper sent the
 * tensor: only that tensor, so a consumer of tensor 0 runs while the keeper still loads later ones.
 * RIG_LOST where the keeper is gone (stopped or died): for a tensor not received, and for one received
 * before (its buffers stay valid memory holding the bytes they held, but the keeper no longer stands
 * behind them). RIG_INVALID_ARGUMENT for an index past the count. A read-only tensor's buffer refuses
 * writes (RIG_INVALID_ARGUMENT at submit and rig_buffer_write). */
RIG_API rig_status rig_attachment_get(rig_attachment RIG_NONNULL attachment, size_t index,
                                      rig_keep_tensor *RIG_NULLABLE info, rig_buffer *RIG_NULLABLE buffer);

/* Says goodbye to the keeper and closes the connection: the keeper lets go of what this attachment held.
 * Buffers handed out stay the caller's (their memory stays mapped until the last is released); a memfd's
 * pages outlive the keeper's hold, but a GPU's IPC memory does not: keep the attachment until its CUDA or
 * HIP buffers are released, since the keeper frees a replaced generation once its connections let go. Waits for
 * nothing but the goodbye's send; holds no lock but the handle table's, briefly. */
RIG_API rig_status rig_attachment_release(rig_attachment RIG_NONNULL attachment);

RIG_NULLABILITY_END

#ifdef __cplusplus
}
#endif

#endif /* RIG_KEEP_H */
