#!/usr/bin/env bash
# `mallocbench bench core | solvers | nn | muzero | game` at their smallest sizes, through the CLI:
# - bench core: a row per size with its own consistency checks passed (write -> parse round
#   trip, incremental == full cost, the packing valid), times positive;
# - bench solvers: the three sections; on every catalogue workload it solves, the greedy is never
#   slower than the heuristic (it starts from the heuristic's answer and only accepts
#   improvements), so heur/grd >= 1 and its gap to the LP bound is at most the heuristic's; data
#   that is missing is reported as skipped, not as a failure; every catalogue entry's row shows
#   its full name; section 1's capacity is a quarter of its peak live bytes;
# - bench nn: a row per network x batch x pass, with positive rates, and sgemm measured before
#   and after;
# - --seconds of bench game, nn and muzero: fractional seconds accepted (bench muzero's throughput
#   header says its rates are wall clock), the same range (0, 3600] and message everywhere;
# - bench muzero's throughput: every rate beside its ratio to a reference measured in the same
#   run (simulations/s to the learned-model search's, decisions/s to the raw policy's);
# - bench muzero --returns LIST: more than 16 counts are refused naming the bound, 16 accepted, a
#   count listed twice refused naming it, a malformed list (a bad, empty or out-of-range count)
#   refused quoting it;
# - a value given as --flag=VALUE reaches the run (bench game's workload, seed and actions, bench
#   core's sizes and seed; cli_usage.sh checks every option's errors in both spellings).
# The external data directory is an empty one here: the packer on MiniMalloc's instances takes
# half a minute under AddressSanitizer, and its answers are checked by test_packer.
# Usage: bench_quick.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: bench_quick.sh MALLOCBENCH_BINARY}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir "$TMP/nodata"
# OFF, for the awk programs that check printed numbers: off(x, want, tol) is true when x is
# more than tol away from want
OFF='function off(x, want, tol) { return x - want > tol || want - x > tol }'

# ---- bench core ----
"$MB" bench core --max 1000 >"$TMP/core" 2>"$TMP/err" || fail "bench core: $(cat "$TMP/err")"
awk '$1 == 1000 && $3 == "wall" { found = 1
       for (i = 4; i <= 9; i++) if ($i + 0 <= 0) bad = bad " column " i "=" $i
       if ($NF != "ok") bad = bad " check=" $NF }
     END { if (!found) print "no row for 1000 buffers"; else if (bad) print bad }' "$TMP/core" >"$TMP/why"
[ -s "$TMP/why" ] && fail "bench core: $(cat "$TMP/why"): $(cat "$TMP/core")"
grep -q "^check: round trip write->parse equal, incremental cost == full cost, packing valid.$" \
  "$TMP/core" || fail "bench core: no check line: $(cat "$TMP/core")"
# its numbers are plausible and hold together: every time below 1 ms per buffer (about 10 us
# under ASan), the measuring thread's CPU time above 0 and never above the wall time (1% and
# 0.5 ns for the clocks' reads), val/log2n validate / log2(1000) to rounding, and the random
# packing puts 50-80% of the buffers in fast memory ("~70% of the unpinned ones", 5% pinned)
awk "$OFF"'$1 == 1000 && $3 == "wall" { fast = $2; for (i = 4; i <= 8; i++) wall[i] = $i; rows++; next }
     rows == 1 && $1 == "cpu" { rows++
       for (i = 2; i <= 6; i++) cpu[i + 2] = $i
       for (i = 4; i <= 8; i++) {
         if (wall[i] >= 1e6 || cpu[i] >= 1e6) print "column " i ": " wall[i] " / " cpu[i] " ns"
         if (cpu[i] > 1.01 * wall[i] + 0.5 || cpu[i] <= 0) print "column " i ": cpu " cpu[i] ", wall " wall[i] }
       l = $NF; v = $(NF - 1) / log(1000) * log(2)
       if (off(l, v, 0.006 + 0.001 * v)) print "cpu val/log2n " l " != " v }
     END { if (rows != 2) print "no wall and cpu rows for 1000 buffers"
           else if (fast < 500 || fast > 800) print fast " of 1000 buffers in fast memory" }' \
  "$TMP/core" >"$TMP/why"
[ -s "$TMP/why" ] && fail "bench core: $(cat "$TMP/why"): $(cat "$TMP/core")"

# ---- bench solvers ----
# (one MiniMalloc file, B, is MiniMalloc's 5-buffer example in its place: section 3 packs it)
mkdir "$TMP/mmdata" "$TMP/mmdata/minimalloc"
printf 'id,lower,upper,size\n0,0,3,4\n1,3,9,4\n2,0,9,4\n3,9,21,4\n4,0,21,4\n' \
  >"$TMP/mmdata/minimalloc/B.1048576.csv"
"$MB" bench solvers --max 1000 --budget 0.05 --bound-budget 5 --data "$TMP/mmdata" >"$TMP/solvers" \
  2>"$TMP/err" || fail "bench solvers: $(cat "$TMP/err")"
for s in "== 1. scaling on random workloads" "== 2. quality on the catalogue" "== 3. exact packer"; do
  grep -q "^$s" "$TMP/solvers" || fail "bench solvers: no section '$s'"
done
# section 1: the 1000-buffer row, T ratio = T_heuristic / T_greedy >= 1; the capacity is a
# quarter of the peak live bytes rounded down to 512 B; the construction's time per buffer (us,
# > 0: it ran) and per n log2 n (ns) agree to rounding; wall times below a minute
awk "$OFF"'/^== 1/ { f = 1; next } /^\(T ratio/ { f = 0 } f && $1 == 1000 { found = 1; if ($11 + 0 < 1) print "T ratio " $11
       if ($3 < 2048 || $4 != int($3 / 4 / 512) * 512) print "capacity " $4 " of peak " $3
       want = $8 * 1000 / (log(1000) / log(2))
       if (off($9, want, 0.52)) print "constr ns/nlgn " $9 " != " want
       if ($5 >= 60 || $6 >= 60 || $7 >= 60 || $8 <= 0) print "wall times " $5 ", " $6 ", " $7 ", " $8 " us/b" }
     END { if (!found) print "no 1000-buffer row" }' "$TMP/solvers" >"$TMP/why"
[ -s "$TMP/why" ] && fail "bench solvers scaling: $(cat "$TMP/why")"
# section 2: columns workload buffers capacity heur/grd gap_h gap_g heur_s greedy_s bound_s LP
awk "$OFF"'/^== 2/ { f = 1; next } /^== 3/ { f = 0 }
     f && $NF == "solved" { n++
       if ($4 + 0 < 1) print $1 ": heur/grd " $4 " < 1"
       r = (100 + $5) / (100 + $6) # T_h / T_g from the gaps to the same bound
       if (off($4, r, 0.0002)) print $1 ": heur/grd " $4 " != " r " from the gaps"
       if ($6 > $5 + 1e-9) print $1 ": greedy gap " $6 " > heuristic gap " $5 }
     f && / skipped: / { skipped++ }
     END { if (n < 20) print "only " n + 0 " solved catalogue rows"; if (skipped < 1) print "no skipped row" }' \
  "$TMP/solvers" >"$TMP/why"
[ -s "$TMP/why" ] && fail "bench solvers quality: $(cat "$TMP/why")"
grep -qE "^A +skipped: $TMP/mmdata/minimalloc/A\.1048576\.csv: cannot read" "$TMP/solvers" ||
  fail "bench solvers: missing MiniMalloc data not reported as skipped"
# section 3: the example packs into its 12 bytes, as best fit does (exit 0: solved)
grep -qE "^B +5 +solved +[0-9.]+ +[0-9]+ +0 +12$" "$TMP/solvers" ||
  fail "bench solvers: section 3: $(sed -n '/^== 3/,$p' "$TMP/solvers")"
# section 2 names every catalogue entry in full (solved or skipped), never cut: two entries share
# their first 28 characters (bert_pt_xla_adam_step_nofusion-tpu and -edge)
awk 'NR == FNR { if ($1 !~ /^#/ && NF && $1 != "name") want[$1] = 1; next }
     /^== 2/ { f = 1; next } /^== 3/ { f = 0 }
     f && ($1 in want) { seen[$1] = 1 }
     END { for (n in want) if (!(n in seen)) print n }' datasets/catalogue.txt "$TMP/solvers" >"$TMP/why"
[ -s "$TMP/why" ] && fail "bench solvers: catalogue entries without a row of their full name: $(cat "$TMP/why")"
grep -q "bert_pt_xla_adam_step_nofusion-edge" datasets/catalogue.txt ||
  fail "the catalogue no longer has the two long names this checks"
# Without a catalogue (an unreadable or an empty one, under MALLOCBENCH_HOME), section 2 measures
# the samples (*.wl; the HLO dumps too, none here), with fast memory a quarter of their peak live
# bytes in 512 B steps, and no other file of the folder
H=$TMP/home
mkdir -p "$H/datasets/samples" "$H/results"
cp datasets/samples/mlp_tiny.wl datasets/samples/train_step.wl "$H/datasets/samples/"
echo "not a workload" >"$H/datasets/samples/notes.txt"
echo "not a workload" >"$H/datasets/samples/.wl"
for catalogue in "" "name kind source args hardware capacity split tags"; do
  if [ -n "$catalogue" ]; then echo "$catalogue"; fi >"$H/datasets/catalogue.txt"
  env MALLOCBENCH_HOME="$H" "$MB" bench solvers --max 1000 --budget 0.05 --bound-budget 5 \
    --data "$TMP/nodata" >"$TMP/solvers2" 2>"$TMP/err" || fail "bench solvers without a catalogue: $(cat "$TMP/err")"
  why=${catalogue:+empty}
  grep -qF "== 2. quality on the samples and HLO files (no catalogue: ${why:-$H/datasets/catalogue.txt:0: no header line}" \
    "$TMP/solvers2" || fail "bench solvers, catalogue '$catalogue': $(grep '^== 2' "$TMP/solvers2")"
  for wl in mlp_tiny:9699328 train_step:10485760; do # name:peak live bytes (mallocbench show)
    cap=$((${wl#*:} / 4 / 512 * 512))
    grep -qE "^${wl%%:*} +[0-9]+ +$cap +[0-9.]+ .* solved$" "$TMP/solvers2" ||
      fail "bench solvers without a catalogue: no row '${wl%%:*}' at $cap B: $(sed -n '/^== 2/,/^== 3/p' "$TMP/solvers2")"
  done
  [ "$(sed -n '/^== 2/,/^== 3/p' "$TMP/solvers2" | grep -cE "solved$|skipped")" = 2 ] ||
    fail "bench solvers without a catalogue measured other files: $(sed -n '/^== 2/,/^== 3/p' "$TMP/solvers2")"
done

# ---- bench nn ----
"$MB" bench nn --width 32 --obs 40 --batch 8 --seconds 0.01 >"$TMP/nn" 2>"$TMP/err" ||
  fail "bench nn: $(cat "$TMP/err")"
for net in representation dynamics prediction; do
  grep -qE "^  $net +[1-9][0-9]* parameters$" "$TMP/nn" || fail "bench nn: no parameter count for $net"
  for batch in 1 8; do
    for pass in forward fwd+bwd; do
      awk -v net="$net" -v b="$batch" -v p="$pass" '$1 == net && $2 == b && $3 == p { found = 1
             for (i = 4; i <= 7; i++) if ($i + 0 <= 0) print net " " b " " p ": column " i " = " $i }
           END { if (!found) print "no row " net " " b " " p }' "$TMP/nn" >"$TMP/why"
      [ -s "$TMP/why" ] && fail "bench nn: $(cat "$TMP/why")"
    done
  done
done
[ "$(grep -c "^CBLAS sgemm n=1024" "$TMP/nn")" = 2 ] || fail "bench nn: sgemm not measured before and after"
# its numbers hold together: % peak is GFLOP/s over the first sgemm's (to the rounding of the three
# printed numbers: % to 0.05, GFLOP/s to 0.005, the peak to 0.05); the drift in percent is
# that of the two sgemm rates; the sgemv rows are batch 1's, one per network, and the sgemv
# speed-ups are their samples/s over batch 1's forward; every forward row of a network counts
# the same FLOPs per sample, and fwd+bwd three times that (dW and dx), less the representation
# first layer's dx (2 x 40 x 32); the dynamics is the representation's network with width +
# actions inputs instead of obs (here 48 instead of 40: 8 x 32 more weights); sgemv's outputs
# differ from sgemm's by float rounding only. Whether sgemv is faster is measured, not asserted:
# at --seconds 0.01 on a loaded 2-core machine its speed-up has read 0.78x.
awk "$OFF"'
     /^CBLAS sgemm n=1024: / { peak = $4; if (peak < 0.5 || peak > 1e5) print "sgemm " peak " GFLOP/s" }
     /^CBLAS sgemm n=1024 again/ { drift = substr($10, 2) + 0
       ratio = $8 / peak   # both rates printed to 0.05 GFLOP/s, the drift to 0.5%
       if (off(drift, 100 * (ratio - 1), 0.51 + 100 * ratio * (0.05 / $8 + 0.05 / peak))) print "drift " $10 " for " peak " -> " $8 }
     /^  [a-z]+ +[0-9]+ parameters$/ { params[$1] = $2 }
     $2 ~ /^[0-9]+$/ && $NF ~ /%$/ { rows++
       pct = 100 * $(NF - 1) / peak   # from the printed (rounded) GFLOP/s and peak, hence the tolerance
       if (off($NF + 0, pct, 0.051 + pct * (0.005 / $(NF - 1) + 0.05 / peak))) print $0 ": % peak of " peak
       if ($4 == "sgemv") { sgemv[$1] = $(NF - 2); if ($2 != 1) print $0 ": sgemv at batch " $2 }
       if ($3 == "forward" && $2 == 1) fwd1[$1] = $(NF - 2)
       rel = 0.005 / $(NF - 1) + 0.5 / $(NF - 2)   # relative rounding of GFLOP/s over samples/s
       if ($3 == "forward" || $4 == "sgemv") {
         f = $(NF - 1) * 1e9 / $(NF - 2)
         if ($1 in per) { if (off(f, per[$1], f * (rel + per_rel[$1]) + 2)) print $0 ": " f " FLOPs per sample, not " per[$1] }
         else { per[$1] = f; per_rel[$1] = rel } }
       if ($3 == "fwd+bwd") { bwd[$1] = $(NF - 1) * 1e9 / $(NF - 2); bwd_rel[$1] = rel } }
     /faster \(sgemm packs/ || /sgemv instead of sgemm/ { para = 1 }
     para { text = text " " $0 } /float rounding/ { para = 0 }
     END {
       if (length(sgemv) != 3) print length(sgemv) " sgemv rows"
       for (net in sgemv) {
         if (!match(text, net " [0-9.]+x")) { print "no sgemv speed-up for " net; continue }
         x = substr(text, RSTART + length(net) + 1, RLENGTH - length(net) - 2) + 0
         if (off(x, sgemv[net] / fwd1[net], 0.006 + 0.003 * x)) print net " sgemv " x "x, rows give " sgemv[net] / fwd1[net]
         want = 3 * per[net] - (net == "representation" ? 2 * 40 * 32 : 0)
         if (off(bwd[net], want, want * (per_rel[net] + bwd_rel[net] + 0.001))) print net " fwd+bwd: " bwd[net] " FLOPs per sample, not " want }
       if (!match(text, /at most [^ ]+, [^ ]+, [^ ]+ of/)) print "no output differences"
       else { split(substr(text, RSTART + 8, RLENGTH - 11), d, ", ")
              for (i = 1; i <= 3; i++) if (d[i] + 0 < 0 || d[i] + 0 > 1e-4) print "sgemv output difference " d[i] }
       if (params["dynamics"] - params["representation"] != 8 * 32) print "parameters " params["representation"] " / " params["dynamics"] }' \
  "$TMP/nn" >"$TMP/why"
[ -s "$TMP/why" ] && fail "bench nn: $(cat "$TMP/why"): $(cat "$TMP/nn")"

# ---- bench core --help: every column, the cpu clock the measuring thread's ----
"$MB" bench core --help >"$TMP/core_help" || fail "bench core --help"
for col in "  fast " "  clock " "  check "; do
  grep -q "^$col" "$TMP/core_help" || fail "bench core --help does not document column '$col'"
done
grep -q "CLOCK_THREAD_CPUTIME_ID" "$TMP/core" || fail "bench core: the cpu line is not the thread's clock"

# ---- --seconds: positive seconds, fractional allowed, the same limits and message everywhere ----
"$MB" bench muzero --seconds 0.05 --buffers 24 --simulations 2 >"$TMP/mz" 2>"$TMP/err" ||
  fail "bench muzero --seconds 0.05: $(cat "$TMP/err")"
grep -q "^mallocMuZero throughput: rates per second of wall clock" "$TMP/mz" ||
  fail "bench muzero: the throughput header does not say wall clock: $(cat "$TMP/mz")"
grep -q "^agent: fresh (untrained), latent 128 (minmax), 1 residual block(s)" "$TMP/mz" ||
  fail "bench muzero: the agent line does not describe the fresh agent: $(cat "$TMP/mz")"
# the throughput table: each rate beside its ratio to the reference measured in the same run
# (vs learned: simulations/s over the learned-model search's; vs raw: decisions/s over the raw
# policy's), the ratios those of the printed rates (to rounding), the references' own 1.00
grep -qE "^  measurement +simulations/s +vs learned +decisions/s +vs raw$" "$TMP/mz" ||
  fail "bench muzero: no ratio columns: $(cat "$TMP/mz")"
grep -qE "^  raw policy \(no search\) +- +- +[1-9][0-9]* +1\.00$" "$TMP/mz" ||
  fail "bench muzero: raw policy row: $(cat "$TMP/mz")"
grep -qE "^  learned-model search, 2 sims +[1-9][0-9]* +1\.00 +[1-9][0-9]* +[0-9.]+$" "$TMP/mz" ||
  fail "bench muzero: learned-model search row: $(cat "$TMP/mz")"
awk "$OFF"'
     / sims/ && /search/ && NF >= 8 { rows++; s = $(NF - 3); d = $(NF - 1)
       if (/^  learned-model search/) { ref_s = s }
       if (ref_s == "") { print "the learned-model row is not the first search row"; exit }
       w = s / ref_s; if (off($(NF - 2), w, 0.01 * w + 0.001)) print $0 ": vs learned " $(NF - 2) " != " s " / " ref_s
       w = d / ref_d; if (off($NF, w, 0.01 * w + 0.001)) print $0 ": vs raw " $NF " != " d " / " ref_d }
     /^  raw policy \(no search\)/ { ref_d = $(NF - 1) }
     /^  training / { if (!match($0, /self-play decisions\/s \(vs raw [0-9.]+\)$/)) print "training: " $0 }
     END { if (rows != 3) print rows + 0 " search rows, expected 3" }' "$TMP/mz" >"$TMP/why"
[ -s "$TMP/why" ] && fail "bench muzero ratios: $(cat "$TMP/why"): $(cat "$TMP/mz")"
"$MB" bench game --random 40 --seconds 0.02 >"$TMP/game" 2>"$TMP/err" ||
  fail "bench game --seconds 0.02: $(cat "$TMP/err")"
# bench game's numbers hold together: each rate is its count over its seconds (to the printed
# rounding); each measurement ran for a good share of --seconds and not far past it (branch,
# rollback and copy time only their own part of their loop); the ratios are those of the
# printed rates
"$MB" bench game --random 40 --seconds 0.2 >"$TMP/game3" 2>"$TMP/err" ||
  fail "bench game --seconds 0.2: $(cat "$TMP/err")"
awk "$OFF"'
     / s\)$/ { n++; r = $(NF - 5); c = substr($(NF - 3), 2); t = $(NF - 1); rate[$(NF - 4)] = r
       if (t < 0.05 || t > 1) print $0 ": ran " t " s, --seconds 0.2"
       else if (off(r, c / t, 0.04 * r)) print $0 ": rate != count / seconds"
       if ($(NF - 4) == "steps/s") { if (steps) obs = r; else steps = r } }
     /observe\(\) cost per step/ { w = steps / obs - 1; x = $(NF - 4) }
     /branches per second/ { w = rate["branches/s"] / steps; x = $NF }
     /undo vs copy for a full/ { w = rate["rollbacks/s"] / rate["copies/s"]; x = $(NF - 7) }
     /undo vs copy to branch/ { w = rate["branches/s"] / rate["copies/s"]; x = $(NF - 7) }
     /^  (observe|branches per|undo vs)/ && off(x, w, 0.01 * w + 0.011) { print $0 " (" w ")" }
     /^ratios/ { ratios = 1 }
     END { if (n != 5 || !ratios) print n + 0 " rate lines, ratios " ratios + 0 }' "$TMP/game3" >"$TMP/why"
[ -s "$TMP/why" ] && fail "bench game: $(cat "$TMP/why"): $(cat "$TMP/game3")"
# --fraction 0 keeps the hardware profile's fast memory (128 MiB for tpu-v4i)
"$MB" bench game --random 40 --seconds 0.01 --fraction 0 >"$TMP/game4" 2>"$TMP/err" ||
  fail "bench game --fraction 0: $(cat "$TMP/err")"
grep -q "^hardware tpu-v4i, fast memory 134217728 B (profile), 16 actions" "$TMP/game4" ||
  fail "bench game --fraction 0: $(cat "$TMP/game4")"
# --fraction F: fast memory F x the peak live bytes (mlp_tiny: 9699328 B); with room for all, every
# buffer is a decision, and the walk back along an episode visits as many states as it has
"$MB" bench game datasets/samples/mlp_tiny.wl --seconds 0.01 --fraction 0.5 >"$TMP/game6" 2>"$TMP/err" &&
  grep -q "^hardware tpu-v4i, fast memory 4849664 B (fraction of peak live bytes)" "$TMP/game6" ||
  fail "bench game --fraction 0.5: $(cat "$TMP/game6" "$TMP/err")"
"$MB" generate packing --buffers 30 -o "$TMP/p30.wl" >/dev/null || fail "generate packing"
"$MB" bench game "$TMP/p30.wl" --seconds 0.01 --fraction 100 >"$TMP/game6" 2>"$TMP/err" &&
  grep -q "^workload packing_n30_s0 ($TMP/p30.wl): 30 buffers, 30 visited, 30 decisions" "$TMP/game6" ||
  fail "bench game, every buffer a decision: $(cat "$TMP/game6" "$TMP/err")"
# Without a workload, bench game takes the sample or HLO dump with the most buffers: not a file of
# the HLO folder with another extension, even a bigger workload
HLO=${MALLOCBENCH_DATA:-../shared/data}/hlo/gpt2_pt_xla.hlo
if [ -f "$HLO" ]; then
  mkdir -p "$TMP/d/hlo"
  cp "$HLO" "$TMP/d/hlo/"
  "$MB" generate packing --buffers 600 -o "$TMP/d/hlo/bigger.wl" >/dev/null || fail "generate packing"
  "$MB" bench game --data "$TMP/d" --seconds 0.01 >"$TMP/game5" 2>"$TMP/err" ||
    fail "bench game --data: $(cat "$TMP/err")"
  grep -qF "workload gpt2_pt_xla ($TMP/d/hlo/gpt2_pt_xla.hlo): 77 buffers" "$TMP/game5" ||
    fail "bench game without a workload: $(head -2 "$TMP/game5")"
else
  echo "note: $HLO missing: bench game's choice of workload not checked"
fi

# ---- --flag=VALUE is --flag VALUE, as in every command: the values reach the run ----
"$MB" bench game --random=40 --seed=2 --actions=8 --seconds=0.02 >"$TMP/game2" 2>"$TMP/err" ||
  fail "bench game --random=40 ...: $(cat "$TMP/err")"
if ! grep -q "^workload random-40 (random, seed 2): 40 buffers" "$TMP/game2" ||
  ! grep -q ", 8 actions, " "$TMP/game2"; then
  fail "bench game --random=40 --seed=2 --actions=8: $(cat "$TMP/game2")"
fi
"$MB" bench core --max=1000 --seed=3 >"$TMP/core2" 2>"$TMP/err" || fail "bench core --max=1000: $(cat "$TMP/err")"
sizes=$(awk '$1 ~ /^[0-9]+$/ && $3 == "wall" { print $1 }' "$TMP/core2")
if ! grep -q "seed 3;$" "$TMP/core2" || [ "$sizes" != 1000 ]; then
  fail "bench core --max=1000 --seed=3: $(cat "$TMP/core2")"
fi
for cmd in game nn muzero; do
  for v in 0 -1 3601 0.5s nan; do
    "$MB" bench $cmd --seconds $v >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ $rc = 2 ] || fail "bench $cmd --seconds $v: exit $rc, expected 2"
    [ "$(cat "$TMP/err")" = "mallocbench bench $cmd: --seconds '$v': expected a number in (0, 3600]" ] ||
      fail "bench $cmd --seconds $v: $(cat "$TMP/err")"
  done
  "$MB" bench $cmd --help | grep -q -- "--seconds" || fail "bench $cmd --help lacks --seconds"
done
# ---- bench muzero --returns LIST: at most 16 simulation counts, each 0..4096 ----
# 17 are refused with the bound named (they were cut to the first 16 without a word); 16 pass the
# list's checks (the next complaint is the missing --agent); a malformed list is quoted whole
# refused_returns LIST MESSAGE: bench muzero --returns LIST exits 2 with exactly MESSAGE
refused_returns() {
  "$MB" bench muzero --returns "$1" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  [ $rc = 2 ] || fail "bench muzero --returns '$1': exit $rc, expected 2"
  [ "$(cat "$TMP/err")" = "mallocbench bench muzero: --returns '$1': $2" ] ||
    fail "bench muzero --returns '$1': $(cat "$TMP/err")"
}
seventeen=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16
refused_returns "$seventeen" "17 simulation counts, at most 16 in one run"
"$MB" bench muzero --returns "${seventeen%,16}" >"$TMP/out" 2>"$TMP/err"
[ "$(cat "$TMP/err")" = "mallocbench bench muzero: --returns needs --agent FILE" ] ||
  fail "bench muzero --returns with 16 counts: $(cat "$TMP/err")"
for v in 0,2x 0,,2 "0,2," "" " 2" 4097 -1; do
  refused_returns "$v" "expected simulation counts in 0..4096 separated by commas, like 0,2,8,32"
done
# a count listed twice would play the same episodes twice: refused, naming it (also 0)
refused_returns 0,2,2 "2 is listed twice"
refused_returns 0,2,8,0 "0 is listed twice"
echo "bench_quick: ok"
