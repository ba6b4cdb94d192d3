#!/usr/bin/env bash
# The options that define a training run, through real checkpoints: a run given a value other
# than the default for every stored option stores each as given (`show`'s "run options" line,
# in the order of train's option table); a resume in place that gives none of them continues
# with all of them (the line it stores again is the same, --steps aside), one that gives them all
# again with the same values (in other spellings too: 1e-4, 017) trains, and one that gives one
# other value is refused naming it. Before train's option table, a stored option that the writer
# did not know was stored as "--flag 0", and a resume applied 0. The options fill the 8,191
# characters a checkpoint stores, to the character. tests/test_train_options.c checks the table
# itself, entry by entry.
# Usage: train_options.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: train_options.sh MALLOCBENCH_BINARY}
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"

"$MB" generate packing --buffers 24 --length 64 --seed 4 -o "$TMP/p.wl" >/dev/null ||
  fail "generate packing"
{
  echo "name kind source args hardware capacity split tags"
  echo "p-half native $TMP/p.wl - tpu-v4i 512KiB train packing"
  echo "p-full native $TMP/p.wl - tpu-v4i 1MiB test packing"
} >"$TMP/cat.txt"

# every stored option, none at its default (the network's size is not stored: a checkpoint
# holds its networks)
STORED=(--workloads 'p-h.*' --synthetic --catalogue "$TMP/cat.txt" --max-buffers 500
  --synth-min 16 --synth-max 32 --synth-packing 0.25 --validate p-full
  --validate-catalogue "$TMP/cat.txt" --seed 17 --lr 0.002 --lr-end 0.0001 --batch 8 --unroll 3
  --td-steps 0 --value-weight 0.5 --consistency 0.75 --siblings 0.5 --sibling-depth 2
  --sibling-from search --root-gradient 1 --replay 1000 --ratio 2.5 --priority 0.6
  --priority-beta 0.3 --actors 3 --segment 20 --segment-start uniform --search puct
  --self-play exact --simulations 4
  --leaf-rollout 2 --c-scale 0.3 --q-range 0.01 --freeze reward --steps 2)
# the same values in other spellings
RESPELT=(--workloads 'p-h.*' --synthetic --max-buffers 0500 --synth-min 16 --synth-max 32
  --synth-packing .25 --validate p-full --seed 017 --lr 2e-3 --lr-end 1e-4 --batch 8 --unroll 3
  --td-steps 0 --value-weight 0.50 --consistency 0.75 --siblings 5e-1 --sibling-depth 2
  --sibling-from search --root-gradient 1.0 --replay 1000 --ratio 2.5 --priority 0.6
  --priority-beta 0.3 --actors 3 --segment 20 --segment-start uniform --search puct
  --self-play exact --simulations 4
  --leaf-rollout 2 --c-scale 0.3 --q-range 1e-2 --freeze reward)
NET=(--latent 16 --actions 8 -q)
run_options() { "$MB" show "$1" | sed -n 's/^run options      //p'; }
# "--flag value" pairs of the stored options, one a line, for a message that names the missing
pairs() { printf '%s\n' "${1// --/$'\n'--}"; }

"$MB" train "${NET[@]}" "${STORED[@]}" --out "$TMP/a.h5" >"$TMP/out" 2>"$TMP/err" ||
  fail "train with every stored option: $(cat "$TMP/err")"
want="--workloads 'p-h.*' --synthetic --catalogue $TMP/cat.txt --max-buffers 500 --synth-min 16 \
--synth-max 32 --synth-packing 0.25 --validate p-full --validate-catalogue $TMP/cat.txt --seed 17 \
--lr 0.002 --lr-end 0.0001 --batch 8 --unroll 3 --td-steps 0 --value-weight 0.5 --consistency 0.75 \
--siblings 0.5 --sibling-depth 2 --sibling-from search --root-gradient 1 --replay 1000 \
--ratio 2.5 --priority 0.6 --priority-beta 0.3 --actors 3 --segment 20 --segment-start uniform \
--search puct --self-play exact --simulations 4 --leaf-rollout 2 --c-scale 0.3 --q-range 0.01 \
--freeze reward"
got=$(run_options "$TMP/a.h5")
[ "$got" = "$want --steps 2" ] ||
  fail "stored options: $(diff <(pairs "$want --steps 2") <(pairs "$got") | grep '^[<>]')"

# a resume in place without the options continues the run with every one of them
"$MB" train -q --steps 3 --resume "$TMP/a.h5" --out "$TMP/a.h5" >"$TMP/out" 2>"$TMP/err" ||
  fail "resume without options: $(cat "$TMP/err")"
grep -q "in total: 3 updates" "$TMP/out" || fail "resume: $(cat "$TMP/out")"
# (its new step limit changes --lr-end's schedule, planned over 2 updates: it says so)
grep -q "warning: --steps 3: $TMP/a.h5's run was planned for 2 updates, over which --lr-end decays" \
  "$TMP/err" || fail "resume with other --steps: no schedule warning: $(cat "$TMP/err")"
got=$(run_options "$TMP/a.h5")
[ "$got" = "$want --steps 3" ] ||
  fail "options after a resume: $(diff <(pairs "$want --steps 3") <(pairs "$got") | grep '^[<>]')"
# ... and with all of them given again, spelt otherwise: the same values, no conflict (--data
# is not part of the run: it may change, as train --help says)
"$MB" train "${RESPELT[@]}" -q --steps 4 --data "$TMP" --resume "$TMP/a.h5" --out "$TMP/a.h5" \
  >"$TMP/out" 2>"$TMP/err" || fail "resume with the same options: $(cat "$TMP/err")"
[ "$(run_options "$TMP/a.h5")" = "$want --steps 4" ] || fail "options: $(run_options "$TMP/a.h5")"
# ... and one other value is refused, naming the option and both values, the file untouched
cp "$TMP/a.h5" "$TMP/a.before"
expect 2 "--resume $TMP/a.h5: --priority-beta: given 0.4, the run's 0.3 \(a resumed run keeps" \
  "$MB" train -q --priority-beta 0.4 --steps 5 --resume "$TMP/a.h5" --out "$TMP/a.h5"
cmp -s "$TMP/a.h5" "$TMP/a.before" || fail "a refused resume changed the checkpoint"
# a run branched off to another file takes the others and says which it changes
"$MB" train --priority-beta 0.4 --steps 5 --resume "$TMP/a.h5" --out "$TMP/b.h5" >"$TMP/out" \
  2>"$TMP/err" || fail "branch: $(cat "$TMP/err")"
grep -q "train: --priority-beta: given 0.4, $TMP/a.h5's run had 0.3 (a new run branched off it)" \
  "$TMP/err" || fail "branch: $(cat "$TMP/err")"
[ "$(run_options "$TMP/b.h5")" = "${want/--priority-beta 0.3/--priority-beta 0.4} --steps 5" ] ||
  fail "options of the branch: $(run_options "$TMP/b.h5")"

# --out in the current folder (no slash), and in folders that do not exist yet; --flag=VALUE
# for a value, never for a switch; the plan line says "uniform replay" without --priority
MB_ABS=$(cd "$(dirname "$MB")" && pwd)/$(basename "$MB")
(cd "$TMP" && "$MB_ABS" train --latent 16 --actions 8 --workloads 'p-h.*' --catalogue "$TMP/cat.txt" \
  --steps=2 --out here.h5 >out 2>err) || fail "--out here.h5: $(cat "$TMP/err")"
grep -q "in total: 2 updates" "$TMP/out" && [ -f "$TMP/here.h5" ] || fail "--out here.h5: $(cat "$TMP/out")"
grep -q " 8 simulations; uniform replay of 50000 transitions; out here.h5$" "$TMP/err" ||
  fail "plan line: $(head -1 "$TMP/err")"
# the replay holds two trajectories of --segment decisions, each with its final observation: 42
# rows for --segment 20; a smaller --replay is raised to that, and says so
for r in 41 42; do
  "$MB" train --latent 16 --actions 8 --workloads 'p-h.*' --catalogue "$TMP/cat.txt" --steps 1 \
    --segment 20 --replay $r --priority 0.5 --out "$TMP/r$r.h5" >"$TMP/out" 2>"$TMP/err" ||
    fail "--replay $r: $(cat "$TMP/err")"
  grep -q "; prioritised replay of 42 transitions, alpha 0.5, beta 0.4 -> 1; out $TMP/r$r.h5$" \
    "$TMP/err" || fail "--replay $r plan line: $(cat "$TMP/err")"
  note="mallocbench train: note: --replay 41 raised to 42, two trajectories of --segment 20 decisions"
  if [ $r = 41 ]; then grep -q "^$note" "$TMP/err"; else ! grep -q "note: --replay" "$TMP/err"; fi ||
    fail "--replay $r: $(cat "$TMP/err")"
done
expect 2 "^mallocbench train: unknown option '--synthetic=1'" "$MB" train --synthetic=1 --out "$TMP/x.h5"
# the run's options fill the 8191 characters a checkpoint stores, no fewer: a --workloads REGEX
# of L characters makes them L longer; a REGEX of single quotes takes 4 each (' -> '\'') and 2
# for the quotes around it. One character more is refused, and says so.
xs() { printf "%${1}s" | tr ' ' "$2"; }
SYN=(--synthetic --latent 16 --actions 8 --synth-min 16 --synth-max 24 -q --steps 1)
"$MB" train "${SYN[@]}" --workloads "$(xs 100 x)" --out "$TMP/w.h5" >/dev/null 2>"$TMP/err" ||
  fail "--workloads of 100 characters: $(cat "$TMP/err")"
base=$(run_options "$TMP/w.h5" | awk '{ print length($0) }')
longest=$((100 + 8191 - base))
too_long="the options that define the run take more than the 8191 characters a checkpoint stores"
"$MB" train "${SYN[@]}" --workloads "$(xs $longest x)" --out "$TMP/w.h5" --force >/dev/null \
  2>"$TMP/err" || fail "--workloads of $longest characters: $(cat "$TMP/err")"
[ "$(run_options "$TMP/w.h5" | awk '{ print length($0) }')" = 8191 ] ||
  fail "run options of --workloads of $longest characters: not 8191 long"
expect 2 "$too_long" "$MB" train "${SYN[@]}" --workloads "$(xs $((longest + 1)) x)" \
  --out "$TMP/w1.h5"
# (longer than a checkpoint's whole text: the same)
expect 2 "$too_long" "$MB" train "${SYN[@]}" --workloads "$(xs 9000 x)" --out "$TMP/w1.h5"
quotes=$(((longest - 2) / 4))
"$MB" train "${SYN[@]}" --workloads "$(xs $quotes "'")" --out "$TMP/q.h5" >/dev/null \
  2>"$TMP/err" || fail "--workloads of $quotes quotes: $(cat "$TMP/err")"
expect 2 "$too_long" "$MB" train "${SYN[@]}" --workloads "$(xs $((quotes + 1)) "'")" \
  --out "$TMP/q1.h5"
# ... and a resume reads such a REGEX back whole (its options are the run's, but --steps)
before=$(run_options "$TMP/q.h5")
[ "${before:0:15}" = "--workloads ''\\" ] || fail "stored quotes: ${before:0:40}..."
"$MB" train --resume "$TMP/q.h5" --out "$TMP/q.h5" --steps 2 -q >/dev/null 2>"$TMP/err" ||
  fail "resume of --workloads of $quotes quotes: $(cat "$TMP/err")"
[ "$(run_options "$TMP/q.h5")" = "${before% --steps 1} --steps 2" ] ||
  fail "resume of --workloads of $quotes quotes: the options changed"
# a resume limited by --minutes instead of --steps trains (the stored --steps does not apply),
# for those minutes (0.01: at least 0.6 s)
start=$(date +%s%N)
"$MB" train -q --minutes 0.01 --resume "$TMP/here.h5" --out "$TMP/new/deeper/m.h5" >"$TMP/out" \
  2>"$TMP/err" || fail "resume --minutes into new folders: $(cat "$TMP/err")"
ms=$((($(date +%s%N) - start) / 1000000))
[ "$ms" -ge 600 ] || fail "train --minutes 0.01 took $ms ms"
awk '/in total: / { for (i = 1; i < NF; i++) if ($(i + 1) == "updates," && $(i - 1) == "total:") n = $i }
     END { exit !(n > 2) }' "$TMP/out" && [ -f "$TMP/new/deeper/m.h5" ] ||
  fail "resume --minutes: $(cat "$TMP/out")"
echo "train options e2e: ok"
