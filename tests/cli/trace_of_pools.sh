#!/usr/bin/env bash
# `run --trace` of data-parallel pools (tests/data/mix_data_parallel.textproto: one p5 node and
# two p4d nodes): the trace holds one process per pool, named by its instance type, its last
# event ends at the printed step_s, and the pool that is not limiting idles from its last event
# before the all-reduce between pools to that all-reduce's start for the printed pool_wait_s (the
# limiting pool for none); written twice, the same bytes. Usage: trace_of_pools.sh CLUSTERSIM
set -u
cli="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in 1 2; do
  "$cli" run tests/data/mix_data_parallel.textproto --format csv --trace "$dir/step$n.json" \
    >"$dir/rows.csv" 2>"$dir/log" || { cat "$dir/log"; exit 1; }
done
cmp -s "$dir/step1.json" "$dir/step2.json" || { echo "two traces of one step differ"; exit 1; }
python3 - "$dir/rows.csv" "$dir/step1.json" <<'PYTHON'
import csv, json, sys
row = next(csv.DictReader(open(sys.argv[1])))
step, wait, limiting = float(row["step_s"]), float(row["pool_wait_s"]), row["limiting_pool"]
events = json.load(open(sys.argv[2]))["traceEvents"]
pools = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
spans = [e for e in events if e["ph"] == "X"]
problems = []
names = sorted(name.split(" ")[0] for name in pools.values())
if names != ["aws.p4d.24xlarge", "aws.p5.48xlarge"]:
    problems.append(f"processes {sorted(pools.values())}, not one per pool")
last = max(e["ts"] + e["dur"] for e in spans) * 1e-6
if abs(last - step) > 1e-9:
    problems.append(f"the last event ends at {last} s, the step is {step} s")
for pid, name in pools.items():
    mine = [e for e in spans if e["pid"] == pid]
    start = [e["ts"] for e in mine if e["name"] == "all-reduce between pools"]
    if len(start) != 1:
        problems.append(f"{name}: {len(start)} all-reduces between pools")
        continue
    before = max(e["ts"] + e["dur"] for e in mine
                 if tracks[(pid, e["tid"])] != "between pools" and e["ts"] + e["dur"] <= start[0])
    idle = (start[0] - before) * 1e-6
    expected = 0 if name.startswith(limiting + " ") else wait
    if abs(idle - expected) > 1e-9:
        problems.append(f"{name}: idle {idle} s before the all-reduce, pool_wait_s {expected}")
if wait <= 0.01:
    problems.append(f"pool_wait_s {wait}: no wait to check")
print("\n".join(problems) or f"pools traced: step {step} s, {limiting} limiting, the other idle {wait} s")
sys.exit(1 if problems else 0)
PYTHON
