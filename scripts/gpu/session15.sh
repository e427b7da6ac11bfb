#!/usr/bin/env bash
# The third H200 call of 2026-12-04's third session: why a first load into the reuse pool runs slower than
# one into plain memory. Part o: pool_probe.py (CuPy: cudaMalloc, a fresh pool, a pool grown first, a pool
# memset first). Part k: first_loads.py with the reuse pool grown by the load's size first (RIG_LOAD_GROW).
# Usage (repository root, GPU machine): scripts/gpu/session15.sh BUILD [PARTS] (default "o k").
. scripts/gpu/session-env.sh "${1:-}"
PARTS=${2:-o k}
U=/tmp/layouts/uniform.safetensors M=/tmp/layouts/moe.safetensors
{
  date -u
  if [[ $PARTS == *o* ]]; then
    echo "=== pool_probe.py"
    timeout 200 python3 scripts/gpu/pool_probe.py 2 2>&1
  fi
  if [[ $PARTS == *k* ]]; then
    LAYOUTS="uniform moe" ROUNDS=0 timeout 120 python3 bench/load/layouts.py "$RIG" /tmp/layouts "$B" 2>&1 | tail -2
    echo "=== first loads"
    VARIANTS="once|repeat|repeat, pool grown first" ROUNDS=2 timeout 240 python3 scripts/gpu/first_loads.py "$RIG" $U $M 2>&1
  fi
  date -u
} 2>&1 | tee "$O/session15.txt"
