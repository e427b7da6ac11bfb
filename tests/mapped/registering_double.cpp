#include "registering_double.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "../doubles/common/host_pages.h"
#include "capi/devices.h"
#include "capi/handles.h"
#include "core/device.h"
#include "core/driver.h"
#include "core/error.h"
#include "core/registry.h"

namespace rig {
namespace {

class RegisteringDouble final : public DriverDevice, public HostRegistration {
 public:
  explicit RegisteringDouble(const rd_config &c) : config_(c) {
    static int n = 0;
    info_.name = "double:" + std::to_string(n++);
    info_.framework = c.framework;
    info_.model = "registering double";
    info_.kind = c.kind;
    info_.integrated = c.integrated;
  }
  // HostRegistration
  int integrated() override { return count(&rd_counts::queries), config_.integrated; }
  int pageable_uses_host_page_tables() override { return count(&rd_counts::queries), config_.pageable; }
  int read_only_supported() override { return count(&rd_counts::queries), config_.read_only_supported; }
  rig_status register_range(void *host, size_t length, bool read_only) override {
    std::lock_guard g(lock_);
    counts_.registers++;
    if (read_only) counts_.read_only_registers++;
    if (refuse_register_) return fail(RIG_DRIVER, "double: registration refused");
    registered_[reinterpret_cast<uintptr_t>(host)] = length;
    counts_.live_registrations = static_cast<unsigned>(registered_.size());
    return RIG_OK;
  }
  rig_status unregister_range(void *host) override {
    std::lock_guard g(lock_);
    counts_.unregisters++;
    if (unregister_failures_ != 0) {
      if (unregister_failures_ > 0) --unregister_failures_;
      return fail(RIG_DRIVER, "double: unregister failed (713, not registered)");
    }
    if (!registered_.erase(reinterpret_cast<uintptr_t>(host))) return fail(RIG_DRIVER, "double: 713 not registered");
    counts_.live_registrations = static_cast<unsigned>(registered_.size());
    return RIG_OK;
  }
  rig_status alloc_pinned(size_t length, void **out) override {
    count(&rd_counts::allocs);
    *out = std::malloc(length ? length : 1);
    return *out ? RIG_OK : fail(RIG_OUT_OF_MEMORY, "double: malloc");
  }
  rig_status free_pinned(void *host) override {
    count(&rd_counts::frees);
    std::free(host);
    return RIG_OK;
  }
  rig_status upload(const void *host, const Memory &device, size_t offset, size_t length) override {
    unsigned delay = 0;
    {
      std::lock_guard g(lock_);
      counts_.uploads++;
      // A registered file mapping's upload is the slow one; registered anonymous memory (the probe's staging)
      // is pinned like the driver's own allocations.
      if (is_registered(host)) {
        auto a = reinterpret_cast<uintptr_t>(host);
        if (fake_gpu::file_backed(a, a + length)) delay = delay_us_;
      }
    }
    if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    std::memcpy(static_cast<char *>(device.host) + offset, host, length);
    return RIG_OK;
  }
  rig_status download(const Memory &device, size_t offset, void *host, size_t length) override {
    count(&rd_counts::downloads);
    std::memcpy(host, static_cast<char *>(device.host) + offset, length);
    if (wrong_bytes_ && length) static_cast<char *>(host)[length / 2] ^= 0x40;
    return RIG_OK;
  }

  // DriverDevice: memory only; this double runs no work.
  rig_status allocate(size_t length, rig_memory, Memory *out) override {
    count(&rd_counts::device_allocs);
    out->host = std::malloc(length ? length : 1);
    out->length = length;
    return out->host ? RIG_OK : fail(RIG_OUT_OF_MEMORY, "double: malloc");
  }
  void free(const Memory &m) noexcept override {
    count(&rd_counts::device_frees);
    std::free(m.host);
  }
  rig_status map_host(void *, size_t, bool, Memory *) override { return fail(RIG_UNMAPPABLE, "double: no borrows"); }
  rig_status map_peer(DriverDevice &, const Memory &, Memory *) override { return fail(RIG_UNMAPPABLE, "double"); }
  void unmap(const Memory &) noexcept override {}
  rig_status copy_to_host(const Memory &m, size_t off, void *dst, size_t n) override {
    std::memcpy(dst, static_cast<char *>(m.host) + off, n);
    return RIG_OK;
  }
  rig_status copy_from_host(const Memory &m, size_t off, const void *src, size_t n) override {
    std::memcpy(static_cast<char *>(m.host) + off, src, n);
    return RIG_OK;
  }
  rig_status load_module(rig_module_format, const void *, size_t, std::unique_ptr<DriverModule> *) override {
    return fail(RIG_UNSUPPORTED, "double: no modules");
  }
  rig_status check_part(const Part &) override { return fail(RIG_UNSUPPORTED, "double: runs no work"); }
  bool can_wait_in_queue(const DriverDevice &) const override { return false; }
  rig_status hand_over(const Work &, uint64_t value, std::span<const QueueWait>) override {
    signaled_ = value;
    return RIG_OK;
  }
  rig_status commit() override { return RIG_OK; }
  uint64_t signaled() const override { return signaled_; }
  rig_status wait(uint64_t, Deadline) override { return RIG_OK; }
  HostRegistration *host_registration() override { return config_.registers ? this : nullptr; }

  rd_counts counts() {
    std::lock_guard g(lock_);
    return counts_;
  }
  void set(void (*fn)(RegisteringDouble &, int), int v) {
    std::lock_guard g(lock_);
    fn(*this, v);
  }

  bool wrong_bytes_ = false, refuse_register_ = false;
  int unregister_failures_ = 0;
  unsigned delay_us_ = 0;

 private:
  void count(unsigned rd_counts::*field) {
    std::lock_guard g(lock_);
    counts_.*field += 1;
  }
  bool is_registered(const void *p) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    auto it = registered_.upper_bound(a);
    if (it == registered_.begin()) return false;
    --it;
    return a < it->first + it->second;
  }

  rd_config config_;
  std::mutex lock_;
  rd_counts counts_{};
  std::map<uintptr_t, size_t> registered_;
  std::atomic<uint64_t> signaled_{0};
};

RegisteringDouble *double_of(rig_device d) {
  capi::Pinned<Device> p(capi::word_of(d), capi::Kind::device, "registering double");
  auto *r = p ? dynamic_cast<RegisteringDouble *>(&p->driver()) : nullptr;
  if (!r) std::abort();  // a test bug: not a double's device
  return r;
}

}  // namespace
}  // namespace rig

using rig::double_of;
using rig::RegisteringDouble;

extern "C" {

rig_status rd_open(const rd_config *c, rig_device *out) {
  return rig::capi::open_device(std::make_unique<RegisteringDouble>(*c), out);
}
rd_counts rd_get_counts(rig_device d) { return double_of(d)->counts(); }
void rd_set_wrong_bytes(rig_device d, int on) {
  double_of(d)->set([](RegisteringDouble &r, int v) { r.wrong_bytes_ = v != 0; }, on);
}
void rd_set_refuse_register(rig_device d, int on) {
  double_of(d)->set([](RegisteringDouble &r, int v) { r.refuse_register_ = v != 0; }, on);
}
void rd_set_unregister_failures(rig_device d, int n) {
  double_of(d)->set([](RegisteringDouble &r, int v) { r.unregister_failures_ = v; }, n);
}
void rd_set_registered_upload_delay_us(rig_device d, unsigned us) {
  double_of(d)->set([](RegisteringDouble &r, int v) { r.delay_us_ = static_cast<unsigned>(v); }, static_cast<int>(us));
}

}  // extern "C"
