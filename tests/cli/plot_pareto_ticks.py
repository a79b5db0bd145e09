#!/usr/bin/env python3
"""`clustersim plot`'s Pareto chart of a sweep whose times and costs span less than a factor 2.5
(GPU generations on one layout): both log axes carry at least two labelled ticks inside the plot,
each placed where the axis maps its value, the document is well-formed XML, and the legend names
every instance type of the points. The 1-2-5 ticks alone left the cost axis with none and the time
axis with one. Usage: plot_pareto_ticks.py CLUSTERSIM SCENARIO."""
import math
import os
import subprocess
import sys
import tempfile
import xml.dom.minidom


def main():
    cli, scenario = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as work:
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
                number = float(value)
            except ValueError:
                continue
            if t.getAttribute("text-anchor") == anchor:
                found.append((number, float(t.getAttribute(coordinate))))
        return found
    failures = []
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
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"{len(points)} points; time ticks {ticks('middle', 'x')}; cost ticks {ticks('end', 'y')}")


main()
