#!/usr/bin/env python3
"""`clustersim plot`'s breakdown chart of a sweep whose labels are wider than its plot
(tests/data/plot_long_labels.textproto: a mix whose pools' roles, optimizer sharding and
schedule all vary): each label wraps onto lines that are each drawn at their measured width
(textLength) within the plot's 650 px and the chart's height, its lines joined are the whole
label (nothing cut: the pools' role, sharding and schedule said in each label, the recomputation
and SP under the title), at least one label would have overflowed on one line, and the labels
differ. The Pareto chart's legend wraps the same way: the mix's series name, wider than the room
right of the plot, on lines each within the picture's 900 px less its 10 px edge. Usage: plot_long_labels.py CLUSTERSIM SCENARIO"""
import os
import re
import subprocess
import sys
import tempfile

PLOT_LEFT, PLOT_RIGHT = 20, 670  # bars and labels from x 20 to the legend's margin
LEGEND_RIGHT = 890  # the Pareto chart's legend: up to the picture's width less its edge
SPACE = 278 * 11 / 1000  # a space at 11 px (Helvetica), where a label was broken


def legend_problems(svg):
    """The Pareto chart's legend entries: each line within the picture, the mix's name whole."""
    problems, entries = [], []
    for text in re.findall(r'<text x="708" y="[0-9.]+" font-size="12">(.*?)</text>', svg):
        lines = re.findall(r'<tspan x="([0-9.]+)" y="[0-9.]+" textLength="([0-9.e+-]+)"'
                           r' lengthAdjust="spacingAndGlyphs">([^<]*)</tspan>', text)
        for x, width, line in lines:
            if float(x) + float(width) > LEGEND_RIGHT:
                problems.append("legend %r ends at %.0f px, past %d" % (line, float(x) + float(width),
                                                                      LEGEND_RIGHT))
        entries.append([line for _, _, line in lines])
    mix = [e for e in entries if " ".join(e) == "aws.p5.48xlarge x 4 + aws.p4d.24xlarge x 4"]
    if not mix or len(mix[0]) < 2:
        problems.append("the mix's legend entry is not wrapped whole: %r" % entries)
    return problems


def main():
    cli, scenario = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([cli, "sweep", scenario, "-j", "1", "--out", os.path.join(work, "r.h5")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([cli, "plot", os.path.join(work, "r.h5"), "--out-dir", work], check=True,
                       stdout=subprocess.DEVNULL)
        svg = open(os.path.join(work, "r-breakdown.svg")).read()
        pareto = open(os.path.join(work, "r-pareto.svg")).read()
    problems = legend_problems(pareto)
    height = float(re.search(r'<svg [^>]*height="([0-9.]+)"', svg).group(1))
    labels, one_line = [], []
    for text in re.findall(r'font-size="11">(.*?)</text>', svg):
        lines = re.findall(r'<tspan x="([0-9.]+)" y="([0-9.]+)" textLength="([0-9.e+-]+)"'
                           r' lengthAdjust="spacingAndGlyphs">([^<]*)</tspan>', text)
        if not lines:
            problems.append("a label without lines: " + text)
            continue
        for x, y, width, line in lines:
            if float(x) < PLOT_LEFT or float(x) + float(width) > PLOT_RIGHT or float(y) > height:
                problems.append("%r: %s px wide at x %s, y %s: outside the plot" % (line, width, x, y))
        labels.append(" ".join(line for _, _, _, line in lines))
        one_line.append(sum(float(w) for _, _, w, _ in lines) + SPACE * (len(lines) - 1))
    if len(labels) != 10:
        problems.append("%d labels, not 10 bars" % len(labels))
    if not any(w > PLOT_RIGHT - PLOT_LEFT for w in one_line):
        problems.append("no label is wider than the plot: nothing to wrap (widest %.0f px)"
                        % max(one_line))
    shared = re.search(r'<text x="90" y="44".*?</text>', svg)
    shared = " ".join(re.findall(r">([^<]+)</tspan>", shared.group(0))) if shared else ""
    for part in (r"RECOMPUTE_FULL", r"SP"):
        if not re.search("(^|, )" + part + "(,|$)", shared.replace("every bar: ", "")):
            problems.append("the line under the title does not say %s: %r" % (part, shared))
    for part in (r"pools as (pipeline stages \(first on [^)]+\)|data-parallel replicas)", r"ZeRO [01]",
                 r"(INTERLEAVED_)?ONE_F_ONE_B"):
        for label in labels:
            if not re.search(", " + part + "(,|$)", label):
                problems.append("%s: says no %s" % (label, part))
    if len(set(labels)) != len(labels):
        problems.append("bars labelled alike")
    print("\n".join(problems) or "%d labels, the widest %.0f px on one line, each line within the plot"
          % (len(labels), max(one_line)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
