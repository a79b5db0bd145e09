#!/usr/bin/env bash
# A serving sizing split into shards (serve --shard K/N --out) and merged (clustersim merge) gives
# the unsplit run's results file byte for byte, for N = 1, 2 and 3 on 1 and 2 threads (shard 2 by
# chunks of one deployment), also when a shard is stopped with SIGTERM and resumed; `plot` of the
# merged file draws the unsplit run's charts. Resuming another shard's journal, merging a missing
# or repeated shard or a shard of another sizing (scenario, prices, catalog) are refused, each
# naming the file and what differs. Usage: serve_shards.sh CLUSTERSIM SCENARIO
set -u
cli="$1" scenario="$2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "$1"; cat "$dir/log"; exit 1; }
"$cli" serve "$scenario" -j 2 --out "$dir/whole.h5" --plot-dir "$dir/whole" >"$dir/log" 2>&1 ||
  fail "the unsplit sizing failed:"
deployments=$(sed -n 's/^\([0-9]*\) deployments, .*/\1/p' "$dir/log")
for n in 1 2 3; do
  for j in 1 2; do
    shards=()
    for k in $(seq "$n"); do
      out="$dir/s$n-$j-$k.h5"
      chunk=0
      [ "$k" = 2 ] && chunk=1
      "$cli" serve "$scenario" --shard "$k/$n" --jobs "$j" --chunk "$chunk" --out "$out" \
        >"$dir/log" 2>&1 || fail "shard $k/$n on $j threads failed:"
      if [ "$n" -gt 1 ] &&
         ! grep -q "^$deployments deployments, [0-9]* in shard $k/$n, [0-9]* valid" "$dir/log"; then
        fail "shard $k/$n does not say which deployments it sized:"
      fi
      shards+=("$out")
    done
    "$cli" merge "${shards[@]}" -o "$dir/m$n-$j.h5" >"$dir/log" 2>&1 || fail "merge failed:"
    cmp "$dir/whole.h5" "$dir/m$n-$j.h5" >"$dir/log" 2>&1 ||
      fail "$n shards on $j threads merged differ from the unsplit sizing's file:"
  done
done
"$cli" plot "$dir/m3-2.h5" --out-dir "$dir/plots" >"$dir/log" 2>&1 || fail "plot failed:"
stem=$(basename "$scenario" .textproto)
for chart in latency pareto; do
  cmp "$dir/whole/$stem-$chart.svg" "$dir/plots/m3-2-$chart.svg" >"$dir/log" 2>&1 ||
    fail "plot of the merged file draws another $chart chart than serve --plot-dir:"
done

. "$(dirname "$0")/expect_line.sh"

# Shard 2/2 stopped as soon as its journal exists, refused to shard 1/2, then resumed.
out="$dir/r.h5" journal="$dir/r.h5.partial"
. "$(dirname "$0")/stop_midway.sh"
stop_midway "$out" 0 serve "$scenario" -j 1 --chunk 1 --shard 2/2 --out "$out"
[ "$stopped_rc" -eq 130 ] && [ -f "$journal" ] || { cp "$dir/first" "$dir/log"; fail "shard 2/2 was not stopped with its journal left:"; }
expect 1 "clustersim serve: --resume: $journal is the journal of another sweep: since it was interrupted, the shard (2/2 then, 1/2 now) changed (resume with the inputs it had, or delete it to start over)" \
  serve "$scenario" --shard 1/2 --out "$out" --resume
"$cli" serve "$scenario" --shard 2/2 --out "$out" --resume >"$dir/log" 2>&1 ||
  fail "shard 2/2 did not resume:"
"$cli" merge "$dir/s2-1-1.h5" "$out" -o "$dir/resumed.h5" >"$dir/log" 2>&1 || fail "merge failed:"
cmp "$dir/whole.h5" "$dir/resumed.h5" >"$dir/log" 2>&1 ||
  fail "a resumed shard merged differs from the unsplit sizing's file:"

expect 1 "clustersim merge: shard 3/3 is missing" merge "$dir/s3-1-1.h5" "$dir/s3-2-2.h5" -o "$dir/x.h5"
expect 1 "clustersim merge: $dir/s2-2-1.h5: shard 1/2 is also in $dir/s2-1-1.h5" \
  merge "$dir/s2-1-1.h5" "$dir/s2-2-1.h5" "$dir/s2-1-2.h5" -o "$dir/x.h5"
expect 1 "clustersim merge: $dir/s3-1-2.h5: shard 2/3, but $dir/s2-1-1.h5 is one of 2 shards" \
  merge "$dir/s2-1-1.h5" "$dir/s3-1-2.h5" -o "$dir/x.h5"
# Shard 2/2 of the sizing with another scenario text, price file or catalog.
{ cat "$scenario"; echo "# edited"; } >"$dir/edited.textproto"
"$cli" serve "$dir/edited.textproto" --shard 2/2 --out "$dir/edited.h5" >"$dir/log" 2>&1 ||
  fail "the edited scenario's shard failed:"
expect 1 "clustersim merge: $dir/edited.h5: not a shard of the same sweep as $dir/s2-1-1.h5: they differ in the scenario file's text" \
  merge "$dir/s2-1-1.h5" "$dir/edited.h5" -o "$dir/x.h5"
"$cli" serve "$scenario" --shard 2/2 --prices tests/data/prices_us_west_2.textproto \
  --catalog tests/data/price_override --out "$dir/priced.h5" >"$dir/log" 2>&1 ||
  fail "the shard with other prices failed:"
expect 1 "clustersim merge: $dir/priced.h5: not a shard of the same sweep as $dir/s2-1-1.h5: they differ in the catalog (its fingerprint) and the --prices file's text" \
  merge "$dir/s2-1-1.h5" "$dir/priced.h5" -o "$dir/x.h5"
[ ! -e "$dir/x.h5" ] || fail "a refused merge left its output:"
echo "1, 2 and 3 shards on 1 and 2 threads, and a resumed shard, merged to the unsplit file; 7 refusals"
