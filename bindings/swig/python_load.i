/* python_load.i: the loader (rig_load.h) in the Python layer; included by rig.i after rig.h, Python only.
 *
 * The raw calls that take or give plain values are wrapped as they are (handles in and out, statuses
 * raised). The calls built on structs (open_raw's ranges, a tensor's description, start's placement with
 * its splits and slices and its options, a part's slice, the stats) go through the rig_py_load_* helpers below, which take and give Python tuples,
 * lists and dicts. A load's progress callback and its cancel flag live in a rig_py_load_ctx, owned by a
 * capsule the Python Load keeps until rig_load_release has returned (the load's threads are gone then). */

%{
#include <rig_load.h>
%}

%ignore rig_load_open_raw;
%ignore rig_load_tensor_get;
%ignore rig_load_shard_get;
%ignore rig_load_start;
%ignore rig_load_get_stats;
%ignore rig_load_range;
%ignore rig_load_tensor;
%ignore rig_load_placement;
%ignore rig_load_options;
%ignore rig_load_stats;
%ignore rig_load_split;
%ignore rig_load_slice;
%ignore rig_load_slice_get;

RIG_PY_OUT_HANDLE(rig_load_file)
RIG_PY_OUT_HANDLE(rig_load)
RIG_PY_OUT_HANDLE(rig_load_pool)
%typemap(in, numinputs=0) size_t *count (size_t temp = 0), size_t *index (size_t temp = 0) "$1 = &temp;";
%typemap(argout) size_t *count, size_t *index {
  $result = SWIG_Python_AppendOutput($result, PyLong_FromSize_t(*$1));
}
%typemap(in, numinputs=0) rig_load_format *format (rig_load_format temp = 0) "$1 = &temp;";
%typemap(argout) rig_load_format *format { $result = SWIG_Python_AppendOutput($result, PyLong_FromLong(*$1)); }

%{
/* What a running load's threads reach in Python: the progress callable and the cancel flag. The first
 * exception the callable raises cancels the load and is raised by the next rig_py_load_wait. */
typedef struct rig_py_load_ctx {
  volatile int cancel;
  PyObject *progress; /* owned; NULL for none */
  rig_py_saved saved;
} rig_py_load_ctx;

static void rig_py_load_ctx_free(PyObject *capsule) {
  rig_py_load_ctx *ctx = (rig_py_load_ctx *)PyCapsule_GetPointer(capsule, "rig.load");
  if (!ctx) return;
  Py_XDECREF(ctx->progress);
  Py_XDECREF(ctx->saved.type);
  Py_XDECREF(ctx->saved.value);
  Py_XDECREF(ctx->saved.traceback);
  free(ctx);
}

/* rig calls this on a load thread, with the load's progress lock held: take the GIL, call, and on an
 * exception keep it and cancel (the next chunk sees the flag). */
static void rig_py_load_progress_tramp(void *user, uint64_t done, uint64_t total) {
  rig_py_load_ctx *ctx = (rig_py_load_ctx *)user;
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *r = PyObject_CallFunction(ctx->progress, "KK", (unsigned long long)done, (unsigned long long)total);
  if (!r) {
    rig_py_save(&ctx->saved);
    __atomic_store_n(&ctx->cancel, 1, __ATOMIC_RELAXED); /* rig_load.h: read by the load's threads */
  }
  Py_XDECREF(r);
  PyGILState_Release(gil);
}

/* A size_t from a Python int; -1 with an exception set otherwise. */
static int rig_py_size(PyObject *o, size_t *out) {
  size_t v = PyLong_AsSize_t(o);
  if (v == (size_t)-1 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

/* A handle of SWIG type `type` from a Python object (rig.Device, rig.Pool ... or the raw handle). */
static int rig_py_handle(PyObject *o, swig_type_info *type, void **out) {
  PyObject *raw = PyObject_HasAttrString(o, "_raw") ? PyObject_GetAttrString(o, "_raw") : (Py_INCREF(o), o);
  if (!raw) return -1;
  int res = SWIG_ConvertPtr(raw, out, type, 0);
  Py_DECREF(raw);
  if (!SWIG_IsOK(res)) {
    PyErr_Format(PyExc_TypeError, "expected a %s, not %R", type->str, o);
    return -1;
  }
  return 0;
}
%}

/* rig_py_load_ctx_new makes a capsule: Python objects need the GIL (CPython 3.12 crashes without it). */
%nothread rig_py_load_ctx_new;
%nothread rig_py_load_open_raw;
%nothread rig_py_load_tensor;
%nothread rig_py_load_tensors;
%nothread rig_py_load_shard;
%nothread rig_py_load_start;
%nothread rig_py_load_slice;
%nothread rig_py_load_wait;
%nothread rig_py_load_stats;
%nothread rig_py_load_cancel;

%inline %{
/* rig_load_open_raw over a list of (name, offset, length). */
static PyObject *rig_py_load_open_raw(const char *path, PyObject *ranges) {
  PyObject *seq = PySequence_Fast(ranges, "ranges must be a sequence of (name, offset, length)");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  rig_load_range *r = (rig_load_range *)calloc(n ? (size_t)n : 1, sizeof *r);
  PyObject *result = NULL;
  if (!r) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    unsigned long long offset, length;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "sKK", &r[i].name, &offset, &length)) goto done;
    r[i].offset = offset;
    r[i].length = length;
  }
  {
    rig_load_file file = NULL;
    rig_status status;
    Py_BEGIN_ALLOW_THREADS
    status = rig_load_open_raw(path, r, (size_t)n, &file);
    Py_END_ALLOW_THREADS
    if (status != RIG_OK) rig_py_raise(status);
    else result = SWIG_NewPointerObj((void *)file, SWIGTYPE_p_rig_load_file_h, 0);
  }
done:
  free(r);
  Py_DECREF(seq);
  return result;
}

/* Tensor `index` as (name, dtype name, dtype, ggml type, shape tuple, offset, length, shard). */
static PyObject *rig_py_load_tensor(rig_load_file file, size_t index) {
  rig_load_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  rig_status status = rig_load_tensor_get(file, index, &t);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  PyObject *shape = PyTuple_New(t.rank);
  if (!shape) return NULL;
  for (uint32_t d = 0; d < t.rank; ++d)
    PyTuple_SET_ITEM(shape, d, PyLong_FromUnsignedLongLong((unsigned long long)t.shape[d]));
  return Py_BuildValue("(ssiINKKn)", t.name, t.dtype_name, (int)t.dtype, (unsigned)t.ggml_type, shape,
                       (unsigned long long)t.offset, (unsigned long long)t.length, (Py_ssize_t)t.shard);
}

/* Every tensor of `file` as rig_py_load_tensor's tuples, in one call: a checkpoint of a thousand tensors
 * opened in Python paid a wrapped call per tensor, about a millisecond in all (bench/README.md, Python's rows). */
static PyObject *rig_py_load_tensors(rig_load_file file) {
  size_t count = 0;
  rig_status status = rig_load_tensor_count(file, &count);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  PyObject *list = PyList_New((Py_ssize_t)count);
  if (!list) return NULL;
  for (size_t i = 0; i < count; ++i) {
    PyObject *one = rig_py_load_tensor(file, i);
    if (!one) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, one);
  }
  return list;
}

/* Shard `index` of `file` as (path, bytes): the path decoded as os.fsdecode would (it lives as long as
 * the file handle: copied now). */
static PyObject *rig_py_load_shard(rig_load_file file, size_t index) {
  const char *path = NULL;
  uint64_t bytes = 0;
  rig_status status = rig_load_shard_get(file, index, &path, &bytes);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  PyObject *text = PyUnicode_DecodeFSDefault(path ? path : "");
  if (!text) return NULL;
  return Py_BuildValue("(NK)", text, (unsigned long long)bytes);
}

/* A new load context (the capsule the Python Load keeps): progress is a callable or None. */
static PyObject *rig_py_load_ctx_new(PyObject *progress) {
  if (progress != Py_None && !PyCallable_Check(progress)) {
    PyErr_SetString(PyExc_TypeError, "progress must be callable(bytes_done, bytes_total) or None");
    return NULL;
  }
  rig_py_load_ctx *ctx = (rig_py_load_ctx *)calloc(1, sizeof *ctx);
  if (!ctx) return PyErr_NoMemory();
  PyObject *capsule = PyCapsule_New(ctx, "rig.load", rig_py_load_ctx_free);
  if (!capsule) {
    free(ctx);
    return NULL;
  }
  if (progress != Py_None) {
    Py_INCREF(progress);
    ctx->progress = progress;
  }
  return capsule;
}

/* rig_load_start. tensors: a list of indices or None (all); devices: a list of rig.Device; rule: a
 * rig_load_rule; masks: a list of ints (RULE_MASKS) or None; pools: a list of rig.Pool; the sizes, path,
 * io, threads, verify and arena_bytes as rig_load_options has them; ctx: rig_py_load_ctx_new's capsule. */
static PyObject *rig_py_load_start(rig_load_file file, PyObject *tensors, PyObject *devices, int rule,
                                   PyObject *masks, int path, int io, size_t staging_bytes,
                                   size_t chunk_bytes, size_t window_bytes, unsigned threads, int verify,
                                   size_t arena_bytes, PyObject *pools, PyObject *splits, PyObject *slices,
                                   PyObject *ctx_capsule) {
  rig_py_load_ctx *ctx = (rig_py_load_ctx *)PyCapsule_GetPointer(ctx_capsule, "rig.load");
  if (!ctx) return NULL;
  PyObject *result = NULL, *tseq = NULL, *dseq = NULL, *mseq = NULL, *pseq = NULL, *sseq = NULL, *cseq = NULL;
  size_t *index = NULL;
  rig_device *dev = NULL;
  uint64_t *mask = NULL;
  rig_load_pool *pool = NULL;
  rig_load_split *split = NULL;
  rig_load_slice *slice = NULL;
  Py_ssize_t nt = 0, nd = 0, nm = 0, np = 0, ns = 0, nc = 0;
  if (tensors != Py_None) {
    if (!(tseq = PySequence_Fast(tensors, "tensors must be a sequence of indices"))) goto done;
    nt = PySequence_Fast_GET_SIZE(tseq);
    if (!(index = (size_t *)calloc(nt ? (size_t)nt : 1, sizeof *index))) goto nomem;
    for (Py_ssize_t i = 0; i < nt; ++i)
      if (rig_py_size(PySequence_Fast_GET_ITEM(tseq, i), &index[i]) != 0) goto done;
  }
  if (!(dseq = PySequence_Fast(devices, "devices must be a sequence of rig.Device"))) goto done;
  nd = PySequence_Fast_GET_SIZE(dseq);
  if (!(dev = (rig_device *)calloc(nd ? (size_t)nd : 1, sizeof *dev))) goto nomem;
  for (Py_ssize_t i = 0; i < nd; ++i)
    if (rig_py_handle(PySequence_Fast_GET_ITEM(dseq, i), SWIGTYPE_p_rig_device_h, (void **)&dev[i]) != 0)
      goto done;
  if (masks != Py_None) {
    if (!(mseq = PySequence_Fast(masks, "masks must be a sequence of ints"))) goto done;
    nm = PySequence_Fast_GET_SIZE(mseq);
    if (!(mask = (uint64_t *)calloc(nm ? (size_t)nm : 1, sizeof *mask))) goto nomem;
    for (Py_ssize_t i = 0; i < nm; ++i) {
      mask[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(mseq, i));
      if (PyErr_Occurred()) goto done;
    }
  }
  if (pools != Py_None) {
    if (!(pseq = PySequence_Fast(pools, "pools must be a sequence of rig.Pool"))) goto done;
    np = PySequence_Fast_GET_SIZE(pseq);
    if (!(pool = (rig_load_pool *)calloc(np ? (size_t)np : 1, sizeof *pool))) goto nomem;
    for (Py_ssize_t i = 0; i < np; ++i)
      if (rig_py_handle(PySequence_Fast_GET_ITEM(pseq, i), SWIGTYPE_p_rig_load_pool_h, (void **)&pool[i]) != 0)
        goto done;
  }
  if (splits != Py_None) { /* (pattern, dim) pairs; the patterns are borrowed from the sequence's strs */
    if (!(sseq = PySequence_Fast(splits, "splits must be a sequence of (pattern, dim)"))) goto done;
    ns = PySequence_Fast_GET_SIZE(sseq);
    if (!(split = (rig_load_split *)calloc(ns ? (size_t)ns : 1, sizeof *split))) goto nomem;
    for (Py_ssize_t i = 0; i < ns; ++i)
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(sseq, i), "sI", &split[i].pattern, &split[i].dim)) goto done;
  }
  if (slices != Py_None) { /* (tensor, device, dim, start, end) */
    if (!(cseq = PySequence_Fast(slices, "slices must be a sequence of (tensor, device, dim, start, end)"))) goto done;
    nc = PySequence_Fast_GET_SIZE(cseq);
    if (!(slice = (rig_load_slice *)calloc(nc ? (size_t)nc : 1, sizeof *slice))) goto nomem;
    for (Py_ssize_t i = 0; i < nc; ++i) {
      unsigned long long start, end;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(cseq, i), "nnIKK", (Py_ssize_t *)&slice[i].tensor,
                            (Py_ssize_t *)&slice[i].device, &slice[i].dim, &start, &end))
        goto done;
      slice[i].start = start;
      slice[i].end = end;
    }
  }
  {
    rig_load_placement placement;
    memset(&placement, 0, sizeof placement);
    placement.size = sizeof placement;
    placement.devices = dev;
    placement.device_count = (size_t)nd;
    placement.rule = (rig_load_rule)rule;
    placement.masks = mask;
    placement.splits = split;
    placement.split_count = (size_t)ns;
    placement.slices = slice;
    placement.slice_count = (size_t)nc;
    rig_load_options options;
    memset(&options, 0, sizeof options);
    options.size = sizeof options;
    options.path = (rig_load_path)path;
    options.io = (rig_load_io)io;
    options.staging_bytes = staging_bytes;
    options.chunk_bytes = chunk_bytes;
    options.window_bytes = window_bytes;
    options.threads = threads;
    options.verify = verify;
    options.progress = ctx->progress ? rig_py_load_progress_tramp : NULL;
    options.progress_user = ctx;
    options.cancel = &ctx->cancel;
    options.pools = pool;
    options.pool_count = (size_t)np;
    options.arena_bytes = arena_bytes;
    rig_load load = NULL;
    rig_status status;
    Py_BEGIN_ALLOW_THREADS /* the probe may run here */
    status = rig_load_start(file, tseq ? index : NULL, (size_t)nt, &placement, &options, &load);
    Py_END_ALLOW_THREADS
    if (status != RIG_OK) rig_py_raise(status);
    else result = SWIG_NewPointerObj((void *)load, SWIGTYPE_p_rig_load_h, 0);
  }
  goto done;
nomem:
  PyErr_NoMemory();
done:
  free(index);
  free(dev);
  free(mask);
  free(pool);
  free(split);
  free(slice);
  Py_XDECREF(sseq);
  Py_XDECREF(cseq);
  Py_XDECREF(tseq);
  Py_XDECREF(dseq);
  Py_XDECREF(mseq);
  Py_XDECREF(pseq);
  return result;
}

/* rig_load_slice_get as (dim, start, end). */
static PyObject *rig_py_load_slice(rig_load load, size_t index, size_t device) {
  rig_load_slice s;
  rig_status status = rig_load_slice_get(load, index, device, &s);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  return Py_BuildValue("(IKK)", s.dim, (unsigned long long)s.start, (unsigned long long)s.end);
}

/* rig_load_wait; the progress callable's exception, if it raised one, is raised in place of the
 * RIG_INTERRUPTED it caused. */
static PyObject *rig_py_load_wait(rig_load load, PyObject *ctx_capsule) {
  rig_py_load_ctx *ctx = (rig_py_load_ctx *)PyCapsule_GetPointer(ctx_capsule, "rig.load");
  if (!ctx) return NULL;
  rig_status status;
  Py_BEGIN_ALLOW_THREADS
  status = rig_load_wait(load);
  Py_END_ALLOW_THREADS
  if (rig_py_restore(&ctx->saved)) return NULL;
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  Py_RETURN_NONE;
}

/* Sets the load's cancel flag: its threads stop at the next chunk with RIG_INTERRUPTED. */
static PyObject *rig_py_load_cancel(PyObject *ctx_capsule) {
  rig_py_load_ctx *ctx = (rig_py_load_ctx *)PyCapsule_GetPointer(ctx_capsule, "rig.load");
  if (!ctx) return NULL;
  __atomic_store_n(&ctx->cancel, 1, __ATOMIC_RELAXED);
  Py_RETURN_NONE;
}

/* rig_load_get_stats as a dict. */
static PyObject *rig_py_load_stats(rig_load load) {
  rig_load_stats s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  rig_status status = rig_load_get_stats(load, &s);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  return Py_BuildValue("{s:s,s:s,s:O,s:K,s:K,s:K,s:d,s:d,s:n,s:d,s:d,s:d,s:d}", "path", rig_load_path_name(s.path), "why",
                       s.why ? s.why : "", "direct_io", s.direct_io ? Py_True : Py_False, "bytes_total",
                       (unsigned long long)s.bytes_total, "bytes_read", (unsigned long long)s.bytes_read,
                       "bytes_copied", (unsigned long long)s.bytes_copied, "seconds", s.seconds,
                       "first_tensor_seconds", s.first_tensor_seconds, "staging_bytes",
                       (Py_ssize_t)s.staging_bytes, "read_seconds", s.read_seconds, "staging_wait_seconds",
                       s.staging_wait_seconds, "alloc_seconds", s.alloc_seconds, "submit_seconds", s.submit_seconds);
}
%}

%include <rig_load.h>
