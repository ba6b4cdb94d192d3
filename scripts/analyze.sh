#!/usr/bin/env bash
# Static analysis of suite/ and solvers/ with clang-tidy (on every new machine): the clang
# static analyzer and the bugprone checks, minus those that only flag this code's style. Reads
# the compile commands of BUILD_DIR (default build; configured here when missing) and prints
# each finding once. A finding is a lead, not a verdict: the analyzer sees one file at a time
# and does not follow variadic helpers (fail_at, h5_fail), so a path that "returns true" from
# one of them is impossible; error.h tells it that mb_fail returns false. Runs in about 2
# minutes on 2 cores; not part of scripts/test.sh, since what remains is such false positives
# (HACKING.md).
# Usage: scripts/analyze.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
command -v clang-tidy >/dev/null || { echo "analyze: clang-tidy not found" >&2; exit 1; }
[ -f "$build/compile_commands.json" ] || ./scripts/build.sh "$build" >/dev/null
checks='-*,clang-analyzer-*,bugprone-*'
for off in clang-analyzer-valist.Uninitialized clang-analyzer-optin.performance.Padding \
  clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling \
  clang-analyzer-security.insecureAPI.strcpy bugprone-easily-swappable-parameters \
  bugprone-narrowing-conversions bugprone-reserved-identifier bugprone-assignment-in-if-condition \
  bugprone-suspicious-string-compare bugprone-implicit-widening-of-multiplication-result \
  bugprone-misplaced-widening-cast bugprone-sizeof-expression; do
  checks="$checks,-$off"
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
git ls-files 'suite/*.c' 'suite/cli/*.c' 'solvers/*.c' 'solvers/muzero/*.c' |
  xargs -n 8 -P "$(nproc)" clang-tidy -p "$build" --quiet \
    --extra-arg=-Wno-unknown-warning-option -checks="$checks" >"$log" 2>/dev/null || true
findings=$(grep -E '^/.*: warning: ' "$log" | sed "s|^$(pwd)/||" | sort -u || true)
[ -z "$findings" ] || printf '%s\n' "$findings"
echo "analyze: $(printf '%s' "$findings" | grep -c . || true) finding(s)"
