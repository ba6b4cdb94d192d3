# small_run OUT: a finished run of two sample workloads x (heuristic, greedy) x 3 seeds into OUT,
# its catalogue in $TMP/cat.txt: 12 result rows (0-5 mlp_tiny: heuristic seeds 0-2, then greedy;
# 6-11 attention) and 2 baselines (0 mlp_tiny, 1 attention). Needs $MB, $SRC, $TMP and fail
# (expect.bash). The reference file of the verify_* stress tests.
small_run() {
  cat >"$TMP/cat.txt" <<CAT
name kind source args hardware capacity split tags
mlp_tiny native $SRC/datasets/samples/mlp_tiny.wl - tpu-v4i 2MiB test quick
attention native $SRC/datasets/samples/attention_block.wl - tpu-v4i 4MiB test quick
CAT
  "$MB" run --catalogue "$TMP/cat.txt" --workloads . --solvers heuristic,greedy --seeds 3 \
    --budget 0.05 --no-progress --out "$1" >/dev/null 2>"$TMP/err" ||
    fail "reference run: $(cat "$TMP/err")"
}
