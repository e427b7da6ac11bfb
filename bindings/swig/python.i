/* python.i: the Python layer of rig.i (included only when SWIG generates Python).
 *
 * Built with `swig -python -threads`: every raw call releases the GIL while rig runs (a wait may block),
 * and every trampoline takes it back with PyGILState_Ensure. Helpers that touch Python objects before or
 * after their rig call are marked %nothread and release the GIL themselves around the rig call only. */

%{
/* The base of rig's exceptions (RigError) and, per status, its subclass (Timeout, InvalidArgument ...):
 * the Python layer defines the classes and hands them over once with rig_py_set_errors; until then every
 * status raises the module's own Error. Strong references, kept for the life of the process. */
static PyObject *rig_py_error_type = NULL;
static PyObject *rig_py_error_by_status = NULL; /* dict: int status -> class */

static PyObject *rig_py_error_class(rig_status status) {
  if (rig_py_error_by_status) {
    PyObject *key = PyLong_FromLong((long)status);
    PyObject *cls = key ? PyDict_GetItemWithError(rig_py_error_by_status, key) : NULL;
    Py_XDECREF(key);
    if (cls) return cls;
    PyErr_Clear();
  }
  return rig_py_error_type;
}

/* Raises rig's exception for `status` with this thread's rig_last_error(). Called right after the failed
 * call, on its thread, before any other rig call could replace the message. */
static void rig_py_raise(rig_status status) {
  const char *message = rig_last_error();
  const char *name = rig_status_name(status);
  PyObject *cls = rig_py_error_class(status);
  PyObject *exc = PyObject_CallFunction(cls, "s", (message && *message) ? message : name);
  if (!exc) return;
  PyObject *code = PyLong_FromLong((long)status);
  PyObject *pyname = PyUnicode_FromString(name);
  PyObject *pymessage = PyUnicode_FromString(message ? message : "");
  if (code && pyname && pymessage) {
    PyObject_SetAttrString(exc, "status", code);
    PyObject_SetAttrString(exc, "name", pyname);
    PyObject_SetAttrString(exc, "message", pymessage);
  }
  Py_XDECREF(code);
  Py_XDECREF(pyname);
  Py_XDECREF(pymessage);
  PyErr_SetObject(cls, exc);
  Py_DECREF(exc);
}

/* An exception a callback raised, kept until the rig call that ran the callback returns. */
typedef struct rig_py_saved {
  PyObject *type, *value, *traceback;
} rig_py_saved;

/* Keeps the pending exception in `saved` (the first one wins; later ones are dropped, as a second
 * exception while handling the first would be). Called with the GIL held. */
static void rig_py_save(rig_py_saved *saved) {
  if (!PyErr_Occurred()) return;
  if (saved->type) {
    PyErr_Clear();
    return;
  }
  PyErr_Fetch(&saved->type, &saved->value, &saved->traceback);
}
/* Raises what `saved` holds; 1 if it held something. Called with the GIL held. */
static int rig_py_restore(rig_py_saved *saved) {
  if (!saved->type) return 0;
  PyErr_Restore(saved->type, saved->value, saved->traceback);
  saved->type = saved->value = saved->traceback = NULL;
  return 1;
}

/* A host kernel runs during rig_submit on a memory device, on the submitting thread: its exception is
 * kept per thread and raised by rig_submit's wrapper. On a thread with no submit in progress (a driver's
 * own thread) nobody can receive it: it goes to sys.unraisablehook. */
static __thread rig_py_saved rig_py_kernel_saved;
static __thread int rig_py_submitting;

/* A memoryview over `length` bytes at `data`, valid only during a callback: the trampoline releases it
 * after the callback, so a view kept beyond raises ValueError instead of reading freed memory. */
static PyObject *rig_py_view(const void *data, size_t length, int writable) {
  static char empty;
  return PyMemoryView_FromMemory(data ? (char *)data : &empty, (Py_ssize_t)length,
                                 writable ? PyBUF_WRITE : PyBUF_READ);
}
static void rig_py_view_done(PyObject *view) {
  if (!view) return;
  PyObject *r = PyObject_CallMethod(view, "release", NULL);
  if (!r) PyErr_Clear(); /* a view the callback still exports stays; its bytes are its risk */
  Py_XDECREF(r);
  Py_DECREF(view);
}

/* ---- the buffer protocol on host-addressable buffers ----
 * rig.Buffer derives from this type so that memoryview(buffer), numpy.asarray(buffer) and bytes(buffer)
 * see the buffer's own bytes without a copy. A view is ordered only as of its making (rig_buffer_export
 * waits for every use then; later host accesses through it follow nothing): take it after the work that
 * writes the bytes, as with rig_buffer_export. Memory the host does not address (a GPU's device memory)
 * raises BufferError with rig's message. While views are exported the buffer refuses release()
 * (BufferError), as a bytearray refuses a resize, so a view never outlives the memory it shows. */
typedef struct rig_py_buffer_base {
  PyObject_HEAD
  Py_ssize_t exports; /* views handed out and not yet released; touched only with the GIL held */
} rig_py_buffer_base;

static int rig_py_buffer_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  PyObject *raw = PyObject_GetAttrString(self, "_raw");
  if (!raw) return -1;
  void *handle = NULL;
  int res = SWIG_ConvertPtr(raw, &handle, 0, 0);
  Py_DECREF(raw);
  if (!SWIG_IsOK(res)) {
    PyErr_SetString(PyExc_BufferError, "rig.Buffer has no handle");
    return -1;
  }
  PyObject *ro = PyObject_GetAttrString(self, "_readonly");
  int readonly = ro ? PyObject_IsTrue(ro) : 0;
  Py_XDECREF(ro);
  if (readonly < 0 || PyErr_Occurred()) return -1;
  if (readonly && (flags & PyBUF_WRITABLE)) {
    PyErr_SetString(PyExc_BufferError, "rig.Buffer wraps read-only bytes: no writable view");
    return -1;
  }
  void *data = NULL;
  size_t length = 0;
  rig_status status;
  Py_BEGIN_ALLOW_THREADS /* export waits for every use of the allocation */
  status = rig_buffer_export((rig_buffer)handle, &data);
  if (status == RIG_OK) status = rig_buffer_length((rig_buffer)handle, &length);
  Py_END_ALLOW_THREADS
  if (status != RIG_OK) {
    PyErr_Format(PyExc_BufferError, "%s: %s", rig_status_name(status), rig_last_error());
    return -1;
  }
  static char empty;
  if (PyBuffer_FillInfo(view, self, data ? data : &empty, (Py_ssize_t)length, readonly, flags) != 0) return -1;
  ((rig_py_buffer_base *)self)->exports++;
  return 0;
}
static void rig_py_buffer_releasebuffer(PyObject *self, Py_buffer *view) {
  (void)view;
  ((rig_py_buffer_base *)self)->exports--;
}
static PyObject *rig_py_buffer_exports(PyObject *self, void *closure) {
  (void)closure;
  return PyLong_FromSsize_t(((rig_py_buffer_base *)self)->exports);
}
static PyBufferProcs rig_py_buffer_procs = {rig_py_buffer_getbuffer, rig_py_buffer_releasebuffer};
static PyGetSetDef rig_py_buffer_getset[] = {
  {"_exports", rig_py_buffer_exports, NULL, "views of this buffer not yet released", NULL},
  {NULL, NULL, NULL, NULL, NULL}};
static PyTypeObject rig_py_buffer_base_type = {PyVarObject_HEAD_INIT(NULL, 0) "rig._rig.BufferBase"};

/* ---- wrap: a rig buffer over a Python object's bytes, without a copy ---- */
typedef struct rig_py_wrapped {
  Py_buffer view;
} rig_py_wrapped;

static void rig_py_wrapped_release(void *user) {
  rig_py_wrapped *w = (rig_py_wrapped *)user;
  if (!Py_IsInitialized()) { /* after interpreter shutdown the object went with it: nothing to release */
    free(w);
    return;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  PyBuffer_Release(&w->view);
  PyGILState_Release(gil);
  free(w);
}

/* ---- read / write ---- */
typedef struct rig_py_access_call {
  PyObject *fn;
  rig_py_saved saved;
} rig_py_access_call;

static void rig_py_access_tramp(void *user, void *bytes, size_t length, int writable) {
  rig_py_access_call *call = (rig_py_access_call *)user;
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *view = rig_py_view(bytes, length, writable);
  if (view) {
    PyObject *r = PyObject_CallFunctionObjArgs(call->fn, view, NULL);
    Py_XDECREF(r);
  }
  rig_py_save(&call->saved);
  rig_py_view_done(view);
  PyGILState_Release(gil);
}
static void rig_py_read_tramp(void *user, const void *bytes, size_t length) {
  rig_py_access_tramp(user, (void *)bytes, length, 0);
}
static void rig_py_write_tramp(void *user, void *bytes, size_t length) {
  rig_py_access_tramp(user, bytes, length, 1);
}

/* ---- host kernels ---- */
typedef struct rig_py_kernel {
  PyObject *fn;        /* owned */
  rig_access *access;  /* the submission's slot access, so read-only slots get read-only views */
  size_t slot_count;
} rig_py_kernel;

static void rig_py_kernel_free(PyObject *capsule) {
  rig_py_kernel *k = (rig_py_kernel *)PyCapsule_GetPointer(capsule, "rig.kernel");
  if (!k) return;
  Py_XDECREF(k->fn);
  free(k->access);
  free(k);
}

static void rig_py_kernel_tramp(void *user, const rig_span *slots, size_t slot_count) {
  rig_py_kernel *k = (rig_py_kernel *)user;
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *views = PyList_New((Py_ssize_t)slot_count);
  if (views) {
    int ok = 1;
    for (size_t i = 0; i < slot_count; ++i) {
      int writable = i < k->slot_count && (k->access[i] & RIG_ACCESS_WRITE);
      PyObject *view = rig_py_view(slots[i].data, slots[i].length, writable);
      if (!view) {
        ok = 0;
        break;
      }
      PyList_SET_ITEM(views, (Py_ssize_t)i, view);
    }
    if (ok) {
      PyObject *r = PyObject_CallFunctionObjArgs(k->fn, views, NULL);
      Py_XDECREF(r);
    }
  }
  if (PyErr_Occurred()) {
    if (rig_py_submitting)
      rig_py_save(&rig_py_kernel_saved);
    else
      PyErr_WriteUnraisable(k->fn);
  }
  if (views) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(views); ++i) {
      PyObject *view = PyList_GET_ITEM(views, i);
      if (view) {
        PyObject *r = PyObject_CallMethod(view, "release", NULL);
        if (!r) PyErr_Clear();
        Py_XDECREF(r);
      }
    }
    Py_DECREF(views);
  }
  PyGILState_Release(gil);
}

/* ---- probe ops, log, device facts ---- */
typedef struct rig_py_probe_call {
  PyObject *ops;    /* borrowed: the caller's object, alive during the call */
  PyObject *log;    /* borrowed, may be NULL */
  PyObject *allocs; /* owned dict: address -> (object, capsule releasing its Py_buffer) */
  rig_py_saved saved;
} rig_py_probe_call;

/* A callback's exception as the status rig gets back: the probe returns OUT_OF_MEMORY and INTERRUPTED as
 * its own error (then the binding raises the exception itself); any other failure becomes an Inconclusive
 * verdict, and the exception's text goes to the log so that it is not lost. Called with the GIL held. */
static rig_status rig_py_op_failed(rig_py_probe_call *call, const char *op) {
  rig_status status = RIG_DRIVER;
  if (PyErr_ExceptionMatches(PyExc_MemoryError)) status = RIG_OUT_OF_MEMORY;
  else if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) status = RIG_INTERRUPTED;
  else if (PyErr_ExceptionMatches(rig_py_error_type)) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *code = value ? PyObject_GetAttrString(value, "status") : NULL;
    if (code && PyLong_Check(code)) status = (rig_status)PyLong_AsLong(code);
    if (!code) PyErr_Clear();
    Py_XDECREF(code);
    PyErr_Restore(type, value, tb);
  }
  if (call->log && status != RIG_OUT_OF_MEMORY && status != RIG_INTERRUPTED) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *text = PyUnicode_FromFormat("%s raised %R", op, value ? value : Py_None);
    if (text) {
      PyObject *r = PyObject_CallFunctionObjArgs(call->log, text, NULL);
      if (!r) PyErr_Clear();
      Py_XDECREF(r);
      Py_DECREF(text);
    } else {
      PyErr_Clear();
    }
    PyErr_Restore(type, value, tb);
  }
  if (status == RIG_OK) status = RIG_DRIVER;
  rig_py_save(&call->saved);
  return status;
}

/* Calls ops.<name>(args...) with views over the given ranges; RIG_OK if it returned. */
static rig_status rig_py_op_views(void *user, const char *name, const void *a, int a_writable,
                                  const void *b, int b_writable, size_t length) {
  rig_py_probe_call *call = (rig_py_probe_call *)user;
  PyGILState_STATE gil = PyGILState_Ensure();
  rig_status status = RIG_OK;
  PyObject *va = rig_py_view(a, length, a_writable);
  PyObject *vb = (va && b) ? rig_py_view(b, length, b_writable) : NULL;
  PyObject *r = NULL;
  if (va && (!b || vb)) r = PyObject_CallMethod(call->ops, name, b ? "OO" : "O", va, vb);
  if (!r) status = rig_py_op_failed(call, name);
  Py_XDECREF(r);
  rig_py_view_done(va);
  rig_py_view_done(vb);
  PyGILState_Release(gil);
  return status;
}
static rig_status rig_py_op_register(void *user, void *host, size_t length) {
  return rig_py_op_views(user, "register_host", host, 0, NULL, 0, length);
}
static rig_status rig_py_op_unregister(void *user, void *host, size_t length) {
  return rig_py_op_views(user, "unregister_host", host, 0, NULL, 0, length);
}
static rig_status rig_py_op_round_trip(void *user, const void *host, void *into, size_t length) {
  return rig_py_op_views(user, "round_trip", host, 0, into, 1, length);
}
static rig_status rig_py_op_upload(void *user, const void *host, size_t length) {
  return rig_py_op_views(user, "upload", host, 0, NULL, 0, length);
}

static void rig_py_buffer_capsule_free(PyObject *capsule) {
  Py_buffer *view = (Py_buffer *)PyCapsule_GetPointer(capsule, "rig.host");
  if (!view) return;
  PyBuffer_Release(view);
  free(view);
}

/* alloc_host(length) returns any writable object with the buffer protocol (bytearray, mmap, numpy): its
 * bytes are what rig gets, held (with the object) until free_host. */
static rig_status rig_py_op_alloc(void *user, size_t length, void **host) {
  rig_py_probe_call *call = (rig_py_probe_call *)user;
  PyGILState_STATE gil = PyGILState_Ensure();
  rig_status status = RIG_OK;
  PyObject *obj = PyObject_CallMethod(call->ops, "alloc_host", "n", (Py_ssize_t)length);
  Py_buffer *view = NULL;
  PyObject *capsule = NULL, *key = NULL, *entry = NULL;
  if (!obj) goto failed;
  view = (Py_buffer *)calloc(1, sizeof(Py_buffer));
  if (!view) {
    PyErr_NoMemory();
    goto failed;
  }
  if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) {
    free(view);
    view = NULL;
    goto failed;
  }
  if ((size_t)view->len < length) {
    Py_ssize_t got = view->len;
    PyBuffer_Release(view);
    free(view);
    view = NULL;
    PyErr_Format(PyExc_ValueError, "alloc_host(%zu) returned only %zd bytes", length, got);
    goto failed;
  }
  capsule = PyCapsule_New(view, "rig.host", rig_py_buffer_capsule_free);
  if (!capsule) {
    PyBuffer_Release(view);
    free(view);
    goto failed;
  }
  key = PyLong_FromVoidPtr(view->buf);
  entry = key ? PyTuple_Pack(2, obj, capsule) : NULL;
  if (!entry || PyDict_SetItem(call->allocs, key, entry) != 0) goto failed;
  *host = view->buf;
  goto done;
failed:
  status = rig_py_op_failed(call, "alloc_host");
done:
  Py_XDECREF(entry);
  Py_XDECREF(key);
  Py_XDECREF(capsule);
  Py_XDECREF(obj);
  PyGILState_Release(gil);
  return status;
}

/* free_host(obj) gets back the object alloc_host returned; its buffer is released after the call. */
static rig_status rig_py_op_free(void *user, void *host, size_t length) {
  (void)length;
  rig_py_probe_call *call = (rig_py_probe_call *)user;
  PyGILState_STATE gil = PyGILState_Ensure();
  rig_status status = RIG_OK;
  PyObject *key = PyLong_FromVoidPtr(host);
  PyObject *entry = key ? PyDict_GetItemWithError(call->allocs, key) : NULL;
  if (!entry) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "free_host of memory alloc_host did not give");
    status = rig_py_op_failed(call, "free_host");
  } else {
    Py_INCREF(entry);
    PyObject *r = PyObject_CallMethod(call->ops, "free_host", "O", PyTuple_GET_ITEM(entry, 0));
    if (!r) status = rig_py_op_failed(call, "free_host");
    Py_XDECREF(r);
    if (PyDict_DelItem(call->allocs, key) != 0) PyErr_Clear();
    Py_DECREF(entry);
  }
  Py_XDECREF(key);
  PyGILState_Release(gil);
  return status;
}

/* now_ns() returns an int of nanoseconds; an exception or a bad value reads as 0, which the probe takes
 * as a clock that gave no valid duration (Inconclusive). */
static uint64_t rig_py_op_now(void *user) {
  rig_py_probe_call *call = (rig_py_probe_call *)user;
  PyGILState_STATE gil = PyGILState_Ensure();
  uint64_t ns = 0;
  PyObject *r = PyObject_CallMethod(call->ops, "now_ns", NULL);
  if (r) ns = (uint64_t)PyLong_AsUnsignedLongLong(r);
  if (PyErr_Occurred()) {
    ns = 0;
    rig_py_op_failed(call, "now_ns");
  }
  Py_XDECREF(r);
  PyGILState_Release(gil);
  return ns;
}

static void rig_py_log_tramp(void *user, const char *message) {
  rig_py_probe_call *call = (rig_py_probe_call *)user;
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *r = PyObject_CallFunction(call->log, "s", message ? message : "");
  if (!r) rig_py_save(&call->saved);
  Py_XDECREF(r);
  PyGILState_Release(gil);
}

/* Shared by probe_with and probe: options from Python values, then the saved exception if the probe's
 * own error came from a callback (or a log callback raised). */
static rig_status rig_py_probe_finish(rig_py_probe_call *call, rig_status status, Py_buffer *views) {
  /* The probe's own error is raised first, while rig_last_error() is still this call's message: releasing
   * the Python objects below may run arbitrary code. A callback's exception replaces it only where the
   * probe returned the exception's status (OUT_OF_MEMORY, INTERRUPTED); any other exception was reported
   * in the verdict (Inconclusive) and the log, and is dropped. */
  int from_callback = call->saved.type && (status == RIG_OUT_OF_MEMORY || status == RIG_INTERRUPTED);
  if (from_callback) rig_py_restore(&call->saved);
  else if (status != RIG_OK) rig_py_raise(status);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  Py_XDECREF(call->saved.type);
  Py_XDECREF(call->saved.value);
  Py_XDECREF(call->saved.traceback);
  PyDict_Clear(call->allocs); /* what the probe failed to free is released with the probe */
  Py_DECREF(call->allocs);
  PyBuffer_Release(&views[0]);
  PyBuffer_Release(&views[1]);
  PyErr_Restore(type, value, tb);
  return status;
}

static int rig_py_fact_tramp(void *user, rig_device_fact fact) {
  PyObject **facts = (PyObject **)user;
  PyGILState_STATE gil = PyGILState_Ensure();
  int answer = -1;
  PyObject *r = PyObject_CallFunction(facts[0], "i", (int)fact);
  if (r) {
    long v = PyLong_AsLong(r);
    answer = (v == 0 || v == 1) ? (int)v : -1;
  }
  if (PyErr_Occurred()) {
    answer = -1;
    if (!facts[1]) PyErr_Fetch(&facts[1], &facts[2], &facts[3]);
    else PyErr_Clear();
  }
  Py_XDECREF(r);
  PyGILState_Release(gil);
  return answer;
}
%}

/* ---- status: None on RIG_OK, rig.Error otherwise (or the callback's exception, checked first) ---- */
%typemap(out) rig_status {
  if (PyErr_Occurred()) SWIG_fail;
  if ($1 != RIG_OK) {
    rig_py_raise($1);
    SWIG_fail;
  }
  $result = SWIG_Py_Void();
}

/* rig_submit: a host kernel's exception is raised in place of the submit's result. The flag tells the
 * kernel trampoline that a caller waits on this thread. */
%exception rig_submit {
  rig_py_submitting++;
  $action
  rig_py_submitting--;
  if (rig_py_restore(&rig_py_kernel_saved)) SWIG_fail;
}

/* ---- out-pointers become results ---- */
%define RIG_PY_OUT_HANDLE(TYPE)
%typemap(in, numinputs=0) TYPE *out (TYPE temp = NULL), TYPE *decided (TYPE temp = NULL),
    TYPE *device (TYPE temp = NULL) "$1 = &temp;";
%typemap(argout) TYPE *out, TYPE *decided, TYPE *device {
  $result = SWIG_Python_AppendOutput($result,
      *$1 ? SWIG_NewPointerObj((void *)*$1, $*1_descriptor, 0) : SWIG_Py_Void());
}
%enddef
RIG_PY_OUT_HANDLE(rig_device)
RIG_PY_OUT_HANDLE(rig_buffer)
RIG_PY_OUT_HANDLE(rig_submission)
RIG_PY_OUT_HANDLE(rig_run)
RIG_PY_OUT_HANDLE(rig_module)
RIG_PY_OUT_HANDLE(rig_verdict)

%define RIG_PY_OUT_VALUE(TYPE, NAMES, CONVERT)
%typemap(in, numinputs=0) TYPE *NAMES (TYPE temp = 0) "$1 = &temp;";
%typemap(argout) TYPE *NAMES { $result = SWIG_Python_AppendOutput($result, CONVERT); }
%enddef
%typemap(in, numinputs=0) uint64_t *value (uint64_t temp = 0), rig_point *point (rig_point temp = 0),
    rig_point *out (rig_point temp = 0) "$1 = &temp;";
%typemap(argout) uint64_t *value, rig_point *point, rig_point *out {
  $result = SWIG_Python_AppendOutput($result, PyLong_FromUnsignedLongLong((unsigned long long)*$1));
}
%typemap(in, numinputs=0) size_t *length (size_t temp = 0) "$1 = &temp;";
%typemap(argout) size_t *length { $result = SWIG_Python_AppendOutput($result, PyLong_FromSize_t(*$1)); }
%typemap(in, numinputs=0) int *cacheable (int temp = 0), int *registered (int temp = 0) "$1 = &temp;";
%typemap(argout) int *cacheable, int *registered {
  $result = SWIG_Python_AppendOutput($result, PyBool_FromLong(*$1));
}
%typemap(in, numinputs=0) rig_verdict_kind *kind (rig_verdict_kind temp = 0),
    rig_refusal *refusal (rig_refusal temp = 0) "$1 = &temp;";
%typemap(argout) rig_verdict_kind *kind, rig_refusal *refusal {
  $result = SWIG_Python_AppendOutput($result, PyLong_FromLong((long)*$1));
}
%typemap(in, numinputs=0) double *registered (double temp = 0), double *staged (double temp = 0) "$1 = &temp;";
%typemap(argout) double *registered, double *staged {
  $result = SWIG_Python_AppendOutput($result, PyFloat_FromDouble(*$1));
}
%typemap(in, numinputs=0) const char **why (const char *temp = NULL), const char **reason (const char *temp = NULL),
    const char **text (const char *temp = NULL) "$1 = ($1_ltype)&temp;";
%typemap(argout) const char **why, const char **reason, const char **text {
  $result = SWIG_Python_AppendOutput($result, *$1 ? PyUnicode_FromString(*$1) : SWIG_Py_Void());
}
/* rig_buffer_export: the address as an int (Buffer.export makes the memoryview). */
%typemap(in, numinputs=0) void **data (void *temp = NULL) "$1 = &temp;";
%typemap(argout) void **data { $result = SWIG_Python_AppendOutput($result, PyLong_FromVoidPtr(*$1)); }

/* rig_device_get_info: a dict, the strings copied while the device handle is alive. */
%typemap(in, numinputs=0) rig_device_info *info (rig_device_info temp) {
  memset(&temp, 0, sizeof temp);
  temp.size = sizeof temp;
  $1 = &temp;
}
%typemap(argout) rig_device_info *info {
  $result = SWIG_Python_AppendOutput($result,
      Py_BuildValue("{s:s,s:s,s:s,s:i,s:I,s:K,s:i,s:i}", "name", $1->name ? $1->name : "", "framework",
                    $1->framework ? $1->framework : "", "model", $1->model ? $1->model : "", "kind",
                    (int)$1->kind, "index", (unsigned)$1->index, "memory_bytes",
                    (unsigned long long)$1->memory_bytes, "integrated", $1->integrated, "lost", $1->lost));
}

/* ---- bytes in and out: anything with the buffer protocol (bytes, bytearray, memoryview, mmap, numpy) -- */
%typemap(in) (const void *src, size_t length) (Py_buffer view), (const void *bytes, size_t length) (Py_buffer view),
    (const void *host, size_t length) (Py_buffer view) {
  if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS) != 0) SWIG_fail;
  $1 = view.buf;
  $2 = (size_t)view.len;
}
%typemap(in) (void *dst, size_t length) (Py_buffer view) {
  if (PyObject_GetBuffer($input, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) SWIG_fail;
  $1 = view.buf;
  $2 = (size_t)view.len;
}
/* rig_host_register: rig registers read-only where access is RIG_ACCESS_READ, so any buffer will do */
%typemap(in) (void *host, size_t length) (Py_buffer view) {
  if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS) != 0) SWIG_fail;
  $1 = view.buf;
  $2 = (size_t)view.len;
}
%typemap(in) void *host (Py_buffer view) {
  if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS) != 0) SWIG_fail;
  $1 = view.buf;
}
%typemap(arginit) (const void *src, size_t length), (const void *bytes, size_t length),
    (const void *host, size_t length), (void *dst, size_t length), (void *host, size_t length), void *host
    "view$argnum.obj = NULL;";
%typemap(freearg) (const void *src, size_t length), (const void *bytes, size_t length),
    (const void *host, size_t length), (void *dst, size_t length), (void *host, size_t length), void *host
    "if (view$argnum.obj) PyBuffer_Release(&view$argnum);";

/* ---- rig_submit's waits: a sequence of points ---- */
%typemap(in) (const rig_point *waits, size_t wait_count) (rig_point *temp = NULL) {
  PyObject *seq = PySequence_Fast($input, "waits must be a sequence of points");
  if (!seq) SWIG_fail;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  temp = (rig_point *)calloc(n ? (size_t)n : 1, sizeof(rig_point));
  if (!temp) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    SWIG_fail;
  }
  for (Py_ssize_t i = 0; i < n; ++i) temp[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, i));
  Py_DECREF(seq);
  if (PyErr_Occurred()) SWIG_fail;
  $1 = temp;
  $2 = (size_t)n;
}
%typemap(freearg) (const rig_point *waits, size_t wait_count) "free(temp$argnum);";

/* ---- rig_submit_many: a sequence of runs' handles in, a list of their points out ---- */
%nothread rig_py_submit_many;
/* As rig_submit's: a host kernel's exception is raised in place of the batch's result. */
%exception rig_py_submit_many {
  rig_py_submitting++;
  $action
  rig_py_submitting--;
  if (rig_py_restore(&rig_py_kernel_saved)) SWIG_fail;
  if (!result) SWIG_fail;
}
%inline %{
/* rig_submit_many over `runs` (a sequence of Run._raw handles, at most RIG_SUBMIT_MANY_MAX: rig refuses
 * more) after `waits` (a sequence of points): a list of the runs' points, or NULL with the exception set. */
static PyObject *rig_py_submit_many(PyObject *runs, PyObject *waits) {
  rig_run handles[RIG_SUBMIT_MANY_MAX];
  rig_point points[RIG_SUBMIT_MANY_MAX], after[RIG_SUBMIT_MANY_MAX];
  PyObject *rs = PySequence_Fast(runs, "runs must be a sequence of runs");
  if (!rs) return NULL;
  PyObject *ws = PySequence_Fast(waits, "waits must be a sequence of points");
  if (!ws) {
    Py_DECREF(rs);
    return NULL;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(rs), w = PySequence_Fast_GET_SIZE(ws);
  if (n > RIG_SUBMIT_MANY_MAX || w > RIG_SUBMIT_MANY_MAX) {
    PyErr_Format(PyExc_ValueError, "at most %d runs and %d waits a batch", RIG_SUBMIT_MANY_MAX, RIG_SUBMIT_MANY_MAX);
  } else {
    for (Py_ssize_t i = 0; i < n && !PyErr_Occurred(); ++i) {
      void *h = NULL;
      if (!SWIG_IsOK(SWIG_ConvertPtr(PySequence_Fast_GET_ITEM(rs, i), &h, 0, 0)))
        PyErr_SetString(PyExc_TypeError, "runs must be runs' handles");
      handles[i] = (rig_run)h;
    }
    for (Py_ssize_t i = 0; i < w && !PyErr_Occurred(); ++i)
      after[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(ws, i));
  }
  Py_DECREF(rs);
  Py_DECREF(ws);
  if (PyErr_Occurred()) return NULL;
  rig_status status;
  Py_BEGIN_ALLOW_THREADS
  status = rig_submit_many(handles, (size_t)n, after, (size_t)w, points);
  Py_END_ALLOW_THREADS
  if (status != RIG_OK) {
    if (!PyErr_Occurred()) rig_py_raise(status);
    return NULL;
  }
  PyObject *out = PyList_New(n);
  for (Py_ssize_t i = 0; out && i < n; ++i) PyList_SET_ITEM(out, i, PyLong_FromUnsignedLongLong(points[i]));
  return out;
}
%}

/* ---- helpers that take Python objects ---- */
%nothread rig_py_wrap;
%nothread rig_py_buffer_read;
%nothread rig_py_buffer_write;
%nothread rig_py_export_view;
%nothread rig_py_parts_host_kernel;
%nothread rig_py_probe_with;
%nothread rig_py_probe;
%nothread rig_py_static_verdict_for;

%inline %{
/* rig_buffer_wrap over obj's bytes: read-write where obj's buffer is writable (bytearray, numpy),
 * read-only otherwise (bytes). The Py_buffer, and so obj, is held until rig calls the release. */
static rig_status rig_py_wrap(PyObject *obj, rig_buffer *out) {
  rig_py_wrapped *w = (rig_py_wrapped *)calloc(1, sizeof *w);
  if (!w) {
    PyErr_NoMemory();
    return RIG_OUT_OF_MEMORY;
  }
  rig_access access = RIG_ACCESS_READ_WRITE;
  if (PyObject_GetBuffer(obj, &w->view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) {
    PyErr_Clear();
    access = RIG_ACCESS_READ;
    if (PyObject_GetBuffer(obj, &w->view, PyBUF_C_CONTIGUOUS) != 0) {
      free(w);
      return RIG_INVALID_ARGUMENT; /* the TypeError set above is raised */
    }
  }
  rig_status status;
  Py_BEGIN_ALLOW_THREADS
  status = rig_buffer_wrap(w->view.buf, (size_t)w->view.len, access, rig_py_wrapped_release, w, out);
  Py_END_ALLOW_THREADS
  if (status != RIG_OK) {
    /* a callback is never called when the call that would call it fails: release here, after raising
     * (releasing may run Python code, which could replace rig_last_error) */
    rig_py_raise(status);
    PyBuffer_Release(&w->view);
    free(w);
  }
  return status;
}

static rig_status rig_py_buffer_read(rig_buffer buffer, PyObject *fn) {
  rig_py_access_call call = {fn, {NULL, NULL, NULL}};
  rig_status status;
  Py_BEGIN_ALLOW_THREADS
  status = rig_buffer_read(buffer, rig_py_read_tramp, &call);
  Py_END_ALLOW_THREADS
  rig_py_restore(&call.saved);
  return status;
}
static rig_status rig_py_buffer_write(rig_buffer buffer, PyObject *fn) {
  rig_py_access_call call = {fn, {NULL, NULL, NULL}};
  rig_status status;
  Py_BEGIN_ALLOW_THREADS
  status = rig_buffer_write(buffer, rig_py_write_tramp, &call);
  Py_END_ALLOW_THREADS
  rig_py_restore(&call.saved);
  return status;
}

/* A writable memoryview of rig_buffer_export's bytes. Ordered only as of this call (see rig.h). */
static PyObject *rig_py_export_view(rig_buffer buffer) {
  void *data = NULL;
  size_t length = 0;
  rig_status status = rig_buffer_export(buffer, &data);
  if (status == RIG_OK) status = rig_buffer_length(buffer, &length);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  return rig_py_view(data, length, 1);
}

/* Adds a host-kernel part calling fn(list of memoryviews, one per slot). Returns a capsule owning the
 * kernel's state: the Submission keeps it while rig may call the kernel. Slots must be added first. */
static PyObject *rig_py_parts_host_kernel(rig_swig_parts *p, PyObject *fn) {
  if (!p || !PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "host kernel must be callable");
    return NULL;
  }
  rig_py_kernel *k = (rig_py_kernel *)calloc(1, sizeof *k);
  rig_part *part = rig_swig_parts_push(p);
  if (!k || !part) {
    free(k);
    return PyErr_NoMemory();
  }
  k->slot_count = p->slot_count;
  k->access = (rig_access *)calloc(p->slot_count ? p->slot_count : 1, sizeof(rig_access));
  if (!k->access) {
    free(k);
    p->count--;
    return PyErr_NoMemory();
  }
  if (p->slot_count) memcpy(k->access, p->access, p->slot_count * sizeof(rig_access));
  Py_INCREF(fn);
  k->fn = fn;
  PyObject *capsule = PyCapsule_New(k, "rig.kernel", rig_py_kernel_free);
  if (!capsule) {
    Py_DECREF(fn);
    free(k->access);
    free(k);
    p->count--;
    return NULL;
  }
  part->kind = RIG_PART_HOST_KERNEL;
  part->fn = rig_py_kernel_tramp;
  part->user = k;
  return capsule;
}

/* rig_probe_with with ops written in Python: an object with register_host(view), unregister_host(view),
 * alloc_host(length) -> writable buffer, free_host(obj), round_trip(host_view, into_view), upload(view) and
 * optionally now_ns() -> int. log (None or a callable of one str) gets the probe's progress. */
/* The map and reference of a probe: two buffers of one length, held for the call. */
static int rig_py_two_views(PyObject *map, PyObject *reference, Py_buffer *views) {
  if (PyObject_GetBuffer(map, &views[0], PyBUF_C_CONTIGUOUS) != 0) return -1;
  if (PyObject_GetBuffer(reference, &views[1], PyBUF_C_CONTIGUOUS) != 0) {
    PyBuffer_Release(&views[0]);
    return -1;
  }
  if (views[0].len != views[1].len) {
    PyErr_Format(PyExc_ValueError, "map has %zd bytes, reference %zd", views[0].len, views[1].len);
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    return -1;
  }
  return 0;
}

static rig_status rig_py_probe_with(PyObject *ops, PyObject *map, PyObject *reference,
                                    double min_relative_speed, PyObject *log, rig_verdict *out) {
  static const char *required[] = {"register_host", "unregister_host", "alloc_host", "free_host",
                                   "round_trip", "upload"};
  for (size_t i = 0; i < sizeof required / sizeof *required; ++i) {
    if (!PyObject_HasAttrString(ops, required[i])) {
      PyErr_Format(PyExc_TypeError, "probe ops need a %s method", required[i]);
      return RIG_INVALID_ARGUMENT;
    }
  }
  Py_buffer views[2];
  if (rig_py_two_views(map, reference, views) != 0) return RIG_INVALID_ARGUMENT;
  rig_py_probe_call call = {ops, log == Py_None ? NULL : log, PyDict_New(), {NULL, NULL, NULL}};
  if (!call.allocs) {
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    return RIG_OUT_OF_MEMORY;
  }
  rig_probe_ops c_ops;
  memset(&c_ops, 0, sizeof c_ops);
  c_ops.size = sizeof c_ops;
  c_ops.user = &call;
  c_ops.register_host = rig_py_op_register;
  c_ops.unregister_host = rig_py_op_unregister;
  c_ops.alloc_host = rig_py_op_alloc;
  c_ops.free_host = rig_py_op_free;
  c_ops.round_trip = rig_py_op_round_trip;
  c_ops.upload = rig_py_op_upload;
  c_ops.now_ns = PyObject_HasAttrString(ops, "now_ns") ? rig_py_op_now : NULL;
  rig_probe_options options;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.min_relative_speed = min_relative_speed;
  options.log = call.log ? rig_py_log_tramp : NULL;
  options.log_user = &call;
  rig_status status;
  Py_BEGIN_ALLOW_THREADS
  status = rig_probe_with(&c_ops, views[0].buf, views[1].buf, (size_t)views[0].len, &options, out);
  Py_END_ALLOW_THREADS
  return rig_py_probe_finish(&call, status, views);
}

/* rig_probe on a rig device, with the same options. */
static rig_status rig_py_probe(rig_device device, PyObject *map, PyObject *reference,
                               double min_relative_speed, PyObject *log, rig_verdict *out) {
  Py_buffer views[2];
  if (rig_py_two_views(map, reference, views) != 0) return RIG_INVALID_ARGUMENT;
  rig_py_probe_call call = {NULL, log == Py_None ? NULL : log, PyDict_New(), {NULL, NULL, NULL}};
  if (!call.allocs) {
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    return RIG_OUT_OF_MEMORY;
  }
  rig_probe_options options;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.min_relative_speed = min_relative_speed;
  options.log = call.log ? rig_py_log_tramp : NULL;
  options.log_user = &call;
  rig_status status;
  Py_BEGIN_ALLOW_THREADS
  status = rig_probe(device, views[0].buf, views[1].buf, (size_t)views[0].len, &options, out);
  Py_END_ALLOW_THREADS
  return rig_py_probe_finish(&call, status, views);
}

/* rig_static_verdict_for; facts (None or a callable fact -> 1, 0 or -1) answers the table's questions. */
static rig_status rig_py_static_verdict_for(const char *framework, int kind, PyObject *facts,
                                            rig_verdict *decided) {
  PyObject *state[4] = {facts, NULL, NULL, NULL};
  rig_status status;
  int has = facts != Py_None;
  Py_BEGIN_ALLOW_THREADS
  status = rig_static_verdict_for(framework, (rig_device_kind)kind, has ? rig_py_fact_tramp : NULL,
                                  has ? (void *)state : NULL, decided);
  Py_END_ALLOW_THREADS
  if (state[1]) {
    /* the callback's exception wins over the verdict: a fact that raised is a bug to see */
    PyErr_Restore(state[1], state[2], state[3]);
    if (status == RIG_OK && *decided) {
      rig_verdict_release(*decided);
      *decided = NULL;
    }
    return RIG_INVALID_ARGUMENT;
  }
  if (status != RIG_OK) rig_py_raise(status);
  return status;
}
%}

%nothread rig_py_set_errors;
%inline %{
/* Makes `base` (rig.RigError) the class rig_py_raise falls back to and `by_status` (a dict: status ->
 * subclass of base) the class it raises per status. Called once by the Python layer at import. */
static PyObject *rig_py_set_errors(PyObject *base, PyObject *by_status) {
  if (!PyType_Check(base) || !PyDict_Check(by_status)) {
    PyErr_SetString(PyExc_TypeError, "rig_py_set_errors(class, dict)");
    return NULL;
  }
  Py_INCREF(base);
  Py_INCREF(by_status);
  Py_XSETREF(rig_py_error_type, base);
  Py_XSETREF(rig_py_error_by_status, by_status);
  Py_RETURN_NONE;
}
%}

/* ---- interop (rig_interop.h): DLPack and native streams for Buffer.__dlpack__ and its kin ---- */
%{
#include <dlpack/dlpack.h>
#include <rig_interop.h>

/* A capsule still named "dltensor" was never consumed: its tensor is still ours to delete. A consumer
 * renames it "used_dltensor" and calls the deleter itself (DLPack's Python protocol). */
static void rig_py_dlpack_capsule_free(PyObject *capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  DLManagedTensor *t = (DLManagedTensor *)PyCapsule_GetPointer(capsule, "dltensor");
  if (t && t->deleter) t->deleter(t);
}
/* rig_py_dlpack_capsule_shaped's tensor: a copy of rig's 1-D tensor with a shape of its own, owning it. */
typedef struct {
  DLManagedTensor outer;
  DLManagedTensor *inner;
  int64_t shape[];
} rig_py_shaped;
static void rig_py_shaped_delete(DLManagedTensor *t) {
  rig_py_shaped *s = (rig_py_shaped *)t->manager_ctx;
  if (s->inner->deleter) s->inner->deleter(s->inner);
  free(s);
}
%}
%nothread rig_py_dlpack_capsule;
%nothread rig_py_dlpack_capsule_shaped;
%nothread rig_py_dlpack_device;
%nothread rig_py_device_address;
%nothread rig_py_last_write;
%nothread rig_py_stream_point;
%inline %{
/* A "dltensor" capsule over the buffer's bytes as a 1-D tensor of (code, bits, lanes) elements. */
static PyObject *rig_py_dlpack_capsule(rig_buffer buffer, int code, int bits, int lanes) {
  struct DLManagedTensor *t = NULL;
  rig_status status = rig_buffer_to_dlpack(buffer, (uint8_t)code, (uint8_t)bits, (uint16_t)lanes, &t);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  PyObject *capsule = PyCapsule_New(t, "dltensor", rig_py_dlpack_capsule_free);
  if (!capsule) t->deleter(t);
  return capsule;
}
/* A capsule of the buffer's bytes as a C-contiguous tensor of `shape` (a tuple of ints) and (code, bits)
 * elements, the whole buffer: what a framework would otherwise rebuild from a 1-D capsule by a retype and
 * a reshape, two framework calls a tensor. rig_buffer_to_dlpack's tensor is 1-D, so this wraps it in a
 * tensor of its own carrying the shape; deleting the wrapper deletes rig's tensor. ValueError where the
 * shape does not cover the buffer's bytes exactly. */
static PyObject *rig_py_dlpack_capsule_shaped(rig_buffer buffer, int code, int bits, PyObject *shape) {
  PyObject *dims = PySequence_Fast(shape, "shape: a sequence of ints");
  if (!dims) return NULL;
  Py_ssize_t ndim = PySequence_Fast_GET_SIZE(dims);
  rig_py_shaped *s = (rig_py_shaped *)calloc(1, sizeof(rig_py_shaped) + (size_t)ndim * sizeof(int64_t));
  if (!s) {
    Py_DECREF(dims);
    return PyErr_NoMemory();
  }
  s->outer.manager_ctx = s;
  unsigned long long elements = 1;
  for (Py_ssize_t i = 0; i < ndim; i++) {
    long long d = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(dims, i));
    if (d < 0) {
      if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "shape: dimension %lld is negative", d);
      Py_DECREF(dims);
      free(s);
      return NULL;
    }
    s->shape[i] = d;
    if (__builtin_mul_overflow(elements, (unsigned long long)d, &elements)) {
      PyErr_SetString(PyExc_ValueError, "shape: more elements than 64 bits count");
      Py_DECREF(dims);
      free(s);
      return NULL;
    }
  }
  Py_DECREF(dims);
  rig_status status = rig_buffer_to_dlpack(buffer, (uint8_t)code, (uint8_t)bits, 1, &s->inner);
  if (status != RIG_OK) {
    free(s);
    rig_py_raise(status);
    return NULL;
  }
  DLTensor *in = &s->inner->dl_tensor;
  if (in->shape[0] != (int64_t)elements) {
    PyErr_Format(PyExc_ValueError, "shape: %llu elements of %d bits, the buffer holds %lld", elements, bits,
                 (long long)in->shape[0]);
    rig_py_shaped_delete(&s->outer);
    return NULL;
  }
  s->outer.dl_tensor = *in;
  s->outer.dl_tensor.ndim = (int32_t)ndim;
  s->outer.dl_tensor.shape = s->shape;
  s->outer.dl_tensor.strides = NULL;  /* C-contiguous */
  s->outer.deleter = rig_py_shaped_delete;
  PyObject *capsule = PyCapsule_New(&s->outer, "dltensor", rig_py_dlpack_capsule_free);
  if (!capsule) rig_py_shaped_delete(&s->outer);
  return capsule;
}
/* (device_type, device_id) as DLPack numbers them. */
static PyObject *rig_py_dlpack_device(rig_buffer buffer) {
  int32_t type = 0, id = 0;
  rig_status status = rig_buffer_dlpack_device(buffer, &type, &id);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  return Py_BuildValue("(ii)", (int)type, (int)id);
}
static PyObject *rig_py_device_address(rig_buffer buffer) {
  uint64_t address = 0;
  rig_status status = rig_buffer_device_address(buffer, &address);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  return PyLong_FromUnsignedLongLong(address);
}
static PyObject *rig_py_last_write(rig_buffer buffer) {
  rig_point point = 0;
  rig_status status = rig_buffer_last_write(buffer, &point);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  return PyLong_FromUnsignedLongLong(point);
}
/* rig_stream_wait_point: never blocks the host, so the GIL is kept. */
static rig_status rig_py_stream_wait_point(rig_device device, unsigned long long stream, unsigned long long point) {
  return rig_stream_wait_point(device, (void *)(uintptr_t)stream, (rig_point)point);
}
static PyObject *rig_py_stream_point(rig_device device, unsigned long long stream) {
  rig_point point = 0;
  rig_status status = rig_stream_point(device, (void *)(uintptr_t)stream, &point);
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  return PyLong_FromUnsignedLongLong(point);
}
static rig_status rig_py_buffer_stamp(rig_buffer buffer, unsigned long long point, int access) {
  return rig_buffer_stamp(buffer, (rig_point)point, (rig_access)access);
}
%}

%init %{
  rig_py_error_type = PyErr_NewException("rig.Error", PyExc_Exception, NULL);
  if (rig_py_error_type) {
    Py_INCREF(rig_py_error_type);
    PyModule_AddObject(m, "Error", rig_py_error_type);
  }
  rig_py_buffer_base_type.tp_basicsize = sizeof(rig_py_buffer_base);
  rig_py_buffer_base_type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  rig_py_buffer_base_type.tp_doc = "Base of rig.Buffer: the buffer protocol over rig_buffer_export.";
  rig_py_buffer_base_type.tp_as_buffer = &rig_py_buffer_procs;
  rig_py_buffer_base_type.tp_getset = rig_py_buffer_getset;
  rig_py_buffer_base_type.tp_new = PyType_GenericNew;
  if (PyType_Ready(&rig_py_buffer_base_type) == 0) {
    Py_INCREF(&rig_py_buffer_base_type);
    PyModule_AddObject(m, "BufferBase", (PyObject *)&rig_py_buffer_base_type);
  }
%}


