#!/usr/bin/env bash
# Every command reads its command line the same way:
# - `--help` prints the command's usage on stdout and exits 0;
# - an unknown option, alone or followed by a value, is named as unknown ("mallocbench CMD:
#   unknown option '--bogus' (see mallocbench CMD --help)"), exit 2, nothing on stdout (before,
#   several commands said "--bogus needs a value", or took it for a file name);
# - every option that the help shows with a value (synopsis "[--flag VALUE]" or an indented
#   "--flag VALUE" line), given last, says "mallocbench CMD: --flag needs a value", exit 2: the
#   help and the parser agree on every documented option.
# Usage: cli_usage.sh MALLOCBENCH_BINARY (run from the source tree).
set -u
MB=${1:?usage: cli_usage.sh MALLOCBENCH_BINARY}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$TMP" || fail "cd $TMP" # nothing below may write into the source tree

COMMANDS=(show check "import hlo" "import csv" "generate alphatensor" "generate model"
  "generate packing" list add solve pack run verify export summary plot report play train
  "bench core" "bench solvers" "bench nn" "bench game" "bench muzero")

# The options the help shows with a value. The forms of import and generate share one help
# text, so theirs are listed here, per form.
valued_options() { # COMMAND
  case "$1" in
    "import hlo") echo "-o --repeat" ;;
    "import csv") echo "-o --capacity --repeat" ;;
    "generate alphatensor") echo "--builtin --n --dtype -o --name" ;;
    "generate model") echo "-o --name" ;;
    "generate packing") echo "--buffers --seed --height --quantum --length -o --name --solution" ;;
    *)
      # shellcheck disable=SC2086
      { "$MB" $1 --help | awk 'NR == 1 || (started && NF) { started = 1; print; next } { exit }' |
          grep -oE -- '--[a-z][a-z0-9-]* [A-Za-z0-9][A-Za-z0-9.,|=:_]*'
        "$MB" $1 --help | grep -oE -- '^ *--[a-z][a-z0-9-]* [A-Z][A-Z0-9_.,|]*( |$)'
      } | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' ' ;;
  esac
}

checked=0
for cmd in "${COMMANDS[@]}"; do
  # shellcheck disable=SC2086
  "$MB" $cmd --help >out 2>err || fail "$cmd --help: exit $?"
  head -1 out | grep -q "^usage: mallocbench ${cmd%% *}" || fail "$cmd --help: $(head -1 out)"

  for extra in "" 1; do
    # shellcheck disable=SC2086
    "$MB" $cmd --bogus $extra >out 2>err
    rc=$?
    [ "$rc" = 2 ] || fail "$cmd --bogus $extra: exit $rc, expected 2"
    want="mallocbench $cmd: unknown option '--bogus' (see mallocbench $cmd --help)"
    [ "$(head -1 err)" = "$want" ] || fail "$cmd --bogus $extra said '$(head -1 err)', expected '$want'"
    [ -s out ] && fail "$cmd --bogus $extra printed on stdout: $(head -3 out)"
  done

  flags=$(valued_options "$cmd")
  [ -n "$flags" ] || case "$cmd" in verify) ;; *) fail "$cmd: no options with a value found in its help" ;; esac
  for flag in $flags; do
    # shellcheck disable=SC2086
    "$MB" $cmd "$flag" >out 2>err </dev/null
    rc=$?
    [ "$rc" = 2 ] || fail "$cmd $flag (no value): exit $rc, expected 2"
    case "$(head -1 err)" in
      "mallocbench $cmd: $flag needs a value"*) ;;
      *) fail "$cmd $flag (no value) said '$(head -1 err)'" ;;
    esac
    checked=$((checked + 1))
  done
done
[ "$checked" -ge 150 ] || fail "only $checked options checked: the help parsing lost some"
[ -z "$(ls -A "$TMP" | grep -vxE 'out|err')" ] || fail "files written: $(ls -A "$TMP")"
echo "cli_usage: ${#COMMANDS[@]} commands, $checked options with a value: ok"
