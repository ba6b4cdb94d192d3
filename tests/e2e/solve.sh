#!/bin/bash
# End-to-end: `mallocbench solve` and `mallocbench pack` on sample data, the assignment CSV
# round trip through `mallocbench check`, and clear errors (exit 2) on bad input.
# Argument 1: the mallocbench binary. Run from the source tree.
set -u
MB=$1
DATA=${MALLOCBENCH_DATA:-../shared/data}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

expect_status() { # expected-status description command...
  local want=$1 what=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  [ "$got" = "$want" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "$what: exit $got, want $want"; }
}

# solve with each classical solver, write the assignment, check it independently.
for solver in heuristic greedy; do
  expect_status 0 "solve $solver" "$MB" solve datasets/samples/attention_block.wl \
    --solver "$solver" --capacity 1MiB --seed 3 --budget 0.5 --out "$TMP/$solver.csv"
  grep -q '^valid        yes' "$TMP/out" || fail "solve $solver: no 'valid yes' line"
  grep -q 'T_bound' "$TMP/out" || fail "solve $solver: no bound"
  grep -q 'speedup vs heuristic' "$TMP/out" || fail "solve $solver: no speedup"
  [ -s "$TMP/$solver.csv" ] || fail "solve $solver: no assignment written"
  # each time once: the heuristic is its own reference, not a second line
  want=4; [ "$solver" = heuristic ] && want=3
  [ "$(grep -c '^  T_' "$TMP/out")" = "$want" ] || fail "solve $solver: times not once each: $(grep '^  T_' "$TMP/out")"
  expect_status 0 "check $solver" "$MB" check datasets/samples/attention_block.wl "$TMP/$solver.csv"
done

# The greedy is never slower than the heuristic (simulated times printed by solve).
t_of() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
"$MB" solve datasets/samples/train_step.wl --solver greedy --capacity 2MiB >"$TMP/g" ||
  fail "solve train_step"
tg=$(t_of "$TMP/g" T_greedy)
th=$(t_of "$TMP/g" T_heuristic)
[ -n "$tg" ] && [ -n "$th" ] && [ "$tg" -le "$th" ] || fail "greedy $tg > heuristic $th"
# the bound line counts its cuts and capped ops (train_step has an op that turns compute-bound)
"$MB" solve datasets/samples/train_step.wl --solver heuristic --capacity 256KiB >"$TMP/b" ||
  fail "solve train_step at 256KiB"
grep -Eq '^  T_bound +[0-9]+ ps  \(LP upper bound on the saving, [0-9]+ cover cuts, 1 capped ops: solved, ' "$TMP/b" ||
  fail "solve's bound line: $(grep T_bound "$TMP/b")"

# the gaps to the bound are (T - T_bound) / T_bound of the times printed (train_step at 1 MiB:
# 3.8%, not 0), and the wall time is the solve's own (a clock's start added to it once passed)
"$MB" solve datasets/samples/train_step.wl --solver greedy --capacity 1MiB >"$TMP/gap" ||
  fail "solve train_step at 1MiB"
awk '$1 == "T_bound" { b = $2 } $1 == "T_greedy" { g = $2 } $1 == "T_heuristic" { h = $2 }
     /^  gap to bound  greedy / { pg = $5; ph = $7; sub(/%,$/, "", pg); sub(/%$/, "", ph) }
     /^solver    greedy, seed 1, wall / { wall = $6 }
     function off(p, t) { d = p - 100 * (t - b) / b; return d < -0.0006 || d > 0.0006 }
     END { if (!(b > 0) || pg == "" || ph == "" || off(pg, g) || off(ph, h) || !(h > b) ||
               wall == "" || !(wall >= 0 && wall < 100)) exit 1 }' "$TMP/gap" ||
  fail "solve's gaps or wall time: $(grep -E '^(solver|  T_|  gap)' "$TMP/gap")"
# --budget's help lists every solver's default once, the last closing the list
"$MB" solve --help >"$TMP/help" || fail "solve --help"
sed -n '/^--budget SEC/,/^--bound-budget/p' "$TMP/help" | sed '$d' | tr -s ' \n' ' ' |
  grep -qE "^--budget SEC solver wall-clock budget \(default: the solver's own, heuristic none, greedy [0-9.]+ s, mallocmuzero [0-9.]+ s, mallocmuzero-exact [0-9.]+ s\) \$" ||
  fail "solve --help, --budget: $(sed -n '/^--budget SEC/,/^--bound-budget/p' "$TMP/help")"

# and its lines fit 88 columns, as every other line of the help
awk 'length > 88 { print; bad = 1 } END { exit bad }' "$TMP/help" >"$TMP/long" ||
  fail "solve --help: lines over 88 columns: $(cat "$TMP/long")"
# fine-tuning by updates or by seconds alone is no conflict (the heuristic ignores both); both are
expect_status 0 "--finetune-steps alone" "$MB" solve datasets/samples/mlp_tiny.wl --solver heuristic \
  --finetune-steps 10
expect_status 0 "--finetune alone" "$MB" solve datasets/samples/mlp_tiny.wl --solver heuristic \
  --finetune 1
expect_status 2 "--finetune with --finetune-steps" "$MB" solve datasets/samples/mlp_tiny.wl \
  --solver heuristic --finetune 1 --finetune-steps 10
grep -qx "mallocbench solve: --finetune and --finetune-steps: give one of them" "$TMP/err" ||
  fail "--finetune with --finetune-steps: $(cat "$TMP/err")"

# Same seed, same assignment.
"$MB" solve datasets/samples/train_step.wl --solver greedy --capacity 2MiB --seed 9 \
  --out "$TMP/a1.csv" >/dev/null || fail "solve a1"
"$MB" solve datasets/samples/train_step.wl --solver greedy --capacity 2MiB --seed 9 \
  --out "$TMP/a2.csv" >/dev/null || fail "solve a2"
cmp -s "$TMP/a1.csv" "$TMP/a2.csv" || fail "greedy not deterministic for a seed"

# Bad input: clear message, exit 2, never a crash.
expect_status 2 "unknown solver" "$MB" solve datasets/samples/mlp_tiny.wl --solver nope
grep -q "no solver named 'nope'" "$TMP/err" || fail "unknown solver message"
expect_status 2 "missing file" "$MB" solve "$TMP/missing.wl" --solver greedy
expect_status 2 "bad capacity" "$MB" solve datasets/samples/mlp_tiny.wl --solver greedy --capacity lots
grep -q -- "--capacity 'lots'" "$TMP/err" || fail "bad capacity message"
printf 'mallocbench-workload 1\nname broken\nbuffer x size=-4 start=0 end=1\n' >"$TMP/bad.wl"
expect_status 2 "malformed workload" "$MB" solve "$TMP/bad.wl" --solver heuristic
grep -q "bad.wl:" "$TMP/err" || fail "malformed workload message does not name the file"
expect_status 2 "no solver" "$MB" solve datasets/samples/mlp_tiny.wl
expect_status 0 "solve --help" "$MB" solve --help
expect_status 0 "pack --help" "$MB" pack --help

# pack: MiniMalloc's example fits in 12 bytes, not in 11.
if [ -f "$DATA/minimalloc/input.12.csv" ]; then
  expect_status 0 "pack input.12" "$MB" pack "$DATA/minimalloc/input.12.csv" --out "$TMP/p.csv"
  grep -q '^packer      solved in .*, height 12 B$' "$TMP/out" || fail "pack input.12 not solved"
  expect_status 1 "pack input.12 at 11" "$MB" pack "$DATA/minimalloc/input.12.csv" --capacity 11
  # the slack is capacity - peak live (12 B), best fit's height a share of the capacity, and
  # an infeasible packing has no height
  grep -q 'peak live 12 B, capacity 11 B (slack at peak -1 B)$' "$TMP/out" &&
    grep -q '^best fit    2 of 5 buffers left out at capacity; needs 12 B to fit all (109.1% of capacity)$' "$TMP/out" &&
    grep -q '^packer      infeasible in [0-9.]* s wall (0 search nodes)$' "$TMP/out" ||
    fail "pack at 11: $(cat "$TMP/out")"
else
  echo "note: $DATA/minimalloc/input.12.csv missing: pack checks skipped"
fi
expect_status 2 "pack without capacity" "$MB" pack datasets/samples/mlp_tiny.wl
# an output path that is a device or a directory is refused, never replaced by the rename
expect_status 2 "solve --out /dev/null" "$MB" solve datasets/samples/mlp_tiny.wl --solver heuristic \
  --out /dev/null
grep -q "/dev/null: exists and is not a regular file (a character device)" "$TMP/err" ||
  fail "solve --out /dev/null: $(cat "$TMP/err")"
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
expect_status 2 "solve --out DIR" "$MB" solve datasets/samples/mlp_tiny.wl --solver heuristic \
  --out "$TMP"
[ -d "$TMP" ] || fail "solve --out DIR replaced the directory"
echo "e2e solve: ok"
