#!/usr/bin/env python3
"""`clustersim plot`'s Pareto chart of a sweep whose times and costs span less than a factor 2.5
(GPU generations on one layout): both log axes carry at least two labelled ticks inside the plot,
each placed where the axis maps its value, the document is well-formed XML, and the legend names
every instance type of the points. The 1-2-5 ticks alone left the cost axis with none and the time
axis with one. Run as shipped and with ten times the token budget (costs past a million USD):
labels are written as 2M or 1.25M, never 1.25e+06.
Usage: plot_pareto_ticks.py CLUSTERSIM SCENARIO."""
import math
import os
import subprocess
import sys
import tempfile
import xml.dom.minidom


def check(cli, scenario_text):
    """The failures of one scenario's chart, and a line saying what its axes show."""
    with tempfile.TemporaryDirectory() as work:
        scenario = os.path.join(work, "s.textproto")
        with open(scenario, "w") as f:
            f.write(scenario_text)
        results = os.path.join(work, "r.h5")
        subprocess.run([cli, "sweep", scenario, "-j", "1", "--out", results], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([cli, "plot", results, "--out-dir", work], check=True,
                       stdout=subprocess.DEVNULL)
        document = xml.dom.minidom.parse(os.path.join(work, "r-pareto.svg"))
    texts = document.getElementsByTagName("text")
    # Tick labels: a number alone, centred under the x axis or right-aligned left of the y axis.
    def ticks(anchor, coordinate):
        found = []
        for t in texts:
            value = "".join(n.data for n in t.childNodes if n.nodeType == n.TEXT_NODE)
            try:
                number = float(value[:-1]) * 1e6 if value.endswith("M") else float(value)
            except ValueError:
                continue
            if t.getAttribute("text-anchor") == anchor:
                found.append((number, float(t.getAttribute(coordinate))))
        return found
    labels = ["".join(n.data for n in t.childNodes if n.nodeType == n.TEXT_NODE) for t in texts]
    failures = [f"tick label {v!r} in exponent form" for v in labels
                if "e+" in v or "e-" in v]
    points = [(c.getAttribute("fill"), float(c.getAttribute("cx")), float(c.getAttribute("cy")))
              for c in document.getElementsByTagName("circle")]
    for name, anchor, coordinate, index in (("time", "middle", "x", 1), ("cost", "end", "y", 2)):
        found = ticks(anchor, coordinate)
        if len(found) < 2:
            failures.append(f"the {name} axis has {len(found)} labelled ticks: {found}")
            continue
        # Log axis: pixel positions linear in log10(value), the same slope for every pair.
        (v0, p0), (v1, p1) = found[0], found[-1]
        slope = (p1 - p0) / (math.log10(v1) - math.log10(v0))
        for v, p in found:
            if abs(p0 + slope * (math.log10(v) - math.log10(v0)) - p) > 0.01:
                failures.append(f"{name} tick {v} at {p} is off its log axis")
        low, high = min(p[index] for p in points), max(p[index] for p in points)
        margin = (high - low) * 0.2 + 1
        if any(p < low - margin * 3 or p > high + margin * 3 for _, p in found):
            failures.append(f"{name} ticks {found} lie far outside the points ({low}, {high})")
    legend = {"".join(n.data for s in t.getElementsByTagName("tspan") for n in s.childNodes)
              for t in texts}
    for instance in ("aws.p4de.24xlarge", "aws.p5.48xlarge", "aws.p5en.48xlarge",
                     "aws.p6-b200.48xlarge"):
        if instance not in legend:
            failures.append(f"the legend does not name {instance}")
    return failures, f"{len(points)} points; time ticks {ticks('middle', 'x')}; cost ticks " \
        f"{ticks('end', 'y')}"


def main():
    cli, scenario = sys.argv[1:3]
    with open(scenario) as f:
        text = f.read()
    budget = "token_budget: 1e11"
    if budget not in text:
        sys.exit(f"{scenario} no longer says {budget!r}: update this test")
    failures = []
    for label, variant in (("as shipped", text), ("1e12 tokens", text.replace(budget,
                                                                              "token_budget: 1e12"))):
        found, shown = check(cli, variant)
        failures += [f"{label}: {f}" for f in found]
        print(f"{label}: {shown}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)


main()
