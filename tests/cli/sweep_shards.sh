#!/usr/bin/env bash
# A training sweep split into shards (sweep --shard K/N --out) and merged (clustersim merge) gives
# the unsplit sweep's results file byte for byte, for N = 2 and 3: the rows of a configuration
# that differ only in a swept input (the checkpoint volume of sweep.checkpoint_storage) are each
# kept once, in the unsplit order. Usage: sweep_shards.sh CLUSTERSIM SCENARIO
set -u
cli="$1" scenario="$2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "$1"; cat "$dir/log"; exit 1; }
"$cli" sweep "$scenario" -j 2 --out "$dir/whole.h5" >"$dir/log" 2>&1 ||
  fail "the unsplit sweep failed:"
for n in 2 3; do
  shards=()
  for k in $(seq "$n"); do
    "$cli" sweep "$scenario" --shard "$k/$n" -j 1 --out "$dir/s$n-$k.h5" >"$dir/log" 2>&1 ||
      fail "shard $k/$n failed:"
    shards+=("$dir/s$n-$k.h5")
  done
  "$cli" merge "${shards[@]}" -o "$dir/m$n.h5" >"$dir/log" 2>&1 || fail "merge failed:"
  cmp "$dir/whole.h5" "$dir/m$n.h5" >"$dir/log" 2>&1 ||
    fail "$n shards merged differ from the unsplit sweep's file:"
done
echo "$n shards merged to the unsplit file"
