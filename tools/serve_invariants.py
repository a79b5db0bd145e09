#!/usr/bin/env python3
"""Metamorphic checks of the serving model: sizes each serving scenario as shipped, then again
with one input perturbed, and lists every row whose result moved the wrong way.

Usage: tools/serve_invariants.py SCENARIO... [--binary build/release/clustersim] [--jobs N]
                                 [--only NAME,...] [--tolerance 0]

Each scenario keeps its deployment space; a perturbation changes one input:
  flops    every GPU's peak TFLOP/s x 1.5 (measured matmul rates with them)  latencies not larger
  hbm      every GPU's memory bandwidth x 1.5                                 latencies not larger
  links    every GPU's NVLink and PCIe bandwidth x 1.5                        latencies not larger
  memory   every GPU's memory x 1.5 (the KV cache grows)   no more preemptions, TTFT, E2E larger
  rate     the rate x 0.5, duration and warm-up x 2 (the same requests)      latencies not larger
  input    prompt lengths x 1.5 (median, fixed and max)                  TTFT and E2E not smaller
  output   output lengths x 1.5                                               E2E not smaller
  static   static batching instead of continuous                              throughput not higher
  duration an open loop's duration x 4 (the same warm-up)  throughput and cost per million tokens
           of every row keeping up moved by the same factor, within 2% (the longer sample's own
           rate and lengths move them all alike; a deployment keeping up produces at the offered
           rate whatever the traffic's duration)
and, within the unperturbed run: p50 <= p90 <= p99 of each latency and utilizations from 0 to 1, more replicas at the same load (latencies not larger), cost per
million tokens = price per hour / (3600 x output tokens/s) x 1e6, and -j 1 against -j 2 (the
results files byte-identical). A row is compared with the row of the same index when both
simulated ('ok', 'misses SLO' or 'overloaded'). The catalog perturbations go through --catalog (a copy of
topologies/gpus.textproto whose entries replace the shipped ones); 'identity' (the copy unchanged)
must reproduce the plain run exactly. A row that served under 90% of an open loop's offered
requests per second in either run is marked overloaded (its queue grew to the end: no steady
state). Exit status 1 when a relation is broken beyond --tolerance (relative) in a row not
overloaded.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from textproto_fields import scale_fields

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LATENCIES = [f"{m}_{s}_ms" for m in ("ttft", "tpot", "e2e") for s in ("mean", "p50", "p90", "p99")]
SIMULATED = ("ok", "misses SLO", "overloaded")
NUMBER = r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"


CATALOG_PERTURBATIONS = {
    "identity": lambda t: t,
    "flops": lambda t: scale_fields(
        scale_fields(t, ["fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int8_tops"], 1.5,
                     "peak_tflops"),
        ["bf16_tflops", "fp8_tflops"], 1.5, "measured_matmul"),
    "hbm": lambda t: scale_fields(t, ["memory_bandwidth_gb_per_s"], 1.5),
    "links": lambda t: scale_fields(scale_fields(t, ["per_direction_gb_per_s"], 1.5, "nvlink"),
                                    ["per_direction_gb_per_s"], 1.5, "pcie"),
    "memory": lambda t: scale_fields(t, ["memory_gib", "cuda_total_memory_gib"], 1.5),
}


def scale_lengths(text, which, factor):
    """The scenario with `which`_tokens' distribution (median, fixed, max) x factor, rounded."""
    def block(m):
        inner = re.sub(r"\b(median|fixed|max):\s*" + NUMBER,
                       lambda n: "%s: %d" % (n.group(1), round(float(n.group(2)) * factor)),
                       m.group(2))
        return m.group(1) + inner + m.group(3)
    return re.sub(r"(\b%s_tokens\s*\{)([^{}]*\{[^{}]*\}[^{}]*|[^{}]*)(\})" % which, block, text)


def half_rate(text):
    """An open loop at half its rate over twice its duration and warm-up: the same requests twice
    as far apart (traffic.h). Unchanged: a closed loop, a trace, bursts or a daily curve."""
    if not re.search(r"^\s*rate_per_s:", text, re.M) or "hourly_rate_per_s" in text:
        return text
    text = re.sub(r"\b(rate_per_s):\s*" + NUMBER,
                  lambda m: "%s: %r" % (m.group(1), float(m.group(2)) * 0.5), text)
    return re.sub(r"\b(duration_s|warmup_s):\s*" + NUMBER,
                  lambda m: "%s: %r" % (m.group(1), float(m.group(2)) * 2), text)


def longer(text):
    """An open loop over four times its duration, the warm-up kept. Unchanged: a closed loop
    (its users' requests, not the duration, may bound it), a trace or a daily curve."""
    if not re.search(r"^\s*(rate_per_s|bursts)\b", text, re.M) or "hourly_rate_per_s" in text:
        return text
    return re.sub(r"\b(duration_s):\s*" + NUMBER,
                  lambda m: "%s: %r" % (m.group(1), float(m.group(2)) * 4), text)


SCENARIO_PERTURBATIONS = {
    "rate": half_rate,
    "duration": longer,
    "input": lambda t: scale_lengths(t, "input", 1.5),
    "output": lambda t: scale_lengths(t, "output", 1.5),
    # Static batching on the same load (chunked prefill is continuous batching's only).
    "static": lambda t: re.sub(r"\s*chunked_prefill:\s*true", "",
                               t.replace("batching: CONTINUOUS", "batching: STATIC")),
}

# +1: the metric may not grow under the perturbation; -1: may not shrink.
DIRECTIONS = {
    "identity": {},
    "flops": {**{k: 1 for k in LATENCIES}, "output_tokens_per_s": -1},
    "hbm": {**{k: 1 for k in LATENCIES}, "output_tokens_per_s": -1},
    "links": {**{k: 1 for k in LATENCIES}, "output_tokens_per_s": -1},
    # More sequences may decode at once in a larger cache, each step longer: TPOT may grow.
    "memory": {**{k: 1 for k in LATENCIES if not k.startswith("tpot")},
               "output_tokens_per_s": -1, "preemptions": 1, "kv_cache_tokens": -1},
    "rate": {k: 1 for k in LATENCIES},
    # TPOT is a rate, not a request's latency: longer prompts slow the iterations decodes share,
    # longer outputs spread the prompts' iterations over more tokens (TPOT may fall).
    "input": {k: -1 for k in LATENCIES if not k.startswith("tpot")},
    "output": {k: -1 for k in LATENCIES if k.startswith("e2e")},
    "static": {"output_tokens_per_s": 1},
    # 0: every row not overloaded moves by the median row's factor, within SAMPLING_TOLERANCE
    # (or --tolerance when larger).
    "duration": {"output_tokens_per_s": 0, "cost_per_million_tokens": 0},
}
# The shipped chat sizing's rows keeping up move +3.0% to +3.4% over 4 times its duration (its
# 300 s sample's rate and mean output length 3% below the 1200 s one's); the drain after the last
# arrival, once counted in the throughput, moved them +3% to +21%.
SAMPLING_TOLERANCE = 0.02


def serve(binary, scenario, out, jobs, catalog=None):
    cmd = [binary, "serve", scenario, "--root", ROOT, "--out", out, "-j", str(jobs),
           "--limit", "0"]
    if catalog:
        cmd += ["--catalog", catalog]
    if os.path.exists(out):
        os.remove(out)
    run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Exit status 1 with the file written: no deployment meets the objectives.
    if run.returncode not in (0, 1) or not os.path.exists(out):
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), run.stderr))
    with open(out) as f:
        return json.load(f)


def offered_rate(text):
    """The scenario's open-loop rate (requests/s), or None (closed loop, trace, bursts)."""
    m = re.search(r"^\s*rate_per_s:\s*" + NUMBER, text, re.M)
    return float(m.group(1)) if m else None


def overloaded(row, rate):
    """Whether `row` served fewer than 90% of the offered requests per second: its queue grew
    through the run (no steady state; its percentiles are the queue's length at the end)."""
    return row["status"] == "overloaded" or (
        rate is not None and row.get("requests_per_s") is not None and
        row["requests_per_s"] < 0.9 * rate)


def compare(name, base, perturbed, directions, tolerance, exact, rates=(None, None)):
    """Broken relations of `perturbed` against `base`, row by row; a row overloaded in either
    run (at its offered rate, `rates`) is marked '(overloaded)'."""
    broken, cases, seen, pairs = [], 0, set(), []
    for b, p in zip(base, perturbed):
        if b["index"] in seen:
            continue  # the same simulation under another billing mode
        seen.add(b["index"])
        if exact:
            cases += 1
            if b != p:
                broken.append((name, b["index"], "row", "", "", "differs"))
            continue
        if b["status"] in SIMULATED and p["status"] in SIMULATED:
            pairs.append((b, p, overloaded(b, rates[0]) or overloaded(p, rates[1])))
    # The factor every row keeping up moves by, of each metric that must move alike.
    common = {}
    for metric in (m for m, sign in directions.items() if sign == 0):
        factors = sorted(p[metric] / b[metric] for b, p, over in pairs
                         if not over and b.get(metric) and p.get(metric) is not None)
        common[metric] = factors[len(factors) // 2] if factors else None
    for b, p, over in pairs:
        cases += 1
        for metric, sign in directions.items():
            x, y = b.get(metric), p.get(metric)
            if x is None or y is None:
                continue
            excess, allowed = (y - x) * sign, tolerance
            if sign == 0:
                if not common[metric] or not x:
                    continue
                excess, allowed = abs(y - x * common[metric]), max(tolerance, SAMPLING_TOLERANCE)
            if excess > allowed * max(abs(x), 1e-12):
                change = "%+.3g%%" % (100 * (y - x) / x) if x else "from 0"
                if sign == 0:
                    change += " (rows keeping up: %+.3g%%)" % (100 * (common[metric] - 1))
                if over:
                    change += ", overloaded"
                broken.append((name, b["index"], metric, x, y, change))
    return cases, broken


def replica_pairs(rows, tolerance, rate):
    """Rows differing only in replicas (same billing): more replicas, latencies not larger."""
    groups = {}
    for r in rows:
        if r["status"] not in SIMULATED:
            continue
        key = tuple((k, str(v)) for k, v in sorted(r.items())
                    if k in ("instance", "tensor_parallel", "pipeline_parallel", "weights",
                             "activations", "kv_cache", "batching", "max_batch_size",
                             "max_tokens_per_iteration", "concurrency", "billing",
                             "prefill_instance", "prefill_replicas", "expert_parallel",
                             "prefix_caching", "draft_tokens", "attention_data_parallel"))
        groups.setdefault(key, []).append(r)
    broken, cases = [], 0
    for group in groups.values():
        group.sort(key=lambda r: r["replicas"])
        for a, b in zip(group, group[1:]):
            if a["concurrency"]:
                continue  # a closed loop's users are split, not its load
            cases += 1
            for metric in LATENCIES:
                x, y = a.get(metric), b.get(metric)
                if x is not None and y is not None and y - x > tolerance * x:
                    change = "%d -> %d replicas, %+.3g%%" % (a["replicas"], b["replicas"],
                                                             100 * (y - x) / x)
                    if overloaded(a, rate) or overloaded(b, rate):
                        change += ", overloaded"
                    broken.append(("replicas", a["index"], metric, x, y, change))
    return cases, broken


def row_ranges(rows):
    """Each simulated row's latency percentiles in order and its busy shares from 0 to 1."""
    broken, cases = [], 0
    for r in rows:
        if r["status"] not in SIMULATED:
            continue
        cases += 1
        for m in ("ttft", "tpot", "e2e", "kv_transfer"):
            p = [r.get("%s_%s_ms" % (m, s)) for s in ("p50", "p90", "p99")]
            p = [x for x in p if x is not None]
            if p != sorted(p):
                broken.append(("ranges", r["index"], m + " p50/p90/p99", "", p, "out of order"))
        for share in ("gpu_utilization", "kv_cache_utilization", "prefix_hit_tokens",
                      "prefix_hit_requests"):
            x = r.get(share)
            if x is not None and not 0 <= x <= 1:
                broken.append(("ranges", r["index"], share, "", x, "outside 0..1"))
    return cases, broken


def cost_identity(rows):
    broken, cases = [], 0
    for r in rows:
        price, tokens, cost = (r.get("price_per_hour"), r.get("output_tokens_per_s"),
                               r.get("cost_per_million_tokens"))
        if price is None or not tokens or cost is None:
            continue
        cases += 1
        expected = price / 3600 / tokens * 1e6
        if abs(cost - expected) > 1e-9 * expected:
            broken.append(("cost", r["index"], "cost_per_million_tokens", expected, cost, ""))
    return cases, broken


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenarios", nargs="+")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build/release/clustersim"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated perturbations (default: all)")
    parser.add_argument("--tolerance", type=float, default=0.0)
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    with open(os.path.join(ROOT, "topologies", "gpus.textproto")) as f:
        gpus = f.read()
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        for scenario in args.scenarios:
            name = os.path.splitext(os.path.basename(scenario))[0]
            with open(scenario) as f:
                text = f.read()
            base = serve(args.binary, scenario, os.path.join(work, "base.json"), args.jobs)
            rate = offered_rate(text)
            results = []
            if not only or "threads" in only:
                one = os.path.join(work, "one.json")
                serve(args.binary, scenario, one, 1)
                two = os.path.join(work, "two.json")
                serve(args.binary, scenario, two, 2)
                with open(one, "rb") as a, open(two, "rb") as b:
                    same = a.read() == b.read()
                results.append(("threads", 1, [] if same else [("threads", "", "file", "", "",
                                                                "-j 1 and -j 2 differ")]))
            if not only or "replicas" in only:
                results.append(("replicas",) + replica_pairs(base, args.tolerance, rate))
            if not only or "ranges" in only:
                results.append(("ranges",) + row_ranges(base))
            if not only or "cost" in only:
                results.append(("cost",) + cost_identity(base))
            for pname, perturb in CATALOG_PERTURBATIONS.items():
                if only and pname not in only:
                    continue
                catalog = os.path.join(work, "catalog-" + pname)
                os.makedirs(catalog, exist_ok=True)
                with open(os.path.join(catalog, "gpus.textproto"), "w") as f:
                    f.write(perturb(gpus))
                rows = serve(args.binary, scenario, os.path.join(work, pname + ".json"),
                             args.jobs, catalog)
                results.append((pname,) + compare(pname, base, rows, DIRECTIONS[pname],
                                                  args.tolerance, pname == "identity",
                                                  (rate, rate)))
                shutil.rmtree(catalog)
            for pname, perturb in SCENARIO_PERTURBATIONS.items():
                if only and pname not in only:
                    continue
                changed = perturb(text)
                if changed == text:
                    continue  # nothing to perturb (a closed loop has no rate)
                path = os.path.join(os.path.dirname(os.path.abspath(scenario)),
                                    ".invariant-%s-%s.textproto" % (name, pname))
                with open(path, "w") as f:
                    f.write(changed)
                try:
                    rows = serve(args.binary, path, os.path.join(work, pname + ".json"), args.jobs)
                except RuntimeError as e:
                    print("%s %s: not run (%s)" % (name, pname, str(e).splitlines()[-1]))
                    continue
                finally:
                    os.remove(path)
                results.append((pname,) + compare(pname, base, rows, DIRECTIONS[pname],
                                                  args.tolerance, False,
                                                  (rate, offered_rate(changed))))
            for pname, cases, broken in results:
                steady = [b for b in broken if not b[5].endswith("overloaded")]
                print("%s %s: %d cases, %d broken (%d in overloaded rows)" %
                      (name, pname, cases, len(broken), len(broken) - len(steady)))
                for b in broken:
                    print("  row %s %s: %s -> %s (%s)" % b[1:])
                failures += len(steady)
            sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
