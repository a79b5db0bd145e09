#!/usr/bin/env python3
"""`clustersim plot`'s breakdown chart against the sweep's rows: one bar per configuration (not
one per billing mode), the fastest first, each bar's segments adding up to that configuration's
step time (every exposed part: context-parallel and expert-parallel communication too), and its
label naming the context- and expert-parallel sizes. Usage: plot_breakdown_sums.py CLUSTERSIM
SCENARIO (a sweep with every part of the breakdown, under two billing modes)."""
import csv
import os
import re
import subprocess
import sys
import tempfile

PARTS = ["compute_s", "tensor_comm_s", "context_comm_s", "expert_comm_s", "bubble_s",
         "data_comm_s", "optimizer_s", "data_stall_s"]


def main():
    cli, scenario = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as work:
        for out in ("r.h5", "r.csv"):
            subprocess.run([cli, "sweep", scenario, "-j", "1", "--out", os.path.join(work, out)],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([cli, "plot", os.path.join(work, "r.h5"), "--out-dir", work], check=True,
                       stdout=subprocess.DEVNULL)
        rows = list(csv.DictReader(open(os.path.join(work, "r.csv"))))
        svg = open(os.path.join(work, "r-breakdown.svg")).read()
    configurations = {}
    for r in rows:
        if r["status"] == "ok":
            configurations.setdefault(int(r["index"]), r)
    expected = sorted(configurations.values(), key=lambda r: (float(r["step_s"]), int(r["index"])))
    # Each label one <text>, a <tspan> a line: its lines joined by spaces.
    labels = [" ".join(re.findall(r"<tspan[^>]*>([^<]*)</tspan>", text))
              for text in re.findall(r'font-size="11">(.*?)</text>', svg)]
    # Each bar: its label, then one rect per segment titled "NAME: SECONDS s".
    bars = [re.findall(r"<title>[^<:]*: ([0-9.e+-]+) s</title>", part)
            for part in re.split(r'font-size="11">', svg)[1:]]
    problems = []
    if len(bars) != len(expected):
        problems.append("%d bars for %d configurations" % (len(bars), len(expected)))
    for label, segments, row in zip(labels, bars, expected):
        total = sum(float(s) for s in segments)
        step = float(row["step_s"])
        if abs(total - step) > 1e-5 * step:  # the titles print 6 significant digits
            problems.append("%s: segments add up to %.9g s, the step is %.9g s" % (label, total,
                                                                                 step))
        for key, name in (("context_parallel", "CP"), ("expert_parallel", "EP")):
            if int(row[key]) > 1 and " %s %s " % (name, row[key]) not in label:
                problems.append("%s: no %s %s" % (label, name, row[key]))
    if not all(float(configurations[i][p] or 0) > 0 for p in ("context_comm_s", "expert_comm_s")
               for i in configurations if int(configurations[i]["context_parallel"]) > 1):
        problems.append("the scenario exposes no context- or expert-parallel communication")
    print("\n".join(problems) or "%d bars, each its configuration's step" % len(bars))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
