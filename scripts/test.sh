#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the Release build, then the same tests
# under AddressSanitizer + UndefinedBehaviorSanitizer.
# Usage: scripts/test.sh [--quick] [--fuzz [SECONDS]]
#   --quick   Release build only (no sanitizer build)
#   --fuzz    also build the libFuzzer targets with clang and run each for SECONDS (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0; fuzz=0; fuzz_seconds=60
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --fuzz) fuzz=1; if [[ "${2:-}" =~ ^[0-9]+$ ]]; then fuzz_seconds="$2"; shift; fi ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
if [ "$fuzz" -eq 1 ]; then ./scripts/setup.sh --with-fuzz; else ./scripts/setup.sh; fi
export MALLOCBENCH_DATA="${MALLOCBENCH_DATA:-$(pwd)/../shared/data}"
# The tests read the real data (HLO dumps, factorizations, CSVs) from there; without it they
# skip their real-file checks, and a passing run has not tested them: say so first and last.
data_note() {
  [ -d "$MALLOCBENCH_DATA" ] ||
    echo "test.sh: note: no data directory $MALLOCBENCH_DATA (set MALLOCBENCH_DATA);" \
      "the tests skip their real-file checks" >&2
}
data_note
trap data_note EXIT

echo "== Formatting (.clang-format)"
./scripts/format.sh --check

echo "== Release build and tests"
./scripts/build.sh build
ctest --test-dir build --output-on-failure -j2

if [ "$quick" -eq 0 ]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
  ./scripts/build.sh build-asan -DMALLOCBENCH_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j2
fi

if [ "$fuzz" -eq 1 ]; then
  echo "== libFuzzer targets, ${fuzz_seconds}s each"
  ./scripts/build.sh build-fuzz -DMALLOCBENCH_FUZZ=ON -DCMAKE_C_COMPILER=clang -DMALLOCBENCH_WERROR=OFF
  ./scripts/fuzz.sh build-fuzz "$fuzz_seconds"
fi
