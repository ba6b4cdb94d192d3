#!/usr/bin/env bash
# The default quick benchmark, end to end: installs what is missing, builds (Release), trains
# the small mallocMuZero agent of the quick profile (once; about two minutes), runs the quick
# profile, verifies it, then draws the figures and writes the report.
# Usage: scripts/run.sh [extra 'mallocbench run' options, e.g. --jobs 1]
set -euo pipefail
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
./build/mallocbench run --profile quick --agent "$agent" "$@"
./build/mallocbench verify results/latest.h5
./build/mallocbench plot results/latest.h5
./build/mallocbench report results/latest.h5
echo "results: results/latest.h5 · figures: results/figures/ · report: results/REPORT.md"
