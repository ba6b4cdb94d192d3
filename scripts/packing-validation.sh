#!/usr/bin/env bash
# A validation set for packing-bound workloads that never touches the test split: 4 random
# MiniMalloc-like instances (`mallocbench generate packing`, seeds 101-104, 150-201 buffers, a
# perfect packing in 1 MiB exists) at two capacities each (512 KiB: choose what fits; 1 MiB:
# everything fits), written to results/validation/packing/ with a catalogue of their own, then
# an agent's search table on them (datasets/agents/EXPERIMENTS.md, "Packing instances").
# Usage: scripts/packing-validation.sh AGENT.h5 [extra 'bench muzero' options]
# Assumes a build in ./build (scripts/build.sh build).
set -euo pipefail
cd "$(dirname "$0")/.."
agent=${1:?usage: scripts/packing-validation.sh AGENT.h5 [bench muzero options]}
shift
dir=results/validation/packing
mkdir -p "$dir"
catalogue="$dir/catalogue.txt"
echo "name kind source args hardware capacity split tags" >"$catalogue"
for seed in 101 102 103 104; do
  n=$((150 + (seed - 101) * 17))
  ./build/mallocbench generate packing --buffers "$n" --seed "$seed" -o "$dir/p$seed.wl" \
    --solution "$dir/p$seed.solution.csv" >/dev/null
  echo "vpack$seed-tpu native $dir/p$seed.wl - tpu-v4i 512KiB train packing,generated" >>"$catalogue"
  echo "vpack${seed}_pack-tpu native $dir/p$seed.wl - tpu-v4i 1MiB train packing,generated" >>"$catalogue"
done
./build/mallocbench bench muzero --agent "$agent" --returns 0,2,8,32 --catalogue "$catalogue" \
  --split train "$@"
