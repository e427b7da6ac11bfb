// Mutation testing of the six rules: a build with -Dmutate_rule=N compiles rule N's code out, and
// tests/core/mutation.sh checks that the rule tests then fail. Every other build has RIG_MUTATE_RULE 0.
#pragma once

#include "core/mutate_rule.h"  // RIG_MUTATE_RULE, generated from the option (src/core/meson.build)

namespace rig {
constexpr bool rule_on(int n) { return RIG_MUTATE_RULE != n; }
}  // namespace rig
