#include "drivers/memory/memory_device.h"

#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/error.h"

namespace rig {
namespace {

// Every allocation starts on a page and owns whole pages, so a GPU can register (borrow) any of them without
// touching a neighbour's pages. Small buffers pay up to a page for it.
constexpr size_t kPage = 4096;

}  // namespace

MemoryDevice::MemoryDevice(std::string name, rig_device_kind kind) {
  info_.name = std::move(name);
  info_.framework = kind == RIG_DEVICE_HOST ? "host" : "memory";
  info_.kind = kind;
  info_.integrated = 1;
  info_.runs_host_kernels = kind == RIG_DEVICE_MEMORY;
  info_.commits_at_hand_over = true;
  // Work runs inline and nothing is held: the engine may run a lone copy itself (DriverInfo::inline_signal).
  info_.inline_signal = &signaled_;
}

rig_status MemoryDevice::allocate(size_t length, rig_memory, Memory *out) {
  // Every kind is host memory here. Zero bytes still get a distinct pointer, so views and borrows work.
  size_t align = kPage;
  size_t rounded = (length + align - 1) / align * align;
  if (rounded < length) return fail(RIG_OUT_OF_MEMORY, "create: %zu bytes is more than the host can address", length);
  void *p = std::aligned_alloc(align, rounded ? rounded : align);
  if (!p) return fail(RIG_OUT_OF_MEMORY, "create: %s has no %zu bytes of host memory", info_.name.c_str(), length);
  out->host = p;
  out->address = reinterpret_cast<uintptr_t>(p);
  out->length = length;
  return RIG_OK;
}

void MemoryDevice::free(const Memory &memory) noexcept { std::free(memory.host); }

rig_status MemoryDevice::map_host(void *host, size_t length, bool, Memory *out) {
  out->host = host;
  out->address = reinterpret_cast<uintptr_t>(host);
  out->length = length;
  return RIG_OK;
}

rig_status MemoryDevice::map_peer(DriverDevice &owner, const Memory &memory, Memory *out) {
  if (!memory.host)
    return fail(RIG_UNMAPPABLE, "borrow: %s reads only host memory; %s's device memory is not", info_.name.c_str(),
                owner.info().name.c_str());
  return map_host(memory.host, memory.length, false, out);
}

void MemoryDevice::unmap(const Memory &) noexcept {}  // a borrow of host memory is the memory itself

rig_status MemoryDevice::copy_to_host(const Memory &memory, size_t offset, void *dst, size_t length) {
  std::memcpy(dst, static_cast<char *>(memory.host) + offset, length);
  return RIG_OK;
}

rig_status MemoryDevice::copy_from_host(const Memory &memory, size_t offset, const void *src, size_t length) {
  std::memcpy(static_cast<char *>(memory.host) + offset, src, length);
  return RIG_OK;
}

rig_status MemoryDevice::load_module(rig_module_format, const void *, size_t, std::unique_ptr<DriverModule> *) {
  return fail(RIG_UNSUPPORTED, "module: %s runs host kernels, not device code", info_.name.c_str());
}

rig_status MemoryDevice::check_part(const Part &part) {
  if (part.kind == RIG_PART_LAUNCH)
    return fail(RIG_UNSUPPORTED, "submission: %s runs host kernels, not launches", info_.name.c_str());
  return RIG_OK;
}

void run_host_part(const Part &p, std::span<const Binding> slots) {
  switch (p.kind) {
    case RIG_PART_COPY:
      if (p.length)
        std::memmove(static_cast<char *>(slots[p.dst_slot].host()) + p.dst_offset,
                     static_cast<char *>(slots[p.src_slot].host()) + p.src_offset, p.length);
      break;
    case RIG_PART_FILL:
      if (p.length) std::memset(static_cast<char *>(slots[p.dst_slot].host()) + p.dst_offset, p.byte, p.length);
      break;
    case RIG_PART_HOST_KERNEL: {
      // Slots are bounded by the submission (256), so the spans live on the stack.
      rig_span spans[256];
      for (size_t i = 0; i < slots.size(); ++i) spans[i] = {slots[i].host(), slots[i].length};
      p.fn(p.user, spans, slots.size());
      break;
    }
    default:
      break;
  }
}

rig_status MemoryDevice::hand_over(const Work &work, uint64_t value, std::span<const QueueWait>) {
  if (lost()) return fail(RIG_LOST, "%s is lost", info_.name.c_str());
  for (const Part &p : work.parts) run_host_part(p, work.slots);
  // release: a host that reads the value sees the work's writes.
  signaled_.store(value, std::memory_order_release);
  return RIG_OK;
}

rig_status MemoryDevice::wait(uint64_t value, Deadline) {
  if (signaled() >= value) return RIG_OK;
  // Work runs inline, so an unreached value only exists after a fault.
  return fail(RIG_LOST, "%s lost before value %llu", info_.name.c_str(), static_cast<unsigned long long>(value));
}

void MemoryDevice::fault(const char *why) {
  uint64_t s = signaled();
  if (s) signaled_.store(s - 1, std::memory_order_release);
  report_loss(why);
}

}  // namespace rig
