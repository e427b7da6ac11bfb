// Loads the CUDA driver library at run time (dlopen "libcuda.so.1", or the file RIG_CUDA_LIBRARY names:
// how the tests load their fake) and holds its entry points for the life of the process: all of them by
// their cu.h names, and the stream device's table (drivers/stream/calls.h) filled from the same pointers.
#pragma once

#include <rig.h>

#include "drivers/cuda/cu.h"
#include "drivers/stream/calls.h"

namespace rig::cuda {

struct Api {
  // The macro's parameter lists name these types unqualified.
  using Result = cu::Result;
  using Device = cu::Device;
  using DevicePtr = cu::DevicePtr;
  using Context = cu::Context;
  using Stream = cu::Stream;
  using Event = cu::Event;
  using Module = cu::Module;
  using Function = cu::Function;
  using IpcHandle = cu::IpcHandle;
  using MemcpyAttributes = stream::MemcpyAttributes;
  using Graph = stream::Graph;
  using GraphExec = stream::GraphExec;

#define RIG_CU_MEMBER(field, symbol, ret, params) ret(*field) params = nullptr;
  RIG_CU_ENTRY_POINTS(RIG_CU_MEMBER)
  RIG_CU_OPTIONAL_ENTRY_POINTS(RIG_CU_MEMBER)
#undef RIG_CU_MEMBER
  // CUDA 12.8's cuMemcpyBatchAsync (a failure index before the stream, dropped by 13's _v2): where a driver
  // lacks the _v2 symbol, the table's copy_batch calls this through an adapter (api.cpp).
  Result (*cuMemcpyBatchAsync_12_8)(DevicePtr *dsts, DevicePtr *srcs, size_t *sizes, size_t count,
                                    MemcpyAttributes *attributes, size_t *attribute_starts,
                                    size_t attribute_count, size_t *fail_index, Stream stream) = nullptr;
  int driver_version = 0;
  stream::Family family;  // CUDA as a stream family: the entry points above, CUDA's attributes and names
};

// The loaded driver, initialised (cuInit done); null when it cannot be loaded, with the reason set by
// rig::fail (RIG_NOT_FOUND). Loads once per process; the library is never unloaded (contexts and the
// timeline pool live until exit).
const Api *api();

// The driver's name for a result ("CUDA_ERROR_ILLEGAL_ADDRESS"), or "CUDA_ERROR_<n>" if it has none.
const char *error_name(cu::Result result);

// True for the errors after which a context can do nothing more (CUDA calls them sticky): the device's
// work is gone, so rig loses the device.
bool is_sticky(cu::Result result);

}  // namespace rig::cuda
