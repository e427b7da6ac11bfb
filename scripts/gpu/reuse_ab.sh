#!/usr/bin/env bash
# The reuse pool on and off (RIG_REUSE_POOL=0) through the carried build's `rig load --repeat 3` (a kept
# staging pool: the first load makes it, the later ones reuse it), interleaved ROUNDS times (default 4) on a
# warm file of LOAD_GIB GiB (default 8); each line gives every load's GB/s and its tensors' allocation time.
# Usage (repository root, on the GPU machine): bash scripts/gpu/reuse_ab.sh
B=build-carry; export LD_LIBRARY_PATH=$PWD/$B; unset RIG_CUDA_LIBRARY
S=$(mktemp -d); F=$S/w.safetensors
$B/bench/load/bench_load $F --make-gib ${LOAD_GIB:-8} --make-only; sync; cat $F >/dev/null
sum() { grep -o '"gb_per_s": [0-9.]*\|"alloc_seconds": [0-9.]*' | paste - - | tr '\n' ' '; echo; }
for r in $(seq ${ROUNDS:-4}); do
  echo "pool off $r: $(RIG_REUSE_POOL=0 $B/tools/rig load $F --device cuda:0 --json --repeat 3 | sum)"
  echo "pool on  $r: $($B/tools/rig load $F --device cuda:0 --json --repeat 3 | sum)"
done
rm -rf $S
