#!/usr/bin/env bash
# Configures and builds one build directory. Usage: scripts/build.sh [DIR [cmake options...]]
# (DIR defaults to build/).
# Release by default; warnings are errors (the code is kept -Wall -Wextra clean).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"; shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DMALLOCBENCH_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)" 2>&1 | grep -vE '^\[ *[0-9]+%\]|^gmake|^make' || true
# grep hides progress lines; a failed build must still fail the script
cmake --build "$dir" -j"$(nproc)" >/dev/null
