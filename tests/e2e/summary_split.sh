#!/usr/bin/env bash
# Catalogue splits through the CLI: a run over a train and a test workload records each split;
# `summary --split` restricts the table to one split and says so; the end-of-run summary of
# `run` is unchanged (no split line); `report` writes the test-split table.
# `summary --workloads REGEX` restricts it to the cases whose workload name matches, alone or
# with --split; its greedy geomean equals one computed from the exported rows, and so do the
# --split tables' with each workload's split taken from export's workloads.csv; a regex that does
# not compile and filters that leave nothing exit 2 naming the cause.
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

# --workloads. Independent expectation from the exported rows: per case the geometric mean over
# seeds of t_heuristic / t_solver, then the geometric mean over the named workloads' cases.
"$MB" export "$TMP/r.h5" --csv "$TMP/csv" >/dev/null 2>"$TMP/err" || fail "export: $(cat "$TMP/err")"
expect_geomean() { # SOLVER "WORKLOAD ..."
  awk -F, -v solver="$1" -v names=" $2 " '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["solver"] == solver && index(names, " " $col["workload"] " ") {
      k = $col["workload"] "@" $col["hardware"]
      sum[k] += log($col["t_heuristic_ps"] / $col["t_solver_ps"]); n[k]++ }
    END { for (k in sum) { s += sum[k] / n[k]; c++ } if (c) printf "%.6f %d\n", exp(s / c), c }
  ' "$TMP/csv/results.csv"
}
# SOLVER OUTPUT-FILE "WORKLOAD ...": the table's row agrees with the rows (4 decimals shown)
check_row() {
  local want shown
  want=$(expect_geomean "$1" "$3")
  [ -n "$want" ] || fail "no exported row of $1 on $3"
  shown=$(awk -v s="$1" '$1 == s { sub(/x$/, "", $3); print $3, $2 }' "$2")
  awk -v w="$want" -v s="$shown" 'BEGIN { split(w, a, " "); split(s, b, " ");
    exit !(b[2] == a[2] && (b[1] - a[1])^2 <= 0.00006^2) }' ||
    fail "$1 on '$3': shown '$shown' (geomean cases), rows give '$want': $(cat "$2")"
}
"$MB" summary "$TMP/r.h5" --workloads '^(attention|conv)$' >"$TMP/w.out" 2>"$TMP/err" ||
  fail "summary --workloads: $(cat "$TMP/err")"
grep -q "^workloads matching '^(attention|conv)\$': 2 of 3 cases$" "$TMP/w.out" ||
  fail "header: $(cat "$TMP/w.out")"
grep -q "split" "$TMP/w.out" && fail "summary --workloads alone mentions a split: $(cat "$TMP/w.out")"
check_row greedy "$TMP/w.out" "attention conv"
check_row heuristic "$TMP/w.out" "attention conv"
"$MB" summary --workloads=att "$TMP/r.h5" >"$TMP/w1.out" 2>"$TMP/err" || fail "--workloads=att: $(cat "$TMP/err")"
grep -q "^workloads matching 'att': 1 of 3 cases$" "$TMP/w1.out" || fail "header: $(cat "$TMP/w1.out")"
check_row greedy "$TMP/w1.out" "attention"

# the CSVs alone reproduce summary --split: workloads.csv has each workload's catalogue split
# (the column summary --split filters on), joined to results.csv by workload
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
         { printf "%s %s\n", $col["workload"], $col["split"] }' "$TMP/csv/workloads.csv" |
  sort >"$TMP/splits"
printf 'attention test\nconv test\nmlp_tiny train\n' >"$TMP/want_splits"
cmp -s "$TMP/splits" "$TMP/want_splits" ||
  fail "workloads.csv splits: $(cat "$TMP/splits") (header $(head -1 "$TMP/csv/workloads.csv"))"
for split in test train; do
  names=$(awk -v s="$split" '$2 == s { printf "%s ", $1 }' "$TMP/splits")
  check_row greedy "$TMP/$split.out" "$names"
  check_row heuristic "$TMP/$split.out" "$names"
done

# with --split: both filters apply, the header names both
"$MB" summary "$TMP/r.h5" --split test --workloads '^(mlp|conv)' >"$TMP/ws.out" 2>"$TMP/err" ||
  fail "summary --split test --workloads: $(cat "$TMP/err")"
grep -q "^test split, workloads matching '^(mlp|conv)': 1 of 3 cases; workloads mallocMuZero never saw in training$" \
  "$TMP/ws.out" || fail "header: $(cat "$TMP/ws.out")"
check_row greedy "$TMP/ws.out" "conv"
"$MB" summary "$TMP/r.h5" --workloads '^(mlp|conv)' --split train >"$TMP/ws.out" 2>"$TMP/err" ||
  fail "summary --workloads --split train: $(cat "$TMP/err")"
grep -q "^train split, workloads matching '^(mlp|conv)': 1 of 3 cases$" "$TMP/ws.out" ||
  fail "header: $(cat "$TMP/ws.out")"
check_row greedy "$TMP/ws.out" "mlp_tiny"

# errors: exit 2, nothing on stdout, the message says why
expect_error() { # MESSAGE-FRAGMENT ARGS...
  local want=$1
  shift
  "$MB" summary "$@" >"$TMP/e.out" 2>"$TMP/err"
  local rc=$?
  [ $rc = 2 ] || fail "summary $*: exit $rc, expected 2"
  [ -s "$TMP/e.out" ] && fail "summary $*: printed a table on error: $(cat "$TMP/e.out")"
  grep -qF -- "$want" "$TMP/err" || fail "summary $*: message lacks '$want': $(cat "$TMP/err")"
}
expect_error "summary: --workloads 'x(': column 3: missing closing parenthesis" "$TMP/r.h5" --workloads 'x('
expect_error "r.h5: --workloads '^zzz' matches no workload name of the file's 3 case(s) (workloads: mlp_tiny, attention, conv)" \
  "$TMP/r.h5" --workloads '^zzz'
expect_error "r.h5: --workloads '^(attention|conv)$' matches 2 case(s), none of them in the train split (2 in the test split)" \
  "$TMP/r.h5" --split train --workloads '^(attention|conv)$'
expect_error "--workloads needs a value" "$TMP/r.h5" --workloads
"$MB" summary --help >"$TMP/help" || fail "summary --help failed"
grep -qF -- "--workloads REGEX" "$TMP/help" || fail "--help lacks --workloads"

"$MB" report "$TMP/r.h5" --md "$TMP/R.md" --tex-dir "$TMP/gen" --figures "$TMP/none" \
  2>"$TMP/err" || fail "report: $(cat "$TMP/err")"
[ -s "$TMP/gen/summary_test.tex" ] || fail "no summary_test.tex"
grep -q '^greedy & 2 & ' "$TMP/gen/summary_test.tex" || fail "summary_test.tex: $(cat "$TMP/gen/summary_test.tex")"
grep -q 'NumTestCases}{2}' "$TMP/gen/macros.tex" || fail "macros.tex lacks NumTestCases 2"
grep -q "^## Test split (workloads unseen in mallocMuZero's training)" "$TMP/R.md" || fail "REPORT.md lacks the test table"
# --split alone that leaves no case is an error too (the file has no train case of its own)
"$MB" run --catalogue "$TMP/cat.txt" --workloads '^(attention|conv)' --solvers heuristic \
  --out "$TMP/t.h5" --jobs 1 --no-progress >/dev/null 2>"$TMP/err" || fail "run: $(cat "$TMP/err")"
expect_error "t.h5: --split train: none of the file's 2 case(s) is in the train split" "$TMP/t.h5" \
  --split train
echo "summary_split: ok"
