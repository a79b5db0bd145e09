#!/usr/bin/env bash
# A serving sizing's --resume refuses what it must not continue, saying why: stops a sizing with
# SIGTERM once its journal holds a few chunks, then tries to resume it with another option, an
# edited scenario, a price file, a damaged journal and without --resume, checking each message;
# the unchanged command then resumes it. Usage: serve_resume_refused.sh CLUSTERSIM SCENARIO
set -u
cli="$1" scenario="$2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out="$dir/r.h5" journal="$dir/r.h5.partial"
. "$(dirname "$0")/stop_midway.sh"
# Stopped once the journal holds its identity and a few chunks (over 2 KB).
stop_midway "$out" 2048 serve "$scenario" -j 1 --chunk 1 --out "$out"
if [ "$stopped_rc" -ne 130 ] || [ ! -f "$journal" ]; then
  echo "the sizing was not stopped with its journal left:"; cat "$dir/first"; ls "$dir"; exit 1
fi
grep -q "^clustersim serve: interrupted after [0-9]* deployments; continue with the same command and --resume$" \
  "$dir/first" || { echo "the interruption's message:"; cat "$dir/first"; exit 1; }
cp "$journal" "$dir/kept"
# expect EXIT MESSAGE ARGS...: serve ARGS exits EXIT with MESSAGE (a fixed string) on stderr.
expect() {
  local code="$1" message="$2"
  shift 2
  "$cli" serve "$@" >/dev/null 2>"$dir/err"
  local rc=$?
  if [ "$rc" -ne "$code" ] || ! grep -qF -- "$message" "$dir/err"; then
    echo "serve $*: exit $rc (expected $code), stderr:"; cat "$dir/err"
    echo "expected: $message"; exit 1
  fi
  cp "$dir/kept" "$journal"
}
expect 1 "clustersim serve: --resume: $journal is the journal of another sweep: since it was interrupted, the options (none then, --max-rate now) changed (resume with the inputs it had, or delete it to start over)" \
  "$scenario" --out "$out" --resume --max-rate
{ cat "$scenario"; echo "# edited"; } >"$dir/edited.textproto"
expect 1 "since it was interrupted, the scenario file's text changed" \
  "$dir/edited.textproto" --out "$out" --resume
expect 1 "since it was interrupted, the --prices file's text changed" \
  "$scenario" --out "$out" --resume --prices tests/data/prices_us_west_2.textproto
expect 2 "clustersim serve: --out: $journal holds an interrupted sweep: add --resume to continue it, or delete it to start over" \
  "$scenario" --out "$out"
# A byte changed inside the journal's last record (whole: SIGTERM stops between writes).
size=$(stat -c %s "$journal")
printf '\x7f' | dd of="$journal" bs=1 seek=$((size - 5)) conv=notrunc status=none
expect 1 ") is damaged (its length or checksum is wrong, which no interruption leaves); delete it to start over" \
  "$scenario" --out "$out" --resume
printf '\x7f' | dd of="$journal" bs=1 seek=20 conv=notrunc status=none
expect 1 "clustersim serve: --resume: $journal: its first record (the sweep's identity) is damaged (its length or checksum is wrong); delete it to start over" \
  "$scenario" --out "$out" --resume
truncate -s 30 "$journal"
expect 1 "its first record (the sweep's identity) is cut off (the file ends at byte 30); delete it to start over" \
  "$scenario" --out "$out" --resume
if ! "$cli" serve "$scenario" --out "$out" --resume >/dev/null 2>"$dir/err" ||
   ! grep -q "^resuming after [1-9][0-9]* configurations$" "$dir/err" || [ -e "$journal" ]; then
  echo "the unchanged command did not resume:"; cat "$dir/err"; exit 1
fi
echo "7 refusals named their cause; the unchanged command resumed"
