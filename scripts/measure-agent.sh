#!/usr/bin/env bash
# Measures agents the way datasets/agents/EXPERIMENTS.md records every training recipe, in one
# command. For each AGENT.h5, three `mallocbench bench muzero` runs on a catalogue split: the
# search table (--returns 0,2,8,32: raw policy, learned model and exact game, paired per
# workload), the one-step model accuracy (--model-error 2) and the path values k steps deep
# (--unroll-error 2). Their full outputs go to OUTDIR/NAME.{returns,model,unroll}.txt; then one
# Markdown table row per agent, with the record's columns:
#   raw policy | learned 2 / 8 / 32 | learned 32 vs 2 (mean +- s.e., workloads higher / level /
#   lower) | exact 2 / 8 / 32 | |E_0 - G| (the value network) | drift |E^_k - E_k| at
#   k = 1 / 5 / 12 | one-step error / siblings' spread (ratio) | the policy's two favourites
#   ordered like the rollouts: learned one-step values / logits
# ("-" where the set has no such number, e.g. no path 12 steps deep). Every number is simulated
# by the cost model. Agents run one after the other; run two invocations side by side to use two
# cores (about 5-8 minutes per agent on the train split).
# Usage: scripts/measure-agent.sh [--split S] [--catalogue FILE] [--out DIR] AGENT.h5...
#   --split S        catalogue split (default train; the record chooses on train only)
#   --catalogue FILE a catalogue of one's own (default: the suite's)
#   --out DIR        where the outputs go (default: results/measure in the source tree)
# The binary is build/mallocbench in the source tree (scripts/build.sh build), or $MALLOCBENCH;
# it runs under scripts/pinned-blas.sh, as the record's measurements do.
set -uo pipefail
# paths are the caller's (relative to where it runs); the project's own files are found from here
root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
usage() { # the header comment above
  awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"
}
die() {
  echo "measure-agent: $*" >&2
  exit 2
}
split=train catalogue='' out=$root/results/measure
agents=()
while [ $# -gt 0 ]; do
  case $1 in
    --split) [ $# -ge 2 ] || die "--split needs a split (train or test)"; split=$2; shift 2 ;;
    --catalogue) [ $# -ge 2 ] || die "--catalogue needs a file"; catalogue=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) die "unknown option '$1' (scripts/measure-agent.sh --help)" ;;
    *) agents+=("$1"); shift ;;
  esac
done
[ ${#agents[@]} -gt 0 ] || die "no agent given (usage: scripts/measure-agent.sh [options] AGENT.h5...)"
names=()
for a in "${agents[@]}"; do
  [ -f "$a" ] || die "agent '$a' not found"
  name=$(basename "$a" .h5)
  # the outputs are named by it: a second agent of the same name would overwrite the first's
  case " ${names[*]} " in *" $name "*) die "two agents named '$name': their outputs would share a name" ;; esac
  names+=("$name")
done
[ -z "$catalogue" ] || [ -f "$catalogue" ] || die "--catalogue '$catalogue' not found"
mb=${MALLOCBENCH:-$root/build/mallocbench}
[ -x "$mb" ] || die "no mallocbench binary at '$mb' (build with scripts/build.sh build, or set MALLOCBENCH)"
# every agent known by its digest before the first (minutes-long) run: a file that is not one
# is refused at once, not after the agents before it were measured
digests=()
for a in "${agents[@]}"; do
  digest=$("$mb" show "$a" 2>/dev/null | awk '$1 == "digest" { print substr($2, 1, 8) }')
  [ -n "$digest" ] || die "'$a' is not an agent checkpoint ('mallocbench show $a' says why)"
  digests+=("$digest")
done
mkdir -p "$out" || die "cannot create --out '$out'"
set_args=(--split "$split")
[ -z "$catalogue" ] || set_args+=(--catalogue "$catalogue")

bench() { # AGENT OUTPUT ARGS...: one bench muzero run, its output kept
  local agent=$1 file=$2
  shift 2
  "$root/scripts/pinned-blas.sh" "$mb" bench muzero --agent "$agent" "$@" "${set_args[@]}" \
    >"$file" 2>"$file.err"
  local status=$?
  if [ $status != 0 ]; then
    echo "measure-agent: bench muzero $* failed on $agent (exit $status):" >&2
    cat "$file.err" >&2
    return $status
  fi
  rm -f "$file.err"
}

# The row's cells from the three outputs (awk: fixed columns of bench muzero's tables).
row() { # NAME DIGEST RETURNS MODEL UNROLL
  awk -v name="$1" -v digest="$2" '
    function or_dash(x) { return x == "" ? "-" : x }
    # the search table without its parentheses: "K learned exact"
    FILENAME == ARGV[1] { line = $0; gsub(/\([^)]*\)/, "", line); n = split(line, f, " ") }
    FILENAME == ARGV[1] && n == 3 && f[1] == 0 && $2 == "(raw" { raw = f[2] }
    FILENAME == ARGV[1] && n == 3 && (f[1] == 2 || f[1] == 8 || f[1] == 32) {
      learned[f[1]] = f[2]; exact[f[1]] = f[3] }
    FILENAME == ARGV[1] && $1 == 32 && $2 == "vs" && $3 == 2 {
      paired = $4 " +- " $6 " (" $7 " / " $9 " / " $11 ")" }
    FILENAME == ARGV[2] && /learned Q1\^ vs exact Q1/ {
      err = $7; spread = $NF; sub(/\)$/, "", spread) }
    FILENAME == ARGV[2] && /two favourites, ordered like the rollouts \(/ {
      fav_l = $(NF - 3); sub(/,$/, "", fav_l); fav_p = $NF }
    FILENAME == ARGV[3] && $1 ~ /^[0-9]+$/ && NF >= 7 {
      if ($1 == 0) e0 = $3; else drift[$1] = $5 }
    END {
      ratio = (err != "" && spread + 0 > 0) ? sprintf(" (%.1fx)", err / spread) : ""
      printf "| %s (`%s…`) | %s | %s / %s / %s | %s | %s / %s / %s | %s | %s / %s / %s | %s | %s |\n",
        name, digest, or_dash(raw), or_dash(learned[2]), or_dash(learned[8]),
        or_dash(learned[32]), or_dash(paired), or_dash(exact[2]), or_dash(exact[8]),
        or_dash(exact[32]), or_dash(e0), or_dash(drift[1]), or_dash(drift[5]),
        or_dash(drift[12]), err == "" ? "-" : err " / " spread ratio,
        fav_l == "" ? "-" : fav_l " / " fav_p }' "$3" "$4" "$5"
}

rows=()
for i in "${!agents[@]}"; do
  a=${agents[$i]} name=${names[$i]}
  base="$out/$name"
  echo "measure-agent: $a: search table, one-step accuracy, path values ($split split)" >&2
  bench "$a" "$base.returns.txt" --returns 0,2,8,32 &&
    bench "$a" "$base.model.txt" --model-error 2 &&
    bench "$a" "$base.unroll.txt" --unroll-error 2 || exit
  rows+=("$(row "$name" "${digests[$i]}" "$base.returns.txt" "$base.model.txt" "$base.unroll.txt")")
done
echo "Simulated by the cost model, $split split; outputs in $out/."
echo "| agent | raw policy | learned 2 / 8 / 32 | learned 32 vs 2 | exact 2 / 8 / 32 | \\|E_0 - G\\| |" \
  "drift at k = 1 / 5 / 12 | one-step error / spread | favourites ordered: learned Q1 / logits |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
