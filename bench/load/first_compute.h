// One row of bench/load: compute on the first tensor of a load while the last is still in flight.
#pragma once

#include <rig.h>

struct FirstCompute {
  double handed_out_s = 0;   // from rig_load_start to tensor 0 handed out and the kernel submitted
  double kernel_done_s = 0;  // ... to the kernel reading tensor 0 reached
  double last_landed_s = 0;  // ... to the device's last copy reached
  bool correct = false;      // the kernel's output equals tensor 0's bytes (as u32) plus one
  char why[512] = "";        // what failed, when it returns false
};

// Loads `path` onto `device` (a CUDA or HIP GPU: the kernel is PTX) with default options, submitting a
// kernel on tensor 0 as soon as it is handed out. False with out->why on any failure.
bool first_compute(const char *path, rig_device device, FirstCompute *out);
