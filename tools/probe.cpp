// `rig probe [OPTIONS] FILE`: the mapped-registration verdict of a device for a region of a real file.
//
// Why it looks like this:
//  - The file is mapped MAP_SHARED, PROT_READ: the file's own page-cache pages, which is what a loader
//    registers. A MAP_PRIVATE mapping was seen to make CUDA's registration never return, or to copy the
//    range into anonymous memory (docs/mapped.md).
//  - The reference is read with pread, independently of the mapping, so the bytes the device returns are
//    checked against the file and not against the mapping itself.
//  - The self-test runs in a child process with a deadline: a driver that never returns (that MAP_PRIVATE
//    case) makes the answer Inconclusive ("no answer within S s") instead of hanging the caller. The child
//    opens the device itself: no driver is initialised in the parent before fork (CUDA cannot cross it).
//  - The default region is 256 MiB where the file allows: registered copies beat staged ones by 11x at
//    4 MiB and 1.5x at 4 GiB on an H200, so a small region flatters registration.
// Diagnostic options for the cases the GPU script shows: --map private|none (instead of a shared
// read-only mapping), --register-first (the region is registered before the probe: the range twice).
#include "cli.h"
#include "commands.h"

#include <getopt.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rig_mapped.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr uint64_t default_region = 256ull << 20;

struct Options {
  const char *file = nullptr;
  std::string device;
  uint64_t offset = 0;
  uint64_t length = 0;  // 0: the default region
  bool offset_given = false, length_given = false;
  bool json = false;
  bool verbose = false;
  double deadline_s = 60;
  double min_speed = 0;
  std::string map = "shared";
  bool register_first = false;
};

// What the child reports, line by line, through the pipe.
struct Report {
  bool have_static = false;
  bool self_test = false;
  std::string static_kind, static_refusal, static_reason;
  bool have_verdict = false;
  std::string kind, refusal, reason, device;
  int cacheable = 0;
  double registered = 0, staged = 0;
  std::string error;
  std::vector<std::string> logs;
};

void usage(FILE *out) {
  std::fprintf(out,
               "usage: rig probe [OPTIONS] FILE\n"
               "  Maps [offset, offset+length) of FILE shared and read-only, reads the same bytes with pread,\n"
               "  and asks whether DEVICE can copy from the mapping when it is registered with its driver.\n"
               "  --device NAME    a name from `rig devices` (memory:NAME, cuda:N, hip:N, vulkan:N); default:\n"
               "                   the first GPU, CUDA then HIP then any other\n"
               "  --offset N       where the region starts (a multiple of the page size; default 0)\n"
               "  --length N       the region's bytes (default: 256 MiB or to the end of FILE)\n"
               "  --deadline S     seconds before the answer is Inconclusive (default 60)\n"
               "  --min-speed F    registered/staged speed ratio below which it is Too_slow (default rig's)\n"
               "  --json           one JSON object on stdout (docs/cli-json.md)\n"
               "  --verbose        the self-test's log on stderr\n"
               "  --map shared|private|none, --register-first   diagnostics (see docs/mapped.md)\n"
               "  N takes K, M, G suffixes (KiB, MiB, GiB). Exit status: 0 Usable or Not_needed, 1 error,\n"
               "  2 usage, 3 Refused, 4 Too_slow, 5 Inconclusive, 6 Still_registered.\n");
}

int positive(const char *option, const char *v, double *out) {
  char *end = nullptr;
  double d = std::strtod(v, &end);
  if (end == v || *end || !(d > 0) || std::isinf(d)) {
    std::fprintf(stderr, "rig probe: --%s %s: not a positive number\n", option, v);
    return RIG_EXIT_USAGE;
  }
  *out = d;
  return 0;
}

// Returns -1 to go on, or the exit status to return now (--help, a usage error).
int parse(int argc, char **argv, Options *o) {
  enum { DEADLINE = 256, MIN_SPEED, MAP, REGISTER_FIRST };
  static const option options[] = {{"device", required_argument, nullptr, 'd'},
                                   {"offset", required_argument, nullptr, 'o'},
                                   {"length", required_argument, nullptr, 'l'},
                                   {"json", no_argument, nullptr, 'j'},
                                   {"verbose", no_argument, nullptr, 'v'},
                                   {"help", no_argument, nullptr, 'h'},
                                   {"deadline", required_argument, nullptr, DEADLINE},
                                   {"min-speed", required_argument, nullptr, MIN_SPEED},
                                   {"map", required_argument, nullptr, MAP},
                                   {"register-first", no_argument, nullptr, REGISTER_FIRST},
                                   {nullptr, 0, nullptr, 0}};
  optind = 0;  // GNU getopt: start over, this may not be the process's first parse
  opterr = 0;
  for (int c; (c = getopt_long(argc, argv, ":d:o:l:jvh", options, nullptr)) != -1;) {
    switch (c) {
      case 'd': o->device = optarg; break;
      case 'j': o->json = true; break;
      case 'v': o->verbose = true; break;
      case 'h': usage(stdout); return RIG_EXIT_OK;
      case REGISTER_FIRST: o->register_first = true; break;
      case 'o':
      case 'l':
        if (rig_tool_parse_size(optarg, c == 'o' ? &o->offset : &o->length) != 0) {
          std::fprintf(stderr, "rig probe: --%s %s: not a size\n", c == 'o' ? "offset" : "length", optarg);
          return RIG_EXIT_USAGE;
        }
        (c == 'o' ? o->offset_given : o->length_given) = true;
        break;
      case DEADLINE:
        if (int e = positive("deadline", optarg, &o->deadline_s)) return e;
        break;
      case MIN_SPEED:
        if (int e = positive("min-speed", optarg, &o->min_speed)) return e;
        break;
      case MAP:
        o->map = optarg;
        if (o->map != "shared" && o->map != "private" && o->map != "none") {
          std::fprintf(stderr, "rig probe: --map %s: shared, private or none\n", optarg);
          return RIG_EXIT_USAGE;
        }
        break;
      default: return rig_tool_bad_option("probe", c, argv);
    }
  }
  if (optind >= argc) {
    std::fprintf(stderr, "rig probe: which FILE? (rig probe --help)\n");
    return RIG_EXIT_USAGE;
  }
  if (optind + 1 < argc) {
    std::fprintf(stderr, "rig probe: one FILE only (%s and %s given)\n", argv[optind], argv[optind + 1]);
    return RIG_EXIT_USAGE;
  }
  o->file = argv[optind];
  if (o->length_given && o->length == 0) {
    std::fprintf(stderr, "rig probe: --length 0: the region needs at least one byte\n");
    return RIG_EXIT_USAGE;
  }
  return -1;
}

// ---- the child: opens the device, maps, probes, and writes lines to `fd` ------------------------------

std::string clean(const char *s) {
  std::string r = s ? s : "";
  for (char &c : r)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return r;
}

void put(int fd, const std::string &line) {
  std::string l = line + "\n";
  const char *p = l.data();
  size_t n = l.size();
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

struct LogTo {
  int fd;
};
void child_log(void *user, const char *message) { put(static_cast<LogTo *>(user)->fd, "log\t" + clean(message)); }

int child_error(int fd, const std::string &what, rig_status s) {
  put(fd, "error\t" + clean((what + ": " + rig_status_name(s) + ": " + rig_last_error()).c_str()));
  return 1;
}

// The default device: a GPU, since the question is whether a GPU can copy from the mapping. CUDA first,
// then HIP (the frameworks whose registration rig measures), then any other device of kind GPU. A machine
// with none gets an error naming what it has, not a verdict about a device nobody asked for.
int default_device(int fd, std::string *name, std::string *why) {
  const char *names[64];
  size_t n = 0;
  if (rig_status s = rig_device_list(names, 64, &n)) return child_error(fd, "device list", s);
  if (n > 64) n = 64;
  for (const char *prefix : {"cuda:", "hip:"})
    for (size_t i = 0; i < n; ++i)
      if (std::strncmp(names[i], prefix, std::strlen(prefix)) == 0) {
        *name = names[i];
        *why = std::string("the first ") + (prefix[0] == 'c' ? "CUDA" : "HIP") +
               " device (no --device given; CUDA and HIP are where registration is measured)";
        return 0;
      }
  std::string seen;
  for (size_t i = 0; i < n; ++i) {
    rig_device d;
    if (rig_device_open(names[i], &d) != RIG_OK) continue;
    rig_device_info info{};
    info.size = sizeof info;
    rig_device_get_info(d, &info);
    rig_device_release(d);
    if (info.kind == RIG_DEVICE_GPU) {
      *name = names[i];
      *why = "the first GPU (no --device given, and no CUDA or HIP device)";
      return 0;
    }
    seen += std::string(seen.empty() ? "" : ", ") + names[i] + (info.kind == RIG_DEVICE_CPU ? " (a CPU device)" : "");
  }
  put(fd, "error\tno GPU to probe: rig found " + (seen.empty() ? std::string("no driver device") : clean(seen.c_str())) +
              "; name a device with --device (rig devices lists them; memory:NAME probes host memory)");
  return 1;
}

int open_device(const Options &o, int fd, rig_device *d, std::string *name) {
  std::string why;
  if (o.device.empty()) {
    if (int e = default_device(fd, name, &why)) return e;
  } else *name = o.device;
  if (rig_status s = rig_tool_open_device(name->c_str(), d)) return child_error(fd, "open " + *name, s);
  if (!why.empty()) put(fd, "log\tprobing " + clean(name->c_str()) + ": " + why);
  return 0;
}

std::string verdict_fields(rig_verdict v) {
  rig_verdict_kind k = RIG_VERDICT_INCONCLUSIVE;
  rig_refusal r = RIG_REFUSAL_NONE;
  const char *reason = "";
  int c = 0;
  double reg = 0, stg = 0;
  rig_verdict_get_kind(v, &k);
  rig_verdict_refusal(v, &r);
  rig_verdict_reason(v, &reason);
  rig_verdict_cacheable(v, &c);
  rig_verdict_speeds(v, &reg, &stg);
  char nums[96];
  std::snprintf(nums, sizeof nums, "%d\t%.6g\t%.6g", c, reg, stg);
  return std::string(rig_verdict_kind_name(k)) + "\t" + (r ? rig_refusal_name(r) : "") + "\t" + nums + "\t" +
         clean(reason);
}

int run_child(const Options &o, int fd) {
  // The device and its static verdict first: a device decided statically is answered without mapping or
  // reading the file (rig_probe would not read them either).
  rig_device d;
  std::string name;
  if (int e = open_device(o, fd, &d, &name)) return e;
  put(fd, "device\t" + clean(name.c_str()));
  rig_verdict st = nullptr;
  if (rig_status s = rig_static_verdict(d, &st)) return child_error(fd, "static verdict", s);
  if (st) {
    put(fd, "static\t" + verdict_fields(st));
    put(fd, "verdict\t" + verdict_fields(st));
    rig_verdict_release(st);
    return 0;
  }
  put(fd, "static\tSELF_TEST");
  // O_NONBLOCK: checked regular before the fork, but a FIFO put in its place since must not hold the child.
  int file = open(o.file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (file < 0) {
    put(fd, "error\topen " + clean(o.file) + ": " + std::strerror(errno));
    return 1;
  }
  size_t len = static_cast<size_t>(o.length);
  int prot = o.map == "none" ? PROT_NONE : PROT_READ;
  int flags = o.map == "private" ? MAP_PRIVATE : MAP_SHARED;
  void *map = mmap(nullptr, len, prot, flags, file, static_cast<off_t>(o.offset));
  if (map == MAP_FAILED) {
    put(fd, std::string("error\tmmap: ") + std::strerror(errno));
    return 1;
  }
  std::vector<char> ref;
  try {
    ref.resize(len);
  } catch (...) {
    put(fd, "error\tno memory for the reference");
    return 1;
  }
  for (size_t done = 0; done < len;) {
    ssize_t r = pread(file, ref.data() + done, len - done, static_cast<off_t>(o.offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      put(fd, std::string("error\tpread: ") + (r < 0 ? std::strerror(errno) : "unexpected end of file"));
      return 1;
    }
    done += static_cast<size_t>(r);
  }
  if (o.register_first) {
    rig_status s = rig_host_register(d, map, len, RIG_ACCESS_READ);
    put(fd, std::string("log\tregistered the region first: ") + rig_status_name(s) + " " + clean(rig_last_error()));
  }
  LogTo to{fd};
  rig_probe_options opt = {sizeof opt, o.min_speed, child_log, &to};
  rig_verdict v = nullptr;
  if (rig_status s = rig_probe(d, map, ref.data(), len, &opt, &v)) return child_error(fd, "probe", s);
  put(fd, "verdict\t" + verdict_fields(v));
  rig_verdict_release(v);
  // No unmap, no device release: a window the probe left registered must never be unmapped, and the
  // process ends here anyway.
  return 0;
}

// ---- the parent: waits for the child's lines until the deadline --------------------------------------

std::vector<std::string> split(const std::string &line) {
  std::vector<std::string> f;
  size_t start = 0;
  for (;;) {
    size_t tab = line.find('\t', start);
    f.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return f;
    start = tab + 1;
  }
}

void take_line(const std::string &line, Report *r) {
  auto f = split(line);
  if (f[0] == "log" && f.size() > 1) r->logs.push_back(f[1]);
  else if (f[0] == "device" && f.size() > 1) r->device = f[1];
  else if (f[0] == "error" && f.size() > 1) r->error = f[1];
  else if (f[0] == "static") {
    r->have_static = true;
    if (f.size() == 2) r->self_test = true;
    else if (f.size() >= 7) {
      r->static_kind = f[1];
      r->static_refusal = f[2];
      r->static_reason = f[6];
    }
  } else if (f[0] == "verdict" && f.size() >= 7) {
    r->have_verdict = true;
    r->kind = f[1];
    r->refusal = f[2];
    r->cacheable = std::atoi(f[3].c_str());
    r->registered = std::atof(f[4].c_str());
    r->staged = std::atof(f[5].c_str());
    r->reason = f[6];
  }
}

const char *signal_name(int sig) {
  const char *s = strsignal(sig);
  return s ? s : "signal";
}

// Waits for the child's report or the deadline; kills the child when the deadline passes.
void collect(int fd, pid_t pid, const Options &o, Report *r, double *seconds) {
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  auto until = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.deadline_s));
  std::string buf;
  bool open = true;
  while (open && !r->have_verdict) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left > 250 ? 250 : left));
    double elapsed = std::chrono::duration<double>(clock::now() - start).count();
    if (elapsed >= 1)  // work over a second gets a progress line (on a terminal only)
      rig_tool_progress("rig probe: %s, %.0f s of %g s%s%s", r->device.empty() ? "opening the device" : r->device.c_str(),
                        elapsed, o.deadline_s, r->logs.empty() ? "" : ": ", r->logs.empty() ? "" : r->logs.back().c_str());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char chunk[4096];
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      open = false;
      break;
    }
    buf.append(chunk, static_cast<size_t>(got));
    for (size_t nl; (nl = buf.find('\n')) != std::string::npos;) {
      take_line(buf.substr(0, nl), r);
      if (o.verbose && buf.compare(0, 4, "log\t") == 0) std::fprintf(stderr, "rig probe: %s\n", buf.substr(4, nl - 4).c_str());
      buf.erase(0, nl + 1);
    }
  }
  *seconds = std::chrono::duration<double>(clock::now() - start).count();
  rig_tool_progress_end();
  int status = 0;
  if (!r->have_verdict && r->error.empty() && open) {
    // No answer in time: the child is likely inside the driver (a registration that never returns).
    kill(pid, SIGKILL);
    r->have_verdict = true;
    r->kind = "Inconclusive";
    char why[128];
    std::snprintf(why, sizeof why, "no answer within %g s (the self-test was killed)", o.deadline_s);
    r->reason = why;
  }
  // Reap the child, but never wait on it past a few seconds: a process stuck in the kernel may take long
  // to die, and this command must not hang.
  auto reap_until = clock::now() + std::chrono::seconds(5);
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (clock::now() >= reap_until) {
      kill(pid, SIGKILL);
      r->logs.push_back("the self-test process " + std::to_string(pid) + " did not exit after SIGKILL; left behind");
      return;
    }
    usleep(10000);
  }
  if (!r->have_verdict && r->error.empty()) {
    r->have_verdict = true;
    r->kind = "Inconclusive";
    if (WIFSIGNALED(status))
      r->reason = std::string("the self-test process died with signal ") + std::to_string(WTERMSIG(status)) + " (" +
                  signal_name(WTERMSIG(status)) + ") before answering";
    else
      r->reason = "the self-test process exited (" + std::to_string(WEXITSTATUS(status)) + ") before answering";
  }
}

// A verdict (or the static answer) as the JSON object docs/cli-json.md describes: always an object.
void json_verdict(const char *kind, const std::string &refusal, const std::string &reason, const char *cacheable) {
  std::printf("{\"kind\": ");
  rig_tool_json_string(stdout, kind);
  std::printf(", \"refusal\": ");
  rig_tool_json_string(stdout, refusal.empty() ? nullptr : refusal.c_str());
  std::printf(", \"reason\": ");
  rig_tool_json_string(stdout, reason.c_str());
  if (cacheable) std::printf(", \"cacheable\": %s", cacheable);
  std::printf("}");
}

void print_json(const Options &o, const Report &r, double seconds, uint64_t file_size, int code) {
  std::printf("{\"schema\": 1, \"file\": ");
  rig_tool_json_string(stdout, o.file);
  std::printf(", \"file_hex\": ");
  rig_tool_json_hex(stdout, o.file, std::strlen(o.file));
  std::printf(",\n \"file_bytes\": %llu, \"offset\": %llu, \"length\": %llu, \"map\": ",
              static_cast<unsigned long long>(file_size), static_cast<unsigned long long>(o.offset),
              static_cast<unsigned long long>(o.length));
  rig_tool_json_string(stdout, o.map.c_str());
  std::printf(", \"device\": ");
  rig_tool_json_string(stdout, r.device.empty() ? nullptr : r.device.c_str());
  std::printf(",\n \"static\": ");
  if (!r.have_static) json_verdict(nullptr, "", "the device was not opened", nullptr);
  else if (r.self_test)
    json_verdict("Self_test_required", "", "the static table leaves this device to the self-test", nullptr);
  else json_verdict(r.static_kind.c_str(), r.static_refusal, r.static_reason, nullptr);
  std::printf(",\n \"verdict\": ");
  if (r.have_verdict) json_verdict(r.kind.c_str(), r.refusal, r.reason, r.cacheable ? "true" : "false");
  else json_verdict(nullptr, "", "no verdict: see error", "false");
  std::printf(",\n \"error\": ");
  rig_tool_json_string(stdout, r.have_verdict ? nullptr : r.error.c_str());
  std::printf(", \"exit_code\": %d, \"registered_gbps\": %.3f, \"staged_gbps\": %.3f, \"seconds\": %.3f,\n \"log\": [",
              code, r.registered / 1e9, r.staged / 1e9, seconds);
  for (size_t i = 0; i < r.logs.size(); ++i) {
    std::printf("%s", i ? ", " : "");
    rig_tool_json_string(stdout, r.logs[i].c_str());
  }
  std::printf("]}\n");
}

void print_text(const Options &o, const Report &r, double seconds, uint64_t file_size) {
  double reg = r.registered / 1e9, stg = r.staged / 1e9;
  std::printf("file      %s, bytes [%llu, +%llu) of %llu, %s mapping\n", o.file,
              static_cast<unsigned long long>(o.offset), static_cast<unsigned long long>(o.length),
              static_cast<unsigned long long>(file_size),
              o.map == "shared" ? "shared read-only" : o.map == "private" ? "PRIVATE read-only" : "PROT_NONE");
  std::printf("device    %s\n", r.device.empty() ? "(not opened)" : r.device.c_str());
  if (!r.have_static) std::printf("static    (no answer)\n");
  else if (r.self_test) std::printf("static    Self_test_required\n");
  else
    std::printf("static    %s%s%s%s: %s\n", r.static_kind.c_str(), r.static_refusal.empty() ? "" : " (",
                r.static_refusal.c_str(), r.static_refusal.empty() ? "" : ")", r.static_reason.c_str());
  if (r.have_verdict)
    std::printf("verdict   %s%s%s%s: %s\ncacheable %s\n", r.kind.c_str(), r.refusal.empty() ? "" : " (",
                r.refusal.c_str(), r.refusal.empty() ? "" : ")", r.reason.c_str(), r.cacheable ? "yes" : "no");
  else std::printf("error     %s\n", r.error.c_str());
  if (r.registered > 0 || r.staged > 0)
    std::printf("speeds    registered %.2f GB/s, staged %.2f GB/s (ratio %.2f)\n", reg, stg, stg > 0 ? reg / stg : 0);
  std::printf("seconds   %.3f\n", seconds);
  if (o.length < default_region && r.registered > 0)
    std::printf("note      a region under 256 MiB flatters registration (11x at 4 MiB, 1.5x at 4 GiB on an H200)\n");
}

// The exit status for the report: the verdict's (tools/cli.h), or an error when there is none.
int exit_code(const Report &r) {
  if (!r.have_verdict) return RIG_EXIT_ERROR;
  for (int k = RIG_VERDICT_USABLE; k <= RIG_VERDICT_STILL_REGISTERED; ++k)
    if (r.kind == rig_verdict_kind_name(static_cast<rig_verdict_kind>(k)))
      return rig_tool_exit_for(static_cast<rig_verdict_kind>(k));
  return RIG_EXIT_INCONCLUSIVE;
}

// Refuses what cannot be probed before any device is touched: says what is wrong with FILE in its terms.
// Opened with O_NONBLOCK and checked open (fstat), so a FIFO is refused without waiting for a writer; a
// UNIX socket, which no open reaches (ENXIO), is named by stat.
int check_file(Options *o, uint64_t *size) {
  int file = open(o->file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  struct stat st;
  if (file < 0 && errno == ENXIO && stat(o->file, &st) == 0 && S_ISSOCK(st.st_mode)) {
    std::fprintf(stderr, "rig probe: %s is a socket, not a regular file: the probe maps a file's page cache\n", o->file);
    return RIG_EXIT_ERROR;
  }
  if (file < 0 || fstat(file, &st) != 0) {
    std::fprintf(stderr, "rig probe: %s: %s\n", o->file, std::strerror(errno));
    if (file >= 0) close(file);
    return RIG_EXIT_ERROR;
  }
  close(file);
  if (S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "rig probe: %s is a directory: name a file to probe\n", o->file);
    return RIG_EXIT_ERROR;
  }
  if (!S_ISREG(st.st_mode)) {
    const char *kind = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device node" : "something else";
    std::fprintf(stderr, "rig probe: %s is %s, not a regular file: the probe maps a file's page cache\n", o->file, kind);
    return RIG_EXIT_ERROR;
  }
  *size = static_cast<uint64_t>(st.st_size);
  if (*size == 0) {
    std::fprintf(stderr, "rig probe: %s is empty: there are no bytes to map\n", o->file);
    return RIG_EXIT_ERROR;
  }
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) page = 4096;
  if (o->offset % static_cast<uint64_t>(page) != 0) {
    std::fprintf(stderr, "rig probe: --offset %llu is not a multiple of the page size (%ld): a mapping starts on a page\n",
                 static_cast<unsigned long long>(o->offset), page);
    return RIG_EXIT_USAGE;
  }
  if (o->offset >= *size) {
    std::fprintf(stderr, "rig probe: --offset %llu is at or past the end of %s (%llu bytes)\n",
                 static_cast<unsigned long long>(o->offset), o->file, static_cast<unsigned long long>(*size));
    return RIG_EXIT_USAGE;
  }
  uint64_t room = *size - o->offset;
  if (!o->length_given) o->length = room < default_region ? room : default_region;
  if (o->length > room) {
    std::fprintf(stderr, "rig probe: --length %llu runs past the end of %s (%llu bytes from the offset)\n",
                 static_cast<unsigned long long>(o->length), o->file, static_cast<unsigned long long>(room));
    return RIG_EXIT_USAGE;
  }
  return -1;
}

}  // namespace

extern "C" int rig_tool_probe(int argc, char **argv) {
  Options o;
  if (int e = parse(argc, argv, &o); e >= 0) return e;
  uint64_t size = 0;
  if (int e = check_file(&o, &size); e >= 0) return e;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "rig probe: pipe: %s\n", std::strerror(errno));
    return RIG_EXIT_ERROR;
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "rig probe: fork: %s\n", std::strerror(errno));
    return RIG_EXIT_ERROR;
  }
  if (pid == 0) {
    close(fds[0]);
    signal(SIGPIPE, SIG_IGN);
    int code = run_child(o, fds[1]);
    close(fds[1]);
    _exit(code);  // skip the parent's atexit handlers and stdio buffers copied by fork
  }
  close(fds[1]);
  Report r;
  double seconds = 0;
  collect(fds[0], pid, o, &r, &seconds);
  close(fds[0]);
  int code = exit_code(r);
  if (o.json) print_json(o, r, seconds, size, code);
  else print_text(o, r, seconds, size);
  if (!r.have_verdict && !o.json) std::fprintf(stderr, "rig probe: %s\n", r.error.c_str());
  return code;
}
