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
  collect_observer.fn.store(observer, std::memory_order_seq_cst);
  // Each device's flag (Device::observed). seq_cst against register_device's store of a new device and its
  // load of the observer: this walk sees the device, or the device sees the observer.
  for (uint32_t i = 1; i < 65536; ++i)
    if (Device *d = device_table[i].load(std::memory_order_seq_cst)) d->set_observed(observer != nullptr);
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

// Step 3 for what `collected` names: each point not yet reached has its device committed, then is waited
// for in `self`'s queue where the driver can (into in_queue, past kInline into spill; *queue_waits: all of
// them), else on the host with no lock held.
[[gnu::always_inline]] inline rig_status wait_collected(Device &self, const Collected &collected, QueueWait *in_queue,
                          std::vector<QueueWait> &in_queue_spill, std::span<const QueueWait> *queue_waits) {
  size_t queued = 0;
  for (size_t i = 0; i < collected.size(); ++i) {
    QueueWait wait;
    bool in_queue_wait;
    if (rig_status s = submit_detail::wait_for(self, collected.data()[i], &wait, &in_queue_wait); s != RIG_OK) return s;
    if (!in_queue_wait) continue;
    if (queued < Collected::kInline) [[likely]]
      in_queue[queued++] = wait;
    else
      spill(in_queue_spill, wait);
  }
  *queue_waits = std::span<const QueueWait>(in_queue, queued);
  if (!in_queue_spill.empty()) [[unlikely]]
    *queue_waits = join(in_queue, queued, in_queue_spill);
  return RIG_OK;
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
  if (auto observe = submit_detail::observer(self)) [[unlikely]]
    observe(testing::collect_observer.user.load(std::memory_order_relaxed), self.index(), collected.data(),
            collected.size());

  // 3. For each point not yet reached: commit its device, then wait for it in this device's queue where
  // the driver can, else on the host with no lock held.
  QueueWait in_queue[Collected::kInline];  // trivially constructible: not zeroed on every submit
  std::vector<QueueWait> in_queue_spill;
  std::span<const QueueWait> queue_waits;
  if (rig_status s = wait_collected(self, collected, in_queue, in_queue_spill, &queue_waits); s != RIG_OK) return s;
  return submit_detail::in_turn(
      self, point,
      [&](uint64_t value) {
        if (const Run::InlineCopy *copy = run.inline_copy()) return submit_detail::hand_over_inline_copy(*copy, self, value);
        return submit_detail::hand_over(run, self, value, queue_waits);
      },
      [&](uint64_t here) { submit_detail::raise_stamps(run.stamping(), here); });
}

namespace {

// Rule 3 inside a batch: whether an earlier run of the batch than runs[k] writes `stamps`' allocation. Then
// runs[k]'s read finds that run's value as the last write, this device's own (rule 1), as it would were the
// runs submitted one by one; the allocation's last write before the batch is not runs[k]'s to follow.
bool written_earlier(std::span<Run *const> runs, size_t k, const Stamps *stamps) {
  for (size_t j = 0; j < k; ++j)
    for (const Run::Stamping &slot : runs[j]->stamping())
      if (slot.stamps == stamps && (slot.access & RIG_ACCESS_WRITE)) return true;
  return false;
}

// Step 2 for runs[k] of a batch: collect_slots, less the last writes an earlier run of the batch replaces.
void collect_batch_run(std::span<Run *const> runs, size_t k, Collected &collected) {
  for (const Run::Stamping &slot : runs[k]->stamping()) {
    if (rule_on(3) && (slot.access & RIG_ACCESS_READ) && !written_earlier(runs, k, slot.stamps))
      collected.add(slot.stamps->last_write());
    if (rule_on(4) && (slot.access & RIG_ACCESS_WRITE)) slot.stamps->for_each_use([&](uint64_t p) { collected.add(p); });
  }
}

// The tests' observer, once per run of a batch: what that run alone collects (its slots and the waits).
[[gnu::cold]] void report_batch(std::span<Run *const> runs, const rig_point *waits, size_t wait_count,
                                testing::CollectObserver observe) {
  uint32_t self = runs[0]->device().index();
  for (size_t k = 0; k < runs.size(); ++k) {
    Collected collected(self);
    collect_batch_run(runs, k, collected);
    for (size_t i = 0; i < wait_count; ++i)
      if (rule_on(2)) collected.add(waits[i]);
    observe(testing::collect_observer.user.load(std::memory_order_relaxed), self, collected.data(), collected.size());
  }
}

// Step 1 for a batch: one device, open, every run ready, the waits named. Nothing is assigned on a refusal.
rig_status check_batch(std::span<Run *const> runs, const rig_point *waits, size_t wait_count) {
  if (runs.empty()) return fail(RIG_INVALID_ARGUMENT, "submit_many: no runs");
  if (runs.size() > RIG_SUBMIT_MANY_MAX)
    return fail(RIG_INVALID_ARGUMENT, "submit_many: %zu runs, more than RIG_SUBMIT_MANY_MAX (%d)", runs.size(),
                RIG_SUBMIT_MANY_MAX);
  Device &self = runs[0]->device();
  for (size_t i = 1; i < runs.size(); ++i)
    if (&runs[i]->device() != &self)
      return fail(RIG_INVALID_ARGUMENT, "submit_many: run %zu is on %s, run 0 on %s: a batch is one device's", i,
                  runs[i]->device().info().name.c_str(), self.info().name.c_str());
  if (!self.open()) [[unlikely]]
    return self.released() ? fail(RIG_LOST, "%s was released", self.info().name.c_str()) : self.lost_status();
  for (Run *run : runs)
    if (rig_status s = run->check_ready(); s != RIG_OK) return s;
  if (wait_count && !waits) return fail(RIG_INVALID_ARGUMENT, "submit_many: null waits for %zu points", wait_count);
  return RIG_OK;
}

// in_turn's hand-over of a batch from value `first`: on a device that runs work inline, each run as
// submit_waiting hands it over (its inline copy, or the driver's hand-over), each value assigned as it is
// run; else the driver's hand_over_batch (BatchWork: each run's work and record), then the last value
// assigned. Called holding the turn, the device not lost.
rig_status hand_over_batch(std::span<Run *const> runs, Device &self, uint64_t first, std::span<const QueueWait> waits) {
  if (self.runs_inline()) {
    for (size_t i = 0; i < runs.size(); ++i) {
      std::span<const QueueWait> before = i ? std::span<const QueueWait>() : waits;
      rig_status s = runs[i]->inline_copy() ? submit_detail::hand_over_inline_copy(*runs[i]->inline_copy(), self, first + i)
                                            : submit_detail::hand_over(*runs[i], self, first + i, before);
      if (s != RIG_OK) return s;
    }
    return RIG_OK;
  }
  BatchWork batch[RIG_SUBMIT_MANY_MAX];  // on the stack: a batch allocates nothing
  for (size_t i = 0; i < runs.size(); ++i) batch[i] = {runs[i]->work(), runs[i]->recorded()};
  rig_status s = self.driver().hand_over_batch(std::span<const BatchWork>(batch, runs.size()), first, waits);
  if (s == RIG_OK) [[likely]]
    self.assign(first + runs.size() - 1);
  return s;
}

}  // namespace

rig_status submit_many(std::span<Run *const> runs, const rig_point *waits, size_t wait_count, rig_point *points) {
  if (rig_status s = check_batch(runs, waits, wait_count); s != RIG_OK) return s;
  Device &self = runs[0]->device();
  // 2. Collect, once for the batch: what each run would collect submitted alone after the runs before it
  // (rules 3 and 4 per run, collect_batch_run) and the waits (rule 2), the highest point per other device.
  Collected collected(self.index());
  for (size_t k = 0; k < runs.size(); ++k) collect_batch_run(runs, k, collected);
  if (wait_count)
    if (rig_status s = collect_waits(waits, wait_count, collected); s != RIG_OK) return s;
  if (auto observe = submit_detail::observer(self)) [[unlikely]]
    report_batch(runs, waits, wait_count, observe);
  // 3. Everything any run must follow, before the first run: the later runs follow it by rule 1.
  QueueWait in_queue[Collected::kInline];
  std::vector<QueueWait> in_queue_spill;
  std::span<const QueueWait> queue_waits;
  if (rig_status s = wait_collected(self, collected, in_queue, in_queue_spill, &queue_waits); s != RIG_OK) return s;
  // 4. The turn once: the values submitted+1 .. +n, the batch handed over, the stamps raised run by run in
  // order (a later run's use and write rise above an earlier one's).
  std::lock_guard turn(self.turn());
  uint64_t first;
  if (rig_status s = submit_detail::next_value(self, "submit_many", &first); s != RIG_OK) return s;
  if (first + runs.size() - 1 > RIG_POINT_VALUE_MASK) [[unlikely]]
    return fail(RIG_INVALID_ARGUMENT, "submit_many: %s's timeline has no room for %zu values", self.info().name.c_str(),
                runs.size());
  if (rig_status s = hand_over_batch(runs, self, first, queue_waits); s != RIG_OK) [[unlikely]]
    return submit_detail::lose_at_hand_over(self);
  for (size_t i = 0; i < runs.size(); ++i) {
    uint64_t here = self.point(first + i);
    submit_detail::raise_stamps(runs[i]->stamping(), here);
    if (points) points[i] = here;
  }
  return RIG_OK;
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
