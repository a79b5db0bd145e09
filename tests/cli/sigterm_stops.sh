#!/usr/bin/env bash
# SIGTERM (a batch scheduler's preemption notice) stops a running sweep within the grace period:
# starts a sweep, sends SIGTERM WARMUP seconds after its journal appears, and checks that it exits with 130 and a
# journal to resume within LIMIT seconds. Prints the measured stop time.
# Usage: sigterm_stops.sh CLUSTERSIM SCENARIO WARMUP LIMIT
set -u
cli="$1" scenario="$2" warmup="$3" limit="$4"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" sweep "$scenario" -j 2 --out "$dir/r.h5" >/dev/null 2>"$dir/log" &
pid=$!
for _ in $(seq 100); do [ -f "$dir/r.h5.partial" ] && break; sleep 0.1; done
sleep "$warmup"
sent=$(date +%s.%N)
kill -TERM "$pid"
wait "$pid"
rc=$?
took=$(awk -v s="$sent" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }')
if [ "$rc" -ne 130 ] || [ ! -f "$dir/r.h5.partial" ]; then
  echo "expected exit 130 and r.h5.partial, got exit $rc:"; cat "$dir/log"; ls "$dir"; exit 1
fi
if awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t > l) }'; then
  echo "took $took s to stop after SIGTERM (limit $limit s)"; exit 1
fi
echo "stopped $took s after SIGTERM"
