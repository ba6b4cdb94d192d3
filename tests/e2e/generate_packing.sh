#!/usr/bin/env bash
# `mallocbench generate packing` and `check --capacity` through the CLI (about a second):
# a generated instance's --solution is a perfect packing that `check` accepts at the height
# and refuses one quantum below; the same seed writes byte-identical files and another seed
# different ones; `show` reads the instance; 100,001 buffers work; bad values exit 2 naming
# the flag.
# Usage: generate_packing.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: generate_packing.sh MALLOCBENCH_BINARY}
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"

N=40
H=65536 # --height 64KiB
SMALL=(--buffers $N --height 64KiB --quantum 1024 --length 256)
gen() { # gen SEED OUT SOLUTION
  "$MB" generate packing "${SMALL[@]}" --seed "$1" -o "$2" --solution "$3" >"$TMP/out" \
    2>"$TMP/err" || fail "generate packing --seed $1: $(cat "$TMP/err")"
}

stdout_has -F "generate packing --buffers N" "$MB" generate --help ||
  fail "generate --help does not list packing"
stdout_has -F "--capacity BYTES" "$MB" check --help || fail "check --help does not list --capacity"

gen 5 "$TMP/a.wl" "$TMP/a.csv"
grep -q "workload 'packing_n${N}_s5', 0 ops, $N buffers" "$TMP/out" ||
  fail "generate: default name or counts: $(cat "$TMP/out")"
[ "$(tail -n +2 "$TMP/a.csv" | wc -l)" = $N ] || fail "solution: not $N rows"
grep -q "^schedule 256$" "$TMP/a.wl" || fail "workload: no 'schedule 256' line"

# The solution packs every buffer in exactly the height.
"$MB" check "$TMP/a.wl" "$TMP/a.csv" --capacity $H >"$TMP/out" 2>"$TMP/err" ||
  fail "check at the height: $(cat "$TMP/err")"
grep -q "^valid      yes: $N of $N buffers in fast memory" "$TMP/out" ||
  fail "check: not every buffer fast: $(cat "$TMP/out")"
grep -q "highest address $H B, capacity $H B" "$TMP/out" ||
  fail "check: highest address or capacity: $(cat "$TMP/out")"
# units work too, and the profile's own capacity (128 MiB) holds it as well
"$MB" check "$TMP/a.wl" "$TMP/a.csv" --capacity 64KiB >/dev/null || fail "--capacity 64KiB"
"$MB" check "$TMP/a.wl" "$TMP/a.csv" >/dev/null || fail "check at the profile's capacity"
# One quantum less: some buffer ends above the capacity.
expect 1 "exceeds the fast-memory capacity $((H - 1024))" \
  "$MB" check "$TMP/a.wl" "$TMP/a.csv" --capacity $((H - 1024))

# Deterministic: the same seed gives the same files, another seed other ones.
gen 5 "$TMP/b.wl" "$TMP/b.csv"
cmp -s "$TMP/a.wl" "$TMP/b.wl" || fail "same seed, different workloads"
cmp -s "$TMP/a.csv" "$TMP/b.csv" || fail "same seed, different solutions"
gen 6 "$TMP/c.wl" "$TMP/c.csv"
sed 's/_s6$/_s5/' "$TMP/c.wl" | cmp -s - "$TMP/a.wl" && fail "seeds 5 and 6: same buffers"
# -o - writes the same workload to stdout
"$MB" generate packing "${SMALL[@]}" --seed 5 -o - >"$TMP/stdout.wl" || fail "-o -"
cmp -s "$TMP/a.wl" "$TMP/stdout.wl" || fail "-o - differs from the file"

# show reads it: op-less, every buffer a candidate, the rectangle full at every step
"$MB" show "$TMP/a.wl" >"$TMP/out" 2>"$TMP/err" || fail "show: $(cat "$TMP/err")"
grep -q "^ops  *none: buffer list with explicit benefits, schedule length 256" "$TMP/out" ||
  fail "show: ops line: $(cat "$TMP/out")"
grep -q "^buffers  *$N (0 pinned to slow memory, $N candidates), 0 uses" "$TMP/out" ||
  fail "show: buffers line: $(cat "$TMP/out")"
grep -q "^peak live bytes $H B" "$TMP/out" || fail "show: peak live: $(cat "$TMP/out")"

# Above the former 100,000-buffer limit (the generator is no longer quadratic): still a
# perfect packing that check accepts at the height.
"$MB" generate packing --buffers 100001 --seed 3 --height 1MiB --length 4096 -o "$TMP/big.wl" \
  --solution "$TMP/big.csv" >/dev/null 2>"$TMP/err" || fail "100001 buffers: $(cat "$TMP/err")"
"$MB" check "$TMP/big.wl" "$TMP/big.csv" --capacity 1MiB >"$TMP/out" 2>"$TMP/err" ||
  fail "check 100001 buffers: $(cat "$TMP/err")"
grep -q "^valid      yes: 100001 of 100001 buffers in fast memory" "$TMP/out" ||
  fail "check 100001 buffers: not every buffer fast: $(cat "$TMP/out")"
stdout_has -G "--buffers N .*1\.\.1000000 " "$MB" generate --help || fail "--help: not 1..1000000"

# Bad values: exit 2, the message names the flag and what it expects; nothing written.
G=("$MB" generate packing)
expect 2 "--buffers 'x': expected an integer in 1\.\.[0-9]+" "${G[@]}" --buffers x -o "$TMP/x.wl"
expect 2 "--buffers '0': expected an integer" "${G[@]}" --buffers 0 -o "$TMP/x.wl"
expect 2 "--buffers '1000001': expected an integer in 1\.\.1000000\$" \
  "${G[@]}" --buffers 1000001 -o "$TMP/x.wl"
expect 2 "--seed '-1': expected an integer in 0\.\." "${G[@]}" --buffers 4 --seed -1 -o "$TMP/x.wl"
expect 2 "--length '0': expected an integer" "${G[@]}" --buffers 4 --length 0 -o "$TMP/x.wl"
expect 2 "--height '1000' .*expected a multiple of --quantum '1024'" \
  "${G[@]}" --buffers 4 --height 1000 -o "$TMP/x.wl"
expect 2 "--height '1KiB' .*expected a multiple of --quantum '4096'" \
  "${G[@]}" --buffers 4 --height 1KiB --quantum 4096 -o "$TMP/x.wl"
expect 2 "--quantum 'big': expected bytes" "${G[@]}" --buffers 4 --quantum big -o "$TMP/x.wl"
# a 4 KiB x 4 step rectangle holds at most 4 x 4 buffers of one quantum by one step
expect 2 "--buffers '17': expected at most 16" \
  "${G[@]}" --buffers 17 --height 4096 --length 4 -o "$TMP/x.wl"
"${G[@]}" --buffers 16 --height 4096 --length 4 -o "$TMP/full.wl" >/dev/null ||
  fail "16 buffers in a 4 x 4 rectangle"
expect 2 "need --buffers N and -o OUT" "${G[@]}" --buffers 4
expect 2 "unknown option '--bogus'" "${G[@]}" --buffers 4 --bogus 1 -o "$TMP/x.wl"
expect 2 "--solution needs a value" "${G[@]}" --buffers 4 -o "$TMP/x.wl" --solution
[ ! -e "$TMP/x.wl" ] || fail "a refused generate wrote its output"
expect 2 "unknown generator 'pack'" "$MB" generate pack --buffers 4 -o "$TMP/x.wl"

expect 2 "--capacity 'lots': expected bytes > 0, e.g." \
  "$MB" check "$TMP/a.wl" "$TMP/a.csv" --capacity lots
expect 2 "--capacity '0': expected bytes > 0, e.g." \
  "$MB" check "$TMP/a.wl" "$TMP/a.csv" --capacity 0
expect 2 "--capacity '-5': expected" "$MB" check "$TMP/a.wl" "$TMP/a.csv" --capacity -5
expect 2 "--capacity needs a value" "$MB" check "$TMP/a.wl" "$TMP/a.csv" --capacity

echo "generate_packing: all checks passed"
