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
expect 2 "fifo\.wl" "${T[@]}" "$MB" show "$TMP/fifo.wl"
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
printf 'mallocbench-workload 1\nname w\x00x\n' >"$TMP/nul.wl"
expect 2 "nul\.wl:2: NUL byte: not a text file" "${T[@]}" "$MB" show "$TMP/nul.wl"
printf 'U\n1\x00 2\n' >"$TMP/nul_at.txt"
expect 2 "nul_at\.txt:2: NUL byte: not a text file" \
  "${T[@]}" "$MB" generate alphatensor "$TMP/nul_at.txt" --n 64 -o "$TMP/nul_at.wl"
printf 'name kind source args hardware capacity split tags\n# a\x00\n' >"$TMP/nul_cat.txt"
expect 2 "nul_cat\.txt:2: NUL byte: not a text file" "${T[@]}" "$MB" list --catalogue "$TMP/nul_cat.txt"
printf 'buffer,offset\n# a\x00\n' >"$TMP/nul_a.csv"
expect 2 "nul_a\.csv:2: NUL byte: not a text file" \
  "${T[@]}" "$MB" check datasets/samples/mlp_tiny.wl "$TMP/nul_a.csv"
# a directory where export writes a CSV: refused, naming it, and the other CSVs are whole (the
# workloads table's writer used to close an unopened stream here)
"$MB" run --catalogue <(printf 'name kind source args hardware capacity split tags\nm native %s - tpu-v4i 2MiB test q\n' "$PWD/datasets/samples/mlp_tiny.wl") \
  --workloads . --solvers heuristic --no-progress --out "$TMP/r.h5" >/dev/null 2>"$TMP/err" ||
  fail "run: $(cat "$TMP/err")"
mkdir -p "$TMP/csv/workloads.csv"
expect 2 "workloads\.csv: exists and is not a regular file \(a directory\)" \
  "${T[@]}" "$MB" export "$TMP/r.h5" --csv "$TMP/csv"
ls "$TMP/csv" | grep -q 'tmp' && fail "export left a temporary file: $(ls "$TMP/csv")"

# an output that is also an input is refused before any work, and the input is left as it was
cp datasets/samples/mlp_tiny.wl "$TMP/w.wl"
printf 'id,lower,upper,size\n0,0,3,4\n' >"$TMP/p.1024.csv"
printf 'not an agent\n' >"$TMP/a.h5"
printf 'name kind source args hardware capacity split tags\n' >"$TMP/c.txt"
for f in w.wl p.1024.csv a.h5 c.txt r.h5; do cp "$TMP/$f" "$TMP/$f.orig"; done
expect 2 "solve: --out $TMP/w\.wl: is also the WORKLOAD" \
  "${T[@]}" "$MB" solve "$TMP/w.wl" --solver heuristic --out "$TMP/w.wl"
expect 2 "solve: --out $TMP/a\.h5: is also the --agent checkpoint" \
  "${T[@]}" "$MB" solve "$TMP/w.wl" --solver mallocmuzero --agent "$TMP/a.h5" --out "$TMP/a.h5"
expect 2 "play: --out $TMP/w\.wl: is also the WORKLOAD" \
  "${T[@]}" "$MB" play "$TMP/w.wl" --out "$TMP/w.wl"
expect 2 "pack: --out $TMP/p\.1024\.csv: is also the input" \
  "${T[@]}" "$MB" pack "$TMP/p.1024.csv" --out "$TMP/p.1024.csv"
expect 2 "run: --out $TMP/c\.txt: is also the --catalogue file" \
  "${T[@]}" "$MB" run --catalogue "$TMP/c.txt" --out "$TMP/c.txt" --force
expect 2 "report: --md $TMP/r\.h5: is also the results FILE" \
  "${T[@]}" "$MB" report "$TMP/r.h5" --md "$TMP/r.h5" --tex-dir "$TMP/tex"
expect 2 "--solution '$TMP/g\.wl' and -o '$TMP/g\.wl' name the same file" \
  "${T[@]}" "$MB" generate packing --buffers 5 --solution "$TMP/g.wl" -o "$TMP/g.wl"
for f in w.wl p.1024.csv a.h5 c.txt r.h5; do
  cmp -s "$TMP/$f" "$TMP/$f.orig" || fail "a refused command changed its input $f"
done
[ -e "$TMP/g.wl" ] && fail "generate wrote a refused output"
# a zero budget is refused by solve as by run (it stopped at once, or meant the default)
expect 2 "solve: --budget '0': expected a number in \(0, 1e\+09\]" \
  "${T[@]}" "$MB" solve "$TMP/w.wl" --solver greedy --budget 0
echo "special_files: all checks passed"
