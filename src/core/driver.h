// The one interface between the ordering engine and a driver. The engine knows nothing of CUDA or Vulkan;
// a driver knows nothing of stamps. Every driver (memory, cuda, hip, vulkan, the tests' test driver)
// implements DriverDevice and registers a DriverFactory.
#pragma once

#include <rig.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/deadline.h"

namespace rig {

// Memory as the driver sees it. `host` is set where the host addresses the bytes (host, memory device,
// pinned, mapped memory); `address` is what work uses (a CUDA device pointer, a Vulkan buffer's device
// address or 0); `handle` is the driver's own object (VkBuffer, ...). The engine only copies this around.
struct Memory {
  void *host = nullptr;
  uint64_t address = 0;
  uintptr_t handle = 0;
  uintptr_t extra = 0;  // a second driver word (Vulkan: its VkDeviceMemory)
  size_t length = 0;
};

// One slot of a run as the driver receives it: a range of some Memory.
struct Binding {
  const Memory *memory = nullptr;
  size_t offset = 0;
  size_t length = 0;
  rig_access access = RIG_ACCESS_READ;
  void *host() const { return memory && memory->host ? static_cast<char *>(memory->host) + offset : nullptr; }
};

// A driver's loaded module and a function in it (opaque to the engine).
struct DriverModule {
  virtual ~DriverModule() = default;
  // Finds a function by name; its handle goes into Part::function. RIG_NOT_FOUND with a message otherwise.
  virtual rig_status find(const char *name, uintptr_t *function) = 0;
};

// A part of some work, checked by the engine against the slots before any driver sees it.
struct Part {
  rig_part_kind kind = RIG_PART_COPY;
  uint32_t src_slot = 0, dst_slot = 0;
  size_t src_offset = 0, dst_offset = 0, length = 0;
  uint8_t byte = 0;
  rig_host_kernel_fn fn = nullptr;
  void *user = nullptr;
  DriverModule *module = nullptr;
  uintptr_t function = 0;
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;
  std::vector<uint32_t> slots;  // a launch's slot arguments (made once, at rig_submission_make)
};

// What one submit hands over: the parts and the run's bindings and scalars.
struct Work {
  std::span<const Part> parts;
  std::span<const Binding> slots;
  std::span<const std::byte> scalars;
};

class DriverDevice;

// What mapped registration (src/mapped) needs of a driver that can register host memory (CUDA, HIP).
// Reached through DriverDevice::host_registration(); null for drivers that cannot register.
class HostRegistration {
 public:
  // 1 integrated, 0 discrete, -1 the query failed.
  virtual int integrated() = 0;
  // The device reads pageable host memory through the host's page tables (Grace Hopper): 1, 0, -1.
  virtual int pageable_uses_host_page_tables() = 0;
  // Registration with a read-only flag is supported: 1, 0, -1.
  virtual int read_only_supported() = 0;
  // Registers [host, host+length) with the driver (read-only flag where asked): the raw driver call only.
  // Only the engine's range table (core/range_table.h) calls these, so overlapping ranges never reach the
  // driver and every registration is released once.
  virtual rig_status register_range(void *host, size_t length, bool read_only) = 0;
  virtual rig_status unregister_range(void *host) = 0;
  // Page-locked host memory for staging.
  virtual rig_status alloc_pinned(size_t length, void **out) = 0;
  virtual rig_status free_pinned(void *host) = 0;
  // Host-synchronous copies between host memory (registered, pinned or pageable) and device memory.
  virtual rig_status upload(const void *host, const Memory &device, size_t offset, size_t length) = 0;
  virtual rig_status download(const Memory &device, size_t offset, void *host, size_t length) = 0;

 protected:
  ~HostRegistration() = default;
};

// A wait the submitting device makes in its own queue on another device's value (rule 2..4's foreign
// points, when can_wait_in_queue said yes). The producer was committed through `value` first.
struct QueueWait {  // no member initializers: submit keeps an array of these on the stack, unzeroed
  DriverDevice *producer;
  uint64_t value;
};

// Facts a driver states about itself when it opens a device.
struct DriverInfo {
  std::string name;       // "cuda:0"
  std::string framework;  // "CUDA", "Vulkan", "memory", "test"
  std::string model;      // "NVIDIA H200"
  rig_device_kind kind = RIG_DEVICE_GPU;
  uint64_t memory_bytes = 0;
  int integrated = -1;
  bool runs_host_kernels = false;  // memory devices and the test driver
  bool commits_at_hand_over = true;  // false: holds work until commit() (Vulkan, test driver's hold)
};

// How a driver tells the engine its device failed (a fault seen on any thread). Set by the engine.
class LossSink {
 public:
  virtual void lose(const char *why) noexcept = 0;

 protected:
  ~LossSink() = default;
};

// One open device of a driver. All calls come from the engine, which guarantees:
//  - hand_over and commit are called holding the device's turn (one caller at a time);
//  - every other call may come from any thread at any time (drivers make them safe);
//  - wait is called with no lock of the engine held, after commit covered the value.
// A call that fails returns a status and sets the message with rig::fail (core/error.h).
class DriverDevice {
 public:
  virtual ~DriverDevice() = default;
  virtual const DriverInfo &info() const = 0;

  // Memory.
  virtual rig_status allocate(size_t length, rig_memory kind, Memory *out) = 0;
  virtual void free(const Memory &memory) noexcept = 0;
  // Makes host memory usable by this device's work: RIG_UNMAPPABLE with the reason where it cannot. Where
  // host_registration() is not null, the engine has registered the enclosing pages through the range
  // table before this call and releases them after unmap: the driver only finds the device's address.
  virtual rig_status map_host(void *host, size_t length, bool read_only, Memory *out) = 0;
  // Makes another device's memory usable here (peer access): RIG_UNMAPPABLE where it cannot.
  virtual rig_status map_peer(DriverDevice &owner, const Memory &memory, Memory *out) = 0;
  virtual void unmap(const Memory &mapping) noexcept = 0;
  // Host-synchronous copies used by host reads and writes after the engine's waits.
  virtual rig_status copy_to_host(const Memory &memory, size_t offset, void *dst, size_t length) = 0;
  virtual rig_status copy_from_host(const Memory &memory, size_t offset, const void *src, size_t length) = 0;

  // Code.
  virtual rig_status load_module(rig_module_format format, const void *bytes, size_t length,
                                 std::unique_ptr<DriverModule> *out) = 0;
  // Checks a part the engine has already range-checked (RIG_UNSUPPORTED for what the device cannot run).
  virtual rig_status check_part(const Part &part) = 0;
  // Checks a run whose every slot is bound and in range against what the device can bind (a binding
  // range limit, say): RIG_INVALID_ARGUMENT with a message. Called when a run's buffers change, never on
  // the submit path, so that work hand_over would have to refuse (which loses the device) is refused at
  // rig_submit instead, leaving the device as it was.
  virtual rig_status check_work(const Work &) const { return RIG_OK; }

  // Timeline.
  // True where this device's queue can wait on `producer`'s timeline values itself.
  virtual bool can_wait_in_queue(const DriverDevice &producer) const = 0;
  // Takes the work of timeline value `value` (= previous + 1), to run after `waits` and after value-1.
  // A failure here loses the device. May block (a full queue) while the engine holds the turn.
  virtual rig_status hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) = 0;
  // Makes every value handed over so far eligible to run. A failure loses the device.
  virtual rig_status commit() = 0;
  // The last value the device's timeline shows reached. A pure read: commits nothing, never blocks
  // (it may ask the device, which costs a driver call).
  virtual uint64_t signaled() const = 0;
  // Whether `value` is reached; as signaled() >= value, but a driver may answer it with one question
  // about that value where finding the last one reached would take several.
  virtual bool reached(uint64_t value) const { return signaled() >= value; }
  // Whether `value` is reached, as far as the driver can tell cheaply: may answer no for a value already
  // reached. The submit path asks it for every point it collects, so a driver whose signaled() costs a
  // call answers from what it last saw, asking the device only where that is likely to pay; a wrong no
  // costs an in-queue wait for work already done (or a host wait that returns at once), never a missed one.
  virtual bool known_reached(uint64_t value) const { return signaled() >= value; }
  // Blocks until signaled() >= value or the deadline or an interrupt (core/deadline.h): OK, TIMEOUT,
  // INTERRUPTED, or LOST (after calling the loss sink) on a fault.
  virtual rig_status wait(uint64_t value, Deadline deadline) = 0;

  // Mapped registration's access to the driver; null where the driver registers no host memory.
  virtual HostRegistration *host_registration() { return nullptr; }

  // Set by the engine when the device opens; drivers report faults through it.
  void set_loss_sink(LossSink *sink) { loss_sink_ = sink; }
  // Read by a consumer driver whose queue waits on this device: a lost producer loses the consumer.
  bool lost() const { return lost_.load(std::memory_order_acquire); }
  void mark_lost() { lost_.store(true, std::memory_order_release); }

 protected:
  void report_loss(const char *why) noexcept {
    if (loss_sink_) loss_sink_->lose(why);
  }

 private:
  LossSink *loss_sink_ = nullptr;
  std::atomic<bool> lost_{false};
};

// A driver: lists and opens devices by name prefix ("cuda", "vulkan"). Registered once in the registry.
class Driver {
 public:
  virtual ~Driver() = default;
  virtual const char *prefix() const = 0;
  // Loads the driver library if needed and lists its device names ("cuda:0", ...). Failure: empty list.
  virtual std::vector<std::string> list() = 0;
  // Opens device `ordinal` of this driver. RIG_NOT_FOUND with a message where it cannot.
  virtual rig_status open(unsigned ordinal, std::unique_ptr<DriverDevice> *out) = 0;
};

// The drivers compiled in, in the order `rig devices` lists them (defined in src/core/drivers.cpp).
std::span<Driver *const> drivers();

}  // namespace rig
