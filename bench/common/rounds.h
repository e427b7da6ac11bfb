// How bench/cuda and bench/vulkan measure rows against each other. One long pass per row, or the best of
// a few, lets a drift of the machine (clocks, another process, the queue's state) land on one row and not
// the other, so the ratio of two rows moves more than the difference it is meant to show. Instead: short
// passes, many rounds, every row measured once a round in an order shuffled each round, and each ratio the
// median over rounds of the two rows' ratio in that round, with the median's 95% confidence interval and
// the quartiles. bench/README.md, "bench/cuda: how it measures" and "bench/vulkan: how it measures", says
// why in figures. bench/interop measures the same way.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <utility>
#include <vector>

namespace bench {

// ---- a pass ----------------------------------------------------------------------------------------------

// A pass's times, in microseconds.
struct Pass {
  double wall_us = 0;  // per operation: enqueueing all, and waiting for the last
  double host_us = 0;  // per operation: the enqueueing only
  double tail_us = 0;  // the last finish() of the pass, in all: how far the device was behind, plus the wait
};

// Times one pass of `ops` operations (ops >= 1): op(i) enqueues operation i, finish() waits for everything
// enqueued. burst == 0: one stream of operations finished at the end (wall time is the chain's throughput,
// host time its enqueueing, which includes any blocking on a full queue). burst > 0: finished after every
// `burst` operations, so the device is never far enough behind to block the host (host time is the host's own).
template <class Op, class Finish>
Pass pass(int ops, int burst, Op &&op, Finish &&finish) {
  using Clock = std::chrono::steady_clock;
  auto micros = [](Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
  double host = 0, tail = 0;
  auto t0 = Clock::now();
  for (int i = 0; i < ops;) {
    int end = burst ? std::min(ops, i + burst) : ops;
    auto h0 = Clock::now();
    for (; i < end; ++i) op(i);
    auto h1 = Clock::now();
    host += micros(h1 - h0);
    finish();
    tail = micros(Clock::now() - h1);
  }
  return {micros(Clock::now() - t0) / ops, host / ops, tail};
}

// ---- rows and rounds -------------------------------------------------------------------------------------

// A row of a table: its chain's operation and finish, and what each round measured (a Result a round).
// (A constructor, not an aggregate: GCC 12 fails on a default member initializer in a class template.)
template <class Result>
struct Row {
  Row(const char *key_, const char *name_, std::function<void(int)> op_, std::function<void()> finish_)
      : key(key_), name(name_), op(std::move(op_)), finish(std::move(finish_)) {}
  const char *key;   // "a", "b", "b2", ...: ratios name rows by key
  const char *name;  // the table's label
  std::function<void(int)> op;
  std::function<void()> finish;
  std::vector<Result> rounds;
};

// Runs `count` rounds: each measures every row once (measure(row) appends one Result to row.rounds), in an
// order shuffled afresh each round, so neither a drift of the machine nor the row measured before (a slow
// one, say) favours a row, and no two rows are neighbours in every round. (A rotation kept the rows'
// neighbours: the noise row b2 followed b in every round, so b2/b could understate the noise that a/b sees.)
// The seed is fixed, so a run's order repeats.
template <class Result, class Measure>
void run_rounds(std::vector<Row<Result>> &rows, int count, Measure &&measure) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937 shuffle(20261202);
  for (int k = 0; k < count; ++k) {
    std::shuffle(order.begin(), order.end(), shuffle);
    for (size_t j : order) measure(rows[j]);
  }
}

// The row of `rows` with key `key`; nullptr where there is none (a row the machine left out).
template <class Result>
const Row<Result> *find_row(const std::vector<Row<Result>> &rows, const char *key) {
  for (const auto &r : rows)
    if (std::strcmp(r.key, key) == 0) return &r;
  return nullptr;
}

// Per-round figure f(x_k, y_k) of rows x and y, which have as many rounds: both measured in the same
// round, so a drift of the machine between rounds reaches both.
template <class Result, class F>
std::vector<double> paired(const Row<Result> &x, const Row<Result> &y, F &&f) {
  std::vector<double> out;
  for (size_t k = 0; k < x.rounds.size() && k < y.rounds.size(); ++k) out.push_back(f(x.rounds[k], y.rounds[k]));
  return out;
}

// ---- statistics ------------------------------------------------------------------------------------------

// Quantile q (0..1) of xs, by linear interpolation between order statistics; 0 for an empty xs.
inline double quantile(std::vector<double> xs, double q) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  double at = q * static_cast<double>(xs.size() - 1);
  size_t lo = static_cast<size_t>(at);
  size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (xs[hi] - xs[lo]) * (at - static_cast<double>(lo));
}

// A figure over the rounds: its median, the median's 95% confidence interval (distribution-free: the order
// statistics n/2 -+ 0.98 sqrt(n)), and the quartiles, which show how much one round's figure moves.
struct Spread {
  double median, lo, hi, q1, q3;
};

// The Spread of xs; all zero for an empty xs.
inline Spread spread(std::vector<double> xs) {
  if (xs.empty()) return {0, 0, 0, 0, 0};
  std::sort(xs.begin(), xs.end());
  double n = static_cast<double>(xs.size()), half = 0.98 * std::sqrt(n);
  auto at = [&](double rank) {  // 1-based rank, clamped
    long i = std::lround(rank);
    return xs[static_cast<size_t>(std::clamp<long>(i, 1, static_cast<long>(xs.size())) - 1)];
  };
  return {quantile(xs, 0.5), at(std::floor(n / 2 - half)), at(std::ceil(n / 2 + half + 1)), quantile(xs, 0.25),
          quantile(xs, 0.75)};
}

// The Spread of figure(x_k, y_k) over the rounds of rows `x` and `y` (keys); nothing where either row is
// missing.
template <class Result, class F>
std::optional<Spread> ratio(const std::vector<Row<Result>> &rows, const char *x, const char *y, F &&figure) {
  const Row<Result> *a = find_row(rows, x), *b = find_row(rows, y);
  if (!a || !b) return std::nullopt;
  return spread(paired(*a, *b, figure));
}

// Prints one ratio line: "  ratio LABEL x/y median M  95% CI lo-hi  quartiles q1-q3" and `note` after it.
inline void print_ratio(const char *label, const char *x, const char *y, const Spread &s, const char *note) {
  std::printf("  ratio %-4s %2s/%-2s median %.3f  95%% CI %.3f-%.3f  quartiles %.3f-%.3f%s\n", label, x, y, s.median,
              s.lo, s.hi, s.q1, s.q3, note);
}

}  // namespace bench
