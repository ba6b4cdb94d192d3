#!/usr/bin/env bash
# Catalogue splits through the CLI: a run over a train and a test workload records each split;
# `summary --split` restricts the table to one split and says so; the end-of-run summary of
# `run` is unchanged (no split line); `report` writes the test-split table.
# Usage: summary_split.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: summary_split.sh MALLOCBENCH_BINARY}
SRC=$(pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$TMP/cat.txt" <<CAT
name kind source args hardware capacity split tags
mlp_tiny native $SRC/datasets/samples/mlp_tiny.wl - tpu-v4i 1MiB train quick
attention native $SRC/datasets/samples/attention_block.wl - tpu-v4i 8MiB test quick
conv native $SRC/datasets/samples/conv_block.wl - tpu-v4i 3MiB test quick
CAT
"$MB" run --catalogue "$TMP/cat.txt" --workloads . --solvers heuristic,greedy --budget 0.05 \
  --no-progress --out "$TMP/r.h5" >"$TMP/run.out" 2>"$TMP/err" || fail "run: $(cat "$TMP/err")"
grep -q "split" "$TMP/run.out" && fail "the end-of-run summary changed: $(cat "$TMP/run.out")"

"$MB" summary "$TMP/r.h5" --split test >"$TMP/test.out" 2>"$TMP/err" || fail "summary --split test: $(cat "$TMP/err")"
grep -q "^test split: 2 of 3 cases; workloads mallocMuZero never saw in training$" "$TMP/test.out" ||
  fail "header: $(cat "$TMP/test.out")"
grep -qE "^greedy +2 " "$TMP/test.out" || fail "greedy over 2 test cases: $(cat "$TMP/test.out")"
"$MB" summary --split train "$TMP/r.h5" >"$TMP/train.out" 2>"$TMP/err" || fail "summary --split train"
grep -q "^train split: 1 of 3 cases$" "$TMP/train.out" || fail "header: $(cat "$TMP/train.out")"
grep -qE "^greedy +1 " "$TMP/train.out" || fail "greedy over 1 train case: $(cat "$TMP/train.out")"
"$MB" summary "$TMP/r.h5" >"$TMP/all.out" || fail "summary"
grep -q "split" "$TMP/all.out" && fail "summary without --split mentions a split"
grep -qE "^greedy +3 " "$TMP/all.out" || fail "greedy over 3 cases: $(cat "$TMP/all.out")"

"$MB" summary "$TMP/r.h5" --split dev >/dev/null 2>"$TMP/err"
[ $? = 2 ] || fail "--split dev: expected exit 2"
grep -q "summary: --split 'dev': expected train or test" "$TMP/err" || fail "message: $(cat "$TMP/err")"

"$MB" report "$TMP/r.h5" --md "$TMP/R.md" --tex-dir "$TMP/gen" --figures "$TMP/none" \
  2>"$TMP/err" || fail "report: $(cat "$TMP/err")"
[ -s "$TMP/gen/summary_test.tex" ] || fail "no summary_test.tex"
grep -q '^greedy & 2 & ' "$TMP/gen/summary_test.tex" || fail "summary_test.tex: $(cat "$TMP/gen/summary_test.tex")"
grep -q 'NumTestCases}{2}' "$TMP/gen/macros.tex" || fail "macros.tex lacks NumTestCases 2"
grep -q "^## Test split (workloads unseen in mallocMuZero's training)" "$TMP/R.md" || fail "REPORT.md lacks the test table"
echo "summary_split: ok"
