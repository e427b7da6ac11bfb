// Native streams and events: a native stream waits for rig's points, rig's queue waits for a native
// stream's work (a point taken from it), points leave as events and events come in as points.
#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>

#include "core/error.h"
#include "core/inline_list.h"
#include "core/registry.h"
#include "core/submit.h"
#include "interop/operations.h"

namespace rig::interop {
namespace {

// The rig points each native stream was made to wait for (stream_wait_point), so that a point taken from
// the stream later (stream_point) carries them: a producer lost short of one then loses that point instead
// of leaving rig's waits blocked behind a native wait CUDA never lets go. Keyed by (API, stream): a CUDA
// and a HIP stream may share an address. One point per device, its highest: a producer lost short of an
// earlier point is short of the later one too, so it carries the same loss, and the list is only as long as
// the devices the stream waited for. On an edge, points reached are dropped by what their devices know
// without asking (known_reached: at most one question a device, none for its newest mark), so an edge costs
// no driver call here however far the GPU is behind (each pending point asked about on every edge was the
// interop bench's largest cost on the fake, bench/README.md); streams whose points are all reached are
// dropped once the table grows (the program destroys streams unseen).
class StreamWaits {
 public:
  // The list of a stream point's carried waits: one per producer device, on the caller's stack (no heap
  // allocation per edge up to kInlineWaits devices).
  static constexpr size_t kInlineWaits = 8;
  using Carried = InlineList<QueueWait, kInlineWaits>;

  void add(const char *api, void *stream, uint64_t point) {
    std::lock_guard hold(lock_);
    if (by_stream_.size() > kSweepAt) sweep();
    Points &points = by_stream_[{api, stream}];
    for (uint64_t &p : points)
      if (point_device(p) == point_device(point)) {
        p = std::max(p, point);
        return;
      }
    points.keep_if(pending);
    points.push_back(point);
    devices_.fetch_or(bit(point_device(point)), std::memory_order_relaxed);
  }
  // Appends the waits still pending on the stream to *out, as in-queue waits of a value of `consumer`'s. A
  // wait for one of the consumer's own values is not carried: were it lost short of that value, the later
  // one is lost with it anyway (so bench/interop's edge, a stream waiting for the kernel of the device it then
  // takes a point of, carries nothing, and its device's queue tracks nothing). It stays in the table for
  // another device's point from the stream. No lock where the table holds no point of another device than
  // the consumer (devices_; the bench's edge): a stream point ordered after a stream_wait_point (the
  // stream's own order, which the program's synchronization gives) sees the bit that wait point set.
  void carried(const char *api, void *stream, uint32_t consumer, Carried *out) {
    uint64_t own = consumer < kManyDevices ? bit(consumer) : 0;
    if ((devices_.load(std::memory_order_relaxed) & ~own) == 0) return;
    std::lock_guard hold(lock_);
    auto it = by_stream_.find({api, stream});
    if (it == by_stream_.end()) return;
    it->second.keep_if([&](uint64_t p) {
      if (point_device(p) == consumer) return true;
      if (!pending(p)) return false;
      out->push_back({&device_at(point_device(p))->driver(), point_value(p)});
      return true;
    });
  }

 private:
  static constexpr size_t kSweepAt = 256;
  static constexpr uint32_t kManyDevices = 63;  // device indices from here on share devices_' last bit
  static uint64_t bit(uint32_t device) { return uint64_t{1} << std::min(device, kManyDevices); }
  using Points = InlineList<uint64_t, 4>;  // a stream's highest point per producer device
  // Reached, so never a reason for a loss (a lost device's unreached values stay: they are the reason). On
  // an edge, as far as the device knows without asking: a point reached but not known so stays a while, a
  // carried wait already settled, never a loss.
  static bool pending(uint64_t p) { return !device_at(point_device(p))->known_reached(point_value(p)); }
  // The sweep (rare: only while the table is large) asks, so that streams long done are dropped.
  static bool unreached(uint64_t p) { return !device_at(point_device(p))->reached(point_value(p)); }
  void sweep() {
    uint64_t devices = 0;
    for (auto it = by_stream_.begin(); it != by_stream_.end();) {
      it->second.keep_if(unreached);
      for (uint64_t p : it->second) devices |= bit(point_device(p));
      it = it->second.empty() ? by_stream_.erase(it) : std::next(it);
    }
    devices_.store(devices, std::memory_order_relaxed);
  }
  std::mutex lock_;
  std::map<std::pair<const char *, void *>, Points> by_stream_;
  // A bit for each device with a point in the table (set by add before its lock is let go, recomputed by the
  // sweep; a bit whose points were dropped stays until then), read without the lock. Bit 63 stands for
  // every index from 63 on, so it never lets a consumer of such an index skip the table.
  std::atomic<uint64_t> devices_{0};
};

StreamWaits &stream_waits() {
  static StreamWaits &w = *new StreamWaits;  // never destroyed: threads may still use it at exit
  return w;
}

}  // namespace

NativeHandles *native_of(Device &d, const char *what) {
  NativeHandles *n = d.driver().native();
  if (!n) fail(RIG_UNSUPPORTED, "%s: %s is not a CUDA or HIP device: it has no native streams or events", what,
               d.info().name.c_str());
  return n;
}

rig_status check_open(const Device &d, const char *what) {
  if (d.released()) return fail(RIG_LOST, "%s: %s was released", what, d.info().name.c_str());
  if (d.lost()) return d.lost_status();
  return RIG_OK;
}

rig_status resolve(uint64_t point, const char *what, Device **out) {
  Device *d = device_at(point_device(point));
  if (!d) return fail(RIG_NOT_FOUND, "%s: no device has index %u", what, point_device(point));
  if (point_value(point) > d->submitted())
    return fail(RIG_INVALID_ARGUMENT, "%s: %s:%llu is past its submitted value %llu", what, d->info().name.c_str(),
                static_cast<unsigned long long>(point_value(point)), static_cast<unsigned long long>(d->submitted()));
  *out = d;
  return RIG_OK;
}

rig_status supported(Device &device, Device *producer, rig_interop_kind kind, int *out) {
  NativeHandles *n = device.driver().native();
  Device &p = producer ? *producer : device;
  bool host_memory = device.is_host() || device.kind() == RIG_DEVICE_MEMORY;
  switch (kind) {
    case RIG_INTEROP_STREAM_WAIT:
      *out = n && (p.kind() == RIG_DEVICE_MEMORY || n->can_stream_wait(p.driver()));
      return RIG_OK;
    case RIG_INTEROP_STREAM_POINT:
    case RIG_INTEROP_IMPORT_EVENT:
      *out = n != nullptr;
      return RIG_OK;
    case RIG_INTEROP_EXPORT_EVENT:
      *out = !p.is_host() && p.driver().native() != nullptr;
      return RIG_OK;
    case RIG_INTEROP_DEVICE_POINTER:
    case RIG_INTEROP_DLPACK:
      *out = n != nullptr || host_memory;
      return RIG_OK;
    case RIG_INTEROP_HOST_FD:
      *out = 1;
      return RIG_OK;
    case RIG_INTEROP_IPC_MEMORY:
      *out = n && n->can_ipc_memory();
      return RIG_OK;
    case RIG_INTEROP_IPC_EVENT:
      *out = n && n->can_ipc_event();
      return RIG_OK;
    case RIG_INTEROP_MEMORY_FD: {
      MemoryFds *m = device.driver().memory_fds();
      *out = m && m->can_memory_fd();
      return RIG_OK;
    }
    case RIG_INTEROP_SEMAPHORE_FD:
    case RIG_INTEROP_SYNC_FD: {
      SemaphoreFds *f = device.driver().semaphore_fds();
      *out = f && (kind == RIG_INTEROP_SYNC_FD ? f->can_sync_fd() : f->can_semaphore_fd());
      return RIG_OK;
    }
    default:
      return fail(RIG_INVALID_ARGUMENT, "interop_supported: unknown kind %d", static_cast<int>(kind));
  }
}

rig_status stream_wait_point(Device &device, void *stream, uint64_t point) {
  NativeHandles *n = native_of(device, "stream_wait_point");
  if (!n) return RIG_UNSUPPORTED;
  if (rig_status s = check_open(device, "stream_wait_point"); s != RIG_OK) return s;
  if (!point) return RIG_OK;
  Device *p = nullptr;
  if (rig_status s = resolve(point, "stream_wait_point", &p); s != RIG_OK) return s;
  uint64_t value = point_value(point);
  // Memory devices reach a value before its submit returns: nothing to wait for.
  if (p->kind() == RIG_DEVICE_MEMORY) return RIG_OK;
  // Decided by the devices alone (rig_interop_supported's answer), never by whether the value is reached yet.
  if (!n->can_stream_wait(p->driver()))
    return fail(RIG_UNSUPPORTED,
                "stream_wait_point: a native stream of %s cannot wait in its queue for %s's points; wait for the "
                "point on the host (rig_wait_point) first",
                device.info().name.c_str(), p->info().name.c_str());
  if (p->known_reached(value)) return RIG_OK;
  if (p->lost()) {
    if (p->reached(value)) return RIG_OK;
    return p->lost_status();
  }
  if (rig_status s = p->commit_through(value); s != RIG_OK) return s;
  if (rig_status s = n->stream_wait(stream, p->driver(), value); s != RIG_OK) return s;
  stream_waits().add(n->api(), stream, point);
  return RIG_OK;
}

rig_status stream_point(Device &device, void *stream, uint64_t *point) {
  NativeHandles *n = native_of(device, "stream_point");
  if (!n) return RIG_UNSUPPORTED;
  if (rig_status s = check_open(device, "stream_point"); s != RIG_OK) return s;
  StreamWaits::Carried carried;
  stream_waits().carried(n->api(), stream, device.index(), &carried);
  return hand_over_empty(device, [&](uint64_t value) { return n->queue_wait_stream(stream, value, carried); }, point);
}

rig_status import_event(Device &device, void *event, uint64_t *point) {
  NativeHandles *n = native_of(device, "point_import_event");
  if (!n) return RIG_UNSUPPORTED;
  if (!event) return fail(RIG_INVALID_ARGUMENT, "point_import_event: null event");
  if (rig_status s = check_open(device, "point_import_event"); s != RIG_OK) return s;
  return hand_over_empty(device, [&](uint64_t value) { return n->queue_wait_event(event, value); }, point);
}

rig_status exported_device(uint64_t point, const char *what, Device **out) {
  if (!point) return fail(RIG_INVALID_ARGUMENT, "%s: the point 0 names no device", what);
  return resolve(point, what, out);
}

rig_status commit_for_export(Device &device, uint64_t value, bool *reached) {
  bool done = device.reached(value);
  if (!done && device.lost()) return device.lost_status();
  if (rig_status s = device.commit_through(value); s != RIG_OK && !done) return s;
  *reached = done;
  return RIG_OK;
}

rig_status exportable(uint64_t point, const char *what, Device **device, NativeHandles **native, bool *reached) {
  Device *p = nullptr;
  if (rig_status s = exported_device(point, what, &p); s != RIG_OK) return s;
  NativeHandles *n = native_of(*p, what);
  if (!n) return RIG_UNSUPPORTED;
  if (rig_status s = commit_for_export(*p, point_value(point), reached); s != RIG_OK) return s;
  *device = p;
  *native = n;
  return RIG_OK;
}

rig_status export_event(uint64_t point, void **event) {
  Device *p = nullptr;
  NativeHandles *n = nullptr;
  bool reached = false;
  if (rig_status s = exportable(point, "point_export_event", &p, &n, &reached); s != RIG_OK) return s;
  return n->export_event(point_value(point), reached, event);
}

}  // namespace rig::interop
