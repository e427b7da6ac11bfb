#!/bin/sh
# For each rule N, builds rig with rule N's code compiled out and checks that the rule tests fail, and
# that the failing test is rule N's. A rule whose removal no test notices fails this script.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${MUTATION_DIR:-/tmp/rig-mutation}
status=0
# One build directory for the six: the rule is a generated header (src/core/meson.build), so each rule after
# the first recompiles only the files that include core/mutate.h and relinks test_rules. Only what test_rules
# needs (it runs on memory and test devices): no Vulkan driver, bindings, bench or man page.
dir=$work/rules
[ -d "$dir" ] || meson setup "$dir" "$src" -Dbench=false -Dbindings=disabled -Dvulkan=disabled -Dman=disabled \
  >/dev/null || { echo "mutation: setup failed"; exit 1; }
for n in 1 2 3 4 5 6; do
  meson configure "$dir" -Dmutate_rule=$n >/dev/null || { echo "rule $n: configure failed"; status=1; continue; }
  ninja -C "$dir" tests/core/test_rules >/dev/null || { echo "rule $n: build failed"; status=1; continue; }
  grep -q "RIG_MUTATE_RULE $n\$" "$dir/src/core/mutate_rule.h" || { echo "rule $n: the header says otherwise"; status=1; continue; }
  out=$(RIG_TEST_KINDS=memory+test timeout 60 "$dir/tests/core/test_rules" 2>&1)
  if echo "$out" | grep -E "^\[  (FAILED|ERROR)  \] rule${n}_" >/dev/null; then
    echo "rule $n removed: $(echo "$out" | grep -E "^\[  (FAILED|ERROR)  \] rule" | sort -u | tr '\n' ' ')"
  else
    echo "rule $n removed: NO rule$n test failed"; echo "$out" | tail -5; status=1
  fi
done
# A developer's rerun starts again from the unmutated library.
meson configure "$dir" -Dmutate_rule=0 >/dev/null || status=1
exit $status
