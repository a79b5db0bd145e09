#!/usr/bin/env bash
# `clustersim plot --out-dir` creates the folder; the breakdown chart's axis has round ticks and
# each bar's label names the layout and, where they differ among the bars, the optimizer
# sharding, the recomputation and the schedule (else the line under the title does, for every
# bar), each its own, each line within the plot's width. Usage: plot_breakdown.sh CLUSTERSIM RESULTS.h5
set -u
cli="$1" results="$2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" plot "$results" --out-dir "$dir/new/folder" >"$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
svg="$dir/new/folder/$(basename "$results" .h5)-breakdown.svg"
[ -f "$svg" ] || { echo "no $svg"; ls -R "$dir"; exit 1; }
ticks=$(grep -o 'text-anchor="middle">[0-9.e+-]*<' "$svg" | sed 's/.*>\(.*\)</\1/')
[ -n "$ticks" ] || { echo "no ticks"; exit 1; }
for t in $ticks; do
  # Round: at most two significant digits (0.5, 1, 1.5, 2, 25, 0.25 ...).
  digits=$(echo "$t" | tr -d '.' | sed 's/^0*//; s/0*$//')
  [ "${#digits}" -le 2 ] || { echo "tick $t is not round (ticks: $ticks)"; exit 1; }
done
# Each label one <text>, a <tspan> a line: its lines joined by spaces.
labels=$(grep -o 'font-size="11">.*</text>' "$svg" |
         sed -E 's/^font-size="11">//; s#</tspan><tspan[^>]*># #g; s#<[^>]*>##g')
count=$(echo "$labels" | wc -l)
bad=$(echo "$labels" | grep -Ev ', TP [0-9]+( CP [0-9]+)? PP [0-9]+ DP [0-9]+( shard [0-9]+)?( EP [0-9]+)? mbs [0-9]+')
[ -z "$bad" ] || { echo "labels without a layout:"; echo "$bad"; exit 1; }
# The sharding, recomputation and schedule: in each label where they differ, else said once
# under the title for every bar.
shared=$(grep -o '<text x="90" y="44".*</text>' "$svg" |
         sed -E 's#</tspan><tspan[^>]*># #g; s#<[^>]*>##g; s/^every bar: //')
for part in '(ZeRO [0-3]|dist opt)' 'RECOMPUTE_[A-Z_]+' '(GPIPE|[A-Z_]*ONE_F_ONE_B|DUALPIPE(_V)?)'; do
  echo "$shared" | grep -Eq "(^|, )$part(,|$)" && continue
  bad=$(echo "$labels" | grep -Ev ", $part(,|$)")
  [ -z "$bad" ] || { echo "neither the labels nor the line under the title say $part:"; echo "$bad"; exit 1; }
done
# Two bars never read alike (an input sweep's differ by their storage or workers, a mix's by what
# its pools are).
same=$(echo "$labels" | sort | uniq -d)
[ -z "$same" ] || { echo "bars labelled alike:"; echo "$same"; exit 1; }
# Each line of a label is drawn at the width measured for it (textLength), within the plot's
# 650 px (from x 20 to the legend's margin at 670).
widest=$(grep -o 'font-size="11">.*</text>' "$svg" | grep -o 'textLength="[0-9.e+-]*"' |
         sed -E 's/textLength="(.*)"/\1/' | sort -g | tail -1)
awk -v w="$widest" 'BEGIN { exit !(w > 0 && w <= 650) }' ||
  { echo "a label's line is $widest px wide, the plot 650 px"; exit 1; }
echo "$count labels (widest line $widest px), ticks: $(echo $ticks)"
