#!/usr/bin/env bash
# Damaged results files are refused with their cause, never crash or hang the reader: sweeps
# SCENARIO once, then writes COPIES seeded damaged copies of its results file (in turn: a few
# random bytes overwritten anywhere, a truncation, one flipped bit after the header) and gives
# each to `clustersim plot` and `clustersim regress` (each under a 10 s limit). Every copy must be
# refused with exit status 1 and a message; a crash (signal), a hang or a success fails the test.
# Usage: damaged_results.sh CLUSTERSIM SCENARIO COPIES SEED
set -u
cli="$1" scenario="$2" copies="$3" seed="$4"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" sweep "$scenario" -j 2 --out "$dir/good.h5" >/dev/null 2>"$dir/log" ||
  { echo "the sweep failed:"; cat "$dir/log"; exit 1; }
size=$(stat -c %s "$dir/good.h5")
# One line per copy: kind, then positions (and byte values) drawn from the seed.
awk -v n="$copies" -v seed="$seed" -v size="$size" 'BEGIN {
  srand(seed)
  for (i = 0; i < n; ++i) {
    kind = i % 3
    if (kind == 0) {
      k = 1 + int(rand() * 8); line = "bytes"
      for (j = 0; j < k; ++j) line = line " " int(rand() * size) ":" int(rand() * 256)
      print line
    } else if (kind == 1) {
      print "truncate " int(rand() * size)
    } else {
      print "flip " (512 + int(rand() * (size - 512))) " " int(rand() * 8)
    }
  }}' >"$dir/plan"
refused=0 i=0
while read -r kind rest; do
  i=$((i + 1))
  cp "$dir/good.h5" "$dir/bad.h5"
  case "$kind" in
    bytes) for edit in $rest; do
             printf "\\$(printf %o "${edit#*:}")" |
               dd of="$dir/bad.h5" bs=1 seek="${edit%:*}" conv=notrunc status=none
           done ;;
    truncate) truncate -s "$rest" "$dir/bad.h5" ;;
    flip) set -- $rest
          old=$(od -An -tu1 -j "$1" -N 1 "$dir/bad.h5" | tr -d ' ')
          printf "\\$(printf %o $((old ^ (1 << $2))))" |
            dd of="$dir/bad.h5" bs=1 seek="$1" conv=notrunc status=none ;;
  esac
  if cmp -s "$dir/bad.h5" "$dir/good.h5"; then refused=$((refused + 1)); continue; fi  # no change
  for command in "plot $dir/bad.h5 --out-dir $dir" "regress $scenario --baseline $dir/bad.h5"; do
    timeout 10 "$cli" $command >/dev/null 2>"$dir/err"
    status=$?
    if [ "$status" -ne 1 ] || [ ! -s "$dir/err" ]; then
      echo "copy $i ($kind $rest): clustersim ${command%% *} exited with $status"
      [ "$status" -eq 124 ] && echo "(a hang)"; cat "$dir/err"; exit 1
    fi
  done
  refused=$((refused + 1))
done <"$dir/plan"
echo "$refused of $copies damaged copies refused by plot and regress"
