#!/bin/bash
# End-to-end: concurrent `mallocbench add`s on one catalogue serialise on its advisory lock.
# 8 adds of distinct names and 4 of one same name start together: every distinct name lands
# exactly once (no lost update), the same name exactly once and the 3 others fail with the
# duplicate-name message and exit 2, and the catalogue still parses. Concurrent adds that
# create a missing catalogue create it once. An add waits while another process holds the
# lock (so the lock is really taken, not merely unneeded by luck of timing).
# Usage: add_concurrent.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: add_concurrent.sh MALLOCBENCH_BINARY}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
S=$ROOT/datasets/samples
# $TMP, fail
source "$(dirname "$0")/lib/expect.bash"
SAMPLES=("$S/mlp_tiny.wl" "$S/attention_block.wl" "$S/conv_block.wl" "$S/train_step.wl")
CAT=$TMP/cat.txt
cat >"$CAT" <<CAT
# a small catalogue for the concurrency test
name kind source args hardware capacity split tags
base native $S/mlp_tiny.wl - tpu-v4i 2MiB test quick
CAT

# A start barrier, so that the adds really overlap: each waits for a shared lock on
# $TMP/barrier, which this script holds exclusively until all are launched. Without flock(1)
# they start as fast as bash forks them.
HAVE_FLOCK=$(command -v flock || true)
exec 9>"$TMP/barrier"
[ -n "$HAVE_FLOCK" ] && flock -x 9
# launch ID ARGS...: runs `mallocbench ARGS...` in the background after the barrier, keeping
# stdout, stderr and the exit status in $TMP/ID.{out,err,rc}.
launch() {
  local id=$1
  shift
  (
    exec 8<&- 9<&- # never hold the barrier's or the test's lock in the add itself
    [ -n "$HAVE_FLOCK" ] && flock -s "$TMP/barrier" true
    "$MB" "$@" >"$TMP/$id.out" 2>"$TMP/$id.err"
    echo $? >"$TMP/$id.rc"
  ) &
}
release() { [ -n "$HAVE_FLOCK" ] && flock -u 9; wait; }

# ---- 8 distinct names and 4 adds of one name, all at once ----
for i in 0 1 2 3 4 5 6 7; do
  launch "p$i" add "p$i" "${SAMPLES[$((i % 4))]}" --catalogue "$CAT" --capacity 1MiB
done
for j in 0 1 2 3; do
  launch "same$j" add same "${SAMPLES[$j]}" --catalogue "$CAT" --capacity 2MiB
done
release

for i in 0 1 2 3 4 5 6 7; do
  [ "$(cat "$TMP/p$i.rc")" = 0 ] || fail "add p$i exited $(cat "$TMP/p$i.rc"): $(cat "$TMP/p$i.err")"
  n=$(grep -c "^p$i " "$CAT")
  [ "$n" = 1 ] || fail "p$i appears $n times in the catalogue (want 1):"$'\n'"$(cat "$CAT")"
done
n=$(grep -c "^same " "$CAT")
[ "$n" = 1 ] || fail "'same' appears $n times in the catalogue (want 1):"$'\n'"$(cat "$CAT")"
ok=0 dup=0
for j in 0 1 2 3; do
  rc=$(cat "$TMP/same$j.rc")
  if [ "$rc" = 0 ]; then
    ok=$((ok + 1))
  elif [ "$rc" = 2 ] && grep -qE "cat\.txt:[0-9]+: a workload named 'same' already exists" "$TMP/same$j.err"; then
    dup=$((dup + 1))
  else
    fail "add same ($j) exited $rc: $(cat "$TMP/same$j.err")"
  fi
done
[ "$ok" = 1 ] && [ "$dup" = 3 ] || fail "adds of 'same': $ok succeeded, $dup refused as duplicates (want 1 and 3)"
[ "$(grep -c '^base ' "$CAT")" = 1 ] || fail "the original entry was lost"
"$MB" list --catalogue "$CAT" >"$TMP/out" 2>&1 || fail "list of the catalogue: $(cat "$TMP/out")"
grep -q "10 listed" "$TMP/out" || fail "list: $(cat "$TMP/out")"
# every add reported the line its entry is on
for id in p0 p1 p2 p3 p4 p5 p6 p7; do
  line=$(sed -n "s/.*(line \([0-9]*\)).*/\1/p" "$TMP/$id.out")
  [ -n "$line" ] && sed -n "${line}p" "$CAT" | grep -q "^$id " ||
    fail "$id reported line '$line', which holds: $(sed -n "${line:-0}p" "$CAT" 2>/dev/null)"
done
ls "$TMP"/cat.txt.tmp.* >/dev/null 2>&1 && fail "temporary files left: $(ls "$TMP"/cat.txt.tmp.*)"

# ---- concurrent adds to a catalogue that does not exist yet: created exactly once ----
NEW=$TMP/new.txt
[ -n "$HAVE_FLOCK" ] && flock -x 9
for i in 0 1 2 3; do
  launch "n$i" add "n$i" "${SAMPLES[$i]}" --catalogue "$NEW" --capacity 1MiB
done
release
created=0
for i in 0 1 2 3; do
  [ "$(cat "$TMP/n$i.rc")" = 0 ] || fail "add n$i (new file) exited $(cat "$TMP/n$i.rc"): $(cat "$TMP/n$i.err")"
  grep -q "(new file)" "$TMP/n$i.out" && created=$((created + 1))
  [ "$(grep -c "^n$i " "$NEW")" = 1 ] || fail "n$i is not exactly once in the new catalogue:"$'\n'"$(cat "$NEW")"
done
[ "$created" = 1 ] || fail "$created adds claim to have created the catalogue (want 1)"
[ "$(grep -c '^name kind source' "$NEW")" = 1 ] || fail "new catalogue header count:"$'\n'"$(cat "$NEW")"
"$MB" list --catalogue "$NEW" >"$TMP/out" 2>&1 || fail "list of the new catalogue: $(cat "$TMP/out")"

# ---- an add waits while another process holds the catalogue's lock ----
if [ -n "$HAVE_FLOCK" ]; then
  exec 8<"$CAT"
  flock -x 8
  launch held add held "$S/mlp_tiny.wl" --catalogue "$CAT" --capacity 1MiB
  sleep 1
  [ -e "$TMP/held.rc" ] && fail "add finished while another process held the lock (rc $(cat "$TMP/held.rc")): $(cat "$TMP/held.err")"
  grep -q '^held ' "$CAT" && fail "add wrote the catalogue while another process held the lock"
  exec 8<&- # releases the lock
  wait
  [ "$(cat "$TMP/held.rc")" = 0 ] || fail "add after the lock was released exited $(cat "$TMP/held.rc"): $(cat "$TMP/held.err")"
  [ "$(grep -c '^held ' "$CAT")" = 1 ] || fail "'held' not added once after the lock was released"
else
  echo "note: flock(1) not found: the start barrier and the held-lock check are skipped"
fi

echo "add_concurrent e2e: all passed"
