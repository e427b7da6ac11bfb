// What a submit does (docs/ordering-model.md): check, collect, commit and wait, take the turn, hand over, raise.
// The steps of a submit with nothing to wait for, and the turn, are inline in core/submit.h; here are the
// collect and the waits of the full path. Nothing here allocates on the heap unless it waits on the host or
// a submit names more than kInline foreign devices.
#include "core/submit.h"

#include <algorithm>
#include <vector>

namespace rig {

namespace testing {
Observer collect_observer;
void set_collect_observer(CollectObserver observer, void *user) {
  collect_observer.user.store(user, std::memory_order_relaxed);
  collect_observer.fn.store(observer, std::memory_order_release);
}
}  // namespace testing

namespace {

// The highest point per other device, kept in place: a handful of devices is the common case.
// Past kLinear distinct devices a small open-addressing index (built once, on the stack) finds a
// device's entry in O(1) instead of a scan, so a write to an allocation shared by D devices costs O(D).
class Collected {
 public:
  static constexpr size_t kInline = 64;
  static constexpr size_t kLinear = 8;
  static constexpr size_t kIndex = 256;  // index slots (power of 2), used while size_ < kIndex / 2

  explicit Collected(uint32_t self) : self_(self) {}

  // Inline for the common case (fewer than kLinear devices so far); the rest out of line.
  void add(uint64_t p) {
    if (!p) return;
    uint32_t d = point_device(p);
    if (rule_on(1) && d == self_) return;  // rule 1: a device never waits on its own work
    if (size_ < kLinear) {
      if (!raise_listed(inline_, d, p)) inline_[size_++] = p;
      return;
    }
    add_many(p, d);
  }
  const uint64_t *data() const { return spill_.empty() ? inline_ : spill_.data(); }
  uint64_t *data() { return spill_.empty() ? inline_ : spill_.data(); }
  size_t size() const { return size_; }

 private:
  // Scans for device d's entry and raises it to p: false if d is not listed yet.
  bool raise_listed(uint64_t *items, uint32_t d, uint64_t p) {
    for (size_t i = 0; i < size_; ++i)
      if (point_device(items[i]) == d) {
        if (p > items[i]) items[i] = p;
        return true;
      }
    return false;
  }
  [[gnu::noinline]] void add_many(uint64_t p, uint32_t d) {
    uint64_t *items = data();
    if (size_ > kLinear && size_ < kIndex / 2) {
      size_t h = (d * 2654435761u) & (kIndex - 1);
      while (index_[h]) {
        uint64_t &it = items[index_[h] - 1];
        if (point_device(it) == d) {
          if (p > it) it = p;
          return;
        }
        h = (h + 1) & (kIndex - 1);
      }
      index_[h] = static_cast<uint16_t>(size_ + 1);
    } else if (raise_listed(items, d, p)) {
      return;
    }
    if (size_ == kInline && spill_.empty()) spill_.assign(inline_, inline_ + kInline);
    if (size_ >= kInline)
      spill_.push_back(p);
    else
      inline_[size_] = p;
    ++size_;
    if (size_ == kLinear + 1) build_index();
  }
  void build_index() {
    std::fill(index_, index_ + kIndex, uint16_t{0});
    const uint64_t *items = data();
    for (size_t i = 0; i < size_; ++i) {
      size_t h = (point_device(items[i]) * 2654435761u) & (kIndex - 1);
      while (index_[h]) h = (h + 1) & (kIndex - 1);
      index_[h] = static_cast<uint16_t>(i + 1);
    }
  }
  uint32_t self_;
  size_t size_ = 0;
  uint64_t inline_[kInline];
  uint16_t index_[kIndex];
  std::vector<uint64_t> spill_;
};

// Past kInline in-queue waits: the rest go to the heap, and join() puts the first kInline before them.
[[gnu::noinline, gnu::cold]] void spill(std::vector<QueueWait> &waits, QueueWait wait) { waits.push_back(wait); }
[[gnu::noinline, gnu::cold]] std::span<const QueueWait> join(const QueueWait *first, size_t count,
                                                           std::vector<QueueWait> &rest) {
  rest.insert(rest.begin(), first, first + count);
  return rest;
}

// Rule 2: the submit's explicit waits, each checked to name a submitted value. Out of line: most submits
// name none, and the submit path is fetched again after every driver call (see submit's comment).
[[gnu::noinline]] rig_status collect_waits(const rig_point *waits, size_t wait_count, Collected &collected) {
  for (size_t i = 0; i < wait_count; ++i) {
    uint64_t w = waits[i];
    if (!w) continue;
    Device *d = device_at(point_device(w));
    if (!d) return fail(RIG_INVALID_ARGUMENT, "submit: wait %zu names device index %u, which no device has", i, point_device(w));
    if (point_value(w) > d->submitted())
      return fail(RIG_INVALID_ARGUMENT, "submit: wait %zu is %s:%llu, past its submitted value %llu", i,
                  d->info().name.c_str(), static_cast<unsigned long long>(point_value(w)),
                  static_cast<unsigned long long>(d->submitted()));
    if (rule_on(2)) collected.add(w);
  }
  return RIG_OK;
}

// Step 2: the last write of what the run reads (rule 3) and every other use of what it writes (rule 4).
inline void collect_slots(std::span<const Run::Stamping> slots, Collected &collected) {
  for (const Run::Stamping &slot : slots) {
    if (rule_on(3) && (slot.access & RIG_ACCESS_READ)) collected.add(slot.stamps->last_write());
    if (rule_on(4) && (slot.access & RIG_ACCESS_WRITE)) slot.stamps->for_each_use([&](uint64_t p) { collected.add(p); });
  }
}

}  // namespace

namespace submit_detail {
void report_collected(const Run &run, uint32_t self, testing::CollectObserver observe) {
  Collected collected(self);
  collect_slots(run.stamping(), collected);
  observe(testing::collect_observer.user.load(std::memory_order_relaxed), self, collected.data(), collected.size());
}
}  // namespace submit_detail

// Hot, with its failure paths cold (fail() is): on a GPU every submit runs between driver calls whose own
// code evicts the instruction cache, so the path is fetched again each time; laid out together and without
// its rare branches it is a few kilobytes fewer to fetch (bench/README.md, "Why: the submit path").
[[gnu::hot]] rig_status submit_waiting(Run &run, const rig_point *waits, size_t wait_count, rig_point *point) {
  Device &self = run.device();
  // 2. Collect: the last write of what it reads (rule 3), every other use of what it writes (rule 4), and
  // its explicit waits (rule 2).
  Collected collected(self.index());
  collect_slots(run.stamping(), collected);
  if (wait_count)
    if (rig_status s = collect_waits(waits, wait_count, collected); s != RIG_OK) return s;
  if (auto observe = testing::collect_observer.fn.load(std::memory_order_acquire)) [[unlikely]]
    observe(testing::collect_observer.user.load(std::memory_order_relaxed), self.index(), collected.data(),
            collected.size());

  // 3. For each point not yet reached: commit its device, then wait for it in this device's queue where
  // the driver can, else on the host with no lock held.
  QueueWait in_queue[Collected::kInline];  // trivially constructible: not zeroed on every submit
  std::vector<QueueWait> in_queue_spill;
  size_t queued = 0;
  DriverDevice &driver = self.driver();
  for (size_t i = 0; i < collected.size(); ++i) {
    uint64_t p = collected.data()[i];
    Device &d = *device_at(point_device(p));
    uint64_t v = point_value(p);
    if (d.known_reached(v)) continue;
    if (d.lost()) {
      if (d.reached(v)) continue;  // reached before the loss (what the driver knew lagged)
      return d.lost_status();
    }
    if (driver.can_wait_in_queue(d.driver())) {
      if (rig_status s = d.commit_through(v); s != RIG_OK) return s;
      if (queued < Collected::kInline) [[likely]]
        in_queue[queued++] = {&d.driver(), v};
      else
        spill(in_queue_spill, {&d.driver(), v});
    } else if (rig_status s = d.wait(v, Deadline::forever()); s != RIG_OK) {
      return s;
    }
  }
  std::span<const QueueWait> queue_waits(in_queue, queued);
  if (!in_queue_spill.empty()) [[unlikely]]
    queue_waits = join(in_queue, queued, in_queue_spill);
  return submit_detail::in_turn(
      self, point,
      [&](uint64_t value) {
        if (const Run::InlineCopy *copy = run.inline_copy()) return submit_detail::hand_over_inline_copy(*copy, self, value);
        return submit_detail::hand_over(run, self, value, queue_waits);
      },
      [&](uint64_t here) { submit_detail::raise_stamps(run.stamping(), here); });
}

rig_status hand_over_empty(Device &device, CallableRef<rig_status(uint64_t)> wait, rig_point *point) {
  std::lock_guard turn(device.turn());
  if (device.released()) return fail(RIG_LOST, "point: %s was released", device.info().name.c_str());
  uint64_t value;
  if (rig_status s = submit_detail::next_value(device, "point", &value); s != RIG_OK) return s;
  if (rig_status s = wait(value); s != RIG_OK) {
    if (device.driver().lost()) device.lose_now(last_error());  // the device's own queue refused the wait
    return s;                                                    // else: the native handle, nothing assigned
  }
  // No work of its own: a stream driver holds the value unmarked (its next mark proves it: one record fewer
  // per edge), and a wait for it commits first, which marks it (DriverWork::hand_over_empty).
  bool held = false;
  if (rig_status s = device.driver().hand_over_empty(value, &held); s != RIG_OK)
    return submit_detail::lose_at_hand_over(device);
  if (held)
    device.assign_held(value);
  else
    device.assign(value);
  *point = device.point(value);
  return RIG_OK;
}

void raise_outside(const Buffer &buffer, Device &device, uint64_t point, bool write) {
  Stamps &stamps = buffer.allocation->stamps();
  // The buffer's own device's word is at hand (the common stamp: a stream of the buffer's device); another
  // device's may take the stamps' lock (its first stamp makes it): before the turn.
  std::atomic<uint64_t> *word = &device == buffer.device && buffer.use ? buffer.use : stamps.use_word(device);
  if (!write) {
    Stamps::raise_use_unturned(word, point);  // a read: no turn taken (core/stamps.h says why that is safe)
    return;
  }
  std::lock_guard turn(device.turn());
  Stamps::raise_use(word, point);
  stamps.raise_write(point);
}

}  // namespace rig
