#!/bin/sh
# For each rule N, builds rig with rule N's code compiled out and checks that the rule tests fail, and
# that the failing test is rule N's. A rule whose removal no test notices fails this script.
# The builds are of a copy of the tree (the files git tracks or would, as the working tree has them) whose
# src/core/mutate.h says RIG_MUTATE_RULE N: one build directory for the six, each rule after the first
# recompiling only the files that include that header and relinking test_rules.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${MUTATION_DIR:-/tmp/rig-mutation}
copy=$work/tree dir=$work/build
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || { echo "mutation: $src is not a git checkout (the copy is of its files)"; exit 1; }
mkdir -p "$copy"
# The copy keeps the files' times, so a rerun rebuilds only what changed since.
(cd "$src" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -C "$copy" -xf - ||
  { echo "mutation: copy failed"; exit 1; }
header=$copy/src/core/mutate.h
grep -q '^#define RIG_MUTATE_RULE 0$' "$header" || { echo "mutation: $header has no '#define RIG_MUTATE_RULE 0'"; exit 1; }
# Only what test_rules needs (it runs on memory and test devices): no Vulkan driver, bindings, bench or man page.
[ -d "$dir" ] || meson setup "$dir" "$copy" -Dbench=false -Dbindings=disabled -Dvulkan=disabled -Dman=disabled \
  >/dev/null || { echo "mutation: setup failed"; exit 1; }
status=0
for n in 1 2 3 4 5 6; do
  sed -i "s/^#define RIG_MUTATE_RULE [0-9]*\$/#define RIG_MUTATE_RULE $n/" "$header"
  ninja -C "$dir" tests/core/test_rules >/dev/null || { echo "rule $n: build failed"; status=1; continue; }
  out=$(RIG_TEST_KINDS=memory+test timeout 60 "$dir/tests/core/test_rules" 2>&1)
  if echo "$out" | grep -E "^\[  (FAILED|ERROR)  \] rule${n}_" >/dev/null; then
    echo "rule $n removed: $(echo "$out" | grep -E "^\[  (FAILED|ERROR)  \] rule" | sort -u | tr '\n' ' ')"
  else
    echo "rule $n removed: NO rule$n test failed"; echo "$out" | tail -5; status=1
  fi
done
exit $status
