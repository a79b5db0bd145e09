#!/usr/bin/env bash
# serve over several traffic samples (traffic.samples, --samples N). One sample is the sizing
# without samples byte for byte (stdout in every format, .h5/.csv/.json files); --samples N equals
# the scenario's traffic.samples: N; any thread count gives the same rows; every row's verdict
# follows the rule (ok only when met on all samples, a miss on some named "met on k of N"), the
# table lists exactly those rows as met on some samples but not all; --max-rate over samples is at
# most the one-sample search's rate for every deployment (sample 0 is the traffic as written);
# regress re-sizes a sampled baseline with its --samples; bad counts and a trace are refused.
# Usage: serve_samples.sh CLUSTERSIM SAMPLED_SCENARIO TRACE_SCENARIO
set -u
cli="$1" sampled="$2" trace="$3"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "$1"; cat "$dir/log"; exit 1; }
# serve ARGS..., whose exit status may be the verdict's (1: no deployment meets the SLO).
sizing() { "$@"; local rc=$?; [ "$rc" -le 1 ]; }
# The sampled scenario without its samples line: one sample.
one="$dir/one.textproto"
grep -v '^  samples: ' "$sampled" >"$one"
n=$(sed -n 's/^  samples: \([0-9]*\)$/\1/p' "$sampled")
[ -n "$n" ] && [ "$n" -gt 1 ] || fail "$sampled sets no traffic.samples above 1"

# One sample: the sizing without samples, byte for byte.
for format in table csv json; do
  sizing "$cli" serve "$one" -j 2 --format "$format" --out "$dir/a.h5" >"$dir/a.$format" 2>"$dir/log" ||
    fail "serve $format failed:"
  sizing "$cli" serve "$one" -j 2 --samples 1 --format "$format" --out "$dir/b.h5" >"$dir/b.$format" \
    2>"$dir/log" || fail "serve --samples 1 $format failed:"
  cmp "$dir/a.$format" "$dir/b.$format" >"$dir/log" 2>&1 || fail "--samples 1 changed the $format output:"
  cmp "$dir/a.h5" "$dir/b.h5" >"$dir/log" 2>&1 || fail "--samples 1 changed the .h5 file:"
done
for ext in csv json; do
  sizing "$cli" serve "$one" --out "$dir/a1.$ext" >/dev/null 2>"$dir/log" || fail "serve --out .$ext failed:"
  sizing "$cli" serve "$one" --samples 1 --out "$dir/b1.$ext" >/dev/null 2>"$dir/log" || fail "failed:"
  cmp "$dir/a1.$ext" "$dir/b1.$ext" >"$dir/log" 2>&1 || fail "--samples 1 changed the .$ext file:"
done
if head -1 "$dir/a1.csv" | grep -q samples; then fail "a one-sample CSV has the samples columns:"; fi

# --samples N is traffic.samples: N, on any thread count.
sizing "$cli" serve "$sampled" -j 1 --limit 0 --out "$dir/s.csv" >"$dir/s.table" 2>"$dir/log" ||
  fail "the sampled sizing failed:"
sizing "$cli" serve "$one" -j 2 --samples "$n" --out "$dir/o.csv" >/dev/null 2>"$dir/log" ||
  fail "serve --samples $n failed:"
cmp "$dir/s.csv" "$dir/o.csv" >"$dir/log" 2>&1 || fail "--samples $n differs from traffic.samples: $n:"
sizing "$cli" serve "$sampled" -j 2 --out "$dir/s2.csv" >/dev/null 2>"$dir/log" || fail "-j 2 failed:"
cmp "$dir/s.csv" "$dir/s2.csv" >"$dir/log" 2>&1 || fail "the sampled rows differ between -j 1 and -j 2:"
sizing "$cli" serve "$sampled" --samples 1 --out "$dir/s1.csv" >/dev/null 2>"$dir/log" || fail "failed:"
cmp "$dir/s1.csv" "$dir/a1.csv" >"$dir/log" 2>&1 || fail "--samples 1 on traffic.samples: $n is not one sample:"

# The verdicts and the table's list of seed-fragile deployments.
python3 - "$dir/s.csv" "$dir/s.table" "$n" >"$dir/log" 2>&1 <<'PY' || fail "the verdicts break the rule:"
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
table = open(sys.argv[2]).read()
n = int(sys.argv[3])
fragile = set()
for r in rows:
    assert r["samples"] == str(n), r
    if r["status"] == "OOM":
        assert r["samples_meeting_slo"] == "", r
        continue
    met = int(r["samples_meeting_slo"])
    worst = float(r["ttft_p99_worst_ms"])
    assert float(r["ttft_p99_ms"]) <= worst, r
    if met == n:
        assert r["status"] == "ok" and worst <= 500, r
    else:
        assert worst > 500, r
        if r["status"] == "overloaded":  # the rates it served and was offered, not a percentile
            assert re.fullmatch(r"serves [0-9.]+ of [0-9.]+ req/s", r["limiting"]), r
        else:
            assert r["status"] == "misses SLO", r
            assert r["limiting"].endswith("(met on %d of %d samples)" % (met, n)), r
        if met > 0:
            fragile.add(int(r["index"]))
listed = re.search(r"^(\d+) deployments? meets? it on some samples but not all: (.*)$", table, re.M)
if fragile:
    assert listed and int(listed.group(1)) == len(fragile), (table, fragile)
    named = {int(m) for m in re.findall(r"#(\d+) on \d+ of %d" % n, listed.group(2))}
    assert named == fragile, (named, fragile)
else:
    assert not listed, table
    assert "every deployment meets it on all %d samples or on none" % n in table, table
assert "a deployment meets the SLO only when it meets it on all %d samples" % n in table
print("fragile:", sorted(fragile))
PY
cat "$dir/log"

# The rate every sample meets is at most the one-sample search's (on one instance type, 4 and 8
# replicas).
few="$dir/few.textproto"
sed -e 's/^  instance: \[.*\]$/  instance: ["aws.g6.xlarge"]/' -e 's/^  replicas: \[.*\]$/  replicas: [4, 8]/' \
  "$one" >"$few"
sizing "$cli" serve "$few" --max-rate --out "$dir/r1.csv" >/dev/null 2>"$dir/log" ||
  fail "one sample's --max-rate failed:"
sizing "$cli" serve "$few" --max-rate --samples "$n" --out "$dir/rn.csv" >/dev/null \
  2>"$dir/log" || fail "--samples $n --max-rate failed:"
python3 - "$dir/r1.csv" "$dir/rn.csv" >"$dir/log" 2>&1 <<'PY' || fail "a rate over samples exceeds one sample's:"
import csv, sys
one = {(r["index"], r["billing"]): r for r in csv.DictReader(open(sys.argv[1]))}
lower = 0
for r in csv.DictReader(open(sys.argv[2])):
    a, b = r["max_rate_per_s"], one[(r["index"], r["billing"])]["max_rate_per_s"]
    assert (a == "") == (b == ""), (r["index"], a, b)
    if a:
        assert float(a) <= float(b), (r["index"], a, b)
        lower += float(a) < float(b)
print("rates compared; lower over samples:", lower)
PY
cat "$dir/log"

# regress re-sizes a sampled baseline with its --samples.
sizing "$cli" serve "$one" --samples "$n" --out "$dir/base.h5" >/dev/null 2>"$dir/log" ||
  fail "the sampled baseline failed:"
"$cli" regress --baseline "$dir/base.h5" "$one" >"$dir/log" 2>&1 || fail "regress drifted:"
grep -q "0 drifted cells, 0 rows gone, 0 new" "$dir/log" || fail "regress compared otherwise:"

. "$(dirname "$0")/expect_line.sh"
expect 2 "clustersim serve: --samples must be 1 to 100, not 0" serve "$one" --samples 0
expect 2 "clustersim serve: --samples must be 1 to 100, not 101" serve "$one" --samples 101
expect 2 "$trace: --samples 3 draws independent samples of generated traffic, and a trace file is one fixed sample: give --samples 1 or leave it out" \
  serve "$trace" --samples 3
echo "one sample byte-identical; --samples $n = traffic.samples; verdicts, rates and regress checked; 3 refusals"
