#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for SECONDS each, seeded from real inputs
# (copied to a temporary corpus, never into the repository). Prints executions and crashes.
# Usage: scripts/fuzz.sh BUILD_DIR [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build="$1"; seconds="${2:-60}"
data="${MALLOCBENCH_DATA:-$(pwd)/../shared/data}"
status=0
for target in "$build"/fuzz_*; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  corpus=$(mktemp -d)
  case "$name" in
    fuzz_native) cp datasets/samples/*.wl "$corpus"/ 2>/dev/null || true ;;
    fuzz_hlo) cp "$data"/hlo/*.hlo "$corpus"/ 2>/dev/null || true
      # a TPU dump's layouts: tiles, L(n), E(n) and the items that are skipped
      printf '%s\n' 'HloModule t, is_scheduled=true' 'ENTRY e {' \
        '  a = f32[3,5]{1,0:T(8,128)S(1)} parameter(0)' '  s = s4[5]{0:E(4)} parameter(1)' \
        '  b = bf16[3,5]{0,1:T(8,128)(2,1)L(32)#(s64)P(f32[4]{0})} exponential(a)' \
        '  ROOT r = (bf16[3,5]{0,1:(2,2)}, s4[5]{0:E(4)}) tuple(b, s)' '}' >"$corpus"/tpu.hlo
      # a loop with its trip count, and a select-and-scatter's two computations
      printf '%s\n' 'HloModule l' 'ge (a: f32[], b: f32[]) -> pred[] {' '  a = f32[] parameter(0)' \
        '  b = f32[] parameter(1)' '  ROOT g = pred[] compare(a, b), direction=GE' '}' \
        'body (p: f32[8]) -> f32[8] {' '  p = f32[8] parameter(0)' '  ROOT e = f32[8] exponential(p)' '}' \
        'ENTRY e {' '  p = f32[8] parameter(0)' '  s = f32[4] parameter(1)' '  z = f32[] constant(0)' \
        '  w = f32[8] while(p), condition=ge, body=body, backend_config={"known_trip_count":{"n":"10"}}' \
        '  ROOT r = f32[8] select-and-scatter(w, s, z), window={size=2 stride=2}, select=ge, scatter=ge' \
        '}' >"$corpus"/loop.hlo
      # send/recv pairs, an empty tuple and a Pallas kernel's cost_estimate (an escaped string)
      printf '%s\n' 'HloModule p' 'ENTRY e {' '  p = f32[8] parameter(0)' '  t = token[] after-all()' \
        '  s = (f32[8], u32[], token[]) send(p, t), channel_id=1' '  sd = token[] send-done(s), channel_id=1' \
        '  r = (f32[8], u32[], token[]) recv(t), channel_id=2' '  rd = (f32[8], token[]) recv-done(r), channel_id=2' \
        '  d = f32[8] get-tuple-element(rd), index=0' '  u = () tuple()' \
        '  ROOT k = f32[8] custom-call(d), custom_call_target="tpu_custom_call", backend_config="{\"custom_call_config\": {\"body\": \"TUxSQ\", \"cost_estimate\": {\"bytes_accessed\":64,\"flops\":16,\"transcendentals\":8}}}"' \
        '}' >"$corpus"/p2p.hlo
      # a JAX-style scan over layers: the loop is inlined, its state updated in place
      printf '%s\n' 'HloModule scan' 'cond {' '  c = (s32[], f32[4,8]{1,0}, f32[2,8,8]{2,1,0}) parameter(0)' \
        '  i = s32[] get-tuple-element(c), index=0' '  n = s32[] constant(2)' '  ROOT lt = pred[] compare(i, n), direction=LT' '}' \
        'body {' '  b = (s32[], f32[4,8]{1,0}, f32[2,8,8]{2,1,0}) parameter(0)' '  i = s32[] get-tuple-element(b), index=0' \
        '  h = f32[4,8]{1,0} get-tuple-element(b), index=1' '  ws = f32[2,8,8]{2,1,0} get-tuple-element(b), index=2' \
        '  z = s32[] constant(0)' '  wi = f32[1,8,8]{2,1,0} dynamic-slice(ws, i, z, z), dynamic_slice_sizes={1,8,8}' \
        '  w = f32[8,8]{1,0} reshape(wi)' '  d = f32[4,8]{1,0} dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}' \
        '  one = s32[] constant(1)' '  i1 = s32[] add(i, one)' '  ROOT r = (s32[], f32[4,8]{1,0}, f32[2,8,8]{2,1,0}) tuple(i1, d, ws)' '}' \
        'ENTRY main {' '  x = f32[4,8]{1,0} parameter(0)' '  ws = f32[2,8,8]{2,1,0} parameter(1)' '  z = s32[] constant(0)' \
        '  init = (s32[], f32[4,8]{1,0}, f32[2,8,8]{2,1,0}) tuple(z, x, ws)' \
        '  l = (s32[], f32[4,8]{1,0}, f32[2,8,8]{2,1,0}) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"2"}}' \
        '  ROOT o = f32[4,8]{1,0} get-tuple-element(l), index=1' '}' >"$corpus"/scan.hlo
      # a call inlined twice and a conditional inlined as its most expensive branch
      printf '%s\n' 'HloModule ctl' 'layer {' '  x = f32[8] parameter(0)' '  w = f32[8] parameter(1)' \
        '  m = f32[8] multiply(x, w)' '  ROOT t = f32[8] tanh(m)' '}' 'skip {' '  s = f32[8] parameter(0)' \
        '  ROOT n = f32[8] negate(s)' '}' 'work {' '  u = f32[8] parameter(0)' '  h = f32[8] call(u, u), to_apply=layer' \
        '  ROOT a = f32[8] add(h, u)' '}' 'ENTRY main {' '  i = s32[] parameter(0)' '  v = f32[8] parameter(1)' \
        '  c = f32[8] call(v, v), to_apply=layer' \
        '  ROOT r = f32[8] conditional(i, c, c), branch_computations={skip, work}' '}' >"$corpus"/ctl.hlo
      # a scan's sliced reads: a dynamic-slice of stacked weights, an in-place update fusion
      printf '%s\n' 'HloModule sl' 'upd {' '  p0 = f32[4,8] parameter(0)' '  p1 = f32[1,8] parameter(1)' \
        '  p2 = s32[] parameter(2)' '  z = s32[] constant(0)' '  ROOT d = f32[4,8] dynamic-update-slice(p0, p1, p2, z)' '}' \
        'cond {' '  c = (s32[], f32[4,8], f32[4,8]) parameter(0)' '  i = s32[] get-tuple-element(c), index=0' \
        '  n = s32[] constant(4)' '  ROOT lt = pred[] compare(i, n), direction=LT' '}' \
        'body {' '  b = (s32[], f32[4,8], f32[4,8]) parameter(0)' '  i = s32[] get-tuple-element(b), index=0' \
        '  ws = f32[4,8] get-tuple-element(b), index=1' '  ys = f32[4,8] get-tuple-element(b), index=2' '  z = s32[] constant(0)' \
        '  w = f32[1,8] dynamic-slice(ws, i, z), dynamic_slice_sizes={1,8}' '  t = f32[1,8] tanh(w)' \
        '  ys1 = f32[4,8] fusion(ys, t, i), kind=kLoop, calls=upd' '  one = s32[] constant(1)' '  i1 = s32[] add(i, one)' \
        '  ROOT r = (s32[], f32[4,8], f32[4,8]) tuple(i1, ws, ys1)' '}' \
        'ENTRY main {' '  ws = f32[4,8] parameter(0)' '  ys = f32[4,8] parameter(1)' '  z = s32[] constant(0)' \
        '  init = (s32[], f32[4,8], f32[4,8]) tuple(z, ws, ys)' \
        '  l = (s32[], f32[4,8], f32[4,8]) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"4"}}' \
        '  ROOT o = f32[4,8] get-tuple-element(l), index=2' '}' >"$corpus"/slices.hlo
      # a KV cache donated to the output its update computes (input_output_alias), a buffer donor
      printf '%s\n' 'HloModule kv, input_output_alias={ {0}: (1, {}, may-alias) }, buffer_donor={ (3, {}) }' \
        'ENTRY main {' '  q = f32[1,8] parameter(0)' '  c = f32[4,8] parameter(1)' '  i = s32[] parameter(2)' \
        '  d = f32[4,8] parameter(3)' '  z = s32[] constant(0)' '  u = f32[4,8] dynamic-update-slice(c, q, i, z)' \
        '  v = f32[4,8] dynamic-update-slice(d, q, z, z)' '  ROOT r = (f32[4,8], f32[4,8]) tuple(u, v)' '}' >"$corpus"/kv.hlo
      # a scatter updating a loop's state in place, a gather and a slice
      printf '%s\n' 'HloModule sc' 'add {' '  a = f32[] parameter(0)' '  b = f32[] parameter(1)' '  ROOT s = f32[] add(a, b)' '}' \
        'cond {' '  c = (s32[], f32[4,8]) parameter(0)' '  i = s32[] get-tuple-element(c), index=0' '  n = s32[] constant(3)' \
        '  ROOT lt = pred[] compare(i, n), direction=LT' '}' 'body {' '  b = (s32[], f32[4,8]) parameter(0)' \
        '  i = s32[] get-tuple-element(b), index=0' '  ys = f32[4,8] get-tuple-element(b), index=1' '  ix = s32[1,1] reshape(i)' \
        '  u = f32[1,8] slice(ys), slice={[0:1], [0:8]}' \
        '  ys1 = f32[4,8] scatter(ys, ix, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add' \
        '  one = s32[] constant(1)' '  i1 = s32[] add(i, one)' '  ROOT r = (s32[], f32[4,8]) tuple(i1, ys1)' '}' \
        'ENTRY main {' '  t = f32[100,8] parameter(0)' '  k = s32[4,1] parameter(1)' \
        '  g = f32[4,8] gather(t, k), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}' \
        '  z = s32[] constant(0)' '  init = (s32[], f32[4,8]) tuple(z, g)' \
        '  l = (s32[], f32[4,8]) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"3"}}' \
        '  ROOT o = f32[4,8] get-tuple-element(l), index=1' '}' >"$corpus"/scatter.hlo
      # updates in place outside a loop: a chain of a dynamic-update-slice and a scatter
      printf '%s\n' 'HloModule ip' 'add {' '  a = f32[] parameter(0)' '  b = f32[] parameter(1)' '  ROOT s = f32[] add(a, b)' '}' \
        'ENTRY main {' '  p = f32[8,4] parameter(0)' '  q = f32[1,8] parameter(1)' '  i = s32[] parameter(2)' '  z = s32[] constant(0)' \
        '  ix = s32[1,1] reshape(i)' '  t = f32[4,8] transpose(p), dimensions={1,0}' '  u = f32[4,8] dynamic-update-slice(t, q, i, z)' \
        '  s = f32[4,8] scatter(u, ix, q), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add' \
        '  ROOT n = f32[4,8] negate(s)' '}' >"$corpus"/inplace.hlo
      # donated parameters that hold the outputs of an elementwise multi-output fusion
      printf '%s\n' 'HloModule adam, input_output_alias={ {0}: (0, {}), {1}: (1, {}, must-alias) }' 'fused {' \
        '  p0 = f32[4,8] parameter(0)' '  p1 = f32[4,8] parameter(1)' '  m = f32[4,8] multiply(p0, p1)' \
        '  a = f32[4,8] add(p0, m)' '  ROOT t = (f32[4,8], f32[4,8]) tuple(a, m)' '}' 'ENTRY main {' \
        '  w = f32[4,8] parameter(0)' '  v = f32[4,8] parameter(1)' '  g = f32[4,8] parameter(2)' '  n = f32[4,8] negate(g)' \
        '  f = (f32[4,8], f32[4,8]) fusion(w, n), kind=kLoop, calls=fused' '  w1 = f32[4,8] get-tuple-element(f), index=0' \
        '  v1 = f32[4,8] add(v, n)' '  ROOT r = (f32[4,8], f32[4,8]) tuple(w1, v1)' '}' >"$corpus"/adam.hlo
      # a scatter of two operands, each updated in place
      printf '%s\n' 'HloModule vs' 'add2 {' '  a0 = f32[] parameter(0)' '  a1 = s32[] parameter(1)' \
        '  b0 = f32[] parameter(2)' '  b1 = s32[] parameter(3)' '  s0 = f32[] add(a0, b0)' '  s1 = s32[] add(a1, b1)' \
        '  ROOT t = (f32[], s32[]) tuple(s0, s1)' '}' 'ENTRY main {' '  p = f32[8,4] parameter(0)' \
        '  v = s32[8,4] parameter(1)' '  q = f32[1,8] parameter(2)' '  r = s32[1,8] parameter(3)' '  i = s32[] parameter(4)' \
        '  ix = s32[1,1] reshape(i)' '  t = f32[4,8] transpose(p), dimensions={1,0}' '  m = s32[4,8] transpose(v), dimensions={1,0}' \
        '  s = (f32[4,8], s32[4,8]) scatter(t, m, ix, q, r), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2' \
        '  a = f32[4,8] get-tuple-element(s), index=0' '  ROOT n = f32[4,8] negate(a)' '}' >"$corpus"/variadic.hlo ;;
    fuzz_csv) cp "$data"/minimalloc/*.csv "$corpus"/ 2>/dev/null || true ;;
    fuzz_catalogue) cp datasets/catalogue.txt "$corpus"/ 2>/dev/null || true ;;
    fuzz_hardware) cp datasets/hardware/*.txt "$corpus"/ 2>/dev/null || true ;;
    fuzz_spec) cp datasets/models/*.spec "$corpus"/ 2>/dev/null || true ;;
    fuzz_option_values) printf '64' >"$corpus"/a; printf '4MiB' >"$corpus"/b; printf '1e-4' >"$corpus"/c ;;
    fuzz_assignment) printf 'buffer,offset\nx,0\ny,slow\nz,4096\n' >"$corpus"/a.csv
      printf '"a,b",0\n"q""x",slow\n"#h",512\n' >"$corpus"/quoted.csv ;;
    fuzz_journal) # a header, a baseline and a job with a curve (the target fixes checksums)
      printf '%s\n' 'mallocbench-journal 1 seeds 2 budget 0.5 simulations 8 search puct bound_budget 0.25 plan s0123 profile squick workloads s^a solvers sheuristic,mallocmuzero hardware s agent sa%20b.h5 catalogue sc.txt data sd' \
        'B 0 1000 900 800 snot%20solved 0.01 0.02 s 3 0 -1 512 #0000000000000000' \
        'J 1 sok 1 2 1024 850 0.5 32 1 sbest%20fit 3 0 512 -1 2 0 0.1 100 0.2 heuristic 0.05 #0000000000000000' >"$corpus"/a.journal ;;
    fuzz_factorization) cp "$data"/alphatensor/*.txt "$corpus"/ 2>/dev/null || true ;;
  esac
  log=$(mktemp)
  artifacts=$(mktemp -d) # the inputs of a finding; removed when empty (it was left in /tmp)
  echo "-- $name (${seconds}s)"
  if ! "$target" -max_total_time="$seconds" -timeout=10 -max_len=262144 -rss_limit_mb=2048 \
       -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1; then
    echo "$name: FAILED"; tail -40 "$log"; status=1
  fi
  grep -E "^#[0-9]+.*DONE|^Done [0-9]+ runs" "$log" | tail -1 || true
  rm -rf "$corpus" "$log"
  rmdir "$artifacts" 2>/dev/null || echo "$name: its inputs of a finding are in $artifacts"
done
exit $status
