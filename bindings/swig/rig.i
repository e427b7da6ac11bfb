/* rig.i: the one SWIG interface from which the Python module and the Go package are generated.
 *
 * Layers, the same in both languages:
 *  1. The raw C API of rig.h, wrapped function by function. Typemaps turn out-pointers into results,
 *     byte ranges into the language's byte types, and (Python) a failed rig_status into rig.Error carrying
 *     rig_last_error(), read in the same C call so that it is the message of this thread's failure.
 *  2. C helpers (rig_swig_*, rig_py_*, rig_go_*) for what a language cannot reach through a plain call:
 *     callbacks (a C trampoline per callback type calls back into the language with `user` naming the
 *     language's callable), the part list of a submission, wrapping the language's memory.
 *  3. The language's objects (the package bindings/python/rig for Python; bindings/go/*.go for Go): handles that release
 *     themselves, errors, callbacks as functions of the language.
 * Callbacks never let a language's exception or panic unwind through librig's C++ frames: a trampoline
 * catches it, answers rig with a status, and the binding re-raises it once the rig call has returned.
 */
%module rig

%{
#include <rig.h>
#include <rig_mapped.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
%}

#define RIG_API
%include <stdint.i>

/* ---------------------------------------------------------------------------------------------------- */
/* Common helpers (both languages)                                                                      */

%{
/* A submission's parts as the binding builds them, one call per part, then handed to
 * rig_submission_make. rig copies what it needs of the parts during that call, so the strings and slot
 * lists owned here only have to outlive it. */
typedef struct rig_swig_parts {
  rig_part *parts;
  size_t count, capacity;
  rig_access *access;
  size_t slot_count, slot_capacity;
} rig_swig_parts;

/* strdup is POSIX, not C99: the binding's own copy keeps the wrapper building under -std=c99. */
static char *rig_swig_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *copy = (char *)malloc(n);
  if (copy) memcpy(copy, s, n);
  return copy;
}

static rig_part *rig_swig_parts_push(rig_swig_parts *p) {
  if (!p) return NULL;
  if (p->count == p->capacity) {
    size_t capacity = p->capacity ? p->capacity * 2 : 4;
    rig_part *grown = (rig_part *)realloc(p->parts, capacity * sizeof(rig_part));
    if (!grown) return NULL;
    p->parts = grown;
    p->capacity = capacity;
  }
  rig_part *part = &p->parts[p->count++];
  memset(part, 0, sizeof *part);
  part->size = sizeof *part;
  return part;
}
%}


/* Replaced by the helpers above and the language helpers below: function pointers, part arrays and
 * variable-length string tables have no direct form in either language. */
%ignore rig_device_list;
%ignore rig_buffer_wrap;
%ignore rig_buffer_read;
%ignore rig_buffer_write;
%ignore rig_submission_make;
%ignore rig_static_verdict_for;
%ignore rig_probe_with;
%ignore rig_probe;
%ignore rig_probe_ops_open;
%ignore rig_probe_ops_close;
%ignore rig_part;
%ignore rig_span;
/* An array of handles in, an array of points out: Python's rig_py_submit_many (python.i); Go's is the Go
 * binding's own to write. */
%ignore rig_submit_many;
%ignore rig_probe_ops;
%ignore rig_probe_options;
%ignore rig_device_info;
/* a callback from any thread: Python reaches it through ctypes (python/rig/_log.py), which takes the GIL */
%ignore rig_set_log;

/* ==================================================================================================== */
/* Language layers                                                                                      */

#ifdef SWIGPYTHON
%include "python.i"
#endif
#ifdef SWIGGO
%include "go.i"
#endif

/* The common helpers, after the language typemaps that shape their arguments and results. */
%inline %{
/* Part lists: made, filled and freed by the language's Submission; never seen by rig itself. */
static rig_swig_parts *rig_swig_parts_new(void) {
  return (rig_swig_parts *)calloc(1, sizeof(rig_swig_parts));
}
static void rig_swig_parts_free(rig_swig_parts *p) {
  if (!p) return;
  for (size_t i = 0; i < p->count; ++i) {
    if (p->parts[i].kind == RIG_PART_LAUNCH) {
      free((void *)p->parts[i].function);
      free((void *)p->parts[i].slots);
    }
  }
  free(p->parts);
  free(p->access);
  free(p);
}
/* Adds a slot with its access (RIG_ACCESS_READ, WRITE, READ_WRITE); 0 on success, -1 out of memory. */
static int rig_swig_parts_slot(rig_swig_parts *p, int access) {
  if (!p) return -1;
  if (p->slot_count == p->slot_capacity) {
    size_t capacity = p->slot_capacity ? p->slot_capacity * 2 : 4;
    rig_access *grown = (rig_access *)realloc(p->access, capacity * sizeof(rig_access));
    if (!grown) return -1;
    p->access = grown;
    p->slot_capacity = capacity;
  }
  p->access[p->slot_count++] = (rig_access)access;
  return 0;
}
static int rig_swig_parts_copy(rig_swig_parts *p, unsigned src_slot, size_t src_offset, unsigned dst_slot,
                               size_t dst_offset, size_t length) {
  rig_part *part = rig_swig_parts_push(p);
  if (!part) return -1;
  part->kind = RIG_PART_COPY;
  part->src_slot = src_slot;
  part->src_offset = src_offset;
  part->dst_slot = dst_slot;
  part->dst_offset = dst_offset;
  part->length = length;
  return 0;
}
static int rig_swig_parts_fill(rig_swig_parts *p, unsigned dst_slot, size_t dst_offset, size_t length,
                               unsigned char byte) {
  rig_part *part = rig_swig_parts_push(p);
  if (!part) return -1;
  part->kind = RIG_PART_FILL;
  part->dst_slot = dst_slot;
  part->dst_offset = dst_offset;
  part->length = length;
  part->byte = byte;
  return 0;
}
/* A launch of `function` of `module`; its slot list is given afterwards, one rig_swig_parts_launch_slot
 * call per entry (a list of integers is the one thing both languages pass the same way). */
static int rig_swig_parts_launch(rig_swig_parts *p, rig_module module, const char *function, unsigned gx,
                                 unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                 unsigned shared_bytes) {
  rig_part *part = rig_swig_parts_push(p);
  if (!part) return -1;
  part->kind = RIG_PART_LAUNCH;
  part->module = module;
  part->function = function ? rig_swig_strdup(function) : NULL;
  part->grid[0] = gx, part->grid[1] = gy, part->grid[2] = gz;
  part->block[0] = bx, part->block[1] = by, part->block[2] = bz;
  part->shared_bytes = shared_bytes;
  return (function && !part->function) ? -1 : 0;
}
static int rig_swig_parts_launch_slot(rig_swig_parts *p, unsigned slot) {
  if (!p || p->count == 0 || p->parts[p->count - 1].kind != RIG_PART_LAUNCH) return -1;
  rig_part *part = &p->parts[p->count - 1];
  uint32_t *grown = (uint32_t *)realloc((void *)part->slots, (part->slot_count + 1) * sizeof(uint32_t));
  if (!grown) return -1;
  grown[part->slot_count++] = slot;
  part->slots = grown;
  return 0;
}
/* rig_submission_make over the list. */
static rig_status rig_swig_submission_make(rig_device device, rig_swig_parts *p, rig_submission *out) {
  if (!p) return rig_submission_make(device, NULL, 0, NULL, 0, out);
  return rig_submission_make(device, p->parts, p->count, p->access, p->slot_count, out);
}

/* The i-th name rig_device_list gives, NULL past the end. The names are static strings. */
static const char *rig_swig_device_name(size_t i) {
  size_t count = 0;
  if (rig_device_list(NULL, 0, &count) != RIG_OK || i >= count) return NULL;
  const char **names = (const char **)calloc(count, sizeof(char *));
  if (!names) return NULL;
  const char *name = NULL;
  size_t again = 0;
  if (rig_device_list(names, count, &again) == RIG_OK && i < again && i < count) name = names[i];
  free((void *)names);
  return name;
}
%}

/* The raw API, last, so that the typemaps above apply to it: ordering, then mapped registration. */
%include <rig.h>
%include <rig_mapped.h>
#ifdef SWIGPYTHON
%include "python_load.i" /* the loader, rig_load.h */
%include "python_keep.i" /* attaching to a keeper, rig_keep.h */
#endif
#ifdef SWIGGO
%include "go_load.i"    /* the loader, rig_load.h */
%include "go_interop.i" /* rig_interop.h's descriptors and device pointers */
#endif

/* SIZE_MAX is not a constant SWIG evaluates: RIG_WHOLE is declared to it by value. */
%constant size_t RIG_WHOLE_LENGTH = SIZE_MAX;

/* Python: the objects users see are the package bindings/python/rig (its __init__ imports this module as
 * rig._rig, the raw layer, kept private); SWIG's own proxy rig.py is not installed. */
