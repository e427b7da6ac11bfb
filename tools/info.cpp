// The `rig info` subcommand: a checkpoint's files, tensors (name, dtype, shape, shard, byte range), metadata
// and total size, read through rig_load.h without opening a device. `--json` writes one object through
// nlohmann-json (docs/cli-json.md, `info`): its error handler writes each byte that is not UTF-8 as U+FFFD.
#include <rig.h>
#include <rig_load.h>

#include <getopt.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "cli.h"
#include "commands.h"

namespace {

using Json = nlohmann::ordered_json;  // the file's order of keys and metadata, not sorted

const char *format_name(rig_load_format f) {
  return f == RIG_LOAD_FORMAT_GGUF ? "gguf" : f == RIG_LOAD_FORMAT_SAFETENSORS ? "safetensors" : "raw";
}

std::string hex(const char *s) {
  std::string out;
  char two[3];
  for (const char *p = s; *p; ++p) {
    std::snprintf(two, sizeof two, "%02x", unsigned(static_cast<unsigned char>(*p)));
    out += two;
  }
  return out;
}

// The checkpoint's description as the JSON object (error null); false with rig's message where a call fails.
bool describe(rig_load_file f, Json *out) {
  Json &j = *out;
  rig_load_format format;
  size_t shards, tensors, entries;
  if (rig_load_file_format(f, &format) || rig_load_shard_count(f, &shards) || rig_load_tensor_count(f, &tensors) ||
      rig_load_metadata_count(f, &entries))
    return false;
  j["format"] = format_name(format);
  j["shards"] = Json::array();
  uint64_t total = 0;
  for (size_t i = 0; i < shards; ++i) {
    const char *path;
    uint64_t bytes;
    if (rig_load_shard_get(f, i, &path, &bytes)) return false;
    j["shards"].push_back(Json{{"path", path}, {"bytes", bytes}});
  }
  j["tensors"] = Json::array();
  for (size_t i = 0; i < tensors; ++i) {
    rig_load_tensor t{};
    t.size = sizeof t;
    if (rig_load_tensor_get(f, i, &t)) return false;
    Json shape = Json::array();
    for (uint32_t d = 0; d < t.rank; ++d) shape.push_back(t.shape[d]);
    j["tensors"].push_back(Json{{"name", t.name}, {"dtype", t.dtype_name}, {"shape", shape}, {"shard", t.shard},
                                {"offset", t.offset}, {"length", t.length}});
    total += t.length;
  }
  j["total_bytes"] = total;
  j["metadata"] = Json::object();
  for (size_t i = 0; i < entries; ++i) {
    const char *key, *value;
    if (rig_load_metadata_get(f, i, &key, &value)) return false;
    j["metadata"][key] = value;
  }
  return true;
}

void print_words(const Json &j) {
  auto text = [](const Json &v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); };
  std::printf("%s: %s, %zu tensors, %llu bytes, in %zu file%s\n", j["file"].get<std::string>().c_str(),
              j["format"].get<std::string>().c_str(), j["tensors"].size(),
              (unsigned long long)j["total_bytes"].get<uint64_t>(), j["shards"].size(), j["shards"].size() == 1 ? "" : "s");
  for (size_t i = 0; i < j["shards"].size(); ++i)
    std::printf("  file %zu: %s (%llu bytes)\n", i, j["shards"][i]["path"].get<std::string>().c_str(),
                (unsigned long long)j["shards"][i]["bytes"].get<uint64_t>());
  if (!j["metadata"].empty()) std::printf("metadata:\n");
  for (const auto &[key, value] : j["metadata"].items()) std::printf("  %s = %s\n", key.c_str(), value.get<std::string>().c_str());
  std::printf("tensors (name, dtype, shape, file, bytes [offset, end)):\n");
  for (const auto &t : j["tensors"]) {
    uint64_t offset = t["offset"], length = t["length"];
    std::printf("  %s  %s  %s  %llu  [%llu, %llu)\n", t["name"].get<std::string>().c_str(),
                t["dtype"].get<std::string>().c_str(), text(t["shape"]).c_str(),
                (unsigned long long)t["shard"].get<uint64_t>(), (unsigned long long)offset,
                (unsigned long long)(offset + length));
  }
}

const char usage[] =
    "usage: rig info PATH [--json]\n"
    "  PATH: a safetensors file, a sharded checkpoint's *.index.json or its directory, a GGUF file or the\n"
    "  first of a split GGUF set. Prints its files, tensors (name, dtype, shape, file, byte range), metadata\n"
    "  and total size; opens no device.\n"
    "  --json  one JSON object instead (docs/cli-json.md)\n";

}  // namespace

extern "C" int rig_tool_info(int argc, char **argv) {
  static const struct option options[] = {{"json", no_argument, nullptr, 'j'}, {"help", no_argument, nullptr, 'h'},
                                          {nullptr, 0, nullptr, 0}};
  bool json = false;
  optind = 0;
  opterr = 0;
  for (int c; (c = getopt_long(argc, argv, ":h", options, nullptr)) != -1;) {
    if (c == 'h') return std::fputs(usage, stdout), RIG_EXIT_OK;
    if (c == 'j') json = true;
    else return rig_tool_bad_option("info", c, argv);
  }
  if (optind != argc - 1) return std::fputs(usage, stderr), RIG_EXIT_USAGE;
  const char *path = argv[optind];
  Json j{{"schema", 1}, {"file", path}, {"file_hex", hex(path)}, {"format", nullptr}, {"shards", Json::array()},
         {"tensors", Json::array()}, {"total_bytes", 0}, {"metadata", Json::object()}, {"error", nullptr}};
  rig_load_file f = nullptr;
  bool ok = rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f) == RIG_OK && describe(f, &j);
  if (!ok) j["error"] = rig_last_error();
  if (f) rig_load_file_release(f);
  if (json) std::printf("%s\n", j.dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
  else if (ok) print_words(j);
  else std::fprintf(stderr, "rig info: %s\n", rig_last_error());
  return std::fflush(stdout) == 0 && ok ? RIG_EXIT_OK : RIG_EXIT_ERROR;
}
