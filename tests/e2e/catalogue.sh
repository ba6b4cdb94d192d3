#!/bin/bash
# End-to-end: `generate`, `add` and `list` on temporary catalogues, and `list` on the shipped one.
# Usage: catalogue.sh MALLOCBENCH_BINARY
set -u
MB=${1:?usage: catalogue.sh MALLOCBENCH_BINARY}
DATA=${MALLOCBENCH_DATA:-$(dirname "$0")/../../../shared/data}
# outside the source tree (ctest's TMPDIR is under the build tree, often inside it): add stores a
# source outside the tree by its absolute path, which the checks below expect
T=$(mktemp -d /tmp/mb-catalogue.XXXXXX)
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
CAT=$T/cat.txt
C="--catalogue $CAT --cache $T/cache"

# generate: AlphaTensor built-in, counts in the summary line
expect 0 "$MB" generate alphatensor --builtin standard --n 64 --dtype f32 -o "$T/std.wl"
grep -q "112 ops, 144 buffers (48 pinned)" "$T/out" || fail "standard n=64: $(cat "$T/out")"
expect 0 "$MB" show "$T/std.wl"
expect 2 "$MB" generate alphatensor --builtin standard --n 66 -o "$T/x.wl"
grep -q "multiple of 4" "$T/out" || fail "n=66 message: $(cat "$T/out")"
expect 2 "$MB" generate alphatensor --builtin winograd --n 64 -o "$T/x.wl"
expect 2 "$MB" generate alphatensor "$T/none.txt" --n 64 -o "$T/x.wl"
printf 'U\n1 x\n' >"$T/bad.txt"
expect 2 "$MB" generate alphatensor "$T/bad.txt" --n 64 -o "$T/x.wl"
grep -q "bad.txt:2: column 2" "$T/out" || fail "factorization error lacks file:line: $(cat "$T/out")"
[ -e "$T/x.wl" ] && fail "a failed generate wrote its output"
SPEC=$(ls "$(dirname "$0")"/../../datasets/models/*.spec 2>/dev/null | head -1)
if [ -n "$SPEC" ]; then
  expect 0 "$MB" generate model "$SPEC" -o "$T/model.wl"
  expect 0 "$MB" show "$T/model.wl"
fi

# add then list round trip on a fresh catalogue
expect 0 "$MB" add std64 builtin:standard --args n=64,dtype=f32 --tags matmul,generated $C
grep -q "new file" "$T/out" || fail "add did not create the catalogue"
expect 0 "$MB" add s2 builtin:strassen_squared --kind alphatensor --args n=256,dtype=bf16 \
  --hardware edge-npu --split train --tags matmul,generated $C
expect 0 "$MB" list $C --stats
grep -Eq '^std64 +test +tpu-v4i +112 +144 ' "$T/out" || fail "list --stats lacks std64: $(cat "$T/out")"
# its load time is the workload's own (ms below 100 s), not a clock's reading
grep -Eq '^std64 +test +tpu-v4i +112 +144 .* [0-9]{1,5}\.[0-9]$' "$T/out" || fail "list --stats load_ms: $(cat "$T/out")"
grep -Eq '^s2 +train +edge-npu ' "$T/out" || fail "list --stats lacks s2"
# --no-cache: the same statistics, and nothing written to the cache
expect 0 "$MB" list --catalogue "$CAT" --cache "$T/nocache" --stats --no-cache
grep -Eq '^std64 +test +tpu-v4i +112 +144 ' "$T/out" || fail "list --no-cache lacks std64"
[ ! -e "$T/nocache" ] || fail "list --no-cache wrote $(ls "$T/nocache")"
expect 0 "$MB" list $C --split train
grep -q '^s2 ' "$T/out" && ! grep -q '^std64 ' "$T/out" || fail "--split train: $(cat "$T/out")"
expect 0 "$MB" list $C --workloads '^std'
grep -q '^std64 ' "$T/out" && ! grep -q '^s2 ' "$T/out" || fail "--workloads: $(cat "$T/out")"
expect 0 "$MB" list $C --tags generated,matmul
grep -q "2 listed" "$T/out" || fail "--tags (all present): $(cat "$T/out")"
expect 0 "$MB" list $C --tags real
grep -q "0 listed" "$T/out" || fail "--tags real: $(cat "$T/out")"
expect 2 "$MB" list $C --workloads '(unclosed'

# list shows a capacity in the largest unit that divides it, below 10240 of it; else in one
# decimal of the largest unit below it
SIZES=$T/sizes.txt
{
  echo 'name kind source args hardware capacity split tags'
  for c in 1024 1536 10240 10241 10485761 16106127360 1125899906842624 1125899906842625; do
    echo "c$c alphatensor builtin:standard n=64,dtype=f32 tpu-v4i $c test generated"
  done
} >"$SIZES"
expect 0 "$MB" list --catalogue "$SIZES"
got=$(awk '$1 ~ /^c[0-9]/ { printf "%s=%s ", $1, $5 }' "$T/out")
# a wanted tag longer than any tag can be matches nothing (it was skipped, and matched all)
expect 0 "$MB" list --catalogue "$SIZES" --tags "generated,$(printf '%300s' '' | tr ' ' g)"
grep -q "^# 0 listed of 8 in" "$T/out" || fail "list --tags with a 300-byte tag: $(tail -1 "$T/out")"
expect 0 "$MB" list --catalogue "$SIZES" --tags "generated,,"
grep -q "^# 8 listed of 8 in" "$T/out" || fail "list --tags with empty items: $(tail -1 "$T/out")"
# a tag of the same length as the entries' tag, but another, matches nothing; so does one of
# 256 bytes, one more than a tag may have
expect 0 "$MB" list --catalogue "$SIZES" --tags generatex
grep -q "^# 0 listed of 8 in" "$T/out" || fail "list --tags generatex: $(tail -1 "$T/out")"
expect 0 "$MB" list --catalogue "$SIZES" --tags "$(printf '%256s' '' | tr ' ' g)"
grep -q "^# 0 listed of 8 in" "$T/out" || fail "list --tags with a 256-byte tag: $(tail -1 "$T/out")"
[ "$got" = "c1024=1KiB c1536=1536B c10240=10KiB c10241=10.0KiB c10485761=10.0MiB c16106127360=15GiB c1125899906842624=1024TiB c1125899906842625=1024.0TiB " ] ||
  fail "list's capacities: $got"

# add refuses bad input and leaves the file byte for byte unchanged
cp "$CAT" "$T/before"
expect 2 "$MB" add std64 builtin:standard --args n=64,dtype=f32 $C
grep -q "already exists" "$T/out" || fail "duplicate: $(cat "$T/out")"
expect 2 "$MB" add 'b@d' builtin:standard --args n=64,dtype=f32 $C
grep -q "field 'name'" "$T/out" || fail "bad name: $(cat "$T/out")"
expect 2 "$MB" add x builtin:standard --args n=63,dtype=f32 $C
# a key given twice is refused, not resolved silently in favour of the first
expect 2 "$MB" add x builtin:standard --args n=64,dtype=f32,n=128 $C
grep -q "\--args: field 'args': duplicate key 'n'" "$T/out" || fail "duplicate --args key: $(cat "$T/out")"
# NAME and SOURCE are both required: either missing prints the usage
expect 2 "$MB" add $C
grep -q "^usage: mallocbench add NAME SOURCE" "$T/out" || fail "add without arguments: $(cat "$T/out")"
expect 2 "$MB" add only-a-name $C
grep -q "^usage: mallocbench add NAME SOURCE" "$T/out" || fail "add without SOURCE: $(cat "$T/out")"
# an option over its field's limit is named with the limit, even when the whole entry would be
# longer than any catalogue line (it was once refused as "may not contain blanks")
for n in 256 3000; do
  expect 2 "$MB" add x builtin:standard --args n=64,dtype=f32 --tags "$(printf "%${n}s" '' | tr ' ' t)" $C
  grep -q "^mallocbench add: --tags: field 'tags': $n characters, at most 255 allowed" "$T/out" ||
    fail "--tags of $n characters: $(cat "$T/out")"
done
expect 2 "$MB" add x builtin:standard --args n=64,dtype=f32 --tags 'a b' $C
grep -q "may not contain blanks" "$T/out" || fail "blank in --tags: $(cat "$T/out")"
expect 2 "$MB" add x builtin:standard --args n=64,dtype=f32 --split dev $C
expect 2 "$MB" add x builtin:standard --args n=64,dtype=f32 --hardware no-such-hw $C
expect 2 "$MB" add x "$T/none.hlo" $C
# a catalogue that cannot be written (its directory is missing) is an I/O error: exit 2
expect 2 "$MB" add x builtin:standard --args n=64,dtype=f32 --catalogue "$T/no/such/dir/c.txt" \
  --cache "$T/cache"
grep -q "$T/no/such/dir/c.txt" "$T/out" || fail "unwritable catalogue: $(cat "$T/out")"
expect 2 "$MB" add x "$T/std.wl.unknown" $C
cmp -s "$CAT" "$T/before" || fail "a refused add changed the catalogue"

# a catalogue larger than add's first two read buffers (64 KiB, then 128 KiB): read whole, kept
# byte for byte, the entry appended after it
BIG=$T/big.txt
{ cat "$CAT"; for i in $(seq 1 3000); do printf '# padding comment line %04d of a large catalogue\n' "$i"; done; } >"$BIG"
cp "$BIG" "$T/big-before"
expect 0 "$MB" add big-one builtin:standard --args n=64,dtype=f32 --catalogue "$BIG" --cache "$T/cache"
[ "$(stat -c %s "$T/big-before")" -gt 131072 ] || fail "the large catalogue is only $(stat -c %s "$T/big-before") bytes"
head -c "$(stat -c %s "$T/big-before")" "$BIG" | cmp -s - "$T/big-before" || fail "add changed a large catalogue's text"
[ "$(wc -l <"$BIG")" = "$(($(wc -l <"$T/big-before") + 1))" ] || fail "add wrote more than one line"
tail -1 "$BIG" | grep -Eqx 'big-one alphatensor builtin:standard n=64,dtype=f32 tpu-v4i [0-9]+ test generated' ||
  fail "large catalogue's new line: $(tail -1 "$BIG")"

# a catalogue whose last line has no line break: the entry goes on a line of its own after it
NOEOL=$T/noeol.txt
printf '%s' "$(cat "$CAT")" >"$NOEOL"
cp "$NOEOL" "$T/noeol-before"
expect 0 "$MB" add after-noeol builtin:standard --args n=64,dtype=f32 --catalogue "$NOEOL" --cache "$T/cache"
head -c "$(stat -c %s "$T/noeol-before")" "$NOEOL" | cmp -s - "$T/noeol-before" || fail "add changed the text of a catalogue without a final line break"
[ "$(wc -l <"$NOEOL")" = "$(($(wc -l <"$T/noeol-before") + 2))" ] || fail "no final line break: $(tail -2 "$NOEOL")"
tail -1 "$NOEOL" | grep -Eqx 'after-noeol alphatensor builtin:standard n=64,dtype=f32 tpu-v4i [0-9]+ test generated' ||
  fail "no final line break: new line $(tail -1 "$NOEOL")"

# native and real sources; paths under the data dir are stored relative to it
expect 0 "$MB" add mine "$T/std.wl" --capacity 64KiB $C
grep -q "^mine native $T/std.wl - tpu-v4i 64KiB test generated$" "$CAT" || fail "native line: $(tail -1 "$CAT")"
grep -q "^note: .*/std.wl is outside .*: stored as an absolute path$" "$T/out" ||
  fail "no note on the absolute path: $(cat "$T/out")"
grep -q "^added 'mine' .*, capacity 65536 B (" "$T/out" || fail "--capacity 64KiB said: $(cat "$T/out")"
# a workload whose buffers are all pinned has nothing to place: no ratio to a 0-byte peak
printf 'mallocbench-workload 1\nname pinned_only\nsource "every buffer pinned"\nop o1 kind=add flops=1\nbuffer a size=1024 start=0 end=0 pinned\nuse a op=0 read=1024\n' >"$T/pinned.wl"
expect 0 "$MB" add pinned-only "$T/pinned.wl" --capacity 4KiB $C
grep -q "^added 'pinned-only' .*: 1 ops, 1 buffers, peak live 1024 B (non-pinned 0 B), capacity 4096 B (no non-pinned bytes to place)$" "$T/out" ||
  fail "all pinned said: $(cat "$T/out")"
expect 0 "$MB" list $C --stats --workloads '^pinned-only$'
grep -Eq '^pinned-only +test +tpu-v4i +1 +1 +1KiB +4KiB +- ' "$T/out" || fail "list --stats of nothing to place: $(cat "$T/out")"
# --capacity profile is stored as the word, and the profile's capacity (tpu-v4i: 128 MiB) is said
expect 0 "$MB" add mine-profile "$T/std.wl" --capacity profile $C
grep -q "^mine-profile native $T/std.wl - tpu-v4i profile test generated$" "$CAT" ||
  fail "--capacity profile line: $(tail -1 "$CAT")"
grep -q "^added 'mine-profile' .*, capacity 134217728 B (" "$T/out" || fail "--capacity profile said: $(cat "$T/out")"
# --capacity takes the units of the other commands: decimal ones are stored in bytes (the
# catalogue has no KB/MB/GB), and a bad value names every form it accepts
expect 0 "$MB" add mine-mb "$T/std.wl" --capacity 2MB $C
grep -q "^mine-mb native $T/std.wl - tpu-v4i 2000000 test generated$" "$CAT" || fail "--capacity 2MB: $(tail -1 "$CAT")"
cp "$CAT" "$T/before-bad-capacity"
expect 2 "$MB" add mine-bad "$T/std.wl" --capacity 2XB $C
grep -qxF "mallocbench add: --capacity '2XB': expected a byte count > 0 (units B, KiB, MiB, GiB, KB, MB, GB), 'profile' or 'auto'" "$T/out" ||
  fail "--capacity 2XB: $(cat "$T/out")"
cmp -s "$CAT" "$T/before-bad-capacity" || fail "a refused --capacity changed the catalogue"
if [ -f "$DATA/hlo/mlp_pt_xla.hlo" ]; then
  expect 0 "$MB" add mlp-real "$DATA/hlo/mlp_pt_xla.hlo" --data "$DATA" $C
  grep -q "^mlp-real hlo hlo/mlp_pt_xla.hlo - tpu-v4i [0-9]* test real$" "$CAT" ||
    fail "hlo line: $(tail -1 "$CAT")"
  grep -q "note:" "$T/out" && fail "a path under the data dir had a note: $(cat "$T/out")"
  # missing external data: skipped with one line, exit 0
  mkdir -p "$T/empty"
  expect 0 "$MB" list $C --stats --data "$T/empty"
  grep -q "^mlp-real *skipped: .*missing data file .*datasets/README.md says where" "$T/out" ||
    fail "missing data: $(cat "$T/out")"
  grep -q "1 skipped" "$T/out" || fail "skip count: $(cat "$T/out")"
fi

# a corrupt catalogue is reported with file:line:column, and add refuses to touch it
printf 'name kind source args hardware capacity split tags\nx hlo a.hlo - tpu-v4i 12XB test t\n' >"$T/broken.txt"
expect 2 "$MB" list --catalogue "$T/broken.txt"
grep -q "broken.txt:2:23: field 'capacity'" "$T/out" || fail "corrupt catalogue: $(cat "$T/out")"
cp "$T/broken.txt" "$T/broken.before"
expect 2 "$MB" add y builtin:standard --args n=64,dtype=f32 --catalogue "$T/broken.txt" --cache "$T/cache"
cmp -s "$T/broken.txt" "$T/broken.before" || fail "add modified a corrupt catalogue"
# a key given twice in a catalogue entry's args: list, run and add refuse the file by line and key
{
  echo 'name kind source args hardware capacity split tags'
  echo 'ok alphatensor builtin:standard n=64,dtype=f32 tpu-v4i profile test t'
  echo 'dup alphatensor builtin:standard n=64,dtype=f32,n=8 tpu-v4i profile test t'
} >"$T/dupkey.txt"
cp "$T/dupkey.txt" "$T/dupkey.before"
expect 2 "$MB" list --catalogue "$T/dupkey.txt"
grep -q "dupkey.txt:3:49: field 'args': duplicate key 'n'" "$T/out" || fail "list, duplicate key: $(cat "$T/out")"
expect 2 "$MB" run --catalogue "$T/dupkey.txt" --solvers heuristic --out "$T/dup.h5"
grep -q "dupkey.txt:3:49: field 'args': duplicate key 'n'" "$T/out" || fail "run, duplicate key: $(cat "$T/out")"
[ -e "$T/dup.h5" ] && fail "run wrote results from a catalogue with a duplicate key"
expect 2 "$MB" add y builtin:standard --args n=64,dtype=f32 --catalogue "$T/dupkey.txt" --cache "$T/cache"
grep -q "dupkey.txt:3:49: field 'args': duplicate key 'n'" "$T/out" || fail "add, duplicate key: $(cat "$T/out")"
cmp -s "$T/dupkey.txt" "$T/dupkey.before" || fail "add modified a catalogue with a duplicate key"

# a corrupt cache file is a one-line note on stderr, the cache path's control bytes escaped
# (error.h), and the workload is regenerated
CC=$T/$'ca\033[2Jche'
printf 'name kind source args hardware capacity split tags\nat alphatensor builtin:standard n=64,dtype=f32 tpu-v4i profile test x\n' >"$T/cc.txt"
"$MB" list --stats --catalogue "$T/cc.txt" --cache "$CC" >/dev/null 2>&1 || fail "list --stats with a cache"
for wl in "$CC"/*.wl; do printf 'garbage' >"$wl"; done
"$MB" list --stats --catalogue "$T/cc.txt" --cache "$CC" >"$T/out" 2>"$T/err" || fail "list, corrupt cache"
[ "$(wc -l <"$T/err")" = 1 ] || fail "corrupt cache: stderr is not one line: $(cat -v "$T/err")"
grep -qF 'ca\x1b[2Jche/' "$T/err" || fail "corrupt cache: path not escaped: $(cat -v "$T/err")"
grep -q 'is corrupt (its SHA-256 does not match .*); regenerating$' "$T/err" ||
  fail "corrupt cache note: $(cat -v "$T/err")"
if LC_ALL=C grep -q $'\x1b' "$T/err"; then fail "raw ESC in the corrupt-cache note"; fi

# the shipped catalogue parses and has 60+ entries
expect 0 "$MB" list
n=$(grep -c . "$T/out")
[ "$n" -ge 62 ] || fail "shipped catalogue lists $n lines"

# MALLOCBENCH_HOME moves the whole source tree: list, show and run read its catalogue (run, show
# and solve read the build's own before), its entries' sources and its hardware profiles
SRC=$(cd "$(dirname "$0")/../.." && pwd)
H=$T/home
mkdir -p "$H/datasets/samples"
ln -s "$SRC/datasets/hardware" "$H/datasets/hardware"
cp "$SRC/datasets/samples/mlp_tiny.wl" "$H/datasets/samples/"
{ echo "name kind source args hardware capacity split tags"
  echo "home_only native datasets/samples/mlp_tiny.wl - tpu-v4i 65536 train mlp"; } >"$H/datasets/catalogue.txt"
expect 0 env MALLOCBENCH_HOME="$H" "$MB" list
grep -q "^home_only " "$T/out" && [ "$(grep -c . "$T/out")" -le 3 ] ||
  fail "list under MALLOCBENCH_HOME: $(head -3 "$T/out")"
expect 0 env MALLOCBENCH_HOME="$H" "$MB" show home_only
grep -qF "entry 'home_only' of $H/datasets/catalogue.txt" "$T/out" ||
  fail "show under MALLOCBENCH_HOME: $(head -3 "$T/out")"
expect 0 env MALLOCBENCH_HOME="$H" "$MB" run --workloads '^home_only$' --solvers heuristic \
  --seeds 1 --out "$T/home.h5"
expect 0 "$MB" export "$T/home.h5" --csv "$T/home-csv"
grep -q "^[0-9]*,home_only," "$T/home-csv/results.csv" || fail "run under MALLOCBENCH_HOME: no home_only row"

[ "$fails" = 0 ] && echo "catalogue e2e: all passed" || echo "catalogue e2e: $fails failure(s)"
[ "$fails" = 0 ]
