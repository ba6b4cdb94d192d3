#!/usr/bin/env bash
# mallocMuZero's evaluation options (--simulations, --c-scale, --leaf-rollout, --search,
# --finetune, --finetune-steps) through the CLI,
# without an agent (tests cannot afford to train one): `run` stores them as run attributes,
# in the journal header and in the plan hash, and takes them back on every resume path; at
# their defaults the journal header keeps the layout runs had before these options existed;
# `solve` parses and validates them. The solver here is the heuristic, which ignores them:
# what is tested is the plumbing (tests/test_driver.c checks that they reach a solver).
# Usage: run_muzero_options.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: run_muzero_options.sh MALLOCBENCH_BINARY}
SRC=$(pwd)
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"
source "$(dirname "$0")/lib/kill_run.bash"

# attr FILE NAME: the value of a scalar root attribute, as h5dump prints it
attr() { h5dump -a "/$2" "$1" 2>/dev/null | sed -n 's/^ *(0): *//p' | tr -d '"'; }

cat >"$TMP/cat.txt" <<CAT
name kind source args hardware capacity split tags
mlp_tiny native $SRC/datasets/samples/mlp_tiny.wl - tpu-v4i 2MiB test quick
attention native $SRC/datasets/samples/attention_block.wl - tpu-v4i 4MiB test quick
CAT
OPTS=(--catalogue "$TMP/cat.txt" --workloads . --solvers heuristic --budget 0.05 --no-progress)
MZ=(--simulations 4 --c-scale 2 --finetune 0)

# stored as run attributes; part of the plan hash
"$MB" run "${OPTS[@]}" "${MZ[@]}" --out "$TMP/mz.h5" >/dev/null 2>"$TMP/err" ||
  fail "run with the options: $(cat "$TMP/err")"
"$MB" run "${OPTS[@]}" --out "$TMP/plain.h5" >/dev/null 2>"$TMP/err" ||
  fail "run without the options: $(cat "$TMP/err")"
[ "$(attr "$TMP/mz.h5" run_simulations)" = 4 ] || fail "run_simulations: '$(attr "$TMP/mz.h5" run_simulations)'"
[ "$(attr "$TMP/mz.h5" run_c_scale)" = 2 ] || fail "run_c_scale: '$(attr "$TMP/mz.h5" run_c_scale)'"
[ "$(attr "$TMP/mz.h5" run_finetune_s)" = 0 ] || fail "run_finetune_s: '$(attr "$TMP/mz.h5" run_finetune_s)'"
for a in run_simulations run_c_scale run_finetune_s run_finetune_steps; do
  [ "$(attr "$TMP/plain.h5" $a)" = 0 ] || fail "$a of a run without the options: '$(attr "$TMP/plain.h5" $a)'"
done
h_mz=$(attr "$TMP/mz.h5" plan_sha256)
h_plain=$(attr "$TMP/plain.h5" plan_sha256)
[ ${#h_mz} = 64 ] && [ ${#h_plain} = 64 ] || fail "plan hashes: '$h_mz' '$h_plain'"
[ "$h_mz" != "$h_plain" ] || fail "the options do not enter the plan hash"
# fine-tuning by updates: stored, another plan
"$MB" run "${OPTS[@]}" --finetune-steps 50 --out "$TMP/fs.h5" >/dev/null 2>"$TMP/err" ||
  fail "run with --finetune-steps: $(cat "$TMP/err")"
[ "$(attr "$TMP/fs.h5" run_finetune_steps)" = 50 ] || fail "run_finetune_steps: '$(attr "$TMP/fs.h5" run_finetune_steps)'"
h_fs=$(attr "$TMP/fs.h5" plan_sha256)
[ "$h_fs" != "$h_plain" ] && [ "$h_fs" != "$h_mz" ] || fail "--finetune-steps does not enter the plan hash"
expect 2 "--finetune and --finetune-steps: fine-tune by seconds or by updates, not both" \
  "$MB" run "${OPTS[@]}" --finetune 1 --finetune-steps 50 --out "$TMP/both.h5"
[ ! -e "$TMP/both.h5" ] || fail "a refused run left a file"
"$MB" verify "$TMP/mz.h5" >/dev/null || fail "verify the run with the options"
# the search kind: stored by name (gumbel by default), pUCT another plan
[ "$(attr "$TMP/plain.h5" run_search)" = gumbel ] || fail "run_search by default: '$(attr "$TMP/plain.h5" run_search)'"
"$MB" run "${OPTS[@]}" --search puct --out "$TMP/puct.h5" >/dev/null 2>"$TMP/err" ||
  fail "run with --search puct: $(cat "$TMP/err")"
[ "$(attr "$TMP/puct.h5" run_search)" = puct ] || fail "run_search: '$(attr "$TMP/puct.h5" run_search)'"
h_puct=$(attr "$TMP/puct.h5" plan_sha256)
[ "$h_puct" != "$h_plain" ] && [ "$h_puct" != "$h_mz" ] || fail "--search puct does not enter the plan hash"
"$MB" run "${OPTS[@]}" --search gumbel --out "$TMP/gumbel.h5" >/dev/null 2>"$TMP/err" ||
  fail "run with --search gumbel: $(cat "$TMP/err")"
[ "$(attr "$TMP/gumbel.h5" plan_sha256)" = "$h_plain" ] || fail "--search gumbel is not the default plan"
# leaf rollouts: 0 turns them off (stored as -1), which is not the default (0: each solver's
# own, mallocmuzero-exact's rollouts); N is stored as N; each is another plan
[ "$(attr "$TMP/plain.h5" run_leaf_rollout)" = 0 ] ||
  fail "run_leaf_rollout by default: '$(attr "$TMP/plain.h5" run_leaf_rollout)'"
hashes="$h_plain $h_mz $h_fs $h_puct"
for lr in 0:-1 8:8; do
  "$MB" run "${OPTS[@]}" --leaf-rollout "${lr%:*}" --out "$TMP/lr.h5" >/dev/null 2>"$TMP/err" ||
    fail "run with --leaf-rollout ${lr%:*}: $(cat "$TMP/err")"
  [ "$(attr "$TMP/lr.h5" run_leaf_rollout)" = "${lr#*:}" ] ||
    fail "--leaf-rollout ${lr%:*}: run_leaf_rollout '$(attr "$TMP/lr.h5" run_leaf_rollout)', expected ${lr#*:}"
  h=$(attr "$TMP/lr.h5" plan_sha256)
  case " $hashes " in *" $h "*) fail "--leaf-rollout ${lr%:*} is the plan of another run" ;; esac
  hashes="$hashes $h"
  rm -f "$TMP/lr.h5"
done


# the journal header: the options only when set, in the same place as budget; at the defaults
# it is the header runs wrote before these options existed
run_killed "$TMP/kd.h5" 3 "${OPTS[@]}" --seeds 60 --jobs 1
head -1 "$TMP/kd.h5.journal" | grep -qE '^mallocbench-journal 1 seeds 60 budget [^ ]+ plan s[0-9a-f]{64} ' ||
  fail "default journal header: $(head -1 "$TMP/kd.h5.journal" | cut -c1-200)"
[ -s "$TMP/kd.h5.journal" ] || fail "no journal kd.h5.journal" # (else the grep below passes)
head -1 "$TMP/kd.h5.journal" | grep -qE 'simulations|c_scale|finetune|muzero' &&
  fail "default journal header names the options: $(head -1 "$TMP/kd.h5.journal" | cut -c1-200)"
run_killed "$TMP/km.h5" 3 "${OPTS[@]}" --seeds 60 --jobs 1 "${MZ[@]}"
head -1 "$TMP/km.h5.journal" |
  grep -qE '^mallocbench-journal 1 seeds 60 budget [^ ]+ simulations 4 c_scale 2 finetune 0 plan s' ||
  fail "journal header with the options: $(head -1 "$TMP/km.h5.journal" | cut -c1-200)"

# resumed from the file: the options come back (and are refused on the command line)
expect 2 "takes the plan" "$MB" run --resume "$TMP/km.h5" --simulations 4
"$MB" run --resume "$TMP/km.h5" --no-progress >/dev/null 2>"$TMP/err" ||
  fail "resume with the options: $(cat "$TMP/err")"
[ "$(attr "$TMP/km.h5" run_simulations)" = 4 ] && [ "$(attr "$TMP/km.h5" run_c_scale)" = 2 ] ||
  fail "options lost on resume"
[ "$(attr "$TMP/km.h5" complete)" = 1 ] || fail "resumed run not complete"
"$MB" run --resume "$TMP/kd.h5" --no-progress >/dev/null 2>"$TMP/err" ||
  fail "resume without the options: $(cat "$TMP/err")"

# resumed from the journal alone (the HDF5 file is destroyed): the header gives them back
run_killed "$TMP/kw.h5" 3 "${OPTS[@]}" --seeds 60 --jobs 1 "${MZ[@]}"
truncate -s 2048 "$TMP/kw.h5"
"$MB" run --resume "$TMP/kw.h5" --no-progress >/dev/null 2>"$TMP/err" ||
  fail "rebuild with the options: $(cat "$TMP/err")"
grep -q "rebuilding it from" "$TMP/err" || fail "no rebuild note: $(cat "$TMP/err")"
[ "$(attr "$TMP/kw.h5" run_simulations)" = 4 ] && [ "$(attr "$TMP/kw.h5" run_c_scale)" = 2 ] &&
  [ "$(attr "$TMP/kw.h5" run_finetune_s)" = 0 ] || fail "options lost rebuilding from the journal"
[ "$(attr "$TMP/kw.h5" plan_sha256)" = "$(attr "$TMP/km.h5" plan_sha256)" ] ||
  fail "the rebuilt file has another plan hash"
"$MB" verify "$TMP/kw.h5" >/dev/null || fail "verify the rebuilt file"

# --help documents them
stdout_has -E '^  --simulations N +mallocmuzero' "$MB" run --help || fail "run --help: no --simulations"
stdout_has -E '^  --c-scale X +mallocmuzero' "$MB" run --help || fail "run --help: no --c-scale"
stdout_has -E '^  --finetune SEC +mallocmuzero' "$MB" run --help || fail "run --help: no --finetune"
stdout_has -E '^  --finetune-steps N +mallocmuzero' "$MB" run --help || fail "run --help: no --finetune-steps"
stdout_has -E '^  --leaf-rollout N +mallocmuzero' "$MB" run --help || fail "run --help: no --leaf-rollout"
stdout_has -E '^  --search gumbel\|puct +mallocmuzero' "$MB" run --help || fail "run --help: no --search"
for o in --simulations --c-scale --finetune --finetune-steps --leaf-rollout --search; do
  stdout_has -E "^$o " "$MB" solve --help || fail "solve --help: no $o"
done

# solve: parsing and validation (the heuristic ignores valid values)
WL=datasets/samples/mlp_tiny.wl
"$MB" solve "$WL" --solver heuristic --capacity 1MiB "${MZ[@]}" >/dev/null 2>"$TMP/err" ||
  fail "solve with valid options: $(cat "$TMP/err")"
for bad in "--simulations 0" "--simulations x" "--simulations 2.5" "--c-scale 0" "--c-scale -2" \
  "--c-scale nan" "--finetune -1" "--finetune inf" "--finetune 1s" "--finetune-steps -1" \
  "--finetune-steps 1.5" "--leaf-rollout -1" "--leaf-rollout 100001" "--leaf-rollout 2.5" \
  "--search mcts" "--search Gumbel"; do
  read -r opt val <<<"$bad"
  expect 2 "^mallocbench solve: $opt '$val'" "$MB" solve "$WL" --solver heuristic "$opt" "$val"
done
expect 2 "--c-scale needs a value" "$MB" solve "$WL" --solver heuristic --c-scale
expect 2 "--finetune and --finetune-steps: give one of them" \
  "$MB" solve "$WL" --solver heuristic --finetune 1 --finetune-steps 5
# the options reach mallocmuzero's own checks (here: the missing checkpoint)
expect 2 "agent checkpoint '$TMP/none.h5' not found" \
  "$MB" solve "$WL" --solver mallocmuzero --agent "$TMP/none.h5" "${MZ[@]}"
echo "ok: options stored (plan hashes ${h_mz:0:12} with, ${h_plain:0:12} without), restored from the file and from the journal, validated by run and solve"
