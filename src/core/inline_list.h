// A list of at most a few items that lives in its owner (a stack frame, a table entry): the first N are
// inline, more spill to the heap. For the interop edge's lists (a native stream's carried waits: one per
// producer device), which a std::vector would allocate on every call: bench/README.md, "Why: the interop edge".
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace rig {

template <class T, size_t N>
class InlineList {
 public:
  InlineList() = default;
  InlineList(const InlineList &) = delete;
  InlineList &operator=(const InlineList &) = delete;

  // May allocate (std::bad_alloc) past N items only.
  void push_back(const T &item) {
    if (spill_.empty() && size_ < N) {
      inline_[size_++] = item;
      return;
    }
    push_spilled(item);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T *begin() { return spill_.empty() ? inline_ : spill_.data(); }
  T *end() { return begin() + size_; }
  const T *begin() const { return spill_.empty() ? inline_ : spill_.data(); }
  const T *end() const { return begin() + size_; }
  T &operator[](size_t i) { return begin()[i]; }
  operator std::span<const T>() const { return {begin(), size_}; }
  // Keeps the items for which keep(item) is true, in order.
  template <class Keep>
  void keep_if(Keep keep) {
    T *items = begin();
    size_t n = 0;
    for (size_t i = 0; i < size_; ++i)
      if (keep(items[i])) items[n++] = items[i];
    size_ = n;
    if (!spill_.empty()) spill_.resize(n);
  }

 private:
  [[gnu::noinline, gnu::cold]] void push_spilled(const T &item) {
    if (spill_.empty()) spill_.assign(inline_, inline_ + size_);
    spill_.push_back(item);
    ++size_;
  }
  T inline_[N];
  size_t size_ = 0;
  std::vector<T> spill_;  // all the items once past N (then inline_ is unused)
};

}  // namespace rig
