#!/usr/bin/env bash
# The threads, seed and rules programs over CUDA kinds (both timelines) and the threads program over HIP kinds
# through the shim, on the H200 with RIG_REQUIRE=cuda,hip; threads under racecheck. Run from the repo root.
B=build-gpu; export LD_LIBRARY_PATH=$PWD/$B; export RIG_REQUIRE=cuda,hip
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done; ldconfig
for tl in events memops; do
  [ $tl = memops ] && export RIG_CUDA_TIMELINE=memops RIG_HIP_TIMELINE=events
  for k in memory+cuda cuda; do for t in threads seed rules; do
    echo "== $t $k $tl: $(RIG_TEST_KINDS=$k timeout 120 $B/tests/core/test_$t 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) ' | tr '\n' ' ') rc=$?"; done; done
  for k in memory+hip hip; do
    echo "== threads $k $tl (shim): $(RIG_HIP_LIBRARY=$PWD/$B/tests/hip/libhipshim.so RIG_TEST_KINDS=$k timeout 120 $B/tests/core/test_threads 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) ' | tr '\n' ' ')"; done
done
unset RIG_CUDA_TIMELINE
echo "== threads cuda under racecheck: $(RIG_TEST_KINDS=cuda timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/core/test_threads 2>&1 | grep -E 'PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY' | tr '\n' ' ')"
