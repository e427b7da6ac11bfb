// What tells the fake libcuda from the fake HIP runtime: one implementation of the stream table's calls
// (fake_stream.h, over host memory) serves both, as src/drivers/stream serves the real CUDA and HIP
// drivers; each double gives it one Face (its names, its attribute numbers, the few behaviours in which the
// real libraries differ) and exports the calls under its own names (fake_cuda.cpp, fake_hip.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fake_stream {

// A library's number for each device attribute the fakes answer (-1: the library has none).
struct AttributeNumbers {
  int max_threads_per_block, max_block[3], max_grid[3], max_shared_per_block;
  int integrated, can_map_host_memory, unified_addressing, host_register_supported,
      pageable_uses_host_page_tables, read_only_host_register, stream_memory_operations;
};

// The launch limits a library's GPU reports, and checks at a launch.
struct Limits {
  int max_block[3], max_grid[3], max_shared_per_block;
};

struct Face {
  const char *env_prefix;   // "FAKECUDA_": every switch is also read from the environment under it
  const char *device_name;  // printf format of a GPU's name, given its ordinal
  size_t total_memory;
  int driver_version;
  AttributeNumbers attributes;
  Limits limits;
  // HIP: device 0 is current on a thread that set none. CUDA: no context is current (INVALID_CONTEXT).
  bool device_zero_current;
  // CUDA: a synchronous upload from pageable memory returns once the bytes are staged; its DMA lands later
  // on the legacy stream (pageable_dma_delay_us). HIP: it has landed when the call returns.
  bool pageable_uploads_land_later;
  // HIP (as measured, docs/mapped.md): a registration that cannot serve (PROT_NONE, a tmpfs file, a range
  // overlapping a registration) answers success and the device reads other bytes; CUDA answers an overlap
  // with 712 and registers the rest.
  bool false_registrations;
  // A registered range's device address is the host address plus this (HIP: above every user-space
  // address, so that a raw host pointer handed to device code faults); 0: the host address (CUDA).
  uintptr_t registered_alias;
};

// The double's face, defined by its face file (fake_cuda.cpp, fake_hip.cpp).
const Face &face();

}  // namespace fake_stream
