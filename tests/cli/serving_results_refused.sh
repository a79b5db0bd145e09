#!/usr/bin/env bash
# The results file of a serving sizing (serve --out S.h5) given to regress, which reads a training
# sweep's, is refused as what it is (it said "not a results file of this version of clustersim
# (columns differ)", as of a file to rewrite with a newer clustersim); merge joins the shards of
# either kind and refuses to mix them, whichever comes first.
# Usage: serving_results_refused.sh CLUSTERSIM SERVING_SCENARIO TRAINING_SCENARIO TRAINING_RESULTS
set -u
cli="$1" serving="$2" training="$3" trained="$4"
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
check "regress $training --baseline $dir/s.h5" "$dir/s.h5: the results of $sizing, not of $sweep"
check "merge $trained $dir/s.h5 -o $dir/m.h5" "$dir/s.h5: the results of $sizing, not of $sweep as $trained is"
check "merge $dir/s.h5 $trained -o $dir/m.h5" "$trained: the results of $sweep, not of $sizing as $dir/s.h5 is"
echo "regress refuses a serving sizing's file as one; merge refuses to mix the two kinds"
