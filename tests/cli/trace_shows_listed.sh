#!/usr/bin/env bash
# `run --trace` traces the first configuration it lists that was simulated, and the trace says
# which: runs --fastest 3 over the whole quickstart and checks that the trace's otherData names
# the configuration of the first row printed. Usage: trace_shows_listed.sh CLUSTERSIM
set -u
cli="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" run scenarios/quickstart.textproto --limit 0 --fastest 3 --format csv \
  --trace "$dir/step.json" >"$dir/rows.csv" 2>"$dir/log" || { cat "$dir/log"; exit 1; }
# The first listed row: instance,nodes,TP,CP,PP,DP,EP,mbs (csv columns 1-8).
IFS=, read -r instance nodes tp cp pp dp ep mbs _ < <(sed -n 2p "$dir/rows.csv")
expected="\"configuration\": \"$instance x $nodes, TP $tp PP $pp DP $dp mbs $mbs,"
if ! grep -q "\"otherData\": {$expected" "$dir/step.json"; then
  echo "the trace does not name the first listed row ($expected):"; tail -c 300 "$dir/step.json"
  exit 1
fi
grep -q '"tool": "clustersim ' "$dir/step.json" || { echo "no tool version in the trace"; exit 1; }
echo "trace of the first listed row: $instance x $nodes, TP $tp PP $pp DP $dp mbs $mbs"
