#!/bin/bash
# End-to-end: `mallocbench play` (mallocGame episodes) and `mallocbench bench game`.
# The heuristic policy must reproduce the heuristic solver (play exits 1 otherwise), random play
# must be deterministic per seed and always valid, bad input must exit 2 with a clear message.
# Usage: play.sh MALLOCBENCH_BINARY
set -u
MB=${1:?usage: play.sh MALLOCBENCH_BINARY}
HERE=$(cd "$(dirname "$0")" && pwd)
SAMPLES=$HERE/../../datasets/samples
DATA=${MALLOCBENCH_DATA:-$HERE/../../../shared/data}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect STATUS CMD...: runs CMD, output in $T/out, checks the exit status
expect() {
  local want=$1; shift
  "$@" >"$T/out" 2>&1
  local got=$?
  [ "$got" = "$want" ] || { fail "exit $got (want $want): $*"; sed 's/^/  | /' "$T/out" | head -5; }
}

expect 0 "$MB" play --help
grep -q "usage: mallocbench play" "$T/out" || fail "play --help has no usage line"
expect 2 "$MB" play

# Every sample: heuristic policy == heuristic solver; random play valid and deterministic;
# the printed return is (T_slow - T) / T_slow of the printed times.
n=0
for wl in "$SAMPLES"/*; do
  case "$wl" in *.md) continue ;; esac
  [ -f "$wl" ] || continue
  n=$((n + 1))
  for cap in 1MiB 4MiB; do
    for order in heuristic start size; do
      expect 0 "$MB" play "$wl" --policy heuristic --order "$order" --capacity $cap
      # in another order the heuristic policy is compared with the solver: (T - T_solver) /
      # T_solver of the printed times (conv_block at 4 MiB: +14%)
      [ "$order" = heuristic ] && continue
      awk -v o="$order" '/^best return / { t = $5 }
        /^heuristic solver: T / { th = $4; p = $(NF - 1); sub(/%$/, "", p); seen = index($0, "(best fit in " o " order here: ") }
        END { want = 100 * (t - th) / th
              if (!seen || !(th > 0) || p - want > 0.00006 || want - p > 0.00006) exit 1 }' "$T/out" ||
        fail "$wl, $cap, $order order: $(grep -E '^(best return|heuristic solver)' "$T/out")"
    done
    expect 0 "$MB" play "$wl" --policy heuristic --capacity $cap
    grep -q "identical to the heuristic policy" "$T/out" || fail "$wl: no heuristic check line"
  done
  expect 0 "$MB" play "$wl" --policy heuristic
  expect 0 "$MB" play "$wl" --policy random --episodes 20 --seed 3 --actions 4 --capacity 4MiB
  cp "$T/out" "$T/a"
  expect 0 "$MB" play "$wl" --policy random --episodes 20 --seed 3 --actions 4 --capacity 4MiB
  cmp -s "$T/a" "$T/out" || fail "$wl: random play with one seed is not deterministic"
  ts=$(sed -n 's/^T_slow \([0-9]*\) ps.*/\1/p' "$T/out")
  awk -v s="$ts" '$1 ~ /^[0-9]+$/ && NF == 5 {
      want = sprintf("%.6f", (s - $3) / s); if ($2 != want) { print $2, want; bad = 1 } }
    END { exit bad }' "$T/out" || fail "$wl: printed return != (T_slow - T) / T_slow"
  expect 0 "$MB" play "$wl" --policy slow -q
  grep -q "best return 0.000000" "$T/out" || fail "$wl: slow policy return is not 0"
done
[ "$n" -gt 0 ] || fail "no samples in $SAMPLES"
WL=$(ls "$SAMPLES"/*.wl | head -1)

# --out writes the best assignment as CSV (header and one row per buffer).
expect 0 "$MB" play "$WL" --policy random --episodes 5 --out "$T/best.csv"
head -1 "$T/best.csv" | grep -q "^buffer,offset" || fail "--out: no CSV header"

# Of equally good episodes --out keeps the first. Twin buffers, room for one: a random episode
# puts the first visited in fast memory (1 decision: the second has only "slow" left) or the
# second (2 decisions), with the same return. With seed 0 the first of 10 episodes is a best
# one and the last a best one of the other kind, so 10 episodes must write what 1 writes.
cat >"$T/twins.wl" <<'EOF'
mallocbench-workload 1
name twins
op o kind=add flops=1024
buffer a size=65536 start=0 end=0
use a op=0 read=65536
buffer b size=65536 start=0 end=0
use b op=0 read=65536
EOF
expect 0 "$MB" play "$T/twins.wl" --capacity 64KiB --policy random --episodes 10 --out "$T/t10.csv"
awk '$1 ~ /^[0-9]+$/ && NF == 5 { n++; r[n] = $2; d[n] = $4 }
     END { if (n != 10) exit 1
           for (i = 2; i <= n; i++) if (r[i] > r[1]) exit 1 # episode 0 is a best one
           exit !(r[n] == r[1] && d[n] != d[1]) }' "$T/out" ||
  fail "twins: seed 0 no longer plays two kinds of best episode: $(cat "$T/out")"
expect 0 "$MB" play "$T/twins.wl" --capacity 64KiB --policy random --episodes 1 --out "$T/t1.csv"
cmp -s "$T/t1.csv" "$T/t10.csv" || fail "--out keeps a later equally good episode, not the first"

# Bad input: exit 2 and a message naming the problem.
expect 2 "$MB" play "$T/missing.wl"
grep -q "missing.wl" "$T/out" || fail "missing file not named: $(cat "$T/out")"
expect 2 "$MB" play "$WL" --policy greedy
grep -q "random, heuristic or slow" "$T/out" || fail "bad policy message: $(cat "$T/out")"
expect 2 "$MB" play "$WL" --actions 1
expect 2 "$MB" play "$WL" --episodes 0
expect 2 "$MB" play "$WL" --capacity 12XB
expect 2 "$MB" play "$WL" --order random
expect 2 "$MB" play "$WL" --bogus 1
expect 2 "$MB" play "$WL" --hardware no-such-profile
printf 'mallocbench-workload 1\nname x\nbuffer a size=-5 start=0 end=0\n' >"$T/bad.wl"
expect 2 "$MB" play "$T/bad.wl"
grep -q "bad.wl:3" "$T/out" || fail "bad workload error lacks file:line: $(cat "$T/out")"

# Real data when present: HLO modules and MiniMalloc CSVs (capacity from the file name).
for f in "$DATA"/hlo/*.hlo; do
  [ -f "$f" ] || continue
  expect 0 "$MB" play "$f" --policy heuristic --capacity 1MiB
  grep -q "identical to the heuristic policy" "$T/out" || fail "$f: heuristic mismatch"
  expect 0 "$MB" play "$f" --policy random --episodes 3 --capacity 1MiB -q
done
for f in "$DATA"/minimalloc/*.csv; do
  [ -f "$f" ] || continue
  expect 0 "$MB" play "$f" --hardware edge-npu --policy heuristic
  grep -q "identical to the heuristic policy" "$T/out" || fail "$f: heuristic mismatch"
done

# The benchmark runs and prints its rates.
expect 0 "$MB" bench game "$WL" --seconds 0.05
grep -q "steps/s" "$T/out" || fail "bench game printed no rate"
expect 2 "$MB" bench game "$WL" --seconds -1
# A workload name from the file reaches the terminal escaped, as every name does (error.h).
cat >"$T/ctl.wl" <<'WL'
mallocbench-workload 1
name "ctl\x0a\x1b[2Jname"
schedule 4
slow_time_ps 100
buffer a size=512 start=0 end=1 benefit=10
buffer b size=512 start=1 end=3 benefit=10
WL
expect 0 "$MB" bench game "$T/ctl.wl" --seconds 0.05
grep -qF 'workload ctl\x0a\x1b[2Jname (' "$T/out" || fail "bench game: name not escaped"
if LC_ALL=C grep -q $'\x1b' "$T/out"; then fail "bench game: raw ESC on its output"; fi

# A buffer CSV takes its capacity from its name (as import and pack do), unless --capacity is
# given; the policy is named, and random play prints one row per episode.
printf 'id,lower,upper,size\n0,0,3,512\n1,1,4,768\n' >"$T/in.1024.csv"
expect 0 "$MB" play "$T/in.1024.csv" --policy heuristic
grep -q "^hardware tpu-v4i: fast memory 1024 B, " "$T/out" || fail "capacity from the CSV's name: $(cat "$T/out")"
grep -qx "policy heuristic, 1 episode(s), seed 0" "$T/out" || fail "heuristic policy line: $(cat "$T/out")"
expect 0 "$MB" play "$T/in.1024.csv" --policy heuristic --capacity 4096
grep -q "^hardware tpu-v4i: fast memory 4096 B, " "$T/out" || fail "--capacity over the CSV's name: $(cat "$T/out")"
expect 0 "$MB" play "$T/in.1024.csv" --policy random --episodes 3
grep -qx "policy random, 3 episode(s), seed 0" "$T/out" || fail "random policy line: $(cat "$T/out")"
[ "$(awk '$1 ~ /^[0-9]+$/ && NF == 5' "$T/out" | wc -l)" = 3 ] || fail "3 episodes, rows: $(cat "$T/out")"

[ "$fails" -eq 0 ] && echo "play.sh: all checks passed"
exit $((fails > 0))
