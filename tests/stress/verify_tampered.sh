#!/usr/bin/env bash
# What `verify` says of a results file changed after its run (tests/stress/tamper.c): each
# tampering is reported with the MISMATCH line of the check that catches it (row number, names
# and field as cmd_verify.c prints them) and the exact number of mismatches, exit 1; the copy is
# read (unsealed, as after an edit by another HDF5 program), not refused as damaged; the file it
# was copied from still verifies with 0 mismatches.
# Usage: verify_tampered.sh MALLOCBENCH_BINARY TAMPER_BINARY (run from the source tree).
set -u
MB=${1:?usage: verify_tampered.sh MALLOCBENCH_BINARY TAMPER_BINARY}
TAMPER=${2:?usage: verify_tampered.sh MALLOCBENCH_BINARY TAMPER_BINARY}
SRC=$(pwd)
# $TMP, fail, expect STATUS PATTERN CMD...
source "$SRC/tests/e2e/lib/expect.bash"
# small_run OUT: the reference run
source "$SRC/tests/e2e/lib/small_run.bash"

small_run "$TMP/ref.h5"
cp "$TMP/ref.h5" "$TMP/pristine.h5"
# rows 0-5: mlp_tiny (heuristic seeds 0-2, greedy seeds 0-2), rows 6-11: attention; baseline
# row 0 mlp_tiny, row 1 attention
SUMMARY="12 result rows, 2 baselines, 2 workloads checked"
"$MB" verify "$TMP/ref.h5" >"$TMP/verify.txt" 2>&1 || fail "verify of the run: $(cat "$TMP/verify.txt")"
grep -q "$SUMMARY.*: 0 mismatches$" "$TMP/verify.txt" ||
  fail "verify of the run: $(cat "$TMP/verify.txt")"

# tamper WHAT: a tampered copy $TMP/WHAT.h5, verified into $TMP/WHAT.txt (exit 1 expected);
# OLD and NEW are the numbers tamper printed ("... OLD -> NEW"; a number or nan), when it printed
# some
tamper() {
  WHAT=$1
  cp "$TMP/ref.h5" "$TMP/$WHAT.h5"
  "$TAMPER" "$TMP/$WHAT.h5" "$WHAT" >"$TMP/$WHAT.tamper" 2>"$TMP/err" ||
    fail "tamper $WHAT: $(cat "$TMP/err")"
  read -r OLD NEW < <(sed -nE 's/.* ([0-9.e+-]+|nan) -> ([0-9.e+-]+|nan)( .*)?$/\1 \2/p' "$TMP/$WHAT.tamper")
  "$MB" verify "$TMP/$WHAT.h5" >"$TMP/$WHAT.txt" 2>&1
  local got=$?
  OUT="$(cat "$TMP/$WHAT.tamper")
$(cat "$TMP/$WHAT.txt")"
  grep -q "damaged" "$TMP/$WHAT.txt" && fail "$WHAT: refused as damaged (still sealed?): $OUT"
  [ $got = 1 ] || fail "$WHAT: verify exited $got, expected 1 (mismatches): $OUT"
  grep -q "incomplete" "$TMP/$WHAT.txt" && fail "$WHAT: the run reads as incomplete: $OUT"
}
# mismatches N [SUMMARY]: the last line counts N mismatches (and the rows of SUMMARY)
mismatches() {
  local word=mismatches
  [ "$1" = 1 ] && word=mismatch
  grep -qxF "verify $TMP/$WHAT.h5: ${2:-$SUMMARY} (times simulated by the mallocbench cost model): $1 $word" \
    "$TMP/$WHAT.txt" || fail "$WHAT: not $1 $word: $OUT"
}
# line PREFIX REST: some line starts with the literal PREFIX and the rest of it matches the
# extended regex REST (anchored at both ends; awk's, so no {n} intervals, which mawk lacks;
# both passed in the environment, where awk does not read backslash escapes)
line() {
  P=$1 RE="^($2)\$" awk '
    index($0, ENVIRON["P"]) == 1 && substr($0, length(ENVIRON["P"]) + 1) ~ ENVIRON["RE"] { f = 1 }
    END { exit !f }' "$TMP/$WHAT.txt" || fail "$WHAT: no line '$1' + /$2/: $OUT"
}
ROW0="MISMATCH results row 0 (mlp_tiny@tpu-v4i heuristic seed 0)"
BASE0="MISMATCH baselines row 0 (mlp_tiny@tpu-v4i)"
OVERLAP="buffer '[a-z0-9_]+' \[0, [0-9]+\) and buffer '[a-z0-9_]+' \[0, [0-9]+\) overlap in fast memory at time [0-9]+"

tamper row-time
line "$ROW0: t_solver_ps stored $NEW, recomputed $OLD" ""
mismatches 1

tamper row-speedup
line "$ROW0: speedup_heuristic stored $NEW, recomputed $OLD" "" # both %.17g
mismatches 1

tamper row-invalid
line "$ROW0: stored as ok but the assignment is invalid: " "$OVERLAP"
mismatches 1

tamper row-valid-but-marked-invalid
line "$ROW0: stored as invalid but the assignment validates" ""
mismatches 1

tamper row-error-with-assignment
line "$ROW0: stored as error (the solver failed) but has an assignment" ""
mismatches 1

tamper row-unknown-status
line "$ROW0: status 'bogus' is none of ok, invalid and error" ""
mismatches 1

tamper row-invalid-marked-valid
line "$ROW0: valid stored 1, recomputed 0" ""
mismatches 1

tamper row-no-baseline
for i in 6 7 8; do
  line "MISMATCH results row $i (attention@tpu-v4i heuristic seed $((i - 6))): no baseline row \
for its workload and hardware" ""
done
mismatches 6 "12 result rows, 1 baseline, 2 workloads checked"

tamper baseline-slow
line "$BASE0: t_slow_ps stored $NEW, recomputed $OLD" ""
line "$ROW0: t_slow_ps stored $OLD, its baseline row has $NEW" "" # each of the pair's rows
mismatches 7

tamper baseline-heuristic
line "$BASE0: t_heuristic_ps stored $NEW, recomputed $OLD" ""
line "$ROW0: t_heuristic_ps stored $OLD, its baseline row has $NEW" ""
mismatches 7

tamper baseline-invalid
line "$BASE0: heuristic assignment is invalid: " "$OVERLAP"
mismatches 1

tamper workload-table
line "MISMATCH workload 'mlp_tiny': stored sha256 " "[0-9a-f]+, the stored tables hash to [0-9a-f]+"
read -r SHA1 SHA2 < <(sed -nE "s/^MISMATCH workload 'mlp_tiny': stored sha256 ([0-9a-f]{64}), the stored tables hash to ([0-9a-f]{64})$/\1 \2/p" "$TMP/$WHAT.txt")
[ -n "${SHA2:-}" ] && [ "$SHA1" != "$SHA2" ] || fail "$WHAT: not two different SHA-256: $OUT"
mismatches 1

tamper row-speedup-nan
line "$ROW0: speedup_heuristic stored nan, recomputed $OLD" "" # a NaN is no match for a number
mismatches 1

tamper row-seconds-ulp
line "$ROW0: t_solver_s stored $NEW, recomputed $OLD" "" # a billionth off is not rounding
mismatches 1

tamper row-assignment-missing
line "$ROW0: assignment: $TMP/$WHAT.h5: /assignments/mlp_tiny/tpu-v4i/heuristic/0 is missing" ""
mismatches 1

# 12 checks fail on each of the 12 rows: the first 100 are printed, then how many more
tamper every-row
[ "$(grep -c '^MISMATCH ' "$TMP/$WHAT.txt")" = 100 ] || fail "$WHAT: not 100 lines shown: $OUT"
line "... 44 more mismatches not shown" ""
line "$ROW0: gap_to_bound stored " "[0-9.e+-]+, recomputed .*"
# in check order: the 100th line is row 8's fourth check, and nothing of row 9 is shown
tail_line=$(grep '^MISMATCH ' "$TMP/$WHAT.txt" | tail -n 1)
case $tail_line in
"MISMATCH results row 8 (attention@tpu-v4i heuristic seed 2): capacity stored "*) ;;
*) fail "$WHAT: the 100th line is not row 8's capacity: $tail_line" ;;
esac
grep -q '^MISMATCH results row 9 ' "$TMP/$WHAT.txt" && fail "$WHAT: row 9 shown: $OUT"
mismatches 144

# a line longer than verify's 1024-byte buffer is printed whole: the file's path is in it
tamper workload-broken
LONG=$TMP/$(printf 'd%.0s' $(seq 200))/$(printf 'e%.0s' $(seq 200))/$(printf 'f%.0s' $(seq 200))
LONG=$LONG/$(printf 'g%.0s' $(seq 250))
mkdir -p "$LONG" || fail "mkdir $LONG"
cp "$TMP/$WHAT.h5" "$LONG/broken.h5"
"$MB" verify "$LONG/broken.h5" >"$TMP/$WHAT.txt" 2>&1
[ $? = 1 ] || fail "$WHAT: verify did not exit 1: $(cat "$TMP/$WHAT.txt")"
WHAT_LINE="MISMATCH workload 'mlp_tiny': cannot rebuild it from the file: $LONG/broken.h5: \
/workloads/mlp_tiny/uses row 0: op 0 or buffer 9999 out of range"
grep -qxF "$WHAT_LINE" "$TMP/$WHAT.txt" || fail "$WHAT: no line '$WHAT_LINE': $(cat "$TMP/$WHAT.txt")"
[ ${#WHAT_LINE} -gt 1024 ] || fail "$WHAT: the line is only ${#WHAT_LINE} bytes"
grep -q ": 1 mismatch$" "$TMP/$WHAT.txt" || fail "$WHAT: not 1 mismatch: $(cat "$TMP/$WHAT.txt")"
rm -rf "$TMP/$(printf 'd%.0s' $(seq 200))"

# tamper refuses what it does not know
expect 1 "usage: tamper RESULTS.h5 WHAT" "$TAMPER" "$TMP/ref.h5" bogus
# the file every copy came from is untouched and still verifies
cmp -s "$TMP/ref.h5" "$TMP/pristine.h5" || fail "the reference file changed"
"$MB" verify "$TMP/ref.h5" >"$TMP/verify.txt" 2>&1 || fail "verify of the run: $(cat "$TMP/verify.txt")"
grep -q "$SUMMARY.*: 0 mismatches$" "$TMP/verify.txt" ||
  fail "verify of the run after tampering its copies: $(cat "$TMP/verify.txt")"
echo "ok: verify reports each of 17 tamperings with its MISMATCH line"
