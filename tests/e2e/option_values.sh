#!/usr/bin/env bash
# Every command reads option values the same way (suite/option_values.h): a number must fill
# the whole argument, lie in range and not overflow; a bad one gives exit 2 and one line
# "mallocbench COMMAND: FLAG 'VALUE': expected ..." naming what was expected, before any work.
# Usage: option_values.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: option_values.sh MALLOCBENCH_BINARY}
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"
WL=datasets/samples/mlp_tiny.wl
BIG=99999999999999999999 # above 2^64: strtoll/strtoull saturate, which must not pass for a value

# integers: trailing text, a number that is not an integer, overflow, a sign where none belongs
expect 2 "^mallocbench run: --jobs '4x': expected an integer in 1\.\.1000000\$" "$MB" run --jobs 4x
expect 2 "^mallocbench run: --seeds '$BIG': expected an integer in 1\.\." "$MB" run --seeds "$BIG"
expect 2 "^mallocbench solve: --seed '-1': expected an integer in 0\.\.18446744073709551615\$" \
  "$MB" solve "$WL" --solver heuristic --seed -1
expect 2 "^mallocbench solve: --seed '$BIG': expected an integer in 0\.\." \
  "$MB" solve "$WL" --solver heuristic --seed "$BIG"
expect 2 "^mallocbench solve: --simulations '1\.5': expected an integer in 1\.\." \
  "$MB" solve "$WL" --solver heuristic --simulations 1.5
expect 2 "^mallocbench bench core: --seed '-1': expected an integer in 0\.\." "$MB" bench core --seed -1
expect 2 "^mallocbench bench core: --max '1e6': expected an integer in 1000\.\.10000000\$" \
  "$MB" bench core --max 1e6
expect 2 "^mallocbench bench game: --actions '1': expected an integer in 2\.\.1024\$" \
  "$MB" bench game "$WL" --actions 1
expect 2 "^mallocbench bench muzero: --simulations '0': expected an integer in 1\.\.100000\$" \
  "$MB" bench muzero --simulations 0
expect 2 "^mallocbench bench nn: --width ' 8': expected an integer in 2\.\.8192\$" \
  "$MB" bench nn --width " 8"
expect 2 "^mallocbench play: --episodes '0': expected an integer in 1\.\.100000000\$" \
  "$MB" play "$WL" --episodes 0
expect 2 "^mallocbench import hlo: --repeat '': expected an integer in 1\.\.100000\$" \
  "$MB" import hlo x.hlo -o "$TMP/x.wl" --repeat ""
expect 2 "^mallocbench generate alphatensor: --n '8x': expected an integer in 4\.\.1048576\$" \
  "$MB" generate alphatensor --builtin standard --n 8x -o "$TMP/x.wl"
expect 2 "^mallocbench train: --batch '$BIG': expected an integer in 1\.\.4096\$" \
  "$MB" train --synthetic --steps 1 --batch "$BIG" --out "$TMP/a.h5"

# numbers: not finite, out of range, an open lower end
expect 2 "^mallocbench run: --budget 'inf': expected a number in \(0, 1e\+09\]\$" "$MB" run --budget inf
expect 2 "^mallocbench run: --c-scale '0': expected a number in \(0, " "$MB" run --c-scale 0
expect 2 "^mallocbench solve: --budget 'nan': expected a number in \(0, " \
  "$MB" solve "$WL" --solver heuristic --budget nan
expect 2 "^mallocbench pack: --budget '-1': expected a number in \(0, " \
  "$MB" pack x.csv --capacity 1KiB --budget -1
expect 2 "^mallocbench bench solvers: --budget '0': expected a number in \(0, " \
  "$MB" bench solvers --budget 0
expect 2 "^mallocbench train: --lr '1e999': expected a number in \[1e-09, 1\]\$" \
  "$MB" train --synthetic --steps 1 --lr 1e999 --out "$TMP/a.h5"

# byte counts: the same units everywhere, integers only
expect 2 "^mallocbench solve: --capacity '1\.5MiB': expected bytes" \
  "$MB" solve "$WL" --solver heuristic --capacity 1.5MiB
expect 2 "^mallocbench pack: --capacity '0': expected bytes > 0, e.g." "$MB" pack x.csv --capacity 0
expect 2 "^mallocbench import csv: --capacity '$BIG': expected bytes" \
  "$MB" import csv x.csv -o "$TMP/x.wl" --capacity "$BIG"
expect 2 "^mallocbench generate packing: --height '1x': expected bytes in 1\.\.1099511627776, e\.g\. 1048576 or 4MiB\$" \
  "$MB" generate packing --buffers 4 --height 1x -o "$TMP/x.wl"
expect 2 "^mallocbench generate packing: --quantum '0': expected bytes in 1\.\.1099511627776, e\.g\. " \
  "$MB" generate packing --buffers 4 --quantum=0 -o "$TMP/x.wl"
# "--NAME=VALUE" with "--NAME" of 62 to 65 bytes, about the longest that the buffer an option's
# name is read into holds (63 bytes and its NUL): an unknown option, named whole either way
for k in 60 61 62 63; do
  long="--$(printf "%${k}s" '' | tr ' ' a)"
  expect 2 "^mallocbench summary: unknown option '$long=1' \(see mallocbench summary --help\)\$" \
    "$MB" summary x.h5 "$long=1"
done
# play takes 0 bytes too: no range to state
expect 2 "^mallocbench play: --capacity '1x': expected bytes, e\.g\. 1048576 or 4MiB\$" \
  "$MB" play "$WL" --capacity 1x

# and good values still pass, units included
"$MB" solve "$WL" --solver heuristic --capacity 64KiB --seed 18446744073709551615 >"$TMP/out" \
  2>"$TMP/err" || fail "solve with good values: $(cat "$TMP/err")"
[ -z "$(ls -A "$TMP" | grep -v -e '^out$' -e '^err$')" ] || fail "a refused command wrote a file"

# a value may hold any byte: the paths that generate and pack echo on stdout spell control bytes
# \xHH (mb_diag, suite/error.h), so the output has the lines of the same run on a plain name
# lines_of NAME: stdout of generate packing and pack on files named NAME, checked free of ESC/CR
lines_of() {
  "$MB" generate packing --buffers 4 -o "$TMP/$1.wl" --solution "$TMP/$1.csv" >"$TMP/out" \
    2>"$TMP/err" || fail "generate packing -o '$1.wl': $(cat -v "$TMP/err")"
  "$MB" pack "$TMP/$1.wl" --capacity 1MiB --out "$TMP/$1.placed.csv" >>"$TMP/out" 2>"$TMP/err" ||
    fail "pack '$1.wl': $(cat -v "$TMP/err")"
  if LC_ALL=C grep -q $'[\x1b\r]' "$TMP/out"; then
    fail "raw ESC or CR on stdout: $(cat -v "$TMP/out")"
  fi
  wc -l <"$TMP/out"
}
plain=$(lines_of plain_name_here) || exit 1
ctl=$(lines_of $'ctl\x1b[2J\nname\r') || exit 1
[ "$ctl" = "$plain" ] ||
  fail "stdout has $ctl lines for a name with control bytes, $plain for a plain one"
shown="$TMP/ctl\x1b[2J\x0aname\x0d"
for want in "wrote $shown.wl: workload" "wrote $shown.csv: the perfect packing" \
  "input       $shown.wl:" "placement   written to $shown.placed.csv"; do
  grep -qF -- "$want" "$TMP/out" || fail "stdout lacks '$want': $(cat -v "$TMP/out")"
done
exit 0
