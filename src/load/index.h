// A sharded safetensors checkpoint's index (`model.safetensors.index.json`, as Hugging Face writes it):
// {"metadata": {...}, "weight_map": {tensor: shard file}}. Parsed with nlohmann-json; a pure function of
// bytes, so the fuzz harness (fuzz/fuzz_index.cpp) builds it alone.
#pragma once

#include <rig.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "load/table.h"

namespace rig::load {

struct IndexResult {
  rig_status status = RIG_OK;
  std::string message;
  Metadata metadata;  // "metadata"'s entries: strings as they are, other values as JSON
  std::vector<std::pair<std::string, std::string>> weight_map;  // tensor -> shard, by tensor name
  std::vector<std::string> shards;  // the shard files named, each once, in name order
};

// An index larger than this is refused (the safetensors header's limit: an index lists no more).
constexpr uint64_t index_limit = 100000000;

// Parses an index. RIG_INVALID_ARGUMENT with words for JSON that is not an object, a weight_map that is
// missing, empty or maps a name to anything but a file name (a path that is absolute, or climbs out of
// the index's directory with "..", is refused), a metadata that is not an object. Pure: no lock, no wait.
IndexResult parse_index(const char *bytes, size_t length);

}  // namespace rig::load
