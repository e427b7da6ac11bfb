// bench_load_header: rig_load_open of a safetensors file, beside the same header's bytes read into
// nlohmann-json's document tree (nlohmann::json::parse, what a loader that uses the library's tree pays
// before its first tensor), in the same run. Headers are named like a mixture-of-experts shard's
// ("model.layers.L.mlp.experts.E.wK.weight", BF16, 3 MiB each); the file's data is a hole (ftruncate), so
// the bench reads only the header; rig's figure includes opening and reading the file, the tree's starts
// from the bytes in memory. Each round times both once, in turns; each figure is a median over
// rounds, and the ratio the median of the rounds' ratios (bench/README.md: how the CUDA bench measures).
// Usage: bench_load_header [rounds, 21] [tensor counts..., 64 1365 20000]
#include <rig_load.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/rounds.h"

namespace {

// The header of `n` tensors of 3 MiB each, in file order.
std::string header(int n, uint64_t *data_bytes) {
  std::string json = "{\"__metadata__\":{\"format\":\"pt\"}";
  const uint64_t length = 3 << 20;
  uint64_t at = 0;
  char entry[256];
  for (int i = 0; i < n; ++i, at += length) {
    std::snprintf(entry, sizeof entry,
                  ",\"model.layers.%d.mlp.experts.%d.w%d.weight\":{\"dtype\":\"BF16\",\"shape\":[%llu,1024],"
                  "\"data_offsets\":[%llu,%llu]}",
                  i / 192, i % 192 / 3, i % 3 + 1, static_cast<unsigned long long>(length / 2048),
                  static_cast<unsigned long long>(at), static_cast<unsigned long long>(at + length));
    json += entry;
  }
  *data_bytes = at;
  return json + "}";
}

bool write_file(const char *path, const std::string &json, uint64_t data_bytes) {
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  if (fd < 0) return false;
  uint64_t n = json.size();  // little-endian on every machine rig builds for
  bool ok = write(fd, &n, 8) == 8 && write(fd, json.data(), json.size()) == static_cast<ssize_t>(json.size()) &&
            ftruncate(fd, static_cast<off_t>(8 + json.size() + data_bytes)) == 0;
  close(fd);
  return ok;
}

template <class F>
double time_ms(F &&f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 21;
  std::vector<int> counts;
  for (int i = 2; i < argc; ++i) counts.push_back(std::max(1, std::atoi(argv[i])));
  if (counts.empty()) counts = {64, 1365, 20000};
  const char *tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/rig-bench-header-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) {
    std::perror("mkstemp");
    return 1;
  }
  close(fd);
  std::printf("rig_load_open against nlohmann::json::parse of the same header, %d rounds, medians\n", rounds);
  std::printf("  %8s %10s %14s %14s %12s\n", "tensors", "header", "rig open ms", "tree parse ms", "rig / tree");
  int status = 0;
  for (int n : counts) {
    uint64_t data_bytes = 0;
    std::string json = header(n, &data_bytes);
    if (!write_file(path.c_str(), json, data_bytes)) {
      std::perror(path.c_str());
      status = 1;
      break;
    }
    std::vector<double> rig, tree, ratio;
    for (int r = 0; r < rounds; ++r) {
      rig_status s = RIG_OK;
      double a = time_ms([&] {
        rig_load_file f;
        s = rig_load_open(path.c_str(), RIG_LOAD_FORMAT_SAFETENSORS, &f);
        if (s == RIG_OK) rig_load_file_release(f);
      });
      if (s != RIG_OK) {
        std::fprintf(stderr, "rig_load_open: %s: %s\n", rig_status_name(s), rig_last_error());
        status = 1;
        break;
      }
      size_t entries = 0;
      double b = time_ms([&] { entries = nlohmann::json::parse(json).size(); });
      if (entries != static_cast<size_t>(n) + 1) status = 1;  // the tree read something else
      rig.push_back(a);
      tree.push_back(b);
      ratio.push_back(a / b);
    }
    if (status) break;
    std::printf("  %8d %9zuB %14.3f %14.3f %12.3f\n", n, json.size(), bench::quantile(rig, 0.5), bench::quantile(tree, 0.5),
                bench::quantile(ratio, 0.5));
  }
  unlink(path.c_str());
  return status;
}
