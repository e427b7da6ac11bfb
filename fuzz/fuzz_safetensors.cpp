// libFuzzer harness: the safetensors header parser over arbitrary bytes (the bytes are the whole file).
#include <cstddef>
#include <cstdint>

#include "load/table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rig::load::ParseResult r = rig::load::parse_safetensors(data, size, size);
  // A table that parsed must satisfy what the loader relies on: every range inside the file, and (the
  // format's rule) the ranges covering the data exactly, so their lengths add up to it.
  if (r.status == RIG_OK && !r.need_bytes) {
    uint64_t covered = 0;
    for (const auto &t : r.tensors) {
      if (t.offset > size || t.length > size - t.offset) __builtin_trap();
      covered += t.length;
    }
    if (covered != size - r.data_start) __builtin_trap();
  }
  return 0;
}
