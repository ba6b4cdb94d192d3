#!/usr/bin/env bash
# Bad input and bad environments for run/verify/export/summary: each gives one clear message
# and a non-zero exit, never a crash, and never damages results already stored.
# Usage: run_errors.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: run_errors.sh MALLOCBENCH_BINARY}
SRC=$(pwd)
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"

cat >"$TMP/cat.txt" <<CAT
name kind source args hardware capacity split tags
mlp_tiny native $SRC/datasets/samples/mlp_tiny.wl - tpu-v4i 2MiB test quick
attention native $SRC/datasets/samples/attention_block.wl - tpu-v4i 4MiB test quick
CAT
OPTS=(--catalogue "$TMP/cat.txt" --workloads . --solvers heuristic,greedy --budget 0.05
      --no-progress)

"$MB" run "${OPTS[@]}" --out "$TMP/good.h5" >/dev/null 2>"$TMP/err" || fail "good run: $(cat "$TMP/err")"
cp "$TMP/good.h5" "$TMP/good.copy"

# an existing --out is never replaced without --force, and is not called this run's results
expect 2 "exists.*--resume.*--force" "$MB" run "${OPTS[@]}" --out "$TMP/good.h5"
cmp -s "$TMP/good.h5" "$TMP/good.copy" || fail "an existing file was modified"
! grep -q "finished so far" "$TMP/err" || fail "a run that wrote nothing pointed at another file"

# The default name, results/<profile>-<stamp>.h5, is taken when a run starts in the same second
# as another: this run gets <stamp>-2.h5 and the other's file is left alone. The names of the
# next seconds are taken too, so that the test does not depend on the clock's second. They count
# from one reading of the clock: one `date` per name would leave a gap when the loop crosses a
# second (the name of that second was missed once, and the run took it).
mkdir -p "$TMP/home/results"
ln -s "$SRC/datasets" "$TMP/home/datasets" # MALLOCBENCH_HOME also locates the hardware profiles
now=$(date -u +%s)
for dt in 0 1 2 3 4 5; do
  echo "another run's file" >"$TMP/home/results/quick-$(date -u -d "@$((now + dt))" +%Y%m%d-%H%M%S).h5"
done
MALLOCBENCH_HOME="$TMP/home" "$MB" run "${OPTS[@]}" >"$TMP/out" 2>"$TMP/err" ||
  fail "a run whose default name was taken failed: $(cat "$TMP/err")"
made=$(sed -n 's/^results: //p' "$TMP/out")
case "$made" in
  "$TMP/home/results/quick-"*-2.h5) ;;
  *) fail "a run whose default name was taken wrote '$made', expected a -2 suffix" ;;
esac
[ "$(readlink "$TMP/home/results/latest.h5")" = "$(basename "$made")" ] ||
  fail "latest.h5 does not point at $made"
"$MB" verify "$made" >/dev/null 2>"$TMP/err" || fail "the suffixed file does not verify: $(cat "$TMP/err")"
for f in "$TMP/home/results/quick-"*.h5; do
  [ "$f" = "$made" ] || grep -q "another run's file" "$f" || fail "$f was overwritten"
done
# The command line is stored shell-quoted for provenance: an argument made of quotes needs four
# bytes per character (the quoting once under-allocated for it: a heap overflow under ASan), and
# the stored line, run through the shell again, gives back the same arguments.
QUOTES=$(printf "'%.0s" {1..100})
"$MB" run "${OPTS[@]}" --workloads "mlp_tiny|$QUOTES" --out "$TMP/quoted.h5" >/dev/null \
  2>"$TMP/err" || fail "run with a quoted argument: $(cat "$TMP/err")"
stored=$(h5dump -a /command_line "$TMP/quoted.h5" | sed -n 's/^ *(0): "\(.*\)"$/\1/p' |
  sed 's/\\\\/\\/g; s/\\"/"/g')
eval "set -- $stored"
[ "$1" = mallocbench ] && [ "$2" = run ] || fail "stored command line: '$stored'"
found=0
for arg in "$@"; do [ "$arg" = "mlp_tiny|$QUOTES" ] && found=1; done
[ "$found" = 1 ] || fail "the quoted argument did not round-trip: '$stored'"
# --out's missing directories are made (as plot and report make theirs); a place that cannot
# hold them (below a regular file) is an error naming the file
"$MB" run "${OPTS[@]}" --out "$TMP/new/dir/x.h5" >/dev/null 2>"$TMP/err" ||
  fail "run into a new directory: $(cat "$TMP/err")"
"$MB" verify "$TMP/new/dir/x.h5" >/dev/null || fail "the run into a new directory does not verify"
expect 2 "^mallocbench run: $TMP/good.copy/x.h5: cannot create the results file: Not a directory" \
  "$MB" run "${OPTS[@]}" --out "$TMP/good.copy/x.h5"
# bad options
expect 2 "unknown option" "$MB" run --frobnicate
expect 2 "--seeds '0'" "$MB" run "${OPTS[@]}" --seeds 0 --out "$TMP/x.h5"
expect 2 "--jobs 'two'" "$MB" run "${OPTS[@]}" --jobs two --out "$TMP/x.h5"
expect 2 "--budget" "$MB" run "${OPTS[@]}" --budget -1 --out "$TMP/x.h5"
expect 2 "--profile 'medium'" "$MB" run "${OPTS[@]}" --profile medium --out "$TMP/x.h5"
expect 2 "unknown solver 'nosuch'" "$MB" run "${OPTS[@]}" --solvers heuristic,nosuch --out "$TMP/x.h5"
expect 2 "--solvers '': expected a comma-separated list of solver names" \
  "$MB" run "${OPTS[@]}" --solvers '' --out "$TMP/x.h5"
expect 2 "--hardware ',': expected a comma-separated list of hardware profiles" \
  "$MB" run "${OPTS[@]}" --hardware , --out "$TMP/x.h5"
expect 2 "--workloads .*column 2: missing closing parenthesis" "$MB" run "${OPTS[@]}" --workloads '(' --out "$TMP/x.h5"
# mallocMuZero's evaluation options: each bad value named, exit 2, no file
for bad in "--simulations 0" "--simulations -3" "--simulations many" "--simulations 4.5" \
  "--c-scale 0" "--c-scale -1" "--c-scale nan" "--c-scale inf" "--c-scale 2x" \
  "--finetune -1" "--finetune inf" "--finetune soon" "--finetune-steps -2" \
  "--finetune-steps many" "--leaf-rollout -1" "--leaf-rollout 100001" "--leaf-rollout deep" \
  "--search mcts" "--search PUCT"; do
  read -r opt val <<<"$bad"
  expect 2 "$opt '$val': expected" "$MB" run "${OPTS[@]}" "$opt" "$val" --out "$TMP/x.h5"
  expect 2 "$opt '$val': expected" "$MB" run "${OPTS[@]}" "$opt=$val" --out "$TMP/x.h5"
done
# run and solve share the solver's limits (solver.h)
expect 2 "--finetune-steps '100000001': expected an integer in 0\\.\\.100000000\$" \
  "$MB" run "${OPTS[@]}" --finetune-steps 100000001 --out "$TMP/x.h5"
expect 2 "--finetune-steps '100000001': expected an integer in 0\\.\\.100000000\$" \
  "$MB" solve --solver mallocmuzero --finetune-steps 100000001 "$TMP/cat.txt"
expect 2 "--simulations '1000001': expected an integer in 1\\.\\.1000000\$" \
  "$MB" run "${OPTS[@]}" --simulations 1000001 --out "$TMP/x.h5"
expect 2 "--finetune needs a value" "$MB" run "${OPTS[@]}" --out "$TMP/x.h5" --finetune
expect 2 "takes the plan" "$MB" run --resume "$TMP/good.h5" --seeds 2
for opt in "--simulations 4" "--c-scale 1" "--finetune 0" "--finetune-steps 10" "--leaf-rollout 8" \
  "--search puct"; do
  expect 2 "takes the plan.*simulations, c-scale, leaf-rollout, search, finetune" "$MB" run --resume "$TMP/good.h5" $opt
done
cmp -s "$TMP/good.h5" "$TMP/good.copy" || fail "a refused --resume modified the file"
expect 2 "cannot open" "$MB" run --resume "$TMP/nothing.h5"
[ ! -e "$TMP/x.h5" ] || fail "a failed run left a file behind"

# --split keeps one split's entries and stores them as an exact name list (plan, resume)
sed 's/^mlp_tiny \(.*\) test quick$/mlp_tiny \1 train quick/' "$TMP/cat.txt" >"$TMP/cat_split.txt"
grep -q '^mlp_tiny .* train quick$' "$TMP/cat_split.txt" || fail "test setup: no train entry"
"$MB" run --catalogue "$TMP/cat_split.txt" --split train --solvers heuristic --no-progress \
  --out "$TMP/split.h5" >/dev/null 2>"$TMP/err" || fail "--split train: $(cat "$TMP/err")"
h5dump -a /run_workloads "$TMP/split.h5" | grep -qF '"^(mlp_tiny)$"' ||
  fail "--split train: stored selection: $(h5dump -a /run_workloads "$TMP/split.h5")"
"$MB" export "$TMP/split.h5" --csv "$TMP/split" >/dev/null 2>"$TMP/err" || fail "export: $(cat "$TMP/err")"
grep -q attention "$TMP/split/results.csv" && fail "--split train ran a test entry"
grep -q mlp_tiny "$TMP/split/results.csv" || fail "--split train did not run its entry"
# --csv=DIR is --csv DIR
"$MB" export "$TMP/split.h5" --csv="$TMP/split-eq" >/dev/null 2>"$TMP/err" || fail "export --csv=: $(cat "$TMP/err")"
diff -r "$TMP/split" "$TMP/split-eq" >/dev/null || fail "export --csv=DIR differs from --csv DIR"
expect 2 "--split 'valid': expected train or test" "$MB" run "${OPTS[@]}" --split valid --out "$TMP/x.h5"
expect 2 "--split train: no selected catalogue entry is in split 'train'" \
  "$MB" run "${OPTS[@]}" --split train --out "$TMP/x.h5"
expect 2 "takes the plan" "$MB" run --resume "$TMP/split.h5" --split test
[ ! -e "$TMP/x.h5" ] || fail "a failed --split run left a file behind"

# corrupt inputs: the catalogue, and a workload it names
printf 'name kind source args hardware capacity split tags\nbroken native x.wl - tpu-v4i 12XB test -\n' >"$TMP/badcat.txt"
expect 2 "badcat.txt:2" "$MB" run --catalogue "$TMP/badcat.txt" --workloads . --out "$TMP/x.h5"
printf 'mallocbench-workload 1\nname bad\nop a kind=dot flops=-5\n' >"$TMP/bad.wl"
printf 'name kind source args hardware capacity split tags\nbad native %s - tpu-v4i 1MiB test -\n' \
  "$TMP/bad.wl" >"$TMP/cat2.txt"
expect 2 "bad.wl:3" "$MB" run --catalogue "$TMP/cat2.txt" --workloads . --out "$TMP/x.h5"
[ ! -e "$TMP/x.h5" ] || fail "a run with bad input created its output file"

# corrupt results files for the readers
printf 'not an hdf5 file\n' >"$TMP/junk.h5"
for cmd in verify summary; do
  expect 2 "junk.h5: not an HDF5 file" "$MB" $cmd "$TMP/junk.h5"
done
expect 2 "junk.h5: not an HDF5 file" "$MB" export "$TMP/junk.h5" --csv "$TMP/csv"
head -c 3000 "$TMP/good.h5" >"$TMP/cut.h5"
expect 2 "cut.h5" "$MB" verify "$TMP/cut.h5"
expect 2 "usage" "$MB" export "$TMP/good.h5"

# a full disk (file size limit): a clear error, what was stored stays resumable
(
  ulimit -f 160 # KiB
  trap '' XFSZ  # writes past the limit then fail with EFBIG instead of killing the process
  exec "$MB" run "${OPTS[@]}" --seeds 30 --out "$TMP/full.h5"
) >/dev/null 2>"$TMP/err"
st=$?
[ $st = 2 ] || fail "run on a full disk exited $st: $(cat "$TMP/err")"
grep -qE "full.h5|File too large" "$TMP/err" || fail "full disk message: $(cat "$TMP/err")"
"$MB" run --resume "$TMP/full.h5" --no-progress >/dev/null 2>"$TMP/err" ||
  fail "resume after the disk filled: $(cat "$TMP/err")"
"$MB" verify "$TMP/full.h5" >/dev/null || fail "verify after the disk filled"

# A run whose solvers need an agent checks it before solving anything: a missing one fails the
# run at once (exit 2, no file), with the command that trains it (it used to store one 'error'
# row per solve after every other solve, and its hint lacked the --steps that train requires).
expect 2 "^mallocbench run: mallocmuzero: agent checkpoint '$TMP/home/results/agents/default\.h5' not found: pass --agent FILE, or train the default agent with \`scripts/pinned-blas\.sh build/mallocbench train --synthetic --split train --steps 42000 --jobs 1 --seed 0 --out $TMP/home/results/agents/default\.h5\` from the source tree" \
  env MALLOCBENCH_HOME="$TMP/home" "$MB" run "${OPTS[@]}" --solvers heuristic,mallocmuzero \
  --out "$TMP/noagent.h5"
[ "$(wc -l <"$TMP/err")" = 1 ] || fail "a missing agent: more than one line: $(cat "$TMP/err")"
[ -e "$TMP/noagent.h5" ] && fail "a run without its agent wrote $TMP/noagent.h5"
# a file that is not an agent is refused the same way, before anything is solved
expect 2 "^mallocbench run: mallocmuzero-exact: .*cat\.txt" \
  "$MB" run "${OPTS[@]}" --solvers heuristic,mallocmuzero-exact --agent "$TMP/cat.txt" \
  --out "$TMP/notagent.h5"
[ -e "$TMP/notagent.h5" ] && fail "a run with a bad agent wrote $TMP/notagent.h5"

# A relative --agent is stored absolute, so that --resume works from any directory (it used to
# be stored as typed, and a resume from elsewhere blamed an --agent flag it was not given).
"$MB" train --synthetic --latent 16 --actions 8 --synth-min 16 --synth-max 32 --batch 16 -q \
  --steps 10 --out "$TMP/agent.h5" >/dev/null 2>"$TMP/err" || fail "train: $(cat "$TMP/err")"
(cd "$TMP" && "$MB" run "${OPTS[@]}" --solvers heuristic,mallocmuzero --simulations 2 \
  --agent agent.h5 --out "$TMP/relative.h5" >/dev/null 2>"$TMP/err") ||
  fail "run with a relative --agent: $(cat "$TMP/err")"
stored=$(h5dump -a /run_agent "$TMP/relative.h5" | sed -n 's/^ *(0): "\(.*\)"$/\1/p')
[ "$stored" = "$TMP/agent.h5" ] || fail "run_agent stored as '$stored', expected $TMP/agent.h5"
(cd / && "$MB" run --resume "$TMP/relative.h5" --no-progress >/dev/null 2>"$TMP/err") ||
  fail "resume from another directory: $(cat "$TMP/err")"

# a catalogue of one's own run in the default (quick) profile: none of its entries is tagged
# 'quick' nor in the fixed list, and the error says so (it blamed a --workloads never given)
sed 's/ quick$/ mine/' "$TMP/cat.txt" >"$TMP/cat_untagged.txt"
expect 2 "^mallocbench run: no workload to run: the quick profile takes $TMP/cat_untagged\.txt's entries tagged 'quick', or without any its fixed list of names, and none is there: tag entries 'quick', or give --profile full or --workloads REGEX\$" \
  "$MB" run --catalogue "$TMP/cat_untagged.txt" --solvers heuristic --no-progress --out "$TMP/untagged.h5"
[ -e "$TMP/untagged.h5" ] && fail "a run with no workload wrote $TMP/untagged.h5"

# counts of one are singular ("1 baselines" and "In 1 of these 1 cases ... the other 0" before)
"$MB" run "${OPTS[@]}" --workloads '^mlp_tiny$' --solvers heuristic --seeds 1 --out "$TMP/one.h5" \
  >"$TMP/out" 2>"$TMP/err" || fail "one-workload run: $(cat "$TMP/err")"
grep -q "^run: 2 tasks (1 job + 1 baseline), 2 computed here" "$TMP/out" || fail "one task: $(cat "$TMP/out")"
grep -q "; 0 entries skipped for missing data$" "$TMP/out" || fail "no entry skipped: $(cat "$TMP/out")"
# entries whose data are missing are skipped, each named, and counted: one, then two
mkdir -p "$TMP/no-data"
{
  cat "$TMP/cat.txt"
  echo "gone hlo hlo/not_there.hlo - tpu-v4i 1MiB test quick"
  echo "gone2 hlo hlo/not_there2.hlo - tpu-v4i 1MiB test quick"
} >"$TMP/cat_gone.txt"
for n in 1 2; do
  [ $n = 1 ] && pick='^(mlp_tiny|gone)$' || pick='^(mlp_tiny|gone|gone2)$'
  [ $n = 1 ] && said="1 entry" || said="2 entries"
  "$MB" run "${OPTS[@]}" --catalogue "$TMP/cat_gone.txt" --data "$TMP/no-data" --workloads "$pick" \
    --solvers heuristic --seeds 1 --out "$TMP/gone$n.h5" >"$TMP/out" 2>"$TMP/err" ||
    fail "run with $n entries missing their data: $(cat "$TMP/err")"
  grep -q "^run: 2 tasks (1 job + 1 baseline), 2 computed here, 0 reused; $said skipped for missing data$" \
    "$TMP/out" || fail "$n skipped: $(cat "$TMP/out")"
  [ "$(grep -c "^mallocbench run: skipping gone2\?: workload 'gone2\?': missing data file $TMP/no-data/hlo/not_there2\?\.hlo" "$TMP/err")" = $n ] ||
    fail "$n skipped: not each named: $(cat "$TMP/err")"
done
grep -qx "In this case the heuristic is within 0.001% of the LP bound, so no solver can beat it by more than that." \
  "$TMP/out" || fail "one case at the bound: $(cat "$TMP/out")"

"$MB" verify "$TMP/good.h5" >/dev/null || fail "the good file no longer verifies"
echo "ok"
