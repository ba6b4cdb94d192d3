# Shared set-up of the fail-fast end-to-end scripts (sourced; not a test itself: CMake runs
# tests/e2e/*.sh only). Gives a temporary folder $TMP removed on exit, fail (message, exit 1)
# and expect STATUS PATTERN CMD...: the command exits with STATUS, does not crash, and its
# stderr matches the extended regex PATTERN (stdout and stderr are kept in $TMP/out, $TMP/err).
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

expect() {
  local want=$1 pattern=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  [ "$got" = "$want" ] || fail "'$*' exited $got, expected $want; stderr: $(cat "$TMP/err")"
  [ $got -lt 128 ] || fail "'$*' crashed (status $got)"
  grep -qE -- "$pattern" "$TMP/err" || fail "'$*': stderr does not match '$pattern': $(cat "$TMP/err")"
}

# stdout_has GREP_OPTS PATTERN CMD...: CMD exits 0 and a line of its stdout matches PATTERN under
# grep's GREP_OPTS (-E, -F, -x, -Ex, -G, ...); stdout_lacks: CMD exits 0 and no line matches.
# Unlike `CMD | grep -q PATTERN`, a command that fails or crashes after printing the line fails.
# On failure the reason goes to stderr, for the caller's own `|| fail "..."`.
stdout_of() { # CMD...: its stdout into $TMP/stdout; false, saying why on stderr, unless it exits 0
  "$@" >"$TMP/stdout" 2>"$TMP/stdout.err"
  local st=$?
  [ $st = 0 ] || { echo "'$*' exited $st: $(cat "$TMP/stdout.err")" >&2; return 1; }
}
stdout_has() {
  local opts=$1 pattern=$2
  shift 2
  stdout_of "$@" && grep -q $opts -- "$pattern" "$TMP/stdout"
}
stdout_lacks() {
  local opts=$1 pattern=$2
  shift 2
  stdout_of "$@" && ! grep -q $opts -- "$pattern" "$TMP/stdout"
}
