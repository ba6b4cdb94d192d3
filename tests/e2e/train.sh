#!/usr/bin/env bash
# `mallocbench train` through the CLI, on a tiny network and tiny synthetic workloads (seconds):
# bad values are refused with exit 2 and a message naming the flag and what it expects; a run
# writes a checkpoint with its command line; a resumed run continues the update count; the same
# seed gives bit-identical weights; an existing checkpoint is replaced only with --force;
# self-play with pUCT (--search puct: root noise, moves sampled by visits; deterministic for a
# seed), self-play in the real game (--self-play exact), packing
# instances in the curriculum (--synth-packing) and a Q spread floor in self-play search
# (--q-range), uniform segment starts (--segment-start uniform) and a cosine learning-rate
# decay (--lr-end) train and change the weights; the gain block (--gain-features), the demand
# profile (--demand-bins), the buffer order (--order), reward shaping (--shaping), the
# dynamics' action features (--action-features) and the latent's scaling (--latent-norm) are
# recorded in the checkpoint and played with; a resumed agent gets a new learned model of its
# own width and depth (--new-model); the agent's sizes (--support, --dyn-blocks) are refused
# where the agent would refuse them; bench muzero evaluates an agent on a catalogue file of
# one's own (--catalogue) (with pUCT too: --search puct; fine-tuned on each workload:
# --finetune-steps) and measures search's one-step evaluations (--model-error) and policy
# improvement (--search-regret), and its returns table holds together (budgets paired as
# documented, in any order; the set's buffers, sizes and seeds); scripts/measure-agent.sh keeps
# those outputs and prints each agent's row from them; a validation set
# (--validate) is refused when it overlaps the training workloads, is stored as the curve's
# validation series, leaves the weights alone, and --keep-best writes the best agent; a run
# killed with SIGKILL resumes from its training state (--state-every) bit for bit (and with
# --state-every 0, which leaves no state behind, neither its own nor an earlier run's), its digest
# (`show`) equal to the uninterrupted run's though the files differ, which runs with each record
# (agent_networks_sha256) and compare reports as the same networks, and a killed run resumes
# with the other file (noted, recorded as resume_agent_sha256) but not with other networks; the checkpoint
# records its BLAS kernel, and scripts/pinned-blas.sh pins it; `show` describes a checkpoint
# (command line, updates, layout, curve, the training state beside it).
# Usage: train.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: train.sh MALLOCBENCH_BINARY}
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"

# same_weights A B: the four networks are bit-identical
same_weights() {
  for g in repr dyn reward pred; do
    h5diff -d 0 "$1" "$2" "/$g" "/$g" >/dev/null || return 1
  done
}

NET=(--synthetic --latent 16 --actions 8 --synth-min 16 --synth-max 32 --batch 16)
TINY=("${NET[@]}" -q)

stdout_has -F "--self-play learned|exact" "$MB" train --help || fail "--help does not list --self-play"

expect 2 "--sibling-depth '0': expected an integer in 1\.\.16" \
  "$MB" train "${TINY[@]}" --steps 5 --sibling-depth 0 --out "$TMP/x.h5"
expect 2 "--siblings '-1': expected a number in \[0, " \
  "$MB" train "${TINY[@]}" --steps 5 --siblings -1 --out "$TMP/x.h5"
expect 2 "--self-play 'model': expected learned or exact" \
  "$MB" train "${TINY[@]}" --steps 5 --self-play model --out "$TMP/x.h5"
expect 2 "--search 'mcts': expected gumbel or puct" \
  "$MB" train "${TINY[@]}" --steps 5 --search mcts --out "$TMP/x.h5"
expect 2 "--sibling-from 'tree': expected random or search" \
  "$MB" train "${TINY[@]}" --steps 5 --sibling-from tree --out "$TMP/x.h5"
expect 2 "--synth-packing '1.5': expected a number in \[0, 1\]" \
  "$MB" train "${TINY[@]}" --steps 5 --synth-packing 1.5 --out "$TMP/x.h5"
expect 2 "--q-range '0': expected a number in \[1e-12, 1\]" \
  "$MB" train "${TINY[@]}" --steps 5 --q-range 0 --out "$TMP/x.h5"
expect 2 "--leaf-rollout '-1': expected an integer in 0\.\.100000" \
  "$MB" train "${TINY[@]}" --steps 5 --leaf-rollout -1 --out "$TMP/x.h5"
expect 2 "--gain-features '2': expected an integer in 0\.\.1" \
  "$MB" train "${TINY[@]}" --steps 5 --gain-features 2 --out "$TMP/x.h5"
expect 2 "--demand-bins '257': expected an integer in 0\.\.256" \
  "$MB" train "${TINY[@]}" --steps 5 --demand-bins 257 --out "$TMP/x.h5"
expect 2 "--order 'random': expected heuristic, start or size" \
  "$MB" train "${TINY[@]}" --steps 5 --order random --out "$TMP/x.h5"
expect 2 "--shaping '-0.5': expected a number in \[0, 100\]" \
  "$MB" train "${TINY[@]}" --steps 5 --shaping -0.5 --out "$TMP/x.h5"
expect 2 "--segment-start 'middle': expected uniform or cover" \
  "$MB" train "${TINY[@]}" --steps 5 --segment-start middle --out "$TMP/x.h5"
expect 2 "--freeze 'repr,policy': expected networks among repr, dyn, reward, pred" \
  "$MB" train "${TINY[@]}" --steps 5 --freeze repr,policy --out "$TMP/x.h5"
expect 2 "--td-steps '-1': expected an integer in 0\.\.100000" \
  "$MB" train "${TINY[@]}" --steps 5 --td-steps -1 --out "$TMP/x.h5"
expect 2 "--synth-packing needs --synthetic" \
  "$MB" train --split train --latent 16 --steps 5 --synth-packing 0.5 --out "$TMP/x.h5"
expect 2 "--out AGENT.h5 is required" "$MB" train "${TINY[@]}" --steps 5
expect 2 "give --steps N or --minutes M" "$MB" train "${TINY[@]}" --out "$TMP/x.h5"
expect 2 "--lr-end decays over --steps N; give --steps" \
  "$MB" train "${TINY[@]}" --minutes 0.1 --lr-end 1e-4 --out "$TMP/x.h5"
expect 2 "--lr-end 0.01: expected at most --lr \(0.001\)" \
  "$MB" train "${TINY[@]}" --steps 5 --lr-end 0.01 --out "$TMP/x.h5"
expect 2 "no workloads" "$MB" train --steps 5 --out "$TMP/x.h5"
expect 2 "synthetic sizes 50\.\.10: expected 2 <= min <= max" \
  "$MB" train "${TINY[@]}" --steps 5 --synth-min 50 --synth-max 10 --out "$TMP/x.h5"
expect 2 "--out '': expected a file path" "$MB" train "${TINY[@]}" --steps 5 --out ''
echo "not an agent" >"$TMP/text.h5"
expect 2 "--resume: $TMP/text.h5: not an HDF5 file" \
  "$MB" train "${TINY[@]}" --steps 5 --resume "$TMP/text.h5" --out "$TMP/x.h5"
[ ! -e "$TMP/x.h5" ] || fail "a refused run wrote a checkpoint"

# a run, its provenance, and a resumed run
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --out "$TMP/a.h5" >"$TMP/out" 2>"$TMP/err" ||
  fail "train: $(cat "$TMP/err")"
grep -q "trained 30 updates in [0-9]* s (in total: 30 updates" "$TMP/out" || fail "summary: $(cat "$TMP/out")"
grep -q "throughput: learner [0-9.]* updates/s, self-play [0-9]* decisions/s; [0-9.]* updates per second of this run's wall time" \
  "$TMP/out" || fail "throughput line: $(cat "$TMP/out")"
! grep -q "validation" "$TMP/out" || fail "a validation line without --validate: $(cat "$TMP/out")"
# the note that the policy is not above the heuristic yet appears exactly when it is not
after=$(sed -n 's/.*before [0-9.]*, after \([0-9.]*\);.*/\1/p' "$TMP/out")
heur=$(sed -n 's/.*heuristic (reference) \([0-9.]*\)$/\1/p' "$TMP/out")
[ -n "$after" ] && [ -n "$heur" ] || fail "raw policy line: $(cat "$TMP/out")"
if awk -v a="$after" -v h="$heur" 'BEGIN { exit !(a <= h) }'; then
  grep -q "^note: the policy network alone does not beat the heuristic" "$TMP/out" ||
    fail "after $after <= heuristic $heur and no note: $(cat "$TMP/out")"
else
  ! grep -q "^note: the policy network" "$TMP/out" || fail "a note though $after > $heur"
fi
h5dump -a /training "$TMP/a.h5" | grep -q -- "--steps 30 --seed 3" ||
  fail "the checkpoint does not record its command line"
h5dump -a /train.blas "$TMP/a.h5" | grep -q "core " ||
  fail "the checkpoint does not record its BLAS kernel"
# a trained agent is never replaced by accident: an existing --out needs --resume of it or --force
cp "$TMP/a.h5" "$TMP/a.copy"
expect 2 "--out $TMP/a.h5: file exists \(continue it with --resume $TMP/a.h5, or replace it with --force\)" \
  "$MB" train "${TINY[@]}" --steps 5 --out "$TMP/a.h5"
expect 2 "file exists" "$MB" train "${TINY[@]}" --steps 5 --resume "$TMP/a.copy" --out "$TMP/a.h5"
cmp -s "$TMP/a.h5" "$TMP/a.copy" || fail "a refused run modified the existing checkpoint"
"$MB" train "${TINY[@]}" --steps 5 --seed 4 --force --out "$TMP/a.copy" >/dev/null 2>"$TMP/err" ||
  fail "train --force: $(cat "$TMP/err")"
h5dump -a /training "$TMP/a.copy" | grep -q -- "--steps 5 --seed 4 --force" ||
  fail "--force did not replace the checkpoint"
# scripts/pinned-blas.sh: training under it runs on the Haswell kernel where the CPU has AVX2
# and FMA, and a kernel the caller chose is kept
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && [ "$(uname -m)" = x86_64 ]; then
  env -u OPENBLAS_CORETYPE scripts/pinned-blas.sh "$MB" train "${NET[@]}" --steps 1 \
    --out "$TMP/p.h5" >/dev/null 2>"$TMP/err" || fail "pinned train: $(cat "$TMP/err")"
  h5dump -a /train.blas "$TMP/p.h5" | grep -q "core Haswell" ||
    fail "scripts/pinned-blas.sh did not pin the Haswell kernel: $(h5dump -a /train.blas "$TMP/p.h5")"
  OPENBLAS_CORETYPE=Sandybridge scripts/pinned-blas.sh "$MB" train "${NET[@]}" --steps 1 \
    --force --out "$TMP/p.h5" >/dev/null 2>"$TMP/err" || fail "pinned train: $(cat "$TMP/err")"
  h5dump -a /train.blas "$TMP/p.h5" | grep -q "core Sandybridge" ||
    fail "scripts/pinned-blas.sh replaced the caller's kernel"
  # resuming on another kernel works, and warns that the agent will differ
  OPENBLAS_CORETYPE=Haswell "$MB" train "${NET[@]}" --steps 2 --resume "$TMP/p.h5" \
    --out "$TMP/p.h5" >"$TMP/out" 2>&1 || fail "resume on another kernel: $(cat "$TMP/out")"
  grep -q "warning: .*trained with BLAS .*Sandybridge.*this run uses .*Haswell" "$TMP/out" ||
    fail "no warning when resuming on another kernel: $(cat "$TMP/out")"
  OPENBLAS_CORETYPE=Haswell "$MB" train "${NET[@]}" --steps 3 --resume "$TMP/p.h5" \
    --out "$TMP/p.h5" >"$TMP/out" 2>&1 || fail "resume: $(cat "$TMP/out")"
  ! grep -q "warning: .*trained with BLAS" "$TMP/out" || fail "a warning on the same kernel"
fi
cp "$TMP/a.h5" "$TMP/r.h5"
"$MB" train "${TINY[@]}" --steps 50 --seed 3 --resume "$TMP/r.h5" --out "$TMP/r.h5" \
  >"$TMP/out" 2>"$TMP/err" || fail "resume: $(cat "$TMP/err")"
grep -q "trained 20 updates in [0-9]* s (in total: 50 updates" "$TMP/out" || fail "resumed summary: $(cat "$TMP/out")"
# the network options of the original command, given again, are said to be ignored on resume
grep -q "warning: --latent ignored: a resumed agent keeps the network and game layout of $TMP/r.h5" \
  "$TMP/err" || fail "resume with --latent: no warning: $(cat "$TMP/err")"
"$MB" train --synthetic --synth-min 16 --synth-max 32 --batch 16 -q --steps 55 --seed 3 \
  --resume "$TMP/r.h5" --out "$TMP/r.h5" >/dev/null 2>"$TMP/err" || fail "resume: $(cat "$TMP/err")"
! grep -q "warning" "$TMP/err" || fail "resume without network options warns: $(cat "$TMP/err")"
# a resume that trains nothing writes nothing: the file (whose SHA-256 results cite) stays
# byte for byte, in place (exit 0) or not (exit 2, no copy labelled with a no-op command)
cp "$TMP/r.h5" "$TMP/r.before"
"$MB" train -q --steps 20 --resume "$TMP/r.h5" --out "$TMP/r.h5" >"$TMP/out" 2>"$TMP/err" ||
  fail "no-op resume: exit $?: $(cat "$TMP/err")"
grep -q "mallocbench train: $TMP/r.h5 already has 55 updates (--steps 20): nothing to train; $TMP/r.h5 left as it is" \
  "$TMP/out" || fail "no-op resume: $(cat "$TMP/out" "$TMP/err")"
cmp -s "$TMP/r.h5" "$TMP/r.before" || fail "a resume that trained nothing rewrote the checkpoint"
expect 2 "--steps 55: $TMP/r.h5 already has 55 updates: nothing to train, so --out $TMP/r2.h5 is not written" \
  "$MB" train -q --steps 55 --resume "$TMP/r.h5" --out "$TMP/r2.h5"
[ ! -e "$TMP/r2.h5" ] || fail "a no-op resume wrote another file"
# the options that define the run are stored and kept: a resume without them continues the run
# (its workloads, seed, learning rate...), one with another value is refused naming it (the file
# untouched), one with an option that may change (--jobs, --eval-every) trains; a run branched
# off to another file may change them, and says so
stdout_has -G "^run options      --synthetic .*--seed 3 .*--batch 16 " "$MB" show "$TMP/r.h5" ||
  fail "show: no run options: $("$MB" show "$TMP/r.h5")"
expect 2 "--resume $TMP/r.h5: --seed: given 7, the run's 3 \(a resumed run keeps the options" \
  "$MB" train -q --split train --lr 0.01 --seed 7 --steps 60 --resume "$TMP/r.h5" --out "$TMP/r.h5"
grep -q -- "--lr: given 0.01, the run's 0.001" "$TMP/err" && grep -q "the workloads: given --split train, the run's --synthetic" \
  "$TMP/err" || fail "conflicting options: $(cat "$TMP/err")"
cmp -s "$TMP/r.h5" "$TMP/r.before" || fail "a refused resume modified the checkpoint"
"$MB" train -q --steps 60 --resume "$TMP/r.h5" --out "$TMP/r.h5" >"$TMP/out" 2>"$TMP/err" ||
  fail "resume without training options: $(cat "$TMP/err")"
grep -q "trained 5 updates in [0-9]* s (in total: 60 updates" "$TMP/out" || fail "resume: $(cat "$TMP/out")"
"$MB" train -q --jobs 2 --eval-every 10 --steps 62 --resume "$TMP/r.h5" --out "$TMP/r.h5" \
  >"$TMP/out" 2>"$TMP/err" || fail "resume with --jobs 2: $(cat "$TMP/err")"
"$MB" train --lr 0.0005 --steps 64 --resume "$TMP/r.h5" --out "$TMP/rb.h5" >"$TMP/out" 2>"$TMP/err" ||
  fail "branch with --lr: $(cat "$TMP/err")"
grep -q "train: --lr: given 0.0005, $TMP/r.h5's run had 0.001 (a new run branched off it)" "$TMP/err" ||
  fail "branch: $(cat "$TMP/err")"
# the history: the command that started the run, then each resume's
"$MB" show "$TMP/rb.h5" >"$TMP/out" || fail "show rb.h5"
grep -q "^trained by       mallocbench train .* --steps 30 --seed 3 --out $TMP/a.h5$" "$TMP/out" &&
  [ "$(grep -c "^resumed by       mallocbench train .*--resume $TMP/r.h5" "$TMP/out")" = 5 ] &&
  grep -q "^resumed by       .*--lr 0.0005 --steps 64 --resume $TMP/r.h5 --out $TMP/rb.h5$" "$TMP/out" ||
  fail "show: the training history: $(cat "$TMP/out")"
# a new learned model for a resumed agent (--new-model): shaped by --dyn-width/--dyn-blocks,
# the other networks kept (frozen here: bit for bit), and shown; without --new-model the
# model's options are said to be ignored, and without --resume --new-model is refused
"$MB" train --synthetic --synth-min 16 --synth-max 32 --batch 16 --steps 70 --seed 3 \
  --resume "$TMP/r.h5" --new-model --dyn-width 24 --dyn-blocks 2 --freeze repr,pred \
  --out "$TMP/nm.h5" >/dev/null 2>"$TMP/err" || fail "--new-model: $(cat "$TMP/err")"
grep -q "train: a new learned model: dynamics 24 wide with 2 residual block(s)" "$TMP/err" ||
  fail "--new-model does not say so: $(cat "$TMP/err")"
for g in repr pred; do
  h5diff -d 0 "$TMP/r.h5" "$TMP/nm.h5" "/$g" "/$g" >/dev/null || fail "--new-model changed $g"
done
stdout_has -F "per module (the dynamics: 24 wide, 2 blocks)" "$MB" show "$TMP/nm.h5" ||
  fail "show of a new model: $("$MB" show "$TMP/nm.h5")"
"$MB" train --synthetic --synth-min 16 --synth-max 32 --batch 16 -q --steps 75 --seed 3 \
  --resume "$TMP/nm.h5" --dyn-width 32 --out "$TMP/nm.h5" >/dev/null 2>"$TMP/err" ||
  fail "resume of a new model: $(cat "$TMP/err")"
grep -q "warning: --dyn-width ignored: a resumed agent keeps its learned model unless --new-model" \
  "$TMP/err" || fail "--dyn-width on resume: no warning: $(cat "$TMP/err")"
expect 2 "--new-model replaces a resumed agent's learned model; give --resume AGENT.h5" \
  "$MB" train "${TINY[@]}" --steps 5 --new-model --out "$TMP/x.h5"
expect 2 "--dyn-width '2': expected an integer in 4\.\.4096" \
  "$MB" train "${TINY[@]}" --steps 5 --dyn-width 2 --out "$TMP/x.h5"
# the agent's sizes are read in the agent's own limits (agent.h): a value it would refuse when
# building the networks is refused first, as other bad values are (--support N: N atoms, 2N - 1
# with --shaping; before, --support took 2..100000 and training failed on what the agent
# refused); the dynamics' depth is 1 or more (the agent's 0 means "as --blocks": leave the
# option out for that)
expect 2 "--dyn-blocks '0': expected an integer in 1\.\.16$" \
  "$MB" train "${TINY[@]}" --steps 5 --dyn-blocks 0 --out "$TMP/x.h5"
expect 2 "--support '2': expected an integer in 3\.\.1001 \(2\.\.501 with --shaping: 2N - 1 atoms\)$" \
  "$MB" train "${TINY[@]}" --steps 5 --support 2 --out "$TMP/x.h5"
expect 2 "--support '1002': expected an integer in 2\.\.1001$" \
  "$MB" train "${TINY[@]}" --steps 5 --support 1002 --out "$TMP/x.h5"
expect 2 "--support '502': expected an integer in 2\.\.501 with --shaping \(2N - 1 atoms; 3\.\.1001 without\)$" \
  "$MB" train "${TINY[@]}" --steps 5 --support 502 --shaping 1 --out "$TMP/x.h5"
expect 2 "--support '2': expected an integer in 3\.\.1001" \
  "$MB" train -q --steps 80 --support 2 --resume "$TMP/r.h5" --out "$TMP/x.h5"
[ ! -e "$TMP/x.h5" ] || fail "a refused --support wrote a checkpoint"
"$MB" train "${TINY[@]}" --steps 1 --support 2 --shaping 1 --out "$TMP/s2.h5" >/dev/null \
  2>"$TMP/err" || fail "--support 2 --shaping 1 (3 atoms): $(cat "$TMP/err")"
"$MB" train "${TINY[@]}" --steps 1 --support 1001 --out "$TMP/s1001.h5" >/dev/null \
  2>"$TMP/err" || fail "--support 1001 (the most atoms): $(cat "$TMP/err")"

# a run killed (SIGKILL) once its training state exists resumes from it bit for bit: the same
# weights, optimiser and curve returns as the run that never stopped, which leaves no state
STATE=("${TINY[@]}" --steps 2000 --seed 5 --state-every 100)
"$MB" train "${STATE[@]}" --out "$TMP/u.h5" >/dev/null 2>"$TMP/err" || fail "train: $(cat "$TMP/err")"
[ ! -e "$TMP/u.state.h5" ] || fail "a finished run left its training state"
"$MB" train "${STATE[@]}" --out "$TMP/k.h5" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 3000); do
  { [ -e "$TMP/k.state.h5" ] || ! kill -0 "$pid" 2>/dev/null; } && break
  sleep 0.01
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ -e "$TMP/k.state.h5" ] || fail "test setup: the run ended before it could be killed"
cp "$TMP/k.state.h5" "$TMP/z.state.h5" # (for --state-every 0, below)
# the training state is a checkpoint with more in it: show says how far the killed run got
"$MB" show "$TMP/k.state.h5" >"$TMP/out" 2>"$TMP/err" || fail "show of a state: $(cat "$TMP/err")"
grep -qE "^training         [1-9][0-9]+ updates, " "$TMP/out" ||
  fail "show of the training state: $(cat "$TMP/out")"
# (the options of the run are the state's: the resume gives none)
"$MB" train --resume "$TMP/k.h5" --out "$TMP/k.h5" >"$TMP/out" 2>"$TMP/err" ||
  fail "resume from the state: $(cat "$TMP/err")"
grep -q "resumed at step [1-9][0-9]* from the training state $TMP/k.state.h5" "$TMP/err" ||
  fail "the resume does not say it used the training state: $(head -3 "$TMP/err")"
grep -qE "^train: game             8 actions \(7 candidate slots \+ slow\), buffer order heuristic" \
  "$TMP/err" && grep -qE "^train: observation      [0-9]+ values: " "$TMP/err" ||
  fail "the training log does not describe the game: $(head -5 "$TMP/err")"
same_weights "$TMP/u.h5" "$TMP/k.h5" || fail "resumed from the state: other weights"
for x in /adam /series/curve_policy /series/curve_selfplay /series/curve_loss; do
  h5diff -d 0 "$TMP/u.h5" "$TMP/k.h5" "$x" "$x" >/dev/null || fail "resumed from the state: $x differs"
done
[ ! -e "$TMP/k.state.h5" ] || fail "the resumed run left its training state"
# --state-every 0 writes no state, and leaves none of an earlier run behind: resumed from one,
# the run removes it when it ends (a later resume would go back to its step); a new run removes
# one it finds at the start
"$MB" train --resume "$TMP/z.h5" --out "$TMP/z.h5" --state-every 0 >"$TMP/out" 2>"$TMP/err" ||
  fail "resume with --state-every 0: $(cat "$TMP/err")"
grep -q "resumed at step [1-9][0-9]* from the training state $TMP/z.state.h5" "$TMP/err" &&
  [ ! -e "$TMP/z.state.h5" ] ||
  fail "a resume with --state-every 0 left the state it resumed from: $(ls "$TMP"/z*)"
same_weights "$TMP/u.h5" "$TMP/z.h5" || fail "resumed with --state-every 0: other weights"
cp "$TMP/u.h5" "$TMP/y.state.h5"
"$MB" train "${TINY[@]}" --steps 5 --state-every 0 --out "$TMP/y.h5" >/dev/null 2>"$TMP/err" ||
  fail "--state-every 0: $(cat "$TMP/err")"
[ ! -e "$TMP/y.state.h5" ] || fail "--state-every 0 left an earlier run's state: $(ls "$TMP"/y*)"
# the agent's digest names its networks, not its file: the two runs' files differ (wall times)
# and their digests agree; runs that play each record it, and compare says the files hold the
# same networks (the results themselves are identical)
digest() { "$MB" show "$1" | sed -n 's/^digest  *\([0-9a-f]\{64\}\) .*/\1/p'; }
[ -n "$(digest "$TMP/u.h5")" ] && [ "$(digest "$TMP/u.h5")" = "$(digest "$TMP/k.h5")" ] ||
  fail "digests of the same networks: '$(digest "$TMP/u.h5")' and '$(digest "$TMP/k.h5")'"
! cmp -s "$TMP/u.h5" "$TMP/k.h5" || fail "test setup: the two checkpoints are byte-identical"
# train's last line names the digest of what it wrote
"$MB" train "${TINY[@]}" --steps 3 --seed 9 --out "$TMP/dg.h5" >"$TMP/out" 2>"$TMP/err" ||
  fail "train dg.h5: $(cat "$TMP/err")"
grep -qx "checkpoint: $TMP/dg.h5 (agent digest $(digest "$TMP/dg.h5"))" "$TMP/out" ||
  fail "train's checkpoint line: $(tail -1 "$TMP/out")"
cat >"$TMP/digest-cat.txt" <<CAT
name kind source args hardware capacity split tags
mlp_tiny native $(pwd)/datasets/samples/mlp_tiny.wl - tpu-v4i 2MiB test quick
CAT
for a in u k; do
  "$MB" run --catalogue "$TMP/digest-cat.txt" --workloads . --solvers mallocmuzero --seeds 1 \
    --simulations 2 --agent "$TMP/$a.h5" --no-progress --out "$TMP/run-$a.h5" >/dev/null \
    2>"$TMP/err" || fail "run with agent $a: $(cat "$TMP/err")"
  [ "$(h5dump -a /agent_networks_sha256 "$TMP/run-$a.h5" | sed -n 's/^ *(0): "\(.*\)"/\1/p')" = \
    "$(digest "$TMP/u.h5")" ] || fail "run-$a.h5: agent_networks_sha256 is not the agent's digest"
done
"$MB" compare "$TMP/run-u.h5" "$TMP/run-k.h5" >"$TMP/out" 2>"$TMP/err" ||
  fail "compare of runs with the same networks: status $?: $(cat "$TMP/out" "$TMP/err")"
grep -q "^  agent_sha256: " "$TMP/out" && grep -qF "(the two agent files hold the same networks" \
  "$TMP/out" && grep -qF "; plan_sha256 hashes the file, so it differs too)" "$TMP/out" ||
  fail "compare does not say the agents' networks are the same: $(cat "$TMP/out")"
# a killed run resumes with another file of the same networks (a reproduced training): the same
# plan, a note naming the file, which resume_agent_sha256 records; a file of other networks is
# refused and the file is left as it was
source "$(dirname "$0")/lib/kill_run.bash"
str_attr() { h5dump -a "/$2" "$1" | sed -n 's/^ *(0): "\(.*\)"/\1/p'; }
cp "$TMP/k.h5" "$TMP/ag.h5"
run_killed "$TMP/rk.h5" 3 --catalogue "$TMP/digest-cat.txt" --workloads . --solvers mallocmuzero \
  --seeds 40 --simulations 2 --agent "$TMP/ag.h5" --jobs 1 --no-progress
cp "$TMP/dg.h5" "$TMP/ag.h5"
expect 2 "the plan changed since the run started .*the agent's networks" "$MB" run --resume "$TMP/rk.h5"
cp "$TMP/u.h5" "$TMP/ag.h5"
"$MB" run --resume "$TMP/rk.h5" --no-progress >/dev/null 2>"$TMP/err" ||
  fail "resume with another file of the same networks: $(cat "$TMP/err")"
grep -qF "note: the agent $TMP/ag.h5 is not the file $TMP/rk.h5 was started with" "$TMP/err" &&
  grep -qF "holds the same networks" "$TMP/err" || fail "the resume's note: $(cat "$TMP/err")"
[ "$(str_attr "$TMP/rk.h5" agent_sha256)" = "$(sha256sum <"$TMP/k.h5" | cut -d' ' -f1)" ] &&
  [ "$(str_attr "$TMP/rk.h5" resume_agent_sha256)" = "$(sha256sum <"$TMP/u.h5" | cut -d' ' -f1)" ] ||
  fail "agent_sha256 '$(str_attr "$TMP/rk.h5" agent_sha256)', resume_agent_sha256 '$(str_attr \
    "$TMP/rk.h5" resume_agent_sha256)': not the files of the start and of the resume"
"$MB" verify "$TMP/rk.h5" >/dev/null 2>"$TMP/err" || fail "verify of the resumed run: $(cat "$TMP/err")"
# without a state the resume says what it loses
cp "$TMP/u.h5" "$TMP/v.h5"
"$MB" train "${NET[@]}" --steps 2010 --seed 5 --resume "$TMP/v.h5" --out "$TMP/v.h5" \
  >/dev/null 2>"$TMP/err" || fail "resume without a state: $(cat "$TMP/err")"
grep -q "from the checkpoint $TMP/v.h5 alone (no training state): the replay buffer starts empty" \
  "$TMP/err" || fail "resume without a state: $(head -3 "$TMP/err")"
expect 2 "--state-every '-1': expected" "$MB" train "${TINY[@]}" --steps 5 --state-every -1 \
  --out "$TMP/x.h5"

# determinism, and options that reach the weights
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --out "$TMP/b.h5" >/dev/null || fail "second run"
same_weights "$TMP/a.h5" "$TMP/b.h5" || fail "the same seed gave other weights"
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --search puct --out "$TMP/puct.h5" \
  >/dev/null 2>"$TMP/err" || fail "--search puct: $(cat "$TMP/err")"
! same_weights "$TMP/a.h5" "$TMP/puct.h5" || fail "--search puct did not change the weights"
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --search puct --out "$TMP/puct2.h5" \
  >/dev/null 2>"$TMP/err" || fail "--search puct again: $(cat "$TMP/err")"
same_weights "$TMP/puct.h5" "$TMP/puct2.h5" || fail "--search puct: the same seed gave other weights"
# sibling paths from the search tree, one step and deeper
for depth in 1 3; do
  "$MB" train "${TINY[@]}" --steps 30 --seed 3 --sibling-from search --sibling-depth $depth \
    --out "$TMP/ss$depth.h5" >/dev/null 2>"$TMP/err" || fail "--sibling-from search: $(cat "$TMP/err")"
  "$MB" train "${TINY[@]}" --steps 30 --seed 3 --sibling-depth $depth \
    --out "$TMP/sr$depth.h5" >/dev/null 2>"$TMP/err" || fail "--sibling-depth $depth: $(cat "$TMP/err")"
  ! same_weights "$TMP/sr$depth.h5" "$TMP/ss$depth.h5" ||
    fail "--sibling-from search did not change the weights (depth $depth)"
done
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --sibling-from search --sibling-depth 3 \
  --out "$TMP/ss3b.h5" >/dev/null 2>"$TMP/err" || fail "--sibling-from search again: $(cat "$TMP/err")"
same_weights "$TMP/ss3.h5" "$TMP/ss3b.h5" || fail "--sibling-from search: the same seed gave other weights"
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --self-play exact --out "$TMP/e.h5" \
  >/dev/null 2>"$TMP/err" || fail "--self-play exact: $(cat "$TMP/err")"
! same_weights "$TMP/a.h5" "$TMP/e.h5" || fail "--self-play exact did not change the weights"
# expert iteration: the exact search with leaf rollouts as the self-play teacher
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --self-play exact --leaf-rollout 8 \
  --out "$TMP/er.h5" >/dev/null 2>"$TMP/err" || fail "--leaf-rollout 8: $(cat "$TMP/err")"
! same_weights "$TMP/e.h5" "$TMP/er.h5" || fail "--leaf-rollout did not change the weights"
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --synth-packing 0.5 --out "$TMP/pk.h5" \
  >/dev/null 2>"$TMP/err" || fail "--synth-packing: $(cat "$TMP/err")"
! same_weights "$TMP/a.h5" "$TMP/pk.h5" || fail "--synth-packing did not change the weights"
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --q-range 0.5 --out "$TMP/q.h5" \
  >/dev/null 2>"$TMP/err" || fail "--q-range: $(cat "$TMP/err")"
! same_weights "$TMP/a.h5" "$TMP/q.h5" || fail "--q-range did not change the weights"
"$MB" train "${NET[@]}" --steps 2 --self-play exact --out "$TMP/l.h5" >/dev/null 2>"$TMP/err"
grep -q "search in the real game" "$TMP/err" || fail "banner: $(cat "$TMP/err")"
"$MB" train "${NET[@]}" --steps 2 --self-play exact --leaf-rollout 8 --out "$TMP/l8.h5" \
  >/dev/null 2>"$TMP/err"
grep -q "8 simulations, 8-step leaf rollouts" "$TMP/err" || fail "banner: $(cat "$TMP/err")"
# a cosine learning-rate decay changes the weights
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --lr-end 0 --out "$TMP/lr.h5" \
  >/dev/null 2>"$TMP/err" || fail "--lr-end 0: $(cat "$TMP/err")"
! same_weights "$TMP/a.h5" "$TMP/lr.h5" || fail "--lr-end did not change the weights"
# segment starts: covering (the default) or uniform (segments of 8 on 16-32 buffers)
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --segment 8 --out "$TMP/s8.h5" >/dev/null ||
  fail "--segment 8"
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --segment 8 --segment-start uniform \
  --out "$TMP/su.h5" >/dev/null 2>"$TMP/err" || fail "--segment-start uniform: $(cat "$TMP/err")"
! same_weights "$TMP/s8.h5" "$TMP/su.h5" || fail "--segment-start uniform did not change the weights"
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --segment 8 --segment-start cover \
  --out "$TMP/sc.h5" >/dev/null 2>"$TMP/err" || fail "--segment-start cover: $(cat "$TMP/err")"
same_weights "$TMP/s8.h5" "$TMP/sc.h5" || fail "--segment-start cover is not the default"
# the gain block (on by default): recorded in the checkpoint (2 + 4 more inputs with the 4
# next buffers), and the agent plays with it
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --gain-features 0 --out "$TMP/g0.h5" \
  >/dev/null 2>"$TMP/err" || fail "--gain-features 0: $(cat "$TMP/err")"
h5dump -a game.gain_features "$TMP/a.h5" | grep -q "(0): 1" ||
  fail "the checkpoint does not record game.gain_features = 1"
h5dump -a game.gain_features "$TMP/g0.h5" | grep -q "(0): 0" ||
  fail "the checkpoint does not record game.gain_features = 0"
dims() { h5dump -a cfg.obs_dim "$1" | sed -n 's/.*(0): \([0-9]*\).*/\1/p'; }
[ "$(dims "$TMP/a.h5")" -eq $(($(dims "$TMP/g0.h5") + 6)) ] ||
  fail "obs_dim $(dims "$TMP/a.h5") with the gain block, $(dims "$TMP/g0.h5") without"
"$MB" solve datasets/samples/conv_block.wl --solver mallocmuzero-exact --agent "$TMP/a.h5" \
  --simulations 4 >"$TMP/out" 2>"$TMP/err" || fail "solve with the gain block: $(cat "$TMP/err")"
# its times stand in one column beside the long solver name
cols=$(grep -E '^  T_(slow|heuristic|mallocmuzero-exact|bound) ' "$TMP/out" |
  awk '{ print index($0, $2) }' | sort -u)
[ "$(grep -cE '^  T_(slow|heuristic|mallocmuzero-exact|bound) ' "$TMP/out")" = 4 ] &&
  [ "$(echo "$cols" | wc -l)" = 1 ] || fail "solve: times not in one column: $(cat "$TMP/out")"
# --leaf-rollout N plays N rollout steps at the exact search's leaves, 0 none (the default is
# the solver's own): the note says which
for lr in 0 3; do
  "$MB" solve datasets/samples/conv_block.wl --solver mallocmuzero-exact --agent "$TMP/a.h5" \
    --simulations 4 --leaf-rollout $lr >"$TMP/out" 2>"$TMP/err" || fail "solve --leaf-rollout $lr: $(cat "$TMP/err")"
  grep -q ", leaf rollout $lr: " "$TMP/out" || fail "solve --leaf-rollout $lr: $(grep -F 'leaf rollout' "$TMP/out")"
done
# the demand profile (--demand-bins, off by default): 3 inputs per bin, recorded in the
# checkpoint, changes what is learned, and both solvers play with it
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --demand-bins 4 --out "$TMP/d4.h5" \
  >/dev/null 2>"$TMP/err" || fail "--demand-bins 4: $(cat "$TMP/err")"
[ "$(h5dump -a game.demand_bins "$TMP/d4.h5" | sed -n 's/.*(0): \([0-9]*\).*/\1/p')" = 4 ] &&
  h5dump -a game.demand_bins "$TMP/a.h5" | grep -q "(0): 0" ||
  fail "the checkpoints do not record game.demand_bins = 4 and 0"
[ "$(dims "$TMP/d4.h5")" -eq $(($(dims "$TMP/a.h5") + 12)) ] ||
  fail "obs_dim $(dims "$TMP/d4.h5") with 4 demand bins, $(dims "$TMP/a.h5") without"
! same_weights "$TMP/a.h5" "$TMP/d4.h5" || fail "--demand-bins 4 did not change the weights"
# show: the command line, the update count and the layout, from the checkpoint alone
"$MB" show "$TMP/d4.h5" >"$TMP/out" 2>"$TMP/err" || fail "show d4.h5: $(cat "$TMP/err")"
for want in "^trained by       mallocbench train .*--demand-bins 4 --out $TMP/d4.h5$" \
    "^training         30 updates, " "a demand profile of 4 time bins" \
    "^observation      $(dims "$TMP/d4.h5") values" "^resume state     none beside it" \
    "^raw policy       greedy, no search, on the eval set: step 0 "; do
  grep -qE -- "$want" "$TMP/out" || fail "show d4.h5: no line matching '$want' in: $(cat "$TMP/out")"
done
expect 2 "--hardware applies to workloads" "$MB" show "$TMP/d4.h5" --hardware tpu-v4i
# action features for the dynamics (--action-features 1, off by default): recorded in the
# checkpoint, described by show, change what is learned, and both solvers play with them
expect 2 "--action-features '2': expected an integer in 0\.\.1" \
  "$MB" train "${TINY[@]}" --steps 5 --action-features 2 --out "$TMP/x.h5"
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --action-features 1 --out "$TMP/af.h5" \
  >/dev/null 2>"$TMP/err" || fail "--action-features 1: $(cat "$TMP/err")"
h5dump -a cfg.action_features "$TMP/af.h5" | grep -q "(0): 1" &&
  h5dump -a cfg.action_features "$TMP/a.h5" | grep -q "(0): 0" ||
  fail "the checkpoints do not record cfg.action_features = 1 and 0"
! same_weights "$TMP/a.h5" "$TMP/af.h5" || fail "--action-features 1 did not change the weights"
stdout_has -G "^dynamics action  one-hot plus the candidate slot's 6 fields" "$MB" show "$TMP/af.h5" ||
  fail "show af.h5: no dynamics action line: $("$MB" show "$TMP/af.h5")"
stdout_lacks -G "^dynamics action" "$MB" show "$TMP/a.h5" || fail "show a.h5: a dynamics action line"
for solver in mallocmuzero mallocmuzero-exact; do
  "$MB" solve datasets/samples/conv_block.wl --solver $solver --agent "$TMP/af.h5" \
    --simulations 4 >/dev/null 2>"$TMP/err" || fail "solve $solver, action features: $(cat "$TMP/err")"
done
# the latent's scaling (--latent-norm, minmax by default): recorded in the checkpoint,
# described by show, changes what is learned, and both solvers play with it
expect 2 "--latent-norm 'softmax': expected minmax or simnorm" \
  "$MB" train "${TINY[@]}" --steps 5 --latent-norm softmax --out "$TMP/x.h5"
expect 2 "train config: agent config: latent 12 with simnorm: expected a multiple of 8" \
  "$MB" train "${TINY[@]}" --steps 5 --latent 12 --latent-norm simnorm --out "$TMP/x.h5"
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --latent-norm simnorm --out "$TMP/sn.h5" \
  >/dev/null 2>"$TMP/err" || fail "--latent-norm simnorm: $(cat "$TMP/err")"
h5dump -a cfg.latent_norm "$TMP/sn.h5" | grep -q "(0): 1" &&
  h5dump -a cfg.latent_norm "$TMP/a.h5" | grep -q "(0): 0" ||
  fail "the checkpoints do not record cfg.latent_norm = 1 and 0"
! same_weights "$TMP/a.h5" "$TMP/sn.h5" || fail "--latent-norm simnorm did not change the weights"
stdout_has -G "^networks         latent 16 (simnorm)" "$MB" show "$TMP/sn.h5" ||
  fail "show sn.h5: $("$MB" show "$TMP/sn.h5" | grep networks)"
stdout_has -G "^networks         latent 16 (minmax)" "$MB" show "$TMP/a.h5" ||
  fail "show a.h5: $("$MB" show "$TMP/a.h5" | grep networks)"
stdout_has -G "^agent: $TMP/sn.h5, latent 16 (simnorm), " \
  "$MB" bench muzero --agent "$TMP/sn.h5" --seconds 0.05 --buffers 24 --simulations 2 ||
  fail "bench muzero does not name the agent's latent scaling"
for solver in mallocmuzero mallocmuzero-exact; do
  "$MB" solve datasets/samples/conv_block.wl --solver $solver --agent "$TMP/sn.h5" \
    --simulations 4 >/dev/null 2>"$TMP/err" || fail "solve $solver, simnorm: $(cat "$TMP/err")"
done
# the recorded command line is shell-quoted: it pastes back as the same arguments
"$MB" train "${TINY[@]}" --steps 1 --out "$TMP/it's here.h5" >/dev/null 2>"$TMP/err" ||
  fail "train --out with a quote: $(cat "$TMP/err")"
"$MB" show "$TMP/it's here.h5" >"$TMP/out" 2>"$TMP/err" || fail "show: $(cat "$TMP/err")"
grep -qF -- "--out '$TMP/it'\''s here.h5'" "$TMP/out" ||
  fail "the command line is not shell-quoted: $(grep 'trained by' "$TMP/out")"
# the commands that read results files say what a checkpoint is instead
expect 2 "d4.h5: a mallocMuZero agent checkpoint, not a results file \('mallocbench show'" \
  "$MB" summary "$TMP/d4.h5"
head -c 3000 "$TMP/d4.h5" >"$TMP/cut.h5"
expect 2 "$TMP/cut.h5: " "$MB" show "$TMP/cut.h5"
for solver in mallocmuzero mallocmuzero-exact; do
  "$MB" solve datasets/samples/conv_block.wl --solver $solver --agent "$TMP/d4.h5" \
    --simulations 4 >"$TMP/out" 2>"$TMP/err" || fail "$solver with demand bins: $(cat "$TMP/err")"
  # and with pUCT instead of Gumbel MuZero (--search), as the note says
  "$MB" solve datasets/samples/conv_block.wl --solver $solver --agent "$TMP/d4.h5" \
    --simulations 4 --search puct >"$TMP/out" 2>"$TMP/err" || fail "$solver --search puct: $(cat "$TMP/err")"
  grep -q "search (pUCT), 4 sims/decision, c1 1.25" "$TMP/out" || fail "$solver --search puct: $(cat "$TMP/out")"
done
# the buffer order (--order): recorded in the checkpoint, changes what is learned, and the agent
# trained in it solves (and plays in it: bench muzero below)
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --order start --out "$TMP/o.h5" \
  >/dev/null 2>"$TMP/err" || fail "--order start: $(cat "$TMP/err")"
h5dump -a game.order "$TMP/a.h5" | grep -q '"heuristic"' ||
  fail "the checkpoint does not record game.order = heuristic"
h5dump -a game.order "$TMP/o.h5" | grep -q '"start"' ||
  fail "the checkpoint does not record game.order = start: $(h5dump -a game.order "$TMP/o.h5")"
! same_weights "$TMP/a.h5" "$TMP/o.h5" || fail "--order start did not change the weights"
"$MB" solve datasets/samples/conv_block.wl --solver mallocmuzero --agent "$TMP/o.h5" \
  --simulations 4 >"$TMP/out" 2>"$TMP/err" || fail "solve in start order: $(cat "$TMP/err")"
# reward shaping (--shaping): recorded in the checkpoint with its signed support, changes what
# is learned, and the agent solves with it
"$MB" train "${TINY[@]}" --steps 30 --seed 3 --shaping 1 --out "$TMP/sh.h5" \
  >/dev/null 2>"$TMP/err" || fail "--shaping 1: $(cat "$TMP/err")"
attr() { h5dump -a "$2" "$1" | sed -n 's/.*(0): \([-0-9.e]*\).*/\1/p'; }
[ "$(attr "$TMP/sh.h5" game.shaping)" = 1 ] && [ "$(attr "$TMP/sh.h5" cfg.support_min)" = -10.5 ] &&
  [ "$(attr "$TMP/sh.h5" cfg.support)" = 61 ] && [ "$(attr "$TMP/a.h5" game.shaping)" = 0 ] ||
  fail "shaping, support_min, support in the checkpoint: $(attr "$TMP/sh.h5" game.shaping)," \
    "$(attr "$TMP/sh.h5" cfg.support_min), $(attr "$TMP/sh.h5" cfg.support)"
! same_weights "$TMP/a.h5" "$TMP/sh.h5" || fail "--shaping 1 did not change the weights"
"$MB" solve datasets/samples/conv_block.wl --solver mallocmuzero-exact --agent "$TMP/sh.h5" \
  --simulations 4 >"$TMP/out" 2>"$TMP/err" || fail "solve with shaping: $(cat "$TMP/err")"
# the trained agent evaluated on a catalogue of one's own (bench muzero --catalogue)
"$MB" generate packing --buffers 24 --length 64 --seed 4 -o "$TMP/p.wl" >/dev/null ||
  fail "generate packing"
{
  echo "name kind source args hardware capacity split tags"
  echo "p-half native $TMP/p.wl - tpu-v4i 512KiB train packing"
  echo "p-full native $TMP/p.wl - tpu-v4i 1MiB train packing"
} >"$TMP/cat.txt"
"$MB" bench muzero --agent "$TMP/a.h5" --returns 0,2 --catalogue "$TMP/cat.txt" --split train \
  >"$TMP/out" 2>"$TMP/err" || fail "bench muzero --catalogue: $(cat "$TMP/err")"
grep -q "catalogue split 'train': 2 workloads" "$TMP/out" || fail "bench muzero: $(cat "$TMP/out")"
grep -q "heuristic (reference)" "$TMP/out" || fail "bench muzero: no heuristic row: $(cat "$TMP/out")"
# one search budget: one paired row, 2 against the raw policy (not 2 against itself)
[ "$(grep -cE '^  [0-9]+ vs [0-9]+ ' "$TMP/out")" = 1 ] && grep -qE '^  2 vs 0 ' "$TMP/out" ||
  fail "bench muzero --returns 0,2: paired rows: $(cat "$TMP/out")"
grep -q "leaf rollouts: learned model 0 steps, exact game 64 steps" "$TMP/out" ||
  fail "bench muzero: the solvers' leaf rollouts not stated: $(cat "$TMP/out")"
# --leaf-rollout sets both columns' rollouts; with --oracle it is refused (the oracle replaces
# parts of the learned model's nodes, not of its rollouts)
"$MB" bench muzero --agent "$TMP/a.h5" --returns 2 --catalogue "$TMP/cat.txt" --split train \
  --leaf-rollout 5 >"$TMP/out" 2>"$TMP/err" || fail "bench muzero --leaf-rollout: $(cat "$TMP/err")"
# (one count: nothing to pair)
! grep -q "paired" "$TMP/out" || fail "bench muzero --returns 2: a paired table: $(cat "$TMP/out")"
grep -q "leaf rollouts: learned model 5 steps, exact game 5 steps" "$TMP/out" ||
  fail "bench muzero --leaf-rollout 5: $(cat "$TMP/out")"
# --rescale node is the default Q normalisation: the same returns to the digit (wall times aside)
returns_of() {
  "$MB" bench muzero --agent "$TMP/a.h5" --returns 0,4,8 --episodes 3 --buffers 48 "$@" |
    sed 's/([^)]*)//g'
}
[ "$(returns_of --rescale node)" = "$(returns_of)" ] ||
  fail "bench muzero --rescale node is not the default: $(returns_of --rescale node)"
# budgets out of order: each against the first and against the one before; "largest against
# smallest" is not repeated when the first is the smallest (2,8,4) or the largest (8,2,4,6)
for case in "2,8,4:8 vs 2;4 vs 2;4 vs 8;" "8,2,4,6:2 vs 8;4 vs 8;6 vs 8;4 vs 2;6 vs 4;"; do
  list=${case%%:*}
  "$MB" bench muzero --agent "$TMP/a.h5" --returns "$list" --episodes 2 --buffers 40 \
    >"$TMP/out" 2>"$TMP/err" || fail "bench muzero --returns $list: $(cat "$TMP/err")"
  [ "$(grep -E '^  [0-9]+ vs [0-9]+ ' "$TMP/out" | awk '{ printf "%s %s %s;", $1, $2, $3 }')" = \
    "${case#*:}" ] || fail "bench muzero --returns $list: paired rows: $(cat "$TMP/out")"
done
"$MB" bench muzero --agent "$TMP/a.h5" --returns 0,2 --catalogue "$TMP/cat.txt" --split train \
  --search puct >"$TMP/out" 2>"$TMP/err" || fail "bench muzero --search puct: $(cat "$TMP/err")"
grep -q "search: pUCT (c1 1.25, c2 19652), the most visited move, no root noise" "$TMP/out" ||
  fail "bench muzero --search puct: $(cat "$TMP/out")"
"$MB" bench muzero --agent "$TMP/a.h5" --returns 2 --catalogue "$TMP/cat.txt" --split train \
  --search puct --c-puct 3 >"$TMP/out" 2>"$TMP/err" || fail "bench muzero --c-puct: $(cat "$TMP/err")"
grep -q "search: pUCT (c1 3, c2 19652)" "$TMP/out" || fail "bench muzero --c-puct 3: $(cat "$TMP/out")"
expect 2 "--search 'mcts': expected gumbel or puct" "$MB" bench muzero --agent "$TMP/a.h5" \
  --returns 2 --catalogue "$TMP/cat.txt" --split train --search mcts
expect 2 "--oracle and --leaf-rollout 5" "$MB" bench muzero --agent "$TMP/a.h5" --returns 2 \
  --catalogue "$TMP/cat.txt" --split train --oracle values --leaf-rollout 5
# --finetune-steps N: each workload is played by a copy of the agent fine-tuned on it alone for
# N updates (all of them made), the same network for any --jobs; refused beside the probes
finetuned_returns() {
  "$MB" bench muzero --agent "$TMP/a.h5" --returns 0,2 --catalogue "$TMP/cat.txt" --split train \
    --finetune-steps 40 "$@" >"$TMP/ft" 2>"$TMP/err" ||
    fail "bench muzero --finetune-steps 40 $*: $(cat "$TMP/err")"
  grep -q "fine-tuned on each workload alone for 40 updates" "$TMP/ft" &&
    grep -q "training): 80 updates in " "$TMP/ft" ||
    fail "bench muzero --finetune-steps 40 $*: not 40 updates for each of 2 workloads: $(cat "$TMP/ft")"
  grep -E '^  (0 \(raw|2  )' "$TMP/ft" | sed 's/([^)]*)//g'
}
one_job=$(finetuned_returns)
[ "$(echo "$one_job" | wc -l)" = 2 ] || fail "bench muzero --finetune-steps: rows: $one_job"
[ "$(finetuned_returns --jobs 2)" = "$one_job" ] ||
  fail "bench muzero --finetune-steps: --jobs 2 played another network: $(cat "$TMP/ft")"
expect 2 "^mallocbench bench muzero: --finetune-steps '0': expected an integer in 1\.\." \
  "$MB" bench muzero --agent "$TMP/a.h5" --returns 2 --finetune-steps 0
expect 2 "^mallocbench bench muzero: --finetune-steps applies to --returns LIST only\$" \
  "$MB" bench muzero --agent "$TMP/a.h5" --model-error 2 --finetune-steps 10
# --finetune-model trains the learned model alone: the raw policy and the exact game's column
# (the frozen networks') stay the agent's own to the digit, where fine-tuning all of it (300
# updates on each of 3 workloads) moves them
synth_rows() {
  "$MB" bench muzero --agent "$TMP/a.h5" --returns 0,2 --episodes 3 --buffers 40 "$@" \
    >"$TMP/ft" 2>"$TMP/err" || fail "bench muzero $*: $(cat "$TMP/err")"
  # "raw policy learned-2 exact-2"
  grep -E '^  (0 \(raw|2  )' "$TMP/ft" | sed 's/([^)]*)//g' | awk '{ printf "%s%s", $2, NR == 1 ? " " : " " $3 }'
}
as_is=$(synth_rows)
model_only=$(synth_rows --finetune-steps 300 --finetune-model)
grep -q "only its learned model was trained" "$TMP/ft" ||
  fail "bench muzero --finetune-model: not said: $(cat "$TMP/ft")"
all_tuned=$(synth_rows --finetune-steps 300)
[ "$all_tuned" != "$as_is" ] || fail "bench muzero --finetune-steps 300 moved nothing: $all_tuned"
[ "$(echo "$model_only" | awk '{ print $1, $3 }')" = "$(echo "$as_is" | awk '{ print $1, $3 }')" ] ||
  fail "bench muzero --finetune-model moved a frozen network: $model_only against $as_is"
expect 2 "^mallocbench bench muzero: --finetune-model needs --finetune-steps N\$" \
  "$MB" bench muzero --agent "$TMP/a.h5" --returns 2 --finetune-model
# --per-workload FILE: one row per workload and budget whose means are the printed table's
"$MB" bench muzero --agent "$TMP/a.h5" --returns 0,2,4 --episodes 3 --buffers 40 \
  --per-workload "$TMP/pw.tsv" >"$TMP/out" 2>"$TMP/err" ||
  fail "bench muzero --per-workload: $(cat "$TMP/err")"
[ "$(head -1 "$TMP/pw.tsv")" = "$(printf 'index\tworkload\tbuffers\tsimulations\tlearned\texact')" ] ||
  fail "bench muzero --per-workload: header: $(head -1 "$TMP/pw.tsv")"
[ "$(tail -n +2 "$TMP/pw.tsv" | cut -f1,3,4 | tr '\t\n' ' ;')" = \
  "0 32 0;0 32 2;0 32 4;1 36 0;1 36 2;1 36 4;2 40 0;2 40 2;2 40 4;" ] ||
  fail "bench muzero --per-workload: rows: $(cat "$TMP/pw.tsv")"
for sims in 0 2 4; do
  from_file=$(awk -F'\t' -v k=$sims 'NR > 1 && $4 == k { l += $5; x += $6; n++ }
    END { printf "%.4f %.4f", l / n, x / n }' "$TMP/pw.tsv")
  label=$sims
  [ "$sims" = 0 ] && label="0 (raw policy, no search)"
  printed=$(grep -F "  $label " "$TMP/out" | head -1 | sed 's/([^)]*)//g' | awk '{ print $(NF-1), $NF }')
  [ "$from_file" = "$printed" ] ||
    fail "bench muzero --per-workload: means at $sims simulations $from_file, printed $printed"
done
expect 2 "^mallocbench bench muzero: --per-workload applies to --returns LIST only\$" \
  "$MB" bench muzero --agent "$TMP/a.h5" --model-error 2 --per-workload "$TMP/pw2.tsv"
# a path it cannot write fails before the measurement, naming the path
expect 1 "^mallocbench bench muzero: --per-workload $TMP/none/pw\.tsv: " \
  "$MB" bench muzero --agent "$TMP/a.h5" --returns 0 --episodes 2 --per-workload "$TMP/none/pw.tsv"
[ ! -s "$TMP/out" ] || fail "bench muzero --per-workload, unwritable: measured first: $(cat "$TMP/out")"
# throughput: the exact game with and without leaf rollouts, beside the learned model
"$MB" bench muzero --agent "$TMP/a.h5" --buffers 24 --simulations 4 --seconds 1 >"$TMP/out" \
  2>"$TMP/err" || fail "bench muzero (throughput): $(cat "$TMP/err")"
for line in "learned-model search" "value network" "64-step rollouts" "updates/s"; do
  grep -q "$line" "$TMP/out" || fail "bench muzero (throughput): no '$line': $(cat "$TMP/out")"
done
# the agent trained in start order plays in it: its reference row is best fit in that order
"$MB" bench muzero --agent "$TMP/o.h5" --returns 0 --catalogue "$TMP/cat.txt" --split train \
  >"$TMP/out" 2>"$TMP/err" || fail "bench muzero, start order: $(cat "$TMP/err")"
grep -q "best fit in start order (reference)" "$TMP/out" ||
  fail "bench muzero, start order: $(cat "$TMP/out")"
# the learned search with oracle parts from the real game (bench muzero --oracle): with all of
# them its column is the exact game's, row for row
"$MB" bench muzero --agent "$TMP/a.h5" --returns 0,2,4 --catalogue "$TMP/cat.txt" --split train \
  --oracle all >"$TMP/out" 2>"$TMP/err" || fail "bench muzero --oracle all: $(cat "$TMP/err")"
grep -q "learned + oracle all" "$TMP/out" || fail "--oracle all: $(cat "$TMP/out")"
# (a row: label, learned return (wall s), exact return (wall s); returns have 4 decimals)
[ "$(grep -E '^  [0-9]+ ' "$TMP/out" | grep -v ' vs ' | while read -r row; do
  echo "$row" | grep -oE '[0-9]+\.[0-9]{4}' | sort -u | wc -l; done | sort | uniq -c |
  awk '{ print $1, $2 }')" = "3 1" ] ||
  fail "--oracle all: the learned column is not the exact one: $(cat "$TMP/out")"
# ... and so are its paired per-workload differences (label "B vs A", then 9 fields a column)
grep -q "^paired per-workload differences" "$TMP/out" || fail "no paired table: $(cat "$TMP/out")"
[ "$(grep -cE '^  [0-9]+ vs [0-9]+ ' "$TMP/out")" = 3 ] || fail "paired rows: $(cat "$TMP/out")"
grep -E '^  [0-9]+ vs [0-9]+ ' "$TMP/out" | awk '{ for (i = 4; i <= 12; i++) if ($i != $(i + 9))
  bad = 1 } END { exit bad }' || fail "--oracle all: paired columns differ: $(cat "$TMP/out")"
# the oracle's share of nodes off the real game is the rest of the nodes, in percent
# (oracle_off FILE: checks that, and prints the number of nodes off the game)
oracle_off() {
  awk '/^  oracle [a-z,]+: .* at [0-9]+ of$/ { n = $(NF - 1) }
       /^  the [0-9]+ nodes its searches/ { m = $2
         p = substr($0, index($0, "(") + 1) + 0; want = 100 * (m - n) / m }
       END { if (!(m > 0 && p - want <= 0.006 && want - p <= 0.006)) exit 1; print m - n }' "$1"
}
oracle_off "$TMP/out" >/dev/null ||
  fail "--oracle all: the share off the game: $(grep -A2 '^  oracle' "$TMP/out")"
# the returns table of the issue's acceptance (0, 2, 8, 32 in the notes; 0, 2, 4, 6 here): each
# budget against the raw policy and against the one before, and the largest against the smallest
# search budget; a paired mean is the difference of the two rows' means (to rounding)
"$MB" bench muzero --agent "$TMP/a.h5" --returns 0,2,4,6 --catalogue "$TMP/cat.txt" --split train \
  >"$TMP/out" 2>"$TMP/err" || fail "bench muzero --returns 0,2,4,6: $(cat "$TMP/err")"
[ "$(grep -oE '^  [0-9]+ vs [0-9]+ ' "$TMP/out" | tr -s ' ' | tr '\n' ,)" = \
  " 2 vs 0 , 4 vs 0 , 6 vs 0 , 4 vs 2 , 6 vs 4 , 6 vs 2 ," ] || fail "paired rows: $(cat "$TMP/out")"
awk '/^  0 \(raw policy/ { l[0] = $6; x[0] = $(NF - 2) }
     /^  [0-9]+ +[0-9.]+ \( *[0-9.]+\) +[0-9.]+ \( *[0-9.]+\)$/ { l[$1] = $2; x[$1] = $(NF - 2) }
     / vs / && NF == 21 { a = $1; b = $3; rows++
       if ($4 - (l[a] - l[b]) > 0.00015 || l[a] - l[b] - $4 > 0.00015) print $0 ": learned"
       if ($13 - (x[a] - x[b]) > 0.00015 || x[a] - x[b] - $13 > 0.00015) print $0 ": exact" }
     END { if (rows != 6) print rows + 0 " paired rows" }' "$TMP/out" >"$TMP/why"
[ -s "$TMP/why" ] && fail "paired means: $(cat "$TMP/why"): $(cat "$TMP/out")"
# one synthetic workload (--episodes 1: the sizes' spread over 32..--buffers has one step, the
# first, 32 buffers), whose paired row has counts and a sign test but no standard error
"$MB" bench muzero --agent "$TMP/a.h5" --returns 0,2 --episodes 1 --buffers 40 >"$TMP/out" \
  2>"$TMP/err" &&
  grep -q "over a synthetic workload of 32 buffers (seed 1000): 1 workloads (32 buffers)," \
    "$TMP/out" &&
  grep -qE '^  2 vs 0 +[-+][0-9.]+ \+- +- +[01] / +[01] / +[01]  1\.0000  [-+][0-9.]+ \+- +- ' \
    "$TMP/out" || fail "bench muzero --episodes 1: $(cat "$TMP/out" "$TMP/err")"
# --seed 0 given is seed 0 (1000 is only the default of --returns)
"$MB" bench muzero --agent "$TMP/a.h5" --returns 0 --episodes 1 --seed 0 >"$TMP/out" 2>"$TMP/err" &&
  grep -q "over a synthetic workload of 32 buffers (seed 0): " "$TMP/out" ||
  fail "bench muzero --seed 0: $(cat "$TMP/out" "$TMP/err")"
# four: sizes spread evenly over 32..40, rounded down: 32 + 34 + 37 + 40 buffers
"$MB" bench muzero --agent "$TMP/a.h5" --returns 0 --episodes 4 --buffers 40 >"$TMP/out" 2>"$TMP/err" &&
  grep -q "(seeds 1000\.\.1003): 4 workloads (143 buffers)," "$TMP/out" ||
  fail "bench muzero --episodes 4: $(cat "$TMP/out" "$TMP/err")"
# workload e of a synthetic set is drawn from seed --seed + e: two of 32 buffers from seed 1000
# are the one of seed 1000 and the one of seed 1001 (decisions add up, the means average)
refs() { # decisions per pass, then the heuristic's mean return
  "$MB" bench muzero --agent "$TMP/a.h5" --returns 0 "$@" |
    awk '/decisions per pass/ { for (i = 2; i <= NF; i++) if ($i == "decisions") d = $(i - 1) }
         /^  heuristic \(reference\)/ { h = $NF } END { print d, h }'
}
read -r d2 h2 < <(refs --episodes 2 --buffers 32 --seed 1000)
read -r d0 h0 < <(refs --episodes 1 --seed 1000)
read -r d1 h1 < <(refs --episodes 1 --seed 1001)
awk -v d2="$d2" -v h2="$h2" -v d0="$d0" -v h0="$h0" -v d1="$d1" -v h1="$h1" 'BEGIN {
  want = (h0 + h1) / 2
  exit !(d2 > 0 && d2 == d0 + d1 && h2 - want <= 0.00015 && want - h2 <= 0.00015) }' ||
  fail "synthetic seeds: 2 workloads from 1000: $d2 decisions, heuristic $h2; seed 1000" \
    "alone: $d0, $h0; 1001: $d1, $h1"
# an oracle with --leaf-rollout 0 (no rollouts, the learned model's own setting) is accepted, and
# at its default weight (1, real parts alone) no weight is mentioned
"$MB" bench muzero --agent "$TMP/a.h5" --returns 2 --catalogue "$TMP/cat.txt" --split train \
  --oracle values --leaf-rollout 0 >"$TMP/out" 2>"$TMP/err" ||
  fail "--oracle --leaf-rollout 0: $(cat "$TMP/err")"
! grep -q "at weight" "$TMP/out" && grep -q " learned + oracle values (wall s) " "$TMP/out" ||
  fail "--oracle at weight 1 names a weight: $(cat "$TMP/out")"
"$MB" bench muzero --agent "$TMP/a.h5" --returns 2 --catalogue "$TMP/cat.txt" --split train \
  --oracle values,masks,terminals >"$TMP/out" 2>"$TMP/err" ||
  fail "--oracle values,masks,terminals: $(cat "$TMP/err")"
# (each part named, the last one of the list too)
grep -q "^  oracle values,masks,terminals: the learned-model column takes them" "$TMP/out" ||
  fail "--oracle values,masks,terminals: $(cat "$TMP/out")"
expect 2 "--oracle 'values,depth': unknown part 'depth'" "$MB" bench muzero --agent "$TMP/a.h5" \
  --returns 2 --oracle values,depth
expect 2 "--oracle applies to --returns LIST only" "$MB" bench muzero --agent "$TMP/a.h5" \
  --oracle values
# --oracle-weight mixes the oracle's values and rewards with the learned ones: it needs one.
# Without exact masks, 8 simulations reach nodes the real game does not allow (14 of 296 here).
"$MB" bench muzero --agent "$TMP/a.h5" --returns 8 --catalogue "$TMP/cat.txt" --split train \
  --oracle values --oracle-weight 0.5 >"$TMP/out" 2>"$TMP/err" ||
  fail "--oracle-weight 0.5: $(cat "$TMP/err")"
grep -q "^  at weight 0.5: its values and rewards there are 0.5 x learned + 0.5 x real" \
  "$TMP/out" || fail "--oracle-weight 0.5: $(cat "$TMP/out")"
off=$(oracle_off "$TMP/out") && [ "$off" -gt 0 ] ||
  fail "--oracle values: the share off the game: $(grep -A2 '^  oracle' "$TMP/out")"
expect 2 "--oracle-weight 0.5 needs --oracle values or rewards" "$MB" bench muzero \
  --agent "$TMP/a.h5" --returns 2 --oracle priors --oracle-weight 0.5
# one step of policy improvement by search, judged by rollouts (bench muzero --search-regret)
"$MB" bench muzero --agent "$TMP/a.h5" --search-regret 1 --simulations 4 --catalogue \
  "$TMP/cat.txt" --split train >"$TMP/out" 2>"$TMP/err" ||
  fail "bench muzero --search-regret: $(cat "$TMP/err")"
grep -Eq "^  mean regret against the rollout-best move: raw policy [0-9.]+, learned-model search \
[0-9.]+, exact-game search [0-9.]+$" "$TMP/out" || fail "--search-regret: $(cat "$TMP/out")"
[ "$(grep -c "^  moves changed" "$TMP/out")" -eq 3 ] || fail "--search-regret: $(cat "$TMP/out")"
expect 2 "--search-regret needs --agent FILE" "$MB" bench muzero --search-regret 1
# the search's one-step evaluations against the same rollouts (bench muzero --model-error), also
# for the agent with action features (its learned first steps read the root's observation)
for ag in a af; do
  "$MB" bench muzero --agent "$TMP/$ag.h5" --model-error 1 --catalogue "$TMP/cat.txt" \
    --split train >"$TMP/out" 2>"$TMP/err" || fail "bench muzero --model-error: $(cat "$TMP/err")"
  grep -Eq "^  exact Q1 vs raw-policy rollout \|diff\| +[0-9]+\.[0-9]+$" "$TMP/out" ||
    fail "--model-error ($ag): $(cat "$TMP/out")"
  grep -Eq "^  the same relative to the siblings' +[0-9]+\.[0-9]+  \(" "$TMP/out" ||
    fail "--model-error ($ag): $(cat "$TMP/out")"
  grep -Eq "^  the policy's two favourites, ordered like the rollouts( \([0-9]+ pairs\): exact Q1 \
[01]\.[0-9]+, learned Q1\^ [01]\.[0-9]+, policy logits [01]\.[0-9]+|: no pair whose rollouts differ)$" \
    "$TMP/out" || fail "--model-error ($ag): $(cat "$TMP/out")"
  grep -Eq "^  argmax is a rollout-best action: exact Q1 [01]\.[0-9]+, learned Q1\^ [01]\.[0-9]+, \
policy logits [01]\.[0-9]+$" "$TMP/out" || fail "--model-error ($ag): $(cat "$TMP/out")"
done
expect 2 "--model-error needs --agent FILE" "$MB" bench muzero --model-error 1
# path values k steps deep, exact game and learned model (bench muzero --unroll-error): at k = 0
# both are the value network's v(h(o)), so they agree exactly; paths only shrink with k
for ag in a af; do
  "$MB" bench muzero --agent "$TMP/$ag.h5" --unroll-error 1 --catalogue "$TMP/cat.txt" \
    --split train >"$TMP/out" 2>"$TMP/err" || fail "bench muzero --unroll-error: $(cat "$TMP/err")"
  awk '/^ +[0-9]+ +[0-9]+ / { rows++
         if ($1 != rows - 1 || (rows > 1 && $2 > paths)) bad = 1
         if ($1 == 0 && ($3 != $4 || $5 != 0 || $6 != 0 || $7 != 0 || $2 < 1)) bad = 1
         paths = $2 }
       END { exit bad || rows < 2 }' "$TMP/out" || fail "--unroll-error ($ag): $(cat "$TMP/out")"
done
expect 2 "--unroll-error needs --agent FILE" "$MB" bench muzero --unroll-error 1
expect 2 "--unroll-error '0': expected an integer in" \
  "$MB" bench muzero --agent "$TMP/a.h5" --unroll-error 0
# the record's measurements in one command (scripts/measure-agent.sh): the three outputs kept,
# one table row per agent whose cells are those outputs' numbers
MALLOCBENCH=$MB ./scripts/measure-agent.sh --catalogue "$TMP/cat.txt" --out "$TMP/measure" \
  "$TMP/a.h5" "$TMP/af.h5" >"$TMP/out" 2>"$TMP/err" || fail "measure-agent.sh: $(cat "$TMP/err")"
for ag in a af; do
  for kind in returns model unroll; do
    [ -s "$TMP/measure/$ag.$kind.txt" ] || fail "measure-agent.sh: no $ag.$kind.txt"
  done
  raw=$(awk '$2 == "(raw" { print $6 }' "$TMP/measure/$ag.returns.txt")
  e0=$(awk '$1 == 0 && NF >= 7 { print $3 }' "$TMP/measure/$ag.unroll.txt")
  # 32 simulations: learned model and exact game (the wall times in brackets between them)
  read -r learned exact < <(awk '$1 == 32 && $2 ~ /^[0-9.]+$/ { print $2, $5 }' \
    "$TMP/measure/$ag.returns.txt")
  drift1=$(awk '$1 == 1 && NF >= 7 { print $5 }' "$TMP/measure/$ag.unroll.txt")
  err=$(awk '/learned Q1\^ vs exact Q1/ { print $7 }' "$TMP/measure/$ag.model.txt")
  digest=$("$MB" show "$TMP/$ag.h5" | awk '$1 == "digest" { print substr($2, 1, 8) }')
  N='[0-9]+\.[0-9]+'
  grep -Eq "^\| $ag \(\`$digest…\`\) \| $raw \| $N / $N / $learned \| [-+]$N \+- $N \([0-9]+ / \
[0-9]+ / [0-9]+\) \| $N / $N / $exact \| $e0 \| $drift1 / ($N|-) / ($N|-) \| $err / $N \($N""x\) \| \
($N / $N|-) \|$" "$TMP/out" ||
    fail "measure-agent.sh: the row of $ag ($raw, $learned, $exact, $e0, $drift1, $err): $(cat "$TMP/out")"
done
[ "$(grep -c '^| ' "$TMP/out")" = 3 ] || fail "measure-agent.sh: not a header and 2 rows: $(cat "$TMP/out")"
expect 2 "^measure-agent: agent '$TMP/none.h5' not found" ./scripts/measure-agent.sh "$TMP/none.h5"
expect 2 "^measure-agent: unknown option '--agent'" ./scripts/measure-agent.sh --agent "$TMP/a.h5"
mkdir -p "$TMP/other" && cp "$TMP/a.h5" "$TMP/other/a.h5"
expect 2 "^measure-agent: two agents named 'a'" ./scripts/measure-agent.sh "$TMP/a.h5" "$TMP/other/a.h5"
# a bad value for bench muzero: its exit status and message, through the script
expect 2 "^measure-agent: bench muzero --returns 0,2,8,32 failed on $TMP/a.h5 \(exit 2\)" \
  env MALLOCBENCH="$MB" ./scripts/measure-agent.sh --split nosuch --out "$TMP/measure" "$TMP/a.h5"
grep -q "^mallocbench bench muzero: --split 'nosuch': expected train or test" "$TMP/err" ||
  fail "measure-agent.sh: bench's own message lost: $(cat "$TMP/err")"
expect 2 "^measure-agent: '$TMP/cat.txt' is not an agent checkpoint" \
  env MALLOCBENCH="$MB" ./scripts/measure-agent.sh --out "$TMP/measure" "$TMP/cat.txt"
# ... also after a good agent, before that one is measured (nothing written for it)
expect 2 "^measure-agent: '$TMP/cat.txt' is not an agent checkpoint" \
  env MALLOCBENCH="$MB" ./scripts/measure-agent.sh --out "$TMP/measure-none" "$TMP/a.h5" "$TMP/cat.txt"
[ ! -e "$TMP/measure-none" ] || fail "measure-agent.sh: measured an agent before refusing the next"
# the next observation's window against the current one (bench muzero --next-window): shares
# in [0, 1]; buffers that all live the whole schedule share one window, so nothing is unseen
"$MB" bench muzero --agent "$TMP/a.h5" --next-window 1 --catalogue "$TMP/cat.txt" --split train \
  >"$TMP/out" 2>"$TMP/err" || fail "bench muzero --next-window: $(cat "$TMP/err")"
shares() { grep -oE '  (0|1)\.[0-9]{3} \(' "$TMP/out" | tr -d ' (' | tr '\n' ' '; }
[ "$(shares | wc -w)" -eq 3 ] || fail "--next-window: $(cat "$TMP/out")"
{
  echo "mallocbench-workload 1"
  echo "name whole"
  echo "schedule 64"
  echo "slow_time_ps 1000000"
  for b in 0 1 2 3 4 5; do echo "buffer b$b size=65536 start=0 end=63 benefit=$((b + 1))000"; done
} >"$TMP/whole.wl"
echo "name kind source args hardware capacity split tags
whole native $TMP/whole.wl - tpu-v4i 256KiB train whole" >"$TMP/whole.txt"
"$MB" bench muzero --agent "$TMP/a.h5" --next-window 1 --catalogue "$TMP/whole.txt" \
  --split train >"$TMP/out" 2>"$TMP/err" || fail "--next-window (whole): $(cat "$TMP/err")"
[ "$(shares)" = "1.000 0.000 0.000 " ] || fail "--next-window (whole): $(cat "$TMP/out")"
expect 2 "--next-window needs --agent FILE" "$MB" bench muzero --next-window 1
expect 2 "no-such-catalogue.txt" "$MB" bench muzero --agent "$TMP/a.h5" --returns 0 \
  --catalogue "$TMP/no-such-catalogue.txt" --split train
# a selection of no workload is refused, not measured as an empty set
expect 2 "^mallocbench bench muzero: no workload selected$" "$MB" bench muzero \
  --agent "$TMP/a.h5" --returns 0 --catalogue "$TMP/cat.txt" --workloads nothing-matches
# validation: held-out catalogue workloads, never trained on
"$MB" generate packing --buffers 20 --length 64 --seed 5 -o "$TMP/q.wl" >/dev/null ||
  fail "generate packing (validation)"
echo "q-half native $TMP/q.wl - tpu-v4i 512KiB test packing" >>"$TMP/cat.txt"
expect 2 "--validate 'half': 2 validation workloads are also trained on: p-half, q-half" \
  "$MB" train --catalogue "$TMP/cat.txt" --workloads . --latent 16 --steps 5 -q \
  --validate half --out "$TMP/x.h5"
expect 2 "--validate 'q-': 1 validation workload is also trained on: q-half" \
  "$MB" train --catalogue "$TMP/cat.txt" --workloads . --latent 16 --steps 5 -q \
  --validate q- --out "$TMP/x.h5"
# more than three are named by the first three
{
  echo "name kind source args hardware capacity split tags"
  for i in 1 2 3 4; do echo "v$i native $TMP/q.wl - tpu-v4i 512KiB train packing"; done
} >"$TMP/cat4.txt"
expect 2 "--validate 'v': 4 validation workloads are also trained on: v1, v2, v3, \.\.\.$" \
  "$MB" train --catalogue "$TMP/cat4.txt" --workloads . --latent 16 --steps 5 -q \
  --validate v --out "$TMP/x.h5"
expect 2 "--validate 'nothing-matches': no catalogue workload selected" \
  "$MB" train "${TINY[@]}" --steps 5 --validate nothing-matches \
  --validate-catalogue "$TMP/cat.txt" --out "$TMP/x.h5"
expect 2 "--keep-best needs --validate REGEX" \
  "$MB" train "${TINY[@]}" --steps 5 --keep-best --out "$TMP/x.h5"
[ ! -e "$TMP/x.h5" ] || fail "a refused validation run wrote a checkpoint"
"$MB" train "${NET[@]}" --steps 30 --seed 3 --eval-every 10 --validate '^(p-full|q-half)$' \
  --validate-catalogue "$TMP/cat.txt" --keep-best --out "$TMP/va.h5" >"$TMP/out" 2>"$TMP/err" ||
  fail "train --validate: $(cat "$TMP/err")"
grep -q "on the eval set, validation [0-9.]*$" "$TMP/err" || fail "progress: $(cat "$TMP/err")"
BEST="best [0-9.]* at step [0-9]*, written to $TMP/va.best.h5"
grep -q "validation set (2 held-out workloads).*$BEST" "$TMP/out" || fail "summary: $(cat "$TMP/out")"
h5dump -d /series/curve_validation "$TMP/va.h5" | grep -q "SIMPLE { ( 4 ) / ( 4 ) }" ||
  fail "no 4-point validation series: $(h5dump -d /series/curve_validation "$TMP/va.h5")"
! h5dump -d /series/curve_validation "$TMP/va.h5" | grep -qi nan || fail "NaN in the series"
h5dump -a /training "$TMP/va.best.h5" | grep -q "kept as the best validation return" ||
  fail "the best agent does not record its step and return"
"$MB" bench muzero --agent "$TMP/va.best.h5" --returns 0 --catalogue "$TMP/cat.txt" --split test \
  >/dev/null 2>"$TMP/err" || fail "the best agent does not load: $(cat "$TMP/err")"
# evaluation draws from no training stream: the weights of the same run without validation
same_weights "$TMP/a.h5" "$TMP/va.h5" || fail "--validate changed the weights"
# another run's best agent is never replaced by accident; a resumed run rewrites its own
echo "not an agent" >"$TMP/vb.best.h5"
expect 2 "--keep-best: $TMP/vb.best.h5 exists" \
  "$MB" train "${NET[@]}" --steps 5 --validate '^(p-full|q-half)$' \
  --validate-catalogue "$TMP/cat.txt" --keep-best --out "$TMP/vb.h5"
[ "$(cat "$TMP/vb.best.h5")" = "not an agent" ] || fail "a refused run replaced a best agent"
[ ! -e "$TMP/vb.h5" ] || fail "a refused --keep-best run wrote a checkpoint"
"$MB" train "${NET[@]}" --steps 5 --validate '^(p-full|q-half)$' --validate-catalogue \
  "$TMP/cat.txt" --keep-best --force --out "$TMP/vb.h5" >/dev/null 2>"$TMP/err" ||
  fail "--keep-best --force: $(cat "$TMP/err")"
h5dump -a /training "$TMP/vb.best.h5" >/dev/null 2>&1 || fail "--force did not replace the best"
"$MB" train "${NET[@]}" --steps 40 --seed 3 --eval-every 10 --validate '^(p-full|q-half)$' \
  --validate-catalogue "$TMP/cat.txt" --keep-best --resume "$TMP/va.h5" --out "$TMP/va.h5" \
  >/dev/null 2>"$TMP/err" || fail "a resumed --keep-best run refused its own best: $(cat "$TMP/err")"
echo "train e2e: ok"
