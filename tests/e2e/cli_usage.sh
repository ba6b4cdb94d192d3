#!/usr/bin/env bash
# Every command reads its command line the same way:
# - `--help` prints the command's usage on stdout and exits 0;
# - an unknown option, alone or followed by a value, is named as unknown ("mallocbench CMD:
#   unknown option '--bogus' (see mallocbench CMD --help)"), exit 2, nothing on stdout (before,
#   several commands said "--bogus needs a value", or took it for a file name);
# - every option that the help shows with a value (synopsis "[--flag VALUE]" or an indented
#   "--flag VALUE" line), given last, says exactly "mallocbench CMD: --flag needs a value", exit
#   2: the help and the parser agree on every documented option (summary added "(train or
#   test)" to it);
# - every such long option given as "--flag=VALUE" does what "--flag VALUE" does: the same
#   stdout, stderr and exit status, with VALUE 'x' (a bad value for a number, a good one for a
#   name) and a --bogus after it (so that nothing runs) (before, only run and summary split
#   "--flag=VALUE"; the others called it an unknown option; bench's targets were the last);
# - a flag that takes no value refuses one: "--force=1" is an unknown option (run took it for
#   --force), named before a --bogus after it;
# - a value that must be one of a few words is refused with the same line in every command:
#   "mallocbench CMD: FLAG 'VALUE': expected A, B or C" (mb_option_choice).
# - a command missing an argument it requires (none given, or the first of two) says what is
#   missing or prints its usage on stderr, exit 2 (not a crash: add once read past a missing
#   SOURCE under a mutant no test caught).
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
      "mallocbench $cmd: $flag needs a value") ;;
      *) fail "$cmd $flag (no value) said '$(head -1 err)'" ;;
    esac
    checked=$((checked + 1))
  done
done
# A command missing an argument it requires says so (its usage, or what is missing) on stderr,
# exit 2, nothing on stdout: given none at all, and given the first of two.
for args in show check "import hlo" "import csv" "generate alphatensor" "generate model" \
  "generate packing" add solve pack verify export summary plot report play "check w.wl" \
  "import hlo f.hlo" "import csv f.csv" "add name" "solve w.wl" "export f.h5"; do
  # shellcheck disable=SC2086
  "$MB" $args >out 2>err </dev/null
  rc=$?
  [ "$rc" = 2 ] || fail "'$args': exit $rc, expected 2 ($(head -1 err))"
  [ -s out ] && fail "'$args' printed on stdout: $(head -3 out)"
  grep -qE "^usage: mallocbench ${args%% *}|^mallocbench ${args%% *}.*(required|need|missing)" err ||
    fail "'$args' said '$(head -1 err)'"
done
# "--flag=VALUE" is "--flag VALUE" (mb_option_arg_read, suite/cli/commands.h), in every command.
attached=0
for cmd in "${COMMANDS[@]}"; do
  for flag in $(valued_options "$cmd"); do
    case "$flag" in --*) ;; *) continue ;; esac # -o=VALUE is no option: '=' splits long ones
    # shellcheck disable=SC2086
    "$MB" $cmd "$flag=x" --bogus >out2 2>err2 </dev/null
    echo "exit $?" >>err2
    # shellcheck disable=SC2086
    "$MB" $cmd "$flag" x --bogus >out 2>err </dev/null
    echo "exit $?" >>err
    if ! cmp -s out out2 || ! cmp -s err err2; then
      fail "$cmd $flag=x said '$(head -1 err2)' ($(tail -1 err2)), $cmd $flag x '$(head -1 err)' ($(tail -1 err))"
    fi
    if grep -qF -- "$flag=x" err2; then fail "$cmd $flag=x: $(head -1 err2)"; fi
    attached=$((attached + 1))
  done
  # the flags without a value: "[--flag]" in the synopsis, or an indented "--flag  text" line
  # shellcheck disable=SC2086
  for flag in $({ "$MB" $cmd --help | grep -oE -- '\[--[a-z][a-z0-9-]*\]'
    "$MB" $cmd --help | grep -oE -- '^ *(-[a-z], )?--[a-z][a-z0-9-]*( {2,}|$)'
  } | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
    # shellcheck disable=SC2086
    "$MB" $cmd "$flag=1" --bogus >out 2>err </dev/null
    rc=$?
    want="mallocbench $cmd: unknown option '$flag=1' (see mallocbench $cmd --help)"
    if [ "$rc" != 2 ] || [ "$(head -1 err)" != "$want" ]; then
      fail "$cmd $flag=1: exit $rc, '$(head -1 err)'"
    fi
  done
done
[ "$attached" -ge 170 ] || fail "only $attached options checked as --flag=VALUE"

# One line for a value that is not one of its words, whatever the command.
WL=$OLDPWD/datasets/samples/mlp_tiny.wl
choice() { # CMD FLAG WORDS [ARGS...]: CMD ARGS FLAG bad, and CMD ARGS FLAG=bad
  local cmd=$1 flag=$2 words=$3 forms=("$2 bad" "$2=bad")
  shift 3
  for form in "${forms[@]}"; do
    # shellcheck disable=SC2086
    "$MB" $cmd "$@" $form >out 2>err </dev/null
    rc=$?
    want="mallocbench $cmd: $flag 'bad': expected $words"
    if [ "$rc" != 2 ] || [ "$(cat err)" != "$want" ]; then
      fail "$cmd $* $form: exit $rc, '$(cat err)', expected '$want'"
    fi
  done
}
choice list --split "train or test"
choice run --split "train or test"
choice summary --split "train or test" x.h5
choice train --split "train or test" --out a.h5
choice play --policy "random, heuristic or slow" "$WL"
choice play --order "heuristic, start or size" "$WL"
choice run --search "gumbel or puct"
choice solve --search "gumbel or puct" "$WL" --solver heuristic
choice "bench muzero" --search "gumbel or puct"
choice "bench muzero" --rescale "node or tree"
choice "bench muzero" --split "train or test"

# An argument may hold any byte: every message that echoes one is a single line with the control
# bytes spelled \xHH (mb_diag, suite/error.h), never raw on the terminal.
CTL=$'a\x1b[2J\nb\rc'
SHOWN='a\x1b[2J\x0ab\x0dc'
one_line() { # STATUS TEXT CMD...: exits STATUS, stderr is one line holding TEXT, no ESC or CR
  local want=$1 text=$2
  shift 2
  "$@" >out 2>err </dev/null
  local got=$?
  [ "$got" = "$want" ] || fail "'$*' exited $got, expected $want"
  [ "$(wc -l <err)" = 1 ] || fail "'$*': stderr has $(wc -l <err) lines, expected 1: $(cat -v err)"
  if LC_ALL=C grep -q $'[\x1b\r]' err; then fail "'$*': raw ESC or CR on stderr: $(cat -v err)"; fi
  grep -qF -- "$text" err || fail "'$*': stderr lacks '$text': $(cat -v err)"
}
for cmd in "${COMMANDS[@]}"; do
  # shellcheck disable=SC2086
  one_line 2 "mallocbench $cmd: unknown option '--$SHOWN' (see mallocbench $cmd --help)" \
    "$MB" $cmd "--$CTL"
done
one_line 2 "mallocbench: '$SHOWN' is not a command; see 'mallocbench --help'" "$MB" "$CTL"
one_line 2 "mallocbench show: one workload at a time ('x.wl' and '$SHOWN')" "$MB" show x.wl "$CTL"
one_line 2 "mallocbench run: --jobs '$SHOWN': expected an integer in 1..1000000" \
  "$MB" run --jobs "$CTL"
one_line 2 "mallocbench train: --lr '$SHOWN': expected a number in [1e-09, 1]" \
  "$MB" train --synthetic --steps 1 --lr "$CTL" --out a.h5
one_line 2 "mallocbench pack: --capacity '$SHOWN': expected bytes" \
  "$MB" pack x.csv --capacity "$CTL"
one_line 2 "mallocbench summary: --split '$SHOWN': expected train or test" \
  "$MB" summary --split "$CTL"
one_line 2 "mallocbench solve: no solver named '$SHOWN' (see --help)" \
  "$MB" solve x.wl --solver "$CTL"
one_line 2 "mallocbench bench: unknown target '$SHOWN'" "$MB" bench "$CTL"
one_line 2 "mallocbench generate: unknown generator '$SHOWN'" "$MB" generate "$CTL"
one_line 2 "mallocbench import: unknown format '$SHOWN'" "$MB" import "$CTL" x -o y.wl
one_line 2 "mallocbench pack: /nonexistent/$SHOWN.csv: no --capacity and none in the file name" \
  "$MB" pack "/nonexistent/$CTL.csv"
one_line 2 "mallocbench summary: one results file expected, got 'x.h5' and '$SHOWN'" \
  "$MB" summary x.h5 "$CTL"

# one positional argument too many is refused before anything runs: exit 2, nothing on stdout,
# the extra argument named on stderr (generate alphatensor says it needs one of FILE or
# --builtin; bench game reads its argument as a workload)
extra_args=("show x.wl" "check x.wl a.csv" "import hlo x.hlo -o y.wl" "import csv x.csv -o y.wl"
  "generate model x.spec -o y.wl" "generate packing --buffers 10 -o y.wl" "list" "add n x.wl"
  "solve x.wl --solver heuristic" "pack x.csv" "run" "verify x.h5" "export x.h5 --csv d"
  "summary x.h5" "plot x.h5" "report x.h5" "play x.wl" "train" "bench core" "bench solvers"
  "bench nn" "bench muzero")
for args in "${extra_args[@]}"; do
  # shellcheck disable=SC2086 # the words of args are the command line
  "$MB" $args EXTRA_ARG >out 2>err
  st=$?
  [ $st = 2 ] && [ ! -s out ] && grep -q "EXTRA_ARG" err ||
    fail "$args EXTRA_ARG: exit $st, stdout $(wc -c <out) bytes, stderr '$(head -1 err)'"
done

# an option whose help shows a file or folder (FILE, DIR, PATH, OUT, X.h5, X.csv) refuses an
# empty value with the same line everywhere (before, some took '' for "unset", some failed later
# on an empty name with their own message)
path_options() { # COMMAND (the forms of import and generate share one help text: listed here)
  case "$1" in
    "import hlo" | "import csv" | "generate alphatensor" | "generate model") echo "-o" ;;
    "generate packing") echo "-o --solution" ;;
    *)
      # shellcheck disable=SC2086 # the command's words
      "$MB" $1 --help |
        grep -oE -- '(^ *|\[)--[a-z][a-z0-9-]* [A-Z]*(FILE|DIR|PATH|OUT|CHECKPOINT|AGENT|ASSIGNMENT)' |
        sed -E 's/^[ []*//; s/ .*//' | sort -u
      ;;
  esac
}
paths=0
for cmd in "${COMMANDS[@]}"; do
  for flag in $(path_options "$cmd"); do
    # shellcheck disable=SC2086
    "$MB" $cmd "$flag" '' >out 2>err
    st=$?
    [ $st = 2 ] && grep -qF -- "$flag '': expected a file path" err ||
      fail "$cmd $flag '': exit $st, stderr '$(head -1 err)'"
    paths=$((paths + 1))
  done
done
[ "$paths" -ge 40 ] || fail "only $paths path options checked: the help parsing lost some"

# show names the flag of "--flag=VALUE", not the whole argument, when it refuses it for a file
printf '\x89HDF\r\n\x1a\n' >fake.h5
one_line 2 "mallocbench show: fake.h5: --hardware applies to workloads, not to HDF5 files" \
  "$MB" show --hardware=tpu-v4i fake.h5
rm fake.h5

[ "$checked" -ge 150 ] || fail "only $checked options checked: the help parsing lost some"
[ -z "$(ls -A "$TMP" | grep -vxE 'out2?|err2?')" ] || fail "files written: $(ls -A "$TMP")"
echo "cli_usage: ${#COMMANDS[@]} commands, $checked options with a value, $attached as --flag=VALUE," \
  "$paths path options refusing '': ok"
