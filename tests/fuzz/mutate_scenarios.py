#!/usr/bin/env python3
"""Structural mutations of the shipped scenarios, each run through the tool and its outcome sorted.

Where the byte fuzzer (run_fuzzer.sh) rarely writes a new field that parses, this one edits the
text as a user would: it sets a parallelism or job field (the newer ones, and the degrees they
combine with) to a boundary value (0, -1, 1, 2^31 - 1, 2^31) or to each of its enum values, sets
two of them, or a combination a framework runs (ZeRO-3 + FSDP2 + its options, the fused expert
MLP + paged stash, DeepSpeed's pipeline engine), swaps the model (dense, MoE, hybrid Mamba, with
or without multi-token prediction, ResNet-50), or deletes a field or a whole block; a serving
scenario gets its deployment (expert parallelism, speculative decoding, disaggregation),
scheduler, traffic (shared prefixes, beam width, lengths) and SLO fields mutated. Each mutant is
given to `validate` and, with --commands all, to `run --limit 3`, `serve -j1 --limit 3` or (one
time in four) `sweep -j1 --limit 3`, each with a 20 s limit, run again with 300 s past it (then
counted slow as well as by its output). Outcomes: located (an error at
file:line:col), file (an error naming the file only: no configuration fits, ...), result,
and the bugs: crash (a signal, an internal error, a sanitizer report), hang (past 300 s),
naninf (nan or inf printed), unlocated (an error naming no file). Deterministic for a seed.

Usage (from the project root):
  tests/fuzz/mutate_scenarios.py CLUSTERSIM COUNT SEED [--commands validate|all] [--keep DIR]
Exits 1 when any mutant is a bug; DIR keeps those mutants (default: none kept).
"""
import argparse
import collections
import glob
import os
import random
import re
import subprocess
import sys
import tempfile

INTS = ["0", "-1", "1", "2", "3", "7", "64", "100000", "2147483647", "2147483648", "-2147483648"]
BOOLS = ["true", "false"]
TRAINING_FIELDS = [
    ("job", "multi_token_prediction_layers", INTS),
    ("job", "sixteen_bit_states", BOOLS),
    ("job", "bf16_optimizer_moments", BOOLS),
    ("job", "expert_routing", [
        "{ consecutive_experts: true }", "{ consecutive_experts: false }",
        "{ consecutive_experts: true max_violation: 0.5 }",
        "{ consecutive_experts: true capacity_factor: 1.0 pad_to_capacity: true }"]),
    ("parallelism", "deepspeed_pipeline_engine", BOOLS),
    ("parallelism", "fsdp2_keep_forward_gather", BOOLS),
    ("parallelism", "fsdp2_defer_gradient_sync", BOOLS),
    ("parallelism", "fsdp2_expert_reduce_in_weight_type", BOOLS),
    ("parallelism", "zero_gradient_buffer", BOOLS),
    ("parallelism", "check_for_nan_in_grad", BOOLS),
    ("parallelism", "gradient_scaling", [
        "GRADIENT_SCALING_UNSPECIFIED", "SCALE_BEFORE_REDUCE", "AVERAGE_IN_COLLECTIVE",
        "PER_TOKEN_LOSS", "4"]),
    ("parallelism", "expert_paged_stash", BOOLS),
    ("parallelism", "fused_expert_mlp", BOOLS),
    ("parallelism", "expert_dispatcher", [
        "EXPERT_DISPATCHER_UNSPECIFIED", "EXPERT_ALL_TO_ALL", "EXPERT_NODE_DEDUPLICATED", "3"]),
    ("parallelism", "expert_communication_sms", INTS),
    ("parallelism", "expert_combine_sms", INTS),
    ("parallelism", "stage_layers", [
        "[0]", "[-1]", "[1]", "[2147483647]", "[1, 1]", "[0, 0, 0, 0]", "[1, 2147483647]",
        "[2147483647, 2147483647]", "[2147483647, 2147483647, 34]", "[16, 16]", "[8, 8, 8, 8]",
        "[31, 1]", "[]"]),
    ("parallelism", "first_stage_layers", INTS),
    ("parallelism", "last_stage_layers", INTS),
    ("parallelism", "context_parallel_comm", [
        "CONTEXT_PARALLEL_COMM_UNSPECIFIED", "P2P", "ALL_GATHER", "ALL_TO_ALL", "TORCH_ALL_GATHER",
        "5"]),
    ("parallelism", "zero_stage", ["0", "1", "2", "3", "4", "-1"]),
    ("parallelism", "fsdp2", BOOLS),
    ("parallelism", "pipeline_parallel", ["1", "2", "4", "0", "-1", "2147483647"]),
    ("parallelism", "context_parallel", ["1", "2", "0", "2147483647"]),
    ("parallelism", "expert_parallel", ["1", "2", "8", "0", "2147483647"]),
    ("parallelism", "virtual_stages", ["1", "2", "0", "2147483647"]),
    ("sweep", "virtual_stages", ["[1, 2]", "[2147483647]", "[0]"]),
    ("sweep", "pipeline_parallel", ["[1, 2]", "[2147483647]", "[0]"]),
    ("sweep", "zero_stage", ["[0, 3]", "[3]", "[4]"]),
    ("sweep", "expert_parallel", ["[1, 2, 8]", "[2147483647]"]),
    ("sweep", "micro_batch_size", ["[1, 2147483647]", "[0]"]),
    ("parallelism", "schedule", ["DUALPIPE", "DUALPIPE_V", "GPIPE", "INTERLEAVED_ONE_F_ONE_B"]),
    ("auto_parallelism", "dualpipe", BOOLS),
    ("job", "lora", ["{ rank: 0 }", "{ rank: 16 }", "{ rank: 2147483647 }", "{ rank: 8 dropout: 1.5 }"]),
    ("job", "fp8_recipe", ["MXFP8", "NVFP4", "BLOCKWISE", "TORCHAO_TENSORWISE", "CURRENT_SCALING"]),
]
COMBINATIONS = [
    [("parallelism", "zero_stage", "3"), ("parallelism", "fsdp2", "true")],
    [("parallelism", "zero_stage", "3"), ("parallelism", "fsdp2", "true"),
     ("parallelism", "fsdp2_keep_forward_gather", "true"),
     ("parallelism", "fsdp2_defer_gradient_sync", "true")],
    [("parallelism", "zero_stage", "3"), ("parallelism", "fsdp2", "true"),
     ("job", "sixteen_bit_states", "true")],
    [("parallelism", "fused_expert_mlp", "true"), ("parallelism", "expert_paged_stash", "true")],
    [("parallelism", "deepspeed_pipeline_engine", "true"), ("parallelism", "pipeline_parallel", "4"),
     ("parallelism", "zero_stage", "1")],
    [("parallelism", "expert_dispatcher", "EXPERT_NODE_DEDUPLICATED"),
     ("job", "expert_routing", "{ consecutive_experts: true }")],
]
MODELS = ["llama2-7b", "llama3-8b", "mixtral-8x7b", "deepseek-v3", "qwen3-30b-a3b", "gpt-oss-20b",
          "nemotron3-nano-30b-a3b", "nemotron3-super-120b-a12b", "resnet50", "bert-large"]
SERVING_FIELDS = [
    ("deployment", "tensor_parallel", INTS),
    ("deployment", "pipeline_parallel", INTS),
    ("deployment", "replicas", INTS),
    ("deployment", "scheduler", [
        "{ max_batch_size: 0 }", "{ max_batch_size: 2147483647 }", "{ kv_block_tokens: 0 }",
        "{ kv_block_tokens: 2147483647 }", "{ kv_cache_memory_fraction: 1e-300 }",
        "{ batching: STATIC batch_wait_ms: 1e308 }",
        "{ chunked_prefill: true max_tokens_per_iteration: 1 }", "{ batching: CONTINUOUS }"]),
    ("traffic", "rate_per_s", ["0", "-1", "1e308", "inf", "nan", "1e-300"]),
    ("traffic", "duration_s", ["0", "-1", "1e308", "1e-9", "nan"]),
    ("traffic", "warmup_s", ["0", "-1", "1e308"]),
    ("traffic", "closed_loop", [
        "{ concurrency: 0 }", "{ concurrency: 2147483647 }", "{ concurrency: 1 requests: 1 }"]),
    ("slo", "p99_ttft_ms", ["0", "-1", "1e-300", "1e308", "nan"]),
    ("sweep", "replicas", ["[1, 2]", "[0]", "[2147483647]"]),
    ("sweep", "pipeline_parallel", ["[1, 2]", "[0]"]),
    ("sweep", "max_batch_size", ["[1, 2147483647]"]),
    ("deployment", "expert_parallel", INTS),
    ("deployment", "speculative_decoding", [
        '{ draft_model: "llama3-8b" draft_tokens: 4 acceptance_rate: 0.7 }',
        '{ draft_model: "llama3-8b" draft_tokens: 2147483647 acceptance_rate: 1 }',
        '{ multi_token_prediction: true draft_tokens: 1 acceptance_rate: 0.8 }',
        '{ draft_head_layers: 2147483647 draft_tokens: 2 acceptance_rate: 0.8 }']),
    ("deployment", "disaggregation", [
        "{ prefill { replicas: 1 } decode { replicas: 1 } }",
        "{ prefill { replicas: 2147483647 } decode { tensor_parallel: 0 } }"]),
    ("traffic", "shared_prefix", [
        "{ prefixes: 4 tokens { fixed: 1000 } }", "{ prefixes: 2147483647 tokens { fixed: 1 } }",
        "{ prefixes: 4 tokens { fixed: 2147483647 } share: 0.5 popularity: ZIPF }"]),
    ("traffic", "beam_width", INTS),
    ("traffic", "samples", ["0", "-1", "1", "2", "3", "101", "2147483647", "2147483648"]),
    ("traffic", "input_tokens", ["{ fixed: 2147483647 }", "{ uniform { min: 10 max: 5 } }",
                                 "{ lognormal { median: 100 sigma: 1e308 max: 2147483647 } }"]),
    ("sweep", "draft_tokens", ["[0, 2]", "[2147483647]"]),
    ("sweep", "expert_parallel", ["[1, 8]", "[0]", "[2147483647]"]),
    ("sweep", "prefix_caching", ["[false, true]", "[true, true]"]),
]
BUGS = ("crash", "hang", "naninf", "unlocated")
LOCATED = re.compile(r"\.textproto:\d+(:\d+)?:")
NAN_OR_INF = re.compile(r"(?<![A-Za-z_])(nan|-?inf)(?![A-Za-z_])", re.I)


def code(line):
    return line.split("#")[0]


def block(lines, name):
    """(first, last) line of the top-level block `name { ... }`, or None."""
    for i, line in enumerate(lines):
        if re.match(r"%s\s*\{" % re.escape(name), line):
            depth = 0
            for j in range(i, len(lines)):
                depth += code(lines[j]).count("{") - code(lines[j]).count("}")
                if depth <= 0:
                    return i, j
            return i, len(lines) - 1
    return None


def set_field(lines, name, field, value):
    text = "  %s%s%s" % (field, " " if value.startswith("{") else ": ", value)
    found = block(lines, name)
    if found is None:
        return lines + ["%s {" % name, text, "}"]
    first, last = found
    if first == last:
        return lines[:first] + [code(lines[first]).rstrip().rstrip("}") + text + " }"] + lines[first + 1:]
    for k in range(first + 1, last):
        if re.match(r"\s*%s\s*[:{\[]" % re.escape(field), lines[k]) and code(lines[k]).count(
                "{") == code(lines[k]).count("}"):
            return lines[:k] + [text] + lines[k + 1:]
    return lines[:first + 1] + [text] + lines[first + 1:]


def mutate(rng, lines, serving):
    fields = SERVING_FIELDS if serving else TRAINING_FIELDS
    r = rng.random()
    if r < 0.45:
        name, field, values = rng.choice(fields)
        value = rng.choice(values)
        return set_field(lines, name, field, value), "%s.%s: %s" % (name, field, value)
    if r < 0.6 and not serving:
        for name, field, value in rng.choice(COMBINATIONS):
            lines = set_field(lines, name, field, value)
        return lines, "combination"
    if r < 0.72:
        said = []
        for name, field, values in (rng.choice(fields), rng.choice(fields)):
            value = rng.choice(values)
            lines = set_field(lines, name, field, value)
            said.append("%s.%s: %s" % (name, field, value))
        return lines, ", ".join(said)
    if r < 0.84:
        model = rng.choice(MODELS)
        return [re.sub(r'^model:\s*".*"', 'model: "%s"' % model, l) for l in lines], "model " + model
    if r < 0.94:
        fields_at = [i for i, l in enumerate(lines) if ":" in code(l) and not re.search(r"[{}]", code(l))]
        if not fields_at:
            return lines, "no field to delete"
        i = rng.choice(fields_at)
        return lines[:i] + lines[i + 1:], "deleted " + lines[i].strip()
    names = [m.group(1) for l in lines for m in [re.match(r"(\w+)\s*\{", l)] if m]
    if not names:
        return lines, "no block to delete"
    first, last = block(lines, rng.choice(names))
    return lines[:first] + lines[last + 1:], "deleted block " + lines[first].split("{")[0].strip()


# A command past FIRST_LIMIT_S runs again with SLOW_LIMIT_S: one that then ends is slow, not a
# hang (a ZeRO-3 step of 16,384 GPUs takes minutes on a busy machine), and is sorted by its output.
FIRST_LIMIT_S, SLOW_LIMIT_S = 20, 300


def run(command, limit):
    return subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=limit)


def outcome(command):
    """(outcome, output, whether the command outlasted FIRST_LIMIT_S)"""
    slow = False
    try:
        done = run(command, FIRST_LIMIT_S)
    except subprocess.TimeoutExpired:
        slow = True
        try:
            done = run(command, SLOW_LIMIT_S)
        except subprocess.TimeoutExpired:
            return "hang", "", slow
    return sorted_outcome(done), done.stdout + done.stderr, slow


def sorted_outcome(done):
    out = done.stdout + done.stderr
    if (done.returncode < 0 or done.returncode >= 128 or "internal error" in out or
            "terminate called" in out or "runtime error:" in out or "Sanitizer" in out):
        return "crash"
    if NAN_OR_INF.search(done.stdout):
        return "naninf"
    if done.returncode == 0:
        return "result"
    if LOCATED.search(out):
        return "located"
    return "file" if ".textproto: " in out else "unlocated"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clustersim")
    parser.add_argument("count", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("--commands", choices=["validate", "all"], default="validate")
    parser.add_argument("--keep", help="directory for the mutants that are bugs")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sources = sorted(glob.glob("scenarios/*.textproto") + glob.glob("scenarios/*/*.textproto") +
                     glob.glob("scenarios/validation/serving/*.textproto"))
    counts = collections.Counter()
    with tempfile.TemporaryDirectory() as work:
        for n in range(1, args.count + 1):
            source = rng.choice(sources)
            text = open(source).read()
            serving = "traffic {" in text or "/serving/" in source
            lines, said = mutate(rng, text.split("\n"), serving)
            if rng.random() < 0.3:
                lines, more = mutate(rng, lines, serving)
                said += "; " + more
            path = os.path.join(work, "mutant-%d.textproto" % n)
            with open(path, "w") as f:
                f.write("\n".join(lines))
            commands = [[args.clustersim, "validate", path]]
            if args.commands == "all" and "/validation/" not in source:
                if serving:
                    commands.append([args.clustersim, "serve", path, "-j1", "--limit", "3"])
                else:
                    commands.append([args.clustersim, "run", path, "--limit", "3"])
                    if "sweep {" in text and rng.random() < 0.25:
                        commands.append([args.clustersim, "sweep", path, "-j1", "--limit", "3"])
            result, out = "result", ""
            for command in commands:
                result, out, slow = outcome(command)
                counts["slow"] += slow
                if result != "result":
                    break
            counts[result] += 1
            if result in BUGS:
                print("%s: %s of %s (%s): %s" % (result, command[1], source, said, out[-500:]))
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    os.replace(path, os.path.join(args.keep, "%s-%d.textproto" % (result, n)))
            elif os.path.exists(path):
                os.remove(path)
    print("%d mutants from seed %d: %s" % (args.count, args.seed,
          ", ".join("%s %d" % (k, counts[k]) for k in
                    ("located", "file", "result") + BUGS + ("slow",))))
    return 1 if any(counts[k] for k in BUGS) else 0


if __name__ == "__main__":
    sys.exit(main())
