#!/usr/bin/env bash
# Runs a command with OpenBLAS's CPU kernel pinned to Haswell (AVX2 + FMA), so that training a
# mallocMuZero agent gives the same agent on every x86-64 machine that has those instructions.
# Why: training is chaotic in the last bits of sgemm, and OpenBLAS picks its kernel by CPU; the
# same `mallocbench train` command on an AVX-512 machine (kernel Cooperlake) trained an agent
# whose raw policy scores 0.1063 on the train split, against 0.1137 with the Haswell kernel,
# which reproduces the documented default agent bit for bit (datasets/agents/README.md,
# "Reproducing an agent"). Playing a trained agent does not need this: its returns are the same
# on either kernel, and batch-1 inference is about 3x faster on the native one.
# Leaves OPENBLAS_CORETYPE alone when the caller set it, and pins nothing on a CPU without
# AVX2 and FMA (where the Haswell kernel cannot run): the agent is then this machine's own.
# Usage: scripts/pinned-blas.sh COMMAND [ARGS...]
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: scripts/pinned-blas.sh COMMAND [ARGS...]" >&2; exit 2; }
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ "$(uname -m)" = x86_64 ] &&
   grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo 2>/dev/null; then
  export OPENBLAS_CORETYPE=Haswell
elif [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  echo "pinned-blas: this CPU has no AVX2/FMA: OpenBLAS's own kernel is used, and a trained" \
       "agent will differ from the documented one" >&2
fi
exec "$@"
