// One fake GPU library over host memory, for the stream table (src/drivers/stream/calls.h): every call of
// the table implemented once, as fake_<field> with the table's signature, and exported by each double under
// its library's names (fake_cuda.cpp: CUDA's, which are the table's; fake_hip.cpp: HIP's, renamed, with an
// adapter where HIP's signature differs), the way the real drivers share one table. The double's Face
// (face.h) says what differs between the libraries. Included by exactly one file of each double: the calls'
// symbols are aliased in that file, which needs their definitions in the same translation unit.
//
// Model: each GPU is one context (CUDA's primary context, HIP's device); device memory is host memory; each
// stream runs its queue of operations on a worker thread, in order, so work really runs after the enqueueing
// call returns (a missing wait shows as wrong bytes, especially with launch_delay_us/copy_delay_us). A
// failing launch sets the GPU's sticky error: from then on nothing of that GPU runs and its calls answer
// that error, as on a GPU. The switches and counters are one list (state.h), documented in fake_cuda.h
// (and fake_hip.h for what is HIP's own).
#pragma once

#include "drivers/stream/calls.h"
#include "face.h"

// The table's types and values by their own names (this header is a double's whole implementation).
using namespace rig::stream::types;
using namespace rig::stream::values;

// The table's calls, once: fake_init, fake_mem_alloc, ... with the table's signatures (a definition below
// that strays from them fails to compile). Hidden: each double exports them under its own names.
#define FAKE_STREAM_DECLARE(A, field, params, ...) \
  extern "C" __attribute__((visibility("hidden"))) rig::stream::Result fake_##field params;
RIG_STREAM_CALLS(FAKE_STREAM_DECLARE, _)
RIG_STREAM_OPTIONAL_CALLS(FAKE_STREAM_DECLARE, _)
#undef FAKE_STREAM_DECLARE

// Exports fake_<field> as the library's `symbol` (a string: "cuMemAlloc_v2", "hipMalloc"), with the
// table's signature.
#define FAKE_STREAM_EXPORT_AS(field, params, symbol)                                                      \
  extern "C" __attribute__((visibility("default"), alias("fake_" #field), copy(fake_##field))) rig::stream::Result \
      fake_export_##field params __asm__(symbol);

// The implementation, in order: state, memory, work, then the calls.
#include "calls_gpus.h"
#include "calls_ipc.h"
#include "calls_memory.h"
#include "calls_graphs.h"
