#!/usr/bin/env bash
# Everything, from a fresh clone: train -> run -> verify -> search table -> plot -> report -> PDF.
# Usage: scripts/reproduce.sh [--profile quick|full] [--install-latex] [--against FILE]
#                             [extra 'run' options]
# Without LaTeX (latexmk or pdflatex) it stops after the report and says so;
# --install-latex installs the Debian TeX packages the paper needs; --against FILE compares the
# new results with an earlier run's (mallocbench compare FILE NEW: reproduced or not, per solver).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=quick; latex=0; against=; extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) [ $# -ge 2 ] || { echo "reproduce: --profile needs quick or full" >&2; exit 2; }
               profile="$2"; shift ;;
    --install-latex) latex=1 ;;
    --against) [ $# -ge 2 ] || { echo "reproduce: --against needs a results file" >&2; exit 2; }
               against="$2"; shift ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) extra+=("$1") ;;
  esac
  shift
done
# checked before anything is installed or trained (the agent's file is named after it)
case "$profile" in
  quick | full) ;;
  *) echo "reproduce: --profile '$profile': expected quick or full" >&2; exit 2 ;;
esac
if [ -n "$against" ] && [ ! -f "$against" ]; then
  echo "reproduce: --against '$against': no such file" >&2; exit 2
fi
if [ "$latex" -eq 1 ]; then ./scripts/setup.sh --with-latex; else ./scripts/setup.sh; fi
export MALLOCBENCH_DATA="${MALLOCBENCH_DATA:-$(pwd)/../shared/data}"
./scripts/build.sh build
mkdir -p results/agents
# mallocMuZero's agent, trained on the train split and synthetic workloads before the run
# (deterministic: fixed seed, step count, one thread, OpenBLAS kernel pinned so that every
# x86-64 machine with AVX2 trains the same agent: scripts/pinned-blas.sh). quick: ~2 minutes;
# full: 11-21 minutes by the machine (42,000 updates: measured better than 200,000,
# datasets/agents/EXPERIMENTS.md).
agent="results/agents/$profile.h5"
steps=6000
[ "$profile" = full ] && steps=42000
if [ ! -f "$agent" ]; then
  ./scripts/pinned-blas.sh ./build/mallocbench train --synthetic --split train --steps "$steps" --jobs 1 --seed 0 -q --out "$agent"
fi
# the file this run wrote, as it says ("results: FILE"): results/latest.h5, or --out's FILE
log=$(mktemp)
trap 'rm -f "$log"' EXIT
./build/mallocbench run --profile "$profile" --agent "$agent" "${extra[@]}" | tee "$log"
results=$(sed -n 's/^results: //p' "$log" | tail -n 1)
[ -n "$results" ] || exit 0 # run only printed its help
./build/mallocbench verify "$results"
if [ -n "$against" ]; then
  # exit 1 (not reproduced) is a finding to report, not a failure of this script
  status=0
  ./build/mallocbench compare "$against" "$results" --list 20 | tee "results/compare-$profile.txt" ||
    status=${PIPESTATUS[0]}
  [ "$status" -le 1 ] || exit "$status"
fi
# mallocMuZero's search table (issue #8's "search is real"): mean return on the train split with
# 0 (raw policy), 2, 8 and 32 simulations, learned model and exact game, beside the baselines
./build/mallocbench bench muzero --agent "$agent" --returns 0,2,8,32 --split train |
  tee "results/muzero-search-$profile.txt"
./build/mallocbench plot "$results" --format png,pdf
./build/mallocbench report "$results"
if command -v latexmk >/dev/null; then
  (cd paper && latexmk -pdf -interaction=nonstopmode -halt-on-error main.tex >/dev/null)
elif command -v pdflatex >/dev/null; then
  (cd paper && pdflatex -interaction=nonstopmode -halt-on-error main.tex >/dev/null &&
               pdflatex -interaction=nonstopmode -halt-on-error main.tex >/dev/null)
else
  echo "reproduce: no LaTeX found: stopped after the report (results/REPORT.md)."
  echo "reproduce: rerun with --install-latex to build paper/main.pdf."
  exit 0
fi
# the PDF builds with a table off its page or a line into the margin: say so
layout=$(grep -E "Float too large for page|Overfull \\\\[hv]box" paper/main.log | sed 's/^/  /' || true)
if [ -n "$layout" ]; then
  echo "reproduce: paper/main.log reports layout problems (the page or margin overrun):"
  echo "$layout"
fi
echo "reproduce: paper/main.pdf"
