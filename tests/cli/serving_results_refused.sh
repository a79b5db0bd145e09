#!/usr/bin/env bash
# merge joins the shards of either kind of results file (a training sweep's, a serving sizing's)
# and refuses to mix them, whichever comes first, naming each file's kind (a serving file said
# "not a results file of this version of clustersim (columns differ)", as of a file to rewrite
# with a newer clustersim). regress takes either kind as its baseline (serving_regress.sh).
# Usage: serving_results_refused.sh CLUSTERSIM SERVING_SCENARIO TRAINING_RESULTS
set -u
cli="$1" serving="$2" trained="$3"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" serve "$serving" --out "$dir/s.h5" >"$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
sizing="a serving sizing (clustersim serve --out)" sweep="a training sweep (clustersim sweep --out)"
check() {  # check COMMAND MESSAGE: clustersim COMMAND exits 1 with "clustersim NAME: MESSAGE" only
  "$cli" $1 >"$dir/log" 2>&1
  local status=$? name=${1%% *}
  if [ "$status" != 1 ] || [ "$(cat "$dir/log")" != "clustersim $name: $2" ]; then
    echo "$1: exit $status:"; cat "$dir/log"; echo "expected: clustersim $name: $2"; exit 1
  fi
}
check "merge $trained $dir/s.h5 -o $dir/m.h5" "$dir/s.h5: the results of $sizing, not of $sweep as $trained is"
check "merge $dir/s.h5 $trained -o $dir/m.h5" "$trained: the results of $sweep, not of $sizing as $dir/s.h5 is"
echo "merge refuses to mix the two kinds"
