#!/usr/bin/env bash
# The results file of a serving sizing (serve --out S.h5) given to plot, regress or merge, which
# read a training sweep's, is refused as what it is; they said "not a results file of this
# version of clustersim (columns differ)", as of a file to rewrite with a newer clustersim.
# Usage: serving_results_refused.sh CLUSTERSIM SERVING_SCENARIO TRAINING_SCENARIO
set -u
cli="$1" serving="$2" training="$3"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" serve "$serving" --out "$dir/s.h5" >"$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
expected="$dir/s.h5: the results of a serving sizing (clustersim serve --out), not of a training sweep (clustersim sweep --out)"
for command in "plot $dir/s.h5" "regress $training --baseline $dir/s.h5" "merge $dir/s.h5 -o $dir/m.h5"; do
  $cli $command >"$dir/log" 2>&1
  status=$?
  name=${command%% *}
  if [ "$status" != 1 ] || [ "$(cat "$dir/log")" != "clustersim $name: $expected" ]; then
    echo "$name: exit $status:"; cat "$dir/log"; exit 1
  fi
done
echo "plot, regress and merge refuse a serving sizing's file as one"
