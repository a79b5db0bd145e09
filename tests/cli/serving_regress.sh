#!/usr/bin/env bash
# Issue 16: regress takes a serving sizing's results file (serve --out S.h5) as its baseline. It
# sizes the scenario again with the options the file records (here --max-rate, whose column stays
# empty without it) and compares the rows on the serving columns:
#  - against the file just written: 0 drifted cells, exit 0;
#  - against a sizing priced with a --prices file regress is not given: the price and cost columns
#    of every row drift, and how far its price can be relied on (the file's "user", the catalog's
#    "read"), no other, exit 3 (training's drift exit); --tolerance covers the figures, not that;
#  - with a --catalog whose H100 replaces the shipped one: the catalog change is named and the
#    latency columns drift, exit 3;
#  - with the scenario's trace file changed since: the change is named, the rows drift, exit 3;
#  - with the scenario's or the --prices file's text changed since, each is named as training's
#    regress names it: a comment alone "(comments or layout only)", 0 drifted cells, exit 0; a
#    changed SLO, rate or price without that, its columns drift, exit 3; a --prices file given to
#    one side only is named too;
#  - a training scenario against a serving baseline (and the other way) is refused, exit 1, and a
#    training column's --tolerance, exit 2.
# Usage: serving_regress.sh CLUSTERSIM SCENARIO PRICES CATALOG_DIR TRACE_SCENARIO TRAINING_SCENARIO
#        TRAINING_RESULTS (TRACE_SCENARIO: one reading a trace file beside it)
set -u
cli="$1" scenario="$2" prices="$3" catalog="$4" traced="$5" training="$6" trained="$7"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "$1:"; cat "$dir/log"; exit 1; }
"$cli" serve "$scenario" --max-rate --out "$dir/b.h5" >"$dir/log" 2>&1 || fail "serve --max-rate"
"$cli" serve "$scenario" --max-rate --prices "$prices" --out "$dir/p.h5" >"$dir/log" 2>&1 ||
  fail "serve --prices"
regress() {  # regress EXIT SCENARIO BASELINE [OPTIONS...]: clustersim regress exits EXIT
  local want=$1 scen=$2 base=$3
  shift 3
  "$cli" regress "$scen" --baseline "$base" --limit 0 "$@" >"$dir/log" 2>&1
  local got=$?
  [ "$got" = "$want" ] || fail "regress $scen --baseline $base $*: exit $got, expected $want"
}
summary() {  # summary FILE DRIFTS: the log's summary line
  grep -qx "compared 4 rows with $1: $2 drifted cells, 0 rows gone, 0 new" \
    "$dir/log" || fail "expected $2 drifted cells against $1"
}
unchanged() {  # unchanged: the log names no input changed since the baseline
  ! grep -q "changed since the baseline" "$dir/log" || fail "an unchanged input named as changed"
}
named() {  # named LINE: the log has LINE, and names no other input changed
  grep -qxF "$1" "$dir/log" || fail "expected \"$1\""
  [ "$(grep -c "changed since the baseline" "$dir/log")" = 1 ] || fail "other inputs named"
}
regress 0 "$scenario" "$dir/b.h5"
summary "$dir/b.h5" 0
unchanged
regress 0 "$scenario" "$dir/p.h5" --prices "$prices"
summary "$dir/p.h5" 0
unchanged

regress 3 "$scenario" "$dir/p.h5" --format csv
summary "$dir/p.h5" 12
named "prices changed since the baseline: a --prices file then, none now"
columns=$(grep -E '^[0-9]+,' "$dir/log" | cut -d, -f2 | sort | uniq -c | tr -s ' ')
[ "$columns" = " 4 cost_per_million_tokens
 4 price_confidence
 4 price_per_hour" ] || fail "expected the price, its confidence and cost columns of 4 rows to drift"
regress 3 "$scenario" "$dir/p.h5" --tolerance price_per_hour=0.3 \
  --tolerance cost_per_million_tokens=0.3 --format csv
summary "$dir/p.h5" 4
columns=$(grep -E '^[0-9]+,' "$dir/log" | cut -d, -f2 | sort | uniq -c | tr -s ' ')
[ "$columns" = " 4 price_confidence" ] || fail "expected only the price confidence to drift"

regress 3 "$scenario" "$dir/b.h5" --prices "$prices"
named "prices changed since the baseline: none then, $prices now"

# The --prices file edited: a comment alone, then its price (5.00 -> 5.50 USD per hour).
cp "$prices" "$dir/prices.textproto"
echo "# negotiated again in December" >>"$dir/prices.textproto"
regress 0 "$scenario" "$dir/p.h5" --prices "$dir/prices.textproto"
summary "$dir/p.h5" 0
named "prices changed since the baseline: $dir/prices.textproto (comments or layout only)"
sed -i 's/per_hour: 5\.00/per_hour: 5.50/' "$dir/prices.textproto"
regress 3 "$scenario" "$dir/p.h5" --prices "$dir/prices.textproto"
summary "$dir/p.h5" 8
named "prices changed since the baseline: $dir/prices.textproto"

# The scenario edited: a comment alone, then its SLO (500 -> 400 ms), then its rate (10 -> 12/s).
cp "$scenario" "$dir/s.textproto"
echo "# sized again in December" >>"$dir/s.textproto"
regress 0 "$dir/s.textproto" "$dir/b.h5"
summary "$dir/b.h5" 0
named "scenario changed since the baseline: $dir/s.textproto (comments or layout only)"
sed -i 's/p99_ttft_ms: 500/p99_ttft_ms: 400/' "$dir/s.textproto"
regress 3 "$dir/s.textproto" "$dir/b.h5"
named "scenario changed since the baseline: $dir/s.textproto"
grep -qE '^[0-9]+ +max_rate_per_s ' "$dir/log" || fail "max_rate_per_s did not drift with the SLO"
cp "$scenario" "$dir/s.textproto"
sed -i 's/rate_per_s: 10$/rate_per_s: 12/' "$dir/s.textproto"
regress 3 "$dir/s.textproto" "$dir/b.h5"
named "scenario changed since the baseline: $dir/s.textproto"
grep -qE '^[0-9]+ +ttft_p99_ms ' "$dir/log" || fail "ttft_p99_ms did not drift with the rate"

# A training baseline's scenario, edited likewise, is named in the same words.
cp "$training" "$dir/training.textproto"
echo "# swept again in December" >>"$dir/training.textproto"
regress 0 "$dir/training.textproto" "$trained"
named "scenario changed since the baseline: $dir/training.textproto (comments or layout only)"

regress 3 "$scenario" "$dir/b.h5" --catalog "$catalog"
grep -qx "catalog changed since the baseline: $(basename "$catalog")/gpus.textproto (new)" \
  "$dir/log" || fail "the changed catalog file not named"
grep -qE '^[0-9]+ +ttft_p99_ms ' "$dir/log" || fail "ttft_p99_ms did not drift"

trace=$(sed -n 's/.*trace_file: "\([^"]*\)".*/\1/p' "$traced")
mkdir "$dir/t" && cp "$traced" "$(dirname "$traced")/$trace" "$dir/t/"
"$cli" serve "$dir/t/$(basename "$traced")" --out "$dir/t.h5" >"$dir/log" 2>&1 || fail "serve trace"
sed -i '$ s/,\([0-9]*\)$/,1\1/' "$dir/t/$trace"  # the last request's output 10 times longer and more
regress 3 "$dir/t/$(basename "$traced")" "$dir/t.h5"
grep -qx "trace changed since the baseline: $trace" "$dir/log" || fail "the changed trace not named"

regress 1 "$training" "$dir/b.h5"
grep -qx "clustersim regress: $dir/b.h5 holds the results of a serving sizing (clustersim serve --out), so $training was read as a serving scenario" \
  "$dir/log" || fail "the kind of the baseline not named"
regress 1 "$scenario" "$trained"
grep -q "so $scenario was read as a training scenario" "$dir/log" || fail "the kind not named"
regress 2 "$scenario" "$dir/b.h5" --tolerance step_s=0.1
echo "regress compares a serving baseline: no drift, price, catalog and trace drift, scenario and price edits named, kinds refused"
