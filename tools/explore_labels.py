#!/usr/bin/env python3
"""Label honesty of the training step's limiting column: each row of the shipped scenarios, its
layout fixed, run again with one resource 1.25 times faster at a time (GPU peaks, HBM bandwidth,
both, NVLink, PCIe, NICs, storage, dataloader CPUs); the resource whose speed-up shortens the step
the most must be one the label names (label_classes says which). Prints every disagreement with
each resource's saving, and the counts (results/validation.md "Label honesty").

Usage: tools/explore_labels.py [--clustersim BIN] [--jobs N] [--per-group K] [--all] SCENARIO...
The hardware runs replace catalog entries through `--catalog DIR`, as explore_invariants.py's.
"""
import argparse
import os
import re
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from explore_invariants import (BLOCKS, ROOT, gpu_override, gpus_of, instance_override, pick, run,
                                scenario_instances)
from textproto_fields import scale_fields

SPEEDUP = 1.25
# A label is honest when the resource it names saves at least this fraction of what the best
# resource saves: the step's parts are weighed alone (step_limit.h), while a resource's speed-up
# also moves what overlaps it, so two parts within a few percent of each other are a near-tie.
NEAR_TIE = 0.9
# Below this saving (a fraction of the step) no resource moves the step: nothing to rank.
INSENSITIVE = 1e-4


def attention_references(gpus):
    """The GPUs `gpus` borrow attention curves from: a copy keeps them only while its peaks are
    its reference's (catalog.cpp), so the peaks' perturbation scales the references too."""
    references = set()
    for gpu in gpus:
        match = re.search(r'attention_efficiency_from: "([^"]+)"', BLOCKS[("gpu", gpu)])
        if match:
            references.add(match.group(1))
    return sorted(references - set(gpus))


def gpu_speed_override(factor, peaks=True, hbm=True):
    """The GPUs' peaks and/or HBM bandwidth x `factor` (the peaks of the GPUs they borrow
    attention curves from too)."""
    def make(text):
        gpus = gpus_of(scenario_instances(text))
        out = []
        for g in gpus + attention_references(gpus):
            block = BLOCKS[("gpu", g)]
            if peaks:
                block = scale_fields(block, ["\\w+"], factor, "peak_tflops")
            if hbm and g in gpus:
                block = scale_fields(block, ["memory_bandwidth_gb_per_s"], factor)
            out.append(block)
        return out
    return make


def storage_override(factor):
    """Every storage tier `factor` times faster: throughput and IOPS (base, per GiB, caps,
    provisioned maxima) up, latency down."""
    def make(text):
        if "dataset" not in text:
            return None
        out = []
        for (kind, _), block in BLOCKS.items():
            if kind != "storage":
                continue
            block = scale_fields(block, ["base", "per_gib", "cap"], factor, "throughput_mb_per_s")
            block = scale_fields(block, ["base", "per_gib", "cap"], factor, "iops")
            block = scale_fields(block, ["provisioned_max_throughput_mb_per_s",
                                         "provisioned_max_iops"], factor)
            out.append(scale_fields(block, ["latency_ms"], 1 / factor))
        return out
    return make


def dataloader_cpu_override(factor):
    """Every processor family's per-sample rates `factor` times higher (decode, augmentation,
    tokenisation, memcpy)."""
    def make(text):
        if "dataset" not in text:
            return None
        return [scale_fields(block, [r"\w+_per_s"], factor)
                for (kind, _), block in BLOCKS.items() if kind == "dataloading_cost"]
    return make


def link_bandwidths(f):
    """Each link's bandwidth alone x `f`: what the crossing's parenthesis claims to bind."""
    def scale_up(text):  # NVLink, or an Ascend NPU's HCCS
        return [scale_fields(scale_fields(BLOCKS[("gpu", g)], ["per_direction_gb_per_s"], f,
                                          "nvlink"), ["per_direction_gb_per_s"], f, "hccs")
                for g in gpus_of(scenario_instances(text))]
    return {
        "nvlink": scale_up,
        "pcie": gpu_override(["per_direction_gb_per_s"], f, "pcie"),
        "nic": instance_override(["total_gbit_per_s"], f, "network"),
    }


# The link classes (links.textproto) whose latencies each link resource holds, by the names the
# topology builder looks them up by (topology_builder.cpp): the NVLink generation's or HCCS; PCIe
# and the socket between a node's CPUs; the NICs' by network kind.
LINK_CLASSES = {"nvlink": ("nvlink", "nvlink3", "nvlink5", "hccs"), "pcie": ("pcie", "socket"),
                "nic": ("efa", "infiniband", "roce", "erdma", "tcp_ethernet")}


def link_override(link, factor):
    """Link resource `link` `factor` times faster at every size: its bandwidth x `factor`, its
    step latencies (the fabric's NIC and switch latencies for the NICs) / `factor`. Bandwidth
    alone leaves a latency-bound collective where it was (a ring across p5 nodes pays EFA's 40.9 us
    a step); both together keep the size at which a link's channels switch protocol (latency gap
    x rate), so no protocol choice moves with it."""
    bandwidth = link_bandwidths(factor)[link]
    latencies = ["step_latency_us", "simple_step_latency_us"]

    def make(text):
        entries = [scale_fields(BLOCKS[("link_class", name)], latencies, 1 / factor)
                   for name in LINK_CLASSES[link] if ("link_class", name) in BLOCKS]
        if link == "nic":
            entries += [scale_fields(block, ["nic_latency_us", "switch_hop_latency_us"],
                                     1 / factor)
                        for (kind, _), block in BLOCKS.items() if kind == "fabric"]
        return bandwidth(text) + entries
    return make


def resources(f):
    """Resource class -> catalog entries made from the scenario text (None: not used)."""
    return {
        "gpu_peak": gpu_speed_override(f, hbm=False),
        "hbm": gpu_speed_override(f, peaks=False),
        "gpu": gpu_speed_override(f),  # the kernels: both
        "nvlink": link_override("nvlink", f),
        "pcie": link_override("pcie", f),
        "nic": link_override("nic", f),
        "storage": storage_override(f),
        "dataloader_cpu": dataloader_cpu_override(f),
    }


LINKS = ("nvlink", "pcie", "nic")
COMPUTE = {"gpu_peak", "hbm", "gpu"}
# The crossing's link as step_limit.cpp names it.
CROSSING_LINK = {"scale-out network": "nic", "PCIe between GPU and NIC": "pcie",
                 "NVLink to the NIC's GPU": "nvlink", "NVLink inside each domain": "nvlink"}
FETCH_RATE = "DeepSpeed 2021's ZeRO-3 fetch rate"
# The link parts share, as step_limit.cpp names it ("PCIe shared by tensor- and data-parallel
# communication").
SHARED_LINK = {"NVLink": "nvlink", "PCIe": "pcie", "scale-out network": "nic"}


def label_classes(label, intra):
    """(the resource classes the label's first part names, the link its crossing names or None),
    or None where the label names no resource (out of memory, a pipeline bubble, an unsimulated
    run). `intra`: the link inside an NVLink domain ("nvlink", or "pcie" on GPUs without)."""
    crossing = re.search(r"across NVLink domains \((.+)\)$", label)
    link = CROSSING_LINK.get(crossing.group(1)) if crossing else None
    if label.startswith("compute, then "):
        return COMPUTE, link
    shared = re.match(r"(.+) shared by .+ communication$", label)
    if shared:
        return {SHARED_LINK.get(shared.group(1))}, None
    if crossing:
        return {link}, None
    table = {
        # Kernels: GEMMs at the peaks, the rest at HBM bandwidth (compute_model.h): one class,
        # whose speed-up is both's ("gpu"), or either's.
        "compute": COMPUTE,
        # The optimizer step streams the states through HBM.
        "optimizer": COMPUTE,
        # Groups inside one NVLink domain (a group across domains is named as a crossing).
        "tensor-parallel communication": {intra},
        # A context- or expert-parallel group, or the data-parallel traffic, may cross domains:
        # the label names no link.
        "context-parallel communication": {intra, "nic", "pcie"},
        "expert-parallel all-to-all": {intra, "nic", "pcie"},
        "data-parallel communication": {intra, "nic", "pcie"},
        # The input pipeline's stages (input_pipeline.cpp limiting_stage; the CPU stage by the
        # work it does: dataloading_cost.cpp).
        "storage throughput": {"storage"},
        "storage IOPS": {"storage"},
        "CPU decode": {"dataloader_cpu"},
        "CPU tokenize": {"dataloader_cpu"},
        "CPU collate": {"dataloader_cpu"},
        "pinned-memory copy": {"dataloader_cpu"},
        "PCIe host-to-device": {"pcie"},
        "dataloader workers": {"storage", "dataloader_cpu"},
    }
    if label in table:
        return table[label], None
    # DeepSpeed 2021's ZeRO-3 coordinator paces the fetches (step_limit.cpp): a software rate,
    # which no catalog entry scales.
    if label.startswith("GPU memory") or label in ("pipeline bubble", FETCH_RATE) or not label:
        return None
    return set(), None  # a label this table does not know: every resource disagrees


def intra_link(row):
    """The link inside a node of the row's GPUs (its instance column names a mix's pools too):
    NVLink (or an NPU's HCCS), else PCIe."""
    gpus = gpus_of([name for name in re.findall(r"[\w.-]+", row["instance"])
                    if ("instance", name) in BLOCKS])
    has_nvlink = any(re.search(r"\b(nvlink|hccs)\s*\{", BLOCKS[("gpu", g)]) for g in gpus)
    return "nvlink" if has_nvlink else "pcie"


def judge(label, intra, savings, bandwidth_savings):
    """'honest', 'no resource' or 'insensitive' (nothing to rank), or a disagreement's text.
    `savings`: by resource, the step's fraction saved; `bandwidth_savings`: by link, by its
    bandwidth alone (the crossing's parenthesis names the link binding the traffic's bytes)."""
    classes = label_classes(label, intra)
    if classes is None:
        return "no resource"
    named, link = classes
    best = max(savings, key=savings.get) if savings else None
    if best is None or savings[best] < INSENSITIVE:
        return "insensitive"
    problems = []
    if max([savings.get(c, 0) for c in named] + [0]) < NEAR_TIE * savings[best]:
        problems.append("names %s, %s saves most" % ("/".join(sorted(named)), best))
    if link:
        best_link = max(LINKS, key=lambda l: bandwidth_savings.get(l, 0))
        most = bandwidth_savings.get(best_link, 0)
        if most >= INSENSITIVE and bandwidth_savings.get(link, 0) < NEAR_TIE * most:
            problems.append("crossing names %s, %s's bandwidth saves most" % (link, best_link))
    return "; ".join(problems) or "honest"


def explore(binary, path, work):
    text = re.sub(r"^\s*#.*\n", "", open(path).read(), flags=re.M)  # comments name fields too
    base = run(binary, text, None, work)
    if not isinstance(base, dict):
        return path, [("base run failed", str(base))]
    failed = []

    def faster_runs(makers):
        out = {}
        for name, make in makers.items():
            entries = make(text)
            if entries:
                rows = run(binary, text, entries, work)
                if isinstance(rows, dict):
                    out[name] = rows
                else:
                    failed.append(("run failed", "%s: %s" % (name, rows[0][:200])))
        return out

    def savings_of(runs, key, step):
        out = {}
        for name, rows in runs.items():
            other = rows.get(key)
            if other is not None and other["step_s"]:
                out[name] = 1 - float(other["step_s"]) / step
        return out

    faster = faster_runs(resources(SPEEDUP))
    crossings = any("across NVLink domains" in row["limiting"] for row in base.values())
    bandwidths = faster_runs(link_bandwidths(SPEEDUP)) if crossings else {}
    verdicts = []
    for key, row in base.items():
        name = "#" + "/".join(map(str, key))  # the row's place in the run, then its layout
        if not row["step_s"]:
            verdicts.append(("no resource", name + ": " + row["limiting"]))
            continue
        step = float(row["step_s"])
        savings = savings_of(faster, key, step)
        bandwidth_savings = savings_of(bandwidths, key, step)
        verdict = judge(row["limiting"], intra_link(row), savings, bandwidth_savings)
        detail = "%s: '%s' %s" % (name, row["limiting"], ", ".join(
            "%s %+.2f%%" % (n, 100 * s) for n, s in sorted(savings.items(), key=lambda x: -x[1])))
        if bandwidth_savings:
            detail += "; bandwidth alone: " + ", ".join(
                "%s %+.2f%%" % (n, 100 * s) for n, s in sorted(bandwidth_savings.items(),
                                                              key=lambda x: -x[1]))
        verdicts.append((verdict, detail))
    return path, verdicts + failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clustersim", default=os.path.join(ROOT, "build/release/clustersim"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--per-group", type=int, default=0, help="0: every scenario")
    parser.add_argument("--all", action="store_true", help="print the honest rows too")
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args()
    scenarios = pick(args.scenarios, args.per_group) if args.per_group else args.scenarios
    counts = {}
    with tempfile.TemporaryDirectory() as work, ThreadPoolExecutor(args.jobs) as pool:
        for path, verdicts in pool.map(lambda p: explore(args.clustersim, p, work), scenarios):
            for verdict, detail in verdicts:
                kind = verdict if verdict in ("honest", "no resource", "insensitive",
                                              "base run failed", "run failed") else "DISAGREE"
                counts[kind] = counts.get(kind, 0) + 1
                if kind != "honest" or args.all:
                    print("%s %s %s%s" % (kind, os.path.relpath(path, ROOT), detail,
                                          "" if kind != "DISAGREE" else " -- " + verdict))
            sys.stdout.flush()
    rows = sum(n for kind, n in counts.items() if kind != "run failed")  # a run is not a row
    print("%d scenarios, %d rows: %s" % (len(scenarios), rows,
                                         ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    return 1 if "DISAGREE" in counts else 0


if __name__ == "__main__":
    sys.exit(main())
