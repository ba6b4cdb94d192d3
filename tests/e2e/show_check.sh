#!/bin/bash
# End-to-end: `mallocbench show` and `mallocbench check` on the samples: statistics, valid and
# invalid assignments (exit 1 with the validator's message, led by the CSV file, line and field),
# malformed input (exit 2 with file:line and the field).
# Usage: show_check.sh MALLOCBENCH_BINARY
set -u
MB=${1:?usage: show_check.sh MALLOCBENCH_BINARY}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
S=$ROOT/datasets/samples
DATA=${MALLOCBENCH_DATA:-$ROOT/../shared/data}
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
has() { grep -qF -- "$1" "$T/out" || { fail "output lacks '$1'"; sed 's/^/  | /' "$T/out" | head -8; }; }

# ---- show ----
expect 0 "$MB" show --help
has "usage: mallocbench show WORKLOAD"
expect 2 "$MB" show
expect 2 "$MB" show "$S/mlp_tiny.wl" --bogus
has "mallocbench show: unknown option '--bogus' (see mallocbench show --help)"
expect 2 "$MB" show "$S/mlp_tiny.wl" --hardware no-such-profile
expect 2 "$MB" show "$T/missing.wl"
has "missing.wl: cannot read"
# a name that is no file but a catalogue entry: its workload on its own profile and capacity
# (alexnet_inf_b128-tpu: a model-zoo entry, no external data; 16777216 B of tpu-v4i); a name
# that is neither says both
here=$PWD
cd "$T" || exit 1 # no file of that name here
expect 0 "$MB" show alexnet_inf_b128-tpu
has "file            entry 'alexnet_inf_b128-tpu' of $ROOT/datasets/catalogue.txt"
has "hardware        tpu-v4i: fast memory 16777216 B (16.00 MiB)"
# another profile keeps the entry's fast-memory size, as run --hardware does
expect 0 "$MB" show alexnet_inf_b128-tpu --hardware gpu-l2
has "hardware        gpu-l2: fast memory 16777216 B (16.00 MiB)"
expect 2 "$MB" show no_such_entry
has "mallocbench show: no_such_entry: no such file, nor an entry of $ROOT/datasets/catalogue.txt ('mallocbench list' lists them)"
# check, solve and play take the same names (mb_cli_workload), on the entry's hardware
: >"$T/all-slow.csv"
expect 0 "$MB" check alexnet_inf_b128-tpu all-slow.csv
has "workload   alexnet_inf_b128-tpu on tpu-v4i"
has "capacity 16777216 B"
expect 0 "$MB" solve alexnet_inf_b128-tpu --solver heuristic
has "hardware  tpu-v4i: fast memory 16777216 B"
expect 0 "$MB" play alexnet_inf_b128-tpu -q --capacity 1MiB
has "best return"
expect 2 "$MB" solve no_such_entry --solver heuristic
has "mallocbench solve: no_such_entry: no such file, nor an entry of"
# --catalogue names another catalogue, as run's does: its entry, its capacity, its file named;
# one that does not load is quoted (not taken for a missing entry); --data is where its data is
printf 'name kind source args hardware capacity split tags\nmine model datasets/models/alexnet_inf_b128.spec - tpu-v4i 2097152 test own\n' \
  >"$T/my_catalogue.txt"
for cmd in show "solve --solver heuristic" "play -q" "check all-slow.csv"; do
  # shellcheck disable=SC2086 # $cmd is a subcommand and its arguments
  set -- $cmd
  sub=$1
  shift
  expect 0 "$MB" "$sub" mine "$@" --catalogue "$T/my_catalogue.txt"
  has "2097152 B"
  expect 2 "$MB" "$sub" mine "$@" --catalogue "$T/my_catalogue.txt" --catalogue "$T/no_such.txt"
  has "mallocbench $sub: mine: no such file, and the catalogue that could name it does not load: "
  has "no_such.txt"
  expect 2 "$MB" "$sub" mine "$@"
  has "mallocbench $sub: mine: no such file, nor an entry of $ROOT/datasets/catalogue.txt"
  expect 2 "$MB" "$sub" mine --catalogue ''
  has "mallocbench $sub: --catalogue '': expected a file path"
  expect 2 "$MB" "$sub" mine --data
  has "mallocbench $sub: --data needs a value"
done
expect 0 "$MB" show mine --catalogue "$T/my_catalogue.txt"
has "file            entry 'mine' of $T/my_catalogue.txt"
# a buffer exactly as large as fast memory fits it (mlp_tiny's three candidates are 1 MiB each),
# and 1 MiB is said in MiB, not as 1024 KiB
printf 'name kind source args hardware capacity split tags\ntiny native %s - tpu-v4i 1MiB test own\n' \
  "$S/mlp_tiny.wl" >"$T/tiny_catalogue.txt"
expect 0 "$MB" show tiny --catalogue "$T/tiny_catalogue.txt"
has "buffers fitting 3 of 3 candidates fit in fast memory alone (size <= 1048576 B (1.00 MiB))"
# the benefit's share of T_slow is the ratio of the two times printed (to their rounding)
awk '/^T_slow / { t = $2 } /^benefit sum / { b = $3; share = substr($11, 1, length($11) - 1) }
     END { if (!(t > 0) || share == "" || share - 100 * b / t > 0.06 || 100 * b / t - share > 0.06) exit 1 }' \
  "$T/out" || fail "benefit share of T_slow: $(grep -E '^(T_slow|benefit)' "$T/out")"
# sizes up to the last unit: 1024 TiB is no PiB
printf 'mallocbench-workload 1\nname huge\nschedule 2\nslow_time_ps 1000\nbuffer b0 size=1125899906842624 start=0 end=1 benefit=10\n' \
  >"$T/huge.wl"
expect 0 "$MB" show "$T/huge.wl"
has "largest buffer  1125899906842624 B (1024.00 TiB) ('b0')"
expect 2 "$MB" show other --catalogue "$T/my_catalogue.txt"
has "other: no such file, nor an entry of $T/my_catalogue.txt ('mallocbench list --catalogue $T/my_catalogue.txt' lists them)"
# a name missing from a catalogue of exactly 64 entries, which fill the parser's first
# allocation: the lookup stops at the last entry (an ASan build catches a read past it)
{
  echo 'name kind source args hardware capacity split tags'
  for i in $(seq 1 64); do echo "w$i alphatensor builtin:standard n=64,dtype=f32 tpu-v4i profile test generated"; done
} >"$T/full_catalogue.txt"
expect 2 "$MB" show other --catalogue "$T/full_catalogue.txt"
has "other: no such file, nor an entry of $T/full_catalogue.txt"
expect 0 "$MB" list --catalogue "$T/full_catalogue.txt"
has "# 64 listed of 64 in $T/full_catalogue.txt"
printf 'name kind source args hardware capacity split tags\nreal hlo hlo/mlp_pt_xla.hlo - tpu-v4i 65536 test own\n' \
  >"$T/hlo_catalogue.txt"
expect 2 "$MB" show real --catalogue "$T/hlo_catalogue.txt" --data "$T/no_data"
has "missing data file $T/no_data/hlo/mlp_pt_xla.hlo"
if [ -f "$DATA/hlo/mlp_pt_xla.hlo" ]; then
  expect 0 "$MB" show real --catalogue "$T/hlo_catalogue.txt" --data "$DATA"
  has "fast memory 65536 B"
fi
# one solver at a time: a second --solver is refused, not silently taken instead of the first
expect 2 "$MB" solve mine --solver heuristic --solver greedy --catalogue "$T/my_catalogue.txt"
has "mallocbench solve: --solver 'greedy' after --solver 'heuristic': one solver at a time"
cd "$here" || exit 1

expect 0 "$MB" show "$S/mlp_tiny.wl"
has "workload        mlp_tiny"
has "ops             4 (schedule length 4)"
has "buffers         8 (5 pinned to slow memory, 3 candidates), 11 uses"
has "peak live bytes 9699328 B (9.25 MiB) at time 0 (op 'dot1')"
has "largest buffer  8388608 B (8.00 MiB) ('w1')"
has "total FLOPs     2.14853e+09"
has "simulated"
has "buffers fitting 3 of 3 candidates"
expect 0 "$MB" show "$S/nothing_fits.wl"
has "buffers fitting 0 of 3 candidates"
expect 0 "$MB" show "$S/buffers_only.wl" --hardware edge-npu
has "hardware        edge-npu"
has "T_slow          0.010000 ms (given by the workload"

# a malformed workload: exit 2, the message names file:line and the field
printf 'mallocbench-workload 1\nname bad\nop a kind=dot flops=1\nbuffer b size=12x start=0 end=0\n' \
  >"$T/bad.wl"
expect 2 "$MB" show "$T/bad.wl"
has "bad.wl:4: buffer 'b': size '12x' is not an integer"
expect 2 "$MB" check "$T/bad.wl" "$T/none.csv"
has "bad.wl:4:"

# ---- check ----
W=$S/mlp_tiny.wl
expect 0 "$MB" check --help
printf 'buffer,offset\nh1,0\nh2,1048576\na1,0\n' >"$T/good.csv"
expect 0 "$MB" check "$W" "$T/good.csv"
has "valid      yes: 3 of 8 buffers in fast memory"
has "(simulated)"
speedup=$(awk '/^speedup/ { sub("x", "", $2); print $2 }' "$T/out")
awk -v s="$speedup" 'BEGIN { exit !(s > 1.0) }' || fail "speedup '$speedup' should exceed 1"
printf 'buffer,offset\n' >"$T/empty.csv"
expect 0 "$MB" check "$W" "$T/empty.csv"
has "speedup    1.0000x"

printf 'buffer,offset\nh1,0\nh2,1048576\na1,1048576\n' >"$T/overlap.csv"
expect 1 "$MB" check "$W" "$T/overlap.csv"
has "buffer 'h2' [1048576, 2097152) and buffer 'a1' [1048576, 2097152) overlap in fast memory at time 2"
# every message about the assignment names its file, line and field; an overlap both rows' lines
has "overlap.csv:4: field 'offset': invalid assignment for 'mlp_tiny' on tpu-v4i: buffer 'h2'"
has "at time 2 (rows on lines 3 and 4)"
printf 'buffer,offset\nh1,0\n# w1 is a parameter\nw1,0\n' >"$T/pinned.csv"
expect 1 "$MB" check "$W" "$T/pinned.csv"
has "pinned.csv:4: field 'offset': invalid assignment for 'mlp_tiny' on tpu-v4i: buffer 'w1': pinned"
# a fault of one row names that row's line alone: no second line
grep -q "rows on lines" "$T/out" && fail "a one-row fault names two lines: $(cat "$T/out")"
# the overlap's rows are named in the message's order, also when the second is buffer 0 (index 0
# of the workload: b0 lies above b1, so the message names it second)
printf 'mallocbench-workload 1\nname two\nschedule 6\nslow_time_ps 1000\nbuffer b0 size=1024 start=2 end=4 benefit=10\nbuffer b1 size=1024 start=1 end=3 benefit=10\n' \
  >"$T/two.wl"
printf 'b1,0\nb0,512\n' >"$T/first_below.csv"
expect 1 "$MB" check "$T/two.wl" "$T/first_below.csv"
has "first_below.csv:2: field 'offset': invalid assignment for 'two' on tpu-v4i: buffer 'b1' [0, 1024) and buffer 'b0' [512, 1536) overlap in fast memory at time 2 (rows on lines 1 and 2)"
printf 'buffer,offset\nh1,100\n' >"$T/misaligned.csv"
expect 1 "$MB" check "$W" "$T/misaligned.csv"
has "misaligned.csv:2: field 'offset': invalid assignment"
has "not a multiple of the alignment 512"
printf 'buffer,offset\nh1,4194304\n' >"$T/beyond.csv"
expect 0 "$MB" check "$W" "$T/beyond.csv"
expect 1 "$MB" check "$W" "$T/beyond.csv" --hardware edge-npu
has "beyond.csv:2: field 'offset': invalid assignment for 'mlp_tiny' on edge-npu"
has "exceeds the fast-memory capacity 4194304 of 'edge-npu'"
printf 'buffer,offset\nnope,0\n' >"$T/unknown.csv"
expect 2 "$MB" check "$W" "$T/unknown.csv"
has "unknown.csv:2: field 'buffer': 'nope' is not a buffer of workload 'mlp_tiny'"
printf 'buffer,offset\nh1,0\nh2,1MiB\n' >"$T/syntax.csv"
expect 2 "$MB" check "$W" "$T/syntax.csv"
has "syntax.csv:3: field 'offset': '1MiB' must be a non-negative byte offset or 'slow'"
printf 'buffer,offset\nh1,0\nh2\n' >"$T/short.csv"
expect 2 "$MB" check "$W" "$T/short.csv"
has "short.csv:3: field 'offset': missing; expected 'buffer,offset'"
printf 'buffer,offset\nh1,0\nh1,slow\n' >"$T/twice.csv"
expect 2 "$MB" check "$W" "$T/twice.csv"
has "twice.csv:3: field 'buffer': 'h1' listed twice (first on line 2)"
expect 2 "$MB" check "$W"

# buffer names the native format holds but a bare CSV field cannot (a comma, a quote, a line
# break, a leading '#', a blank): solve --out quotes them (RFC 4180) and check reads them back
cat >"$T/awkward.wl" <<'WL'
mallocbench-workload 1
name awkward
source "names with CSV syntax in them"
schedule 4
slow_time_ps 100
buffer "a,b" size=512 start=0 end=1 benefit=10
buffer "say \"hi\"" size=512 start=0 end=1 benefit=10
buffer "two\x0alines" size=512 start=0 end=1 benefit=10
buffer "#hash" size=512 start=0 end=1 benefit=10
buffer " lead" size=512 start=0 end=1 benefit=10
buffer plain size=512 start=2 end=3 benefit=10
WL
expect 0 "$MB" solve "$T/awkward.wl" --solver heuristic --hardware edge-npu --out "$T/awkward.csv"
grep -q '^"a,b",' "$T/awkward.csv" || fail "awkward.csv: $(cat "$T/awkward.csv")"
grep -q '^"#hash",' "$T/awkward.csv" || fail "awkward.csv: $(cat "$T/awkward.csv")"
expect 0 "$MB" check "$T/awkward.wl" "$T/awkward.csv" --hardware edge-npu
has "valid      yes: 6 of 6 buffers in fast memory"
# a name cut by an unbalanced quote is refused by line and field, not misread
printf 'buffer,offset\nplain,0\n"a,b,0\n' >"$T/unbalanced.csv"
expect 2 "$MB" check "$T/awkward.wl" "$T/unbalanced.csv" --hardware edge-npu
has "unbalanced.csv:3: field 'buffer': unterminated quoted field"

# ---- names with control bytes: every error is one line, with no escape sequence in it ----
# A .wl name may hold any byte but NUL ("\xHH"), an assignment CSV's quoted field a line break:
# messages show such bytes as \xHH (suite/error.h), never raw on the terminal.
# one_line STATUS CMD...: exits STATUS, stderr is exactly one line, without ESC or CR bytes
one_line() {
  local want=$1; shift
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  [ "$got" = "$want" ] || fail "exit $got (want $want): $*"
  local lines
  lines=$(wc -l <"$T/err")
  [ "$lines" = 1 ] || { fail "stderr has $lines lines, want 1: $*"; od -c "$T/err" | head -8; }
  if LC_ALL=C grep -q $'[\x1b\r]' "$T/err"; then fail "raw ESC or CR on stderr: $*"; fi
}
errhas() { grep -qF -- "$1" "$T/err" || { fail "stderr lacks '$1'"; cat -v "$T/err" | head -3; }; }
cat >"$T/ctl.wl" <<'WL'
mallocbench-workload 1
name "ctl\x0a\x1b[2Jname"
schedule 2
slow_time_ps 100
buffer "x\x0ay\x1b[31m" size=512 start=0 end=1 benefit=10
buffer z size=512 start=0 end=1 benefit=10
WL
expect 0 "$MB" show "$T/ctl.wl"
printf 'buffer,offset\n"x\ny\033[31m",0\nz,0\n' >"$T/ctl_overlap.csv"
one_line 1 "$MB" check "$T/ctl.wl" "$T/ctl_overlap.csv" --hardware edge-npu
errhas "ctl_overlap.csv:4: field 'offset': invalid assignment for 'ctl\x0a\x1b[2Jname' on edge-npu"
errhas "buffer 'x\x0ay\x1b[31m' [0, 512) and buffer 'z' [0, 512) overlap"
errhas "at time 0 (rows on lines 2 and 4)"
printf 'buffer,offset\n"no\nsuch\033]0;title\007",0\n' >"$T/ctl_unknown.csv"
one_line 2 "$MB" check "$T/ctl.wl" "$T/ctl_unknown.csv" --hardware edge-npu
errhas "field 'buffer': 'no\x0asuch\x1b]0;title\x07' is not a buffer of workload 'ctl\x0a\x1b[2Jname'"
# a bad field after such a name in the workload itself
sed 's/^buffer "x.*size=512/& bogus=1/' "$T/ctl.wl" >"$T/ctl_bad.wl"
grep -q 'bogus=1' "$T/ctl_bad.wl" || fail "could not make ctl_bad.wl"
one_line 2 "$MB" show "$T/ctl_bad.wl"
errhas "ctl_bad.wl:5: buffer 'x\x0ay\x1b[31m'"

# Human-facing stdout shows such names escaped the same way: no ESC byte reaches the terminal
# and a name never adds a line (a name holding ESC[2J used to clear the screen).
# clean_out N CMD...: exits 0, stdout has N lines and no ESC, CR or other control byte
clean_out() {
  local want=$1; shift
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  [ "$got" = 0 ] || { fail "exit $got (want 0): $*"; head -3 "$T/err"; }
  local lines
  lines=$(wc -l <"$T/out")
  [ "$lines" = "$want" ] || { fail "stdout has $lines lines, want $want: $*"; cat -v "$T/out" | head -20; }
  if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$T/out"; then
    fail "raw control byte on stdout: $*"
    cat -v "$T/out" | head -20
  fi
}
outhas() { grep -qF -- "$1" "$T/out" || { fail "stdout lacks '$1'"; cat -v "$T/out" | head -20; }; }
# the same workload with plain names gives the line count
sed -e 's/^name .*/name plain/' -e 's/^buffer "x.*size=512/buffer x size=512/' "$T/ctl.wl" \
  >"$T/plain.wl"
"$MB" show "$T/plain.wl" >"$T/plain_show" || fail "show plain.wl"
clean_out "$(wc -l <"$T/plain_show")" "$MB" show "$T/ctl.wl"
outhas 'workload        ctl\x0a\x1b[2Jname'
outhas "largest buffer  512 B ('x\x0ay\x1b[31m')"
# an op whose name holds them: show's peak op
cat >"$T/ctl_ops.wl" <<'WL'
mallocbench-workload 1
name "ops\x1b[2J"
op q kind=add flops=100
op "o\x0ap\x1b[2J" kind=add flops=100
buffer "b\x0a" size=512 start=0 end=1
use "b\x0a" op=0 write=512
use "b\x0a" op=1 read=512
buffer c size=64 start=1 end=1
use c op=1 write=64
WL
sed -e 's/"o\\x0ap\\x1b\[2J"/o/' -e 's/"ops\\x1b\[2J"/ops/' "$T/ctl_ops.wl" >"$T/plain_ops.wl"
"$MB" show "$T/plain_ops.wl" >"$T/plain_show" || fail "show plain_ops.wl: $(cat "$T/plain_show")"
clean_out "$(wc -l <"$T/plain_show")" "$MB" show "$T/ctl_ops.wl"
outhas "(op 'o\x0ap\x1b[2J')"
# check, solve and play print the workload's name
printf 'buffer,offset\n"x\ny\033[31m",0\nz,512\n' >"$T/ctl_ok.csv"
clean_out 6 "$MB" check "$T/ctl.wl" "$T/ctl_ok.csv" --hardware edge-npu
outhas 'workload   ctl\x0a\x1b[2Jname on edge-npu'
"$MB" solve "$T/plain.wl" --solver heuristic --hardware edge-npu >"$T/plain_solve" ||
  fail "solve plain.wl"
clean_out "$(wc -l <"$T/plain_solve")" "$MB" solve "$T/ctl.wl" --solver heuristic --hardware edge-npu
outhas 'workload  ctl\x0a\x1b[2Jname (2 buffers'
"$MB" play "$T/plain_ops.wl" --hardware edge-npu >"$T/plain_play" || fail "play plain_ops.wl"
clean_out "$(wc -l <"$T/plain_play")" "$MB" play "$T/ctl_ops.wl" --hardware edge-npu
outhas 'workload ops\x1b[2J: 2 buffers'
# list: a catalogue entry whose source path holds ESC and DEL
printf 'name kind source args hardware capacity split tags\nctl native data/x\033[2J\177name.wl - edge-npu profile train a,b\n' >"$T/ctl_cat.txt"
clean_out 3 "$MB" list --catalogue "$T/ctl_cat.txt"
outhas 'data/x\x1b[2J'

# ---- other input formats, when the external data is present ----
if [ -f "$DATA/minimalloc/input.12.csv" ]; then
  expect 0 "$MB" show "$DATA/minimalloc/input.12.csv"
  has "workload        input.12"
fi
if [ -f "$DATA/hlo/mlp_pt_xla.hlo" ]; then
  expect 0 "$MB" show "$DATA/hlo/mlp_pt_xla.hlo"
  has "T_slow"
fi

# times the cost model cannot represent are refused by name, not printed as negative numbers
sed 's/^op     dot2  kind=dot     flops=1073741824/op     dot2  kind=dot     flops=1e30/' \
  "$S/mlp_tiny.wl" >"$T/huge.wl"
grep -q "flops=1e30" "$T/huge.wl" || fail "could not make huge.wl"
for cmd in show solve; do
  extra=()
  [ "$cmd" = solve ] && extra=(--solver heuristic)
  expect 2 "$MB" "$cmd" "$T/huge.wl" "${extra[@]}"
  has "$T/huge.wl: workload 'mlp_tiny' on hardware"
  has "op 'dot2' (index 3 of 4 ops)"
  has "beyond the cost model's range of 2^62 ps"
done
# an op-less workload whose benefits pass its all-slow time would time some placements below
# zero: refused, naming the buffer where the sum passes it
sed 's/^slow_time_ps 100$/slow_time_ps 55/' "$T/awkward.wl" >"$T/negative.wl"
grep -q "^slow_time_ps 55" "$T/negative.wl" || fail "could not make negative.wl"
for cmd in show solve; do
  extra=()
  [ "$cmd" = solve ] && extra=(--solver greedy)
  expect 2 "$MB" "$cmd" "$T/negative.wl" "${extra[@]}" --hardware edge-npu
  has "workload 'awkward': buffer 'plain' (index 5 of 6)"
  has "more than the all-slow time slow_time_ps 55 ps"
done

if [ "$fails" -gt 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "show_check: all checks passed"
