// Mutation testing of the six rules: tests/core/mutation.sh rewrites the line below, in a copy of the tree, to
// compile rule N's code out, and checks that the rule tests then fail. The shipped library has 0: every rule on.
// A line in a header, not a compiler flag: changing it rebuilds only the few files that include this one, so
// the six mutated builds share one build directory (a flag would recompile the whole library six times).
#pragma once

#define RIG_MUTATE_RULE 0

namespace rig {
constexpr bool rule_on(int n) { return RIG_MUTATE_RULE != n; }
}  // namespace rig
