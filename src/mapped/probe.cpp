// The order of the self-test and why:
//  1. The windows of the map are compared with the reference before anything is registered: a reference
//     that differs, or a map that cannot be read, is the caller's fault and says nothing about the device.
//  2. The two windows must differ: a device that served one window's bytes for the other (a stale copy)
//     could not be told from a good one otherwise.
//  3. Both windows are registered at once (disjoint, page-aligned at 64 KiB), round-tripped into a buffer
//     whose every page first differs from the expected bytes (so a copy that skipped a page shows), and
//     compared. Wrong bytes
//     are the device's fault only if the map still equals the reference (else the file changed under us).
//  4. Best of 7 registered uploads against best of 7 staged copies (memcpy into alloc_host memory, then
//     upload), interleaved so that drift in the machine's load hits both sides alike.
//  5. The checked release of each window, then the cleanup, which runs whatever happened before: a window
//     still registered gets cleanup_tries more tries, the buffer is freed (tried twice).
#include "mapped/probe.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>

#include "core/deadline.h"
#include "core/error.h"
#include "core/status.h"
#include "mapped/compare.h"
#include "mapped/parallel.h"

namespace rig::mapped {
namespace {

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

double gbps(double bytes_per_s) { return bytes_per_s / 1e9; }

class Run {
 public:
  Run(const rig_probe_ops &ops, const void *map, const void *reference, size_t length, const ProbeOptions &o)
      : ops_(ops), opt_(o), length_(length), w_(window_length(length)) {
    for (int i = 0; i < 2; ++i) {
      win_[i] = const_cast<char *>(static_cast<const char *>(map)) + i * w_;
      ref_[i] = static_cast<const char *>(reference) + i * w_;
    }
  }

  rig_status run(Verdict *out) {
    if (w_ < window_unit) {
      *out = Verdict::inconclusive(format("the region (%zu bytes) is smaller than two windows of 64 KiB", length_));
      return RIG_OK;
    }
    mark("start");
    if (auto early = check_inputs()) {
      *out = *early;
      return RIG_OK;
    }
    log(format("windows of %zu bytes at %p and %p", w_, static_cast<void *>(win_[0]), static_cast<void *>(win_[1])));
    rig_status error = RIG_OK;
    try {
      mark("inputs checked");
      error = body();
    } catch (const std::bad_alloc &) {
      error = RIG_OUT_OF_MEMORY;
      failure_ = "rig ran out of memory";
    }
    cleanup();
    mark("cleanup");
    log("phases (ms): " + phases_);
    try {
      if (error != RIG_OK) {
        if (still_registered()) log("the probe stopped with an error and left a window registered: " + release_error_);
        return fail(error, "probe: %s%s", failure_.c_str(),
                    still_registered() ? "; a window stayed registered: never unmap the mapping" : "");
      }
      *out = decide();
    } catch (const std::bad_alloc &) {
      return RIG_OUT_OF_MEMORY;
    }
    return RIG_OK;
  }

 private:
  // Step 1 and 2: the caller's inputs. A verdict means stop before registering anything.
  std::optional<Verdict> check_inputs() {
    for (int i = 0; i < 2; ++i) {
      size_t at = 0;
      switch (compare_mapping(win_[i], ref_[i], w_, &at)) {
        case Compared::equal: break;
        case Compared::differ:
          return Verdict::inconclusive(format(
              "the reference differs from the mapping at byte %zu: read the same file region for both", i * w_ + at));
        case Compared::unreadable:
          return Verdict::inconclusive(
              format("the mapping cannot be read at byte %zu: map the file PROT_READ and within its size", i * w_ + at));
      }
    }
    if (first_difference(ref_[0], ref_[1], w_) == w_)
      return Verdict::inconclusive(format(
          "the two windows (%zu bytes each) hold the same bytes, so a stale copy could not be told from a good "
          "one: pick another region",
          w_));
    return std::nullopt;
  }

  // Steps 3 and 4. Returns OK, or a callback's OUT_OF_MEMORY / INTERRUPTED; any other callback failure
  // sets failure_ and returns OK (the verdict is Inconclusive).
  rig_status body() {
    rig_status s;
    if (!call("alloc_host", s = ops_.alloc_host(ops_.user, w_, &buffer_))) return fatal(s);
    mark("alloc_host");
    if (!buffer_) {
      failure_ = "alloc_host returned OK and no memory";
      return RIG_OK;
    }
    for (int i = 0; i < 2; ++i) {
      if (!call(format("register window %d", i), s = ops_.register_host(ops_.user, win_[i], w_))) return fatal(s);
      registered_[i] = true;
    }
    mark("register");
    for (int i = 0; i < 2; ++i) {
      poison(buffer_, ref_[i]);
      if (!call(format("round trip of window %d", i), s = ops_.round_trip(ops_.user, win_[i], buffer_, w_)))
        return fatal(s);
      size_t d = first_difference(buffer_, ref_[i], w_);
      if (d == w_) continue;
      size_t at = 0;
      if (compare_mapping(win_[i], ref_[i], w_, &at) != Compared::equal) {
        changed_ = format("the file changed during the probe (window %d, byte %zu): probe a region nobody writes", i,
                          i * w_ + at);
        return RIG_OK;
      }
      wrong_ = format("window %d came back from the device differing from the file at byte %zu", i, i * w_ + d);
      break;
    }
    mark("round trips");
    if (wrong_.empty()) {
      for (int k = 0; k < timed_runs; ++k) {
        uint64_t t0 = now(), t1 = 0;
        if (!call("registered upload", s = ops_.upload(ops_.user, win_[0], w_))) return fatal(s);
        t1 = now();
        note_duration(t0, t1, &best_registered_);
        t0 = now();
        // The staged copy as a loader makes it: the memcpy into page-locked memory on several threads.
        split_pass(w_, 64 << 10, [&](size_t off, size_t len) {
          std::memcpy(static_cast<char *>(buffer_) + off, win_[0] + off, len);
        });
        if (!call("staged upload", s = ops_.upload(ops_.user, buffer_, w_))) return fatal(s);
        t1 = now();
        note_duration(t0, t1, &best_staged_);
      }
      timed_ = true;
    }
    mark("timed copies");
    // The checked release: its failure is what gives a window its third try.
    for (int i = 1; i >= 0; --i) release_window(i, true);
    mark("release");
    return RIG_OK;
  }

  // Makes every 4 KiB page of the buffer differ from the expected bytes at its first byte, so that a copy
  // that left any page unwritten shows in the comparison (one byte a page: the probe stays cheap).
  void poison(void *buffer, const char *expected) {
    auto *b = static_cast<unsigned char *>(buffer);
    for (size_t off = 0; off < w_; off += 4096) b[off] = static_cast<unsigned char>(~expected[off]);
  }

  // Step 5: runs whatever happened.
  void cleanup() {
    for (int i = 1; i >= 0; --i)
      for (int t = 0; t < cleanup_tries && registered_[i]; ++t) release_window(i, false);
    if (buffer_) {
      for (int t = 0; t < 2 && buffer_; ++t) {
        clear_error();
        rig_status s = ops_.free_host(ops_.user, buffer_, w_);
        if (s == RIG_OK) {
          if (t > 0) recovered_ = "free_host failed once and succeeded on the retry";
          buffer_ = nullptr;
        } else {
          std::string e = describe(format("free_host of the probe's buffer (try %d)", t + 1), s);
          log(e);
          if (t == 1) not_freed_ = e;
        }
      }
    }
  }

  // `checked` only names the step in the log: the checked release is one more try before the cleanup's.
  void release_window(int i, bool checked) {
    if (!registered_[i]) return;
    clear_error();
    rig_status s = ops_.unregister_host(ops_.user, win_[i], w_);
    ++tries_[i];
    if (s == RIG_OK) {
      registered_[i] = false;
      if (tries_[i] > 1)
        recovered_ = format("the release of window %d failed %d time(s) and succeeded on try %d", i, tries_[i] - 1,
                            tries_[i]);
      return;
    }
    std::string e = describe(format("%s release of window %d (try %d)", checked ? "checked" : "cleanup", i, tries_[i]), s);
    release_error_ = e;
    log(e);
  }

  Verdict decide() {
    if (still_registered()) {
      std::string which;
      for (int i = 0; i < 2; ++i)
        if (registered_[i])
          which += format("%swindow %d [%p, +%zu) after %d tries", which.empty() ? "" : ", ", i,
                          static_cast<void *>(win_[i]), w_, tries_[i]);
      return Verdict::still_registered(which + " could not be released (last: " + release_error_ +
                                       "); never unmap, register again or probe again the mapping given to the probe");
    }
    if (!failure_.empty()) return Verdict::inconclusive(failure_);
    if (!recovered_.empty()) return Verdict::inconclusive(recovered_);
    if (!not_freed_.empty()) return Verdict::inconclusive("a buffer could not be freed: " + not_freed_);
    if (!changed_.empty()) return Verdict::inconclusive(changed_);
    if (!wrong_.empty())
      return Verdict::refused(RIG_REFUSAL_WRONG_BYTES,
                              wrong_ + ", while the mapping equals the reference: the driver's registration is false");
    if (!timed_ || clock_invalid_ || best_registered_ == 0 || best_staged_ == 0)
      return Verdict::inconclusive("the clock gave no valid duration for a copy");
    double reg = static_cast<double>(w_) * 1e9 / static_cast<double>(best_registered_);
    double stg = static_cast<double>(w_) * 1e9 / static_cast<double>(best_staged_);
    std::string speeds = format("registered %.2f GB/s, staged %.2f GB/s (best of %d, %zu bytes)", gbps(reg), gbps(stg),
                                timed_runs, w_);
    log(speeds);
    if (reg >= opt_.min_relative_speed * stg) return Verdict::usable(speeds, reg, stg);
    return Verdict::too_slow(speeds + format(": below %.2f of the staged copy's speed", opt_.min_relative_speed), reg, stg);
  }

  bool still_registered() const { return registered_[0] || registered_[1]; }

  // Wall time of each step, on the host's clock whatever ops.now_ns says: for the log, so that the cost of
  // a probe (goal: under 50 ms for 64 MiB) can be taken apart.
  void mark(const char *step) {
    uint64_t t = steady_ns();
    if (last_mark_) phases_ += format("%s%s %.2f", phases_.empty() ? "" : ", ", step, (t - last_mark_) / 1e6);
    last_mark_ = t;
  }

  // Records a failed callback; true when it succeeded.
  bool call(const std::string &what, rig_status s) {
    if (s == RIG_OK) return true;
    failure_ = describe(what, s);
    log(failure_);
    return false;
  }
  // After a failed call: the statuses the seed re-raises stop the probe as its own error.
  static rig_status fatal(rig_status s) { return (s == RIG_OUT_OF_MEMORY || s == RIG_INTERRUPTED) ? s : RIG_OK; }

  std::string describe(const std::string &what, rig_status s) const {
    const char *msg = last_error();
    return what + ": " + status_name(s) + (msg && *msg ? std::string(" (") + msg + ")" : std::string());
  }

  uint64_t now() { return ops_.now_ns ? ops_.now_ns(ops_.user) : steady_ns(); }
  void note_duration(uint64_t t0, uint64_t t1, uint64_t *best) {
    if (t1 <= t0) {
      clock_invalid_ = true;
      return;
    }
    uint64_t d = t1 - t0;
    if (*best == 0 || d < *best) *best = d;
  }

  void log(const std::string &m) {
    if (!opt_.log) return;
    try {
      opt_.log(m);
    } catch (...) {
      // A log that throws must not leave a window registered: the message is dropped.
    }
  }

  const rig_probe_ops &ops_;
  const ProbeOptions &opt_;
  const size_t length_;
  const size_t w_;
  char *win_[2];
  const char *ref_[2];
  void *buffer_ = nullptr;
  bool registered_[2] = {false, false};
  int tries_[2] = {0, 0};
  bool timed_ = false, clock_invalid_ = false;
  uint64_t best_registered_ = 0, best_staged_ = 0;
  std::string failure_, recovered_, not_freed_, changed_, wrong_, release_error_;
  uint64_t last_mark_ = 0;
  std::string phases_;
};

}  // namespace

rig_status probe_with(const rig_probe_ops &ops, const void *map, const void *reference, size_t length,
                      const ProbeOptions &options, Verdict *out) noexcept {
  try {
    Run r(ops, map, reference, length, options);
    return r.run(out);
  } catch (const std::bad_alloc &) {
    return fail(RIG_OUT_OF_MEMORY, "probe: out of memory");
  }
}

}  // namespace rig::mapped
