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
stands for the others), which bounds a full run to minutes on two cores. Deterministic.

Usage (from the project root, after tools/build release clustersim):
  tools/input_audit.py [--clustersim build/release/clustersim] [-j 2] [--seed NAME...]
                       [--show CLASS...]
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
    def __init__(self, name, source, root, command, entry=None, quick=()):
        self.name, self.source, self.root, self.command = name, source, root, command
        self.entry = entry  # (kind, name) of one catalog entry: it goes to a --catalog directory
        # (pattern, replacement) edits of the source, or a function of its text, before any
        # mutation: what makes the seed quick to run
        self.quick = quick

    def text(self):
        text = open(self.source).read()
        if self.entry:
            text = catalog_entry(text, *self.entry)
        if callable(self.quick):
            return self.quick(text)
        for pattern, replacement in self.quick:
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


# One small training sweep of p5 nodes every catalog seed of training runs under.
QUICKSTART_P5 = [(r"sweep \{.*\}", 'sweep {\n  instance: ["aws.p5.48xlarge"]\n  nodes: [1, 2]\n'
                  '  tensor_parallel: [1, 8]\n  pipeline_parallel: [1, 2]\n  micro_batch_size: [1]\n'
                  '  recompute: [RECOMPUTE_SELECTIVE]\n}')]
QUICK_CHAT = [(r"rate_per_s: 20", "rate_per_s: 2"), (r"duration_s: 300", "duration_s: 30"), (r"warmup_s: 30", "warmup_s: 3"),
              (r"sweep \{.*\}", 'sweep {\n  instance: ["aws.g6.xlarge"]\n  replicas: [1, 2]\n'
               '  quantization: [{ weights: FP16 }, { weights: INT8 }]\n}')]
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
SEED_BASES = {"price-file": "scenarios/llama2_7b_cost.textproto"}
TRACE_SEED = ("trace", "tests/fuzz/traced.textproto", "tests/fuzz/trace.csv",
              "serve {scenario} -j1")
TRACE_VALUES = ["-1", "nan", "inf", "1e300", "", "x", "2147483648"]

# ---------------------------------------------------------------------------------------------
# Running a copy and sorting what came out.

LOCATED = re.compile(r"(\S+?):(\d+):(\d+): (?:error: |warning: )?(.*)")
# What a command answers, exiting 1, when the question has no answer: no error of the input.
ANSWERS = ("no deployment meets the SLO", "no valid configuration")
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
    candidates = mutations(text, occurrences, enums)
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
            f.write(Seed("", "scenarios/quickstart.textproto", "", "", quick=QUICKSTART_P5).text())

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


def coverage(seeds):
    """(fields reached by the seeds, fields any of their file kinds can hold, those missed)."""
    messages, enums = SCHEMA
    possible, reached = set(), set()
    for seed in seeds:
        possible |= reachable_fields(seed.root, messages)
        for occ in walk(seed.text(), seed.root, messages):
            if occ.type in SCALARS or occ.type in enums:
                reached.add((occ.message, occ.field))
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
