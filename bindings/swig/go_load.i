/* go_load.i: the loader (rig_load.h) in the Go raw layer; included by rig.i after rig.h, Go only.
 *
 * The calls that take or give plain values are wrapped as they are (handles as uintptr, out-pointers as
 * one-element slices: the format, a shard's path and bytes, a metadata entry's key and value). The calls built on structs go through the rig_go_load_* helpers below, which take
 * and give slices: a tensor's description, and start's placement (default options: the Go layer offers
 * the placement rules; options, pools, stats, raw ranges, slices and splits are not bound yet). */

%{
#include <rig_load.h>
%}

%ignore rig_load_open_raw;
%ignore rig_load_tensor_get;
%ignore rig_load_start;
%ignore rig_load_get_stats;
%ignore rig_load_range;
%ignore rig_load_tensor;
%ignore rig_load_placement;
%ignore rig_load_options;
%ignore rig_load_stats;
/* Slices and splits are not bound in Go yet either. Wrapped as they are, rig_load_split's borrowed pattern
 * would get SWIG's setter, which copies the string and never frees it (SWIG's warning 451). */
%ignore rig_load_split;
%ignore rig_load_slice;
%ignore rig_load_slice_get;

RIG_GO_HANDLE(rig_load_file)
RIG_GO_HANDLE(rig_load)
RIG_GO_HANDLE(rig_load_pool)
RIG_GO_OUT(rig_load_file, uintptr, out)
RIG_GO_OUT(rig_load, uintptr, out)
RIG_GO_OUT(rig_load_pool, uintptr, out)
RIG_GO_OUT(size_t, uint64, count)
RIG_GO_OUT(size_t, uint64, index)
RIG_GO_OUT(rig_load_format, int32, format)
RIG_GO_OUT(const char *, unsafe.Pointer, path)
RIG_GO_OUT(const char *, unsafe.Pointer, key)
RIG_GO_OUT(const char *, unsafe.Pointer, value)
RIG_GO_OUT(uint64_t, uint64, bytes)

%typemap(gotype) (const uintptr_t *devices, size_t device_count) "[]uintptr"
%typemap(in) (const uintptr_t *devices, size_t device_count) {
  $1 = ($1_ltype)$input.array;
  $2 = (size_t)$input.len;
}

%inline %{
/* Tensor `index` of `file`: strings[0..1] = name, dtype_name (valid while the file lives); numbers (14
 * entries) = dtype, ggml_type, rank, offset, length, shape[0..RIG_LOAD_MAX_DIMS), shard. */
static rig_status rig_go_load_tensor(rig_load_file file, size_t index, const char **strings, int64_t *numbers) {
  rig_load_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  rig_status status = rig_load_tensor_get(file, index, &t);
  if (status != RIG_OK) return status;
  strings[0] = t.name;
  strings[1] = t.dtype_name;
  numbers[0] = t.dtype;
  numbers[1] = t.ggml_type;
  numbers[2] = t.rank;
  numbers[3] = (int64_t)t.offset;
  numbers[4] = (int64_t)t.length;
  for (int i = 0; i < RIG_LOAD_MAX_DIMS; ++i) numbers[5 + i] = (int64_t)t.shape[i];
  numbers[5 + RIG_LOAD_MAX_DIMS] = (int64_t)t.shard;
  return RIG_OK;
}

/* rig_load_start of every tensor onto `devices` by `rule` (rig_load_rule), default options. */
static rig_status rig_go_load_start(rig_load_file file, const uintptr_t *devices, size_t device_count, int rule,
                                    rig_load *out) {
  rig_load_placement placement;
  memset(&placement, 0, sizeof placement);
  placement.size = sizeof placement;
  placement.devices = (const rig_device *)devices;
  placement.device_count = device_count;
  placement.rule = (rig_load_rule)rule;
  return rig_load_start(file, NULL, 0, &placement, NULL, out);
}
%}

%include <rig_load.h>
