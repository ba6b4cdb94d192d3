# Shared by the end-to-end scripts that kill and resume runs (sourced; needs $MB and fail).
# lines_of FILE: FILE's complete lines, 0 when it does not exist (yet).
lines_of() { { wc -l <"$1"; } 2>/dev/null || echo 0; }

# run_killed OUT LINES RUN_ARGS...: starts `$MB run RUN_ARGS... --out OUT` in the background
# and kills it with -9 once OUT.journal holds LINES lines (the header counts): a run killed
# before its journal exists has nothing to resume. Retried, up to 3 times, when this machine
# finished the run first.
run_killed() {
  local out=$1 lines=$2 pid attempt
  shift 2
  for attempt in 1 2 3; do
    rm -f "$out"*
    "$MB" run "$@" --out "$out" >/dev/null 2>&1 &
    pid=$!
    while kill -0 $pid 2>/dev/null && [ "$(lines_of "$out.journal")" -lt "$lines" ]; do
      sleep 0.002
    done
    # kill succeeds on a run that has just finished but is not reaped yet (a zombie), and a
    # finished run has removed its journal: only a journal left behind shows a real kill
    if kill -9 $pid 2>/dev/null; then
      wait $pid 2>/dev/null
      [ -f "$out.journal" ] && return 0
      continue
    fi
    wait $pid
  done
  fail "could not interrupt a run into $out"
}
