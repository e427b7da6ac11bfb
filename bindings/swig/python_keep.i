/* python_keep.i: attaching to a keeper (rig_keep.h) in the Python layer; included by rig.i after rig.h,
 * Python only. rig_attach, the count and release are wrapped as they are; a tensor's description and
 * buffer come through rig_py_attachment_get as a tuple. The keeper's own calls are C's (rig keep serves
 * from the shell). */

%{
#include <rig_keep.h>
%}

%ignore rig_keep_start;
%ignore rig_keep_wait_loaded;
%ignore rig_keep_client_count;
%ignore rig_keep_reload;
%ignore rig_keep_stop;
%ignore rig_keep_options;
%ignore rig_keep_tensor;
%ignore rig_attachment_get;
%ignore rig_attachment_find;

RIG_PY_OUT_HANDLE(rig_attachment)

%nothread rig_py_attachment_get;

%inline %{
/* Tensor `index` as (name, rig dtype, ggml type, shape tuple, length, writable, buffer handle); the
 * buffer is None unless `with_buffer`, whose wait (for the keeper to send it) runs without the GIL. */
static PyObject *rig_py_attachment_get(rig_attachment attachment, size_t index, int with_buffer) {
  rig_keep_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  rig_buffer b = NULL;
  rig_status status;
  Py_BEGIN_ALLOW_THREADS
  status = rig_attachment_get(attachment, index, &t, with_buffer ? &b : NULL);
  Py_END_ALLOW_THREADS
  if (status != RIG_OK) {
    rig_py_raise(status);
    return NULL;
  }
  PyObject *shape = PyTuple_New(t.rank);
  if (!shape) return NULL;
  for (uint32_t d = 0; d < t.rank; ++d)
    PyTuple_SET_ITEM(shape, d, PyLong_FromUnsignedLongLong((unsigned long long)t.shape[d]));
  PyObject *buffer = b ? SWIG_NewPointerObj((void *)b, SWIGTYPE_p_rig_buffer_h, 0) : (Py_INCREF(Py_None), Py_None);
  return Py_BuildValue("(siINKiN)", t.name, (int)t.dtype, (unsigned)t.ggml_type, shape,
                       (unsigned long long)t.length, t.writable, buffer);
}
%}

%include <rig_keep.h>
