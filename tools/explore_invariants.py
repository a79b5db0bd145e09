#!/usr/bin/env python3
"""Metamorphic checks of the training step model: each shipped scenario, its layout fixed, run
again with one input perturbed (faster hardware, more HBM, more micro-batches, more recomputation,
fewer layers), and the pair checked against what physics says must hold (faster hardware is never
slower, more capacity changes no memory, ...). Prints every violation and a count per relation.

Usage: tools/explore_invariants.py [--clustersim BIN] [--jobs N] [--per-group K] SCENARIO...
Hardware perturbations replace catalog entries through `--catalog DIR` (a copy of the shipped
entry with its numbers scaled); the others edit the scenario text.
"""
import argparse
import csv
import io
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from textproto_fields import scale_fields

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY_COLUMNS = ["instance", "nodes", "tensor_parallel", "context_parallel", "pipeline_parallel",
               "data_parallel", "expert_parallel", "micro_batch_size", "virtual_stages",
               "recompute"]
TOLERANCE = 1e-6  # relative: what the picosecond clock and float sums may leave
# step(2n) <= 2 step(n) holds while what a step pays once (optimizer, last gradient reduction) is
# more than what its last micro-batch saves; FSDP2's last backward shares the NICs with no next
# forward's gathers: on scenarios/llama3_70b_hsdp.textproto (p4de, full sharding) 69.5 ms saved
# against a 15 ms optimizer step, x2.00004.
BATCH_TOLERANCE = 1e-4


def catalog_blocks():
    """(kind, name) -> text of every top-level entry of the shipped catalog."""
    blocks = {}
    for folder in ("models", "topologies"):
        for file_name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if not file_name.endswith(".textproto"):
                continue
            text = open(os.path.join(ROOT, folder, file_name)).read()
            for match in re.finditer(r"^(\w+) \{\n(.*?)^\}", text, re.S | re.M):
                name = re.search(r'^  name: "([^"]+)"', match.group(2), re.M)
                if name:
                    blocks[(match.group(1), name.group(1))] = match.group(0)
    return blocks


BLOCKS = catalog_blocks()


def scenario_instances(text):
    return sorted(set(n for n in re.findall(r'"([^"]+)"', text) if ("instance", n) in BLOCKS))


def gpus_of(instances):
    gpus = set()
    for instance in instances:
        block = BLOCKS.get(("instance", instance))
        if block:
            gpus.add(re.search(r'^  gpu: "([^"]+)"', block, re.M).group(1))
    return sorted(gpus)


def gpu_override(fields, factor, inside=None):
    def make(text):
        return [scale_fields(BLOCKS[("gpu", g)], fields, factor, inside)
                for g in gpus_of(scenario_instances(text))]
    return make


def instance_override(fields, factor, inside):
    def make(text):
        return [scale_fields(BLOCKS[("instance", i)], fields, factor, inside)
                for i in scenario_instances(text) if ("instance", i) in BLOCKS]
    return make


def link_latency_override(factor):
    def make(text):
        return [scale_fields(b, ["step_latency_us", "simple_step_latency_us"], factor)
                for (kind, _), b in BLOCKS.items() if kind == "link_class"]
    return make


def same_protocol_gap(block, factor):
    """A link class whose gap between the Simple and the low-latency protocols' step latencies is
    divided by `factor`: a channel `factor` times faster then switches protocol at the same size
    (collective.cpp start_with_protocol: low latency while 2 S / rate + its latency is the less)."""
    low = re.search(r"\bstep_latency_us: ([0-9.]+)", block)
    simple = re.search(r"\bsimple_step_latency_us: ([0-9.]+)", block)
    if not (low and simple):
        return block
    gap = (float(simple.group(1)) - float(low.group(1))) / factor
    return block.replace(simple.group(0),
                         "simple_step_latency_us: %.10g" % (float(low.group(1)) + gap))


def whole_network_override(factor):
    """Every link `factor` times faster (NVLink, PCIe, NICs) and the protocol thresholds with
    them: no collective changes protocol."""
    def make(text):
        gpus = gpu_override(["per_direction_gb_per_s"], factor, "nvlink")(text)
        gpus = [scale_fields(g, ["per_direction_gb_per_s"], factor, "pcie") for g in gpus]
        return (gpus + instance_override(["total_gbit_per_s"], factor, "network")(text) +
                [same_protocol_gap(b, factor) for (kind, _), b in BLOCKS.items()
                 if kind == "link_class"])
    return make


def latency_shift_override(fraction):
    """Both protocols' step latencies lowered by `fraction` of the low-latency one's: the gap
    between them, and so every protocol choice, unchanged."""
    def shift(block):
        low = re.search(r"\bstep_latency_us: ([0-9.]+)", block)
        if not low:
            return block
        cut = float(low.group(1)) * fraction
        return re.sub(r"\b(step_latency_us|simple_step_latency_us): ([0-9.]+)",
                      lambda m: "%s: %.10g" % (m.group(1), float(m.group(2)) - cut), block)
    def make(text):
        return [shift(b) for (kind, _), b in BLOCKS.items() if kind == "link_class"]
    return make


def fewer_layers_override(text):
    model = re.search(r'^model: "([^"]+)"', text, re.M)
    block = model and BLOCKS.get(("model", model.group(1)))
    if not block:
        return None
    pipeline = int((re.search(r"pipeline_parallel: (\d+)", text) or [0, 1])[1])
    chunks = int((re.search(r"virtual_stages: (\d+)", text) or [0, 1])[1])
    layers = int(re.search(r"num_layers: (\d+)", block).group(1))
    drop = pipeline * chunks
    if layers <= drop or "stage_layers" in text or "hybrid_layer_pattern" in block:
        return None
    block = re.sub(r"\n  published_\w+: [\w.]+", "", block)  # the counts of the full model
    return [re.sub(r"num_layers: \d+", "num_layers: %d" % (layers - drop), block, count=1)]


def double_batch(text):
    return re.sub(r"global_batch_size: (\d+)", lambda m: "global_batch_size: %d" % (2 * int(m[1])),
                  text, count=1)


def more_recompute(text):
    """More of the step recomputed: none -> selective -> full, modules -> full, or one more layer
    of a partial full recomputation."""
    if "sweep {" in text and "recompute" in text.split("sweep {", 1)[1]:
        return None
    layers = re.search(r"recompute_num_layers: (\d+)", text)
    if layers:
        return text.replace(layers.group(0), "recompute_num_layers: %d" % (int(layers[1]) + 1))
    current = re.search(r"recompute: (\w+)", text)
    now = current.group(1) if current else None
    if "recompute_modules" in text and now != "RECOMPUTE_FULL":
        text = re.sub(r"recompute_modules: \[[^]]*\]|recompute_modules: \w+", "", text)
        now = "RECOMPUTE_SELECTIVE"
    upgrade = {None: "RECOMPUTE_SELECTIVE", "RECOMPUTE_NONE": "RECOMPUTE_SELECTIVE",
               "RECOMPUTE_SELECTIVE": "RECOMPUTE_FULL"}
    if now not in upgrade:
        return None
    if current:
        return text.replace(current.group(0), "recompute: " + upgrade[now], 1)
    if not re.search(r"^parallelism \{", text, re.M):
        return None
    return re.sub(r"^parallelism \{", "parallelism {\n  recompute: %s" % upgrade[now], text,
                  count=1, flags=re.M)


PEAK_FIELD = {"BF16": "bf16", "FP16": "fp16", "FP32": "fp32", "TF32": "tf32", "FP8": "fp8",
              "MXFP8": "fp8", "FP4": "fp4"}


def job_precision_peak(factor):
    """The peak of the job's precision alone, x `factor`."""
    def make(text):
        precision = re.search(r"precision: (\w+)", text)
        field = precision and PEAK_FIELD.get(precision.group(1))
        return gpu_override([field], factor, "peak_tflops")(text) if field else None
    return make


def perturbations(speedup):
    """name -> (catalog entries made from the scenario text | None, scenario edit | None,
    relation, the factor the peak took); hardware `speedup` times faster (or slower, below 1)."""
    f, pace = speedup, "faster" if speedup > 1 else "slower"
    hardware = {
        "gpu_peak": (gpu_override(["\\w+"], f, "peak_tflops"), f),
        "gpu_peak_of_precision": (job_precision_peak(f), f),
        "hbm_bandwidth": (gpu_override(["memory_bandwidth_gb_per_s"], f), 1),
        "nvlink": (gpu_override(["per_direction_gb_per_s"], f, "nvlink"), 1),
        "pcie": (gpu_override(["per_direction_gb_per_s"], f, "pcie"), 1),
        "nic": (instance_override(["total_gbit_per_s"], f, "network"), 1),
    }
    table = {"%s_x%g" % (n, f): (c, None, pace, peak) for n, (c, peak) in hardware.items()}
    # One link class or latency alone moves the sizes at which the channels crossing it switch
    # between the low-latency and the Simple protocol, each chosen on an idle network, so the step
    # may move either way by what the other protocol costs under contention ("protocol switch");
    # the _same_protocols perturbations move every link and keep every choice (a violation).
    table["link_latency_x%g" % (1 / f)] = (link_latency_override(1 / f), None, pace, 1)
    table["network_x%g_same_protocols" % f] = (whole_network_override(f), None, pace, 1)
    if f > 1:
        table["link_latency_shift_same_protocols"] = (latency_shift_override(1 - 1 / f), None,
                                                      pace, 1)
    table["hbm_capacity_x1.5"] = (gpu_override(["memory_gib", "cuda_total_memory_gib"], 1.5),
                                  None, "capacity", 1)
    table["global_batch_x2"] = (None, double_batch, "batch", 1)
    table["more_recompute"] = (None, more_recompute, "recompute", 1)
    table["fewer_layers"] = (fewer_layers_override, None, "smaller", 1)
    return table



def run(binary, scenario_text, catalog_entries, work):
    """Rows of `run --format csv` keyed by layout, or the error text."""
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        path = os.path.join(tmp, "s.textproto")
        open(path, "w").write(scenario_text)
        command = [binary, "run", path, "--root", ROOT, "--format", "csv", "--limit", "8"]
        if catalog_entries:
            os.mkdir(os.path.join(tmp, "catalog"))
            open(os.path.join(tmp, "catalog", "override.textproto"), "w").write(
                "\n".join(catalog_entries))
            command += ["--catalog", os.path.join(tmp, "catalog")]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            errors = [l for l in done.stderr.splitlines() if ": warning:" not in l]
            return errors[:1] or ["exit %d" % done.returncode]
        rows = {}
        # A GPU copy whose peaks differ from its attention_efficiency_from reference drops the
        # borrowed attention curves of those precisions (catalog.cpp, warned): all of them for its
        # flat flash_attention_fraction, or the FP8 ones, FP8 attention then at the 16-bit ones.
        dropped = "cannot take GPU" in done.stderr or "entries only" in done.stderr
        for index, row in enumerate(csv.DictReader(io.StringIO(done.stdout))):
            row["_attention_dropped"] = dropped
            rows[(index,) + tuple(row[c] for c in KEY_COLUMNS)] = row
        return rows


def number(row, column):
    return float(row[column]) if row[column] else None


def worse(after, before, tolerance=TOLERANCE):
    return after > before * (1 + tolerance)


def check(relation, peak_factor, base, pert):
    """Violations (strings) of `relation` between a base row and its perturbed row."""
    problems = []
    s0, s1 = number(base, "step_s"), number(pert, "step_s")
    m0, m1 = number(base, "memory_gib"), number(pert, "memory_gib")
    if relation in ("faster", "slower", "capacity"):
        if m0 is not None and m1 is not None and abs(m1 - m0) > TOLERANCE * m0:
            problems.append("memory %.6g -> %.6g GiB" % (m0, m1))
    if relation == "faster" and s0 and s1 and worse(s1, s0):
        problems.append("step %.9g -> %.9g s (%+.4f%%)" % (s0, s1, 100 * (s1 / s0 - 1)))
    if relation == "slower" and s0 and s1 and s1 < s0 * (1 - TOLERANCE):
        problems.append("step %.9g -> %.9g s (%+.4f%%)" % (s0, s1, 100 * (s1 / s0 - 1)))
    if relation in ("faster", "slower") and (s0 is None) != (s1 is None):
        problems.append("fits changed: %s -> %s" % (base["limiting"], pert["limiting"]))
    if relation == "capacity":
        if s0 is not None and s1 is None:
            problems.append("fitted layout no longer fits: " + pert["limiting"])
        if s0 and s1 and abs(s1 - s0) > TOLERANCE * s0:
            problems.append("step %.9g -> %.9g s" % (s0, s1))
    if relation == "batch" and s0 and s1:
        if worse(s1, 2 * s0, BATCH_TOLERANCE):
            problems.append("step %.9g -> %.9g s (x%.6f)" % (s0, s1, s1 / s0))
        t0, t1 = number(base, "tokens_per_s"), number(pert, "tokens_per_s")
        if t0 and t1 is not None and t1 < t0 * (1 - BATCH_TOLERANCE):  # empty for a CNN
            problems.append("tokens/s %.9g -> %.9g" % (t0, t1))
        # The micro-batch is the same: so is every GPU's memory once each stage holds its most
        # micro-batches in flight (at least as many micro-batches as stages before the doubling).
        stages = int(base["pipeline_parallel"]) * int(base["virtual_stages"])
        if m0 != m1 and base.get("_micro_batches", 0) >= stages:
            problems.append("memory %.6g -> %.6g GiB" % (m0, m1))
    if relation in ("recompute", "smaller") and m0 is not None and m1 is not None:
        if worse(m1, m0):
            problems.append("memory %.6g -> %.6g GiB" % (m0, m1))
    if relation == "recompute" and s0 and s1 and s1 < s0 * (1 - TOLERANCE):
        problems.append("step %.9g -> %.9g s (%+.4f%%)" % (s0, s1, 100 * (s1 / s0 - 1)))
    if relation == "smaller" and s0 and s1 and worse(s1, s0):
        problems.append("step %.9g -> %.9g s (%+.4f%%)" % (s0, s1, 100 * (s1 / s0 - 1)))
    if relation == "smaller" and s0 is not None and s1 is None:
        problems.append("smaller model no longer fits: " + pert["limiting"])
    # Faster hardware moves neither the model FLOPs nor the hardware FLOPs: MFU x step time x
    # the peak (and HFU's) stay put; the peak of the job's precision is MFU's denominator.
    if relation in ("faster", "slower", "capacity") and s0 and s1:
        for column in ("mfu", "hfu"):
            a, b = number(base, column) * s0, number(pert, column) * s1 * peak_factor
            if abs(b - a) > 1e-6 * a:
                problems.append("%s x step x peak %.9g -> %.9g" % (column, a, b))
    return problems


# The exposed parts a step is the sum of (`expert_compute_s` is a part of `compute_s`).
STEP_PARTS = ["compute_s", "tensor_comm_s", "context_comm_s", "expert_comm_s", "bubble_s",
              "data_comm_s", "optimizer_s", "data_stall_s"]


def consistency(row, text):
    """Relations inside one row: tokens/s = batch x sequence / step, step = the sum of its
    exposed parts."""
    s = number(row, "step_s")
    if not s:
        return []
    batch = int(re.search(r"global_batch_size: (\d+)", text).group(1))
    sequence = re.search(r"sequence_length: (\d+)", text)
    problems = []
    parts = sum(number(row, k) or 0 for k in STEP_PARTS)
    if abs(parts - s) > 1e-9 * s:
        problems.append("step %s != the sum of its exposed parts %.12g" % (row["step_s"], parts))
    if sequence:
        expected = batch * int(sequence.group(1)) / s
        if abs(number(row, "tokens_per_s") - expected) > 1e-6 * expected:
            problems.append("tokens/s %s != batch x sequence / step %.9g" % (row["tokens_per_s"],
                                                                             expected))
    if abs(number(row, "samples_per_s") - batch / s) > 1e-6 * batch / s:
        problems.append("samples/s %s != batch / step %.9g" % (row["samples_per_s"], batch / s))
    if number(row, "hfu") < number(row, "mfu") * (1 - 1e-9):
        problems.append("hfu %s < mfu %s" % (row["hfu"], row["mfu"]))
    return problems


def pick(scenarios, per_group):
    """Up to `per_group` scenarios of each published group (all of those without one)."""
    chosen, seen = [], {}
    for path in scenarios:
        text = open(path).read()
        group = re.search(r'group: "([^"]+)"', text)
        key = group.group(1) if group else path
        if seen.get(key, 0) < per_group:
            seen[key] = seen.get(key, 0) + 1
            chosen.append(path)
    return chosen


def explore(binary, path, work, speedup):
    text = re.sub(r"^\s*#.*\n", "", open(path).read(), flags=re.M)  # comments name fields too
    base = run(binary, text, None, work)
    if not isinstance(base, dict):
        return path, [], ["base run failed: %s" % base], 0
    findings, skipped, unchanged, cases = [], [], [], 0
    batch = int(re.search(r"global_batch_size: (\d+)", text).group(1))
    for row in base.values():
        findings += [("consistency", k) for k in consistency(row, text)]
        replicas = int(row["data_parallel"]) if row["data_parallel"] else 0
        if replicas and row["micro_batch_size"]:
            row["_micro_batches"] = batch // (replicas * int(row["micro_batch_size"]))
    for name, (catalog, edit, relation, peak) in perturbations(speedup).items():
        entries = catalog(text) if catalog else None
        new_text = edit(text) if edit else text
        if (catalog and not entries) or new_text is None:
            skipped.append(name)
            continue
        pert = run(binary, new_text, entries, work)
        if not isinstance(pert, dict):
            skipped.append("%s (%s)" % (name, pert[0][:120]))
            continue
        for key, row in base.items():
            if relation == "recompute":  # the recompute column moved
                match = [r for k, r in pert.items() if k[:-1] == key[:-1]]
                other = match[0] if len(match) == 1 else None  # the same row, recompute moved
            else:
                other = pert.get(key)
            if other is None:
                continue
            cases += 1
            other["_perturbation"] = name
            if relation in ("faster", "slower") and row["step_s"] and row["step_s"] == other["step_s"]:
                unchanged.append(name)
            for problem in check(relation, peak, row, other):
                if other["_attention_dropped"]:
                    problem += " [attention curves dropped]"
                findings.append((name, "%s: %s" % ("/".join(map(str, key)), problem)))
    return path, findings, skipped + ["unchanged by " + n for n in sorted(set(unchanged))], cases


# The perturbations that may switch a collective's protocol (see perturbations()).
PROTOCOL_SENSITIVE = re.compile(r"^(nvlink|pcie|nic|link_latency)_x")


# Transfers share links max-min fairly in event order: a change that moves one earlier can make
# it collide with another (a pipeline's backward sends with the data-parallel reduce-scatters,
# expert all-to-alls with them), so a faster part can cost the step a little. The largest seen
# with every protocol choice fixed: +0.016% (results/validation.md, "Invariant checks").
CONTENTION_PERCENT = 0.02


def category(name, text, finding):
    """VIOLATION, or the discontinuity a finding may be: a protocol switch, the layers
    of a pipeline across pools (or of interleaved pools) split again by the new speeds and memory
    (parallelism.stage_layers absent: the layout is not fixed), a GPU copy that lost the
    attention curves it borrows (its peaks no longer its reference's), or a step time within
    CONTENTION_PERCENT of the relation."""
    if " x " in finding.split("/")[1] and "stage_layers" not in text:
        return "LAYERS-RESPLIT"
    if finding.endswith("[attention curves dropped]"):
        return "ATTENTION-FROM-DROPPED"
    if PROTOCOL_SENSITIVE.match(name):
        return "PROTOCOL-SWITCH?"
    moved = re.search(r"\(([+-][0-9.]+)%\)", finding)
    if moved and abs(float(moved.group(1))) <= CONTENTION_PERCENT:
        return "CONTENTION?"
    return "VIOLATION"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clustersim", default=os.path.join(ROOT, "build/release/clustersim"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--speedup", type=float, default=1.25,
                        help="factor of the hardware perturbations (below 1: slower)")
    parser.add_argument("--per-group", type=int, default=0, help="0: every scenario")
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args()
    scenarios = pick(args.scenarios, args.per_group) if args.per_group else args.scenarios
    total_cases, tallies = 0, {}
    with tempfile.TemporaryDirectory() as work, ThreadPoolExecutor(args.jobs) as pool:
        for path, findings, skipped, cases in pool.map(
                lambda p: explore(args.clustersim, p, work, args.speedup), scenarios):
            total_cases += cases
            scenario_text = open(path).read()
            for name, finding in findings:
                kind = category(name, scenario_text, finding)
                tally = tallies.setdefault(kind, {})
                tally[name] = tally.get(name, 0) + 1
                print("%s %s %s: %s" % (kind, os.path.relpath(path, ROOT), name, finding))
            for name in skipped:
                print("skipped %s %s" % (os.path.relpath(path, ROOT), name))
            sys.stdout.flush()
    print("%d scenarios, %d scenario x perturbation x row cases; findings: %s" % (
        len(scenarios), total_cases, tallies or "none"))
    return 1 if "VIOLATION" in tallies else 0


if __name__ == "__main__":
    sys.exit(main())
