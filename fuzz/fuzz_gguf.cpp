// libFuzzer harness: the GGUF header parser over arbitrary bytes (the bytes are the whole file).
#include <cstddef>
#include <cstdint>

#include "load/table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rig::load::ParseResult r = rig::load::parse_gguf(data, size, size);
  if (r.status == RIG_OK && !r.need_bytes)
    for (const auto &t : r.tensors)
      if (t.offset > size || t.length > size - t.offset) __builtin_trap();
  return 0;
}
