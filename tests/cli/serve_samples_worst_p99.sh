#!/usr/bin/env bash
# Over several traffic samples every serving output that places a deployment against latency
# takes the worst sample's p99 TTFT, as the SLO verdict does: the table's Pareto front, the
# --plot-dir charts (each point's y, the cost-latency chart's front line; each tooltip gives the
# worst and the median) and `clustersim plot` of the results file alike, and the per-instance
# "misses it: at best" line (the deployment of the lowest worst p99). The scenario is one where
# the medians order deployments otherwise (checked first, so the test keeps its power). One
# sample's charts are those without samples, byte for byte.
# Usage: serve_samples_worst_p99.sh CLUSTERSIM SPREAD_SCENARIO
set -u
cli="$1" spread="$2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "$1"; cat "$dir/log"; exit 1; }
# serve ARGS..., whose exit status may be the verdict's (1: no deployment meets the SLO).
sizing() { "$@"; local rc=$?; [ "$rc" -le 1 ]; }
name=$(basename "$spread" .textproto)

# One sample: --samples 1 draws the charts the sizing without samples does, axis unchanged.
one="$dir/$name.textproto"
grep -v '^  samples: ' "$spread" >"$one"
sizing "$cli" serve "$one" --plot-dir "$dir/a" >/dev/null 2>"$dir/log" || fail "serve failed:"
sizing "$cli" serve "$one" --samples 1 --plot-dir "$dir/b" >/dev/null 2>"$dir/log" || fail "failed:"
for chart in latency pareto; do
  cmp "$dir/a/$name-$chart.svg" "$dir/b/$name-$chart.svg" >"$dir/log" 2>&1 ||
    fail "--samples 1 changed the $chart chart:"
  grep -q '>p99 TTFT (ms, log)<' "$dir/a/$name-$chart.svg" || fail "one sample's $chart axis moved:"
  if grep -q 'worst' "$dir/a/$name-$chart.svg"; then
    fail "one sample's $chart chart names a worst sample"
  fi
done

# Several samples: the table, its rows, the charts; the results file's charts are the same.
sizing "$cli" serve "$spread" --limit 0 --out "$dir/$name.h5" --plot-dir "$dir/s" >"$dir/table" \
  2>"$dir/log" || fail "the sampled sizing failed:"
sizing "$cli" serve "$spread" --limit 0 --out "$dir/rows.csv" >/dev/null 2>"$dir/log" ||
  fail "the sampled sizing to CSV failed:"
"$cli" plot "$dir/$name.h5" --out-dir "$dir/p" >"$dir/log" 2>&1 || fail "plot failed:"
for chart in latency pareto; do
  cmp "$dir/s/$name-$chart.svg" "$dir/p/$name-$chart.svg" >"$dir/log" 2>&1 ||
    fail "plot of the results file draws another $chart chart than serve --plot-dir:"
done
python3 - "$dir/rows.csv" "$dir/table" "$dir/s/$name-pareto.svg" "$dir/s/$name-latency.svg" \
  >"$dir/log" 2>&1 <<'PY' || fail "an output does not take the worst sample's p99 TTFT:"
import csv, html, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
table = open(sys.argv[2]).read()
n = int(rows[0]["samples"])
simulated = [r for r in rows if r["ttft_p99_worst_ms"]]
cost = lambda r: float(r["cost_per_million_tokens"])

def front(key):
    ok = [r for r in simulated if r["status"] == "ok" and r["cost_per_million_tokens"]]
    return {(r["index"], r["billing"]) for r in ok
            if not any(cost(o) <= cost(r) and float(o[key]) <= float(r[key]) and
                       (cost(o) < cost(r) or float(o[key]) < float(r[key])) for o in ok)}

worst_front = front("ttft_p99_worst_ms")
assert worst_front != front("ttft_p99_ms"), "the scenario's two fronts agree: no test"
# The table's front: "#" and billing (the 8th cell) of the lines under its title.
section = table.split("against the worst sample's p99 TTFT:\n", 1)[1].splitlines()[1:]
listed = {(line.split()[0], line.split()[7]) for line in section if re.match(r"^\s*\d+ ", line)}
assert listed == worst_front, (listed, worst_front)

def points(svg_path):
    svg = open(svg_path).read()
    circles = [(float(x), float(y), html.unescape(t)) for x, y, t in
               re.findall(r'<circle cx="([^"]+)" cy="([^"]+)"[^>]*><title>([^<]*)</title>', svg)]
    line = re.search(r'<polyline [^>]*points="([^"]*)"', svg)
    vertices = [tuple(map(float, p.split(","))) for p in line.group(1).split()] if line else []
    return svg, circles, vertices

tip = re.compile(r"p99 TTFT ([\d.]+) ms on the worst of %d samples \(median ([\d.]+) ms\)$" % n)
for path in sys.argv[3:]:
    svg, circles, vertices = points(path)
    assert "worst sample's p99 TTFT (ms, log; %d samples)" % n in svg, path
    worst = []
    for x, y, title in circles:
        m = tip.search(title)
        assert m, (path, title)
        worst.append((float(m.group(1)), y))
    # Each point's height goes with its worst p99 (the y axis grows upwards: a smaller cy).
    for a, ya in worst:
        for b, yb in worst:
            if a < b - 0.1:
                assert ya > yb, (path, a, ya, b, yb)
    if "pareto" in path:
        # The front line joins the points of the table's front, and only those.
        on_line = sorted(next(float(tip.search(t).group(1)) for x, y, t in circles
                              if (x, y) == v) for v in vertices)
        expected = sorted(float(r["ttft_p99_worst_ms"]) for r in simulated
                          if (r["index"], r["billing"]) in worst_front)
        assert len(on_line) == len(expected), (on_line, expected)
        assert all(abs(a - b) < 0.051 for a, b in zip(on_line, expected)), (on_line, expected)

# The miss line of an instance meeting the objective nowhere: its deployment of the lowest worst
# p99, whose limiting cell (the worst sample's miss) it prints.
checked = 0
for instance in sorted({r["instance"] for r in rows}):
    mine = [r for r in simulated if r["instance"] == instance]
    if not mine or any(r["status"] == "ok" for r in mine):
        continue
    by_worst = min(mine, key=lambda r: float(r["ttft_p99_worst_ms"]))
    by_median = min(mine, key=lambda r: float(r["ttft_p99_ms"]))
    assert by_worst["index"] != by_median["index"], "the medians pick the same deployment: no test"
    line = "  %s: misses it: at best %s (" % (instance, by_worst["limiting"])
    assert line in table, (line, table)
    checked += 1
assert checked > 0, "no instance misses the objective everywhere"
print("fronts: worst", sorted(worst_front), "; miss lines checked:", checked)
PY
cat "$dir/log"
echo "one sample's charts byte-identical; the worst sample's p99 in the table's front, both"
echo "charts, plot's charts and the miss line"
