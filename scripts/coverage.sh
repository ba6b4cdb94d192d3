#!/usr/bin/env bash
# Line coverage of the code under test: builds BUILD_DIR (default build-coverage) with gcc's
# --coverage, runs every test once, and prints per source file of suite/ and solvers/ the lines
# run / lines, least covered first, then the total. gcov comes with gcc: nothing to install.
# The untested lines of one file: (cd BUILD_DIR && gcov -o CMakeFiles/mallocbench_core.dir/suite
#   ../suite/FILE.c) writes FILE.c.gcov, where '#####' marks a line no test ran.
# Usage: scripts/coverage.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-coverage}"
src=$(pwd)
export MALLOCBENCH_DATA="${MALLOCBENCH_DATA:-$src/../shared/data}"
./scripts/setup.sh >/dev/null
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="--coverage -O0" \
  -DCMAKE_EXE_LINKER_FLAGS="--coverage" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
find "$build" -name '*.gcda' -delete
ctest --test-dir "$build" -j"$(nproc)" --output-on-failure >/dev/null || {
  echo "coverage: some tests failed (ctest --test-dir $build --output-on-failure)" >&2
  exit 1
}
# gcov's summary per object directory: "File 'PATH'" then "Lines executed:P% of N"
find "$build/CMakeFiles" -name '*.gcda' -printf '%h\n' | sort -u | while read -r dir; do
  (cd "$dir" && gcov -n ./*.gcda 2>/dev/null) || true
done | awk -v src="$src/" '
  /^File / { file = substr($2, 2, length($2) - 2); next }
  /^Lines executed:/ {
    split($2, p, ":"); pct = p[2]; sub("%", "", pct); n = $4
    this = file; file = "" # gcov ends with a total line that has no File line of its own
    if (index(this, src) != 1 || this !~ /\.c$/) next
    rel = substr(this, length(src) + 1)
    if (rel !~ /^(suite|solvers)\//) next
    run = int(pct * n / 100 + 0.5)
    if (!(rel in lines) || run > hit[rel]) { lines[rel] = n; hit[rel] = run }
  }
  END {
    for (f in lines) { printf "%6.1f%%  %5d / %5d  %s\n", 100 * hit[f] / lines[f], hit[f], lines[f], f
                       total += lines[f]; covered += hit[f] }
    printf "total   %d / %d lines of suite/ and solvers/ run by the tests: %.1f%%\n", covered, total,
           100 * covered / total > "/dev/stderr"
  }' | sort -n
