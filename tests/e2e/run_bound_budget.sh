#!/usr/bin/env bash
# `run --bound-budget SEC`, the LP bound's time limit: validated like the other numbers, stored
# as run_bound_budget_s and in the journal header (only when it is not the profile's), part of
# the plan hash. A limit small enough that GLPK stops on it gives baselines whose bound_status is
# "not solved"; such a run killed after some tasks and resumed takes those baselines back from
# its journal (before f52d63e the status was written unescaped and its line did not read back:
# a "damaged line" note, and the baseline computed again), and the resumed file equals an
# uninterrupted run's except wall times. Also resumed from the journal alone.
# Usage: run_bound_budget.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: run_bound_budget.sh MALLOCBENCH_BINARY}
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"
source "$(dirname "$0")/lib/kill_run.bash"

# attr FILE NAME: the value of a scalar root attribute, as h5dump prints it
attr() { h5dump -a "/$2" "$1" 2>/dev/null | sed -n 's/^ *(0): *//p' | tr -d '"'; }

# Packing instances of 6000 buffers at half their height: GLPK takes about 0.1 s to set up each
# LP (3047 rows) before it first looks at its clock, so with a 1 ms limit (what any budget under
# 1 ms becomes, solvers/bound.c) it stops within its first few iterations, and the bound stays
# the trivial one (measured: still so after 400 iterations), the same in every run.
for s in 1 2 3; do
  "$MB" generate packing --buffers 6000 --seed $s -o "$TMP/p$s.wl" >/dev/null ||
    fail "test setup: generate packing --seed $s"
done
{
  echo "name kind source args hardware capacity split tags"
  for s in 1 2 3; do echo "pack$s native $TMP/p$s.wl - tpu-v4i 512KiB test quick"; done
} >"$TMP/cat.txt"
# 3 pairs x (1 baseline + 6 heuristic jobs)
OPTS=(--catalogue "$TMP/cat.txt" --workloads . --solvers heuristic --seeds 6 --no-progress)
BB=(--bound-budget 0.000001)

# --- validation, help
for v in 0 -1 x 1e10 nan inf 2s ""; do
  expect 2 "^mallocbench run: --bound-budget '$v': expected" "$MB" run "${OPTS[@]}" \
    --bound-budget "$v" --out "$TMP/bad.h5"
done
expect 2 "--bound-budget needs a value" "$MB" run "${OPTS[@]}" --bound-budget
[ ! -e "$TMP/bad.h5" ] || fail "a refused run left a file"
stdout_has -E '^  --bound-budget SEC +time limit' "$MB" run --help || fail "run --help: no --bound-budget"

# --- (a) a run whose LP bounds stop on the time limit
"$MB" run "${OPTS[@]}" "${BB[@]}" --jobs 2 --out "$TMP/ref.h5" >/dev/null 2>"$TMP/ref.err" ||
  fail "reference run: $(cat "$TMP/ref.err")"
[ "$(attr "$TMP/ref.h5" run_bound_budget_s)" = 1e-06 ] ||
  fail "run_bound_budget_s: '$(attr "$TMP/ref.h5" run_bound_budget_s)'"
"$MB" export "$TMP/ref.h5" --csv "$TMP/ref-csv" >/dev/null || fail "export ref"
# baselines.csv column 14 is bound_status
status=$(tail -n +2 "$TMP/ref-csv/baselines.csv" | cut -d, -f14 | sort | uniq -c | sed 's/^ *//')
[ "$status" = "3 not solved" ] || fail "bound_status of the baselines: '$status'"
"$MB" verify "$TMP/ref.h5" >/dev/null || fail "verify the reference run"
# summary says that those gaps are to weaker bounds (it printed them like any other)
"$MB" summary "$TMP/ref.h5" >"$TMP/sum" 2>&1 || fail "summary of the reference run: $(cat "$TMP/sum")"
grep -qx "In 3 of these 3 cases the LP bound did not solve in its time limit" "$TMP/sum" ||
  fail "summary does not flag the cut-short bounds: $(cat "$TMP/sum")"
# the same run with the profile's limit is another plan, stored as 10 s
"$MB" run "${OPTS[@]}" --workloads pack1 --seeds 1 --out "$TMP/def.h5" >/dev/null 2>"$TMP/err" ||
  fail "run at the default bound budget: $(cat "$TMP/err")"
[ "$(attr "$TMP/def.h5" run_bound_budget_s)" = 10 ] ||
  fail "run_bound_budget_s by default: '$(attr "$TMP/def.h5" run_bound_budget_s)'"
"$MB" run "${OPTS[@]}" "${BB[@]}" --workloads pack1 --seeds 1 --out "$TMP/one.h5" >/dev/null 2>&1 ||
  fail "run pack1 with the bound budget"
[ "$(attr "$TMP/def.h5" plan_sha256)" != "$(attr "$TMP/one.h5" plan_sha256)" ] ||
  fail "--bound-budget does not enter the plan hash"
stdout_has -Fx "The LP bound of this case did not solve in its time limit" \
  "$MB" summary "$TMP/one.h5" ||
  fail "summary of one case with a cut-short bound: $("$MB" summary "$TMP/one.h5")"
# a bound that solved is not flagged. Its run gets a long limit: the profile's 10 s is wall
# clock, and on a machine loaded by other work this LP once ran past it (and was rightly flagged)
"$MB" run "${OPTS[@]}" --bound-budget 600 --workloads pack1 --seeds 1 --out "$TMP/long.h5" \
  >/dev/null 2>"$TMP/err" || fail "run with a long bound budget: $(cat "$TMP/err")"
# (the summary must succeed and print its table: a failing one would pass the grep below)
"$MB" summary "$TMP/long.h5" >"$TMP/long.sum" 2>&1 || fail "summary of long.h5: $(cat "$TMP/long.sum")"
grep -q "geomean" "$TMP/long.sum" || fail "summary of long.h5 has no table: $(cat "$TMP/long.sum")"
grep -q "did not solve in its time limit" "$TMP/long.sum" &&
  fail "summary flags a bound that solved: $(cat "$TMP/long.sum")"

# --- (b) killed after some tasks, resumed: the "not solved" baselines come from the journal.
# One worker, so tasks finish in plan order: at 10 lines (the header and 9 tasks) two baselines
# are among them.
run_killed "$TMP/part.h5" 10 "${OPTS[@]}" "${BB[@]}" --jobs 1
head -1 "$TMP/part.h5.journal" |
  grep -qE '^mallocbench-journal 1 seeds 6 budget 0 bound_budget 9.9999999999999995e-07 plan s' ||
  fail "journal header: $(head -1 "$TMP/part.h5.journal" | cut -c1-200)"
tasks=$(($(lines_of "$TMP/part.h5.journal") - 1)) # complete task lines (a torn last one has no LF)
unsolved=$(grep -c '^B [0-9]* [0-9]* [0-9]* [0-9]* snot%20solved ' "$TMP/part.h5.journal")
[ "$unsolved" -ge 2 ] || fail "expected 2 journaled 'not solved' baselines, found $unsolved"
"$MB" run --resume "$TMP/part.h5" >"$TMP/resume.out" 2>"$TMP/resume.err" ||
  fail "resume: $(cat "$TMP/resume.err")"
grep -q "damaged line" "$TMP/resume.err" && fail "journal lines refused: $(cat "$TMP/resume.err")"
grep -qE "resuming .*part.h5: $tasks of 21 tasks already done" "$TMP/resume.err" ||
  fail "expected $tasks journaled tasks taken back: $(cat "$TMP/resume.err")"
grep -qE "^run: 21 tasks \(18 jobs \+ 3 baselines\), $((21 - tasks)) computed here, $tasks reused" \
  "$TMP/resume.out" || fail "reused count ($tasks expected): $(grep '^run:' "$TMP/resume.out")"
[ ! -e "$TMP/part.h5.journal" ] || fail "journal left behind after completion"
"$MB" verify "$TMP/part.h5" >/dev/null || fail "verify after resume"
[ "$(attr "$TMP/part.h5" run_bound_budget_s)" = 1e-06 ] || fail "run_bound_budget_s lost on resume"
[ "$(attr "$TMP/part.h5" plan_sha256)" = "$(attr "$TMP/ref.h5" plan_sha256)" ] ||
  fail "the resumed file has another plan hash"

# The tables without wall-clock columns: results.csv column 20 is wall_s (iterations, 21, and
# the note, 23, do not depend on time for the heuristic); baselines.csv 15-16 are wall times.
# tables NAME: $TMP/NAME.h5 exported to $TMP/NAME.results and NAME.baselines, less those columns
tables() {
  "$MB" export "$TMP/$1.h5" --csv "$TMP/$1-csv" >/dev/null 2>&1 || fail "export $1"
  cut -d, -f1-19,21- "$TMP/$1-csv/results.csv" >"$TMP/$1.results"
  cut -d, -f1-14,17- "$TMP/$1-csv/baselines.csv" >"$TMP/$1.baselines"
}
same_as_ref() {
  tables "$1"
  diff "$TMP/ref.results" "$TMP/$1.results" >"$TMP/diff.txt" ||
    fail "$1: results differ from the uninterrupted run: $(head -20 "$TMP/diff.txt")"
  diff "$TMP/ref.baselines" "$TMP/$1.baselines" >"$TMP/diff.txt" ||
    fail "$1: baselines differ from the uninterrupted run: $(head -20 "$TMP/diff.txt")"
  cmp -s "$TMP/ref-csv/workloads.csv" "$TMP/$1-csv/workloads.csv" || fail "$1: workload copies differ"
  h5diff "$TMP/ref.h5" "$TMP/$1.h5" /assignments /assignments >/dev/null ||
    fail "$1: stored assignments differ"
}
tables ref
[ "$(wc -l <"$TMP/ref.results")" = 19 ] && [ "$(wc -l <"$TMP/ref.baselines")" = 4 ] ||
  fail "reference run: $(wc -l <"$TMP/ref.results") result and $(wc -l <"$TMP/ref.baselines") baseline lines"
same_as_ref part

# --- resumed from the journal alone (the HDF5 file destroyed): its header gives the limit back
run_killed "$TMP/wreck.h5" 10 "${OPTS[@]}" "${BB[@]}" --jobs 1
tasks=$(($(lines_of "$TMP/wreck.h5.journal") - 1))
truncate -s 2048 "$TMP/wreck.h5"
"$MB" run --resume "$TMP/wreck.h5" --no-progress >/dev/null 2>"$TMP/wreck.err" ||
  fail "rebuild from the journal: $(cat "$TMP/wreck.err")"
grep -q "rebuilding it from" "$TMP/wreck.err" || fail "no rebuild note: $(cat "$TMP/wreck.err")"
grep -q "damaged line" "$TMP/wreck.err" && fail "journal lines refused: $(cat "$TMP/wreck.err")"
grep -qE "resuming .*wreck.h5: $tasks of 21 tasks already done" "$TMP/wreck.err" ||
  fail "expected $tasks journaled tasks taken back: $(cat "$TMP/wreck.err")"
[ "$(attr "$TMP/wreck.h5" run_bound_budget_s)" = 1e-06 ] ||
  fail "run_bound_budget_s after the rebuild: '$(attr "$TMP/wreck.h5" run_bound_budget_s)'"
"$MB" verify "$TMP/wreck.h5" >/dev/null || fail "verify after the rebuild"
same_as_ref wreck

# --resume takes the limit from the file, not the command line
expect 2 "takes the plan .*bound-budget" "$MB" run --resume "$TMP/part.h5" --bound-budget 5
echo "ok: --bound-budget validated, stored (1e-06) and in the plan hash; 3 'not solved' baselines; resumed from the journal ($unsolved 'not solved' baselines reused, no damaged line) and from the journal alone, both equal to the uninterrupted run"
