#!/bin/bash
# End-to-end: `mallocbench import hlo|csv` on the real data and on malformed inputs.
# Usage: import.sh MALLOCBENCH_BINARY
set -u
MB=${1:?usage: import.sh MALLOCBENCH_BINARY}
DATA=${MALLOCBENCH_DATA:-$(dirname "$0")/../../../shared/data}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect STATUS CMD...: runs CMD, output in $T/out, checks the exit status
expect() {
  local want=$1; shift
  "$@" >"$T/out" 2>&1
  local got=$?
  [ "$got" = "$want" ] || { fail "exit $got (want $want): $*"; sed 's/^/  | /' "$T/out" | head -5; }
}

expect 0 "$MB" import --help
grep -q "import hlo FILE" "$T/out" || fail "--help text"
expect 2 "$MB" import
expect 2 "$MB" import xml x.xml -o "$T/x.wl"
expect 2 "$MB" import hlo
grep -qx "mallocbench import hlo: FILE is required; see mallocbench import --help" "$T/out" ||
  fail "import hlo without FILE: $(cat "$T/out")"
expect 2 "$MB" import hlo "$T/none.hlo"
grep -q -- "-o OUT is required" "$T/out" || fail "missing -o message: $(cat "$T/out")"
expect 2 "$MB" import csv "$T/none.csv" -o "$T/x.wl" --capacity -3
# -o naming the input (or a link to it) is refused, and the input is left as it was
printf 'id,lower,upper,size\n0,0,3,4\n' >"$T/in.1024.csv"
cp "$T/in.1024.csv" "$T/in.copy"
ln -s in.1024.csv "$T/in.link"
for out in "$T/in.1024.csv" "$T/in.link"; do
  expect 2 "$MB" import csv "$T/in.1024.csv" -o "$out"
  grep -qF "mallocbench import csv: $out: is also the input FILE ($T/in.1024.csv); refusing to overwrite it" "$T/out" ||
    fail "-o = input: $(cat "$T/out")"
  cmp -s "$T/in.1024.csv" "$T/in.copy" || fail "import -o = input changed the input"
done

if [ -d "$DATA/hlo" ]; then
  # counts: see tests/test_hlo_import.c for how they were derived
  while IFS='|' read -r f ops bufs ops0 bufs0; do
    expect 0 "$MB" import hlo "$DATA/hlo/$f.hlo" -o "$T/$f.wl"
    grep -q "imported $f: $ops ops, $bufs buffers" "$T/out" || fail "$f fused: $(head -1 "$T/out")"
    head -1 "$T/$f.wl" | grep -q "^mallocbench-workload 1" || fail "$f.wl header"
    expect 0 "$MB" import hlo "$DATA/hlo/$f.hlo" -o "$T/$f.nofusion.wl" --no-fusion
    grep -q "imported $f: $ops0 ops, $bufs0 buffers" "$T/out" || fail "$f no fusion: $(head -1 "$T/out")"
  done <<'LIST'
bert_pt_xla_adam_step|122|162|734|808
gpt2_pt_xla|47|77|119|160
graphsage_tf|32|46|69|104
mlp_pt_xla|43|46|121|149
ssd_mobilenet_tf|59|160|289|467
LIST
  # custom-calls of unknown cost (AWS Neuron's targets) are named in a warning; FLOPs unchanged
  expect 0 "$MB" import hlo "$DATA/hlo/gpt2_pt_xla.hlo" -o "$T/g.wl"
  grep -q "gpt2_pt_xla.hlo: 23 custom-calls with unknown cost counted as 0 FLOPs (targets: \
AwsNeuronTransferWithStaticRing x22, AwsNeuronGelu)" "$T/out" || fail "gpt2 custom-calls: $(cat "$T/out")"
  grep -q "3.67167e+08 FLOPs" "$T/out" || fail "gpt2 FLOPs: $(cat "$T/out")"
  grep -q " 23 custom-calls of unknown cost, 0 GEMM custom-calls estimated," "$T/out" ||
    fail "gpt2 summary: $(cat "$T/out")"
  # gpt2's two donated KV caches: each output is a scatter into a transfer's copy of it
  grep -qx "  donations: 2 entry parameter arrays donated to outputs (input_output_alias, \
buffer_donor): 0 hold the output written into them, 0 are returned unchanged, 2 stay apart from \
their output (two buffers)" "$T/out" || fail "gpt2 donations: $(cat "$T/out")"
  # the BERT Adam step donates 91 parameter arrays to outputs; no update op updates one, and the
  # add that computes each new weight or moment, the parameter's last read, writes 90 of them
  # in place (one is donated to a constant)
  expect 0 "$MB" import hlo "$DATA/hlo/bert_pt_xla_adam_step.hlo" -o "$T/b.wl"
  grep -q "  donations: 91 entry parameter arrays donated to outputs (input_output_alias, \
buffer_donor): 90 hold the output written into them, 0 are returned unchanged, 1 stays apart \
from its output (two buffers)" "$T/out" ||
    fail "bert donations: $(cat "$T/out")"
  grep -q "into a donated entry parameter" "$T/out" && fail "bert donated updates: $(cat "$T/out")"
  expect 0 "$MB" import hlo "$DATA/hlo/mlp_pt_xla.hlo" -o "$T/m.wl"
  grep -q "  donations: 8 entry parameter arrays donated to outputs (input_output_alias, \
buffer_donor): 6 hold the output written into them, 2 are returned unchanged, 0 stay" "$T/out" ||
    fail "mlp donations: $(cat "$T/out")"
  expect 0 "$MB" import hlo "$DATA/hlo/graphsage_tf.hlo" -o "$T/g.wl"
  grep -q "custom-calls with unknown cost" "$T/out" && fail "graphsage warning: $(cat "$T/out")"
  grep -q "donations:" "$T/out" && fail "graphsage (no donation) listed donations: $(cat "$T/out")"
  # nor unknown opcodes or attributes: no warning of 0, and no import timing unasked
  grep -q ", 0 unknown attributes$" "$T/out" || fail "graphsage attributes: $(cat "$T/out")"
  grep -q "^warning:" "$T/out" && fail "graphsage warning: $(cat "$T/out")"
  grep -q "wall time" "$T/out" && fail "import timed without --repeat: $(cat "$T/out")"
  grep -q "layouts:" "$T/out" && fail "graphsage (no tiles) said its layouts pad: $(cat "$T/out")"
  grep -q "while loops" "$T/out" && fail "graphsage (no loops) listed loops: $(cat "$T/out")"
  # pinning flags: mlp has 9 parameters and 8 outputs (see the file's root tuple)
  expect 0 "$MB" import hlo "$DATA/hlo/mlp_pt_xla.hlo" -o "$T/m.wl" --no-pin-params --no-pin-outputs
  grep -q "(0 pinned)" "$T/out" || fail "no pinning: $(head -1 "$T/out")"
  # --repeat times the import (wall clock) and still succeeds
  expect 0 "$MB" import hlo "$DATA/hlo/mlp_pt_xla.hlo" -o "$T/m.wl" --repeat 3
  grep -q "MB/s (median)" "$T/out" || fail "--repeat: $(cat "$T/out")"
  # its times are the imports' own: min <= median, under 10 s, and the rate is bytes / median
  awk '/wall time \(not simulated\): / { bytes = $5; med = $8; min = $11; n = $14; rate = $17 }
       END { want = bytes / (med / 1e3) / 1e6
             if (n != 3 || !(min > 0 && min <= med && med < 1e4) || rate - want > 0.05 * want + 0.1 ||
                 want - rate > 0.05 * want + 0.1) exit 1 }' "$T/out" ||
    fail "--repeat times: $(grep 'wall time' "$T/out")"
else
  echo "note: $DATA/hlo missing; real-file checks skipped (see SOURCES.md)"
fi

if [ -d "$DATA/minimalloc" ]; then
  expect 0 "$MB" import csv "$DATA/minimalloc/A.1048576.csv" -o "$T/A.wl"
  grep -q "154 buffers" "$T/out" || fail "A buffers: $(cat "$T/out")"
  grep -q "peak live 1048576 bytes" "$T/out" || fail "A peak: $(cat "$T/out")"
  grep -q "capacity 1048576 bytes" "$T/out" || fail "A capacity: $(cat "$T/out")"
  expect 0 "$MB" import csv "$DATA/minimalloc/input.12.csv" -o "$T/i.wl" --capacity 16
  grep -q "capacity 16 bytes" "$T/out" || fail "--capacity: $(cat "$T/out")"
fi

# a CSV without a capacity in its name, nor --capacity: said to be unknown
printf 'id,lower,upper,size\n0,0,3,4\n' >"$T/plain.csv"
expect 0 "$MB" import csv "$T/plain.csv" -o "$T/plain.wl"
grep -q "^  capacity unknown (no --capacity, no number before .csv); slow_time_ps " "$T/out" ||
  fail "no capacity: $(cat "$T/out")"

# malformed input: exit 2 and a file:line message
printf 'HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  q = f32[2] negate p\n}\n' >"$T/bad.hlo"
expect 2 "$MB" import hlo "$T/bad.hlo" -o "$T/x.wl"
grep -q "bad.hlo:4: expected '(' after opcode 'negate' of 'q'" "$T/out" || fail "bad.hlo: $(cat "$T/out")"
[ -e "$T/x.wl" ] && fail "a failed import wrote its output"
printf 'id,lower,upper,size\na,5,2,4\n' >"$T/bad.csv"
expect 2 "$MB" import csv "$T/bad.csv" -o "$T/x.wl"
grep -q "bad.csv:2:upper: expected upper > lower (5), got 2" "$T/out" || fail "bad.csv: $(cat "$T/out")"
# what the .wl reader would refuse is refused at import, by line and column, and nothing is
# written (upper = 2^31 - 1 used to give a file with 'schedule 2147483647', which no command read)
printf 'id,lower,upper,size\na,0,2147483647,4\n' >"$T/long.csv"
expect 2 "$MB" import csv "$T/long.csv" -o "$T/long.wl"
grep -q "long.csv:2:upper: expected at most 2147483646 (the longest schedule), got 2147483647" \
  "$T/out" || fail "long.csv: $(cat "$T/out")"
[ -e "$T/long.wl" ] && fail "an import the reader would refuse wrote its output"
printf 'id,lower,upper,size,benefit\na,0,1,4611686018427387903,1\nb,0,1,4611686018427387903,1\nc,0,1,2,1\n' \
  >"$T/huge.csv"
expect 2 "$MB" import csv "$T/huge.csv" -o "$T/huge.wl"
grep -q "huge.csv:4:size: the total size of all buffers overflows int64" "$T/out" ||
  fail "huge.csv: $(cat "$T/out")"

# unknown opcodes: imported, counted in a warning
printf 'HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT q = f32[2] frob(p)\n}\n' >"$T/u.hlo"
expect 0 "$MB" import hlo "$T/u.hlo" -o "$T/u.wl"
grep -q "1 instructions with unknown opcodes (e.g. 'frob')" "$T/out" || fail "warning: $(cat "$T/out")"

# library custom-calls (a GPU dump): a cuBLAS GEMM gets 2*M*N*K = 2*4*16*8 FLOPs, the others
# 0 FLOPs and a warning naming their targets
printf '%s\n' 'HloModule gpu' 'ENTRY e {' '  a = f32[4,8] parameter(0)' '  b = f32[8,16] parameter(1)' \
  '  g = (f32[4,16], s8[64]) custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}' \
  '  r = f32[4,16] get-tuple-element(g), index=0' \
  '  c = f32[4,16] custom-call(r), custom_call_target="__cudnn$norm"' \
  '  d = f32[4,16] custom-call(c), custom_call_target="__cudnn$norm"' \
  '  ROOT o = f32[4,16] custom-call(d), custom_call_target="__onednn$softmax"' '}' >"$T/gpu.hlo"
expect 0 "$MB" import hlo "$T/gpu.hlo" -o "$T/gpu.wl"
grep -q "gpu.hlo: 3 custom-calls with unknown cost counted as 0 FLOPs (targets: __cudnn\$norm x2, \
__onednn\$softmax)" "$T/out" || fail "custom-call warning: $(cat "$T/out")"
grep -q ", 1024 FLOPs ->" "$T/out" || fail "GEMM FLOPs: $(cat "$T/out")"
grep -q " 3 custom-calls of unknown cost, 1 GEMM custom-calls estimated," "$T/out" ||
  fail "custom-call summary: $(cat "$T/out")"

# a TPU dump's tiled layouts size its buffers as XLA allocates them: f32[3,5] under T(8,128) takes
# 8 x 128 x 4 = 4096 B where its elements take 60, bf16[8,128] under T(8,128)(2,1) is exact
printf '%s\n' 'HloModule tpu, is_scheduled=true' 'ENTRY e {' \
  '  a = f32[3,5]{1,0:T(8,128)} parameter(0)' '  w = bf16[8,128]{1,0:T(8,128)(2,1)} parameter(1)' \
  '  b = f32[3,5]{1,0:T(8,128)S(1)} exponential(a)' '  c = bf16[8,128]{1,0:T(8,128)(2,1)} negate(w)' \
  '  ROOT r = (f32[3,5]{1,0:T(8,128)}, bf16[8,128]{1,0:T(8,128)(2,1)}) tuple(b, c)' '}' >"$T/tpu.hlo"
expect 0 "$MB" import hlo "$T/tpu.hlo" -o "$T/tpu.wl" --no-fusion
grep -q "imported tpu: 2 ops, 4 buffers (4 pinned), 12288 bytes total" "$T/out" ||
  fail "tpu import: $(cat "$T/out")"
grep -qx "  layouts: 2 buffers sized as XLA allocates them (tiles, L(n), sub-byte types), 8072 B \
more than their elements take" "$T/out" || fail "tpu layouts line: $(cat "$T/out")"
grep -qx "  memory spaces: 1 buffer (4096 B) in a memory space S(n) by XLA's own assignment; \
solvers here place every buffer afresh" "$T/out" || fail "tpu memory spaces: $(cat "$T/out")"
expect 0 "$MB" show "$T/tpu.wl"
grep -q "^largest buffer  4096 B" "$T/out" || fail "tpu show: $(cat "$T/out")"
# a loop with XLA's known_trip_count: its body (exp, 8 FLOPs) 10 times, its condition 11 times
printf '%s\n' 'HloModule loop' 'cond {' '  c = (s32[], f32[8]) parameter(0)' \
  '  i = s32[] get-tuple-element(c), index=0' '  n = s32[] constant(10)' \
  '  ROOT lt = pred[] compare(i, n), direction=LT' '}' 'body {' '  b = (s32[], f32[8]) parameter(0)' \
  '  j = s32[] get-tuple-element(b), index=0' '  v = f32[8] get-tuple-element(b), index=1' \
  '  e = f32[8] exponential(v)' '  ROOT t = (s32[], f32[8]) tuple(j, e)' '}' 'ENTRY e {' \
  '  v = f32[8] parameter(0)' '  z = s32[] constant(0)' '  init = (s32[], f32[8]) tuple(z, v)' \
  '  ROOT w = (s32[], f32[8]) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"10"}}' \
  '}' >"$T/loop.hlo"
# inlined (the default): the while, the condition's compare and the body's exp are ops
expect 0 "$MB" import hlo "$T/loop.hlo" -o "$T/loop.wl"
grep -q "imported loop: 3 ops, .*, 91 FLOPs ->" "$T/out" || fail "loop FLOPs: $(cat "$T/out")"
grep -qx "  while loops: 1, 1 of them counted as often as their known_trip_count says, the others \
once; 1 inlined into the schedule" "$T/out" || fail "loop line: $(cat "$T/out")"
grep -q "warning" "$T/out" && fail "inlined loop warned: $(cat "$T/out")"
expect 0 "$MB" show "$T/loop.wl"
grep -q "^ops             3 " "$T/out" || fail "loop show: $(cat "$T/out")"
# as one op, with a warning that its body's buffers are not modelled
expect 0 "$MB" import hlo "$T/loop.hlo" -o "$T/loop1.wl" --loops-as-ops
grep -q "imported loop: 1 ops, .*, 91 FLOPs ->" "$T/out" || fail "loop op: $(cat "$T/out")"
grep -q "loop.hlo: 100% of the FLOPs are in while loops that are one op, whose bodies' buffers \
are not modelled" "$T/out" || fail "loop warning: $(cat "$T/out")"
grep -q "once; 0 inlined into the schedule" "$T/out" || fail "loop line, as op: $(cat "$T/out")"

# a call and a conditional, inlined: the callee's multiply and the expensive branch's exp and
# add take their places (XLA's CallInliner; the branch the FLOPs of a conditional assume)
printf '%s\n' 'HloModule ctl' 'scale {' '  x = f32[8] parameter(0)' '  y = f32[8] parameter(1)' \
  '  ROOT m = f32[8] multiply(x, y)' '}' 'skip {' '  s = f32[8] parameter(0)' \
  '  ROOT n = f32[8] negate(s)' '}' 'work {' '  u = f32[8] parameter(0)' \
  '  e = f32[8] exponential(u)' '  ROOT a = f32[8] add(e, u)' '}' 'ENTRY main {' \
  '  p = pred[] parameter(0)' '  v = f32[8] parameter(1)' \
  '  c = f32[8] call(v, v), to_apply=scale' \
  '  ROOT r = f32[8] conditional(p, c, c), true_computation=skip, false_computation=work' \
  '}' >"$T/ctl.hlo"
expect 0 "$MB" import hlo "$T/ctl.hlo" -o "$T/ctl.wl" --no-fusion
grep -q "imported ctl: 3 ops, .*, 24 FLOPs ->" "$T/out" || fail "ctl import: $(cat "$T/out")"
grep -qx "  calls: 1 inlined into the schedule, their callees' ops in place of each call" \
  "$T/out" || fail "calls line: $(cat "$T/out")"
grep -qx "  conditionals: 1 inlined into the schedule as their most expensive branch (by FLOPs); \
the other branches' buffers are not in the workload" "$T/out" || fail "conditionals line: $(cat "$T/out")"
# the ops in schedule order; the conditional's value is the branch's add (an output)
grep '^op ' "$T/ctl.wl" | tr -s ' ' >"$T/ctl.ops"
printf '%s\n' 'op scale/m kind=multiply flops=8' 'op work/e kind=exponential flops=8' \
  'op work/a kind=add flops=8' | diff - "$T/ctl.ops" || fail "ctl ops: $(cat "$T/ctl.wl")"
grep -qx "buffer work/a size=32 start=2 end=2 pinned" "$T/ctl.wl" || fail "ctl output: $(cat "$T/ctl.wl")"
# updates: one of a dying transpose, in place (its row written, the buffer kept to the last
# read), one of a parameter, a copy
printf '%s\n' 'HloModule upd' 'ENTRY main {' '  p = f32[8,4] parameter(0)' '  q = f32[1,8] parameter(1)' \
  '  i = s32[] parameter(2)' '  z = s32[] constant(0)' '  t = f32[4,8] transpose(p), dimensions={1,0}' \
  '  u = f32[4,8] dynamic-update-slice(t, q, i, z)' '  n = f32[4,8] negate(u)' \
  '  c = f32[1,8] dynamic-update-slice(q, q, z, z)' '  ROOT r = (f32[4,8], f32[1,8]) tuple(n, c)' \
  '}' >"$T/upd.hlo"
expect 0 "$MB" import hlo "$T/upd.hlo" -o "$T/upd.wl"
grep -qx "  updates (dynamic-update-slice, scatter): 1 in place in their operand's buffer, 1 copies" \
  "$T/out" || fail "updates line: $(cat "$T/out")"
grep -qx "use t op=1 read=0 write=32" <(tr -s ' ' <"$T/upd.wl") || fail "update in place: $(cat "$T/upd.wl")"
# the same with q donated to output {1} (input_output_alias): c updates q in place; a donation
# of a parameter the entry does not have is refused, naming the file and line
sed '1s/$/, input_output_alias={ {1}: (1, {}, must-alias) }/' "$T/upd.hlo" >"$T/don.hlo"
expect 0 "$MB" import hlo "$T/don.hlo" -o "$T/don.wl"
grep -qx "  updates (dynamic-update-slice, scatter): 2 in place in their operand's buffer (1 of \
them into a donated entry parameter), 0 copies" "$T/out" || fail "donated update: $(cat "$T/out")"
grep -q "^buffer c " "$T/don.wl" && fail "donated update kept its own buffer: $(cat "$T/don.wl")"
grep -qx "  donations: 1 entry parameter array donated to outputs (input_output_alias, \
buffer_donor): 1 holds the output written into it, 0 are returned unchanged, 0 stay apart from \
their output (two buffers)" "$T/out" ||
  fail "donations line: $(cat "$T/out")"
# a decoding step: a 1 x 64 row written into a donated 128 x 64 cache, then read; the numbers
# that datasets/HLO_IMPORT.md ("Donated parameters") quotes, with the donation and without
printf '%s\n' 'HloModule decode' 'add {' '  a = f32[] parameter(0)' '  b = f32[] parameter(1)' \
  '  ROOT c = f32[] add(a, b)' '}' 'ENTRY main {' '  x = f32[1,64] parameter(0)' \
  '  cache = f32[128,64] parameter(1)' '  i = s32[] parameter(2)' '  z = s32[] constant(0)' \
  '  zf = f32[] constant(0)' '  e = f32[1,64] exponential(x)' \
  '  u = f32[128,64] dynamic-update-slice(cache, e, i, z)' \
  '  r = f32[128] reduce(u, zf), dimensions={1}, to_apply=add' \
  '  ROOT t = (f32[128,64], f32[128]) tuple(u, r)' '}' >"$T/decode.hlo"
sed '1s/$/, input_output_alias={ {0}: (1, {}, may-alias) }/' "$T/decode.hlo" >"$T/decode_don.hlo"
for v in decode:5:66308:0.002161 decode_don:4:33540:0.002055; do
  IFS=: read -r f bufs bytes tslow <<<"$v"
  expect 0 "$MB" import hlo "$T/$f.hlo" -o "$T/$f.wl"
  grep -q "^imported $f: 2 ops, $bufs buffers ($bufs pinned), $bytes bytes total" "$T/out" ||
    fail "$f: $(cat "$T/out")"
  expect 0 "$MB" show "$T/$f.wl"
  grep -q "^T_slow  *$tslow ms" "$T/out" || fail "$f T_slow: $(grep T_slow "$T/out")"
done
sed '1s/$/, input_output_alias={ {1}: (5, {}, must-alias) }/' "$T/upd.hlo" >"$T/bad.hlo"
expect 2 "$MB" import hlo "$T/bad.hlo" -o "$T/bad.wl"
grep -qF "$T/bad.hlo:1: input_output_alias: parameter 5: the entry computation has no parameter 5" \
  "$T/out" || fail "bad donation: $(cat "$T/out")"
[ ! -e "$T/bad.wl" ] || fail "a refused import wrote its output"
# a Pallas kernel with its author's cost estimate: flops + transcendentals = 1024 FLOPs of its own
printf '%s\n' 'HloModule pallas' 'ENTRY e {' '  p = f32[8,128]{1,0:T(8,128)} parameter(0)' \
  '  ROOT k = f32[8,128]{1,0:T(8,128)} custom-call(p), custom_call_target="tpu_custom_call", backend_config="{\"custom_call_config\": {\"body\": \"TUxSQ\", \"cost_estimate\": {\"bytes_accessed\":8192,\"flops\":1000,\"remote_bytes_transferred\":0,\"transcendentals\":24}}}"' \
  '}' >"$T/pallas.hlo"
expect 0 "$MB" import hlo "$T/pallas.hlo" -o "$T/pallas.wl"
grep -q ", 1024 FLOPs ->" "$T/out" || fail "pallas FLOPs: $(cat "$T/out")"
grep -q " 0 custom-calls of unknown cost, 0 GEMM custom-calls estimated, 1 kernels with a \
cost_estimate," "$T/out" || fail "pallas summary: $(cat "$T/out")"
grep -q "warning" "$T/out" && fail "pallas warned: $(cat "$T/out")"
# a layout that does not fit its shape is refused by line
sed 's/{1,0:T(8,128)} parameter(0)/{0:T(8,128)} parameter(0)/' "$T/tpu.hlo" >"$T/tpu.bad.hlo"
expect 2 "$MB" import hlo "$T/tpu.bad.hlo" -o "$T/x.wl"
grep -q "tpu.bad.hlo:3: expected a layout of the shape's 2 dimensions, got 1" "$T/out" ||
  fail "tpu.bad.hlo: $(cat "$T/out")"
[ -e "$T/x.wl" ] && fail "a failed import wrote its output"

# A schedule of 2 x 10^9 steps with three buffers (MB_WORKLOAD_MAX_SCHEDULE is 2^31 - 2):
# nothing may cost memory or time per step. Under a 3 GB address-space limit (none under
# AddressSanitizer, whose shadow memory needs terabytes of it): import, show, both solvers,
# check, play and pack, with the right peak live bytes (the import used to print 0, its per-step
# array having failed silently, and the solvers ran out of memory).
printf 'id,lower,upper,size\n0,0,2000000000,1024\n1,5,2000000001,2048\n2,100,300,512\n' >"$T/big.csv"
limit=3000000
grep -qa __asan_init "$MB" && limit=unlimited
big() { (ulimit -v "$limit" && "$@"); }
expect 0 big "$MB" import csv "$T/big.csv" -o "$T/big.wl"
grep -q "peak live 3584 bytes at t=100" "$T/out" || fail "big import: $(cat "$T/out")"
expect 0 big "$MB" show "$T/big.wl"
grep -q "^peak live bytes 3584 B (3.50 KiB) at time 100$" "$T/out" || fail "big show: $(cat "$T/out")"
for s in heuristic greedy; do
  expect 0 big "$MB" solve "$T/big.wl" --solver "$s" --capacity 2560 --out "$T/big.$s.csv"
  grep -q "fast memory  2 buffers, peak 2560 B live (100.0% of capacity)" "$T/out" &&
    grep -q "^valid        yes" "$T/out" || fail "big solve $s: $(cat "$T/out")"
  expect 0 big "$MB" check "$T/big.csv" "$T/big.$s.csv" --capacity 2560
  grep -q "fast bytes peak live 2560 B, highest address 2560 B" "$T/out" ||
    fail "big check $s: $(cat "$T/out")"
done
printf 'buffer,offset\n0,0\n1,1024\n2,2048\n' >"$T/big.bad.csv"
expect 1 big "$MB" check "$T/big.wl" "$T/big.bad.csv" --capacity 4096
grep -q "overlap in fast memory at time 100" "$T/out" || fail "big check overlap: $(cat "$T/out")"
expect 0 big "$MB" play "$T/big.wl" --capacity 2560
grep -q "heuristic solver: T 4608 ps: identical to the heuristic policy" "$T/out" ||
  fail "big play: $(cat "$T/out")"
expect 0 big "$MB" pack "$T/big.csv" --capacity 3584
grep -q "packer      solved" "$T/out" || fail "big pack: $(cat "$T/out")"

# pack's usage and input errors: exit 2 with a line that names the argument or file at fault
expect 2 "$MB" pack
grep -q "^usage: mallocbench pack" "$T/out" || fail "pack without input: $(cat "$T/out")"
expect 2 "$MB" pack "$T/big.csv" "$T/in.1024.csv" --capacity 4096
grep -qF "unexpected argument '$T/in.1024.csv'" "$T/out" || fail "pack, two inputs: $(cat "$T/out")"
expect 2 "$MB" pack "$T/none.csv" --capacity 4096
grep -qF "$T/none.csv" "$T/out" || fail "pack of a missing file: $(cat "$T/out")"
expect 2 "$MB" pack "$T/big.csv"
grep -qF "$T/big.csv: no --capacity and none in the file name" "$T/out" ||
  fail "pack without a capacity: $(cat "$T/out")"

[ "$fails" = 0 ] && echo "import e2e: all checks passed"
exit $((fails > 0))
