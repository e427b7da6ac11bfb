#include "core/stamps.h"

namespace rig {

Stamps::~Stamps() = default;

std::atomic<uint64_t> *Stamps::use_word(const Device &device) {
  std::lock_guard g(grow_);
  for (auto &[owner, word] : owners_)
    if (owner == &device) return word;
  Chunk *c = more_.empty() ? &first_ : more_.back().get();
  int n = c->used.load(std::memory_order_relaxed);
  if (n == kChunk) {
    more_.push_back(std::make_unique<Chunk>());
    Chunk *fresh = more_.back().get();
    c->next.store(fresh, std::memory_order_release);
    c = fresh;
    n = 0;
  }
  c->uses[n].owner = &device;
  std::atomic<uint64_t> *word = &c->uses[n].word;
  // release: readers that see the new count see the zeroed word and its owner.
  c->used.store(n + 1, std::memory_order_release);
  owners_.emplace_back(&device, word);
  return word;
}

}  // namespace rig
