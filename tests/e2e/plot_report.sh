#!/usr/bin/env bash
# `mallocbench plot` and `mallocbench report` through the CLI, on a small run of three samples:
# - plot writes each figure in each format asked for, and prints exactly the files it wrote
#   (PNG and SVG checked by their signatures); the memory map can be chosen by workload and
#   solver; a control byte in --out is listed escaped, one path per line (it was printed raw);
# - a memory map asked for and not found (--map-workload, --map-solver), an unknown format, a
#   missing results file, an extra argument and a missing gnuplot each exit 2 with a message
#   that names the cause, and nothing is drawn (before, --map-solver with an unknown solver
#   left the map out and exited 0);
# - report writes the Markdown report and the LaTeX tables, only the ones --format asks for;
#   the report names every workload, links the figures and names the command that wrote it
#   (with its options: it said `mallocbench report FILE`, which writes elsewhere); it lists the
#   files it wrote, one per line, and ends with a summary line on stderr, as plot does (it
#   printed nothing);
# - counts of one are singular: a run of one single-buffer workload draws "1 buffer in fast
#   memory" and reports "The 1 case" (they said "1 buffers", "All 1 cases").
# Usage: plot_report.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: plot_report.sh MALLOCBENCH_BINARY}
SRC=$(pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot not on PATH"; exit 0; }

# every solver has its own colour: the four registered ones theirs, new ones (without an entry in
# plots/common.gp) others by their place in the list, not one shared colour
colors=$(gnuplot -e 'TERMINAL="dumb"; OUT="/dev/null"' \
  -e 'SOLVERS="heuristic greedy mallocmuzero mallocmuzero-exact new_a new_b"' \
  -e 'load "plots/common.gp"; do for [s in SOLVERS] { print solver_color(s) }' 2>&1)
[ "$(printf '%s\n' "$colors" | sort -u | wc -l)" = 6 ] || fail "solver colours not distinct: $colors"

cat >"$TMP/cat.txt" <<CAT
name kind source args hardware capacity split tags
mlp_tiny native $SRC/datasets/samples/mlp_tiny.wl - tpu-v4i 1MiB train quick
attention native $SRC/datasets/samples/attention_block.wl - tpu-v4i 8MiB test quick
conv native $SRC/datasets/samples/conv_block.wl - tpu-v4i 3MiB test quick
CAT
"$MB" run --catalogue "$TMP/cat.txt" --workloads . --solvers heuristic,greedy --budget 0.05 \
  --no-progress --out "$TMP/r.h5" >/dev/null 2>"$TMP/err" || fail "run: $(cat "$TMP/err")"

# ---- plot: every figure, in the formats asked for ----
FIGURES="speedup_per_workload speedup_distribution gap_to_bound walltime_vs_size memory_map"
"$MB" plot "$TMP/r.h5" --out "$TMP/figs" --format png,svg >"$TMP/list" 2>"$TMP/err" ||
  fail "plot: $(cat "$TMP/err")"
for f in $FIGURES; do
  for ext in png svg; do
    grep -qxF "$TMP/figs/$f.$ext" "$TMP/list" || fail "plot did not list $f.$ext: $(cat "$TMP/list")"
    [ -s "$TMP/figs/$f.$ext" ] || fail "$f.$ext missing or empty"
  done
  [ "$(head -c 8 "$TMP/figs/$f.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    fail "$f.png is not a PNG"
  grep -q "<svg" "$TMP/figs/$f.svg" || fail "$f.svg is not an SVG"
done
[ "$(wc -l <"$TMP/list")" = 10 ] || fail "plot listed $(wc -l <"$TMP/list") files, expected 10"
[ "$(ls "$TMP/figs" | wc -l)" = 10 ] || fail "plot wrote $(ls "$TMP/figs")"
# the wall time is this command's own (under 1000 s), not a clock's reading
grep -q "^mallocbench plot: 10 files in [0-9]\{1,3\}\.[0-9][0-9] s (wall)$" "$TMP/err" || fail "plot's summary line: $(cat "$TMP/err")"

"$MB" plot "$TMP/r.h5" --out "$TMP/map" --format png --map-workload attention --map-solver greedy \
  >"$TMP/list" 2>"$TMP/err" || fail "plot --map-workload attention: $(cat "$TMP/err")"
[ -s "$TMP/map/memory_map.png" ] || fail "no memory map for attention"

# a control byte in --out is printed escaped ("\x0d"), so that each listed path stays one line
CR=$(printf '\r')
"$MB" plot "$TMP/r.h5" --out "$TMP/a${CR}b" --format png --map-workload attention --map-solver greedy \
  >"$TMP/list" 2>"$TMP/err" || fail "plot --out with a carriage return: $(cat "$TMP/err")"
[ -s "$TMP/a${CR}b/memory_map.png" ] || fail "plot --out with a carriage return wrote no memory map"
grep -qxF "$TMP/a\x0db/memory_map.png" "$TMP/list" || fail "plot did not list the escaped path: $(od -c "$TMP/list" | head -3)"
grep -q "$CR" "$TMP/list" && fail "plot listed a raw carriage return"

# ---- plot: errors name their cause and draw nothing ----
expect_plot_error() { # MESSAGE_REGEX ARGS...
  local want=$1
  shift
  rm -rf "$TMP/bad"
  "$MB" plot "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  [ "$rc" = 2 ] || fail "plot $*: exit $rc, expected 2"
  grep -qE "$want" "$TMP/err" || fail "plot $*: '$(cat "$TMP/err")' does not match '$want'"
  [ -s "$TMP/out" ] && fail "plot $* listed files: $(cat "$TMP/out")"
  [ -z "$(ls -A "$TMP/bad" 2>/dev/null)" ] || fail "plot $* wrote $(ls "$TMP/bad")"
}
expect_plot_error "^mallocbench plot: --map-workload: no valid non-heuristic result for workload 'nope'$" \
  "$TMP/r.h5" --out "$TMP/bad" --map-workload nope
expect_plot_error "^mallocbench plot: --map-solver: no valid result for solver 'nope' in .*r\.h5 \(solvers: greedy\)$" \
  "$TMP/r.h5" --out "$TMP/bad" --map-solver nope
expect_plot_error "^mallocbench plot: --format: unknown format 'gif' \(expected png, pdf or svg\)$" \
  "$TMP/r.h5" --out "$TMP/bad" --format gif
expect_plot_error "^mallocbench plot: $TMP/none\.h5: cannot open the results file" \
  "$TMP/none.h5" --out "$TMP/bad"
expect_plot_error "^mallocbench plot: one results file only \('$TMP/r\.h5' is extra\)$" \
  "$TMP/r.h5" "$TMP/r.h5" --out "$TMP/bad"
# a figure gnuplot could not write (its output device full: a link to /dev/full) is an error,
# though gnuplot itself exits 0 there
mkdir -p "$TMP/full"
for f in speedup_per_workload speedup_distribution gap_to_bound walltime_vs_size training_curves \
  memory_map; do ln -s /dev/full "$TMP/full/$f.png"; done
"$MB" plot "$TMP/r.h5" --out "$TMP/full" --format png >"$TMP/out" 2>"$TMP/err"
[ $? = 2 ] || fail "plot to a full device: expected exit 2: $(cat "$TMP/err")"
grep -q "^mallocbench plot: $TMP/full/[a-z_]*\.png: gnuplot wrote no figure there" "$TMP/err" ||
  fail "plot to a full device: $(cat "$TMP/err")"
[ -c /dev/full ] || fail "/dev/full is no longer a character device"
rm -rf "$TMP/bad"
PATH=/nonexistent "$MB" plot "$TMP/r.h5" --out "$TMP/bad" >"$TMP/out" 2>"$TMP/err"
[ $? = 2 ] || fail "plot without gnuplot: expected exit 2"
grep -q "gnuplot not found on PATH: install the Debian package gnuplot-nox" "$TMP/err" ||
  fail "plot without gnuplot: $(cat "$TMP/err")"
[ -e "$TMP/bad" ] && fail "plot without gnuplot created its output directory"

# ---- report ----
"$MB" report "$TMP/r.h5" --md "$TMP/R.md" --tex-dir "$TMP/gen" --figures "$TMP/figs" \
  >"$TMP/list" 2>"$TMP/err" || fail "report: $(cat "$TMP/err")"
printf '%s\n' "$TMP/R.md" "$TMP/gen/summary.tex" "$TMP/gen/summary_test.tex" "$TMP/gen/workloads.tex" \
  "$TMP/gen/alphatensor.tex" "$TMP/gen/provenance.tex" "$TMP/gen/macros.tex" >"$TMP/want"
cmp -s "$TMP/want" "$TMP/list" || fail "report listed: $(cat "$TMP/list")"
grep -q "^mallocbench report: 7 files in [0-9]\{1,3\}\.[0-9][0-9] s (wall)$" "$TMP/err" || fail "report's summary line: $(cat "$TMP/err")"
for w in mlp_tiny attention conv; do grep -q "$w" "$TMP/R.md" || fail "the report does not name $w"; done
grep -q "](.*figs/speedup_per_workload.png)" "$TMP/R.md" || fail "the report does not link the figures"
grep -qF "Regenerate with \`mallocbench report $TMP/r.h5 --md $TMP/R.md --tex-dir $TMP/gen --figures $TMP/figs\`." \
  "$TMP/R.md" || fail "the report does not name the command that wrote it: $(sed -n 3p "$TMP/R.md")"
for t in summary summary_test workloads alphatensor provenance macros; do
  [ -s "$TMP/gen/$t.tex" ] || fail "report wrote no $t.tex"
done
"$MB" report "$TMP/r.h5" --format md --md "$TMP/md_only.md" --tex-dir "$TMP/gen_md" \
  >"$TMP/list" 2>"$TMP/err" || fail "report --format md: $(cat "$TMP/err")"
[ -s "$TMP/md_only.md" ] && [ ! -e "$TMP/gen_md" ] || fail "--format md wrote LaTeX tables"
[ "$(cat "$TMP/list")" = "$TMP/md_only.md" ] || fail "report --format md listed: $(cat "$TMP/list")"
grep -q "^mallocbench report: 1 file in [0-9]\{1,3\}\.[0-9][0-9] s (wall)$" "$TMP/err" || fail "report --format md's summary line: $(cat "$TMP/err")"
# a control byte in --md is listed escaped, so that each listed path stays one line
"$MB" report "$TMP/r.h5" --format md --md "$TMP/a${CR}b.md" >"$TMP/list" 2>"$TMP/err" ||
  fail "report --md with a carriage return: $(cat "$TMP/err")"
[ "$(cat "$TMP/list")" = "$TMP/a\x0db.md" ] || fail "report did not list the escaped path: $(od -c "$TMP/list" | head -3)"
"$MB" report "$TMP/r.h5" --format tex --md "$TMP/tex_only.md" --tex-dir "$TMP/gen_tex" \
  >/dev/null 2>"$TMP/err" || fail "report --format tex: $(cat "$TMP/err")"
[ -s "$TMP/gen_tex/summary.tex" ] && [ ! -e "$TMP/tex_only.md" ] || fail "--format tex wrote Markdown"
"$MB" report "$TMP/r.h5" --format doc >/dev/null 2>"$TMP/err"
[ $? = 2 ] && grep -q "^mallocbench report: --format: unknown format 'doc' (expected md or tex)$" "$TMP/err" ||
  fail "report --format doc: $(cat "$TMP/err")"
"$MB" report "$TMP/none.h5" --md "$TMP/x.md" >/dev/null 2>"$TMP/err"
[ $? = 2 ] && grep -q "$TMP/none.h5: cannot open the results file" "$TMP/err" && [ ! -e "$TMP/x.md" ] ||
  fail "report of a missing file: $(cat "$TMP/err")"

# ---- counts of one: one workload with one buffer, which both solvers place ----
cat >"$TMP/one.wl" <<'WL'
mallocbench-workload 1
name one_buffer
source "plot_report.sh: a single buffer, which fits"
schedule     2
slow_time_ps 1000000
buffer b0 size=1024 start=0 end=1 benefit=400000
WL
printf 'name kind source args hardware capacity split tags\none native %s - tpu-v4i 4096 train quick\n' \
  "$TMP/one.wl" >"$TMP/cat1.txt"
"$MB" run --catalogue "$TMP/cat1.txt" --workloads . --solvers heuristic,greedy --budget 0.05 \
  --no-progress --out "$TMP/one.h5" >/dev/null 2>"$TMP/err" || fail "run of one buffer: $(cat "$TMP/err")"
"$MB" plot "$TMP/one.h5" --out "$TMP/one" --format svg >/dev/null 2>"$TMP/err" ||
  fail "plot of one buffer: $(cat "$TMP/err")"
grep -qF ">heuristic: 1 buffer in fast memory<" "$TMP/one/memory_map.svg" ||
  fail "memory map title: $(grep -o '>heuristic:[^<]*<' "$TMP/one/memory_map.svg")"
grep -qF ">greedy (seed 0): 1 buffer, 1.000x over heuristic<" "$TMP/one/memory_map.svg" ||
  fail "memory map title: $(grep -o '>greedy[^<]*<' "$TMP/one/memory_map.svg")"
"$MB" report "$TMP/one.h5" --format md --md "$TMP/one.md" >/dev/null 2>"$TMP/err" ||
  fail "report of one case: $(cat "$TMP/err")"
grep -qF "The 1 case: 1 of the train split, 0 of the test split." "$TMP/one.md" ||
  fail "report of one case: $(grep -o '[A-Za-z]* 1 case[^.]*' "$TMP/one.md")"
echo "plot_report: ok"
