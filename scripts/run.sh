#!/usr/bin/env bash
# The default quick benchmark, end to end: installs what is missing, builds (Release), runs the
# quick profile, then draws the figures and writes the report.
# Usage: scripts/run.sh [extra 'mallocbench run' options, e.g. --jobs 1]
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export MALLOCBENCH_DATA="${MALLOCBENCH_DATA:-$(pwd)/../shared/data}"
./scripts/build.sh build
mkdir -p results
./build/mallocbench run --profile quick "$@"
./build/mallocbench verify results/latest.h5
./build/mallocbench plot results/latest.h5
./build/mallocbench report results/latest.h5
echo "results: results/latest.h5 · figures: results/figures/ · report: results/REPORT.md"
