#!/usr/bin/env bash
# The scripts' own argument checks, which must refuse bad input before they install, build,
# train or run anything (each of those takes minutes): reproduce.sh (--profile, --against,
# --help), finetune-test.sh (the agent, SEEDS), pinned-blas.sh (the kernel it pins, and
# one the caller set is kept) and mutants.py (its source and build directory, when python3 is
# here; a run would edit the sources under the other tests' feet). A refusal is exit 2 with a message naming the script and the
# value at fault; nothing is written under results/.
# Usage: scripts.sh MALLOCBENCH_BINARY (run from the source tree; the binary is not used).
set -u
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"

# reproduce.sh: checked before setup.sh (which would install packages)
expect 2 "^reproduce: --profile 'medium': expected quick or full" \
  ./scripts/reproduce.sh --profile medium
expect 2 "^reproduce: --profile needs quick or full" ./scripts/reproduce.sh --profile
expect 2 "^reproduce: --against '$TMP/none.h5': no such file" \
  ./scripts/reproduce.sh --against "$TMP/none.h5"
expect 2 "^reproduce: --against needs a results file" ./scripts/reproduce.sh --against
./scripts/reproduce.sh --help >"$TMP/out" 2>&1 || fail "reproduce.sh --help: status $?"
grep -q "^# Usage: scripts/reproduce.sh .*--against FILE" "$TMP/out" ||
  fail "reproduce.sh --help: no usage line: $(cat "$TMP/out")"
grep -q "^set -e" "$TMP/out" && fail "reproduce.sh --help prints code: $(cat "$TMP/out")"

# finetune-test.sh: the agent and SEEDS, before any run
expect 2 "^finetune-test: agent '$TMP/none.h5' not found" \
  ./scripts/finetune-test.sh 30 "$TMP/none.h5"
: >"$TMP/agent.h5"
for seeds in 0 x -1; do
  SEEDS=$seeds expect 2 "^finetune-test: SEEDS='$seeds': expected a count >= 1" \
    ./scripts/finetune-test.sh 30 "$TMP/agent.h5"
done

# pinned-blas.sh: pins Haswell where AVX2 and FMA exist, keeps a kernel the caller chose
expect 2 "^usage: scripts/pinned-blas.sh COMMAND" ./scripts/pinned-blas.sh
[ "$(OPENBLAS_CORETYPE=Sandybridge ./scripts/pinned-blas.sh printenv OPENBLAS_CORETYPE)" = \
  Sandybridge ] || fail "pinned-blas.sh replaced the caller's OPENBLAS_CORETYPE"
got=$(env -u OPENBLAS_CORETYPE ./scripts/pinned-blas.sh printenv OPENBLAS_CORETYPE 2>/dev/null)
if [ "$(uname -m)" = x86_64 ] && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  [ "$got" = Haswell ] || fail "pinned-blas.sh on an AVX2 + FMA CPU: OPENBLAS_CORETYPE '$got'"
else
  [ -z "$got" ] || fail "pinned-blas.sh pinned '$got' on a CPU without AVX2 + FMA"
fi
# its status is the command's
st=0
./scripts/pinned-blas.sh bash -c 'exit 3' 2>/dev/null || st=$?
[ "$st" = 3 ] || fail "pinned-blas.sh bash -c 'exit 3': status $st"

# mutants.py: a missing source, an unconfigured build directory, missing arguments
if command -v python3 >/dev/null; then
  expect 2 "^mutants: suite/none.c: no such file under " ./scripts/mutants.py suite/none.c test_stats
  expect 2 "^mutants: .*/none: not a configured build directory" \
    ./scripts/mutants.py suite/stats.c test_stats --build-dir "$TMP/none"
  expect 2 "usage: mutants.py" ./scripts/mutants.py suite/stats.c
fi
exit 0
