#!/usr/bin/env bash
# `run --trace` draws the step the run prints: for shipped scenarios of different kinds (a dense
# data-parallel job with the distributed optimizer, a pipelined mixture of experts, DeepSeek V3 on
# 1,024 H100s, a pipeline across two pools, hybrid sharding, one Ascend node), the last event of
# the trace of the first row ends at that row's step_s. The distributed optimizer's parameter
# all-gathers overlapped with the next step's forwards are drawn beside this step's first
# forwards, and only what they add to the step after the optimizer. Usage: trace_ends_at_step.sh
# CLUSTERSIM
set -u
cli="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
for name in quickstart mixtral_unbalanced_router deepseek_v3_1024_h100 mix_p5_p4d_pipeline \
            llama3_70b_hsdp huaweicloud_ascend_vs_a100; do
  "$cli" run "scenarios/$name.textproto" --fastest 1 --format csv --trace "$dir/$name.json" \
    >"$dir/$name.csv" 2>"$dir/log" || { cat "$dir/log"; exit 1; }
  python3 - "$name" "$dir/$name.csv" "$dir/$name.json" <<'PYTHON' || status=1
import csv, json, sys
name, rows, trace = sys.argv[1:4]
step = float(next(csv.DictReader(open(rows)))["step_s"])
spans = [e for e in json.load(open(trace))["traceEvents"] if e["ph"] == "X"]
last = max(spans, key=lambda e: e["ts"] + e["dur"])
end = (last["ts"] + last["dur"]) * 1e-6
if abs(end - step) > 1e-9 * max(1.0, step):
    sys.exit(f"{name}: the trace's last event ({last['name']}) ends at {end:.9f} s, "
             f"the step is {step:.9f} s")
if min(e["ts"] for e in spans) < 0:
    sys.exit(f"{name}: an event starts before the step")
print(f"{name}: the trace ends at the step, {step:.6f} s")
PYTHON
done
exit $status
