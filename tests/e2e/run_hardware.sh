#!/usr/bin/env bash
# `mallocbench run --hardware LIST`: every workload on each profile of the list, by name or path.
# - every workload gets one case per profile, each with the catalogue entry's capacity (the
#   entry sizes fast memory for its workload) and everything else from the profile;
# - a profile given by path is recorded with its file's SHA-256; halving the slow memory's
#   bandwidth makes every all-slow time longer, by at most twice;
# - the file verifies, and `run --resume` reuses every task (the plan is the same);
# - an unknown profile, two profiles of one name (their cases would merge in every table: before,
#   they did) and more than 16 profiles exit 2 naming the cause, and write nothing.
# Usage: run_hardware.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: run_hardware.sh MALLOCBENCH_BINARY}
SRC=$(pwd)
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"

cat >"$TMP/cat.txt" <<CAT
name kind source args hardware capacity split tags
mlp_tiny native $SRC/datasets/samples/mlp_tiny.wl - tpu-v4i 1MiB train quick
attention native $SRC/datasets/samples/attention_block.wl - edge-npu 8MiB test quick
conv native $SRC/datasets/samples/conv_block.wl - tpu-v4i 4MiB test quick
CAT
# tpu-v4i with half its HBM bandwidth, under another name
sed -e 's/^name *=.*/name = slowhbm/' -e 's/^slow_bandwidth *=.*/slow_bandwidth = 307 GB\/s/' \
  "$SRC/datasets/hardware/tpu-v4i.txt" >"$TMP/slowhbm.txt"
grep -q "^slow_bandwidth = 307 GB/s" "$TMP/slowhbm.txt" || fail "could not derive the test profile"

OPTS=(--catalogue "$TMP/cat.txt" --workloads . --solvers heuristic,greedy --budget 0.05 --no-progress)
"$MB" run "${OPTS[@]}" --hardware "tpu-v4i,$TMP/slowhbm.txt" --out "$TMP/h.h5" >"$TMP/run" \
  2>"$TMP/err" || fail "run --hardware: $(cat "$TMP/err")"
grep -q "^run: 18 tasks (12 jobs + 6 baselines), 18 computed here" "$TMP/run" || fail "plan: $(cat "$TMP/run")"
"$MB" export "$TMP/h.h5" --csv "$TMP/csv" >/dev/null 2>"$TMP/err" || fail "export: $(cat "$TMP/err")"

# baselines: workload,hardware -> capacity, slow_bandwidth, profile sha, t_slow
SHA=$(sha256sum "$TMP/slowhbm.txt" | cut -d' ' -f1)
awk -F, -v sha="$SHA" '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { w = $c["workload"]; h = $c["hardware"]; n[w]++
    cap[w, h] = $c["capacity"]; tslow[w, h] = $c["t_slow_ps"]
    if (h == "slowhbm" && $c["profile_sha256"] != sha) print w ": slowhbm sha " $c["profile_sha256"]
    if (h == "slowhbm" && $c["slow_bandwidth"] != 307000000000) print w ": slowhbm bandwidth " $c["slow_bandwidth"]
    if (h == "tpu-v4i" && $c["slow_bandwidth"] != 614000000000) print w ": tpu-v4i bandwidth " $c["slow_bandwidth"]
    if (h != "tpu-v4i" && h != "slowhbm") print w ": hardware " h " not asked for" }
  END {
    want["mlp_tiny"] = 1048576; want["attention"] = 8388608; want["conv"] = 4194304
    for (w in want) {
      if (n[w] != 2) print w ": " n[w] + 0 " baselines, expected 2"
      if (cap[w, "tpu-v4i"] != want[w] || cap[w, "slowhbm"] != want[w])
        print w ": capacity " cap[w, "tpu-v4i"] " / " cap[w, "slowhbm"] ", expected the entry'"'"'s " want[w]
      a = tslow[w, "tpu-v4i"]; b = tslow[w, "slowhbm"]
      if (!(b > a && b <= 2 * a)) print w ": T_slow " a " on tpu-v4i, " b " at half the bandwidth"
    } }' "$TMP/csv/baselines.csv" >"$TMP/why"
[ -s "$TMP/why" ] && fail "baselines: $(cat "$TMP/why")"
[ "$(awk -F, 'NR > 1' "$TMP/csv/results.csv" | wc -l)" = 12 ] || fail "expected 12 result rows"
stdout_has -F "6 workload x hardware case(s)" "$MB" summary "$TMP/h.h5" || fail "summary: $("$MB" summary "$TMP/h.h5")"
"$MB" verify "$TMP/h.h5" >"$TMP/out" 2>&1 || fail "verify: $(cat "$TMP/out")"
"$MB" run --resume "$TMP/h.h5" --no-progress >"$TMP/run" 2>"$TMP/err" || fail "resume: $(cat "$TMP/err")"
grep -q "0 computed here, 18 reused" "$TMP/run" || fail "resume recomputed: $(cat "$TMP/run")"

# errors: nothing written
sed -e 's/^slow_bandwidth *=.*/slow_bandwidth = 100 GB\/s/' "$SRC/datasets/hardware/tpu-v4i.txt" >"$TMP/other.txt"
expect 2 "^mallocbench run: --hardware: hardware profile 'nope' not found" \
  "$MB" run "${OPTS[@]}" --hardware tpu-v4i,nope --out "$TMP/x.h5"
expect 2 "^mallocbench run: --hardware: 'tpu-v4i' is a second profile named 'tpu-v4i'" \
  "$MB" run "${OPTS[@]}" --hardware tpu-v4i,tpu-v4i --out "$TMP/x.h5"
expect 2 "^mallocbench run: --hardware: '$TMP/other.txt' is a second profile named 'tpu-v4i'" \
  "$MB" run "${OPTS[@]}" --hardware "tpu-v4i,$TMP/other.txt" --out "$TMP/x.h5"
many=""
for i in $(seq 17); do
  sed -e "s/^name *=.*/name = p$i/" "$SRC/datasets/hardware/tpu-v4i.txt" >"$TMP/p$i.txt"
  many="$many${many:+,}$TMP/p$i.txt"
done
expect 2 "^mallocbench run: --hardware: more than 16 profiles" \
  "$MB" run "${OPTS[@]}" --hardware "$many" --out "$TMP/x.h5"
[ ! -e "$TMP/x.h5" ] || fail "a refused run wrote its results file"
echo "run_hardware: ok"
