#!/usr/bin/env bash
# A sweep killed with SIGKILL at any instant and then resumed writes the file an uninterrupted
# sweep writes, byte for byte: kills a sweep at KILLS seeded random instants (small chunks, so
# that kills land inside journal writes too), resumes each with --resume and compares the result
# with an uninterrupted run. Usage: kill_resume.sh CLUSTERSIM SCENARIO KILLS SEED
set -u
cli="$1" scenario="$2" kills="$3" seed="$4"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
start=$(date +%s.%N)
"$cli" sweep "$scenario" -j 2 --out "$dir/reference.h5" >/dev/null 2>"$dir/log" ||
  { echo "the reference sweep failed:"; cat "$dir/log"; exit 1; }
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
# Kill instants spread over the reference run's duration (and a little beyond).
delays=$(awk -v n="$kills" -v seed="$seed" -v t="$took" \
  'BEGIN { srand(seed); for (i = 0; i < n; ++i) printf "%.4f\n", rand() * t * 1.2 }')
equal=0 killed=0 i=0
for delay in $delays; do
  i=$((i + 1))
  rm -f "$dir/r.h5" "$dir/r.h5.partial" "$dir/r.h5.tmp"
  "$cli" sweep "$scenario" -j 2 --chunk 8 --out "$dir/r.h5" >/dev/null 2>"$dir/log" &
  pid=$!
  sleep "$delay"
  kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1))
  wait "$pid" 2>/dev/null
  if [ ! -f "$dir/r.h5" ] || [ -f "$dir/r.h5.partial" ]; then
    if [ ! -f "$dir/r.h5.partial" ]; then
      # Killed before the journal existed: nothing to resume, a fresh run is the resume.
      "$cli" sweep "$scenario" -j 2 --out "$dir/r.h5" >/dev/null 2>"$dir/log"
    elif ! "$cli" sweep "$scenario" -j 2 --out "$dir/r.h5" --resume >/dev/null 2>"$dir/log"; then
      echo "kill $i (after ${delay} s): resume failed:"; cat "$dir/log"; exit 1
    fi
  fi
  if cmp -s "$dir/r.h5" "$dir/reference.h5" && [ ! -e "$dir/r.h5.partial" ] &&
     [ ! -e "$dir/r.h5.tmp" ]; then
    equal=$((equal + 1))
  else
    echo "kill $i (after ${delay} s): the resumed file differs from the uninterrupted one"
    ls -l "$dir"; exit 1
  fi
done
echo "$equal of $kills resumed files equal to the uninterrupted run ($killed killed mid-run)"
