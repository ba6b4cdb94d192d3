#!/usr/bin/env bash
# Formats every C file with the repository's .clang-format, or with --check lists the files that
# are not formatted and fails. Usage: scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "format: clang-format not found (Debian package clang-format); skipped" >&2
  exit 0
fi
# tracked files and new ones git does not ignore (a file not yet added is checked too)
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.c' '*.h' 2>/dev/null ||
  find suite solvers tests -name '*.[ch]')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then echo "not formatted: $f"; bad=1; fi
  done
  [ $bad -eq 0 ] && echo "format: ${#files[@]} files formatted"
  exit $bad
fi
clang-format -i "${files[@]}"
