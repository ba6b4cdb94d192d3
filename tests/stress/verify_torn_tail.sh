#!/usr/bin/env bash
# What users see of a torn last row (a kill -9 during its write, tests/stress/tear_tail.c):
# `verify` skips it with a note and finds no mismatch; `run --resume` without a journal drops
# it, computes that task again, and the file then equals an uninterrupted run's (everything
# but wall times and timestamps).
# Usage: verify_torn_tail.sh MALLOCBENCH_BINARY TEAR_TAIL_BINARY (run from the source tree).
set -u
MB=${1:?usage: verify_torn_tail.sh MALLOCBENCH_BINARY TEAR_TAIL_BINARY}
TEAR=${2:?usage: verify_torn_tail.sh MALLOCBENCH_BINARY TEAR_TAIL_BINARY}
SRC=$(pwd)
# $TMP, fail, expect STATUS PATTERN CMD...
source "$SRC/tests/e2e/lib/expect.bash"
# small_run OUT: the reference run
source "$SRC/tests/e2e/lib/small_run.bash"

small_run "$TMP/ref.h5"
cp "$TMP/ref.h5" "$TMP/torn.h5"
"$TEAR" "$TMP/torn.h5" || fail "tear_tail"

"$MB" verify "$TMP/torn.h5" >"$TMP/verify.txt" 2>&1 || fail "verify of a torn file: $(cat "$TMP/verify.txt")"
grep -q "^note: 1 torn row(s) at the end of a table skipped.*run --resume $TMP/torn.h5" \
  "$TMP/verify.txt" || fail "no torn-row note: $(cat "$TMP/verify.txt")"
grep -q "11 result rows, 2 baselines.*: 0 mismatches; note: the run is incomplete" \
  "$TMP/verify.txt" || fail "verify counts: $(cat "$TMP/verify.txt")"

"$MB" run --resume "$TMP/torn.h5" --no-progress >/dev/null 2>"$TMP/resume.txt" ||
  fail "resume: $(cat "$TMP/resume.txt")"
grep -q "dropped 1 torn row(s) at the end of $TMP/torn.h5" "$TMP/resume.txt" ||
  fail "no drop message: $(cat "$TMP/resume.txt")"
"$MB" verify "$TMP/torn.h5" >"$TMP/verify.txt" 2>&1 || fail "verify after resume: $(cat "$TMP/verify.txt")"
grep -q "torn row" "$TMP/verify.txt" && fail "still torn after resume: $(cat "$TMP/verify.txt")"
grep -q "12 result rows, 2 baselines.*: 0 mismatches$" "$TMP/verify.txt" ||
  fail "verify after resume: $(cat "$TMP/verify.txt")"
# the same table as the uninterrupted run, without wall times (columns as in run_resume.sh)
for f in ref torn; do
  "$MB" export "$TMP/$f.h5" --csv "$TMP/$f-csv" >/dev/null || fail "export $f"
  sed -E 's/^(([^,]*,){19})[^,]*,[^,]*,1,/\1X,1,/; s/^(([^,]*,){19})[^,]*,/\1/; s/^(([^,]*,){21}).*/\1/' \
    "$TMP/$f-csv/results.csv" >"$TMP/$f.results"
done
diff "$TMP/ref.results" "$TMP/torn.results" >"$TMP/diff.txt" ||
  fail "resumed torn file differs from the uninterrupted run: $(head -20 "$TMP/diff.txt")"
h5diff "$TMP/ref.h5" "$TMP/torn.h5" /assignments /assignments >/dev/null ||
  fail "stored assignments differ"
echo "ok: a torn last row is skipped with a note by verify and written again by run --resume"
