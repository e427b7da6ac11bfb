// A copy split at registration seams against one within one registration (issue 36's "Show"): the hand-over
// cost of a borrow whose host range crosses registrations. Two neighbouring host ranges are wrapped and
// borrowed first, each registering its own pages; a third wrap over both spans their seam, so its copy into
// device memory is handed to the driver as one call per registration (docs/ordering-model.md, "Neighbours on
// a page"). Rows: (one) a 4 KiB copy from a borrow inside one registration; (split) the same 4 KiB from the
// borrow across the seam, two driver copies; (one2) (one) again, the noise. Rounds and ratios are
// bench/common/rounds.h's. Needs a GPU (exits 77 without one; on the fake libcuda it runs as a smoke test).
// Usage: bench_cuda_split_copy [ops, 2048] [rounds, 51] [device, cuda:0]
#include <rig.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/rounds.h"

namespace {

[[noreturn]] void die(const char *what, rig_status s) {
  std::fprintf(stderr, "%s: %s (%s)\n", what, rig_status_name(s), rig_last_error());
  std::exit(1);
}

void check(const char *what, rig_status s) {
  if (s != RIG_OK) die(what, s);
}

// A run of one COPY from slot 0 to slot 1, its buffers set.
rig_run copy_run(rig_device d, rig_buffer src, rig_buffer dst) {
  rig_part p{};
  p.size = sizeof p;
  p.kind = RIG_PART_COPY;
  p.src_slot = 0;
  p.dst_slot = 1;
  p.length = RIG_WHOLE;
  rig_access a[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_submission s;
  rig_run r;
  check("submission_make", rig_submission_make(d, &p, 1, a, 2, &s));
  check("run_take", rig_run_take(s, &r));
  check("set src", rig_run_set_buffer(r, 0, src));
  check("set dst", rig_run_set_buffer(r, 1, dst));
  rig_submission_release(s);
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  int ops = argc > 1 ? std::atoi(argv[1]) : 2048, rounds = argc > 2 ? std::atoi(argv[2]) : 51;
  const char *name = argc > 3 ? argv[3] : "cuda:0";
  rig_device d;
  if (rig_status s = rig_device_open(name, &d); s != RIG_OK) {
    std::printf("bench_cuda_split_copy: %s not opened (%s): %s\n", name, rig_status_name(s), rig_last_error());
    return 77;
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), n = 4096;
  // Three pages of anonymous memory. The first wrap, [0, 1.5 pages), registers pages 0-1; the second,
  // [1.5, 3 pages), finds page 1 registered and registers page 2 alone: the seam is at page 2. The split
  // borrow is the n bytes around it; the inside borrow is the first n bytes.
  char *host = static_cast<char *>(mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (host == MAP_FAILED) return 1;
  std::memset(host, 7, 3 * page);
  rig_buffer w1, w2, b1, b2, inside_w, inside, split_w, split, dst;
  check("wrap first", rig_buffer_wrap(host, page + page / 2, RIG_ACCESS_READ_WRITE, nullptr, nullptr, &w1));
  check("wrap second", rig_buffer_wrap(host + page + page / 2, page + page / 2, RIG_ACCESS_READ_WRITE, nullptr, nullptr, &w2));
  check("borrow first", rig_buffer_borrow(d, w1, &b1));
  check("borrow second", rig_buffer_borrow(d, w2, &b2));
  check("wrap inside", rig_buffer_wrap(host, n, RIG_ACCESS_READ, nullptr, nullptr, &inside_w));
  check("borrow inside", rig_buffer_borrow(d, inside_w, &inside));
  check("wrap across", rig_buffer_wrap(host + 2 * page - n / 2, n, RIG_ACCESS_READ, nullptr, nullptr, &split_w));
  check("borrow across", rig_buffer_borrow(d, split_w, &split));
  check("create dst", rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &dst));
  rig_run one = copy_run(d, inside, dst), across = copy_run(d, split, dst);
  auto finish = [&] {
    uint64_t v = 0;
    rig_device_submitted(d, &v);
    check("wait", rig_device_wait(d, v, UINT64_MAX));
  };
  using Row = bench::Row<bench::Pass>;
  std::vector<Row> rows;
  rows.emplace_back("one", "(one)  4 KiB copy inside one registration", [&](int) { check("submit", rig_submit(one, nullptr, 0, nullptr)); }, finish);
  rows.emplace_back("split", "(split) 4 KiB copy across two registrations", [&](int) { check("submit", rig_submit(across, nullptr, 0, nullptr)); }, finish);
  rows.emplace_back("one2", "(one2) (one) again, measured apart", [&](int) { check("submit", rig_submit(one, nullptr, 0, nullptr)); }, finish);
  for (auto &r : rows) bench::pass(64, 0, r.op, r.finish);  // warm
  bench::run_rounds(rows, rounds, [&](Row &r) { r.rounds.push_back(bench::pass(ops, 256, r.op, r.finish)); });
  std::printf("split copy on %s (%d ops a pass, %d rounds; host time in bursts of 256)\n", name, ops, rounds);
  for (auto &r : rows) {
    std::vector<double> us;
    for (auto &p : r.rounds) us.push_back(p.host_us);
    std::printf("  %-48s host med %.3f us\n", r.name, bench::quantile(us, 0.5));
  }
  auto host_ratio = [](const bench::Pass &x, const bench::Pass &y) { return x.host_us / y.host_us; };
  auto wall_ratio = [](const bench::Pass &x, const bench::Pass &y) { return x.wall_us / y.wall_us; };
  if (auto s = bench::ratio(rows, "split", "one", host_ratio)) bench::print_ratio("host", "split", "one", *s, "   a split copy's hand-over over one copy's");
  if (auto s = bench::ratio(rows, "split", "one", wall_ratio)) bench::print_ratio("wall", "split", "one", *s, "");
  if (auto s = bench::ratio(rows, "one2", "one", host_ratio)) bench::print_ratio("host", "one2", "one", *s, "   the noise");
  rig_run_release(one);
  rig_run_release(across);
  for (rig_buffer b : {dst, split, split_w, inside, inside_w, b2, b1, w2, w1}) rig_buffer_release(b);
  rig_device_release(d);
  munmap(host, 3 * page);
  return 0;
}
