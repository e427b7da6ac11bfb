#!/usr/bin/env python3
"""Mutation check of the mapped suite: each mutation breaks one promise of src/mapped, and the suite must
fail for every one (a test that cannot fail is a defect). Rebuilds in BUILD_DIR, restores every file.
usage: tests/mapped/mutation_check.py [BUILD_DIR]   (default build-mapped; run from the repo root)"""
import subprocess, sys, time

build = sys.argv[1] if len(sys.argv) > 1 else 'build-mapped'
targets = ' '.join(['librig.so.0.1.0'] + ['tests/mapped/test_mapped_' + t for t in
                   ['probe_with', 'static_table', 'device_probe', 'cuda_probe', 'probe_tool']])
muts = [
 ('src/mapped/probe.h', 'inline constexpr int cleanup_tries = 2;', 'inline constexpr int cleanup_tries = 1;'),
 ('src/mapped/probe.h', 'inline constexpr int timed_runs = 7;', 'inline constexpr int timed_runs = 3;'),
 ('src/mapped/probe.h', 'return (length / 2) / window_unit * window_unit;', 'return length / 2;'),
 ('src/mapped/probe.cpp', 'if (first_difference(ref_[0], ref_[1], w_) == w_)', 'if (false)'),
 ('src/mapped/probe.cpp', 'poison(buffer_, ref_[i]);', ';'),
 ('src/mapped/probe.cpp', 'if (!recovered_.empty()) return Verdict::inconclusive(recovered_);', ''),
 ('src/mapped/probe.cpp', 'if (reg >= opt_.min_relative_speed * stg)', 'if (reg >= 0.8 * stg)'),
 ('src/mapped/probe.cpp', 'return (s == RIG_OUT_OF_MEMORY || s == RIG_INTERRUPTED) ? s : RIG_OK;', 'return s == RIG_OUT_OF_MEMORY ? s : RIG_OK;'),
 ('src/mapped/probe.cpp', '''      if (compare_mapping(win_[i], ref_[i], w_, &at) != Compared::equal) {''', '''      if (false) {'''),
 ('src/mapped/compare.cpp', 'if (!readable(map, n, at)) return Compared::unreadable;', ''),
 ('src/mapped/static_table.cpp', '''  if (is_of(framework, "Vulkan"))
    return''', '''  if (is_of(framework, "Vulkan") && fact && fact(RIG_FACT_INTEGRATED) != 7)
    return'''),
 ('src/mapped/static_table.cpp', '''    if (hip)''', '''    if (false)'''),
 ('src/mapped/static_table.cpp', '''  return name.size() > family.size() && name[family.size()] == '/' ''', '''  return name.size() > family.size() '''),
 ('src/mapped/verdict.h', '(kind == RIG_VERDICT_REFUSED && refusal == RIG_REFUSAL_WRONG_BYTES)', '(kind == RIG_VERDICT_REFUSED)'),
 ('src/core/range_table.cpp', '  if (it->second.owner != &device)', '  if (false)'),
 ('src/core/range_table.cpp', 'bool flag_for(HostRegistration &hr, bool read_only) { return read_only && hr.read_only_supported() == 1; }', 'bool flag_for(HostRegistration &, bool read_only) { return read_only; }'),
 ('src/mapped/device_ops.cpp', '  if (decided && decided->kind == RIG_VERDICT_REFUSED)', '  if (false)'),
]
missed = 0
for path, old, new in muts:
    src = open(path).read()
    if old not in src:
        print('NOT FOUND', path, old[:50]); continue
    open(path, 'w').write(src.replace(old, new, 1))
    try:
        b = subprocess.run('ninja -C %s %s' % (build, targets), shell=True, capture_output=True, text=True)
        if b.returncode:  # others' half-written code in a shared tree: wait and retry once
            time.sleep(30)
            b = subprocess.run('ninja -C %s %s' % (build, targets), shell=True, capture_output=True, text=True)
        if b.returncode:
            print('BUILD FAIL', path, old[:40], '|', b.stdout.strip().splitlines()[-1:]); missed += 1; continue
        r = subprocess.run('meson test -C %s --suite mapped --no-rebuild' % build, shell=True, capture_output=True, text=True)
        caught = 'Fail:               0' not in r.stdout
        print('caught' if caught else 'MISSED', '|', path, '|', old.strip()[:60])
        missed += 0 if caught else 1
    finally:
        open(path, 'w').write(src)
subprocess.run('ninja -C %s %s' % (build, targets), shell=True, capture_output=True)
print('%d of %d mutations missed' % (missed, len(muts)))
sys.exit(1 if missed else 0)
