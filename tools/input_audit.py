#!/usr/bin/env python3
"""Audits the promise that every value a user writes is validated: starting from shipped files,
every numeric, string and enum field (found through the .proto schemas of sim/io/schema) is set,
one at a time, to a hostile value (-1, 0, nan, inf, 1e300, 2^31 - 1, an empty string, an unknown
name), each repeated field gets a duplicate entry, and a few fields break a relation with a
sibling (RELATIONS); the traffic trace file's columns get the same treatment. Each copy is run
through the clustersim command that reads it and sorted:

  good    an error (or a warning, the run going on) at FILE:LINE naming the field
  weak    an error without the line of the file edited, or without the field's name
  bug     a crash: a signal, an abort, an internal error, a sanitizer report, past the time limit
  silent  accepted, and the output differs from the shipped file's in a way that makes no sense
          (a hostile value taken as a number; nan or inf printed)
  ok      accepted and harmless, with the reason: the output is the shipped one's (the command
          reads no such value), or the value is meaningful there (MEANINGFUL lists each, why)

Each occurrence of a field path is mutated once (the first element of a repeated message
stands for the others), which bounds a full run to minutes on two cores. The seeds that exist to
reach the fields no shipped seed above them writes (a feature's scenario, a catalog entry, or a
shipped file edited to use a feature) mutate only those fields. Deterministic.

Usage (from the project root, after tools/build release clustersim):
  tools/input_audit.py [--clustersim build/release/clustersim] [-j 2] [--seed NAME...]
                       [--show CLASS...] [--coverage]
Prints the counts by class per seed and in all, and every mutant of the classes --show names
(default: weak, bug, silent). Exits 1 when any mutant is a bug or silent.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

SCHEMA_DIR = "sim/io/schema"
LIMIT_S = 60

# ---------------------------------------------------------------------------------------------
# The schemas: each message's fields (name -> (label, type)), each enum's values.


def parse_schemas(directory):
    messages, enums = {}, {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".proto"):
            continue
        text = re.sub(r"//[^\n]*", "", open(os.path.join(directory, name)).read())
        for enum in re.finditer(r"enum\s+(\w+)\s*\{([^}]*)\}", text):
            enums[enum.group(1)] = re.findall(r"(\w+)\s*=\s*\d+\s*;", enum.group(2))
        text = re.sub(r"enum\s+\w+\s*\{[^}]*\}", "", text)
        stack = []  # the open message and oneof blocks: (kind, name)
        for token in re.finditer(r"(message|oneof)\s+(\w+)\s*\{|\}|"
                                 r"(optional|repeated|required)?\s*([\w.]+)\s+(\w+)\s*=\s*\d+[^;]*;",
                                 text):
            if token.group(1):
                stack.append((token.group(1), token.group(2)))
                if token.group(1) == "message":
                    messages.setdefault(token.group(2), {})
            elif token.group(0) == "}":
                stack.pop()
            elif stack:
                owner = [n for k, n in stack if k == "message"][-1]
                messages[owner][token.group(5)] = (token.group(3) or "optional",
                                                  token.group(4).split(".")[-1])
    return messages, enums


SCALARS = {"double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32",
           "fixed64", "bool", "string", "bytes"}

# ---------------------------------------------------------------------------------------------
# Protobuf text: where each field's value stands, by the field's path from the root.

TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[\w.+-]+|[{}\[\]:,;<>]')


def tokens(text):
    out = []
    for match in TOKEN.finditer(text):
        token = match.group(0)
        if token.isspace() or token.startswith("#"):
            continue
        out.append((token, match.start(), match.end()))
    return out


class Occurrence:
    """One value of a field: text[start:end] (a scalar), or a message block text[start:end]."""

    def __init__(self, path, message, field, label, type_, start, end, siblings, list_span=None):
        self.path, self.message, self.field = path, message, field
        self.label, self.type, self.start, self.end = label, type_, start, end
        self.siblings = siblings  # the enclosing message's scalar values, filled as read
        self.list_span = list_span  # (start, end) of "[...]" when written as a list


def walk(text, root, messages):
    """Every scalar value and message block of `text`, parsed as `root`, in order."""
    toks = tokens(text)
    found = []
    counts = [collections.Counter()]  # per open message: elements of each field seen

    def read_message(i, type_, prefix, siblings):
        while i < len(toks) and toks[i][0] not in ("}", ">"):
            name = toks[i][0]
            i += 1
            if i < len(toks) and toks[i][0] == ":":
                i += 1
            label, ftype = messages.get(type_, {}).get(name, ("optional", None))
            index = counts[-1][name]
            path = "%s%s" % (prefix, name) + ("[%d]" % index if label == "repeated" else "")
            if i < len(toks) and toks[i][0] == "[":
                list_start = toks[i][1]
                j, depth = i, 0
                while j < len(toks):
                    depth += toks[j][0] == "["
                    depth -= toks[j][0] == "]"
                    if depth == 0:
                        break
                    j += 1
                list_end = toks[j][2]
                i += 1
                while toks[i][0] != "]":
                    if toks[i][0] in ("{", "<"):
                        i = read_block(i, name, ftype, type_, label, "%s%s[%d]" % (
                            prefix, name, counts[-1][name]), siblings)
                        counts[-1][name] += 1
                    elif toks[i][0] == ",":
                        i += 1
                    else:
                        i = read_scalar(i, name, ftype, type_, label, "%s%s[%d]" % (
                            prefix, name, counts[-1][name]), siblings, (list_start, list_end))
                        counts[-1][name] += 1
                i += 1
            elif i < len(toks) and toks[i][0] in ("{", "<"):
                i = read_block(i, name, ftype, type_, label, path, siblings)
                counts[-1][name] += 1
            else:
                i = read_scalar(i, name, ftype, type_, label, path, siblings, None)
                counts[-1][name] += 1
            if i < len(toks) and toks[i][0] in (",", ";"):
                i += 1
        return i

    def read_scalar(i, name, ftype, type_, label, path, siblings, list_span):
        start, end = toks[i][1], toks[i][2]
        i += 1
        while i < len(toks) and toks[i][0][0] in "\"'" and toks[i - 1][0][0] in "\"'":
            end = toks[i][2]  # adjacent strings are one value
            i += 1
        if ftype is not None:
            found.append(Occurrence(path, type_, name, label, ftype, start, end, siblings, list_span))
            siblings.setdefault(name, text[start:end])
        return i

    def read_block(i, name, ftype, type_, label, path, siblings):
        start = toks[i][1]
        counts.append(collections.Counter())
        occurrence = Occurrence(path, type_, name, label, ftype, start, None, siblings)
        found.append(occurrence)
        i = read_message(i + 1, ftype, path + ".", {})
        counts.pop()
        occurrence.end = toks[i][2]
        return i + 1

    read_message(0, root, "", {})
    return found


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


# ---------------------------------------------------------------------------------------------
# The hostile values.

FLOATS = ["-1", "0", "nan", "inf", "1e300"]
INTEGERS = ["-1", "0", "2147483647"]
UNSIGNED = ["0", "2147483647"]
STRINGS = ['""', '"no-such-name"']
HOSTILE = {"-1", "nan", "inf", "1e300", "2147483647", '""', '"no-such-name"', "NO_SUCH_VALUE"}

# Fields of free text (read by people, printed at most): any string is harmless there.
FREE_TEXT = {"note", "citation", "description", "date", "group", "source", "model", "family",
             "product", "kind", "url", "name"}

# Relations between sibling fields: (message, field, value from the siblings, what it breaks).
RELATIONS = [
    ("Price", "per_hour_max", lambda s: "%g" % (float(s["per_hour"]) / 2), "below per_hour"),
    ("InstanceType", "gpu_memory_gib", lambda s: "%g" % (float(s["gpu_memory_gib"]) * 4),
     "four times the GPU's memory"),
    ("InstanceType", "nvlink_domain_gpus", lambda s: "%d" % (int(s.get("gpu_count", "8")) // 2),
     "fewer GPUs than one instance has"),
    ("NodeNetwork", "nic_count", lambda s: "1000", "more NICs than a server holds"),
    ("Traffic", "warmup_s", lambda s: s["duration_s"], "the whole duration"),
    ("LogNormalLength", "median", lambda s: "%g" % (float(s["max"]) * 2), "above max"),
    ("UniformLength", "min", lambda s: "%g" % (float(s["max"]) * 2), "above max"),
    ("Pool", "owned_nodes", lambda s: "%d" % (int(s["nodes"]) + 1), "more than its nodes"),
    ("Constraints", "min_gpus", lambda s: "%d" % (int(s["max_gpus"]) * 2), "above max_gpus"),
    ("StorageTier", "capacity_min_gib", lambda s: "%g" % (float(s["capacity_max_gib"]) * 2),
     "above capacity_max_gib"),
    ("StorageVolume", "capacity_gib", lambda s: "1e9", "beyond the tier's capacity"),
    ("Transformer", "num_kv_heads", lambda s: "%d" % (int(s["num_attention_heads"]) * 2),
     "above num_attention_heads"),
    ("Transformer", "num_attention_heads", lambda s: "%d" % (int(s["hidden_size"]) * 2),
     "above hidden_size"),
    ("MixtureOfExperts", "experts_per_token", lambda s: "%d" % (int(s["num_experts"]) + 1),
     "above num_experts"),
    ("Parallelism", "micro_batch_size", lambda s: "100000", "above any global batch"),
    ("Gpu", "memory_gib", lambda s: "0.5", "smaller than any model's weights"),
    ("DataloadingCost", "reference_jpeg_bytes", lambda s: "1", "a one-byte JPEG"),
    ("Scheduler", "max_tokens_per_iteration", lambda s: "1", "below one prompt"),
]

# Values accepted by design, with why: (message, field, value or None for any hostile one).
ANY_SEED = "any seed draws a valid sample"
NO_DELAY = "zero is an ideal (no delay, no reserve): a what-if worth asking"
MEANINGFUL = {
    ("Cost", "seed", None): ANY_SEED,
    ("Traffic", "seed", None): ANY_SEED,
    ("Cost", "preemptions_per_instance_hour", "0"):
        "a spot market without preemptions (faults still interrupt): a what-if worth asking",
    ("Restart", "acquisition_s", "0"): NO_DELAY,
    ("Restart", "container_start_s", "0"): NO_DELAY,
    ("Traffic", "warmup_s", "0"): "no warm-up: every request is measured",
    ("LogNormalLength", "sigma", "0"): "every request of the median length",
    ("Slo", "p99_ttft_ms", "1e300"): "an objective every deployment meets: none",
    ("Slo", "p99_tpot_ms", "1e300"): "an objective every deployment meets: none",
    ("Slo", "p99_e2e_ms", "1e300"): "an objective every deployment meets: none",
    ("Scheduler", "max_tokens_per_iteration", "2147483647"):
        "no token budget: the deployments whose activations then outgrow memory are answered "
        "out of memory",
    ("Scheduler", "max_tokens_per_iteration", "relation"):
        "chunked prefill of one token an iteration runs, slowly, and is answered so",
    ("Price", "discount_fraction", "0"): "no discount",
    ("Autoscaling", "hourly_rate_per_s", "0"): "an hour without traffic",
    ("Scheduler", "max_batch_size", "2147483647"): "no batch limit: the KV cache bounds admission",
    ("BatchBenchmark", "batch_size", "2147483647"): "the run is answered out of memory, and "
                                                     "counted so in the summary",
    ("BatchBenchmark", "input_tokens", "2147483647"): "warned at its row (a context past the "
                                                       "model's), answered out of memory",
    ("Price", "region", None): "a region is the user's label; \"\" is a price of no region",
    ("LinkClass", "simple_step_latency_us", "0"): NO_DELAY,
    ("LinkClass", "step_latency_us", "0"): NO_DELAY,
    ("Runtime", "cuda_context_gib", "0"): NO_DELAY,
    ("Runtime", "communicator_gib", "0"): NO_DELAY,
    ("Runtime", "allocator_overhead_fraction", "0"): NO_DELAY,
    ("ServingRuntime", "static_prefill_overhead_us", "0"): NO_DELAY,
    ("CapacityScaledLimit", "base", "0"): "a limit that grows with the volume's GiB alone",
    ("CapacityScaledLimit", "per_gib", "0"): "a limit that does not grow with the volume",
    # Of the fields the later seeds reach (their absent values, or a limit meaning none).
    ("Fp4Overrides", "sixteen_bit_last_layers", "0"): "no last layer in 16 bits (its absent value)",
    ("Parallelism", "activation_offload_layers", "0"):
        "no offload (its absent value): a layout that needed it is answered out of memory",
    ("AutoParallelism", "max_pipeline_parallel", "2147483647"):
        "no limit: every degree the layers allow (its absent value is the layer count)",
    ("AutoParallelism", "max_context_parallel", "2147483647"):
        "no limit: every degree the GPUs and the sequence allow",
    ("ExpertRouting", "max_violation", "0"): "balanced routing (its absent value)",
    ("Sweep", "zero_stage", "0"): "ZeRO stage 0, no sharding, is a stage",
    ("Cost", "interruptions_per_node_hour", "0"): "no faults (documented: 0)",
    ("Scheduler", "batch_wait_ms", "0"): NO_DELAY,
    ("ClosedLoop", "think_time_s", "0"): NO_DELAY,
    ("SharedPrefix", "zipf_exponent", "0"): "a Zipf exponent of 0 is uniform popularity",
    ("Autoscaling", "baseline_replicas", "0"): "no baseline: every hour on burst billing",
    ("Bursts", "base_rate_per_s", "0"): "requests in the bursts only",
    ("Transformer", "multi_token_prediction_layers", "0"):
        "no prediction module (its absent value)",
    ("Conv2d", "padding", "0"): "no padding (its absent value)",
    ("Scheduler", "kv_block_tokens", "2147483647"):
        "answered out of memory at the KV cache (0 tokens: the block outgrows it)",
}


def mutations(text, occurrences, enums):
    """(description, mutated text, occurrence) for each hostile edit, each field path once."""
    seen = set()
    out = []
    for occ in occurrences:
        key = (re.sub(r"\[\d+\]", "[]", occ.path), occ.end is not None and occ.type in SCALARS)
        first_element = not re.search(r"\[[1-9]\d*\]", occ.path)
        if key in seen or not first_element:
            continue
        seen.add(key)

        def edit(new, start=occ.start, end=occ.end):
            return text[:start] + new + text[end:]

        if occ.type in SCALARS or occ.type in enums:
            if occ.type in ("double", "float"):
                values = FLOATS
            elif occ.type.startswith("uint") or occ.type.startswith("fixed"):
                values = UNSIGNED
            elif occ.type in ("int32", "int64", "sint32", "sint64"):
                values = INTEGERS
            elif occ.type in ("string", "bytes"):
                values = STRINGS
                if occ.field == "name" and "." not in occ.path:
                    values = ['""']  # a catalog entry renamed adds an entry, harmlessly
            elif occ.type == "bool":
                values = []
            else:
                values = ["NO_SUCH_VALUE"]
            for value in values:
                out.append(("%s: %s" % (occ.path, value), edit(value), occ, value))
            if occ.label == "repeated":
                value = text[occ.start:occ.end]
                if occ.list_span:
                    out.append(("%s: duplicate" % occ.path, edit(value + ", " + value), occ,
                                "duplicate"))
                else:
                    out.append(("%s: duplicate" % occ.path,
                                edit(value + " %s: %s" % (occ.field, value)), occ, "duplicate"))
        elif occ.label == "repeated":
            block = text[occ.start:occ.end]
            prefix = "" if occ.list_span else "%s " % occ.field
            joiner = ", " if text[occ.start - 1:occ.start].strip() in ("[", ",") else " " + prefix
            out.append(("%s: duplicate" % occ.path, edit(block + joiner + block), occ,
                        "duplicate"))
        for message, field, value_of, said in RELATIONS:
            if occ.message == message and occ.field == field and occ.type in SCALARS:
                try:
                    value = value_of(occ.siblings)
                except (KeyError, ValueError):
                    continue
                out.append(("%s: %s (%s)" % (occ.path, value, said), edit(value), occ,
                            "relation"))
    return out


# ---------------------------------------------------------------------------------------------
# The seeds: shipped files, the command that reads each, and the edits that make it quick.


class Seed:
    def __init__(self, name, source, root, command, entry=None, quick=(), new_fields_only=False):
        self.name, self.source, self.root, self.command = name, source, root, command
        self.entry = entry  # (kind, name) of one catalog entry: it goes to a --catalog directory
        # (pattern, replacement) edits of the source and functions of its text, applied in order
        # before any mutation: what makes the seed quick to run, or writes a field no shipped
        # file writes
        self.quick = quick
        # Mutate only the fields no seed before it in SEEDS writes (the seeds added to reach
        # them: their other fields were audited already)
        self.new_fields_only = new_fields_only

    def text(self):
        text = open(self.source).read()
        if self.entry:
            text = catalog_entry(text, *self.entry)
        for step in [self.quick] if callable(self.quick) else self.quick:
            if callable(step):
                text = step(text)
                continue
            pattern, replacement = step
            text, count = re.subn(pattern, replacement, text, flags=re.S)
            assert count, "%s: no %r" % (self.name, pattern)
        return text


def catalog_entry(text, kind, name):
    for match in re.finditer(r"^%s\s*\{" % re.escape(kind), text, re.M):
        depth = 0
        for i in range(match.start(), len(text)):
            if text[i] == "#":
                i = text.find("\n", i)
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    block = text[match.start():i + 1]
                    if re.search(r'^\s*name:\s*"%s"' % re.escape(name), block, re.M):
                        return block + "\n"
                    break
    raise SystemExit("no %s named %s" % (kind, name))


SHORT_CONTEXT_MODELS = {"bert-large"}  # trained on 512-token sequences at most


def entry_scenario(kind, name):
    """The training scenario a catalog entry's seed runs under ({scenario} in its command): a
    small sweep of p5 nodes (QUICKSTART_P5), of the entry itself where it is a model or an
    instance."""
    text = Seed("", "scenarios/quickstart.textproto", "", "", quick=QUICKSTART_P5).text()
    if kind == "model":
        if name in SHORT_CONTEXT_MODELS:
            text = text.replace("sequence_length: 4096", "sequence_length: 512")
        return re.sub(r'^model: "[^"]*"', 'model: "%s"' % name, text, flags=re.M)
    if kind == "instance":
        return text.replace('"aws.p5.48xlarge"', '"%s"' % name)
    return text


# One small training sweep of p5 nodes every catalog seed of training runs under.
QUICKSTART_P5 = [(r"sweep \{.*\}", 'sweep {\n  instance: ["aws.p5.48xlarge"]\n  nodes: [1, 2]\n'
                  '  tensor_parallel: [1, 8]\n  pipeline_parallel: [1, 2]\n  micro_batch_size: [1]\n'
                  '  recompute: [RECOMPUTE_SELECTIVE]\n}')]
QUICK_CHAT = [(r"rate_per_s: 20", "rate_per_s: 2"), (r"duration_s: 300", "duration_s: 30"), (r"warmup_s: 30", "warmup_s: 3"),
              (r"sweep \{.*\}", 'sweep {\n  instance: ["aws.g6.xlarge"]\n  replicas: [1, 2]\n'
               '  quantization: [{ weights: FP16 }, { weights: INT8 }]\n}')]
SPOT_NOTICE = "scenarios/llama2_7b_spot_notice.textproto"
# One instance of each provider with a notice, fewer trials, and a fault's restart of its own.
QUICK_SPOT_NOTICE = [(r"sweep \{.*?\n\}", 'sweep {\n  instance: ["aws.p5.48xlarge", '
                      '"aliyun.ecs.ebmgn7e.32xlarge"]\n  nodes: [1]\n  zero_stage: [1]\n'
                      '  micro_batch_size: [1]\n  recompute: [RECOMPUTE_SELECTIVE]\n}'),
                     (r"trials: 400", "trials: 50"),
                     (r"(restart \{[^}]*\})", "\\1\n  restart_after_fault { acquisition_s: 0 "
                      "container_start_s: 300 }")]
QUICK_COST = [(r"sweep \{.*?\n\}", 'sweep {\n  instance: ["aws.p5.48xlarge", "aws.p4d.24xlarge"]\n'
               '  nodes: [1, 2]\n  tensor_parallel: [8]\n  micro_batch_size: [1]\n}')]

def quick_serving(text):
    """A serving scenario run short: 30 s of traffic after 3 s of warm-up, each sweep axis (and
    closed loop) cut to its last value (the largest replica count, on the last instance)."""
    text = re.sub(r"duration_s: [0-9.e]+", "duration_s: 30", text)
    text = re.sub(r"warmup_s: [0-9.e]+", "warmup_s: 3", text)
    text = re.sub(r"requests: [0-9]+", "requests: 64", text)
    return cut_sweep_lists(text)


def cut_sweep_lists(text):
    """Each list of the top-level sweep block cut to its last element."""
    match = re.search(r"^sweep \{", text, re.M)
    if not match:
        return text
    end = match.end()
    depth = 1
    while depth:
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        end += 1
    block = re.sub(r"#[^\n]*", "", text[match.start():end])
    block = re.sub(r"\[([^\[\]{}]*?|(?:\{[^{}]*\}[\s,]*)+)\]",
                   lambda m: "[%s]" % split_list(m.group(1))[-1], block, flags=re.S)
    return text[:match.start()] + block + text[end:]


def split_list(body):
    items, depth, current = [], 0, ""
    for c in body:
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += c
    return items + [current.strip()] if current.strip() else items


TRAIN = "run {scenario} --limit 0"
GPT_J = "scenarios/validation/serving/trtllm-dgx-a100-80gb-gpt-j-6b-fp16-tp1.textproto"
RESNET_PL3 = "scenarios/input/resnet50-imagenet-essd-pl3.textproto"
SEEDS = [
    Seed("scenario", "scenarios/quickstart.textproto", "Scenario", TRAIN, quick=QUICKSTART_P5),
    Seed("scenario-pools", "scenarios/mix_p5_p4d_spot_cap.textproto", "Scenario",
         "run {scenario} --limit 0"),
    Seed("scenario-moe", "scenarios/deepseek_v3_1024_h100.textproto", "Scenario",
         "run {scenario} --limit 0", quick=cut_sweep_lists),
    Seed("scenario-context", "scenarios/llama31_405b_128k_cp16.textproto", "Scenario",
         "run {scenario} --limit 0", quick=cut_sweep_lists),
    Seed("scenario-cost", "scenarios/llama2_7b_cost.textproto", "Scenario",
         "cost {scenario}", quick=QUICK_COST),
    Seed("scenario-published", "scenarios/validation/sc21-table1-gpt-145b.textproto",
         "Scenario", "validate {scenario}"),
    Seed("scenario-input", RESNET_PL3, "Scenario", "input {scenario}"),
    Seed("scenario-input-text", "scenarios/input/llm-pretrain-raw-text.textproto", "Scenario",
         "input {scenario}"),
    Seed("serving", "scenarios/serving/llama3-8b-chat-20rps.textproto", "ServingScenario",
         "serve {scenario} -j1 --limit 0", quick=QUICK_CHAT),
    Seed("serving-disaggregated",
         "scenarios/serving/llama3-70b-disaggregated-vs-colocated.textproto", "ServingScenario",
         "serve {scenario} -j1 --limit 0", quick=quick_serving),
    Seed("serving-speculative", "scenarios/serving/llama3-70b-speculative-decoding.textproto",
         "ServingScenario", "serve {scenario} -j1 --limit 0", quick=quick_serving),
    Seed("serving-prefixes", "scenarios/serving/rag-2k-system-prompt-prefix-caching.textproto",
         "ServingScenario", "serve {scenario} -j1 --limit 0", quick=quick_serving),
    Seed("serving-autoscaling", "scenarios/serving/daily-traffic-autoscaling.textproto",
         "ServingScenario", "serve {scenario} -j1 --limit 0", quick=quick_serving),
    Seed("serving-closed-loop", "scenarios/serving/llama3-8b-h100-concurrency.textproto",
         "ServingScenario", "serve {scenario} -j1 --limit 0", quick=quick_serving),
    Seed("serving-benchmark", GPT_J, "ServingScenario", "validate {scenario}"),
    Seed("price-file", "scenarios/prices/aws_spot_dearest_zone.textproto", "PriceFile",
         "cost {base} --prices {scenario}", quick=()),
    Seed("model", "models/llama2.textproto", "CatalogFile", TRAIN,
         entry=("model", "llama2-7b")),
    Seed("model-moe", "models/mixtral.textproto", "CatalogFile",
         "run scenarios/mixtral_unbalanced_router.textproto --limit 4",
         entry=("model", "mixtral-8x7b")),
    Seed("gpu", "topologies/gpus.textproto", "CatalogFile", TRAIN,
         entry=("gpu", "H100-SXM5-80GB")),
    Seed("instance", "topologies/instances_aws.textproto", "CatalogFile", TRAIN,
         entry=("instance", "aws.p5.48xlarge")),
    Seed("fabric", "topologies/fabrics.textproto", "CatalogFile",
         "run scenarios/mixtral_unbalanced_router.textproto --limit 4",
         entry=("fabric", "single-switch")),
    Seed("link-nvlink", "topologies/links.textproto", "CatalogFile", TRAIN,
         entry=("link_class", "nvlink")),
    Seed("link-efa", "topologies/links.textproto", "CatalogFile", TRAIN,
         entry=("link_class", "efa")),
    Seed("runtime", "topologies/runtime.textproto", "CatalogFile", TRAIN,
         entry=("runtime", "default")),
    Seed("serving-runtime", "topologies/serving.textproto", "CatalogFile",
         "validate %s" % GPT_J, entry=("serving_runtime", "tensorrt-llm")),
    Seed("storage", "topologies/storage.textproto", "CatalogFile", "input %s" % RESNET_PL3,
         entry=("storage", "aliyun.essd.pl3")),
    Seed("dataloading", "topologies/dataloading.textproto", "CatalogFile",
         "input %s" % RESNET_PL3, entry=("dataloading_cost", "intel-xeon")),
]

# Seeds that write the fields the seeds above do not (each mutates only those): shipped files
# using a feature, or a shipped file edited to use one. By schema area.
VALIDATE = "validate {scenario}"
RUN = "run {scenario} --limit 0"
SERVE = "serve {scenario} -j1 --limit 0"
NEW = dict(new_fields_only=True)
VALIDATION = "scenarios/validation/"
PUBLIC = "scenarios/public_runs/"
CHAT = "scenarios/serving/llama3-8b-chat-20rps.textproto"
AUTOSCALING = "scenarios/serving/daily-traffic-autoscaling.textproto"
SPECULATIVE = "scenarios/serving/llama3-70b-speculative-decoding.textproto"
POOLS_PIPELINE = "scenarios/mix_p5_p4d_pipeline.textproto"
# A training step of Llama-2-7B on 2 p5 nodes, its layout fixed (no sweep).
FIXED_LAYOUT = [(r"cluster \{.*?\n\}", 'cluster {\n  fabric: "single-switch"\n'
                 '  instance: "aws.p5.48xlarge"\n  nodes: 2\n}'),
                (r"sweep \{.*\}", "")]
SEEDS += [
    # Training scenarios: parallelism, recipes, automatic search, pools, costs, input pipelines.
    Seed("scenario-fsdp2-moe", VALIDATION +
         "automodel-dgx-h100-bf16-pretrain-deepseek-v3-1024.textproto", "Scenario", VALIDATE, **NEW),
    Seed("scenario-mxfp8-moe", VALIDATION +
         "bridge-moe-dgx-gb200-mxfp8-26.06-pretrain-deepseek-v3-256.textproto", "Scenario",
         VALIDATE, quick=[(r"fp8_recipe: MXFP8", "fp8_recipe: MXFP8\n  fp8_output_layer: true")],
         **NEW),
    Seed("scenario-lora", PUBLIC + "mlperf-v4.0-llama2-70b-lora-h200-8.textproto", "Scenario",
         VALIDATE, **NEW),
    Seed("scenario-torchtitan-cp", PUBLIC +
         "torchtitan-llama3.1-405b-h100-512-float8-compile-4d-cp2-seq64k.textproto", "Scenario",
         VALIDATE, **NEW),
    Seed("scenario-nvfp4-hybrid", VALIDATION +
         "bridge-check-hybrid-dgx-b300-nvfp4-26.04-pretrain-nemotron3-super-120b-a12b-64.textproto",
         "Scenario", VALIDATE, **NEW),
    Seed("scenario-offload", VALIDATION +
         "bridge-hybrid-dgx-gb200-mxfp8-26.08-pretrain-nemotron3-ultra-550b-a55b-256.textproto",
         "Scenario", VALIDATE, **NEW),
    Seed("scenario-capacity-factor", PUBLIC + "grok1-314b-gb200-128-dgxc-nemo2-fp8.textproto",
         "Scenario", VALIDATE, **NEW),
    Seed("scenario-output-deferral", PUBLIC + "llama3.1-405b-gb200-128-dgxc-fp8.textproto",
         "Scenario", VALIDATE, **NEW),
    Seed("scenario-deepspeed", PUBLIC + "bloom-176b-a100-384.textproto", "Scenario", VALIDATE,
         **NEW),
    Seed("scenario-nvfp4-lora", PUBLIC + "mlperf-v5.1-llama2-70b-lora-gb200-8-nvfp4.textproto",
         "Scenario", VALIDATE, **NEW),
    Seed("scenario-optimizer-buckets", PUBLIC + "nemo-22.08-a100-gpt3-175b-1024.textproto",
         "Scenario", VALIDATE, **NEW),
    Seed("scenario-gpus-per-node", VALIDATION +
         "automodel-dgx-h100-bf16-finetune-lora-llama3-8b-1.textproto", "Scenario", VALIDATE, **NEW),
    Seed("scenario-mamba", VALIDATION +
         "automodel-dgx-h100-bf16-pretrain-nemotron3-nano-30b-a3b-8.textproto", "Scenario",
         VALIDATE, **NEW),
    Seed("scenario-offload-layers", VALIDATION +
         "bridge-dgx-gb200-fp8-25.09-pretrain-llama3-405b-128.textproto", "Scenario", VALIDATE,
         **NEW),
    Seed("scenario-nvfp4-dense", VALIDATION +
         "bridge-dgx-gb200-nvfp4-26.02-pretrain-llama3-405b-256.textproto", "Scenario", VALIDATE,
         **NEW),
    Seed("scenario-zero3", VALIDATION + "sc21-table2-zero3-gpt-175b-1536.textproto", "Scenario",
         VALIDATE, **NEW),
    Seed("scenario-auto-nvl72", "scenarios/deepseek_v3_nvl72_vs_dgx.textproto", "Scenario", RUN,
         quick=[(r"instance: \[[^]]*\]", 'instance: ["onprem.gb200-nvl72"]'),
                (r"nodes: \[32, 64\]", "nodes: [64]"),
                (r"sequence_parallel: \[false, true\]", "sequence_parallel: [true]")], **NEW),
    Seed("scenario-sweep-schedules", "scenarios/mix_p5_p4d_data_parallel.textproto", "Scenario",
         RUN, quick=cut_sweep_lists, **NEW),
    Seed("scenario-hsdp", "scenarios/llama3_70b_hsdp.textproto", "Scenario", RUN,
         quick=cut_sweep_lists, **NEW),
    Seed("scenario-pools-interleaved", "scenarios/mix_p5_p4d_interleaved.textproto", "Scenario",
         RUN, quick=cut_sweep_lists, **NEW),
    Seed("scenario-router", "scenarios/mixtral_unbalanced_router.textproto", "Scenario",
         "run {scenario} --limit 4", **NEW),
    Seed("scenario-dualpipe", "scenarios/deepseek_v3_h800_dualpipe.textproto", "Scenario", RUN,
         quick=cut_sweep_lists, **NEW),
    Seed("scenario-pools-fixed", "tests/data/mix_data_parallel.textproto", "Scenario", RUN,
         quick=[(r"nodes: 2 \}", "nodes: 2 owned_nodes: 1 owned_price: OWNED_AT_OWN_RATE }"),
                (r"kind: SLOWEST_COMMON", "kind: STATED bandwidth_gbit_per_s: 400 latency_us: 20"),
                (r"\n\}\n*$", "\n  pool_placement: DATA_PARALLEL_POOLS\n}\n")], **NEW),
    Seed("scenario-pools-owned", POOLS_PIPELINE, "Scenario", RUN,
         quick=[(r"nodes: \[4\] \}", "nodes: [4] owned_nodes: 2 owned_price: OWNED_AT_ZERO }"),
                (r"nodes: \[0, 2, 4\]", "nodes: [2]"),
                (r"pipeline_parallel: \[2, 4, 6\]", "pipeline_parallel: [6]")], **NEW),
    Seed("scenario-sweep-context", "scenarios/quickstart.textproto", "Scenario", RUN,
         quick=QUICKSTART_P5 + [(r"nodes: \[1, 2\]", "nodes: [1, 2]\n  context_parallel: [1, 2]"),
                                (r"micro_batch_size: \[1\]",
                                 'range { axis: "micro_batch_size" from: 1 to: 4 factor: 2 }')],
         **NEW),
    Seed("scenario-auto-search", "scenarios/quickstart.textproto", "Scenario", RUN,
         quick=[(r"sweep \{.*\}", 'sweep {\n  instance: ["aws.p5.48xlarge"]\n'
                 '  zero_stage: [3]\n  auto_parallelism { micro_batch_size: [1] '
                 'max_pipeline_parallel: 2 max_virtual_stages: 2 max_context_parallel: 2 '
                 'hybrid_sharding: true dualpipe: true }\n  constraints { max_time_to_train_hours: '
                 '10000 }\n  nodes: [2]\n}')], **NEW),
    Seed("scenario-uneven-stages", "scenarios/quickstart.textproto", "Scenario", RUN,
         quick=FIXED_LAYOUT + [(r"schedule: ONE_F_ONE_B", "schedule: ONE_F_ONE_B\n"
                                "  data_parallel: 4\n  tensor_parallel: 1\n"
                                "  pipeline_parallel: 4\n  first_stage_layers: 7\n"
                                "  last_stage_layers: 7\n  recompute: RECOMPUTE_FULL\n"
                                "  recompute_num_layers: 2\n  micro_batch_size: 1")], **NEW),
    Seed("scenario-checkpoint", "scenarios/llama2_7b_cost.textproto", "Scenario", "cost {scenario}",
         quick=QUICK_COST + [(r"\n  checkpoint \{", "\n  interruptions_per_node_hour: 0.001\n"
                              "  checkpoint {\n    interval_s: 3600\n    pauses_training: false")],
         **NEW),
    Seed("scenario-input-workers", "scenarios/input/resnet50-imagenet-tier-workers.textproto",
         "Scenario", "input {scenario}", **NEW),
    Seed("scenario-input-cpu-limit", "scenarios/input/resnet50-imagenet-32vcpu.textproto",
         "Scenario", "input {scenario}", **NEW),
    Seed("scenario-dataset-order", RESNET_PL3, "Scenario", "input {scenario}",
         quick=[(r"format: JPEG_IMAGE", "format: JPEG_IMAGE\n    shuffle: false"),
                (r"\Z", "sweep { dataloader_workers_per_gpu: [4, 8] }\n")], **NEW),
    # Serving scenarios: deployments, schedulers, traffic, speculative decoding, sweeps.
    Seed("serving-expert-exchange", "scenarios/serving/checks/"
         "trtllm-dep-deepseek-r1-h200-fp8-dep8-1024-1024.textproto", "ServingScenario", SERVE,
         quick=[(r"attention_data_parallel: true", "attention_data_parallel: true\n"
                 "  moe_token_exchange: MOE_ALL_TO_ALL")], **NEW),
    Seed("serving-sweep-attention-dp", "scenarios/serving/deepseek-v3-attention-dp.textproto",
         "ServingScenario", SERVE, quick=quick_serving, **NEW),
    Seed("serving-sweep-experts", "scenarios/serving/deepseek-v3-tp-vs-ep.textproto",
         "ServingScenario", SERVE, quick=quick_serving, **NEW),
    Seed("serving-samples", "scenarios/serving/llama2-70b-fp8-vs-fp16.textproto",
         "ServingScenario", SERVE, quick=quick_serving, **NEW),
    Seed("serving-pools", "scenarios/serving/llama3-70b-h100-prefill-a100-decode.textproto",
         "ServingScenario", SERVE,
         quick=[quick_serving, (r"prefill \{ tensor_parallel: 8 \}",
                                "prefill { tensor_parallel: 4 pipeline_parallel: 2 }"),
                (r"decode \{ tensor_parallel: 8", "decode { tensor_parallel: 8 replicas: 2"),
                (r"\n *decode_replicas: \[\d+\]", "")], **NEW),
    Seed("serving-static-beams", CHAT, "ServingScenario", SERVE,
         quick=QUICK_CHAT[:3] + [
             (r"sweep \{.*\}", ""),
             (r"deployment \{\n.*?\n\}", 'deployment {\n  instance: "aws.g6.xlarge"\n'
              '  replicas: 2\n  pipeline_parallel: 1\n'
              '  quantization { weights: INT8 activations: FP16 }\n'
              '  scheduler { batching: STATIC max_batch_size: 16 batch_wait_ms: 50 }\n}'),
             (r"median: 400 sigma: 0.8", "median: 400 sigma: 0.8 min: 16"),
             (r"seed: 1", "seed: 1\n  beam_width: 2"),
             (r"slo \{ p99_ttft_ms: 500 \}", "slo { p99_ttft_ms: 5000 p99_e2e_ms: 60000 }")],
         **NEW),
    Seed("serving-prefix-routing", "scenarios/serving/rag-2k-system-prompt-prefix-caching.textproto",
         "ServingScenario", SERVE,
         quick=[quick_serving,
                (r"chunked_prefill: true", "chunked_prefill: true kv_block_tokens: 32 "
                 "capacity_policy: GUARANTEED_NO_EVICT prefix_caching { enabled: true "
                 "routing: PREFIX_AWARE }"),
                (r"popularity: ZIPF", "popularity: ZIPF\n    share: 0.8\n    zipf_exponent: 1.2"),
                (r"\n *prefix_caching: \[\w+\]", "")], **NEW),
    Seed("serving-draft-heads", SPECULATIVE, "ServingScenario", SERVE,
         quick=[quick_serving, (r'draft_model: "llama3-8b"', "draft_head_layers: 1")], **NEW),
    Seed("serving-draft-parallel", SPECULATIVE, "ServingScenario", SERVE,
         quick=[quick_serving, (r"acceptance_rate: 0.75", "acceptance_rate: 0.75\n"
                                "    draft_tensor_parallel: 1")], **NEW),
    Seed("serving-autoscaling-baseline", AUTOSCALING, "ServingScenario", SERVE,
         quick=[quick_serving, (r"baseline_billing: SUBSCRIPTION_MONTHLY",
                                "baseline_billing: SUBSCRIPTION_MONTHLY\n  baseline_replicas: 2")],
         **NEW),
    Seed("serving-bursts", CHAT, "ServingScenario", SERVE,
         quick=QUICK_CHAT + [(r"rate_per_s: 2\n", "bursts { base_rate_per_s: 1 burst_rate_per_s: 4 "
                              "burst_every_s: 10 burst_duration_s: 2 }\n"),
                             (r"input_tokens \{ lognormal \{[^}]*\} \}",
                              "input_tokens { uniform { min: 100 max: 1000 } }")], **NEW),
    Seed("serving-closed-loop-requests", "scenarios/serving/llama3-8b-h100-concurrency.textproto",
         "ServingScenario", SERVE,
         quick=[quick_serving, (r"closed_loop \{ concurrency: 1 \}",
                                "closed_loop { concurrency: 4 think_time_s: 0.5 requests: 32 }"),
                (r"\n  duration_s: 30\n  warmup_s: 3", "")],
         **NEW),
    Seed("serving-sweep-axes", CHAT, "ServingScenario", SERVE,
         quick=QUICK_CHAT + [(r"sweep \{.*\}", 'sweep {\n  instance: ["aws.g6.xlarge"]\n'
                              "  tensor_parallel: [1]\n  pipeline_parallel: [1]\n"
                              "  batching: [CONTINUOUS]\n  max_batch_size: [32]\n"
                              "  max_tokens_per_iteration: [2048]\n}")], **NEW),
    Seed("serving-benchmark-beams", GPT_J, "ServingScenario", VALIDATE,
         quick=[(r"(benchmark \{ batch_size: 1 input_tokens: 128 output_tokens: 128)",
                 r"\1 beam_width: 2")], **NEW),
    Seed("serving-trace-file", "tests/fuzz/traced.textproto", "ServingScenario", SERVE,
         quick=[(r"\nautoscaling \{[^\n]*", ""),
                (r'trace_file: "traced.csv"',
                 lambda m: 'trace_file: "%s"' % os.path.abspath("tests/fuzz/trace.csv"))], **NEW),
    # Catalog entries: models (MoE, MLA, compressed sparse attention, Mamba, CNN, encoders),
    # GPUs, instances, fabrics, storage tiers, runtimes; each given to --catalog.
    Seed("model-csa", "models/deepseek_v4.textproto", "CatalogFile", VALIDATE.format(
        scenario=VALIDATION + "bridge-moe-dgx-gb200-mxfp8-26.08-pretrain-deepseek-v4-flash-128"
        ".textproto"), entry=("model", "deepseek-v4-flash"), **NEW),
    Seed("model-cnn", "models/resnet.textproto", "CatalogFile", "input %s" % RESNET_PL3,
         entry=("model", "resnet50"), **NEW),
    Seed("model-mamba", "models/nemotron3.textproto", "CatalogFile", VALIDATE.format(
        scenario=VALIDATION + "automodel-dgx-h100-bf16-pretrain-nemotron3-super-120b-a12b-64"
        ".textproto"), entry=("model", "nemotron3-super-120b-a12b"), **NEW),
    Seed("model-mla", "models/deepseek.textproto", "CatalogFile", VALIDATE.format(
        scenario=VALIDATION + "bridge-moe-dgx-gb200-mxfp8-26.06-pretrain-deepseek-v3-256"
        ".textproto"), entry=("model", "deepseek-v3"), **NEW),
    Seed("model-sliding-window", "models/gpt_oss.textproto", "CatalogFile", VALIDATE.format(
        scenario=VALIDATION + "automodel-dgx-h100-bf16-pretrain-gpt-oss-120b-64.textproto"),
         entry=("model", "gpt-oss-120b"), **NEW),
    Seed("model-encoder", "models/bert.textproto", "CatalogFile", TRAIN,
         entry=("model", "bert-large"), **NEW),
    Seed("model-interleaved-moe", "models/llama4.textproto", "CatalogFile", TRAIN,
         entry=("model", "llama4-maverick"), **NEW),
    Seed("model-parallel-blocks", "models/falcon.textproto", "CatalogFile", VALIDATE.format(
        scenario="scenarios/validation/serving/trtllm-dgx-h100-falcon-180b-fp8-tp4.textproto"),
         entry=("model", "falcon-180b"), **NEW),
    Seed("model-qkv-bias", "models/qwen2_5.textproto", "CatalogFile", VALIDATE.format(
        scenario=VALIDATION + "automodel-dgx-h100-bf16-finetune-lora-qwen2.5-7b-1.textproto"),
         entry=("model", "qwen2.5-7b"), **NEW),
    Seed("model-qk-norm", "models/qwen3_moe.textproto", "CatalogFile", VALIDATE.format(
        scenario=VALIDATION + "automodel-dgx-h100-bf16-pretrain-qwen3-30b-a3b-8.textproto"),
         entry=("model", "qwen3-30b-a3b"), **NEW),
    Seed("gpu-grace-blackwell", "topologies/gpus.textproto", "CatalogFile", VALIDATE.format(
        scenario=VALIDATION + "bridge-dgx-gb200-fp8-25.09-pretrain-llama3-405b-128.textproto"),
         entry=("gpu", "GB200-186GB"), **NEW),
    Seed("gpu-power-limit", "topologies/gpus.textproto", "CatalogFile", VALIDATE.format(
        scenario=VALIDATION + "mcore-h100-gpt-70b.textproto"), entry=("gpu", "H100-SXM5-96GB"),
         **NEW),
    Seed("gpu-server-transfer", "topologies/gpus.textproto", "CatalogFile", VALIDATE.format(
        scenario=VALIDATION + "bridge-check-moe-dgx-b300-mxfp8-26.02-pretrain-qwen3-30b-a3b-8"
        ".textproto"), entry=("gpu", "B300-SXM-268GB"), **NEW),
    Seed("gpu-transfer", "topologies/gpus.textproto", "CatalogFile", VALIDATE.format(
        scenario=VALIDATION + "bridge-dgx-b200-fp8-25.09-pretrain-llama3-8b-8.textproto"),
         entry=("gpu", "B200-SXM-180GB"), **NEW),
    Seed("gpu-hccs", "topologies/gpus.textproto", "CatalogFile",
         "run scenarios/huaweicloud_ascend_vs_a100.textproto --limit 0",
         entry=("gpu", "Ascend-910-32GB"), **NEW),
    Seed("instance-cpu-sockets", "topologies/instances_aws.textproto", "CatalogFile", TRAIN,
         entry=("instance", "aws.g6e.48xlarge"), **NEW),
    Seed("instance-tcp", "topologies/instances_aws.textproto", "CatalogFile", TRAIN,
         entry=("instance", "aws.p5.48xlarge"),
         quick=[(r"total_gbit_per_s: 3200", "total_gbit_per_s: 3200\n    tcp_gbit_per_s: 100")],
         **NEW),
    Seed("gpu-measured-fp16", "topologies/gpus.textproto", "CatalogFile",
         VALIDATE.format(scenario=VALIDATION + "sc21-table1-gpt-145b.textproto"),
         entry=("gpu", "A100-SXM4-80GB"),
         quick=[(r"bf16_tflops: 271.2", "bf16_tflops: 271.2\n    fp16_tflops: 271.2")], **NEW),
    Seed("instance-nvlink-domain", "topologies/instances_aws_blackwell.textproto", "CatalogFile",
         TRAIN, entry=("instance", "aws.p6e-gb200.36xlarge"), **NEW),
    Seed("instance-block-storage", "topologies/instances_aliyun.textproto", "CatalogFile",
         TRAIN, entry=("instance", "aliyun.ecs.gn8v.4xlarge"), **NEW),
    Seed("fabric-leaves", "topologies/fabrics.textproto", "CatalogFile",
         "run scenarios/deepseek_v3_256_auto.textproto --limit 1",
         entry=("fabric", "ib-rail-optimized"), **NEW),
    Seed("storage-provisioned", "topologies/storage.textproto", "CatalogFile",
         "input %s" % RESNET_PL3, entry=("storage", "aliyun.essd.autopl"), **NEW),
    Seed("storage-capacity-steps", "topologies/storage.textproto", "CatalogFile",
         "input scenarios/input/resnet50-imagenet-nas.textproto",
         entry=("storage", "aliyun.nas.extreme"), **NEW),
    Seed("serving-runtime-extends", "topologies/serving.textproto", "CatalogFile", SERVE.format(
        scenario="scenarios/serving/checks/trtllm-dep-deepseek-r1-h200-fp8-dep8-1024-1024"
        ".textproto"), entry=("serving_runtime", "tensorrt-llm-1.0"), **NEW),
    Seed("price-file-region", "tests/data/prices_us_west_2.textproto", "PriceFile",
         "sweep {base} --prices {scenario}", **NEW),
    # Spot preemptions saved in their notice, restarts per cause, and the providers' notices.
    Seed("scenario-preemption-notice", SPOT_NOTICE, "Scenario", "cost {scenario}",
         quick=QUICK_SPOT_NOTICE),
    Seed("provider", "topologies/providers.textproto", "CatalogFile",
         "cost %s" % SPOT_NOTICE, entry=("provider", "aws"), **NEW),
]
SEED_BASES = {"price-file": "scenarios/llama2_7b_cost.textproto",
              "price-file-region": "tests/data/spot_in_two_regions.textproto"}
TRACE_SEED = ("trace", "tests/fuzz/traced.textproto", "tests/fuzz/trace.csv",
              "serve {scenario} -j1")
TRACE_VALUES = ["-1", "nan", "inf", "1e300", "", "x", "2147483648"]

# ---------------------------------------------------------------------------------------------
# Running a copy and sorting what came out.

LOCATED = re.compile(r"(\S+?):(\d+):(\d+): (?:error: |warning: )?(.*)")
# What a command answers, exiting 1, when the question has no answer: no error of the input.
ANSWERS = ("no deployment meets the SLO", "no valid configuration", "fits in GPU memory")
CRASH = ("internal error", "terminate called", "runtime error:", "Sanitizer", "Aborted")
NAN_OR_INF = re.compile(r"(?<![A-Za-z_])(nan|-?inf)(?![A-Za-z_])", re.I)


def run(command, cwd_root):
    try:
        done = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              timeout=LIMIT_S, cwd=cwd_root)
    except subprocess.TimeoutExpired:
        return None
    return done


def classify(done, base_out, mutant_file, field, value, occurrence_message):
    """(class, reason)."""
    if done is None:
        return "bug", "past %d s" % LIMIT_S
    out = done.stdout + done.stderr
    if done.returncode < 0 or done.returncode >= 128 or any(c in out for c in CRASH):
        return "bug", "crash (exit %d)" % done.returncode
    name = os.path.basename(mutant_file)
    located = [m for m in LOCATED.finditer(out) if os.path.basename(m.group(1)) == name]
    named = [m for m in located if re.search(r"\b%s\b" % re.escape(field), m.group(4))]
    answered = any(a in out for a in ANSWERS)  # exit 1 with an answer, not an error
    if done.returncode != 0 and not answered:
        if named:
            return "good", "error at its line"
        if located:
            return "good", "error at the line of a field it bears on"
        return "weak", "error without the line"
    if any(" warning: " in m.group(0) or m.group(0).split(": ")[1:2] == ["warning"]
           for m in named):
        return "good", "warned at its line"
    if NAN_OR_INF.search(done.stdout) and not NAN_OR_INF.search(base_out):
        return "silent", "nan or inf printed"
    if done.stdout == base_out:
        return "ok", "output unchanged: the command reads no such value"
    reason = MEANINGFUL.get((occurrence_message, field, value)) or \
        MEANINGFUL.get((occurrence_message, field, None))
    if reason:
        return "ok", reason
    if field in FREE_TEXT and value == '"no-such-name"':
        return "ok", "free text, any name is one"
    if value in HOSTILE or value in ("duplicate", "relation"):
        return "silent", "accepted, output changed"
    if value == "0":
        return "silent", "zero accepted, output changed"
    return "ok", "accepted"


def gist(done):
    """The line of the output that says most: the first error or warning, else the last line."""
    if done is None:
        return ""
    lines = (done.stderr + done.stdout).strip().split("\n")
    said = ([l for l in lines if LOCATED.match(l)] or [l for l in lines if "error" in l] or
            lines[-1:])
    return said[0][:300]


def audit_seed(seed, clustersim, root, work, jobs):
    text = seed.text()
    messages, enums = SCHEMA
    occurrences = walk(text, seed.root, messages)
    if seed.new_fields_only:
        audited = written_fields(SEEDS[:SEEDS.index(seed)])
        occurrences = [o for o in occurrences if (o.type in SCALARS or o.type in enums) and
                       (o.message, o.field) not in audited]
    candidates = mutations(text, occurrences, enums)
    if not candidates:
        return []  # a seed of switches alone: no hostile value to write
    directory = tempfile.mkdtemp(dir=work)
    base_scenario = SEED_BASES.get(seed.name)

    def command_for(path, catalog_dir):
        if seed.entry:
            command = seed.command.format(scenario=os.path.join(directory, "scenario.textproto"))
        else:
            command = seed.command.format(scenario=path, base=base_scenario)
        argv = [clustersim] + command.split() + ["--root", root]
        if catalog_dir:
            argv += ["--catalog", catalog_dir]
        return argv

    # The unmutated seed's output, the reference every accepted copy is compared with.
    if seed.entry:
        scenario = os.path.join(directory, "scenario.textproto")
        with open(scenario, "w") as f:
            f.write(entry_scenario(*seed.entry))

    def evaluate(index, mutated):
        sub = os.path.join(directory, "m%d" % index)
        os.makedirs(sub)
        path = os.path.join(sub, "entry.textproto" if seed.entry else os.path.basename(seed.source))
        with open(path, "w") as f:
            f.write(mutated)
        done = run(command_for(path, sub if seed.entry else None), root)
        if done is not None:
            done.stdout = done.stdout.replace(sub + "/", "")
        shutil.rmtree(sub)
        return done

    base = evaluate(-1, text)
    if base is None or (base.returncode != 0 and
                        not any(a in base.stdout + base.stderr for a in ANSWERS)):
        print("%s: the unmutated seed fails: %s" % (seed.name, gist(base)))
        return [("unrun", "", seed.name, "")]
    results = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        dones = pool.map(lambda item: evaluate(item[0], item[1][1]), enumerate(candidates))
        for (said, mutated, occ, value), done in zip(candidates, dones):
            path = "entry.textproto" if seed.entry else os.path.basename(seed.source)
            kind, reason = classify(done, base.stdout, path, occ.field, value, occ.message)
            line = line_of(mutated, occ.start)
            results.append((kind, reason, "%s:%d %s" % (seed.name, line, said), gist(done)))
    shutil.rmtree(directory)
    return results


def audit_trace(clustersim, root, work):
    name, scenario, trace, command = TRACE_SEED
    lines = open(trace).read().split("\n")
    directory = tempfile.mkdtemp(dir=work)
    scenario_copy = os.path.join(directory, os.path.basename(scenario))
    with open(scenario_copy, "w") as f:  # the replay alone: its autoscaling day has no price
        f.write(re.sub(r"\nautoscaling \{[^\n]*", "", open(scenario).read()))
    trace_copy = os.path.join(directory, "traced.csv")

    def evaluate(content):
        with open(trace_copy, "w") as f:
            f.write(content)
        return run([clustersim] + command.format(scenario=scenario_copy).split() +
                   ["--root", root], root)

    base = evaluate("\n".join(lines))
    if base is None or base.returncode != 0:
        print("%s: the unmutated trace fails: %s" % (name, gist(base)))
        return [("unrun", "", name, "")]
    header = [i for i, l in enumerate(lines) if l and not l.startswith("#")]
    columns = ["arrival_s", "input_tokens", "output_tokens", "prefix_id", "prefix_tokens"]
    results = []
    row = header[1]  # the first row with every column
    cells = lines[row].split(",")
    for column, field in enumerate(columns):
        for value in TRACE_VALUES + ["duplicate"]:
            if value == "duplicate":
                mutated = lines[:row + 1] + [lines[row]] + lines[row + 1:]
                if column:
                    continue
            else:
                mutated = lines[:row] + [",".join(cells[:column] + [value] + cells[column + 1:])] + \
                    lines[row + 1:]
            done = evaluate("\n".join(mutated))
            kind, reason = classify(done, base.stdout, "traced.csv", field, value, "trace")
            if kind == "silent" and value == "duplicate":
                kind, reason = "ok", "two requests arriving together are a burst"
            results.append((kind, reason, "%s:%d %s: %s" % (name, row + 1, field, value or '""'),
                            gist(done)))
    shutil.rmtree(directory)
    return results


def reachable_fields(root, messages):
    """Every (message, field) of a scalar or enum a file of type `root` can hold."""
    found, seen, todo = set(), set(), [root]
    while todo:
        message = todo.pop()
        if message in seen:
            continue
        seen.add(message)
        for field, (_, type_) in messages.get(message, {}).items():
            if type_ in messages:
                todo.append(type_)
            else:
                found.add((message, field))
    return found


def written_fields(seeds):
    """Every (message, field) of a scalar or enum the seeds write."""
    messages, enums = SCHEMA
    return {(occ.message, occ.field) for seed in seeds
            for occ in walk(seed.text(), seed.root, messages)
            if occ.type in SCALARS or occ.type in enums}


def coverage(seeds):
    """(fields reached by the seeds, fields any of their file kinds can hold, those missed)."""
    possible = set()
    for seed in seeds:
        possible |= reachable_fields(seed.root, SCHEMA[0])
    reached = written_fields(seeds)
    return reached & possible, possible, sorted(possible - reached)


SCHEMA = None
CLASSES = ("good", "weak", "bug", "silent", "ok")


def main():
    global SCHEMA
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clustersim", default="build/release/clustersim")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--seed", nargs="*", help="only these seeds (names below, or 'trace')")
    parser.add_argument("--show", nargs="*", default=["weak", "bug", "silent"])
    parser.add_argument("--coverage", action="store_true",
                        help="only list the schema fields no seed writes, and stop")
    args = parser.parse_args()
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    clustersim = os.path.abspath(args.clustersim)
    SCHEMA = parse_schemas(os.path.join(root, SCHEMA_DIR))
    os.chdir(root)
    reached, possible, missed = coverage(SEEDS)
    print("fields of the schemas the seeds write: %d of %d" % (len(reached), len(possible)))
    if args.coverage:
        print("\n".join("  %s.%s" % field for field in missed))
        return 0
    totals = collections.Counter()
    with tempfile.TemporaryDirectory() as work:
        for seed in SEEDS + [None]:
            name = seed.name if seed else "trace"
            if args.seed and name not in args.seed:
                continue
            results = (audit_seed(seed, clustersim, root, work, args.jobs) if seed else
                       audit_trace(clustersim, root, work))
            counts = collections.Counter(r[0] for r in results)
            totals.update(counts)
            print("%-20s %s" % (name, "  ".join("%s %d" % (k, counts[k]) for k in CLASSES)))
            for kind, reason, said, out in results:
                if kind in args.show:
                    print("  %-6s %s [%s]\n         %s" % (kind, said, reason, out))
            sys.stdout.flush()
    print("%-20s %s" % ("all", "  ".join("%s %d" % (k, totals[k]) for k in CLASSES)))
    return 1 if totals["bug"] or totals["silent"] else 0


if __name__ == "__main__":
    sys.exit(main())
