/* rig_load.h: model weights from a file onto one or more devices, each tensor ordered by its own stamps.
 *
 * Open a weights file (safetensors, GGUF, or raw byte ranges of any file), list its tensors, and load a
 * chosen set of them onto devices by a placement. Every copy the load makes is a rig submit, so each
 * tensor's buffer carries the load's write in its stamps: a submit that reads tensor k follows the copy
 * of the chunk that holds k (rule 3), never the whole file. rig_load_buffer hands a tensor's buffer out as
 * soon as its copies are submitted, while later chunks are still being read and copied.
 *
 * It includes rig.h, whose conventions every function here follows: every call returns rig_status with
 * rig_last_error() saying why; out-pointers are written only on RIG_OK; every pointer parameter is marked
 * RIG_NONNULL (null is still answered, never followed) or RIG_NULLABLE; structs start with their size;
 * only the waits named here block, and none of them holds a lock of rig's while it waits.
 * docs/load.md says how each path works and what was measured.
 *
 * Statuses for bad input (with a message naming the tensor or offset):
 *   RIG_INVALID_ARGUMENT  a file that is truncated, a header length past the end or over the format's
 *                         limit, tensors overlapping or outside the data, a dtype and shape that disagree
 *                         with the byte range, a name that is not UTF-8 or appears twice, a malformed
 *                         header, a file that changed (size or mtime) between rig_load_open and the
 *                         end of a load, and a slice or split that does not fit its tensor (rig_load_slice);
 *   RIG_DRIVER            a read of the file failed (the message carries errno's words), or verification
 *                         found device bytes that differ from the file's;
 *   RIG_OUT_OF_MEMORY, RIG_LOST  from the devices (a lost device's buffers answer RIG_LOST; buffers of
 *                         other devices handed out before stay intact);
 *   RIG_INTERRUPTED       cancelled (the options' flag, or rig_interrupt_waits).
 */
#ifndef RIG_LOAD_H
#define RIG_LOAD_H

#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

RIG_NULLABILITY_BEGIN

typedef struct rig_load_file_h *rig_load_file; /* an open weights file and its tensor table */
typedef struct rig_load_h *rig_load;           /* one load of a set of tensors, running or finished */
typedef struct rig_load_pool_h *rig_load_pool; /* pinned staging chunks of one device, kept across loads */

typedef enum rig_load_format {
  RIG_LOAD_FORMAT_AUTO = 0,        /* by the first bytes: "GGUF" magic, else safetensors */
  RIG_LOAD_FORMAT_SAFETENSORS = 1,
  RIG_LOAD_FORMAT_GGUF = 2,
  RIG_LOAD_FORMAT_RAW = 3,         /* the ranges given to rig_load_open_raw */
  RIG_LOAD_FORMAT_MAX_ENUM = 0x7fffffff
} rig_load_format;

/* A tensor's element type. Safetensors' dtypes and GGUF's ggml types map here; GGUF's block-quantized
 * types are RIG_DTYPE_GGML with the ggml type number in rig_load_tensor.ggml_type. */
typedef enum rig_dtype {
  RIG_DTYPE_U8 = 1, RIG_DTYPE_I8 = 2, RIG_DTYPE_BOOL = 3, RIG_DTYPE_F8_E4M3 = 4, RIG_DTYPE_F8_E5M2 = 5,
  RIG_DTYPE_U16 = 6, RIG_DTYPE_I16 = 7, RIG_DTYPE_F16 = 8, RIG_DTYPE_BF16 = 9,
  RIG_DTYPE_U32 = 10, RIG_DTYPE_I32 = 11, RIG_DTYPE_F32 = 12,
  RIG_DTYPE_U64 = 13, RIG_DTYPE_I64 = 14, RIG_DTYPE_F64 = 15,
  RIG_DTYPE_GGML = 16, /* a ggml block type (Q4_0, Q8_0, Q4_K, ...): see ggml_type */
  RIG_DTYPE_MAX_ENUM = 0x7fffffff
} rig_dtype;

#define RIG_LOAD_MAX_DIMS 8

/* The staged path's defaults (rig_load_options' zeros), from a sweep of readers, chunk and budget on an
 * H200 (bench/README.md, 2026-12-01): a small pool stays in the CPU's caches while readers fill it and the
 * device reads it, where 256 MiB of 8 MiB chunks went through memory and reached 0.7 of the link. */
#define RIG_LOAD_DEFAULT_STAGING_BYTES ((size_t)64 << 20)
#define RIG_LOAD_DEFAULT_CHUNK_BYTES ((size_t)4 << 20)
#define RIG_LOAD_DEFAULT_THREADS_MAX 12 /* readers: min(12, 3/4 of the cores), at least 1 */
/* A load's tensors on a device share device allocations of at most this many bytes (rig_load_options'
 * arena_bytes): an H200 makes 4 GiB as 4 allocations in 0.6 ms, as 64 in 5.2 ms (docs/load.md). */
#define RIG_LOAD_DEFAULT_ARENA_BYTES ((size_t)1 << 30)

/* One tensor of a file. */
typedef struct rig_load_tensor {
  size_t size;         /* set by the caller: sizeof(rig_load_tensor) */
  const char *name;    /* UTF-8, NUL-terminated; valid while the file handle lives */
  const char *dtype_name; /* the file's own name for the type ("BF16", "Q4_K"); valid as name */
  rig_dtype dtype;
  uint32_t ggml_type;  /* GGUF: the ggml type number; 0 otherwise */
  uint32_t rank;       /* number of dimensions, 0..RIG_LOAD_MAX_DIMS */
  uint64_t shape[RIG_LOAD_MAX_DIMS]; /* outermost first (GGUF's ne[] reversed), unused entries 0 */
  uint64_t offset;     /* absolute byte offset of the tensor's bytes in its file (its shard's) */
  uint64_t length;     /* its byte length (equals elements times the type's size, checked at open) */
  size_t shard;        /* the checkpoint's file that holds it (rig_load_shard_get); 0 for a single file.
                          A caller built before this field passes the smaller size and gets the rest */
} rig_load_tensor;

/* Opens a checkpoint at `path` and reads its tensor table (format AUTO, SAFETENSORS or GGUF): a
 * safetensors file; a sharded safetensors checkpoint, by its *.index.json ({"metadata": {...},
 * "weight_map": {tensor: shard file}}) or the directory holding it; a GGUF file; or the first of a split
 * GGUF set (NAME-00001-of-00003.gguf; its split.* keys name the rest). A directory holding one checkpoint
 * opens it (an index first, then one safetensors file, one split set, one GGUF file). One table covers
 * every shard, and a load reads the shards as one stream. Reads only the headers (up to the format's
 * limit: 100 MB for safetensors and an index, 256 MiB for GGUF) with pread; keeps the files open and
 * remembers their sizes and mtimes so a load can tell one changed. Waits for the reads; holds no lock.
 * Bad input: see the statuses above; RIG_NOT_FOUND where the file or a shard does not exist;
 * RIG_INVALID_ARGUMENT naming the file for a tensor in two shards, an index naming a tensor its shard
 * does not hold, a shard holding a tensor the index does not name, a split set out of order. */
RIG_API rig_status rig_load_open(const char *RIG_NONNULL path, rig_load_format format,
                                 rig_load_file *RIG_NONNULL out);

/* A byte range of a raw file, loaded as a U8 tensor of rank 1. */
typedef struct rig_load_range {
  const char *name;    /* copied; UTF-8, unique among the ranges */
  uint64_t offset, length;
} rig_load_range;

/* Opens any file with the given ranges as its tensors. Ranges must lie inside the file and not overlap
 * (RIG_INVALID_ARGUMENT naming them); `ranges` may be null only when count is 0. Waits for nothing but
 * open and fstat; holds no lock. */
RIG_API rig_status rig_load_open_raw(const char *RIG_NONNULL path, const rig_load_range *RIG_NULLABLE ranges,
                                     size_t count, rig_load_file *RIG_NONNULL out);

/* The number of tensors. Indices run over a safetensors file's tensors in name order (bytes compared), over
 * a GGUF file's and rig_load_open_raw's ranges in their own order. Pure read of the immutable table; waits
 * for nothing. */
RIG_API rig_status rig_load_tensor_count(rig_load_file RIG_NONNULL file, size_t *RIG_NONNULL count);
/* Tensor `index`'s description (info->size set by the caller; RIG_INVALID_ARGUMENT for an index past the
 * count). The strings it points to live as long as the file handle. Pure read; waits for nothing. */
RIG_API rig_status rig_load_tensor_get(rig_load_file RIG_NONNULL file, size_t index,
                                       rig_load_tensor *RIG_NONNULL info);
/* The index of the tensor called `name` (exact bytes); RIG_NOT_FOUND if none. Pure read; waits for
 * nothing. */
RIG_API rig_status rig_load_find(rig_load_file RIG_NONNULL file, const char *RIG_NONNULL name,
                                 size_t *RIG_NONNULL index);
/* The file's format (never AUTO: what AUTO found). Pure read; waits for nothing. */
RIG_API rig_status rig_load_file_format(rig_load_file RIG_NONNULL file, rig_load_format *RIG_NONNULL format);

/* The number of files the checkpoint reads (1 for a single file; a sharded checkpoint's shards in name
 * order, a split GGUF set's in split order). Pure read; waits for nothing. RIG_INVALID_HANDLE for a released
 * or forged file, RIG_INVALID_ARGUMENT for a null count. */
RIG_API rig_status rig_load_shard_count(rig_load_file RIG_NONNULL file, size_t *RIG_NONNULL count);
/* Shard `index`'s path (valid while the file handle lives) and byte size as opened. RIG_INVALID_ARGUMENT
 * for an index past the count. Either output may be null. Pure read; waits for nothing. */
RIG_API rig_status rig_load_shard_get(rig_load_file RIG_NONNULL file, size_t index,
                                      const char *RIG_NULLABLE *RIG_NULLABLE path, uint64_t *RIG_NULLABLE bytes);

/* The number of the file's metadata entries: safetensors' __metadata__ strings (by key); a sharded
 * checkpoint's index "metadata" (non-string values as JSON), then its first shard's keys not already
 * there; GGUF's key/values in file order (a split set's first file's). Pure read; waits for nothing.
 * RIG_INVALID_HANDLE for a released or forged file, RIG_INVALID_ARGUMENT for a null count. */
RIG_API rig_status rig_load_metadata_count(rig_load_file RIG_NONNULL file, size_t *RIG_NONNULL count);
/* Entry `index`'s key and value as UTF-8 text, NUL-terminated, valid while the file handle lives: GGUF
 * numbers in decimal, booleans as true/false, strings as they are (a GGUF string may hold any bytes), an
 * array of at most 64 numbers or strings as JSON, a longer or nested one as "array of N TYPE".
 * RIG_INVALID_ARGUMENT for an index past the count. Either output may be null. Pure read; waits for
 * nothing. */
RIG_API rig_status rig_load_metadata_get(rig_load_file RIG_NONNULL file, size_t index,
                                         const char *RIG_NULLABLE *RIG_NULLABLE key,
                                         const char *RIG_NULLABLE *RIG_NULLABLE value);

/* Keeps the whole file mapped read-only and registered with `device`'s driver until the file handle is
 * released and every load of it ended: later loads of this file onto this device (path AUTO or
 * REGISTERED, every placement device kept) copy straight from that registration, with nothing to
 * register, stage or probe: a reload at the link's rate. The file's pages stay locked in host memory
 * meanwhile. A second call for the same device does nothing. RIG_UNSUPPORTED (naming the verdict) where
 * the device's verdict is not Usable; the static verdict, then the cached probe, decide as for a
 * registered load. RIG_INVALID_HANDLE for a released file or device, RIG_INVALID_ARGUMENT for an empty
 * file, RIG_DRIVER where mmap fails, the borrow's status (RIG_UNMAPPABLE ...) where the driver refuses to
 * register; rig_last_error says why. Loads of the file onto the device then take their CUDA and HIP tensors
 * from the device's reuse pool, as loads through a kept staging pool do (rig_load_pool_create): memory the
 * device keeps when a load's tensors are freed, so a reload's copies land in memory written before (at 0.98
 * of the link, where memory the driver gave again after a free took them at 0.89: bench/README.md).
 * Waits for the probe and the driver's registration (about 0.1 s per 4 GiB on an H200), holding the
 * file's own lock, never a lock of the engine's. */
RIG_API rig_status rig_load_file_keep_registered(rig_load_file RIG_NONNULL file, rig_device RIG_NONNULL device);

/* Releases the handle. Loads still running keep the file open until they end. Waits for nothing; holds
 * no lock but the handle table's, briefly. The registrations kept (rig_load_file_keep_registered) go with
 * the file, once the copies that read them are reached. */
RIG_API rig_status rig_load_file_release(rig_load_file RIG_NONNULL file);

/* ---------------------------------------------------------------------------------------------------- */
/* Placement: which tensor goes to which devices                                                         */

typedef enum rig_load_rule {
  RIG_LOAD_RULE_EACH = 0,     /* every tensor on every device (read once, copied device to device) */
  RIG_LOAD_RULE_BY_LAYER = 1, /* a name's first ".N." number is its layer; layers split into
                                 device_count contiguous blocks; tensors without a layer on devices[0] */
  RIG_LOAD_RULE_MASKS = 2,    /* masks[i]: bit d places selected tensor i on devices[d] */
  RIG_LOAD_RULE_MAX_ENUM = 0x7fffffff
} rig_load_rule;

/* Tensor-parallel slices: a device may hold a slice of a tensor, [start, end) along one dimension (rows:
 * dim 0; columns: the last), as a rank of a tensor-parallel group does. The slice's buffer holds its elements
 * densely in row-major order: its shape is the tensor's with shape[dim] = end - start. It is read from the
 * file once, never the bytes outside it (but for the pages around it that O_DIRECT reads and windows map,
 * as around a tensor): a slice along dim 0 (or one whose outer dimensions are all 1) is
 * one range of the file; a slice along a later dim is one range per index of the dims before it, gathered
 * into a staging chunk and copied once (such a load takes the staged path: docs/load.md). Each slice has
 * stamps of its own, as a tensor does. A GGUF block-quantized tensor (RIG_DTYPE_GGML) is sliced along its
 * last dim (its rows' elements) only at whole blocks. */

/* The rule form: every selected tensor whose name matches `pattern` is split along `dim` into
 * device_count parts, part k on placement device k. Parts are equal where the dim divides; where it does
 * not, the first (shape[dim] % device_count) parts are one longer, as numpy.array_split and
 * torch.tensor_split cut (part k starts at k * q + min(k, r) for q, r = shape[dim] / device_count and
 * % device_count). A dim shorter than the device count, a dim past the tensor's rank, or a quantized part
 * that does not fall on whole blocks is refused with RIG_INVALID_ARGUMENT naming the tensor. */
typedef struct rig_load_split {
  const char *pattern; /* a glob over the whole name, as fnmatch(3) with no flags: '*' and '?' match any
                          characters ('.' included), [...] a set; borrowed for the call */
  uint32_t dim;
} rig_load_split;

/* The per-tensor form: tensor `tensor` (the file's index of a selected tensor, as rig_load_buffer takes)
 * gets [start, end) along `dim` on placement device `device`. A tensor named by any slice is placed by its
 * slices alone (on the devices they name), neither by a split nor by the rule. Slices of one tensor may
 * overlap (each is read for its own device) and may use different dims; two for one tensor and device are
 * refused. Also what rig_load_slice_get answers. */
typedef struct rig_load_slice {
  size_t tensor;      /* the file's index */
  size_t device;      /* a placement position, below device_count */
  uint32_t dim;       /* below the tensor's rank */
  uint64_t start, end; /* start < end <= shape[dim] */
} rig_load_slice;

typedef struct rig_load_placement {
  size_t size;               /* sizeof(rig_load_placement); a caller built before `splits` passes the
                                smaller size and slices nothing */
  const rig_device *devices; /* 1..64 distinct devices; the handles are borrowed for the call */
  size_t device_count;
  rig_load_rule rule;        /* places the tensors no slice and no split names */
  const uint64_t *masks;     /* RULE_MASKS: one mask per selected tensor (its position in the selection),
                                non-zero for every tensor the rule places; nullable otherwise */
  const rig_load_split *splits; /* nullable: split_count rules, the first whose pattern matches applies */
  size_t split_count;
  const rig_load_slice *slices; /* nullable: slice_count per-tensor slices, before any split */
  size_t slice_count;
} rig_load_placement;

/* ---------------------------------------------------------------------------------------------------- */
/* Options                                                                                               */

typedef enum rig_load_path {
  RIG_LOAD_PATH_AUTO = 0,       /* direct where the verdict is Not_needed, else staged (docs/load.md) */
  RIG_LOAD_PATH_STAGED = 1,     /* pinned chunks filled by threads with pread, copied by submits */
  RIG_LOAD_PATH_REGISTERED = 2, /* a read-only MAP_SHARED mapping registered in windows: only where the
                                   device's static verdict and cached probe say Usable */
  RIG_LOAD_PATH_DIRECT = 3,     /* the device reads the mapping itself (verdict Not_needed: memory devices,
                                   GPUs that read pageable memory through the host's page tables) */
  RIG_LOAD_PATH_MAX_ENUM = 0x7fffffff
} rig_load_path;

typedef enum rig_load_io {
  RIG_LOAD_IO_AUTO = 0,     /* O_DIRECT when mincore finds under half of the file resident, else pread */
  RIG_LOAD_IO_BUFFERED = 1, /* pread through the page cache */
  RIG_LOAD_IO_DIRECT = 2,   /* pread with O_DIRECT (falls back to buffered where the file system refuses) */
  RIG_LOAD_IO_MAX_ENUM = 0x7fffffff
} rig_load_io;

/* Called from a load's threads, one call at a time (the load's progress lock is held during the call),
 * after each chunk is submitted. Must not call rig_load_* on the same load; should return quickly (the
 * load's next chunk waits for it). Never called for a load whose rig_load_start failed. */
/* bytes_done never exceeds bytes_total (the selected tensors' bytes). */
typedef void (*rig_load_progress_fn)(void *user, uint64_t bytes_done, uint64_t bytes_total);

typedef struct rig_load_options {
  size_t size;              /* sizeof(rig_load_options) */
  rig_load_path path;
  rig_load_io io;
  size_t staging_bytes;     /* pinned staging for the load's own pools, all devices together;
                               0: RIG_LOAD_DEFAULT_STAGING_BYTES (64 MiB). Made in pieces: the first
                               before rig_load_start returns, the others while the load reads (one the
                               driver refuses leaves the load less staging, not a failure) */
  size_t chunk_bytes;       /* 0: RIG_LOAD_DEFAULT_CHUNK_BYTES (4 MiB); rounded up to 64 KiB */
  size_t window_bytes;      /* registered and direct paths' window; 0: 256 MiB; rounded up to 64 KiB */
  uint32_t threads;         /* reader threads of the staged path (one more thread submits the copies);
                               0: min(RIG_LOAD_DEFAULT_THREADS_MAX, 3/4 of the cores), at least 1 */
  int verify;               /* 1: read every copied range back from the device and compare its XXH3
                               with that of an independent pread of the file (slow: for checking) */
  rig_load_progress_fn progress; /* nullable */
  void *progress_user;
  const volatile int *cancel; /* nullable: the load stops with RIG_INTERRUPTED once *cancel != 0; it is
                                 read from the load's threads with a relaxed atomic load, so set it with
                                 an atomic store (C11 atomic_store on a cast, __atomic_store_n) from any
                                 thread, or from a signal handler */
  const rig_load_pool *pools; /* nullable: pools to stage through (one per device at most); devices with
                                 none get a pool made and released by the load */
  size_t pool_count;
  size_t arena_bytes;       /* each device's tensors are parts of device allocations of at most this many
                               bytes, laid out in file order (a tensor larger has one of its own, so 1 gives
                               every tensor its own and its memory back alone); an allocation's memory
                               returns once every tensor in it is released; one past 2 MiB is allocated in
                               whole 2 MiB pages. 0: RIG_LOAD_DEFAULT_ARENA_BYTES (1 GiB); a caller built
                               before this field gets the default */
} rig_load_options;

/* A pool of `bytes` of pinned staging in chunks of chunk_bytes (0: RIG_LOAD_DEFAULT_CHUNK_BYTES, rounded up to 64 KiB) for
 * `device`, kept across loads. Where the device borrows host memory (CUDA, HIP, memory devices) the pool
 * is ordinary memory registered with the driver in pieces (a quarter of the pool, at most 16 MiB each);
 * elsewhere (Vulkan) each chunk is a rig_buffer_create(device, chunk, RIG_MEMORY_PINNED), all made here.
 * Making pinned memory costs (registering runs near the link's rate, the driver's own pinned allocation at
 * 2.4 GB/s on an H200), so a process that loads more than once keeps one. Returns once the first piece is
 * made; a thread of the pool's registers the others, and a load already running takes each piece's chunks
 * as they land (so a first load pays one piece before its reads start, not the pool). A piece the driver
 * refuses ends that growth: the pool stays smaller, which rig_load_stats' staging_bytes shows. Loads
 * through it also take their CUDA and HIP tensors from a pool of the device's that keeps what rig frees
 * (docs/load.md; RIG_REUSE_POOL=0 turns it off), given back when an allocation on the device would run out
 * and when the device is released: a later load's copies then run at the link's rate; that pool is made
 * here (a first allocation, given back), not by the first load. Used by one load at a time (RIG_BUSY
 * otherwise). Waits for the first piece's registration or allocations; holds no lock of rig's but the
 * range table's while it does. */
RIG_API rig_status rig_load_pool_create(rig_device RIG_NONNULL device, size_t bytes, size_t chunk_bytes,
                                        rig_load_pool *RIG_NONNULL out);
/* Releases the pool (its memory returns once the copies reading it are reached: rule 6, no wait here).
 * RIG_BUSY while a load uses it. Waits only for a piece its thread is registering, if one is (the pieces
 * after it are not made); holds no lock but the handle table's, briefly. */
RIG_API rig_status rig_load_pool_release(rig_load_pool RIG_NONNULL pool);

/* ---------------------------------------------------------------------------------------------------- */
/* Loads                                                                                                 */

/* Starts loading `tensors` (indices into the file; null: all of them, tensor_count ignored) onto the
 * placement's devices and returns at once with the running load. Checks everything it can first
 * (indices, placement, options, the path against the verdict: an explicit REGISTERED on a device whose
 * verdict is not Usable answers RIG_UNSUPPORTED naming the verdict; DIRECT needs Not_needed likewise),
 * probing at most once per file system and device (docs/load.md: the cache). Threads then read the file
 * and submit the copies. `options` null: all defaults. Waits for the static verdicts and the probe where
 * it runs; holds no lock of rig's while it does (the cache's lock only around look-up and store). */
RIG_API rig_status rig_load_start(rig_load_file RIG_NONNULL file, const size_t *RIG_NULLABLE tensors,
                                  size_t tensor_count, const rig_load_placement *RIG_NONNULL placement,
                                  const rig_load_options *RIG_NULLABLE options, rig_load *RIG_NONNULL out);

/* A new buffer handle of selected tensor `index` (an index into the file) on placement device `device`
 * (its position in placement->devices), of exactly the tensor's length, or of its slice's where the
 * placement slices it (rig_load_slice_get says which part). Waits on the host (no lock held)
 * until every copy into it is submitted, and verified where asked; its stamps then carry them, so work
 * on it follows them and only them. Once the load failed or was cancelled it answers that status for
 * every tensor: nothing half-loaded is handed out (buffers given before stay valid and complete).
 * RIG_INVALID_ARGUMENT for a tensor not selected or a device it is not placed on. A load makes each
 * device's tensors as parts of a few device allocations (options' arena_bytes, 1 GiB by default; a larger
 * tensor has one of its own; docs/load.md says why): each tensor still has stamps of its own, so work on
 * it waits for nothing of the others, but an allocation's memory returns to the driver only once every
 * tensor in it is released, and rig_buffer_export_fd refuses a tensor that shares one. Loaded through a
 * staging pool the caller keeps for the device (rig_load_pool_create), or from a file kept registered on
 * it (rig_load_file_keep_registered), a CUDA or HIP tensor's memory comes from the device's reuse pool (docs/load.md) and has no interprocess handle (rig_buffer_export_ipc
 * answers RIG_UNSUPPORTED): copy it into a buffer of rig_buffer_create to share it. */
RIG_API rig_status rig_load_buffer(rig_load RIG_NONNULL load, size_t index, size_t device,
                                   rig_buffer *RIG_NONNULL out);

/* Which part of tensor `index` (the file's index) placement device `device` holds, in out: its tensor and
 * device, and the slice as rig_load_slice says; a tensor loaded whole answers dim 0 and [0, shape[0]) (a
 * scalar [0, 1)), so the part's shape is always the tensor's with shape[dim] = end - start and its length
 * rig_load_buffer's. RIG_INVALID_ARGUMENT for a tensor not selected or a device it is not placed on, as
 * rig_load_buffer, or a null out; RIG_INVALID_HANDLE for a released or forged load. Pure read of the load's
 * plan, fixed at rig_load_start; waits for nothing. */
RIG_API rig_status rig_load_slice_get(rig_load RIG_NONNULL load, size_t index, size_t device,
                                      rig_load_slice *RIG_NONNULL out);

/* Waits (on the host, no lock held) until the load ends and answers its status: RIG_OK once every copy
 * is submitted (and verified where asked; the devices may still be copying: the stamps order that).
 * Does not wait for the devices: rig_device_wait on each, or a submit reading the buffers, does. A pool
 * given in options is free for the next load once this returns; staging the load made for itself is
 * released by its thread after, and gone once rig_load_release returns. */
RIG_API rig_status rig_load_wait(rig_load RIG_NONNULL load);

/* What a finished load measured. */
typedef struct rig_load_stats {
  size_t size;                 /* sizeof(rig_load_stats) */
  rig_load_path path;          /* the path taken (for the first device) */
  const char *why;             /* why that path, in words; valid while the load handle lives */
  int direct_io;               /* 1 if reads used O_DIRECT */
  uint64_t bytes_total;        /* bytes of the selected tensors */
  uint64_t bytes_read;         /* bytes read from the file (once each: a tensor on several devices is
                                  copied device to device, a slice reads its own bytes only; the
                                  registered and direct paths count the whole pages of their windows) */
  uint64_t bytes_copied;       /* bytes copied into devices, peer copies included */
  double seconds;              /* rig_load_start to the last submit (and verification) */
  double first_tensor_seconds; /* rig_load_start to the first tensor handed over */
  size_t staging_bytes;        /* pinned staging used (pools made by the load and given to it) */
  /* Where the load's threads spent their time, in seconds summed over its threads (so with 16 readers
   * up to 16 per second of load): for telling a slow disk from a slow link or a busy allocator. */
  double read_seconds;         /* reading the file into staging (pread or O_DIRECT); 0 off the staged path */
  double staging_wait_seconds; /* waiting for a staging chunk (free, and its last copy out reached) */
  double alloc_seconds;        /* making the tensors' device buffers */
  double submit_seconds;       /* submitting the copies: their views, runs and rig_submit (device
                                  buffers not included) */
} rig_load_stats;

/* Fills `stats` (stats->size set by the caller; a size that ends at staging_bytes, from before the
 * phases were added, gets the fields up to there) for a load that ended; RIG_BUSY while it runs. Pure
 * read under the load's lock, which no wait holds; waits for nothing. */
RIG_API rig_status rig_load_get_stats(rig_load RIG_NONNULL load, rig_load_stats *RIG_NONNULL stats);

/* Releases the load: cancels it if running, waits (no lock held) for its threads, releases every buffer
 * not handed out and the pools it made (their memory returns once the copies reading it are reached).
 * Buffers handed out stay the caller's. */
RIG_API rig_status rig_load_release(rig_load RIG_NONNULL load);

/* The name of a path ("auto", "staged", "registered", "direct"), a static string; "unknown" otherwise.
 * Pure; waits for nothing. */
RIG_API const char *rig_load_path_name(rig_load_path path);

RIG_NULLABILITY_END

#ifdef __cplusplus
}
#endif

#endif /* RIG_LOAD_H */
