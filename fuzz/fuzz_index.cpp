// libFuzzer harness: the sharded checkpoint's index parser (load/index.h) over arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "load/index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rig::load::IndexResult r = rig::load::parse_index(reinterpret_cast<const char *>(data), size);
  // An index that parsed must satisfy what the opener relies on: every shard named by the map, each a
  // relative name with no '..' part, listed once.
  if (r.status == RIG_OK) {
    if (r.weight_map.empty()) __builtin_trap();
    for (const auto &[tensor, shard] : r.weight_map) {
      if (tensor.empty() || shard.empty() || shard[0] == '/') __builtin_trap();
      if (shard == ".." || shard.rfind("../", 0) == 0 || shard.find("/../") != std::string::npos) __builtin_trap();
      bool listed = false;
      for (const auto &s : r.shards) listed = listed || s == shard;
      if (!listed) __builtin_trap();
    }
  }
  return 0;
}
