B=build-carry; export LD_LIBRARY_PATH=$PWD/$B; unset RIG_CUDA_LIBRARY
S=$(mktemp -d); F=$S/w.safetensors
$B/bench/load/bench_load $F --make-gib 8 --make-only; sync; cat $F >/dev/null
sum() { grep -o '"gb_per_s": [0-9.]*\|"alloc_seconds": [0-9.]*' | paste - - | tr '\n' ' '; echo; }
for r in 1 2 3 4; do
  echo "pool off $r: $(RIG_REUSE_POOL=0 $B/tools/rig load $F --device cuda:0 --json --repeat 3 | sum)"
  echo "pool on  $r: $($B/tools/rig load $F --device cuda:0 --json --repeat 3 | sum)"
done
rm -rf $S
