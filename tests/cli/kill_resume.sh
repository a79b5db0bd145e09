#!/usr/bin/env bash
# A training sweep or a serving sizing killed with SIGKILL at any instant and then resumed gives
# the output an uninterrupted run gives, byte for byte (its --out file and its answer on stdout),
# whatever the thread counts: runs COMMAND (sweep or serve) on SCENARIO uninterrupted on 2
# threads, then kills it at KILLS seeded random instants (small chunks, so that kills land inside
# journal writes too), resumes each with --resume on 1, 2 or 3 threads and compares.
# Usage: kill_resume.sh CLUSTERSIM COMMAND SCENARIO KILLS SEED
set -u
cli="$1" command="$2" scenario="$3" kills="$4" seed="$5"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
start=$(date +%s.%N)
"$cli" "$command" "$scenario" -j 2 --out "$dir/reference.h5" >"$dir/reference.out" 2>"$dir/log" ||
  { echo "the reference run failed:"; cat "$dir/log"; exit 1; }
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
# Kill instants spread over the reference run's duration (and a little beyond).
delays=$(awk -v n="$kills" -v seed="$seed" -v t="$took" \
  'BEGIN { srand(seed); for (i = 0; i < n; ++i) printf "%.4f\n", rand() * t * 1.2 }')
equal=0 killed=0 resumed=0 i=0
for delay in $delays; do
  i=$((i + 1))
  threads=$((1 + i % 3))
  rm -f "$dir/r.h5" "$dir/r.h5.partial" "$dir/r.h5.tmp" "$dir/r.out"
  "$cli" "$command" "$scenario" -j 2 --chunk 8 --out "$dir/r.h5" >"$dir/r.out" 2>"$dir/log" &
  pid=$!
  sleep "$delay"
  kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1))
  wait "$pid" 2>/dev/null
  status=$?
  if [ ! -f "$dir/r.h5" ] || [ -f "$dir/r.h5.partial" ]; then
    if [ ! -f "$dir/r.h5.partial" ]; then
      # Killed before the journal existed: nothing to resume, a fresh run is the resume.
      "$cli" "$command" "$scenario" -j "$threads" --out "$dir/r.h5" >"$dir/r.out" 2>"$dir/log"
    elif ! "$cli" "$command" "$scenario" -j "$threads" --out "$dir/r.h5" --resume \
        >"$dir/r.out" 2>"$dir/log"; then
      echo "kill $i (after ${delay} s): resume failed:"; cat "$dir/log"; exit 1
    else
      resumed=$((resumed + 1))
    fi
    status=0
  fi
  if ! cmp -s "$dir/r.h5" "$dir/reference.h5" || [ -e "$dir/r.h5.partial" ] ||
     [ -e "$dir/r.h5.tmp" ]; then
    echo "kill $i (after ${delay} s): the resumed file differs from the uninterrupted one"
    ls -l "$dir"; exit 1
  fi
  # A run killed after its file was written, while printing, has nothing to resume: its answer
  # is cut short, so only a run that ended (or was resumed) is held to the reference's answer.
  if [ "$status" -eq 0 ] && ! cmp -s "$dir/r.out" "$dir/reference.out"; then
    echo "kill $i (after ${delay} s): the answer on stdout differs from the uninterrupted one"
    diff "$dir/reference.out" "$dir/r.out" | head -20; exit 1
  fi
  equal=$((equal + 1))
done
echo "$equal of $kills resumed outputs equal to the uninterrupted run ($killed killed mid-run," \
  "$resumed resumed from a journal)"
