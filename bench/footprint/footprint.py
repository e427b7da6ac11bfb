#!/usr/bin/env python3
"""What one chained submit of rig touches: instructions, and distinct cache lines of data and of code.

On the H200 rig's own time per chained copy (bench/cuda's timed pass, "own time") is 0.17-0.25 us for about
550 instructions: far fewer cycles than that many instructions need, so most of it is waiting on memory,
which each driver call (about 4 us of libcuda's own work) pushes out of the nearest caches. Lines touched per
submit are what such a host pays for; this counts them on any machine, with no GPU: chain_a (bench/cuda's
row (a)) runs on the fake libcuda under valgrind's lackey, the trace is cut at each entry to rig_submit, and
each access made by an instruction of librig's code is counted once per submit, put to the function that made
it. The stack is left out (the driver's calls keep it warm). The fake's own accesses are not rig's.

Usage: bench/footprint/footprint.py BUILD [OPS]   (BUILD: a meson build with tests, for the fake libcuda)
With KERNELS=1, bench/cuda's kernel row (rig_add_u32 in place) instead of its copies.
With FOOTPRINT_LINES=1, also every data line of one steady submit, with the source line of the first
instruction that touched it (addr2line: a build with -g says where).

"Lines again after driver calls" counts a line once in each stretch between two entries to the driver that
it is touched in: what a submit would miss if each driver call pushed all of rig's lines out of the nearest
caches (a line read before the wait's call and again after it counts twice). That, not the distinct lines,
is what a host whose driver walks megabytes at each call charges (bench/README.md, "A driver's footprint on
the fake").
"""
import bisect
import collections
import os
import statistics
import subprocess
import sys
import tempfile


stack_from = stack_to = 0  # the main thread's stack, which submits: left out (the driver keeps it warm)
driver_lo = driver_hi = 0  # the fake libcuda's code: an instruction there after one outside starts a stretch


def symbols(path):
    found = []
    out = subprocess.run(["nm", "-C", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split(" ", 2)
        if len(p) == 3 and p[1] in "tTwW":
            found.append((int(p[0], 16), p[2]))
    found.sort()
    return found


def where(said_path):
    """(rig_submit's address, librig's code from, to, its load base, symbol addresses, names), or Nones."""
    entry = lo = hi = base = None
    table, names = [], []
    global stack_from, stack_to, driver_lo, driver_hi
    for said in open(said_path):
        if "footprint: code" in said:
            words = said.split()
            lo, hi = (int(x, 16) for x in words[2].split("-"))
            base = lo - int(words[4], 16)
            syms = symbols(words[-1])
            table, names = [s[0] for s in syms], [s[1] for s in syms]
        elif "footprint: driver" in said:
            driver_lo, driver_hi = (int(x, 16) for x in said.split()[2].split("-"))
        elif "footprint: stack" in said:
            stack_to = int(said.split()[-1], 16) + 4096
            stack_from = stack_to - (8 << 20)
        elif "footprint: rig_submit" in said:
            entry = int(said.split()[-1], 16)
    if entry is None or lo is None:
        return None, None, None, None, [], []
    return entry, lo, hi, base, table, names


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    ops = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    fake = os.path.join(build, "tests/cuda/libfakecuda.so")
    if not os.path.exists(fake):
        sys.exit("footprint: no fake libcuda at %s (a build with tests)" % fake)
    work = tempfile.mkdtemp(prefix="rig-footprint.")
    program = os.path.join(work, "chain_a")
    subprocess.run(["cc", "-O2", os.path.join(here, "chain_a.c"), "-I", os.path.join(root, "include"), "-I", os.path.join(root, "bench"), "-L", build,
                    "-lrig", "-ldl", "-Wl,-rpath," + build, "-o", program], check=True)
    env = dict(os.environ, RIG_CUDA_LIBRARY=fake, FAKE_DEVICE_ARENA_GIB="1")
    env.pop("KERNELS", None)
    if os.environ.get("KERNELS"):
        env["KERNELS"] = os.path.join(root, "tests/cuda/kernels.ptx")
    said_path = os.path.join(work, "said")
    read, write = os.pipe()
    with open(said_path, "w") as said:
        run = subprocess.Popen(["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-fd=%d" % write, program,
                                str(ops)], env=env, pass_fds=(write,), stderr=said)
    os.close(write)
    lo = hi = entry = base = None
    table, names, cache = [], [], {}
    submits = []
    data = code = None
    counted, who = False, None
    stretch, in_driver = 0, False
    with os.fdopen(read) as trace:
        for number, line in enumerate(trace):
            if entry is None:
                # The program's first lines (to a file: the trace must keep flowing) say where librig's code
                # is and where rig_submit starts; the loader's and main's start before them are not rig's.
                if number % 20000 == 0:
                    entry, lo, hi, base, table, names = where(said_path)
                continue
            if line[0] == "I":
                a = int(line[3:line.index(",")], 16)
                counted = lo <= a < hi
                last_i = a
                if a == entry:
                    data, code = collections.defaultdict(set), collections.defaultdict(set)
                    submits.append((data, code, [0], {}, {}))
                    stretch = 0
                inside = driver_lo <= a < driver_hi
                if inside and not in_driver:
                    stretch += 1
                in_driver = inside
                if data is not None and counted:
                    who = cache.get(a)
                    if who is None:
                        i = bisect.bisect_right(table, a - base) - 1
                        who = cache[a] = names[i][:100] if i >= 0 else "?"
                    code[who].add(a >> 6)
                    submits[-1][2][0] += 1
            elif line[0] == " " and data is not None and counted and line[1] in "LSM":
                a = int(line[3:line.index(",")], 16)
                if not stack_from <= a < stack_to:
                    data[who].add(a >> 6)
                    submits[-1][3].setdefault(a >> 6, (line[1], last_i))
                    submits[-1][4].setdefault((stretch, a >> 6), (line[1], last_i))
    if run.wait() != 0:
        sys.exit("footprint: chain_a failed: %s" % open(said_path).read())
    steady = submits[len(submits) // 5:-10]  # past the first fifth (first touches, growing rings)
    if not steady:
        sys.exit("footprint: no submits traced")

    print("rig's chained submit (%s) on the fake libcuda, %d submits traced (median of the last %d)" %
          ("kernels" if os.environ.get("KERNELS") else "copies", len(submits), len(steady)))
    print("  instructions          %6.0f" % statistics.median(s[2][0] for s in steady))
    print("  data lines (no stack) %6.0f" % statistics.median(len(set().union(*s[0].values())) for s in steady))
    if driver_lo:
        print("  lines again after driver calls %6.0f  (data lines, each counted once in each stretch between driver calls)" %
              statistics.median(len(s[4]) for s in steady))
    print("  code lines            %6.0f" % statistics.median(len(set().union(*s[1].values())) for s in steady))
    # Pages (4 KiB): each a TLB entry the driver's calls may have pushed out of the first-level TLB.
    print("  data pages            %6.0f" % statistics.median(len({l >> 6 for l in set().union(*s[0].values())}) for s in steady))
    print("  code pages            %6.0f" % statistics.median(len({l >> 6 for l in set().union(*s[1].values())}) for s in steady))
    for kind, index in (("data", 0), ("code", 1)):
        total = collections.Counter()
        for s in steady:
            for name, lines in s[index].items():
                total[name] += len(lines)
        print("  %s lines by function (a line two functions touch counts for both):" % kind)
        for name, n in total.most_common(8):
            print("    %5.1f  %s" % (n / len(steady), name))
    if os.environ.get("FOOTPRINT_LINES"):
        one = steady[len(steady) // 2][3]
        again = steady[len(steady) // 2][4]
        lib = os.path.join(build, [f for f in os.listdir(build) if f.startswith("librig.so.") and f.count(".") == 4][0])
        firsts = sorted(set(i for _, i in one.values()) | set(i for _, i in again.values()))
        out = subprocess.run(["addr2line", "-e", lib, "-f", "-C", "-i", "-a"] + ["%x" % (i - base) for i in firsts],
                             capture_output=True, text=True).stdout
        where_of, cur = {}, None
        for l in out.splitlines():
            if l.startswith("0x"):
                cur = int(l, 16)
                where_of[cur] = []
            else:
                where_of[cur].append(l)
        print("  one submit's data lines, in the order first touched (L load, S store, M modify), with their page:")
        for n, (ln, (kind, i)) in enumerate(sorted(one.items(), key=lambda kv: list(one).index(kv[0]))):
            w = where_of.get(i - base, ["?"])
            src = [x.split("/")[-1] for x in w[1::2]]
            print("    %2d %s page %9x %-60s %s" % (n, kind, ln >> 6, w[0][:60], " <- ".join(src)))

        if again:
            print("  the same submit's lines in each stretch between driver calls (stretch, line, first touch there):")
            for (st, ln), (kind, i) in again.items():
                w = where_of.get(i - base, ["?"])
                src = [x.split("/")[-1] for x in w[1::2]]
                print("    %2d %s %9x %-60s %s" % (st, kind, ln, w[0][:60], " <- ".join(src[:4])))


if __name__ == "__main__":
    main()
