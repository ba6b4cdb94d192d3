#!/usr/bin/env bash
# `mallocbench generate alphatensor | model` through the CLI (packing: generate_packing.sh):
# - the standard 4x4-block algorithm at n = 64 is 64 block products and 48 block additions,
#   2 * 64 * 16^3 + 48 * 16^2 = 536576 FLOPs, computed here by hand; Strassen-squared has 49
#   products (AlphaTensor's rank-49 reference);
# - --name names the workload, -o - writes the same workload to stdout;
# - a --name the workload reader would refuse (empty, or 128 bytes and more) is refused by every
#   generator with exit 2 and nothing written (before, alphatensor and model wrote a file that
#   `show` then could not read); any other bytes round-trip through the quoted name.
# Usage: generate.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: generate.sh MALLOCBENCH_BINARY}
SRC=$(pwd)
# $TMP, fail, expect STATUS PATTERN CMD...
source "$(dirname "$0")/lib/expect.bash"

AT=(generate alphatensor --builtin standard --n 64 --dtype f32)
"$MB" "${AT[@]}" -o "$TMP/std.wl" --name mymm >"$TMP/out" 2>"$TMP/err" || fail "standard: $(cat "$TMP/err")"
grep -q "^wrote $TMP/std.wl: workload 'mymm', 112 ops, .* 536576 FLOPs" "$TMP/out" ||
  fail "standard n=64: $(cat "$TMP/out")"
[ "$(grep -c '^op .* kind=dot ' "$TMP/std.wl")" = 64 ] || fail "standard: not 64 block products"
[ "$(grep -c '^op .* kind=add ' "$TMP/std.wl")" = 48 ] || fail "standard: not 48 block additions"
stdout_has -G "^workload  *mymm$" "$MB" show "$TMP/std.wl" || fail "show does not read the name back"
"$MB" "${AT[@]}" -o - --name mymm >"$TMP/std_stdout.wl" 2>"$TMP/err" || fail "-o -: $(cat "$TMP/err")"
cmp -s "$TMP/std.wl" "$TMP/std_stdout.wl" || fail "-o - wrote another workload than -o FILE"
expect 2 "generate alphatensor: -o '': expected a file path" "$MB" "${AT[@]}" -o ''
expect 2 "generate packing: -o '': expected a file path" "$MB" generate packing --buffers 10 -o ''

"$MB" generate alphatensor --builtin strassen_squared --n 64 --dtype f32 -o "$TMP/s2.wl" >/dev/null \
  2>"$TMP/err" || fail "strassen_squared: $(cat "$TMP/err")"
[ "$(grep -c '^op .* kind=dot ' "$TMP/s2.wl")" = 49 ] || fail "Strassen-squared: not 49 products"

SPEC="$SRC/datasets/models/alexnet_inf_b128.spec"
"$MB" generate model "$SPEC" -o "$TMP/m.wl" --name 'my alex "v2"' >/dev/null 2>"$TMP/err" ||
  fail "model: $(cat "$TMP/err")"
stdout_has -F 'my alex "v2"' "$MB" show "$TMP/m.wl" || fail "a quoted name does not round-trip"
"$MB" generate model "$SPEC" -o - --name 'my alex "v2"' >"$TMP/m_stdout.wl" 2>"$TMP/err" ||
  fail "model -o -: $(cat "$TMP/err")"
cmp -s "$TMP/m.wl" "$TMP/m_stdout.wl" || fail "model: -o - wrote another workload than -o FILE"

# a well-formed spec whose image is too small for the network: the error names the spec file,
# the line and the key (it used to name only the layer: "pool 'pool5': input 1x1 smaller ..."),
# and nothing is written; one pixel more is generated
printf 'family = alexnet\nmode = inference\ndtype = bf16\nbatch = 1\n# the image:\nimage = 62\n' \
  >"$TMP/small.spec"
printf 'channels = 3\nclasses = 10\n' >>"$TMP/small.spec"
expect 2 "^mallocbench generate model: $TMP/small.spec:6: key 'image': 62 is too small for family 'alexnet' \(at least 63: every convolution and pooling window must fit\)$" \
  "$MB" generate model "$TMP/small.spec" -o "$TMP/small.wl"
[ ! -e "$TMP/small.wl" ] || fail "a refused spec wrote a workload"
sed -i 's/^image = 62$/image = 63/' "$TMP/small.spec"
"$MB" generate model "$TMP/small.spec" -o "$TMP/small.wl" >/dev/null 2>"$TMP/err" ||
  fail "image 63: $(cat "$TMP/err")"

LONG=$(printf 'x%.0s' $(seq 128))
for g in "${AT[*]}" "generate model $SPEC" "generate packing --buffers 4"; do
  cmd=${g#generate }
  cmd="generate ${cmd%% *}"
  for bad in "" "$LONG"; do
    # shellcheck disable=SC2086
    expect 2 "^mallocbench $cmd: --name '$bad': expected a name of 1\.\.127 bytes$" \
      "$MB" $g --name "$bad" -o "$TMP/bad.wl"
  done
  # shellcheck disable=SC2086
  "$MB" $g --name "${LONG:1}" -o "$TMP/ok.wl" >/dev/null 2>"$TMP/err" || fail "$cmd, 127-byte name: $(cat "$TMP/err")"
  "$MB" show "$TMP/ok.wl" >/dev/null 2>"$TMP/err" || fail "$cmd: a 127-byte name does not read back: $(cat "$TMP/err")"
done
[ ! -e "$TMP/bad.wl" ] || fail "a refused --name wrote a file"

# Without --name, alphatensor names the workload after its file: the base name without its
# last extension ("a dotfile" keeps its name), then --n and --dtype. A lone "-" is a FILE, not
# an option.
DATA=${MALLOCBENCH_DATA:-$SRC/../shared/data}
if [ -f "$DATA/alphatensor/strassen_squared.txt" ]; then
  mkdir -p "$TMP/d.x"
  cp "$DATA/alphatensor/strassen_squared.txt" "$TMP/d.x/s2.v1.txt"
  cp "$DATA/alphatensor/strassen_squared.txt" "$TMP/d.x/.s2"
  for f in s2.v1.txt:s2.v1_n64_bf16 .s2:.s2_n64_bf16; do
    "$MB" generate alphatensor "$TMP/d.x/${f%%:*}" --n 64 -o "$TMP/named.wl" >"$TMP/out" 2>"$TMP/err" ||
      fail "alphatensor ${f%%:*}: $(cat "$TMP/err")"
    grep -q "workload '${f#*:}', 267 ops" "$TMP/out" || fail "alphatensor ${f%%:*}: $(cat "$TMP/out")"
  done
else
  echo "note: $DATA/alphatensor/strassen_squared.txt missing: derived-name checks skipped"
fi
expect 2 "^mallocbench generate alphatensor: -: " "$MB" generate alphatensor - --n 64 -o "$TMP/x.wl"
expect 2 "^mallocbench generate packing: unexpected argument 'extra'$" \
  "$MB" generate packing extra --buffers 4 -o "$TMP/x.wl"

# A generator without its options says what it needs (exit 2), not its help (exit 0).
expect 2 "need exactly one of FILE or --builtin" "$MB" generate alphatensor
expect 2 "need SPEC and -o OUT" "$MB" generate model "$SPEC"
expect 2 "need --buffers N and -o OUT" "$MB" generate packing
[ ! -s "$TMP/out" ] || fail "generate packing without options printed on stdout"

# --solution and -o may not name one file, spelled alike or not (it would replace the workload).
"$MB" generate packing --buffers 4 -o "$TMP/p.wl" >/dev/null 2>"$TMP/err" || fail "packing: $(cat "$TMP/err")"
cp "$TMP/p.wl" "$TMP/p.before"
for o in "$TMP/p.wl" "$TMP/./p.wl"; do
  expect 2 "--solution '$TMP/p.wl' and -o '$o' name the same file" \
    "$MB" generate packing --buffers 4 --solution "$TMP/p.wl" -o "$o"
done
cmp -s "$TMP/p.wl" "$TMP/p.before" || fail "a refused --solution changed the workload"

# -o - to a full device: exit 1 and a message, whether the writes fail (a workload larger than
# stdio's buffer) or only the final flush (a one-buffer packing, 203 bytes)
if [ -w /dev/full ]; then
  for g in "${AT[*]}" "generate packing --buffers 1"; do
    # shellcheck disable=SC2086
    "$MB" $g -o - >/dev/full 2>"$TMP/err"
    st=$?
    [ $st = 1 ] && grep -q "cannot write to stdout" "$TMP/err" ||
      fail "$g -o - to /dev/full: exit $st, $(cat "$TMP/err")"
  done
fi
echo "generate: ok"
