// The interface between the ordering engine and a driver, split by concern: the device (this header: what
// it is, its memory and code, its loss), its work (core/driver_work.h: parts, hand-over, commit, the
// timeline, waits) and host registration (core/host_registration.h, CUDA and HIP only). The engine knows
// nothing of CUDA or Vulkan; a driver knows nothing of stamps. Every driver (memory, cuda, hip, vulkan, the
// tests' test driver) implements DriverDevice; memory, cuda, hip and vulkan are registered alike in
// drivers() (core/drivers.cpp), through which the registry opens every device by name.
#pragma once

#include <rig.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/driver_memory.h"
#include "core/driver_work.h"
#include "core/host_registration.h"
#include "core/memory_fd.h"
#include "core/semaphore_fd.h"
#include "core/native.h"

namespace rig {

// Facts a driver states about itself when it opens a device.
struct DriverInfo {
  std::string name;       // "cuda:0"
  std::string framework;  // "CUDA", "Vulkan", "memory", "test"
  std::string model;      // the device's model, as its driver names it
  rig_device_kind kind = RIG_DEVICE_GPU;
  uint64_t memory_bytes = 0;
  int integrated = -1;
  bool runs_host_kernels = false;  // memory devices and the test driver
  bool commits_at_hand_over = true;  // false: holds work until commit() (Vulkan, test driver's hold)
  // Set by a driver that runs its work inline at hand-over, holds nothing and waits in no queue (memory
  // devices): the word its signaled() reads. The engine then hands over a run of one host copy itself,
  // holding the turn: the memmove, then this word raised to the value (release), as the driver's hand_over
  // would, without the driver call (core/submit.cpp). Null elsewhere. Set before the engine sees the device.
  std::atomic<uint64_t> *inline_signal = nullptr;
  // Set by a driver that keeps, in one word, the last value it knows reached without asking its device
  // (the stream driver's events timeline: what its queries last saw). The engine reads it for the submit
  // path's question (Device::known_reached) instead of calling known_reached: a load where the call walked
  // the device, its driver, the driver's timeline and its slot, each a cache line a driver call has pushed
  // out. Every value at or below the word is reached; the word never goes down and lives as long as the
  // device. Null where the driver has no such word (its known_reached is asked). Set before the engine sees
  // the device.
  const std::atomic<uint64_t> *known_signal = nullptr;
};

// How a driver tells the engine its device failed (a fault seen on any thread), and asks the engine's answer.
// The engine's Device (core/device.h) is the one owner of a device's loss: drivers keep no flag of their own,
// so no driver can disagree with the engine about whether, since when or why a device is lost.
class LossSink {
 public:
  // Reports a fault: the first report makes the loss and its reason (copied), later ones are ignored. Never
  // blocks and takes no lock: a driver may call it holding its own locks.
  virtual void lose(const char *why) noexcept = 0;
  // The engine's answer: true once the device is lost. A report that made the loss is seen on return; one
  // racing another thread's report may return just before that thread marks the loss. Never blocks.
  virtual bool lost() const noexcept = 0;
  // The loss's reason (kept for the process), or null while not lost or while a report on another thread
  // has not yet stored it. Never blocks.
  virtual const char *lost_reason() const noexcept = 0;

 protected:
  ~LossSink() = default;
};

// One open device of a driver: the device concern (what it is, its memory, its code, its loss), and the
// work concern it implements too (DriverWork, core/driver_work.h); where it registers host memory, the
// host registration concern (HostRegistration) through host_registration(). Every call here may come from
// any thread at any time (drivers make them safe). A call that fails returns a status and sets the message
// with rig::fail (core/error.h).
class DriverDevice : public DriverWork {
 public:
  virtual ~DriverDevice() = default;
  // What the driver stated when it opened the device (info_, filled by the driver before the engine sees it).
  const DriverInfo &info() const { return info_; }

  // Memory and code (a driver declares these with RIG_DRIVER_DEVICE_OVERRIDES, below).
  virtual rig_status allocate(size_t length, rig_memory kind, Memory *out) = 0;
  virtual void free(const Memory &memory) noexcept = 0;
  // The program released the device and the engine waited for its every value: memory the driver keeps
  // for its own reuse (the stream driver's reuse pool) goes back to the system now, and what is freed
  // later (buffers that outlive the release) goes back at its free. May block; called holding no lock.
  virtual void released() noexcept {}
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
  // Mapped registration's access to the driver; null where the driver registers no host memory.
  virtual HostRegistration *host_registration() { return nullptr; }
  // Native streams and events of the device's API (core/native.h); null where the API has none.
  virtual NativeHandles *native() { return nullptr; }
  // Memory as file descriptors (core/memory_fd.h); null where the API has none.
  virtual MemoryFds *memory_fds() { return nullptr; }
  // Points as file descriptors (core/semaphore_fd.h); null where the API has none.
  virtual SemaphoreFds *semaphore_fds() { return nullptr; }

  // Set by the engine when the device opens (before any work); drivers report faults through it.
  void set_loss_sink(LossSink *sink) { loss_sink_ = sink; }
  // The engine's answer (LossSink::lost): asked by the driver itself, and by a consumer driver whose queue
  // waits on this device (a lost producer loses the consumer). False before the engine has the device.
  bool lost() const noexcept { return loss_sink_ && loss_sink_->lost(); }
  // The engine's reason for the loss, or null (LossSink::lost_reason).
  const char *lost_reason() const noexcept { return loss_sink_ ? loss_sink_->lost_reason() : nullptr; }

 protected:
  // Reports a fault to the engine, once per loss (the engine ignores later reports). Never blocks.
  void report_loss(const char *why) noexcept {
    if (loss_sink_) loss_sink_->lose(why);
  }

  DriverInfo info_;

 private:
  LossSink *loss_sink_ = nullptr;
};

// Declares DriverDevice's memory and code calls (contracts above) in a driver's device class, which
// defines them: every device implements all eight, and states so in one line instead of repeating the
// signatures.
#define RIG_DRIVER_DEVICE_OVERRIDES                                                                            \
  rig_status allocate(size_t length, rig_memory kind, Memory *out) override;                                   \
  void free(const Memory &memory) noexcept override;                                                           \
  rig_status map_host(void *host, size_t length, bool read_only, Memory *out) override;                        \
  rig_status map_peer(DriverDevice &owner, const Memory &memory, Memory *out) override;                        \
  void unmap(const Memory &mapping) noexcept override;                                                         \
  rig_status copy_to_host(const Memory &memory, size_t offset, void *dst, size_t length) override;             \
  rig_status copy_from_host(const Memory &memory, size_t offset, const void *src, size_t length) override;     \
  rig_status load_module(rig_module_format format, const void *bytes, size_t length,                           \
                         std::unique_ptr<DriverModule> *out) override;

// A driver: lists and opens devices by name prefix ("cuda", "vulkan"). Registered once in the registry.
class Driver {
 public:
  virtual ~Driver() = default;
  virtual const char *prefix() const = 0;
  // Loads the driver library if needed and lists its device names ("cuda:0", ...). Failure: empty list.
  virtual std::vector<std::string> list() = 0;
  // Opens device `ordinal` of this driver. RIG_NOT_FOUND with a message where it cannot.
  virtual rig_status open(unsigned ordinal, std::unique_ptr<DriverDevice> *out) = 0;
  // Opens the device this driver calls `name`, what follows "prefix:" in the device's name. By default the
  // name is an ordinal N and open(N) opens it; RIG_INVALID_ARGUMENT where it is none. The memory driver
  // takes any name. May block for the driver (core/drivers.cpp).
  virtual rig_status open_named(const std::string &name, std::unique_ptr<DriverDevice> *out);
  // The host as a device (the registry's index 0, never stamped): only the memory driver makes it, every
  // other answers RIG_UNSUPPORTED. Never blocks.
  virtual rig_status open_host(std::unique_ptr<DriverDevice> *out);
};

// The drivers compiled in, memory devices first, in the order `rig devices` lists them (defined in
// src/core/drivers.cpp). Each driver is registered alike: the registry opens every device through this list.
std::span<Driver *const> drivers();

}  // namespace rig
