#!/usr/bin/env bash
# Runs the whole frontend suite N times (default 20) while every core is kept busy,
# and counts the failed runs: a suite that passes only on an idle machine is flaky.
# The load is `stress --cpu <cores>` where installed, else one shell busy loop per
# core; it is stopped when the script ends, however it ends.
set -u
runs=${1:-20}
cd "$(dirname "$0")/.."
cores=$(nproc)
logs=$(mktemp -d)
load=()

stop_load() {
  for pid in "${load[@]}"; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
}
trap stop_load EXIT
trap 'exit 130' INT TERM

# setsid: each load process leads its own process group, so that stopping the group
# also stops the workers `stress` forks.
if command -v stress >/dev/null; then
  setsid stress --cpu "$cores" >/dev/null 2>&1 &
  load+=($!)
else
  for _ in $(seq "$cores"); do
    setsid bash -c 'while :; do :; done' &
    load+=($!)
  done
fi
echo "load: ${cores} busy cores; ${runs} runs of the frontend suite; logs in ${logs}"

failed=0
for run in $(seq "$runs"); do
  start=$SECONDS
  if npx vitest run >"$logs/run-$run.log" 2>&1; then
    echo "run $run/$runs: passed ($((SECONDS - start)) s)"
    rm -f "$logs/run-$run.log"
  else
    failed=$((failed + 1))
    echo "run $run/$runs: FAILED ($((SECONDS - start)) s), see $logs/run-$run.log"
    grep -E '(FAIL|×) ' "$logs/run-$run.log" | sed 's/\x1b\[[0-9;]*m//g' | head -10
  fi
done
echo "$failed of $runs runs failed under load"
[ "$failed" -eq 0 ]
