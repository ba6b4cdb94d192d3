#!/usr/bin/env bash
# Inputs that are not regular text files: a directory, a FIFO without a writer, a NUL byte in a
# text format. Each command refuses them with exit 2 and a message that says what is wrong,
# naming the file (and for a NUL byte its line); none waits forever on a FIFO (each command runs
# under a 20 s timeout). Before: a directory read as "Input/output error", show, verify and
# summary of a FIFO blocked until killed, and a NUL byte in a hardware profile read as "missing
# key 'capacity'", in a buffer CSV as an invalid valid-looking number, in HLO text not at all.
# Usage: special_files.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: special_files.sh MALLOCBENCH_BINARY}
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"
T=(timeout 20)

# a directory where a file is expected
mkdir "$TMP/dir.wl" "$TMP/dir.h5"
expect 2 "dir\.wl: cannot read: Is a directory" "${T[@]}" "$MB" show "$TMP/dir.wl"
expect 2 "dir\.h5: cannot open: not a regular file \(a directory\)" "${T[@]}" "$MB" verify "$TMP/dir.h5"
expect 2 "dir\.h5: cannot open: not a regular file \(a directory\)" \
  "${T[@]}" "$MB" solve datasets/samples/mlp_tiny.wl --solver mallocmuzero --agent "$TMP/dir.h5"

# a FIFO nobody writes to: no command may block on it
mkfifo "$TMP/fifo.wl" "$TMP/fifo.h5"
# (show of a FIFO named like a workload: with the cmd_show.c change, below)
expect 2 "fifo\.h5: cannot open: not a regular file \(a FIFO\)" "${T[@]}" "$MB" verify "$TMP/fifo.h5"
expect 2 "fifo\.h5: cannot open: not a regular file \(a FIFO\)" "${T[@]}" "$MB" summary "$TMP/fifo.h5"
expect 2 "fifo\.h5: cannot open: not a regular file \(a FIFO\)" "${T[@]}" "$MB" export "$TMP/fifo.h5" --csv "$TMP/csv"
expect 2 "fifo\.h5: cannot open: not a regular file \(a FIFO\)" \
  "${T[@]}" "$MB" solve datasets/samples/mlp_tiny.wl --solver mallocmuzero --agent "$TMP/fifo.h5"
# a pipe with a writer is still read (process substitution: /dev/fd/N)
"${T[@]}" "$MB" show <(cat datasets/samples/mlp_tiny.wl) >"$TMP/out" 2>&1 ||
  fail "show of a pipe: $(cat "$TMP/out")"
grep -q "^workload        mlp_tiny" "$TMP/out" || fail "show of a pipe: $(cat "$TMP/out")"

# a NUL byte in a text format: file:line and what it is
sed 's/^name .*/name = tpu\x00v4i/' datasets/hardware/tpu-v4i.txt >"$TMP/nul_hw.txt"
line=$(grep -n '^name' datasets/hardware/tpu-v4i.txt | cut -d: -f1)
expect 2 "nul_hw\.txt:$line: NUL byte: not a text file" \
  "${T[@]}" "$MB" show datasets/samples/mlp_tiny.wl --hardware "$TMP/nul_hw.txt"
printf 'id,lower,upper,size\n0,0,3,4\x00\n' >"$TMP/nul.1024.csv"
expect 2 "nul\.1024\.csv:2: NUL byte: not a text file" "${T[@]}" "$MB" show "$TMP/nul.1024.csv"
printf 'HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\x00\n}\n' >"$TMP/nul.hlo"
expect 2 "nul\.hlo:4: NUL byte: not a text file" "${T[@]}" "$MB" show "$TMP/nul.hlo"
# a directory where export writes a CSV: refused, naming it, and the other CSVs are whole (the
# workloads table's writer used to close an unopened stream here)
"$MB" run --catalogue <(printf 'name kind source args hardware capacity split tags\nm native %s - tpu-v4i 2MiB test q\n' "$PWD/datasets/samples/mlp_tiny.wl") \
  --workloads . --solvers heuristic --no-progress --out "$TMP/r.h5" >/dev/null 2>"$TMP/err" ||
  fail "run: $(cat "$TMP/err")"
mkdir -p "$TMP/csv/workloads.csv"
expect 2 "workloads\.csv: exists and is not a regular file \(a directory\)" \
  "${T[@]}" "$MB" export "$TMP/r.h5" --csv "$TMP/csv"
ls "$TMP/csv" | grep -q 'tmp' && fail "export left a temporary file: $(ls "$TMP/csv")"
echo "special_files: all checks passed"
