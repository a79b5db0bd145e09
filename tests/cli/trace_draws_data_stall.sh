#!/usr/bin/env bash
# `run --trace` draws the data stall: where the input pipeline cannot keep up (ResNet-50 on 8x
# A100 with 32 vCPUs, CPU-bound), the step waits for its batches before its first forward, on the
# track "data loader" of the process "input pipeline (every node alike)": the stall's events add
# up to the printed data_stall_s, every other event starts after them, and the trace's last event
# ends at the printed step_s. A job whose loader keeps up (pre-tokenized shards) and one without
# a dataloader (quickstart) have no such track. Usage: trace_draws_data_stall.sh CLUSTERSIM
set -u
cli="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
for scenario in input/resnet50-imagenet-32vcpu input/llm-pretrain-tokenized-shards quickstart; do
  name=$(basename "$scenario")
  "$cli" run "scenarios/$scenario.textproto" --fastest 1 --format csv --trace "$dir/$name.json" \
    >"$dir/$name.csv" 2>"$dir/log" || { cat "$dir/log"; exit 1; }
  python3 - "$name" "$dir/$name.csv" "$dir/$name.json" <<'PYTHON' || status=1
import csv, json, sys
name, rows, trace = sys.argv[1:4]
row = next(csv.DictReader(open(rows)))
step, stall = float(row["step_s"]), float(row.get("data_stall_s") or 0)
events = json.load(open(trace))["traceEvents"]
processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
spans = [e for e in events if e["ph"] == "X"]
loader = [e for e in spans if tracks[(e["pid"], e["tid"])] == "data loader"
          and processes[e["pid"]] == "input pipeline (every node alike)"]
others = [e for e in spans if e not in loader]
problems = []
end = max(e["ts"] + e["dur"] for e in spans) * 1e-6
if abs(end - step) > 1e-9 * max(1.0, step):
    problems.append(f"the trace ends at {end:.9f} s, the step is {step:.9f} s")
if name == "resnet50-imagenet-32vcpu":
    drawn = sum(e["dur"] for e in loader) * 1e-6
    if not stall > 0.01 * step:
        problems.append(f"data_stall_s {stall}: no stall to draw")
    if abs(drawn - stall) > 1e-9 * max(1.0, step):
        problems.append(f"the data loader's events add up to {drawn:.9f} s, data_stall_s {stall:.9f}")
    if any(e["ts"] != 0 for e in loader) or len(loader) != 1:
        problems.append(f"the stall is not one wait from the step's start: {loader}")
    first = min(e["ts"] for e in others) * 1e-6
    if abs(first - stall) > 1e-9 * max(1.0, step):
        problems.append(f"the step's first event starts at {first:.9f} s, not after the stall")
elif loader or "data loader" in tracks.values() or stall != 0:
    problems.append(f"a data loader track where nothing stalls (data_stall_s {stall})")
print(f"{name}: " + ("; ".join(problems) or f"step {step:.6f} s, data stall {stall:.6f} s drawn"))
sys.exit(1 if problems else 0)
PYTHON
done
exit $status
