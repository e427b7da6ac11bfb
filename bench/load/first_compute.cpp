// Compute on the first tensor while the last is still in flight (issue 12): a load starts, tensor 0 is
// taken as soon as its copies are submitted, and a kernel reading it (tests/cuda/kernels.ptx's
// rig_add_u32) is submitted at once, with no wait written: its stamps order it after tensor 0's copy only.
// The row reports when the kernel finished and when the last tensor landed (the devices' last copy), both
// from the load's start, and checks the kernel's answer against the file's bytes.
#include "first_compute.h"

#include <rig_load.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels_ptx.h"

namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

bool first_compute(const char *path, rig_device device, FirstCompute *out) {
  auto fail = [&](const char *what, rig_status s) {
    std::snprintf(out->why, sizeof out->why, "%s: %s: %s", what, rig_status_name(s), rig_last_error());
    return false;
  };
  rig_module module = nullptr;
  if (rig_status s = rig_module_load(device, RIG_MODULE_PTX, kernels_ptx, std::strlen(kernels_ptx), &module))
    return fail("the kernel", s);
  rig_load_file file = nullptr;
  rig_load load = nullptr;
  rig_buffer first = nullptr, sum = nullptr;
  rig_submission sub = nullptr;
  rig_run run = nullptr;
  bool ok = false;
  rig_load_tensor t{};
  t.size = sizeof t;
  rig_load_placement p{};
  p.size = sizeof p;
  p.devices = &device;
  p.device_count = 1;
  static const uint32_t slots[2] = {0, 1};
  rig_part launch{};
  launch.size = sizeof launch;
  launch.kind = RIG_PART_LAUNCH;
  launch.module = module;
  launch.function = "rig_add_u32";
  launch.block[0] = 256;
  launch.grid[1] = launch.grid[2] = launch.block[1] = launch.block[2] = 1;
  launch.slots = slots;
  launch.slot_count = 2;
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  uint32_t scalars[2] = {0, 1};  // n, the number added
  rig_point kernel = 0;
  uint64_t last = 0;
  auto t0 = std::chrono::steady_clock::now();
  rig_status s = rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &file);
  if (s) { fail("open", s); goto done; }
  if ((s = rig_load_tensor_get(file, 0, &t))) { fail("tensor 0", s); goto done; }
  scalars[0] = uint32_t(std::min<uint64_t>(t.length / 4, 1u << 20));
  launch.grid[0] = (scalars[0] + 255) / 256;
  if ((s = rig_buffer_create(device, size_t(scalars[0]) * 4, RIG_MEMORY_DEVICE, &sum))) { fail("output", s); goto done; }
  if ((s = rig_submission_make(device, &launch, 1, access, 2, &sub)) || (s = rig_run_take(sub, &run)) ||
      (s = rig_run_set_scalars(run, scalars, sizeof scalars))) {
    fail("the launch", s);
    goto done;
  }
  t0 = std::chrono::steady_clock::now();
  if ((s = rig_load_start(file, nullptr, 0, &p, nullptr, &load))) { fail("start", s); goto done; }
  // handed out once its own copies are submitted; the kernel follows them and nothing else
  if ((s = rig_load_buffer(load, 0, 0, &first))) { fail("tensor 0's buffer", s); goto done; }
  if ((s = rig_run_set_buffer(run, 0, first)) || (s = rig_run_set_buffer(run, 1, sum)) ||
      (s = rig_submit(run, nullptr, 0, &kernel))) {
    fail("the kernel's submit", s);
    goto done;
  }
  out->handed_out_s = since(t0);
  if ((s = rig_wait_point(kernel, UINT64_MAX))) { fail("the kernel", s); goto done; }
  out->kernel_done_s = since(t0);
  if ((s = rig_load_wait(load)) || (s = rig_device_submitted(device, &last)) ||
      (s = rig_device_wait(device, last, UINT64_MAX))) {
    fail("the load", s);
    goto done;
  }
  out->last_landed_s = since(t0);
  {
    // the kernel's answer: every u32 of tensor 0 (as the file holds it) plus one
    std::vector<uint32_t> got(scalars[0]), want(scalars[0]);
    FILE *f = std::fopen(path, "rb");
    bool read = f && std::fseek(f, long(t.offset), SEEK_SET) == 0 &&
                std::fread(want.data(), 4, want.size(), f) == want.size();
    if (f) std::fclose(f);
    if ((s = rig_buffer_read_into(sum, 0, got.data(), got.size() * 4))) { fail("reading the answer", s); goto done; }
    for (uint32_t &w : want) w += 1;
    out->correct = read && got == want;
    ok = true;
  }
done:
  if (run) rig_run_release(run);
  if (sub) rig_submission_release(sub);
  if (first) rig_buffer_release(first);
  if (sum) rig_buffer_release(sum);
  if (load) rig_load_release(load);
  if (file) rig_load_file_release(file);
  if (module) rig_module_release(module);
  return ok;
}
