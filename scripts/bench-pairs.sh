#!/usr/bin/env bash
# bench-pairs.sh: compare what a turn costs in two builds of purser.
#
#   scripts/bench-pairs.sh ROUNDS OLD NEW [purser bench flags...]
#
# Runs `purser bench --up` of OLD and of NEW (two built binaries) in
# alternation, ROUNDS pairs, OLD first in odd rounds and NEW first in even
# ones, each run in a fresh folder, with the flags given (by default issue
# 38's: --users 1000 --duration 20s --pause 600ms). With DATABASE_URL set
# to a server, each run gets a fresh database of its own on it.
#
# It prints each run's CPU a turn, the baseline's, their ratio, turns a
# second, bytes written a turn and bytes allocated a turn (purser's run),
# then each build's medians. One run tells little: on a shared two-core
# machine the same binary's CPU a turn moves by a quarter from one run to
# the next. Full outputs go to $BENCH_PAIRS_LOG (default bench-pairs.log
# in the current folder).
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
rounds=$1 old=$(realpath "$2") new=$(realpath "$3")
shift 3
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(--users 1000 --duration 20s --pause 600ms)
log=$(realpath -m "${BENCH_PAIRS_LOG:-bench-pairs.log}")
: >"$log"
results=$(mktemp)
trap 'rm -f "$results"' EXIT

run() { # label binary
  local dir db="" url="${DATABASE_URL:-}" out
  dir=$(mktemp -d)
  if [ -n "$url" ]; then
    db="bench_pairs_$(date +%s%N)"
    psql -q "$url" -c "CREATE DATABASE $db" >/dev/null
    url="$(printf '%s' "$url" | sed -E "s#/[^/?]*(\?|$)#/$db\1#")"
  fi
  out=$(cd "$dir" && DATABASE_URL="$url" "$2" bench --up "${flags[@]}" 2>&1) || true
  rm -rf "$dir"
  [ -n "$db" ] && psql -q "${DATABASE_URL}" -c "DROP DATABASE $db" >/dev/null
  printf '=== %s %s\n%s\n' "$1" "$2" "$out" >>"$log"
  # "CPU a turn: purser 1.41 ms, baseline 0.43 ms: purser/baseline 3.27x"
  local cpu base ratio tps kb
  cpu=$(sed -nE 's/.*CPU a turn: purser ([0-9.]+) ms.*/\1/p' <<<"$out")
  base=$(sed -nE 's/.*CPU a turn: purser [0-9.]+ ms, baseline ([0-9.]+) ms.*/\1/p' <<<"$out")
  ratio=$(sed -nE 's/.*purser\/baseline ([0-9.]+)x.*/\1/p' <<<"$out")
  tps=$(sed -nE 's/^purser .*= *([0-9.]+) turns\/s.*/\1/p' <<<"$out" | head -1)
  kb=$(sed -nE 's/.*written to storage a turn: ([0-9.]+) KB by this process(, [0-9.]+ KB of Postgres WAL, ([0-9.]+) KB in all)?.*/\1 \3/p' <<<"$out" |
    awk '{print ($2 != "" ? $2 : $1)}')
  # purser's own line (the first): "...; 131.2 KB a turn allocated, ..."
  alloc=$(sed -nE 's/.*; ([0-9.]+) KB a turn allocated.*/\1/p' <<<"$out" | head -1)
  alloc=${alloc:--}
  if [ -z "$cpu" ] || [ -z "$ratio" ]; then
    echo "$1: no cost line in the bench's output (see $log)" >&2
    exit 1
  fi
  printf '%-4s cpu %s ms  baseline %s ms  ratio %sx  %s turns/s  %s KB  %s KB allocated\n' "$1" "$cpu" "$base" "$ratio" "$tps" "$kb" "$alloc"
  echo "$1 $cpu $base $ratio $tps $kb $alloc" >>"$results"
}

for i in $(seq 1 "$rounds"); do
  if [ $((i % 2)) -eq 1 ]; then run old "$old"; run new "$new"; else run new "$new"; run old "$old"; fi
done

median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
for b in old new; do
  printf '%s median of %d: cpu %s ms  baseline %s ms  ratio %sx  %s turns/s  %s KB  %s KB allocated\n' "$b" "$rounds" \
    "$(awk -v b=$b '$1==b {print $2}' "$results" | median)" "$(awk -v b=$b '$1==b {print $3}' "$results" | median)" \
    "$(awk -v b=$b '$1==b {print $4}' "$results" | median)" "$(awk -v b=$b '$1==b {print $5}' "$results" | median)" \
    "$(awk -v b=$b '$1==b {print $6}' "$results" | median)" "$(awk -v b=$b '$1==b {print $7}' "$results" | median)"
done
