#!/usr/bin/env bash
# mallocMuZero with per-workload fine-tuning on the test split: each of the 46 unseen cases is
# played once, then the agent trains on that workload alone for SECONDS (self-play + updates,
# its own search: learned model or real game) and plays again at 8 points and at the end; the
# best episode found is stored (datasets/agents/README.md, "Per-workload fine-tuning"). One
# seed (fine-tuning is what costs: ~25 minutes at 30 s with --jobs 2), heuristic and greedy
# beside it. Fine-tuning is bounded by wall time, so its results depend on the machine's speed
# and load; the file records the option (run_finetune_s) and each row's note the updates made.
# Usage: scripts/finetune-test.sh [SECONDS (30)] [AGENT (results/agents/full.h5)] [run options]
# Writes results/finetune/test-<SECONDS>s.h5 and its summary beside it (.txt). Assumes a build
# in ./build (scripts/build.sh build) and the agent (scripts/reproduce.sh --profile full).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
agent=${2:-results/agents/full.h5}
shift $(($# < 2 ? $# : 2))
[ -f "$agent" ] || { echo "finetune-test: agent '$agent' not found" >&2; exit 2; }
export MALLOCBENCH_DATA="${MALLOCBENCH_DATA:-$(pwd)/../shared/data}"
mkdir -p results/finetune
out="results/finetune/test-${seconds}s.h5"
./build/mallocbench run --profile full --split test --seeds 1 --finetune "$seconds" \
  --solvers heuristic,greedy,mallocmuzero,mallocmuzero-exact --agent "$agent" --jobs 2 \
  --out "$out" --force --no-progress "$@"
./build/mallocbench verify "$out" >/dev/null
{
  ./build/mallocbench summary "$out" --split test
  echo
  ./build/mallocbench summary "$out" --split test --workloads '^at_tpu_8192'
} | tee "${out%.h5}.txt"
