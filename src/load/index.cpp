// The index of a sharded safetensors checkpoint, read as a JSON document (nlohmann-json): it is small
// beside the shards it names, and read once per open.
#include "load/index.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace rig::load {
namespace {

IndexResult refuse(std::string why) {
  IndexResult r;
  r.status = RIG_INVALID_ARGUMENT;
  r.message = std::move(why);
  return r;
}

// A shard must be a file beside the index or below it: not absolute, no ".." part, no empty name.
bool shard_name_ok(const std::string &name) {
  if (name.empty() || name.front() == '/' || name.find('\0') != std::string::npos) return false;
  size_t start = 0;
  for (;;) {
    size_t end = name.find('/', start);
    std::string part = name.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part == ".." || part.empty() || part == ".") return false;
    if (end == std::string::npos) return true;
    start = end + 1;
  }
}

}  // namespace

IndexResult parse_index(const char *bytes, size_t length) {
  if (length > index_limit) return refuse("the index is over rig's limit of 100000000 bytes");
  nlohmann::json doc = nlohmann::json::parse(bytes, bytes + length, nullptr, false);
  if (doc.is_discarded()) return refuse("the index is not valid JSON (or holds a string that is not UTF-8)");
  if (!doc.is_object()) return refuse("the index is not a JSON object");
  IndexResult r;
  if (auto m = doc.find("metadata"); m != doc.end() && !m->is_null()) {
    if (!m->is_object()) return refuse("the index's metadata is not an object");
    for (const auto &[key, value] : m->items())
      r.metadata.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
  }
  auto w = doc.find("weight_map");
  if (w == doc.end() || !w->is_object()) return refuse("the index has no weight_map object");
  if (w->empty()) return refuse("the index's weight_map names no tensor");
  for (const auto &[tensor, shard] : w->items()) {
    if (tensor.empty()) return refuse("the index's weight_map names a tensor with an empty name");
    if (!shard.is_string()) return refuse("the index maps tensor '" + tensor + "' to something other than a file name");
    const std::string &name = shard.get_ref<const std::string &>();
    if (!shard_name_ok(name))
      return refuse("the index maps tensor '" + tensor + "' to '" + name +
                    "', not a file beside the index (absolute, empty or with a '..' part)");
    r.weight_map.emplace_back(tensor, name);
    r.shards.push_back(name);
  }
  std::sort(r.shards.begin(), r.shards.end());
  r.shards.erase(std::unique(r.shards.begin(), r.shards.end()), r.shards.end());
  return r;
}

}  // namespace rig::load
