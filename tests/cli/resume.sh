#!/usr/bin/env bash
# An interrupted sweep, resumed, gives the results an uninterrupted one gives: stops a sweep with
# SIGTERM (as a Slurm time limit does), resumes it with --resume, and checks the file against a
# fresh evaluation with `clustersim regress`. Usage: resume.sh CLUSTERSIM
set -u
cli="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" sweep scenarios/quickstart.textproto -j 1 --out "$dir/r.h5" >/dev/null 2>"$dir/first" &
pid=$!
# Once the sweep has started its journal (and so handles SIGTERM), give it a moment, then stop it.
for _ in $(seq 100); do [ -f "$dir/r.h5.partial" ] || [ -f "$dir/r.h5" ] && break; sleep 0.1; done
sleep 0.1
kill -TERM "$pid"
wait "$pid"
rc=$?
if [ "$rc" -eq 130 ]; then
  if ! grep -q "^clustersim sweep: interrupted after [0-9]* configurations; continue with" \
      "$dir/first"; then
    echo "the interruption's message does not name the command:"; cat "$dir/first"; exit 1
  fi
  if [ ! -f "$dir/r.h5.partial" ] || [ -f "$dir/r.h5" ]; then
    echo "after the interruption: expected r.h5.partial and no r.h5"; ls "$dir"; exit 1
  fi
  if ! "$cli" sweep scenarios/quickstart.textproto -j 1 --out "$dir/r.h5" --resume \
      >"$dir/second" 2>&1 || ! grep -q "resuming after [1-9]" "$dir/second"; then
    echo "resume failed:"; cat "$dir/first" "$dir/second"; exit 1
  fi
elif [ "$rc" -ne 0 ]; then
  echo "sweep failed with exit code $rc:"; cat "$dir/first"; exit 1
fi
"$cli" regress --baseline "$dir/r.h5" scenarios/quickstart.textproto >"$dir/regress" 2>&1
if ! grep -q "0 drifted cells, 0 rows gone, 0 new" "$dir/regress"; then
  echo "the resumed file differs from a fresh sweep:"; cat "$dir/regress"; exit 1
fi
if [ "$rc" -eq 130 ]; then
  echo "interrupted, resumed, equal to a fresh sweep"
else
  echo "finished before the signal took effect, equal to a fresh sweep"
fi
