// Mutation testing of the six rules: a build with -Dmutate_rule=N compiles rule N's code out, and
// tests/core/mutation.sh checks that the rule tests then fail. Release builds have RIG_MUTATE_RULE 0.
#pragma once

#ifndef RIG_MUTATE_RULE
#define RIG_MUTATE_RULE 0
#endif

namespace rig {
constexpr bool rule_on(int n) { return RIG_MUTATE_RULE != n; }
}  // namespace rig
