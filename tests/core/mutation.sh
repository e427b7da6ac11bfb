#!/bin/sh
# For each rule N, builds rig with rule N's code compiled out and checks that the rule tests fail, and
# that the failing test is rule N's. A rule whose removal no test notices fails this script.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${MUTATION_DIR:-/tmp/rig-mutation}
status=0
for n in 1 2 3 4 5 6; do
  dir=$work/rule$n
  # Only what test_rules needs (it runs on memory and test devices): no Vulkan driver, bindings, bench or man
  # page to compile six times over (a sixth of each build; CI's hour, 2026-12-04).
  [ -d "$dir" ] || meson setup "$dir" "$src" -Dmutate_rule=$n -Dbench=false -Dbindings=disabled -Dvulkan=disabled \
    -Dman=disabled >/dev/null || { echo "rule $n: setup failed"; status=1; continue; }
  ninja -C "$dir" tests/core/test_rules >/dev/null || { echo "rule $n: build failed"; status=1; continue; }
  out=$(RIG_TEST_KINDS=memory+test timeout 60 "$dir/tests/core/test_rules" 2>&1)
  if echo "$out" | grep -E "^\[  (FAILED|ERROR)  \] rule${n}_" >/dev/null; then
    echo "rule $n removed: $(echo "$out" | grep -E "^\[  (FAILED|ERROR)  \] rule" | sort -u | tr '\n' ' ')"
  else
    echo "rule $n removed: NO rule$n test failed"; echo "$out" | tail -5; status=1
  fi
done
exit $status
