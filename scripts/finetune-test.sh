#!/usr/bin/env bash
# mallocMuZero with per-workload fine-tuning on the test split: each of the 46 unseen cases is
# played once, then the agent trains on that workload alone for SECONDS (self-play + updates,
# its own search: learned model or real game) and plays again at 8 points and at the end; the
# best episode found is stored (datasets/agents/EXPERIMENTS.md, "Per-workload fine-tuning"). One
# seed of play by default (fine-tuning is what costs: ~25 minutes at 30 s with --jobs 2; SEEDS=N
# for more, each case then the geometric mean of its seeds), heuristic and greedy beside it. FINETUNE is seconds (30 or 30s: bounded by wall time, so results depend on the
# machine's speed and load; each row's note records the updates made) or training updates
# (2000steps: the same answer on any machine); the file records it (run_finetune_s or
# run_finetune_steps).
# Usage: [SEEDS=N] scripts/finetune-test.sh [FINETUNE (30)] [AGENT (results/agents/full.h5)]
#        [run options]
# Writes results/finetune/test-<FINETUNE>.h5 (test-<FINETUNE>-seeds<N>.h5 with SEEDS=N > 1 seeds
# of play, N times the time) and its summary beside it (.txt). Assumes a build in ./build
# (scripts/build.sh build) and the agent (scripts/reproduce.sh --profile full).
set -euo pipefail
cd "$(dirname "$0")/.."
finetune=${1:-30}
agent=${2:-results/agents/full.h5}
shift $(($# < 2 ? $# : 2))
[ -f "$agent" ] || { echo "finetune-test: agent '$agent' not found" >&2; exit 2; }
export MALLOCBENCH_DATA="${MALLOCBENCH_DATA:-$(pwd)/../shared/data}"
case "$finetune" in
  *steps) option=(--finetune-steps "${finetune%steps}") ;;
  *) option=(--finetune "${finetune%s}"); finetune="${finetune%s}s" ;;
esac
seeds=${SEEDS:-1}
case "$seeds" in
  '' | *[!0-9]* | 0) echo "finetune-test: SEEDS='$seeds': expected a count >= 1" >&2; exit 2 ;;
esac
mkdir -p results/finetune
out="results/finetune/test-${finetune}.h5"
if [ "$seeds" -gt 1 ]; then out="results/finetune/test-${finetune}-seeds${seeds}.h5"; fi
# fine-tuning trains: the OpenBLAS kernel is pinned as for training (scripts/pinned-blas.sh)
./scripts/pinned-blas.sh ./build/mallocbench run --profile full --split test --seeds "$seeds" "${option[@]}" \
  --solvers heuristic,greedy,mallocmuzero,mallocmuzero-exact --agent "$agent" --jobs 2 \
  --out "$out" --force --no-progress "$@"
./build/mallocbench verify "$out" >/dev/null
{
  ./build/mallocbench summary "$out" --split test
  echo
  ./build/mallocbench summary "$out" --split test --workloads '^at_tpu_8192'
} | tee "${out%.h5}.txt"
