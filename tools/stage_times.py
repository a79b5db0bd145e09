#!/usr/bin/env python3
"""Per pipeline stage: its compute busy time and the mean time of each chunk's passes, from a trace.

Usage: tools/stage_times.py TRACE.json

TRACE.json is what `clustersim run SCENARIO --trace TRACE.json` writes (a Chrome trace: one
process per pipeline stage, named "stage N", whose "compute" thread holds the stage's forward
and backward tasks, named "forward mb M chunk C" / "backward mb M chunk C", or without the chunk
where a stage holds one). Prints, per stage in order, the seconds its compute stream is busy and
the time its last task ends, then for each chunk the mean forward and backward time in ms
("f0 4.84 b0 8.79"); then the stage that is busiest, which paces a step its stages cannot
overlap, and how much busier it is than the median stage. What it shows: where a stage holds
more than its share (e.g. the output layer and loss alone in the last chunk, results/validation.md
"The GB200 NVFP4 split: the per-pass costs tried, and the MLPerf NVFP4 anchor").
A file that is not such a trace is refused, naming the file.
"""
import json
import re
import statistics
import sys

TASK = re.compile(r"(forward|backward) mb \d+(?: chunk (\d+))?$")


def fail(message):
    sys.exit(f"stage_times.py: {message}")


def stage_tasks(path):
    """{stage number: {(chunk, forward?): [durations in us]}} and {stage: (busy us, end us)}."""
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: not a readable JSON trace ({e})")
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        fail(f"{path}: not a Chrome trace (no traceEvents)")
    stages, threads = {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        name = e.get("args", {}).get("name", "")
        if e.get("name") == "process_name":
            m = re.fullmatch(r"stage (\d+)", name)
            if m:
                stages[e["pid"]] = int(m.group(1))
        elif e.get("name") == "thread_name":
            threads[(e["pid"], e.get("tid"))] = name
    if not stages:
        fail(f"{path}: no pipeline stage in the trace (not written by clustersim run --trace)")
    tasks = {s: {} for s in stages.values()}
    busy = {s: [0.0, 0.0] for s in stages.values()}
    for e in events:
        if e.get("ph") != "X" or e.get("pid") not in stages:
            continue
        if threads.get((e["pid"], e.get("tid"))) != "compute":
            continue
        m = TASK.match(e.get("name", ""))
        if not m:
            continue
        stage = stages[e["pid"]]
        busy[stage][0] += e["dur"]
        busy[stage][1] = max(busy[stage][1], e["ts"] + e["dur"])
        key = (int(m.group(2) or 0), m.group(1) == "forward")
        tasks[stage].setdefault(key, []).append(e["dur"])
    return tasks, busy


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    tasks, busy = stage_tasks(sys.argv[1])
    for stage in sorted(tasks):
        chunks = sorted({chunk for chunk, _ in tasks[stage]})
        passes = []
        for chunk in chunks:
            for forward, letter in ((True, "f"), (False, "b")):
                durations = tasks[stage].get((chunk, forward), [])
                mean_ms = sum(durations) / len(durations) / 1e3 if durations else 0.0
                passes.append(f"{letter}{chunk} {mean_ms:.2f}")
        print(f"stage {stage}: busy {busy[stage][0] / 1e6:.3f} s, ends {busy[stage][1] / 1e6:.3f} s; "
              + " ".join(passes))
    busiest = max(sorted(busy), key=lambda s: busy[s][0])
    median = statistics.median(b for b, _ in busy.values())
    print(f"busiest: stage {busiest}, {busy[busiest][0] / 1e6:.3f} s, "
          f"{(busy[busiest][0] - median) / 1e6:.3f} s over the median stage")


if __name__ == "__main__":
    main()
