// Finding a checkpoint's files and making their tables one: each shard's tensors keep their shard, and
// their offsets move into the load's stream, where shard k's bytes start at its base (load/file.h).
#include "load/checkpoint.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "load/index.h"
#include "load/regular_file.h"

namespace rig::load {
namespace {

bool ends_with(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string dir_of(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// A split GGUF file's name: prefix-NNNNN-of-MMMMM.gguf. False where the name is not one.
bool split_name(const std::string &path, std::string *prefix, unsigned *no, unsigned *count) {
  static const size_t tail = std::strlen("-00001-of-00003.gguf");
  if (path.size() < tail || !ends_with(path, ".gguf")) return false;
  std::string t = path.substr(path.size() - tail);
  if (t[0] != '-' || t.compare(6, 4, "-of-") != 0) return false;
  for (size_t i : {1, 2, 3, 4, 5, 10, 11, 12, 13, 14})
    if (t[i] < '0' || t[i] > '9') return false;
  *prefix = path.substr(0, path.size() - tail);
  *no = unsigned(std::stoul(t.substr(1, 5)));
  *count = unsigned(std::stoul(t.substr(10, 5)));
  return true;
}

std::string split_path(const std::string &prefix, unsigned no, unsigned count) {
  char tail[32];
  std::snprintf(tail, sizeof tail, "-%05u-of-%05u.gguf", no, count);
  return prefix + tail;
}

// The checkpoint a directory holds: its one *.index.json, else its one safetensors file, else the first
// of its one split GGUF set, else its one GGUF file.
rig_status find_in_directory(const std::string &dir, std::string *out) {
  DIR *d = opendir(dir.c_str());
  if (!d) return fail(RIG_INVALID_ARGUMENT, "open directory %s: %s", dir.c_str(), strerror(errno));
  std::vector<std::string> index, safetensors, first_splits, gguf;
  while (dirent *e = readdir(d)) {
    std::string name = e->d_name, prefix;
    unsigned no, count;
    if (ends_with(name, ".index.json")) index.push_back(name);
    else if (ends_with(name, ".safetensors")) safetensors.push_back(name);
    else if (split_name(name, &prefix, &no, &count)) { if (no == 1) first_splits.push_back(name); }
    else if (ends_with(name, ".gguf")) gguf.push_back(name);
  }
  closedir(d);
  for (auto *names : {&index, &safetensors, &first_splits, &gguf}) {
    if (names->empty()) continue;
    std::sort(names->begin(), names->end());
    if (names->size() > 1)
      return fail(RIG_INVALID_ARGUMENT, "%s holds %zu checkpoints (%s, %s...): name the one to open", dir.c_str(),
                  names->size(), (*names)[0].c_str(), (*names)[1].c_str());
    *out = dir + "/" + names->front();
    return RIG_OK;
  }
  return fail(RIG_INVALID_ARGUMENT, "%s holds no checkpoint (no *.index.json, *.safetensors or *.gguf file)", dir.c_str());
}

// Reads the index file whole: a regular file only (load/regular_file.h), never waited on otherwise.
rig_status read_index(const std::string &path, IndexResult *out) {
  int fd = -1;
  struct stat st;
  if (rig_status s = open_regular_file(path.c_str(), &fd, &st)) return s;
  if (uint64_t(st.st_size) > index_limit) {
    ::close(fd);
    return fail(RIG_INVALID_ARGUMENT, "%s: the index is over rig's limit of 100000000 bytes", path.c_str());
  }
  std::string text(size_t(st.st_size), '\0');
  rig_status s = read_fully(fd, 0, text.data(), text.size());
  ::close(fd);
  if (s) return fail(s, "%s: %s", path.c_str(), last_error());
  *out = parse_index(text.data(), text.size());
  if (out->status) return fail(out->status, "%s: %s", path.c_str(), out->message.c_str());
  return RIG_OK;
}

// Adds a parsed shard to the checkpoint: its base in the stream, its tensors moved there.
void add_shard(File &f, std::unique_ptr<Shard> shard, ParseResult &parsed) {
  uint64_t base = 0;
  if (!f.shards.empty()) {
    const Shard &last = *f.shards.back();
    base = (last.base + last.size + shard_align - 1) / shard_align * shard_align;
  }
  shard->base = base;
  for (auto &t : parsed.tensors) {
    t.offset += base;
    t.shard = uint32_t(f.shards.size());
    f.tensors.push_back(std::move(t));
  }
  f.shards.push_back(std::move(shard));
}

// Every name once over all shards: a name in two files is refused, naming both.
rig_status check_names_once(const File &f) {
  std::map<std::string, uint32_t> seen;
  for (const auto &t : f.tensors) {
    auto [it, fresh] = seen.emplace(t.name, t.shard);
    if (!fresh)
      return fail(RIG_INVALID_ARGUMENT, "tensor '%s' appears in both %s and %s", t.name.c_str(),
                  f.shards[it->second]->path.c_str(), f.shards[t.shard]->path.c_str());
  }
  return RIG_OK;
}

rig_status open_sharded(const std::string &index_path, rig_load_format format, File &f) {
  IndexResult index;
  if (rig_status s = read_index(index_path, &index)) return s;
  std::string dir = dir_of(index_path);
  std::map<std::string, uint32_t> shard_of_name;
  for (const std::string &name : index.shards) {
    std::string path = dir + "/" + name;
    std::unique_ptr<Shard> shard;
    ParseResult parsed;
    rig_load_format found;
    if (rig_status s = open_shard(path, format, &shard, &parsed, &found))
      return fail(s, "shard %s of the index %s: %s", name.c_str(), index_path.c_str(), last_error());
    if (found != RIG_LOAD_FORMAT_SAFETENSORS)
      return fail(RIG_INVALID_ARGUMENT, "shard %s of the index %s is not a safetensors file", path.c_str(), index_path.c_str());
    if (f.shards.empty()) f.metadata = parsed.metadata;  // the first shard's own, after the index's below
    shard_of_name[name] = uint32_t(f.shards.size());
    add_shard(f, std::move(shard), parsed);
  }
  if (rig_status s = check_names_once(f)) return s;
  // The index and the shards must agree tensor by tensor, both ways.
  std::map<std::string, const TensorEntry *> held;
  for (const auto &t : f.tensors) held[t.name] = &t;
  for (const auto &[tensor, name] : index.weight_map) {
    auto it = held.find(tensor);
    const Shard &named = *f.shards[shard_of_name[name]];
    if (it == held.end())
      return fail(RIG_INVALID_ARGUMENT, "the index %s names tensor '%s' in %s, and no shard holds it",
                  index_path.c_str(), tensor.c_str(), named.path.c_str());
    if (f.shards[it->second->shard].get() != &named)
      return fail(RIG_INVALID_ARGUMENT, "the index %s names tensor '%s' in %s, but %s holds it", index_path.c_str(),
                  tensor.c_str(), named.path.c_str(), f.shards[it->second->shard]->path.c_str());
    held.erase(it);
  }
  if (!held.empty()) {
    const TensorEntry &t = *held.begin()->second;
    return fail(RIG_INVALID_ARGUMENT, "%s holds tensor '%s', which the index %s does not name",
                f.shards[t.shard]->path.c_str(), t.name.c_str(), index_path.c_str());
  }
  // One table in name order, as a single safetensors file's.
  std::stable_sort(f.tensors.begin(), f.tensors.end(), [](const TensorEntry &a, const TensorEntry &b) { return a.name < b.name; });
  Metadata shard_own = std::move(f.metadata);
  f.metadata = std::move(index.metadata);
  for (auto &kv : shard_own)
    if (std::none_of(f.metadata.begin(), f.metadata.end(), [&](const auto &m) { return m.first == kv.first; }))
      f.metadata.push_back(std::move(kv));
  f.format = RIG_LOAD_FORMAT_SAFETENSORS;
  return RIG_OK;
}

// The other files of a split GGUF set whose first file is open in `f`: split.no and split.count checked
// file by file, and the tensors counted against split.tensors.count.
rig_status open_split_rest(const std::string &first, uint64_t count, uint64_t tensors, File &f) {
  std::string prefix;
  unsigned no, named_count;
  if (!split_name(first, &prefix, &no, &named_count) || named_count != count)
    return fail(RIG_INVALID_ARGUMENT, "%s says it is split into %llu files, but its name is not NAME-00001-of-%05llu.gguf",
                first.c_str(), (unsigned long long)count, (unsigned long long)count);
  for (unsigned k = 1; k < count; ++k) {
    std::string path = split_path(prefix, k + 1, unsigned(count));
    std::unique_ptr<Shard> shard;
    ParseResult parsed;
    rig_load_format found;
    if (rig_status s = open_shard(path, RIG_LOAD_FORMAT_GGUF, &shard, &parsed, &found))
      return fail(s, "split %u of %llu of %s: %s", k + 1, (unsigned long long)count, first.c_str(), last_error());
    if (parsed.split_count != count || parsed.split_no != k)
      return fail(RIG_INVALID_ARGUMENT, "%s says it is split %llu of %llu, its name says %u of %llu", path.c_str(),
                  (unsigned long long)parsed.split_no + 1, (unsigned long long)parsed.split_count, k + 1,
                  (unsigned long long)count);
    add_shard(f, std::move(shard), parsed);
  }
  if (tensors && f.tensors.size() != tensors)
    return fail(RIG_INVALID_ARGUMENT, "%s: split.tensors.count says %llu tensors, its %llu files hold %zu", first.c_str(),
                (unsigned long long)tensors, (unsigned long long)count, f.tensors.size());
  return check_names_once(f);
}

}  // namespace

rig_status open_checkpoint(const char *path_c, rig_load_format format, std::shared_ptr<File> *out) {
  if (!path_c || !*path_c) return fail(RIG_INVALID_ARGUMENT, "no path");
  std::string path = path_c;
  struct stat st;
  if (stat(path_c, &st) == 0 && S_ISDIR(st.st_mode))
    if (rig_status s = find_in_directory(path, &path)) return s;
  auto f = std::make_shared<File>();
  f->path = path_c;
  if (ends_with(path, ".index.json") && (format == RIG_LOAD_FORMAT_AUTO || format == RIG_LOAD_FORMAT_SAFETENSORS)) {
    if (rig_status s = open_sharded(path, format, *f)) return s;
    *out = std::move(f);
    return RIG_OK;
  }
  std::unique_ptr<Shard> shard;
  ParseResult parsed;
  if (rig_status s = open_shard(path, format, &shard, &parsed, &f->format)) return s;
  f->metadata = std::move(parsed.metadata);
  uint64_t count = parsed.split_count, tensors = parsed.split_tensors;
  if (f->format == RIG_LOAD_FORMAT_GGUF && count > 1 && parsed.split_no != 0)
    return fail(RIG_INVALID_ARGUMENT, "%s is split %llu of %llu: open the first of its set", path.c_str(),
                (unsigned long long)parsed.split_no + 1, (unsigned long long)count);
  add_shard(*f, std::move(shard), parsed);
  if (f->format == RIG_LOAD_FORMAT_GGUF && count > 1)
    if (rig_status s = open_split_rest(path, count, tensors, *f)) return s;
  *out = std::move(f);
  return RIG_OK;
}

}  // namespace rig::load
