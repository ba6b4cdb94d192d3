#!/usr/bin/env bash
# The default quick benchmark, end to end: installs what is missing, builds (Release), trains
# the small mallocMuZero agent of the quick profile (once; about two minutes), runs the quick
# profile, verifies it, then draws the figures and writes the report.
# Usage: scripts/run.sh [extra 'mallocbench run' options, e.g. --jobs 1 or --out FILE]
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,5p' "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
./scripts/setup.sh
export MALLOCBENCH_DATA="${MALLOCBENCH_DATA:-$(pwd)/../shared/data}"
./scripts/build.sh build
mkdir -p results/agents
# The quick profile's agent: trained here, deterministically (fixed seed, step count, one
# thread, OpenBLAS kernel pinned: scripts/pinned-blas.sh), on synthetic workloads and the
# catalogue's train split; reused when present.
agent=results/agents/quick.h5
if [ ! -f "$agent" ]; then
  ./scripts/pinned-blas.sh ./build/mallocbench train --synthetic --split train --steps 6000 --jobs 1 --seed 0 -q --out "$agent"
fi
# the file this run wrote, as it says ("results: FILE"): results/latest.h5, or --out's FILE
log=$(mktemp)
trap 'rm -f "$log"' EXIT
./build/mallocbench run --profile quick --agent "$agent" "$@" | tee "$log"
results=$(sed -n 's/^results: //p' "$log" | tail -n 1)
[ -n "$results" ] || exit 0 # run only printed its help
./build/mallocbench verify "$results"
./build/mallocbench plot "$results"
./build/mallocbench report "$results"
echo "results: $results · figures: results/figures/ · report: results/REPORT.md"
