#!/usr/bin/env python3
"""Writes scenarios/validation/*.textproto from the reference data's published training runs.

Usage: tools/make_validation_scenarios.py REFERENCE_DATA_VALIDATION_DIR

One scenario per row of megatron_sc21.csv (Tables 1 and 2) and of megatron_readme.csv (the
Megatron-Core H100 table and the January-2021 scaling tables), and per fully specified dense row
and mixture-of-experts row of a model the step simulates (BRIDGE_MOE_MODELS; bridge-moe-*; the
hybrid Mamba-Transformer ones, BRIDGE_HYBRID_MODELS: bridge-hybrid-*), and LoRA row of a release
whose recipe was read (BRIDGE_LORA; bridge-lora-*), of megatron_bridge_nemo.csv on a system the
catalog has (those of CHECK_SYSTEMS as bridge-check-*, fitted on nothing; but those the step
model cannot run as published: NVFP4 outside the dense models and Nemotron 3 Super
(NEMOTRON_3_SUPER_NVFP4), the unnamed alternative granularity, and the rows named at
CONTRADICTED_BY_RECIPE, UNSIMULATED_MEMORY_SAVING, UNSIMULATED_EXPERT_SHARDING and NVL72_SYSTEMS
below), and per NeMo AutoModel row of the same
file (PyTorch FSDP2, AUTOMODEL_ROWS and the mixture-of-experts AUTOMODEL_MOE_ROWS; automodel-*), and per context-parallel row of NeMo's
long-sequence page (nemo-longctx-*, LONG_CONTEXT_TABLES), each with its published figure. Unknowns
are set by one rule per table (per release for megatron_bridge_nemo.csv), never per row (see the
comments written into each file). Run it again after the reference data changes.
"""
import csv
import os
import re
import sys
import textwrap

SC21_MODELS = {'1.7': 'gpt-1.7b', '3.6': 'gpt-3.6b', '7.5': 'gpt-7.5b', '18.4': 'gpt-18b',
               '39.1': 'gpt-39b', '76.1': 'gpt-76b', '145.6': 'gpt-145b', '310.1': 'gpt-310b',
               '529.6': 'gpt-530b', '1008.0': 'gpt-1t'}

SC21_RULES = """# Unknowns, one rule for every row of Tables 1 and 2 (the paper does not give them):
#   micro-batch size 1 (Table 2 gives it); interleaved 1F1B with 2 model chunks per stage where the layers divide
#   evenly (else plain 1F1B); full activation recomputation (the paper's FLOPs count it); fp16;
#   unfused attention (2021, before FlashAttention); gradients reduced after the pipeline flush;
#   blocking stage-to-stage sends; no sequence parallelism and no distributed optimizer (both
#   came later); the unfused cross entropy (job.unfused_cross_entropy: Megatron-LM had no fused
#   one before 2024); gradients freed, not zeroed, before each step (zero_gradient_buffer false:
#   Megatron-LM's contiguous gradient buffers were opt-in until e8fb052f, August 2021, and without
#   them training.py calls optimizer.zero_grad(set_to_none=True), b4bc51b1 of March 2021) and
#   divided by the data-parallel size in a pass of their own around the all-reduce
#   (megatron/model/distributed.py allreduce_gradients, coalesced /= world size)."""

MCORE_RULES = """# Unknowns, one rule for every row of the table (the README gives none of them):
#   BF16; fused attention; no recomputation (every row fits without); sequence parallelism
#   wherever tensor parallel > 1; the distributed optimizer, its gradient reduce-scatter and
#   parameter all-gather overlapped with compute (the README's --overlap-grad-reduce and
#   --overlap-param-gather); tensor-parallel communication overlapped with the GEMMs wherever
#   tensor parallel > 1 (--tp-comm-overlap); the loss as Megatron-Core's unfused cross entropy
#   (--cross-entropy-loss-fusion is off unless set; job.unfused_cross_entropy). The layout the
#   README leaves out is the one the runs were tuned to: the sweep below lists every micro-batch
#   size dividing a replica's batch and, wherever pipeline parallel > 1, plain 1F1B and
#   interleaved 1F1B with every number of model chunks that divides a stage's layers (the
#   schedules Megatron-Core offers), and `clustersim validate` compares the fastest that fits in
#   GPU memory. Megatron-LM core_v0.8.0's defaults for the gradient buffer: zeroed before every
#   step (training.py:585 zero_grad_buffer), each bucket's norm checked for NaN before its
#   reduce-scatter (check_for_nan_in_grad: arguments.py:1016 --no-check-for-nan-in-loss-and-grad
#   unset, training.py:450) and divided by DP in a pass of its own (--ddp-average-in-collective
#   unset, arguments.py:1427: param_and_grad_buffer.py:111-123)."""


README_2021_RULES = """# Unknowns, one rule for every row of the January-2021 tables (images/tables.tex gives shape,
#   GPUs, parallelism, batch, step time and TFLOP/s): sequence 1024 and vocabulary 51200 (the
#   README of the commit that added the tables, NVIDIA/Megatron-LM@5281919420, 2020-09-11); fp16
#   with full activation recomputation (its example scripts' --fp16 --checkpoint-activations, and
#   the published TFLOP/s are the step times under Megatron's count with recomputation); unfused
#   attention; gradients all-reduced after the backward (no overlap yet); the runs use the first
#   GPUs of one node (model parallel) or every GPU of their DGX A100 nodes (model + data
#   parallel; fabric as SC'21's Selene). The A100s are the 40 GB part: the tables were measured by
#   September 2020, before the A100 80GB was announced (November 2020). The micro-batch is a
#   replica's whole batch: that release has no gradient accumulation (its --batch-size is the
#   batch per model instance, the global batch that times the data-parallel size). The unfused
#   cross entropy (job.unfused_cross_entropy: that release had no fused one). Gradients freed, not
#   zeroed, before each step (zero_gradient_buffer false: that release's training.py calls
#   optimizer.zero_grad(), set_to_none=True) and divided by the data-parallel size in a pass of
#   their own around the all-reduce (megatron/model/distributed.py allreduce_params,
#   coalesced /= world size)."""


SC21_ZERO3_RULES = """# ZeRO-3 rows, one rule for all (Sec. 5.2: DeepSpeed's ZeRO-3 integrated into Megatron-LM, no
#   tensor or pipeline parallelism): every GPU runs one micro-batch per step (batch = GPUs x
#   micro-batch in every row, so no gradient accumulation); DeepSpeed of early 2021 (the paper
#   appeared in April 2021; ZeRO-3 was released in March, v0.3.13 to v0.3.16 until PR #1188 in
#   June) with its ZeRO-3 defaults (the run's config is not published): zero3_synchronous_fetch.
#   Each linear layer's weights are one module, all-gathered before its forward and its recomputed
#   forward and, past the reuse distance of 1e9 parameters, again before its backward; the next
#   module is prefetched while one computes unless the one computing holds 1e9 parameters or more
#   (stage3_max_live_parameters); every fetch synchronizes the device; gathers and fp16
#   reduce-scatters take turns on one process group at DeepSpeed's measured fetch rate."""


SC21_TABLE2_MODELS = {'174.6': 'gpt-175b', '529.6': 'gpt-530b'}


def published(group, tflops, convention, source, step_time_s=None, tokens=None):
    """The `published` block of a scenario."""
    step = f'\n  step_time_s: {step_time_s}' if step_time_s else ''
    step += f'\n  tokens_per_s_per_gpu: {tokens}' if tokens else ''
    return (f'published {{\n  group: "{group}"{step}\n  tflops_per_gpu: {tflops}\n'
            f'  flops_convention: {convention}\n  source: "{source}"\n}}\n')


def write_scenario(out, name, text):
    with open(os.path.join(out, name + '.textproto'), 'w') as f:
        f.write(text)


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def sc21(rows, out):
    for r in rows:
        if r['table'] not in ('Table 1', 'Table 2'):
            continue
        table2 = r['table'] == 'Table 2'
        zero3 = table2 and r['scheme'].startswith('ZeRO-3')
        model = (SC21_TABLE2_MODELS if table2 else SC21_MODELS)[r['params_billion']]
        tp, pp, gpus = int(r['tp']), int(r['pp']), int(r['num_gpus'])
        layers = int(r['num_layers'])
        chunks = 2 if pp > 1 and layers % (2 * pp) == 0 else 1
        schedule = 'INTERLEAVED_ONE_F_ONE_B' if chunks > 1 else 'ONE_F_ONE_B'
        micro_batch = r['micro_batch_size'] or '1'
        table = 'table2' if table2 else 'table1'
        scheme = 'zero3' if zero3 else 'ptd'
        name = (f'sc21-table2-{scheme}-{model}-{gpus}' if table2 else f'sc21-table1-{model}')
        zero_line = '\n  zero_stage: 3\n  zero3_synchronous_fetch: true' if zero3 else ''
        zero3_rules = '\n' + SC21_ZERO3_RULES if zero3 else ''
        group = ("Megatron SC'21 Table 2 ZeRO-3 (A100)" if zero3 else
                 "Megatron SC'21 Table 2 PTD-P (A100)" if table2 else "Megatron SC'21 Table 1 (A100)")
        text = f"""# Megatron-LM SC'21 {r['table']} ({r['scheme']}): {r['params_billion']}B parameters on {gpus} A100 GPUs.
# Generated by tools/make_validation_scenarios.py from the reference data's megatron_sc21.csv.
{SC21_RULES}{zero3_rules}
name: "{name}"
model: "{model}"
job {{
  global_batch_size: {r['global_batch_size']}
  sequence_length: {r['seq_len']}
  precision: FP16
  optimizer: ADAM
  steps: 1
  flash_attention: false
  unfused_cross_entropy: true
}}
cluster {{ instance: "onprem.dgx-a100-80gb" nodes: {gpus // 8} fabric: "ib-rail-optimized" }}
parallelism {{
  tensor_parallel: {tp}
  pipeline_parallel: {pp}
  micro_batch_size: {micro_batch}
  schedule: {schedule}
  virtual_stages: {chunks}{zero_line}
  recompute: RECOMPUTE_FULL
  overlap_gradient_reduce: false
  overlap_pipeline_communication: false{'' if zero3 else chr(10) + '  zero_gradient_buffer: false'}
}}
""" + published(group, r['achieved_tflops_per_gpu'], 'WITH_FULL_RECOMPUTE',
                  f"Narayanan et al., SC'21 (arXiv:2104.04473), {r['table']}; step time derived "
                  'from its TFLOP/s', r['derived_iteration_time_s'])
        write_scenario(out, name, text)


def mcore(rows, out):
    for r in rows:
        if not r['run_group'].startswith('Megatron-Core r0.8.0 H100'):
            continue
        size = r['model'].split()[-1].lower()
        model = f'mcore-gpt-{size}'
        tp, pp, gpus = int(r['tp']), int(r['pp']), int(r['num_gpus'])
        sp = 'true' if tp > 1 else 'false'
        overlap_line = '\n  overlap_tensor_communication: true' if tp > 1 else ''
        replica_batch = int(r['global_batch_size']) // (gpus // (tp * pp))
        micro_batches = ', '.join(str(b) for b in divisors(replica_batch))
        sweep = f'micro_batch_size: [{micro_batches}]'
        if pp > 1:
            chunks = ', '.join(str(v) for v in divisors(int(r['num_layers']) // pp))
            sweep += (f'\n  schedule: [ONE_F_ONE_B, INTERLEAVED_ONE_F_ONE_B]'
                      f'\n  virtual_stages: [{chunks}]')
        name = f'mcore-h100-gpt-{size}'
        text = f"""# Megatron-Core r0.8.0 H100 weak scaling: {r['model']} on {gpus} H100 GPUs.
# Generated by tools/make_validation_scenarios.py from the reference data's megatron_readme.csv.
{MCORE_RULES}
name: "{name}"
model: "{model}"
job {{
  global_batch_size: {r['global_batch_size']}
  sequence_length: {r['seq_len']}
  precision: BF16
  optimizer: ADAM
  steps: 1
  unfused_cross_entropy: true
}}
cluster {{ instance: "onprem.dgx-h100" nodes: {gpus // 8} fabric: "ib-rail-optimized" }}
parallelism {{
  tensor_parallel: {tp}
  pipeline_parallel: {pp}
  sequence_parallel: {sp}
  distributed_optimizer: true{overlap_line}
  check_for_nan_in_grad: true
}}
sweep {{
  {sweep}
}}
""" + published('Megatron-Core H100 weak scaling', r['tflops_per_gpu'], 'MODEL_FLOPS',
                  'NVIDIA/Megatron-LM README (Megatron-Core r0.8.0 weak scaling), MFU '
                  f"{r['mfu_pct']}%")
        write_scenario(out, name, text)


def readme_2021(rows, out):
    for r in rows:
        if not r['run_group'].startswith('Megatron-LM README Jan-2021'):
            continue
        size = r['model'].split()[-1].lower()
        gpu = 'v100' if r['gpu'].startswith('V100') else 'a100'
        tp, gpus, dp = int(r['tp']), int(r['num_gpus']), int(r['dp'])
        with_data = dp > 1
        name = f'readme2021-{gpu}-gpt-{size}' + (f'-{gpus}' if with_data else '')
        if gpu == 'v100':
            cluster = f'instance: "onprem.dgx-2" nodes: 1 gpus_per_node: {gpus}'
        elif with_data:
            cluster = (f'instance: "onprem.dgx-a100-40gb" nodes: {gpus // 8} '
                       'fabric: "ib-rail-optimized"')
        else:
            cluster = f'instance: "onprem.dgx-a100-40gb" nodes: 1 gpus_per_node: {gpus}'
        kind = 'model + data parallel' if with_data else 'model parallel'
        group = f'Megatron-LM README Jan-2021 {kind} ({gpu.upper()})'
        replica_batch = int(r['global_batch_size']) // dp
        text = f"""# Megatron-LM README, January 2021 ({r['run_group'].split('Jan-2021 ')[1]}): {r['model']} on {gpus} {r['gpu']}.
# Generated by tools/make_validation_scenarios.py from the reference data's megatron_readme.csv.
{README_2021_RULES}
name: "{name}"
model: "gpt-2021-{size}"
job {{
  global_batch_size: {r['global_batch_size']}
  sequence_length: 1024
  precision: FP16
  optimizer: ADAM
  steps: 1
  flash_attention: false
  unfused_cross_entropy: true
}}
cluster {{ {cluster} }}
parallelism {{
  tensor_parallel: {tp}
  micro_batch_size: {replica_batch}
  recompute: RECOMPUTE_FULL
  overlap_gradient_reduce: false
  zero_gradient_buffer: false
}}
""" + published(group, r['tflops_per_gpu'], 'WITH_FULL_RECOMPUTE',
                  'NVIDIA/Megatron-LM images/tables.tex (README training-speed tables, January '
                  '2021)', r['step_time_s'])
        write_scenario(out, name, text)


BRIDGE_RULES = """# Unknowns, one rule for every dense row of the release (the performance summary gives GPUs,
#   batch, sequence, TP/PP/CP/VP and tokens/s; the rest is the release's published recipe,
#   NVIDIA-NeMo/Megatron-Bridge scripts/performance at {recipe}, read for the Llama 3/3.1 and
#   GPT-3 H100 workloads; NeMo 2.0 and Megatron-LM README rows follow the NeMo performance
#   scripts they were copied from, which the same rule describes):
#   sequence parallelism wherever TP > 1 and Transformer Engine's tensor-parallel overlap
#   (comm_overlap.tp_comm_overlap with the userbuffers configs); the distributed optimizer with
#   overlapped gradient reduce-scatter and parameter all-gather; gradients accumulated and
#   reduced in BF16 (set_llama3_common_configs / the 25.09 YAML: grad_reduce_in_fp32 = False);
#   no activation recomputation (no recompute_num_layers or recompute_modules in the H100 Llama
#   70B/405B and GPT-3 configs); Llama 3.1 405B counts the embedding and the loss as pipeline
#   layers (llama31_405b_pretrain_config: account_for_embedding/loss_in_pipeline_split, 126 + 2
#   layers on PP x VP chunks); context parallelism peer to peer (Megatron-Core's default
#   cp_comm_type "p2p") and Megatron-Core's default rank order tp-cp-ep-dp-pp (TP_DP_PP);
#   FSDP = 1 is Megatron FSDP sharding optimizer states, gradients and
#   weights (use_megatron_fsdp, data_parallel_sharding_strategy "optim_grads_params": ZeRO-3);
#   FP8 as {fp8}, with FP8 weights (fp8_param_gather = True in mixed_precision.py's
#   bf16_with_fp8_* and bf16_with_mxfp8_mixed recipes): all-gathered in FP8, MXFP8 ones in BF16
#   through the gradient buffer (reuse_grad_buf_for_mxfp8_param_ag); the passes over the
#   gradient buffer as the release runs them (NeMo 2.0: NaN check, averaged in the collective;
#   Megatron-Bridge: no NaN check, averaged in the collective unless the recipe says otherwise:
#   tools/make_validation_scenarios.py BRIDGE_GRADIENT_SCALING).
#   Scored on step time: global batch x sequence / (tokens/s per GPU x GPUs)."""

# Per release: the Megatron-Bridge (or NeMo / Megatron-LM) recipe cited and its FP8 recipe.
BRIDGE_RELEASES = {
    '25.09': ('v0.1.0rc4 (NeMo 25.09)', 'CURRENT_SCALING',
              'per-tensor current scaling (the 25.09 table does not name its FP8 recipe; its '
              'note calls the parenthesised numbers the other quantization granularity, so the '
              'main ones are per-tensor, and the 25.11 table of docs/performance-summary-archive.md, '
              'same H100 layouts, labels them FP8-CS)'),
    '26.02': ('v0.3.0', 'CURRENT_SCALING',
              'per-tensor current scaling (the page says so; get_precision_config("fp8_cs"))'),
    '26.04': ('v0.4.0', 'CURRENT_SCALING',
              'per-tensor current scaling (the page says so; get_precision_config("fp8_cs"))'),
    '26.06': ('v0.5.0', 'CURRENT_SCALING',
              'per-tensor current scaling (the page says so; get_precision_config("fp8_cs"))'),
    '26.08': ('v0.6.0', 'CURRENT_SCALING',
              'per-tensor current scaling (the page says so; get_precision_config("fp8_cs"))'),
    'NeMo 25.02': ('NVIDIA/NeMo scripts/llm/performance (NeMo 25.02)', 'DELAYED_SCALING',
                   'per-tensor delayed scaling (NeMo 2.0\'s default fp8 recipe, the performance '
                   'scripts\' --fp8_recipe ds)'),
    # The 25.04 and 25.07 pages name their recipe ("per-tensor FP8, scaling factors computed in
    # the current step"), which wins over the scripts' default --fp8_recipe ds.
    'NeMo 25.04': ('NVIDIA/NeMo scripts/performance (NeMo 25.04)', 'CURRENT_SCALING',
                   'per-tensor current scaling (the page: scaling factors computed in the current '
                   'step; the scripts\' --fp8_recipe cs)'),
    'NeMo 25.07': ('NVIDIA/NeMo scripts/performance (NeMo 25.07)', 'CURRENT_SCALING',
                   'per-tensor current scaling (the page: scaling factors computed in the current '
                   'step; the scripts\' --fp8_recipe cs)'),
    'Megatron-LM': ('NVIDIA/Megatron-LM examples/llama/train_llama3_8b_h100_fp8.sh',
                    'DELAYED_SCALING', 'per-tensor delayed scaling (--fp8-format hybrid with an '
                    'amax history, the script\'s settings)'),
}

# Megatron-Core's defer_embedding_wgrad_compute with its wgrad_deferral_limit
# (parallelism.defer_output_weight_gradient, output_weight_gradient_deferral_limit), per release,
# table and model, where the row's recipe sets it; none elsewhere. Megatron-Bridge v0.1.0rc4
# (25.09, 6725f704): the pretrain_config of recipes/llama/llama3_70b.py (limit 22) and
# llama31_405b.py (50), which scripts/performance/run_script.py builds the rows from;
# utils/helpers.py set_megatron_fsdp_overrides switches it off under Megatron FSDP. From v0.2.0 on
# (26.02 v0.3.0 21b02e0c, 26.04 v0.4.0 0fbfe7d3, 26.06 v0.5.0 fcbb6031, 26.08 v0.6.0 51885cf1) the
# pretraining recipes no longer set it; the Llama 3 70B SFT configs do (v0.3.0-v0.5.0
# scripts/performance/configs/llama/llama3_llm_finetune.py llama3_70b_sft_config_gb300 / _gb200 /
# _h100, v0.6.0 perf_recipes/llama/*/llama3.py llama3_70b_sft_32gpu_*: limit 22). NVIDIA/NeMo
# v2.2.0-v2.4.0 (NeMo 25.02-25.07; 7192a2c9, 2b03b748, 2381f42f): the performance scripts build
# each row from pretrain_recipe(performance_mode=True), whose pretrain_performance_optimizations
# give MegatronCommOverlapCallback defer_embedding_wgrad_compute for llama3_70b.py (22),
# llama31_405b.py (50), nemotron4_340b.py (22) and gpt3_175b.py (50); the v2.3.0 and v2.4.0
# scripts switch it off under Megatron FSDP. Not llama3_8b, nemotron4_15b, the mixture-of-experts
# recipes or Megatron-LM's training arguments (which have no flag for it).
_NEMO2_DEFERRAL = {('pretrain', 'llama3-70b'): 22, ('pretrain', 'llama3-405b'): 50,
                   ('pretrain', 'nemotron4-340b'): 22, ('pretrain', 'gpt3-175b-nemo2'): 50}
_SFT_70B_DEFERRAL = {('finetune_sft', 'llama3-70b'): 22}
BRIDGE_OUTPUT_WGRAD_DEFERRAL = {
    '25.09': {('pretrain', 'llama3-70b'): 22, ('pretrain', 'llama3-405b'): 50},
    '26.02': _SFT_70B_DEFERRAL, '26.04': _SFT_70B_DEFERRAL, '26.06': _SFT_70B_DEFERRAL,
    '26.08': _SFT_70B_DEFERRAL,
    'NeMo 25.02': _NEMO2_DEFERRAL, 'NeMo 25.04': _NEMO2_DEFERRAL, 'NeMo 25.07': _NEMO2_DEFERRAL,
}
OUTPUT_WGRAD_DEFERRAL_RULE = """# The output layer's weight-gradient GEMMs of the step's first {limit} micro-batches deferred
#   into the pipeline's flush on the last stage ({recipe}: comm_overlap
#   defer_embedding_wgrad_compute with wgrad_deferral_limit {limit}; BRIDGE_OUTPUT_WGRAD_DEFERRAL in
#   tools/make_validation_scenarios.py)."""


def bridge_output_wgrad_deferral(release, table, model, pp, fsdp):
    """The row's wgrad_deferral_limit where its recipe defers the output layer's weight
    gradients (pipeline parallel only; Megatron FSDP switches it off), else None."""
    if pp < 2 or fsdp:
        return None
    return BRIDGE_OUTPUT_WGRAD_DEFERRAL.get(release, {}).get((table, model))


# The releases whose performance recipes compute the loss with Transformer Engine's Triton cross
# entropy (job.transformer_engine_cross_entropy: Megatron-Core's cross_entropy_fusion_impl "te"):
# NVIDIA/NeMo v2.3.0 (NeMo 25.04) scripts/performance/utils.py and v2.4.0 (25.07) helpers.py set
# it for every model ("enable cross entropy fusion with TE kernel"); Megatron-Bridge v0.1.0rc4
# (25.09) in every scripts/performance/configs YAML, v0.2.0 helpers.py and v0.3.0-v0.6.0
# utils/overrides.py for every recipe. Not NeMo 25.02 (v2.2.0: GPTConfig's
# cross_entropy_loss_fusion with Megatron-Core's native kernels) nor the Megatron-LM script
# (--cross-entropy-loss-fusion, its default impl "native"); not the LoRA rows, whose PEFT configs
# turn the fusion off (v0.5.0 recipes/llama/llama3.py: "PEFT disables cross_entropy_loss_fusion").
TE_CROSS_ENTROPY_RELEASES = {'NeMo 25.04', 'NeMo 25.07', '25.09', '26.02', '26.04', '26.06',
                             '26.08'}


def te_cross_entropy(release, table, model):
    """Whether a row of `release` (its BRIDGE_RELEASES key), `table` and `model` computes its
    loss with Transformer Engine's cross entropy (not DeepSeek V4 Flash's nor Nemotron 3 Ultra's:
    DEEPSEEK_V4_RULES, NEMOTRON_3_ULTRA_RULES)."""
    return (release in TE_CROSS_ENTROPY_RELEASES and table != 'finetune_lora'
            and model not in ('deepseek-v4-flash', 'nemotron3-ultra-550b-a55b'))


TE_CROSS_ENTROPY_RULE = """# The loss as Transformer Engine's cross entropy (cross_entropy_fusion_impl "te"; the
#   release's performance scripts set it for every model: TE_CROSS_ENTROPY_RELEASES in
#   tools/make_validation_scenarios.py)."""

# NVFP4 dense rows, one more rule per release (the release's recipe: get_precision_config("nvfp4")
# in scripts/performance/utils/precision.py returns mixed_precision.py's bf16_with_nvfp4_mixed).
NVFP4_RULES = """# NVFP4 rows, one more rule for all of them ({recipe}): every GEMM of every transformer layer
#   in NVFP4 (bf16_with_nvfp4_mixed: fp4 = "e2m1", fp4_recipe = "nvfp4", Transformer Engine's
#   NVFP4BlockScaling with its defaults: random Hadamard transform on the weight-gradient inputs,
#   stochastic rounding of the gradients, 16 x 16 weight blocks; first_last_layers_bf16 left False:
#   no layer kept in BF16 but the output layer, as in every precision);
#   {weights};
#   {casts};
#   no tensor-parallel communication overlap (the Llama pretrain configs:
#   tp_comm_overlap = False if precision == "nvfp4").{extra}"""
NVFP4_WEIGHTS = {
    '26.02': ('v0.3.0', False, 'BF16 weights, all-gathered in BF16 and cast to NVFP4 once per step\n'
              '#   (fp8_param_gather = False, no FP4 parameter gather)'),
    '26.04': ('v0.4.0', False, 'BF16 weights, all-gathered in BF16 and cast to NVFP4 once per step\n'
              '#   (fp8_param_gather = False, no FP4 parameter gather)'),
    '26.06': ('v0.5.0', True, 'NVFP4 weights, all-gathered in NVFP4 (fp4_param_gather = True)'),
}
# The Transformer Engine each release pins (Megatron-Bridge uv.lock at the release's tag: v0.3.0 and
# v0.3.1 TransformerEngine@5671fd36, 2.12; v0.4.0 and v0.4.1 @71bbefbf, 2.14; v0.5.0 @4220403e,
# 2.16) and whether it casts an NVFP4 input's two copies in two kernels: the fused row-cast /
# column-RHT-transpose-cast kernel (NVIDIA/TransformerEngine#2555) is in 2.14's pin, not 2.12's.
NVFP4_TRANSFORMER_ENGINE = {'26.02': ('2.12 (v0.3.0, v0.3.1 uv.lock)', True),
                            '26.04': ('2.14 (v0.4.0, v0.4.1 uv.lock)', False),
                            '26.06': ('2.16 (v0.5.0 uv.lock)', False)}
NVFP4_CAST_RULES = {
    True: """Transformer Engine {te}: an input's row-wise NVFP4 cast
#   and its Hadamard-transformed column-wise one run as two kernels, each reading the tensor
#   (before NVIDIA/TransformerEngine#2555's fused cast)""",
    False: """Transformer Engine {te}: an input's row-wise and
#   Hadamard-transformed column-wise NVFP4 copies from one read (NVIDIA/TransformerEngine#2555's
#   fused cast)""",
}
# llama31_405b_pretrain_config_gb200: disable_param_gather_overlap(cfg) for nvfp4 V2 (the 256-GPU
# config of the table's row; Megatron-Bridge issue 3714, peak memory), by the row's own release:
# from v0.4.2 (26.04.01; docs/versions1.json pairs the two), not v0.4.0 (26.04), and v0.5.0 (26.06).
NVFP4_NO_GATHER_OVERLAP = {('26.04.01', 'DGX-GB200', 'llama3-405b'),
                           ('26.06', 'DGX-GB200', 'llama3-405b')}

# GPT3-175B: NeMo 2.x's GPTConfig175B, trained without dropout (models/gpt3.textproto).
BRIDGE_MODELS = {'LLAMA3_8B': 'llama3-8b', 'LLAMA3-8B': 'llama3-8b', 'LLAMA3_70B': 'llama3-70b',
                 'LLAMA3-70B': 'llama3-70b', 'LLAMA3.1_405B': 'llama3-405b',
                 'LLAMA3-405B': 'llama3-405b', 'LLAMA3.1-405B': 'llama3-405b',
                 'GPT3-175B': 'gpt3-175b-nemo2', 'Nemotron-15B': 'nemotron4-15b',
                 'Nemotron-340B': 'nemotron4-340b'}

# Mixture-of-experts rows whose shapes the step simulates (DeepSeek-V3's latent attention,
# multi-token prediction, dense first layers and shared expert; gpt-oss's sliding windows and
# attention sinks; Llama 4 Scout's chunked attention and shared expert). Token-dropping rows
# (bridge_token_drop below) cap every expert at a capacity factor of 1 and pad it to that capacity
# (job.expert_routing); the others are dropless with forced balancing (the pages' note: "we
# force-balance the token distribution among experts and all benchmarks are token-dropless"; the
# recipes' moe_router_force_load_balancing = True). Kimi-K2's recipes train with Muon
# (KIMI_K2_RULES).
BRIDGE_MOE_MODELS = {'Qwen3_30B_a3B': 'qwen3-30b-a3b', 'Qwen3_30B_a3B (tokendrop)': 'qwen3-30b-a3b',
                     'Qwen3_235B_a22B': 'qwen3-235b-a22b',
                     'Qwen3_235B_a22B (tokendrop)': 'qwen3-235b-a22b',
                     'Mixtral-8x7B': 'mixtral-8x7b',
                     'DeepSeekV3': 'deepseek-v3', 'DeepSeekV3 (tokendrop)': 'deepseek-v3',
                     'DeepSeekV3 (dropless)': 'deepseek-v3', 'GPT OSS 120B': 'gpt-oss-120b',
                     'Kimi_K2': 'kimi-k2', 'LLAMA4-Scout-LLM': 'llama4-scout',
                     'DeepSeekV4 Flash': 'deepseek-v4-flash'}

BRIDGE_MOE_RULES = """# Mixture-of-experts rows, one more rule for all of them: EP as the table gives it, expert tensor
#   parallel 1 (the Qwen3 and Mixtral recipes' expert_tensor_parallel_size; the table's ETP
#   column is empty), Megatron-Core's all-to-all token dispatcher with grouped GEMMs, or its flex
#   one where the recipe says so (bridge_flex_dispatcher there; HybridEP's kernels on the 32 SMs
#   the performance scripts give them, expert_combine_sms, bridge_hybridep there), and balanced
#   routing (the load-balancing loss; token-dropping recipes cap and pad each expert at capacity
#   factor 1, expert_routing, bridge_token_drop there), dispatch and combine overlapped with compute where
#   the release's recipe sets moe_a2a_overlap (BRIDGE_MOE_OVERLAP in tools/make_validation_scenarios.py), else not; the
#   expert layers eager (the host's work exposed) unless the recipe replays them from CUDA
#   graphs (BRIDGE_MOE_GRAPHS there); the routed experts' activation (and gpt-oss's clamp and
#   weighted bias) in Transformer Engine's fused grouped MLP, not kernels of their own, where the
#   recipe sets cutedsl_fused_grouped_mlp (fused_expert_mlp: BRIDGE_FUSED_GROUPED_MLP there),
#   with its saved tensors copied through Megatron-Core's paged stash where the recipe sets
#   moe_paged_stash (expert_paged_stash: BRIDGE_PAGED_STASH there);
#   Qwen3 235B's 94 layers split with the embedding and the loss counted as layers (96 on
#   PP x VP chunks, as Llama 3.1 405B's);
#   tensor-parallel overlap off where the recipe says so (BRIDGE_MOE_NO_TP_OVERLAP there);
#   the dense rule above otherwise."""

# Where a release's Qwen3 recipe enables Megatron-Core's EP all-to-all overlap
# (overlap_moe_expert_parallel_comm), as (release, system, precision, model); every other MoE row
# runs without it (25.09's Qwen3 recipes: v0.1.0rc4 run_script.py passes only
# CommOverlapConfig(tp_comm_overlap=True); the NeMo Mixtral recipes: NVIDIA/NeMo v2.2.0 / v2.3.0
# nemo/collections/llm/recipes/mixtral_8x7b.py pretrain_performance_optimizations, whose
# MegatronCommOverlapCallback overlaps tensor- and data-parallel communication only).
#   26.02, 26.02.01: v0.3.0 scripts/performance/configs/qwen/qwen3_workload_base_configs.py,
#     QWEN3_30B_A3B_ and QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V1: moe_a2a_overlap=True; the
#     Blackwell ones leave it False.
#   26.04, 26.04.01: v0.4.0, the same file: the H100 235B config True, the H100 30B config False,
#     the Blackwell ones unset (False).
#   26.06, 26.06.01: v0.5.0, the same file: as v0.4.0, and the GB200 / GB300 FP8_MX configs of
#     both models moe_a2a_overlap=True (with full-iteration CUDA graphs, which the step does not
#     need: it has no launch overhead to remove).
#   26.08: v0.6.0 src/megatron/bridge/perf_recipes/qwen/common.py
#     _enable_hybridep_full_iteration_mxfp8 (the GB200 and GB300 MXFP8 recipes):
#     CommOverlapConfig(overlap_moe_expert_parallel_comm=True).
_NVL72_MXFP8 = {(s, 'MXFP8', m) for s in ('DGX-GB200', 'DGX-GB300')
                for m in ('qwen3-30b-a3b', 'qwen3-235b-a22b')}
BRIDGE_MOE_OVERLAP = {
    '26.02': {('DGX-H100', 'FP8', 'qwen3-30b-a3b'), ('DGX-H100', 'FP8', 'qwen3-235b-a22b')},
    '26.04': {('DGX-H100', 'FP8', 'qwen3-235b-a22b')},
    '26.06': {('DGX-H100', 'FP8', 'qwen3-235b-a22b')} | _NVL72_MXFP8,
    '26.08': _NVL72_MXFP8,
}
# Where a release's Qwen3 recipe replays the expert layers from CUDA graphs, as (release, system,
# precision, model); every other MoE row runs its expert layers eagerly (the partial scopes of the
# other recipes, cuda_graph_scope ["attn", "moe_router", "moe_preprocess"], stop before the
# dispatch's device-to-host copy).
#   25.09: v0.1.0rc4 scripts/performance/configs/qwen3/qwen3_30b_a3b_llm_pretrain.yaml, perf_matrix
#     gb200 num_gpus_8 and b200 num_gpus_8 (the table's layouts): cuda_graphs: true, which
#     scripts/performance/utils/helpers.py set_cuda_graph_overrides turns into Megatron-Core's
#     per-layer graphs (model.enable_cuda_graph), possible with the token-dropping rows' padded
#     static shapes; h100 num_gpus_16 and, in qwen3_235b_a22b_llm_pretrain.yaml, h100 num_gpus_256
#     and b200 num_gpus_64: cuda_graphs: false. (Its gb200 num_gpus_64 layout, PP 8 x EP 8, is not
#     the table's TP 2 x EP 64: that row is left out, CONTRADICTED_BY_RECIPE below.)
#   26.06, 26.06.01: v0.5.0 scripts/performance/configs/qwen/qwen3_workload_base_configs.py, the
#     GB200 / GB300 FP8_MX configs of both models (QWEN3_235B_A22B_ ... _FP8_MX_V2,
#     QWEN3_30B_A3B_ ... _FP8_MX_V1): cuda_graph_impl="full_iteration".
#   26.08: v0.6.0 src/megatron/bridge/perf_recipes/qwen/common.py
#     _enable_hybridep_full_iteration_mxfp8: cfg.model.cuda_graph_impl = "full_iteration".
#   NeMo 25.02 (DGX-B200) and 25.04 (DGX-GB200) Mixtral 8x7B, token-dropping (bridge_token_drop):
#     NVIDIA/NeMo v2.2.0 scripts/llm/performance/pretrain_mixtral_8x7b.py (enable_cuda_graph =
#     gpu in ["b200"]) and v2.3.0 scripts/performance/recommended_model_configs/
#     model_configs_gb200.csv (pre_train mixtral 8x7b fp8: cuda_graphs 1, which utils.py
#     set_primary_perf_configs turns into model.config.enable_cuda_graph): Megatron-Core's
#     per-layer graphs, as 25.09's.
#   NeMo 25.07 (DGX-GB200) Llama 4 Scout, token-dropping (bridge_token_drop): NVIDIA/NeMo v2.4.0
#     scripts/performance/recommended_model_configs/model_configs_gb200.csv (pre_train llama4 e16
#     fp8: cuda_graphs 1, helpers.py set_cuda_graph_configs: model.config.enable_cuda_graph), as
#     Mixtral's.
BRIDGE_MOE_GRAPHS = {'25.09': {('DGX-GB200', 'FP8', 'qwen3-30b-a3b'),
                               ('DGX-B200', 'FP8', 'qwen3-30b-a3b')},
                     'NeMo 25.02': {('DGX-B200', 'FP8', 'mixtral-8x7b')},
                     'NeMo 25.04': {('DGX-GB200', 'FP8', 'mixtral-8x7b')},
                     'NeMo 25.07': {('DGX-GB200', 'FP8', 'llama4-scout')},
                     '26.06': _NVL72_MXFP8, '26.08': _NVL72_MXFP8}
# Where a release's Qwen3 recipe turns Transformer Engine's tensor-parallel overlap off although
# TP > 1 (the dense rule's --tp-comm-overlap does not hold), as (release, system, precision, model):
#   26.02, 26.04, 26.06: v0.3.0 / v0.4.0 / v0.5.0 scripts/performance/configs/qwen/
#     qwen3_llm_pretrain.py qwen3_235b_a22b_pretrain_config_h100: CommOverlapConfig(
#     tp_comm_overlap=False) (its 30B and the 25.09 run_script.py set True).
#   26.04 to 26.08: Nemotron 3 Super's GB200 recipe (NEMOTRON_3_SUPER_RULES: TP 2, no
#     comm_overlap).
_H100_235B = {('DGX-H100', 'FP8', 'qwen3-235b-a22b')}
#   26.08: Nemotron 3 Ultra's GB200 recipe (NEMOTRON_3_ULTRA_RULES: TP 2, no comm_overlap).
_GB200_SUPER = {('DGX-GB200', 'MXFP8', 'nemotron3-super-120b-a12b')}
_GB200_ULTRA = {('DGX-GB200', 'MXFP8', 'nemotron3-ultra-550b-a55b')}
BRIDGE_MOE_NO_TP_OVERLAP = {'26.02': _H100_235B, '26.04': _H100_235B | _GB200_SUPER,
                            '26.06': _H100_235B | _GB200_SUPER,
                            '26.08': _GB200_SUPER | _GB200_ULTRA}
# DeepEP's kernels run on Megatron-Core's default of 20 SMs (transformer_config.py
# moe_deepep_num_sms, which fused_a2a.py hands to deep_ep Buffer.set_num_sms; no recipe the rows
# run sets it), the simulator's default expert_communication_sms for the flex dispatcher (NCCL's
# 32 CTAs for Megatron-Core's alltoall one, sim/parallel/expert_comm_overlap.h), taken of the
# catalog GPU's streaming_multiprocessors.
DEEPEP_SMS = 20
# The expert all-to-all overlap of the DeepSeek-V3 and gpt-oss recipes (DEEPSEEK_V3_RULES and
# GPT_OSS_RULES below say where each is set).
_NVL72_MXFP8_MLA_SWA = {(s, 'MXFP8', m) for s in ('DGX-GB200', 'DGX-GB300')
                        for m in ('deepseek-v3', 'gpt-oss-120b')}
for _release, _rows in {'25.09': {('DGX-H100', 'FP8', 'deepseek-v3')},
                        '26.04': {('DGX-GB200', 'BF16', 'gpt-oss-120b')},
                        '26.06': {('DGX-GB200', 'BF16', 'gpt-oss-120b')} | _NVL72_MXFP8_MLA_SWA,
                        '26.08': _NVL72_MXFP8_MLA_SWA}.items():
    BRIDGE_MOE_OVERLAP[_release] = BRIDGE_MOE_OVERLAP.get(_release, set()) | _rows
# Their NVL72 MXFP8 recipes replay the expert layers from full-iteration CUDA graphs as the Qwen3
# ones do: v0.5.0 scripts/performance/configs/deepseek/deepseek_workload_base_configs.py
# DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V1 / _GB300_FP8_MX_V1 (their V2, the scripts' default
# config_variant, inherit it) and gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_
# GB200_FP8_MX_V2 / _GB300_FP8_MX_V2: cuda_graph_impl="full_iteration"; v0.6.0
# src/megatron/bridge/perf_recipes/deepseek/common.py _enable_deepseek_full_iteration_mxfp8.
for _release in ('26.06', '26.08'):
    BRIDGE_MOE_GRAPHS[_release] = BRIDGE_MOE_GRAPHS[_release] | _NVL72_MXFP8_MLA_SWA
# DeepSeek V4 Flash's 26.08 recipes (DEEPSEEK_V4_RULES): full-iteration CUDA graphs, the fused
# grouped MLP and its paged stash, no expert all-to-all overlap.
_NVL72_MXFP8_DSV4 = {(s, 'MXFP8', 'deepseek-v4-flash') for s in ('DGX-GB200', 'DGX-GB300')}
BRIDGE_MOE_GRAPHS['26.08'] = BRIDGE_MOE_GRAPHS['26.08'] | _NVL72_MXFP8_DSV4
# Where a release's recipe runs Transformer Engine's fused grouped MLP (cutedsl_fused_grouped_mlp:
# Megatron-Core's use_transformer_engine_op_fuser with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1), as
# (release, system, precision, model); one table for every model. Every other MoE and hybrid row
# runs its experts' elementwise kernels eagerly:
#   26.02, 26.04 (v0.3.x, v0.4.x): no recipe sets it (v0.4.x scripts/performance/utils/
#     overrides.py even turns use_transformer_engine_op_fuser off).
#   26.06, 26.06.01: v0.5.0 scripts/performance/configs/ (perf_plugins.py sets the environment
#     variable, utils/overrides.py the op fuser), the GB200 / GB300 MXFP8 configs the rows run:
#     qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_FP8_MX_V2 /
#     _GB300_FP8_MX_V2 (the rows' VP 3 / VP 12) and QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1 /
#     _GB300_FP8_MX_V1 (its only version); deepseek/deepseek_workload_base_configs.py
#     DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V1 / _GB300_FP8_MX_V1 (inherited by _V2 and
#     _GB300_FP8_MX_GBS15360); gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_
#     CONFIG_GB200_FP8_MX_V2 / _GB300_FP8_MX_V2. Not the Kimi-K2 or Nemotron 3 configs, nor the
#     H100 FP8 ones.
#   26.08: v0.6.0 src/megatron/bridge/perf_recipes/{qwen,deepseek,gpt_oss}/{gb200,gb300}/
#     *_fp8mx_config env_vars NVTE_CUTEDSL_FUSED_GROUPED_MLP=1 (qwen3_moe.py
#     qwen3_30b_a3b_pretrain_8gpu_*_fp8mx_config, qwen3_235b_a22b_pretrain_256gpu_*_fp8mx_config;
#     deepseek_v3.py deepseek_v3_pretrain_256gpu_*_fp8mx_config; gpt_oss.py); in nemotronh/
#     gb200, gb300/nemotronh.py only Nemotron 3 Ultra's recipes (added below, without the paged
#     stash: no CUDA graphs), not Nano's, Super's or 3.5 Lightning's.
_NVL72_MXFP8_ULTRA = {(s, 'MXFP8', 'nemotron3-ultra-550b-a55b')
                      for s in ('DGX-GB200', 'DGX-GB300')}
BRIDGE_FUSED_GROUPED_MLP = {'26.06': _NVL72_MXFP8 | _NVL72_MXFP8_MLA_SWA,
                            '26.08': _NVL72_MXFP8 | _NVL72_MXFP8_MLA_SWA | _NVL72_MXFP8_DSV4}
# Where a release's recipe runs Megatron-Core's paged stash of the fused grouped MLP's saved tensors
# (moe_paged_stash; expert_paged_stash, sim/workload/eager_expert_kernels.h), as (release, system,
# precision, model): the recipes that run full-iteration CUDA graphs with the fused grouped MLP,
# every row of BRIDGE_FUSED_GROUPED_MLP:
#   26.06, 26.06.01: v0.5.0 scripts/performance/configs/{qwen/qwen3,deepseek/deepseek,
#     gpt_oss/gpt_oss}_llm_pretrain.py set_full_iter_cg_configs (moe_paged_stash = True,
#     moe_expert_rank_capacity_factor 1.5), applied where the config runs full-iteration graphs
#     (is_full_iteration_cuda_graph: the GB200 / GB300 MXFP8 configs above).
#   26.08: v0.6.0 src/megatron/bridge/perf_recipes/qwen/common.py
#     _enable_hybridep_full_iteration_mxfp8, deepseek/common.py (and gb300/deepseek_v3.py),
#     gpt_oss/common.py: moe_paged_stash = True.
BRIDGE_PAGED_STASH = BRIDGE_FUSED_GROUPED_MLP

# Rows whose recipe runs Transformer Engine's FP8 dot-product attention
# (mixed_precision.fp8_dot_product_attention; job.fp8_attention: its forward at the GPU's FP8
# attention rates, its backward of a sliding-window layer over the whole causal square). Every
# release's performance recipes searched for fp8_dot_product_attention / fp8_multi_head_attention /
# fp8_dpa: Megatron-Bridge v0.1.0rc0-v0.4.2 set neither (nor do NVIDIA/NeMo v2.0.0-v2.5.0rc0's
# performance scripts and recipes, but for mlperf_lora_llama2_70b.py, no row of the tables); from
# 26.06 the GB200 / GB300 MXFP8 recipes of
#   26.06 (and 26.06.01): v0.5.0 scripts/performance/configs/ (utils/overrides.py copies the
#     workload config's fp8_dot_product_attention into mixed_precision):
#     gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_GB200_FP8_MX_V2 /
#     _GB300_FP8_MX_V2; qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_
#     GB200_FP8_MX_V2 / _GB300_FP8_MX_V2 and QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1 /
#     _GB300_FP8_MX_V1; deepseek/deepseek_workload_base_configs.py
#     DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V1 (inherited by _V2 and _GB300_FP8_MX_GBS15360),
#     not the GB200 one;
#   26.08: v0.6.0 src/megatron/bridge/perf_recipes/gpt_oss/common.py
#     _apply_gpt_oss_120b_full_iteration_fp8mx_configs; qwen/common.py
#     _enable_hybridep_full_iteration_mxfp8 (qwen/{gb200,gb300}/qwen3_moe.py *_fp8mx_config);
#     deepseek/gb300/deepseek_v3.py deepseek_v3_pretrain_256gpu_gb300_fp8mx_config
#     (_enable_deepseek_full_iteration_mxfp8(fp8_dot_product_attention=True)), not the GB200 one.
# Transformer Engine (v0.6.0 pins NVIDIA/TransformerEngine@4329ff84, dot_product_attention/
# utils.py get_attention_backend) runs a learnable-sink window in FP8 only with cuDNN's fused
# attention on sm100 from cuDNN 9.21.
_FP8_ATTENTION = ({(s, 'MXFP8', m) for s in ('DGX-GB200', 'DGX-GB300')
                   for m in ('gpt-oss-120b', 'qwen3-30b-a3b', 'qwen3-235b-a22b')} |
                  {('DGX-GB300', 'MXFP8', 'deepseek-v3')})
BRIDGE_FP8_ATTENTION = {'26.06': _FP8_ATTENTION, '26.08': _FP8_ATTENTION}

# The DGX-B300 recipes' share of the rules above (CHECK_RULES): v0.3.0's
# QWEN3_235B_A22B_PRETRAIN_CONFIG_B300_FP8_CS_V1 (inherited by _V2 and _FP8_MX_V2)
# moe_a2a_overlap=True (the 26.02 row; v0.4.0 on False); v0.5.0's
# QWEN3_30B_A3B_PRETRAIN_CONFIG_B300_FP8_MX_V1 moe_a2a_overlap=True, cuda_graph_impl="full_iteration",
# cutedsl_fused_grouped_mlp=True, fp8_dot_product_attention=True, and
# qwen3_30b_a3b_pretrain_config_b300's set_full_iter_cg_configs (the paged stash) as the GB300's.
_B300_30B = {('DGX-B300', 'MXFP8', 'qwen3-30b-a3b')}
BRIDGE_MOE_OVERLAP['26.02'] = BRIDGE_MOE_OVERLAP['26.02'] | {('DGX-B300', 'MXFP8', 'qwen3-235b-a22b')}
BRIDGE_MOE_OVERLAP['26.06'] = BRIDGE_MOE_OVERLAP['26.06'] | _B300_30B
BRIDGE_MOE_GRAPHS['26.06'] = BRIDGE_MOE_GRAPHS['26.06'] | _B300_30B
BRIDGE_FUSED_GROUPED_MLP['26.06'] = BRIDGE_FUSED_GROUPED_MLP['26.06'] | _B300_30B
BRIDGE_FP8_ATTENTION['26.06'] = BRIDGE_FP8_ATTENTION['26.06'] | _B300_30B
# Nemotron 3 Ultra's 26.08 recipes run the fused grouped MLP without its paged stash (no CUDA
# graphs: NEMOTRON_3_ULTRA_RULES).
BRIDGE_PAGED_STASH = dict(BRIDGE_PAGED_STASH)
BRIDGE_FUSED_GROUPED_MLP['26.08'] = BRIDGE_FUSED_GROUPED_MLP['26.08'] | _NVL72_MXFP8_ULTRA

# The trays of one NVLink domain a GB200/GB300 job of `nodes` trays gets: sbatch --segment as
# the performance scripts set it for 4 GPUs per node (Megatron-Bridge v0.1.0rc4 and v0.3.0-v0.6.0
# scripts/performance/utils/executors.py; NVIDIA/NeMo's scripts/performance/executors.py for
# the NeMo 25.04/25.07 rows, the same rule beyond 18 trays): the largest divisor of `nodes` up to
# 18 (a rack's trays) beyond one rack, the whole job within one. The tables' 32- and 64-tray jobs
# get 16, jobs of up to 16 trays one segment, which a 16-tray domain holds whole
# (check_nvl72_segment).
NVL72_DOMAIN_TRAYS = 16


def nvl72_segment_trays(nodes):
    """The scripts' sbatch --segment for a job of `nodes` 4-GPU trays."""
    if nodes <= 18:
        return nodes
    return next(c for c in range(18, 0, -1) if nodes % c == 0)


def check_nvl72_segment(nodes, name):
    """Raises unless a domain of NVL72_DOMAIN_TRAYS is the job's segment, or holds it whole."""
    segment = nvl72_segment_trays(nodes)
    if segment != NVL72_DOMAIN_TRAYS and not (nodes == segment <= NVL72_DOMAIN_TRAYS):
        raise ValueError(f'{name}: {nodes} trays run in segments of {segment}, not the '
                         f'{NVL72_DOMAIN_TRAYS}-tray NVLink domains the scenarios build')


# Systems the catalog has: instance, GPUs per node (a GB200/GB300 NVL72 node is a compute tray of
# 4 GPUs) and the cluster's extra fields. The NVL72 rows run in NVLink domains of 16 trays (64
# GPUs), the Slurm segment the performance scripts ask for (NVL72_DOMAIN_TRAYS above).
BRIDGE_SYSTEMS = {
    'DGX-H100': ('onprem.dgx-h100', 8, ''),
    'DGX-B200': ('onprem.dgx-b200', 8, ''),
    'DGX-GB200': ('onprem.gb200-nvl72', 4, f' nvlink_domain_nodes: {NVL72_DOMAIN_TRAYS}'),
    'DGX-GB300': ('onprem.gb300-nvl72', 4, f' nvlink_domain_nodes: {NVL72_DOMAIN_TRAYS}'),
    'DGX-B300': ('onprem.dgx-b300', 8, ''),
}
# Systems whose rows are checks, fitted on nothing: DGX B300, whose table has no dense row, so
# nothing calibrates its sustained compute (the catalog derives the B300's fractions at load from
# the GB300's fits times the B200 / GB200 ratio: topologies/gpus.textproto,
# sustained_server_transfer). Their scenarios are named bridge-check-* (no fit's glob in
# tools/refit_sustained_fractions reaches them) and their groups "check, not fitted".
CHECK_SYSTEMS = ('DGX-B300',)
CHECK_RULES = """# DGX-B300 rows, one more rule for all of them: a check, not fitted (the B300's sustained
#   fractions are the GB300's fits times the B200 / GB200 ratio, topologies/gpus.textproto
#   sustained_server_transfer; its expert-layer host sync the B200's fit). The row's recipe is the
#   release's _B300 config, read as the neighbours' rules read theirs (scripts/performance/configs/
#   */*_workload_base_configs.py and *_llm_pretrain.py at v0.3.0, v0.3.1, v0.4.0, v0.4.2, v0.5.0):
#   DeepSeek-V3 DEEPSEEK_V3_PRETRAIN_CONFIG_B300_V1 / _V2 (EP 8, HybridEP, no all-to-all overlap,
#   recompute_modules ["mla_up_proj"] in every release; _V2 PP 8 x micro-batch 2 from v0.4.2);
#   gpt-oss-120b GPT_OSS_120B_PRETRAIN_CONFIG_B300_BF16_V2 (= _FP8_MX_V2: EP 8 with HybridEP from
#   v0.4.0, kept at v0.4.2; the 26.02.01 row's EP 8 is the main branch's config of 7260d6214 as
#   for the B200; no recompute_modules, no all-to-all overlap, no fused grouped MLP);
#   Qwen3-30B-A3B QWEN3_30B_A3B_PRETRAIN_CONFIG_B300_FP8_MX_V1 (the flex dispatcher with HybridEP;
#   at v0.5.0 the all-to-all overlap, full-iteration CUDA graphs with set_full_iter_cg_configs,
#   cutedsl_fused_grouped_mlp and fp8_dot_product_attention, as the GB300's);
#   Qwen3-235B-A22B QWEN3_235B_A22B_PRETRAIN_CONFIG_B300_FP8_MX_V2 (v0.3.0: PP 8 x VP 4, EP 8, the
#   all-to-all overlap, Megatron-Core's alltoall dispatcher; v0.4.0: PP 8, micro-batch 2, no
#   overlap, alltoall; v0.4.2: the flex dispatcher with HybridEP); Nemotron 3 Nano
#   NEMOTRON_3_NANO_PRETRAIN_CONFIG_B300_FP8_MX_V1 (micro-batch 4, the Nano rule) and Super
#   NEMOTRON_3_SUPER_PRETRAIN_CONFIG_B300_FP8_MX_V1 (= BASE_NEMOTRON_3_SUPER_CONFIG_B300: EP 8, no
#   recompute_modules; the Super rule otherwise)."""


# Megatron FSDP on the NVL72 systems, one rule per release: the recipes offload the activations of
# 20 to 95 layers to the Grace CPU's memory (parallelism.activation_offload_layers), as
# {release: {(model, system): layers}}:
#   25.09: v0.1.0rc4 scripts/performance/configs/llama3/llama3_70b_llm_pretrain.yaml and
#     llama31/llama31_405b_llm_pretrain.yaml, gb200 fp8_cs: cpu_offloading_num_layers 40 and 95;
#   26.02 and 26.04 (and their .01 releases): v0.3.0 to v0.4.1 scripts/performance/configs/llama/
#     llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 /
#     _GB300_FP8_CS_V2: use_megatron_fsdp=True, cpu_offloading_num_layers=40 / 20;
#   NeMo 25.07: NVIDIA/NeMo v2.4.0 scripts/performance/recommended_model_configs/
#     model_configs_gb200.csv, pre_train llama31 405b fp8: activation_offload_layers 95.
BRIDGE_ACTIVATION_OFFLOAD = {
    '25.09': {('LLAMA3_70B', 'DGX-GB200'): 40, ('LLAMA3.1_405B', 'DGX-GB200'): 95},
    '26.02': {('LLAMA3_70B', 'DGX-GB200'): 40, ('LLAMA3_70B', 'DGX-GB300'): 20},
    '26.04': {('LLAMA3_70B', 'DGX-GB200'): 40, ('LLAMA3_70B', 'DGX-GB300'): 20},
    'NeMo 25.07': {('LLAMA3.1-405B', 'DGX-GB200'): 95},
}
OFFLOAD_RULES = """# Activation offload (BRIDGE_ACTIVATION_OFFLOAD in tools/make_validation_scenarios.py: the
#   release's recipe, {recipe},
#   sets {flag} {layers} for this model and system):
#   Transformer Engine's CPU offload copies the tensors the first {layers} layers save for their
#   backward to the Grace CPU's memory and back over NVLink-C2C (the catalog's host_link);
#   activations only (Transformer Engine 2.x get_cpu_offload_context: offload_weights "does not
#   have any effect")."""


def bridge_offload_layers(r, system):
    """The layers whose activations the row's release's recipe offloads (None: no offload)."""
    return BRIDGE_ACTIVATION_OFFLOAD.get(bridge_release(r), {}).get((r['model'], system))


# Rows left out, each with the recipe that says why. Megatron FSDP rows on the NVL72 systems with
# neither an offload rule above nor FSDP_WITHOUT_OFFLOAD below. Rows whose layout disagrees with
# their release's recipe for the same GPUs and batch (every dense row of the simulated models was
# compared with its recipe; each of these prints the layout of another precision's recipe):
#   26.02.01 GB300 MXFP8 Llama 3 70B: micro-batch 2 without VP in the table, PP 4 x VP 5 in
#     v0.3.1's LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_MX_V2;
#   26.02.01 GB300 FP8 Llama 3.1 405B: TP 2 x PP 8 x CP 2 x VP 4 in the table (the MXFP8 recipe's
#     layout), TP 4 x PP 8 x CP 1 x VP 4 in v0.3.1's LLAMA31_405B_PRETRAIN_CONFIG_GB300_FP8_CS_V2;
#   NeMo 25.04 and 25.07 GB200 FP8 Llama 3 8B: micro-batch 2 in the table (the BF16 row's), 4 in
#     the fp8 rows of model_configs_gb200.csv at NeMo v2.3.0 and v2.4.0;
#   26.02.01 GB300 NVFP4 Llama 3 70B: micro-batch 2 without PP or VP in the table (the BF16
#     recipe's micro-batch), PP 4 x VP 5 in v0.3.1's LLAMA3_70B_PRETRAIN_CONFIG_GB300_NVFP4_V2;
#   26.02.01 GB200 NVFP4 Llama 3.1 405B: VP 4 in the table, VP 8 in v0.3.1's
#     LLAMA31_405B_PRETRAIN_CONFIG_GB200_NVFP4_V2 (and in every other release's).
# One MoE row the table contradicts: 26.02 DGX-H100 FP8 Qwen3-30B-A3B (PP 2 x VP 12, EP 8, MBS 1,
# 5,113 tokens/s per GPU) against 26.02.01's 9,058 with the same layout, batch and recipe
# (v0.3.0's QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1 in both), 1.77x apart; 26.02.01's agrees
# with 26.04's 8,901 on the EP 16 layout.
# Kept though a recipe disagrees: NeMo 25.04 GB200 FP8 Llama 3.1 405B, TP 4 x PP 8 x CP 2 x VP 8 in
# the table, TP 4 with Megatron FSDP and no PP or CP in NVIDIA/NeMo v2.3.0's
# scripts/performance/recommended_model_configs/model_configs_gb200.csv (fp8 row); but NVIDIA/
# dgxc-benchmarking @ 68eaf7e117bf llama3.1/launch.sh runs NeMo's r2.3.0 branch (7a8f1cc7bc40) on
# the nemo:25.04.01 container with the table's layout and -fsdp 0, and its README publishes 1,740
# to 1,769 TFLOP/s on 128 to 512 GB200 against the table's 1,763 (tools/make_public_dgxc.py
# NEMO2_405B): a second source for the table's layout.
NVL72_SYSTEMS = ('DGX-GB200', 'DGX-GB300')
# The Megatron FSDP rows on the NVL72 systems whose recipe keeps every activation on the GPU:
# NeMo 25.04 and 25.07 GB200 FP8 Llama 3 70B (NVIDIA/NeMo v2.3.0 and v2.4.0 scripts/performance/
# recommended_model_configs/model_configs_gb200.csv, pre_train llama3 70b fp8: mbs 1,
# use_mcore_fsdp 1, recompute_layers 0, activation_offload_layers 0, as the table's layout).
FSDP_WITHOUT_OFFLOAD = {('NeMo 25.04', 'LLAMA3-70B', 'DGX-GB200', 'FP8'),
                        ('NeMo 25.07', 'LLAMA3-70B', 'DGX-GB200', 'FP8')}
CONTRADICTED_BY_RECIPE = {('26.02.01', 'LLAMA3_70B', 'DGX-GB300', 'MXFP8'),
                          ('26.02.01', 'LLAMA3.1_405B', 'DGX-GB300', 'FP8'),
                          ('NeMo 25.04', 'LLAMA3-8B', 'DGX-GB200', 'FP8'),
                          ('NeMo 25.07', 'LLAMA3-8B', 'DGX-GB200', 'FP8'),
                          ('26.02.01', 'LLAMA3_70B', 'DGX-GB300', 'NVFP4'),
                          ('26.02.01', 'LLAMA3.1_405B', 'DGX-GB200', 'NVFP4')}
CONTRADICTED_BY_TABLE = {('26.02', 'Qwen3_30B_a3B', 'DGX-H100', 'FP8')}
# Rows the page itself disowns: its footnote on 26.06.01's gpt-oss MXFP8 rows ("Performance
# regression in GPT-OSS 120B pre-training is a known issue", NVIDIA/cudnn-frontend issue 256,
# "resolved with the next container release"); 26.06's and 26.08's rows of the same layouts run
# 1.6x faster.
CONTRADICTED_BY_TABLE |= {('26.06.01', 'GPT OSS 120B', s, 'MXFP8') for s in NVL72_SYSTEMS}
# Rows that fit in GPU memory only through what the step does not simulate: none (Nemotron 3
# Super's DGX-B200 rows fit with their recipe's recompute_modules, NEMOTRON_3_RECOMPUTE_MODULES).
UNSIMULATED_MEMORY_SAVING = set()
# Rows whose recipe shards a mixture of experts in a way the step does not simulate: none
# (Nemotron 3 Ultra's 26.08 rows run Megatron FSDP's Hybrid-FSDP, simulated since:
# BRIDGE_HYBRID_FSDP and NEMOTRON_3_ULTRA_RULES).
UNSIMULATED_EXPERT_SHARDING = set()
# 26.04.01 DGX-B200 MXFP8 DeepSeek-V3: PP 8 x VP 2, EP 32 in the table, PP 16, EP 8 in v0.4.1's
# DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2 (= _B200_V2); the table's is v0.5.0's recipe, whose
# EP 32 over 4 nodes runs DeepEP with the all-to-all overlap (moe_flex_dispatcher_backend
# "deepep", moe_a2a_overlap=True).
CONTRADICTED_BY_RECIPE |= {('26.04.01', 'DeepSeekV3', 'DGX-B200', 'MXFP8')}
# 26.02.01 DGX-B300 MXFP8 Qwen3-235B-A22B: PP 8 x VP 4 in the table (v0.3.0's layout, the 26.02
# row's), PP 8 without VP and without the all-to-all overlap in v0.3.1's
# QWEN3_235B_A22B_PRETRAIN_CONFIG_B300_FP8_CS_V1 (inherited by _FP8_MX_V2).
CONTRADICTED_BY_RECIPE |= {('26.02.01', 'Qwen3_235B_a22B', 'DGX-B300', 'MXFP8')}
# Two 25.09 token-dropping Qwen3 rows against v0.1.0rc4's perf_matrix for the same GPUs, batch and
# micro-batch (scripts/performance/configs/qwen3/):
#   DGX-GB200 Qwen3-235B-A22B on 64 GPUs: TP 2 x EP 64 without PP in the table, TP 1 x PP 8 x EP 8
#     in qwen3_235b_a22b_llm_pretrain.yaml gb200 num_gpus_64 (with cuda_graphs: true);
#   DGX-H100 Qwen3-30B-A3B on 16 GPUs: VP 24 in the table, VP 12 in qwen3_30b_a3b_llm_pretrain.yaml
#     h100 num_gpus_16 (fp8_cs micro-batch 2, as the table's).
CONTRADICTED_BY_RECIPE |= {('25.09', 'Qwen3_235B_a22B (tokendrop)', 'DGX-GB200', 'FP8'),
                           ('25.09', 'Qwen3_30B_a3B (tokendrop)', 'DGX-H100', 'FP8')}

# DeepSeek-V3's layers per model chunk (per stage without interleaving), as Megatron-Bridge lays
# them out by the number of virtual stages: set_deepseek_v3_pipeline_model_parallel_layout
# (src/megatron/bridge/recipes/deepseek/deepseek_v3.py, v0.1.0rc4 to v0.6.0: the embedding beside
# the first chunk's layers, the multi-token-prediction module and the loss on the last chunk in the
# place of 3 layers), and the H100 recipes' "Et|(tt|)*30mL" on 32 (v0.1.0rc4 run_script.py; v0.3.0
# DEEPSEEK_V3_PRETRAIN_CONFIG_H100_V1), whose last chunk holds only the MTP module and the loss.
# The step puts the MTP module and the loss on the last chunk and the embedding on the first.
DEEPSEEK_V3_CHUNK_LAYERS = {4: [16, 16, 16, 13], 8: [8] * 7 + [5], 16: [4] * 15 + [1],
                            32: [1] + [2] * 30 + [0]}

DEEPSEEK_V3_RULES = """# DeepSeek-V3 rows, one more rule for all of them (the release's recipe: v0.1.0rc4
#   scripts/performance/run_script.py for 25.09; scripts/performance/configs/deepseek/
#   deepseek_workload_base_configs.py and deepseek_llm_pretrain.py at v0.3.0, v0.4.0 and v0.5.0;
#   src/megatron/bridge/perf_recipes/deepseek/ at v0.6.0): one multi-token-prediction module (the
#   recipe's mtp_num_layers = 1) trained with the loss on the last model chunk; the layers per
#   model chunk of the recipe's pipeline_model_parallel_layout (stage_layers below:
#   DEEPSEEK_V3_CHUNK_LAYERS in tools/make_validation_scenarios.py); expert tensor parallel 1
#   (expert_tensor_parallel_size=1); the flex dispatcher (HybridEP from v0.3.0, DeepEP on 25.09's
#   H100: expert_dispatcher EXPERT_NODE_DEDUPLICATED, bridge_flex_dispatcher); the latent attention's
#   up projections recomputed (recompute_latent_up_projection) where the recipe's
#   recompute_modules has mla_up_proj (DEEPSEEK_V3_UP_PROJECTION_RECOMPUTE in
#   tools/make_validation_scenarios.py), its other modules not (mlp, the 3 dense layers' MLPs of
#   v0.1.0rc4's H100 and v0.4.0's GB200 recipes: not simulated); the expert all-to-all overlap
#   (overlap_moe_expert_parallel_comm) where the recipe sets it: 25.09's H100 (A2A_1F1B), the
#   GB200 and GB300 MXFP8 recipes of v0.5.0 (moe_a2a_overlap=True) and v0.6.0
#   (_enable_deepseek_full_iteration_mxfp8); 25.09's H100
#   reduces gradients after the backward (overlap_grad_reduce = False). Not simulated, left as
#   they are: CUDA graphs (the step has no launch overhead to remove) and FP8 attention
#   (fp8_dot_product_attention) of the v0.5.0 and v0.6.0 NVL72 MXFP8 recipes (their fused grouped
#   MLP, cutedsl_fused_grouped_mlp, and its paged stash are simulated: the MoE rule above), the
#   expert capacity their full-iteration graphs pad to (moe_expert_rank_capacity_factor 1.5), the
#   shared
#   expert's overlap with the dispatch and delayed weight gradients (delay_wgrad_compute)."""

GPT_OSS_RULES = """# gpt-oss-120b rows, one more rule for all of them (the release's recipe:
#   scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py and
#   gpt_oss_llm_pretrain.py at v0.3.0, v0.4.0, v0.4.2 and v0.5.0; src/megatron/bridge/perf_recipes/
#   gpt_oss/ at v0.6.0): no context parallelism (every row and recipe has CP 1; the step refuses it with
#   sliding windows); expert tensor parallel 1; the 36 layers split evenly (the recipe:
#   account_for_embedding/loss_in_pipeline_split = False, no layout); the MXFP8 recipes' flex
#   dispatcher with HybridEP (EXPERT_NODE_DEDUPLICATED), and the BF16 recipes' where they set it
#   (gpt_oss_bf16_hybridep: B200 at EP 8 and GB200 in 26.04, not 26.04.01, whose v0.4.2
#   recipes run Megatron-Core's alltoall again; their EP groups stay inside an
#   NVLink domain, so it moves the same bytes as the all-to-all, but it takes the router's
#   probabilities in fp32, and the eager weighted bias computes in fp32); the recipes' selective
#   recomputation where they set it: the DGX-H100, DGX-B200 and GB200 BF16 workload configs of
#   v0.3.0-v0.4.2 (GPT_OSS_120B_PRETRAIN_CONFIG_{H100,B200,GB200}_BF16_V1, inherited by _V2:
#   recompute_modules ["layernorm", "moe_act"], the pre-MLP norm and the experts' clamped
#   activation rerun: GPT_OSS_RECOMPUTE_MODULES), none in the GB300 ones (CUDA graphs instead)
#   and the MXFP8 ones (v0.5.0 _GB200_FP8_MX_V2 recompute_modules=[]); the expert
#   all-to-all overlap where the recipe sets it: the GB200 BF16 recipe from v0.4.0
#   (GPT_OSS_120B_PRETRAIN_CONFIG_GB200_BF16_V2 moe_a2a_overlap=True, v0.6.0
#   overlap_moe_expert_parallel_comm = True) and the GB200 and GB300 MXFP8 ones of v0.5.0 and
#   v0.6.0; the MXFP8 recipes' fused grouped MLP (the MoE rule above: v0.5.0
#   GPT_OSS_120B_PRETRAIN_CONFIG_GB200_FP8_MX_V2 / _GB300_FP8_MX_V2 cutedsl_fused_grouped_mlp=True,
#   v0.6.0 perf_recipes/gpt_oss/gb200, gb300 NVTE_CUTEDSL_FUSED_GROUPED_MLP=1) with its paged
#   stash (v0.5.0 gpt_oss_llm_pretrain.py set_full_iter_cg_configs, v0.6.0 gpt_oss/common.py
#   moe_paged_stash = True), the BF16 recipes'
#   experts eager (Megatron-Core's clamp and router-weighted bias kernels); the MXFP8 recipes'
#   FP8 dot-product attention (fp8_dot_product_attention=True, BRIDGE_FP8_ATTENTION: cuDNN's
#   FP8 backward of a windowed layer covers the whole causal square); not simulated: CUDA
#   graphs and padded expert capacity (the grouped GEMMs' dynamic scheduler skips the padding),
#   as for DeepSeek-V3 above."""

DEEPSEEK_V4_RULES = """# DeepSeek V4 Flash rows, one more rule for both (the 26.08 recipe: Megatron-Bridge v0.6.0
#   src/megatron/bridge/perf_recipes/deepseek/gb200/deepseek_v4.py
#   deepseek_v4_flash_pretrain_128gpu_gb200_fp8mx_config, gb300/deepseek_v4.py the same config):
#   TP 1, PP 1 (no virtual stages), CP 1, EP as the table gives it, expert tensor parallel 1; the
#   flex dispatcher with HybridEP on 32 SMs (moe_flex_dispatcher_num_sms = 32,
#   EXPERT_NODE_DEDUPLICATED, expert_combine_sms), no expert all-to-all overlap
#   (overlap_moe_expert_parallel_comm = False), no shared-expert overlap; selective recomputation
#   of mla_up_proj only (recompute_latent_up_projection: the query up projection reruns, as
#   Megatron-Core dev's DSv4HybridAttention checkpoints it); full-iteration CUDA graphs, the fused
#   grouped MLP (NVTE_CUTEDSL_FUSED_GROUPED_MLP=1, use_transformer_engine_op_fuser) and its paged
#   stash (moe_paged_stash); forced balanced routing (moe_router_force_load_balancing = True: the
#   3 hash-routed layers route as the others, the router GEMM runs in every layer); FP8 parameter
#   gathers (fp8_param_gather), BF16 gradient reduction; the loss by Megatron-Core's native fused
#   cross entropy (_benchmark_common(cross_entropy_impl="native"), not Transformer Engine's); no
#   FP8 attention (the DSA kernels, apply_dsa_kernel_fusion, not Transformer Engine's: every
#   layer's attention the sparse kernel over per-query key lists, the indexer trained by its
#   sparse loss, dsa_indexer_use_sparse_loss). Not simulated: the expert capacity the graphs pad to
#   (moe_expert_rank_capacity_factor 1.5 sizes the dispatch buffers; the fused grouped MLP takes
#   the per-expert counts on the device), the router padding for quantization, the Sinkhorn
#   iterations of the hyper-connections (under a microsecond a block; their projection runs at
#   the TF32 rate: fused_mhc_kernels.py's tfloat32 MMAs) and the final stream contraction; the
#   indexer's scoring counts all s / 4 compressed keys a query (as the Bridge's FLOPs formula
#   does).
#   The rows' TFLOP/s are Megatron-Bridge's dsv4_hybrid formula (flops_convention
#   MODEL_FLOPS_CAUSAL_BRIDGE_DSV4)."""

# Hybrid Mamba-Transformer MoE rows (bridge-hybrid-*, groups of their own): Nemotron 3 Nano,
# Super, 3.5 Lightning and Ultra (the model file gives Super's, Lightning's and Ultra's
# multi-token-prediction layers as their recipes train them). Ultra's rows are left out
# (UNSIMULATED_EXPERT_SHARDING: Megatron FSDP as HSDP over expert layers).
BRIDGE_HYBRID_MODELS = {'Nemotron_3_Nano': 'nemotron3-nano-30b-a3b',
                        'Nemotron_3_Super': 'nemotron3-super-120b-a12b',
                        'Nemotron_3_5_Lightning': 'nemotron3.5-lightning-30b-a3b',
                        'Nemotron_3_Ultra': 'nemotron3-ultra-550b-a55b'}

NEMOTRON_3_NANO_RULES = """# Nemotron 3 Nano, one rule for all its releases (26.02.01 to 26.08): BASE_NEMOTRON_3_NANO_CONFIG
#   of scripts/performance/configs/nemotronh/nemotron_3_nano_workload_base_configs.py (v0.3.1)
#   and nemotron_3_workload_base_configs.py (v0.4.0, v0.5.0), and v0.6.0
#   src/megatron/bridge/perf_recipes/nemotronh/*/nemotronh.py: TP 1, EP 8, ETP 1, no
#   sequence parallelism, the flex dispatcher with HybridEP (moe_flex_dispatcher_backend
#   "hybridep"), forced load balancing; CUDA graphs of the scopes attn, mamba, moe_router and
#   moe_preprocess (the expert layers' dispatch and experts run eagerly, as the MoE rule says),
#   no all-to-all overlap; no recomputation (_apply_nemotron_3_nano_perf_defaults:
#   recompute_granularity None) but on DGX-H100 FP8, whose recipe recomputes
#   recompute_modules ["moe", "layernorm", "core_attn", "moe_act"] (RECOMPUTE_SELECTIVE for the
#   attention core, recompute_modules for the rest: NEMOTRON_3_RECOMPUTE_MODULES)."""

NEMOTRON_3_5_LIGHTNING_RULES = """# Nemotron 3.5 Lightning (26.08): v0.6.0 src/megatron/bridge/perf_recipes/nemotronh/gb200/
#   nemotronh.py nemotron_3_5_lightning_pretrain_8gpu_gb200_fp8mx_config is Nano's GB200 MXFP8
#   recipe (nemotron_3_nano_pretrain_8gpu_gb200_fp8mx_config, the Nano rule above: TP 1, EP 8,
#   ETP 1, no sequence parallelism, HybridEP, forced load balancing, CUDA graphs of attn, mamba,
#   moe_router and moe_preprocess, no all-to-all overlap, no recomputation) plus multi-token
#   prediction (mtp_num_layers = 2, mtp_hybrid_override_pattern "*E", mtp_use_repeated_layer =
#   True, keep_mtp_spec_in_bf16 = True: models/nemotron3.textproto)."""

NEMOTRON_3_SUPER_RULES = """# Nemotron 3 Super, one rule for all its releases (26.04 to 26.08): BASE_NEMOTRON_3_SUPER_CONFIG
#   of scripts/performance/configs/nemotronh/nemotron_3_workload_base_configs.py (v0.4.0, v0.5.0;
#   _GB200: TP 2; _B200: no CUDA graphs, recompute_modules ["moe_act", "layernorm"]) and v0.6.0
#   src/megatron/bridge/perf_recipes/nemotronh/gb200, gb300/nemotronh.py: EP 64, ETP 1, sequence
#   parallelism where TP 2, the flex dispatcher with HybridEP (moe_flex_dispatcher_backend
#   "hybridep"), forced load balancing; no tensor-parallel overlap (the recipe's _pretrain_common:
#   comm_overlap=None; none of the perf configs sets one); CUDA graphs of the scopes attn, mamba,
#   moe_router and moe_preprocess (the expert layers eager), no all-to-all overlap; the model's
#   multi-token prediction as src/megatron/bridge/recipes/nemotronh/nemotron_3_super.py trains it
#   (models/nemotron3.textproto: mtp_num_layers = 2 passes of one shared "*E" layer,
#   mtp_use_repeated_layer = True, in BF16, keep_mtp_spec_in_bf16 = True). Not simulated, left
#   as they are: moe_router_padding_for_quantization (each expert's rows padded to the MXFP8
#   block). The DGX-B200 rows (26.04, 26.04.01: _B200, TP 1, EP 64) recompute their recipe's
#   recompute_modules ["moe_act", "layernorm"] (NEMOTRON_3_RECOMPUTE_MODULES)."""

# Nemotron 3 Super's NVFP4 rows (groups "<system> NVFP4 hybrid"), one rule per release key: the
# release's recipe and the Transformer Engine it pins (Megatron-Bridge uv.lock: v0.4.0
# TransformerEngine@71bbefbf 2.14.0, v0.4.2 @366798ef 2.14.1, v0.5.0 @4220403e and v0.5.1
# @b9d690e0 2.16.0, v0.6.0 @4329ff84 2.17.1; docs/versions1.json pairs 26.04.01 with v0.4.2,
# 26.06.01 with v0.5.1, 26.08 with v0.6.0, whose Nemotron 3 configs are their .0's). Every pin
# has the fused NVFP4 cast (NVFP4_CAST_RULES False) and NVFP4 grouped GEMMs for the experts
# (2.14's GroupedLinear quantizes its inputs through split_quantize's NVFP4 path with the Hadamard
# transform, pytorch/csrc/extensions/cast.cpp split_quantize_nvfp4_impl_with_rht_helper).
NEMOTRON_3_SUPER_NVFP4 = {
    '26.04': ('v0.4.0 and v0.4.2 scripts/performance/configs/nemotronh/nemotron_3_llm_pretrain.py',
              '2.14'),
    '26.06': ('v0.5.0 and v0.5.1 scripts/performance/configs/nemotronh/nemotron_3_llm_pretrain.py',
              '2.16'),
    '26.08': ('v0.6.0 src/megatron/bridge/perf_recipes/nemotronh/common.py and gb200, gb300/'
              'nemotronh.py', '2.17')}
NEMOTRON_3_SUPER_NVFP4_RULES = """# Nemotron 3 Super NVFP4 rows, one more rule for all of a release's
#   ({recipe}): set_nemotron_3_super_common_configs (v0.6.0 _nemotron_3_super_nvfp4_precision)
#   runs nemotron_3_super_bf16_with_nvfp4_mixed (src/megatron/bridge/training/mixed_precision.py:
#   bf16_with_nvfp4_mixed, fp4 "e2m1", fp4_recipe "nvfp4", with first_last_layers_bf16 = True
#   and num_layers_at_end_in_bf16 = 14; v0.4.0 sets the same two fields in place) with
#   fp4_param_gather = False ("Disabled until MCore PR 4358 lands"; v0.4.0 leaves it at
#   MixedPrecisionConfig's default, False): BF16 weights, all-gathered in BF16 and cast to NVFP4
#   once per step; and the model's quant_recipe
#   te_quant.cfg (the same file in every release): the attention's linear_qkv and linear_proj,
#   the LatentMoE's fc1_latent_proj and fc2_latent_proj and the multi-token-prediction block in
#   BF16, the Mamba mixers' out_proj in MXFP8, the rest of each layer (Mamba in_proj, the routed
#   experts' grouped GEMMs, the shared expert) in NVFP4, the router and the output layer in 16
#   bits as in every precision. The last 14 of the 88 pattern letters (EMEM*EMEMEMEME: 7 expert,
#   6 Mamba and 1 attention layers) run wholly in BF16: Megatron-LM (the release's submodule)
#   megatron/core/ssm/mamba_block.py wraps each layer in fp4_utils.get_fp4_context(layer_number
#   - 1), a nullcontext from num_layers - 14; inside it the MXFP8 out_proj stays BF16 (extensions/
#   transformer_engine.py TEQuantizationRecipe.override_nonquantized_autocast False).
#   Transformer Engine {te}: an input's row-wise and Hadamard-transformed column-wise NVFP4
#   copies from one read (NVIDIA/TransformerEngine#2555's fused cast); the experts' grouped
#   GEMMs in NVFP4. moe_router_padding_for_quantization left as the MXFP8 rows leave it. The
#   systems' NVFP4 configs (nemotron_3_workload_base_configs.py, v0.4.0 and v0.5.0), which win over
#   the Super rule below: _B200_NVFP4_V1 TP 2 (with sequence parallelism; the table's footnote:
#   the MXFP8 mapping did not fit), no recomputation (recompute_modules None), CUDA graphs of
#   attn, mamba, moe_router and moe_preprocess; _B300_NVFP4_V1 the B300 BF16 config: EP 8,
#   recompute_modules ["moe_act", "layernorm"] (NEMOTRON_3_SUPER_NVFP4_RECOMPUTE_MODULES)."""
NEMOTRON_3_SUPER_NVFP4_OVERRIDES = """
  fp4_overrides {
    sixteen_bit_modules: [ATTENTION_QKV, ATTENTION_OUT, LATENT_PROJECTIONS]
    mxfp8_modules: [MAMBA_OUT_PROJECTION]
    sixteen_bit_last_layers: 14
  }"""
# The Nemotron 3 Super NVFP4 recipes' recompute_modules by system (v0.4.0 / v0.5.0
# nemotron_3_workload_base_configs.py): NEMOTRON_3_SUPER_PRETRAIN_CONFIG_B300_NVFP4_V1 is the
# B300 BF16 config, ["moe_act", "layernorm"]; _B200_NVFP4_V1 sets recompute_modules None (and TP 2
# with the CUDA graphs of attn, mamba, moe_router and moe_preprocess); GB200 and GB300 none.
NEMOTRON_3_SUPER_NVFP4_RECOMPUTE_MODULES = {
    'DGX-B300': ['recompute_modules: [RECOMPUTE_MOE_ACT, RECOMPUTE_LAYERNORM]']}


def nemotron_3_super_nvfp4(release, model, precision):
    """Whether a row is a Nemotron 3 Super NVFP4 one of a release NEMOTRON_3_SUPER_NVFP4 gives."""
    return (precision == 'NVFP4' and model == 'nemotron3-super-120b-a12b'
            and release in NEMOTRON_3_SUPER_NVFP4)


# The recompute_modules of the Nemotron 3 recipes that set them, as parallelism lines by (model,
# system): v0.3.1 scripts/performance/configs/nemotronh/nemotron_3_nano_workload_base_configs.py
# and v0.4.0 / v0.5.0 nemotron_3_workload_base_configs.py NEMOTRON_3_NANO_PRETRAIN_CONFIG_H100_
# FP8_CS_V1 ["moe", "layernorm", "core_attn", "moe_act"] and BASE_NEMOTRON_3_SUPER_CONFIG_B200
# ["moe_act", "layernorm"] (recompute_granularity selective).
NEMOTRON_3_RECOMPUTE_MODULES = {
    ('nemotron3-nano-30b-a3b', 'DGX-H100'): [
        'recompute: RECOMPUTE_SELECTIVE',
        'recompute_modules: [RECOMPUTE_MOE, RECOMPUTE_LAYERNORM, RECOMPUTE_MOE_ACT]'],
    ('nemotron3-super-120b-a12b', 'DGX-B200'): [
        'recompute_modules: [RECOMPUTE_MOE_ACT, RECOMPUTE_LAYERNORM]']}

# LoRA fine-tuning rows (table finetune_lora), one more rule per release, from its recipe:
# (recipe, rank, target modules).
BRIDGE_LORA = {'26.06': ('v0.5.0', 16, ['LINEAR_QKV'])}
BRIDGE_LORA_RULES = """# LoRA rows, one more rule for all of them ({recipe}): the base model frozen, rank-{rank} adapters
#   on {targets} only (scripts/performance/configs/llama/llama3_llm_finetune.py
#   llama3_70b_lora_config_*: cfg.peft.target_modules = ["linear_qkv"]; the rank from
#   src/megatron/bridge/recipes/llama/llama3.py llama3_70b_peft_config: peft_cfg.dim = 16, alpha
#   32, a scale that costs nothing; the LoRA default dropout 0.0); the layouts of
#   scripts/performance/configs/llama/llama3_workload_base_configs.py LLAMA3_70B_LORA_CONFIG_*
#   as the table gives them (H100 FP8_CS: TP 2 x PP 4 x VP 20); the distributed optimizer with
#   BF16 gradient reduction (set_llama3_common_peft_configs); sequence parallelism where TP > 1
#   (WorkloadBaseConfig.sequence_parallel) with tensor-parallel overlap (tp_comm_overlap where
#   TP > 1). Not simulated, left as they are: the recipe's packed SQuAD sequences (_peft_common:
#   packed_sequence = True, pad_to_max_length: each 4096-token row holds several documents, and
#   the fused attention attends within each; the step attends over the whole row, as the SFT
#   rows do) and the CUDA graphs of the MLP (cuda_graph_scope "mlp": the step has no launch
#   overhead to remove)."""

KIMI_K2_RULES = """# Kimi-K2 rows, one more rule for all of them (the release's recipe: v0.3.1 for 26.02.01, v0.4.0,
#   v0.5.0: scripts/performance/configs/kimi/kimi_llm_pretrain.py and kimi_workload_base_configs.py
#   KIMI_K2_PRETRAIN_CONFIG_GB300, src/megatron/bridge/recipes/kimi/kimi_k2.py): Megatron-Core's
#   layer-wise distributed Muon (argument_parser.py --optimizer_type default "muon";
#   distributed_muon_with_cosine_annealing: 5 Newton-Schulz steps, blockwise over TP, Adam for the
#   rest), with it neither the distributed optimizer nor the parameter gather's overlap
#   (use_distributed_optimizer = False, overlap_param_gather = False: gradients all-reduced,
#   updated weights all-gathered after the step) nor FP8 weights (set_kimi_k2_common_configs:
#   fp8_param_gather = False for Muon with MXFP8), gradients reduced in BF16 (grad_reduce_in_fp32
#   = False there); the pipeline layout of _get_kimi_k2_pipeline_layout for PP 4 x VP 4 (the
#   embedding beside the first chunk's 4 layers, 15 chunks of 4, the last of 1 with the loss);
#   expert tensor parallel 1; the flex dispatcher with HybridEP (moe_flex_dispatcher_backend
#   "hybridep": EXPERT_NODE_DEDUPLICATED); no expert all-to-all overlap (moe_a2a_overlap=False);
#   the expert layers eager (cuda_graph_scope []); the latent attention's up projections
#   recomputed (recompute_modules ["mla_up_proj"]). Not simulated: the shared expert's overlap
#   with the dispatch (moe_shared_expert_overlap) and the fused router (moe_router_fusion)."""

LLAMA4_SCOUT_RULES = """# Llama 4 Scout, NeMo 25.07 (NVIDIA/NeMo v2.4.0 scripts/performance/llm/pretrain_llama4_e16.py
#   with nemo/collections/llm/recipes/llama4_e16.py in performance mode, and
#   recommended_model_configs/model_configs_gb200.csv pre_train llama4 e16 fp8: TP 1, PP 1, CP 1,
#   EP 16, ETP 1, VP 1, MBS 1, GBS 1024, cuda_graphs 1, no FSDP, recomputation or offload): the
#   model of nemo/collections/llm/gpt/model/llama.py Llama4Experts16Config (models/llama4.textproto:
#   chunked attention of 8192 tokens, every fourth layer global, which at this sequence of 8192 is
#   plain causal attention), the all-to-all dispatcher (moe_token_dispatcher_type "alltoall"),
#   token-dropping at capacity factor 1 and per-layer CUDA graphs as the MoE rule says; gradients
#   reduced in BF16 (plugins.grad_reduce_in_fp32 = False). Not simulated: moe_shared_expert_overlap
#   (the shared expert beside the dispatch), which would make the step faster. The parenthesised
#   row is left out as NeMo 25.07's dense ones are (the stored page leaves out its footnote)."""

NEMOTRON_3_ULTRA_RULES = """# Nemotron 3 Ultra (26.08): Megatron-Bridge v0.6.0 (51885cf1) src/megatron/bridge/perf_recipes/
#   nemotronh/gb200/nemotronh.py nemotron_3_ultra_pretrain_256gpu_gb200_fp8mx_config and
#   gb300/nemotronh.py nemotron_3_ultra_pretrain_256gpu_gb300_fp8mx_config (_nemotron_3_ultra_
#   gb300_fp8mx_config), with nemotronh/common.py _apply_nemotron_3_ultra_perf_defaults and
#   _apply_nemotron_3_ultra_fsdp_hsdp: GB200 TP 2 with sequence parallelism, GB300 TP 1; PP 1,
#   CP 1, EP 64, ETP 1, MBS 1; Megatron FSDP (use_megatron_fsdp, data_parallel_sharding_strategy
#   "optim_grads_params": zero_stage 3, each layer one FSDP unit gathered one ahead: fsdp2) as
#   Hybrid-FSDP, parameters, gradients and optimizer states sharded within each 64-GPU NVLink
#   domain (_GB300_NVLINK_DOMAIN_GPUS: data_parallel_shard 64 / TP, BRIDGE_HYBRID_FSDP in
#   tools/make_validation_scenarios.py) and the optimizer states again across the 256 / 64 = 4
#   domains (num_distributed_optimizer_instances 4, outer_dp_sharding_strategy "optim":
#   shard_optimizer_across_replicas; each domain holds one replica of every expert, EP 64 x ETP 1),
#   gradients reduced in BF16 (megatron_fsdp_grad_comm_dtype, main grads BF16), FP8 weight
#   transposes not kept (keep_fp8_transpose_cache = False); the flex dispatcher with HybridEP on 32
#   SMs (_benchmark_common: moe_hybridep_num_sms = 32), forced load balancing, no tensor-parallel
#   overlap (no comm_overlap), no CUDA graphs (cuda_graph_impl "none": the expert layers eager), no
#   all-to-all overlap; the fused grouped MLP (use_transformer_engine_op_fuser = True after
#   _benchmark_common, NVTE_CUTEDSL_FUSED_GROUPED_MLP=1) without a paged stash; selective
#   recomputation of moe_act (recompute_modules ["moe_act"]) with Megatron-Core's fine-grained
#   activation offloading of "fused_group_mlp" (offload_modules, min_offloaded_tensor_size 500M
#   elements on GB300, 350M on GB200 with TP 2, which the recipe says picks the FC1 output of
#   8192 tokens: activation_offload_modules OFFLOAD_FUSED_EXPERT_MLP, each copy done before the
#   next expert layer's, as GB200's fine_grained_offloading_max_inflight_offloads 1 joins them;
#   GB300 leaves it unset, which joins none); the loss by Megatron-Core's native fused cross
#   entropy (cross_entropy_impl "native"); the model's two multi-token-prediction passes of one
#   shared "*E" layer in BF16 (models/nemotron3.textproto). Not simulated, left as they are:
#   moe_router_padding_for_quantization, the offloaded bytes of the multi-token-prediction
#   layer's experts (kept on the GPU here), the high-priority stream of the expert-parallel
#   group."""

BRIDGE_MODEL_RULES = {'deepseek-v3': DEEPSEEK_V3_RULES, 'gpt-oss-120b': GPT_OSS_RULES,
                      'deepseek-v4-flash': DEEPSEEK_V4_RULES,
                      'llama4-scout': LLAMA4_SCOUT_RULES,
                      'kimi-k2': KIMI_K2_RULES, 'nemotron3-nano-30b-a3b': NEMOTRON_3_NANO_RULES,
                      'nemotron3-super-120b-a12b': NEMOTRON_3_SUPER_RULES,
                      'nemotron3.5-lightning-30b-a3b': NEMOTRON_3_5_LIGHTNING_RULES,
                      'nemotron3-ultra-550b-a55b': NEMOTRON_3_ULTRA_RULES}
# The rows whose recipe runs Megatron FSDP as Hybrid-FSDP, as {(release, model): the GPUs of one
# sharding group} (NEMOTRON_3_ULTRA_RULES: its NVLink domain of 64 GPUs).
BRIDGE_HYBRID_FSDP = {('26.08', 'nemotron3-ultra-550b-a55b'): 64}
# The parallelism lines of Nemotron 3 Ultra's recomputation and offload (NEMOTRON_3_ULTRA_RULES).
NEMOTRON_3_ULTRA_LINES = ['recompute_modules: [RECOMPUTE_MOE_ACT]',
                          'activation_offload_modules: [OFFLOAD_FUSED_EXPERT_MLP]']

# Where the DeepSeek-V3 recipe of a release and system recomputes mla_up_proj (recompute_modules):
# v0.1.0rc4 run_script.py (H100 ["mla_up_proj", "mlp"], B200 and token-drop GB200
# ["mla_up_proj"]); v0.3.0 DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_V1, _GB200_V1, _B200_V1
# (["mla_up_proj"]); v0.4.0 the same but _GB200_V1 (["mlp"]); v0.5.0 _GB200_FP8_MX_V1
# (["mla_up_proj"]; _GB300_FP8_MX_V1 []); v0.6.0 deepseek_v3_pretrain_256gpu_gb200_fp8mx_config
# (["mla_up_proj"]; gb300 []); DEEPSEEK_V3_PRETRAIN_CONFIG_B300_V1 / _V2 (["mla_up_proj"], v0.3.0
# to v0.5.0).
DEEPSEEK_V3_UP_PROJECTION_RECOMPUTE = {'25.09': ('DGX-H100', 'DGX-B200', 'DGX-GB200'),
                                       '26.02': ('DGX-B200', 'DGX-GB200', 'DGX-GB300', 'DGX-B300'),
                                       '26.04': ('DGX-B200', 'DGX-GB300', 'DGX-B300'),
                                       '26.06': ('DGX-GB200', 'DGX-B300'), '26.08': ('DGX-GB200',)}


# Where a release's recipe drops tokens: Megatron-Core's moe_expert_capacity_factor 1.0 with
# moe_pad_expert_input_to_capacity (every expert runs, and every all-to-all moves, its whole
# capacity: with capacity factor 1 the balanced share), as job.expert_routing writes them:
#   25.09 "(tokendrop)" rows: v0.1.0rc4 scripts/performance/run_script.py apply_moe_token_drop on
#     both Qwen3 recipes and on DeepSeek-V3 for b200 / gb200 (use_tokendrop, DeepEP off), whose
#     src/megatron/bridge/training/utils/moe_token_drop.py defaults are capacity factor 1.0, padded;
#   NeMo 25.02 / 25.04 Mixtral 8x7B: NVIDIA/NeMo v2.2.0 / v2.3.0 mixtral_8x7b.py
#     pretrain_performance_optimizations (the performance scripts' pretrain_recipe(performance_mode=
#     True)) adds MegatronTokenDropCallback, nemo/lightning/pytorch/callbacks/moe_token_drop.py:
#     moe_expert_capacity_factor 1.0, moe_pad_expert_input_to_capacity True;
#   NeMo 25.07 Llama 4 Scout: NVIDIA/NeMo v2.4.0 nemo/collections/llm/recipes/llama4_e16.py
#     pretrain_performance_optimizations adds the same callback (same defaults), and
#     scripts/performance/llm/pretrain_llama4_e16.py runs pretrain_recipe(performance_mode=True).
TOKEN_DROP_ROUTING = 'expert_routing { capacity_factor: 1 pad_to_capacity: true }'


def bridge_token_drop(r, model):
    """Whether the row's recipe drops tokens (above)."""
    return 'tokendrop' in r['model'] or (model in ('mixtral-8x7b', 'llama4-scout')
                                         and r['release'].startswith('NeMo'))


def bridge_variant(r):
    """What tells a row from another of the same release, model, system and GPUs in its name:
    token dropping, or the global batch of a recipe named for it (v0.5.0's
    DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_GBS15360 beside the V2 recipe's 4096)."""
    variant = ' tokendrop' if 'tokendrop' in r['model'] else ''
    return variant + (' gbs15360' if r['global_batch'] == '15360' else '')


# Where a release's recipe runs Megatron-Core's flex token dispatcher (DeepEP or HybridEP: a token
# crosses once to each remote NVLink domain holding its experts, expert_dispatcher
# EXPERT_NODE_DEDUPLICATED; it differs from the all-to-all only where an EP group spans domains):
#   Qwen3-30B-A3B, 26.02 on: v0.3.0-v0.5.0 scripts/performance/configs/qwen/qwen3_llm_pretrain.py
#     qwen3_30b_a3b_pretrain_config_* (moe_token_dispatcher_type = "flex"; the H100 workload
#     configs' moe_flex_dispatcher_backend "deepep" at v0.3.0, "hybridep" at v0.4.0 and v0.5.0);
#   Qwen3-235B-A22B on GB200 / GB300, 26.02 on: the same file's _gb200 / _gb300 configs ("flex";
#     _h100 and _b200 "alltoall");
#   DeepSeek-V3: 25.09's H100 (v0.1.0rc4 run_script.py enable_deepep for h100; its token-dropping
#     B200 / GB200 rows disable DeepEP), and every 26.x row (DEEPSEEK_V3_RULES: HybridEP);
#   gpt-oss-120b MXFP8 (GPT_OSS_RULES: flex with HybridEP) and the BF16 rows whose recipes set
#     HybridEP (gpt_oss_bf16_hybridep).
#   Qwen3-235B-A22B on DGX-B300 from v0.4.2 (26.04.01): qwen3_235b_a22b_pretrain_config_b300 sets
#     moe_token_dispatcher_type "flex" with the _B300 configs' "hybridep" ("alltoall" at v0.4.0;
#     unset, the recipe's alltoall, at v0.3.0).
QWEN3_235B_FLEX = {'26.04.01': ('DGX-B300',)}


def bridge_flex_dispatcher(release, container, system, precision, model, ep):
    """Whether the row's recipe runs the flex (per-domain deduplicating) dispatcher; `container`
    is the row's own release (26.04.01 where `release` is its key, 26.04)."""
    later = release[:2] == '26'
    return ((model == 'qwen3-30b-a3b' and later) or
            (model == 'qwen3-235b-a22b' and later and system in NVL72_SYSTEMS) or
            (model == 'qwen3-235b-a22b' and system in QWEN3_235B_FLEX.get(container, ())) or
            (model == 'deepseek-v3' and (later or (release == '25.09' and system == 'DGX-H100'))) or
            (model == 'gpt-oss-120b' and (precision == 'MXFP8' or
                                          gpt_oss_bf16_hybridep(container, system, ep))) or
            model in ('kimi-k2', 'deepseek-v4-flash') or
            model in BRIDGE_HYBRID_MODELS.values())


# Where the flex dispatcher runs HybridEP, whose kernels the performance scripts put on 32 SMs
# (v0.3.0-v0.5.0 scripts/performance/utils/overrides.py _set_common_perf_overrides and v0.6.0
# src/megatron/bridge/perf_recipes/_common.py: moe_hybridep_num_sms = 32 when
# moe_flex_dispatcher_backend is "hybridep"): every flex row of the 26.x releases (the Qwen3,
# DeepSeek-V3, gpt-oss, Kimi-K2 and Nemotron 3 configs name "hybridep") but v0.3.0's H100
# Qwen3-30B-A3B (QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1: "deepep") and 25.09's DeepEP.
# Megatron-Core hands the same count to its dispatch and to its combine (token_dispatcher.py
# _HybridEPManager: num_sms_dispatch_api and num_sms_combine_api = moe_hybridep_num_sms), and
# HybridEP launches each of the two kernels on that many blocks, one an SM (deepseek-ai/DeepEP
# branch hybrid-ep csrc/hybrid_ep/config.cuh: num_of_blocks_dispatch_api / _combine_api), so
# each takes all 32 while it runs: expert_combine_sms, and the SMs the overlapped compute loses
# while either runs (bridge_dispatcher_sms).
HYBRIDEP_SMS = 32


def bridge_hybridep(release, container, system, precision, model, ep):
    """Whether the row's flex dispatcher is HybridEP (above)."""
    deepep = release == '26.02' and system == 'DGX-H100' and model == 'qwen3-30b-a3b'
    return (release[:2] == '26' and not deepep and
            bridge_flex_dispatcher(release, container, system, precision, model, ep))


# The SMs an overlapped row's dispatch and combine kernels take while they run
# (expert_communication_sms, of the GPU's): HybridEP's 32 (HYBRIDEP_SMS) where the flex
# dispatcher runs it, else DeepEP's 20 (DEEPEP_SMS: 25.09's H100 DeepSeek-V3, v0.3.0's H100
# Qwen3-30B-A3B). The all-to-all dispatcher's rows (H100 Qwen3-235B-A22B, GB200 BF16 gpt-oss
# 26.04.01) run NCCL's kernels, whose blocks are its point-to-point channels (NVIDIA/nccl
# src/graph/paths.cc: p2pnChannels, the communicator's channels, 32 on these nodes): the
# simulator's default for that dispatcher. None: the simulator's default (the dispatcher's).
def bridge_dispatcher_sms(release, container, system, precision, model, ep):
    """The row's expert_communication_sms, or None for the simulator's default (DeepEP's 20 for
    the flex dispatcher, NCCL's 32 CTAs for the all-to-all one)."""
    sms = (HYBRIDEP_SMS if bridge_hybridep(release, container, system, precision, model, ep)
           else DEEPEP_SMS)
    return None if sms == DEEPEP_SMS else sms


# The gpt-oss BF16 rows whose recipes set HybridEP (GPT_OSS_RULES), by the row's own release (the
# container: docs/versions1.json pairs 26.02.01 with Megatron-Bridge v0.3.1 and 26.04.01 with
# v0.4.2, the software-versions page 26.04 with v0.4.0): v0.4.0's
# GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V2 (EP 8, moe_flex_dispatcher_backend "hybridep"; its
# 26.02.01 row at EP 8 takes it too: the main branch's config from 7260d6214, 2026-03-23, where
# v0.3.1's _V2 is v0.3.0's EP 64 without HybridEP) and _GB200_BF16_V2 (with the all-to-all overlap).
# Not 26.04.01: v0.4.2 sets both back to Megatron-Core's alltoall dispatcher, keeping the B200's
# EP 8 and the GB200's overlap (NVIDIA-NeMo/Megatron-Bridge#3561, cherry-picked as ee3d3068b, and
# #3614 as 78934c150: "switch GPT-OSS GB200 / B200 V2 dispatcher default to alltoall").
# The B300's _B300_BF16_V2 sets it from the same commit and keeps it at v0.4.2 (CHECK_RULES).
GPT_OSS_BF16_HYBRIDEP = {'26.02.01': {'DGX-B200', 'DGX-B300'},
                         '26.04': {'DGX-B200', 'DGX-GB200', 'DGX-B300'}, '26.04.01': {'DGX-B300'}}


def gpt_oss_bf16_hybridep(container, system, ep):
    """Whether a gpt-oss BF16 row's recipe sets HybridEP: the B200 ones at EP 8 of 26.02.01 and
    26.04 (the 26.02 row's EP 64 is v0.3.0's, without it), the GB200 one of 26.04, the B300 ones
    of 26.02.01 to 26.04.01."""
    return (system in GPT_OSS_BF16_HYBRIDEP.get(container, ()) and
            (system not in ('DGX-B200', 'DGX-B300') or ep == '8'))

# Where a gpt-oss recipe recomputes the pre-MLP norm and the experts' activation (GPT_OSS_RULES):
# the BF16 ones of these systems (every BF16 row is of 26.02-26.04.01, v0.3.0-v0.4.2).
GPT_OSS_RECOMPUTE_MODULES = {'DGX-H100', 'DGX-B200', 'DGX-GB200'}


def bridge_model_lines(r, release, system, model, precision):
    """The parallelism lines of DEEPSEEK_V3_RULES, GPT_OSS_RULES, KIMI_K2_RULES and the
    Nemotron 3 rules beyond the MoE rule's."""
    if model == 'kimi-k2':
        return ['stage_layers: [' + ', '.join(['4'] * 15 + ['1']) + ']',
                'recompute_latent_up_projection: true', 'overlap_parameter_gather: false']
    if model == 'deepseek-v4-flash':
        return ['recompute_latent_up_projection: true']
    if model == 'nemotron3-ultra-550b-a55b':
        return NEMOTRON_3_ULTRA_LINES
    if model == 'gpt-oss-120b':
        if precision == 'BF16' and system in GPT_OSS_RECOMPUTE_MODULES:
            return ['recompute_modules: [RECOMPUTE_LAYERNORM, RECOMPUTE_MOE_ACT]']
        return []
    if nemotron_3_super_nvfp4(release, model, precision):
        return NEMOTRON_3_SUPER_NVFP4_RECOMPUTE_MODULES.get(system, [])
    if (model, system) in NEMOTRON_3_RECOMPUTE_MODULES:
        return NEMOTRON_3_RECOMPUTE_MODULES[(model, system)]
    if model != 'deepseek-v3':
        return []
    vp = int(r['vp']) if r['vp'].isdigit() else 1
    layers = ', '.join(str(n) for n in DEEPSEEK_V3_CHUNK_LAYERS[int(r['pp']) * vp])
    lines = [f'stage_layers: [{layers}]']
    if system in DEEPSEEK_V3_UP_PROJECTION_RECOMPUTE.get(release, ()):
        lines.append('recompute_latent_up_projection: true')
    if release == '25.09' and system == 'DGX-H100':
        lines.append('overlap_gradient_reduce: false')
    return lines


def bridge_left_out(r, system, precision):
    """Whether the row is one of those above."""
    fsdp = r['fsdp'] not in ('', '0')
    key = (r['release'], r['model'], system, precision)
    return ((fsdp and system in NVL72_SYSTEMS and key not in FSDP_WITHOUT_OFFLOAD
             and bridge_offload_layers(r, system) is None) or
            key in CONTRADICTED_BY_RECIPE | CONTRADICTED_BY_TABLE | UNSIMULATED_MEMORY_SAVING |
            UNSIMULATED_EXPERT_SHARDING)


# The parenthesised "other quantization granularity" of a release's dense rows, where its page and
# recipe name it, as {release: systems}: 25.09's DGX-B200 and DGX-GB200 rows are MXFP8. The page's
# footnote gives 32-element blocks on those systems (docs/performance-summary-archive.md, 25.09 and
# 25.11 sections), the 25.11 table prints the same B200 / GB200 Llama layouts as "FP8-CS (FP8-MX)",
# and v0.1.0rc4's perf_matrix fp8_mx entries (scripts/performance/configs/llama3/
# llama3_8b_llm_pretrain.yaml, llama3_70b_llm_pretrain.yaml, llama31/llama31_405b_llm_pretrain.yaml,
# b200 and gb200) print the parenthesised layouts: 8B TP 1 x MBS 2, 70B TP 2 x PP 4 x VP 5 x MBS 1,
# 405B TP 4 x PP 8 x CP 2 x VP 8 x MBS 1. The table prints one MBS for both figures (the main
# one's); the parenthesised GA gives the other's: GBS / (DP x GA), 1 for the 70B row as its recipe
# says. Not NeMo 25.07's parenthesised rows: the stored page leaves out its footnote, and no
# precision's GB200 recipe of NVIDIA/NeMo v2.4.0 (model_configs_gb200.csv) runs the 70B one's
# TP 2 x PP 4 x CP 2 x VP 5. The MoE rows' parenthesised figures are not read against their recipes
# here and stay out.
BRIDGE_ALTERNATIVE_MXFP8 = {'25.09': ('DGX-B200', 'DGX-GB200')}
ALTERNATIVE_RULES = """# The table's parenthesised figure, MXFP8 (BRIDGE_ALTERNATIVE_MXFP8 in
#   tools/make_validation_scenarios.py: the page's "32x32" granularity, the 25.11 table's FP8-MX at
#   the same layouts, and {recipe}'s perf_matrix fp8_mx layout); its micro-batch from the
#   parenthesised GA (GBS / (DP x GA)); the 8B recipe's CUDA graphs (cuda_graphs: true) not
#   simulated."""


FSDP_RULES = """# Megatron FSDP (FSDP > 0), one more rule for all its rows: FP8 weight transposes not kept between
#   uses (keep_fp8_transpose_cache = False: Megatron-Bridge v0.1.0rc4 scripts/performance/utils/
#   helpers.py set_megatron_fsdp_overrides, whose perf_matrix key
#   keep_fp8_transpose_cache_when_using_custom_fsdp no script reads; NVIDIA/NeMo v2.3.0
#   scripts/performance/utils.py and v2.4.0 helpers.py set_mcore_fsdp_configs)."""


def bridge_micro_batch(r, alternative):
    """The row's micro-batch: the table's, or for a parenthesised figure GBS / (DP x GA)."""
    if not alternative:
        return int(r['micro_batch'])
    dp = int(r['num_gpus']) // (int(r['tp']) * int(r['pp']) * int(r['cp']))
    micro_batch, rest = divmod(int(r['global_batch']), dp * int(r['ga']))
    assert rest == 0, f'GA {r["ga"]} does not divide the batch of {r["model"]}'
    return micro_batch


# The passes over the gradient buffer each recipe runs (parallelism.check_for_nan_in_grad and
# gradient_scaling; the buffer is zeroed every step in all of them), on the rows under Megatron's
# data-parallel wrapper (Megatron FSDP's zero_stage 3 rows have none of these fields):
#   NeMo 2.0 (NeMo 25.02-25.07, and the Megatron-LM README rows copied from its scripts): every
#     recipe's DistributedDataParallelConfig(check_for_nan_in_grad=True, average_in_collective=
#     True) (NVIDIA/NeMo v2.1.0-v2.4.0 nemo/collections/llm/recipes/llama3_8b.py, llama3_70b.py,
#     llama31_405b.py, gpt3_175b.py, nemotron.py, mixtral_8x7b.py, llama4_e16.py), which
#     scripts/llm/performance leaves alone.
#   Megatron-Bridge 25.09-26.08: the performance scripts switch the NaN check off in every release
#     (v0.1.0rc4 scripts/performance/configs/*/*.yaml check_for_nan_in_grad: false; v0.2.0
#     utils/helpers.py, v0.3.0-v0.5.0 utils/overrides.py, v0.6.0 perf_recipes/_common.py:57);
#     the recipes average in the collective (v0.1.0rc4 recipes/llama/llama3_70b.py:183,
#     gpt/gpt3_175b.py:193, qwen/qwen3_30b_a3b.py:197, deepseek/deepseek_v3.py:274; v0.3.0
#     recipes/llama/llama3.py, qwen/qwen3_moe.py:316, kimi/kimi_k2.py:351; v0.4.0-v0.6.0
#     recipes/common.py:85 _pretrain_common) except where BRIDGE_GRADIENT_SCALING says.
NEMO2_GRADIENT_PASSES = ['check_for_nan_in_grad: true', 'gradient_scaling: AVERAGE_IN_COLLECTIVE']
#   (release, model) -> GradientScaling where the recipe does not average in the collective:
#   DeepSeek-V3 in 26.08 scales before the reduce-scatter (v0.6.0 perf_recipes/deepseek/
#     common.py:105 average_in_collective = False), DeepSeek V4 Flash too (v0.6.0
#     perf_recipes/deepseek/gb200/deepseek_v4.py: cfg.ddp.average_in_collective = False);
#   GPT-OSS 120B divides its loss by the step's tokens (calculate_per_token_loss, every gradient
#     factor 1): v0.3.0 recipes/gpt_oss/gpt_oss.py:235 with CP > 1 (else averaging in the
#     collective, :292), v0.4.0-v0.6.0 gpt_oss.py:73 always, which no performance config of the
#     120B changes (v0.5.0 and v0.6.0 turn it off for the 20B only);
#   Nemotron 3 Nano: a per-token loss in 26.02.01 (v0.3.1 recipes/nemotronh/nemotron_3_nano.py:187),
#     _pretrain_common's averaging from 26.04 on; Nemotron 3 Super a per-token loss (v0.4.0-v0.6.0
#     nemotron_3_super.py:96 and :126); Nemotron 3.5 Lightning scales before the reduce-scatter
#     (v0.6.0 recipes/nemotronh/gb200/nemotron_3_nano.py:176).
BRIDGE_GRADIENT_SCALING = {
    ('26.08', 'deepseek-v3'): 'SCALE_BEFORE_REDUCE',
    ('26.08', 'deepseek-v4-flash'): 'SCALE_BEFORE_REDUCE',
    ('26.04', 'gpt-oss-120b'): 'PER_TOKEN_LOSS', ('26.06', 'gpt-oss-120b'): 'PER_TOKEN_LOSS',
    ('26.08', 'gpt-oss-120b'): 'PER_TOKEN_LOSS',
    ('26.02', 'nemotron3-nano-30b-a3b'): 'PER_TOKEN_LOSS',
    ('26.04', 'nemotron3-super-120b-a12b'): 'PER_TOKEN_LOSS',
    ('26.06', 'nemotron3-super-120b-a12b'): 'PER_TOKEN_LOSS',
    ('26.08', 'nemotron3-super-120b-a12b'): 'PER_TOKEN_LOSS',
    ('26.08', 'nemotron3.5-lightning-30b-a3b'): 'SCALE_BEFORE_REDUCE'}


def bridge_gradient_passes(release, model, cp):
    """The parallelism lines of a non-FSDP row's gradient-buffer passes (the rule above)."""
    if release.startswith('NeMo') or release == 'Megatron-LM':
        return NEMO2_GRADIENT_PASSES
    scaling = BRIDGE_GRADIENT_SCALING.get((release, model), 'AVERAGE_IN_COLLECTIVE')
    if release == '26.02' and model == 'gpt-oss-120b' and cp > 1:
        scaling = 'PER_TOKEN_LOSS'
    return [] if scaling == 'SCALE_BEFORE_REDUCE' else [f'gradient_scaling: {scaling}']


def bridge_release(r):
    """The BRIDGE_RELEASES key of a row, or None."""
    if r['release'].startswith('Megatron-LM'):
        return 'Megatron-LM'
    for nemo in ('NeMo 25.02', 'NeMo 25.04', 'NeMo 25.07'):
        if r['release'].startswith(nemo):
            return nemo
    return r['release'][:5] if r['release'][:5] in BRIDGE_RELEASES else None


def bridge_precision(text):
    """The table's precision: BF16, FP8, MXFP8 or NVFP4; None for what is not simulated: the
    parenthesised alternative quantization granularity (not named on the page)."""
    if text.startswith('NVFP4'):
        return 'NVFP4'
    if text.startswith('BF16'):
        return 'BF16'
    if text.startswith('MXFP8'):
        return 'MXFP8'
    if text.startswith('FP8') and 'alt' not in text:
        return 'FP8'
    return None


# The FLOPs formula of a row's TFLOP/s. Megatron-Bridge v0.3.x-v0.4.x (the 26.02-26.04.01 releases;
# src/megatron/bridge/training/utils/flop_utils.py num_floating_point_operations) counts every
# layer's attention over s/2 keys whatever its window, a gated MLP as three matrices only when its
# activation_func is F.silu and no router; v0.5.0 on (26.06) counts the window's band and three
# matrices for any gated MLP. The two differ beyond the router's 2 h E (under 0.3%) only for a
# sliding window or a gate other than SiLU: gpt-oss (window 128 on half its layers; quick_gelu,
# glu_gate_sigmoid_scale 1.702), whose 26.02-26.04.01 rows print 27.2 GFLOP a token (219 TFLOP/s
# at 8,047 tokens/s on DGX-B200 26.02) against the 32.6 of its 26.06 and 26.08 rows (943 at 28,947
# on GB200 26.06). Those rows take MODEL_FLOPS_CAUSAL_BRIDGE_V03; the other rows of those releases
# keep MODEL_FLOPS_CAUSAL.
# Hybrid Mamba-Transformer rows (BRIDGE_HYBRID_MODELS) take MODEL_FLOPS_CAUSAL_BRIDGE_HYBRID, the
# formula of flop_utils.py's is_hybrid_model branch (hybrid_flops): the same in v0.4.0 to v0.6.0
# (26.04 to 26.08) for these models (v0.5.0 adds Gated DeltaNet layers, v0.6.0 sliding windows
# and packed sequences' lengths, none in these rows), and in v0.3.x (26.02.x) but for multi-token
# prediction, which v0.3.x leaves out and v0.4.0 on counts (the MTP pattern's layers x mtp depths,
# logits x (1 + depths)).
# It counts a Mamba layer's inner width as 2 h (Nano's mixers are 64 x 64 = 4,096 wide, 2 h =
# 5,376) and Super's two MTP passes: 22.28 GFLOP a token for Nano (849 TFLOP/s at 38,102
# tokens/s on GB300 26.04), 84.73 for Super (783 at 9,243), 28.15 for Lightning (807 at 28,672 on
# GB200 26.08); every hybrid row's TFLOP/s over its tokens/s is within 1.3% of these (the rows'
# own scatter: 22.09 to 22.56 for Nano, 84.31 to 85.23 for Super). No 26.02.x row trains
# multi-token prediction (BRIDGE_HYBRID_MTP_MODELS).
BRIDGE_V03_RELEASES = ('26.02', '26.04')
BRIDGE_V03_FLOPS_MODELS = {'gpt-oss-120b'}
BRIDGE_HYBRID_MTP_MODELS = {'nemotron3-super-120b-a12b', 'nemotron3.5-lightning-30b-a3b'}


def bridge_flops_convention(release, model, causal, hybrid):
    """The row's published.flops_convention (above)."""
    if not causal:
        return 'MODEL_FLOPS'
    if model == 'deepseek-v4-flash':
        return 'MODEL_FLOPS_CAUSAL_BRIDGE_DSV4'
    if hybrid:
        if release.startswith('26.02') and model in BRIDGE_HYBRID_MTP_MODELS:
            raise ValueError(f'{release} {model}: v0.3.x counts no multi-token prediction')
        return 'MODEL_FLOPS_CAUSAL_BRIDGE_HYBRID'
    if release.startswith(BRIDGE_V03_RELEASES) and model in BRIDGE_V03_FLOPS_MODELS:
        return 'MODEL_FLOPS_CAUSAL_BRIDGE_V03'
    return 'MODEL_FLOPS_CAUSAL'


def bridge(rows, out):
    for r in rows:
        release = bridge_release(r)
        system = 'DGX-H100' if release == 'Megatron-LM' else r['system']
        precision = bridge_precision(r['precision'])
        dense = r['ep'] in ('', 'n/a', '1', '-')
        hybrid = r['model'] in BRIDGE_HYBRID_MODELS
        moe = r['model'] in BRIDGE_MOE_MODELS or hybrid
        alternative = (precision is None and r['variant'] == 'parenthesized' and not moe
                       and system in BRIDGE_ALTERNATIVE_MXFP8.get(release, ()))
        if alternative:
            precision = 'MXFP8'
        if (r['fully_specified'] != 'yes' or not (dense or moe) or release is None
                or (precision == 'NVFP4' and (moe or release not in NVFP4_WEIGHTS)
                    and not nemotron_3_super_nvfp4(release, BRIDGE_HYBRID_MODELS.get(r['model']),
                                                   precision))
                or precision is None or system not in BRIDGE_SYSTEMS
                or r['model'] not in BRIDGE_MODELS and not moe
                or r['table'] not in ('pretrain', 'finetune_sft', 'finetune_lora')
                or (r['table'] == 'finetune_lora' and release not in BRIDGE_LORA)
                or bridge_left_out(r, system, precision)):
            continue
        recipe, fp8_recipe, fp8_text = BRIDGE_RELEASES[release]
        if precision == 'MXFP8':
            fp8_recipe = 'MXFP8'
            fp8_text = ('MXFP8 (the ' + ('parenthesised figure, below' if alternative else
                                          'table says so') +
                        '; get_precision_config("fp8_mx"), MXFP8BlockScaling)')
        model = (BRIDGE_HYBRID_MODELS[r['model']] if hybrid else
                 BRIDGE_MOE_MODELS[r['model']] if moe else BRIDGE_MODELS[r['model']])
        instance, per_node, cluster_extra = BRIDGE_SYSTEMS[system]
        gpus, tp, pp, cp = int(r['num_gpus']), int(r['tp']), int(r['pp']), int(r['cp'])
        if system in NVL72_SYSTEMS:
            check_nvl72_segment(gpus // per_node, f"{r['release']} {r['model']} on {gpus} {system}")
        vp = int(r['vp']) if r['vp'].isdigit() else 1
        fsdp = r['fsdp'] not in ('', '0')
        sp = 'true' if tp > 1 else 'false'
        lines = [f'tensor_parallel: {tp}', f'pipeline_parallel: {pp}', f'context_parallel: {cp}',
                 f'micro_batch_size: {bridge_micro_batch(r, alternative)}', f'sequence_parallel: {sp}',
                 'gradient_reduce_in_fp32: false', 'rank_order: TP_DP_PP']
        if vp > 1:
            lines += ['schedule: INTERLEAVED_ONE_F_ONE_B', f'virtual_stages: {vp}']
        muon = model == 'kimi-k2'
        hybrid_fsdp = BRIDGE_HYBRID_FSDP.get((release, model))
        if not muon:
            lines += ['zero_stage: 3'] if fsdp or hybrid_fsdp else ['distributed_optimizer: true']
        if hybrid_fsdp:
            lines += ['fsdp2: true', f'data_parallel_shard: {hybrid_fsdp // (tp * cp)}',
                      'shard_optimizer_across_replicas: true']
        elif not fsdp:
            lines += bridge_gradient_passes(release, model, cp)
        if (tp > 1 and precision != 'NVFP4'
                and (system, precision, model) not in BRIDGE_MOE_NO_TP_OVERLAP.get(release, ())):
            lines.append('overlap_tensor_communication: true')
        if precision == 'NVFP4' and (r['release'], system, model) in NVFP4_NO_GATHER_OVERLAP:
            lines.append('overlap_parameter_gather: false')
        if moe:
            lines += [f'expert_parallel: {r["ep"]}', 'expert_tensor_parallel: 1']
            if (system, precision, model) in BRIDGE_MOE_OVERLAP.get(release, ()):
                lines.append('overlap_expert_communication: true')
                sms = bridge_dispatcher_sms(release, r['release'], system, precision, model,
                                            r['ep'])
                if sms:
                    lines.append(f'expert_communication_sms: {sms}')
            if (system, precision, model) in BRIDGE_MOE_GRAPHS.get(release, ()):
                lines.append('cuda_graphed_expert_layers: true')
            if (system, precision, model) in BRIDGE_FUSED_GROUPED_MLP.get(release, ()):
                lines.append('fused_expert_mlp: true')
            if (system, precision, model) in BRIDGE_PAGED_STASH.get(release, ()):
                lines.append('expert_paged_stash: true')
            if bridge_flex_dispatcher(release, r['release'], system, precision, model, r['ep']):
                lines.append('expert_dispatcher: EXPERT_NODE_DEDUPLICATED')
            if bridge_hybridep(release, r['release'], system, precision, model, r['ep']):
                lines.append(f'expert_combine_sms: {HYBRIDEP_SMS}')
        lines += bridge_model_lines(r, release, system, model, precision)
        deferral = bridge_output_wgrad_deferral(release, r['table'], model, pp, fsdp)
        if deferral:
            lines += ['defer_output_weight_gradient: true',
                      f'output_weight_gradient_deferral_limit: {deferral}']
        offload = bridge_offload_layers(r, system) if fsdp else None
        if offload:
            lines.append(f'activation_offload_layers: {offload}')
        if model in ('llama3-405b', 'qwen3-235b-a22b'):
            lines += ['embedding_in_pipeline_split: true', 'loss_in_pipeline_split: true']
        fp8_line = (f'\n  fp8_recipe: {fp8_recipe}' + ('' if muon else '\n  fp8_parameters: true')
                    if precision in ('FP8', 'MXFP8') else '')
        if (system, precision, model) in BRIDGE_FP8_ATTENTION.get(release, ()):
            fp8_line += '\n  fp8_attention: true'
        job_precision = {'BF16': 'BF16', 'NVFP4': 'FP4'}.get(precision, 'FP8')
        routing_line = (f'\n  {TOKEN_DROP_ROUTING}'
                        if moe and bridge_token_drop(r, model) else '')
        extra_rules = ''
        lora = r['table'] == 'finetune_lora'
        lora_line = ''
        if lora:
            lora_recipe, rank, targets = BRIDGE_LORA[release]
            lora_line = (f'\n  lora {{ rank: {rank} ' +
                         ' '.join(f'target_modules: {x}' for x in targets) + ' }')
            extra_rules = '\n' + BRIDGE_LORA_RULES.format(recipe=lora_recipe, rank=rank,
                                                           targets=', '.join(targets))
        if alternative:
            extra_rules = '\n' + ALTERNATIVE_RULES.format(recipe=recipe.split()[0])
        if fsdp:
            extra_rules += '\n' + FSDP_RULES
        if offload:
            flag = ('activation_offload_layers' if release.startswith('NeMo')
                    else 'cpu_offloading_num_layers')
            extra_rules += '\n' + OFFLOAD_RULES.format(recipe=recipe, flag=flag, layers=offload)
        if nemotron_3_super_nvfp4(release, model, precision):
            super_recipe, te = NEMOTRON_3_SUPER_NVFP4[release]
            fp8_line = '\n  fp8_recipe: NVFP4' + NEMOTRON_3_SUPER_NVFP4_OVERRIDES
            extra_rules = '\n' + NEMOTRON_3_SUPER_NVFP4_RULES.format(recipe=super_recipe, te=te)
        elif precision == 'NVFP4':
            nvfp4_recipe, fp4_parameters, weights = NVFP4_WEIGHTS[release]
            fp8_line = '\n  fp8_recipe: NVFP4'
            fp8_line += '\n  fp8_parameters: true' if fp4_parameters else ''
            te, unfused_cast = NVFP4_TRANSFORMER_ENGINE[release]
            fp8_line += '\n  fp4_unfused_hadamard_cast: true' if unfused_cast else ''
            extra = ('\n#   The parameter gather not overlapped (v0.4.2 and v0.5.0 '
                     'llama31_405b_pretrain_config_gb200:\n#   disable_param_gather_overlap for '
                     'nvfp4 V2, a peak-memory workaround).'
                     if (r['release'], system, model) in NVFP4_NO_GATHER_OVERLAP else '')
            extra_rules = '\n' + NVFP4_RULES.format(
                recipe=nvfp4_recipe, weights=weights,
                casts=NVFP4_CAST_RULES[unfused_cast].format(te=te), extra=extra)
        te_loss = te_cross_entropy(release, r['table'], model)
        if te_loss:
            extra_rules += '\n' + TE_CROSS_ENTROPY_RULE
        if deferral:
            extra_rules += '\n' + OUTPUT_WGRAD_DEFERRAL_RULE.format(limit=deferral, recipe=recipe)
        causal = not r['release'].startswith(('NeMo 25.0', 'Megatron-LM'))
        label = release if release.startswith(('Megatron-LM', 'NeMo')) else r['release']
        variant = bridge_variant(r)
        tag = re.sub(r'[^a-z0-9.]+', '-',
                     f'{label} {r["table"]} {model}{variant} {gpus}'.lower())
        # MoE, hybrid and LoRA scenarios apart (bridge-moe-*, bridge-hybrid-*, bridge-lora-*): the
        # dense groups' guards glob bridge-<system>-*; a check system's as bridge-check-*, which no
        # fit's glob reaches.
        kind = 'hybrid-' if hybrid else 'moe-' if moe else 'lora-' if lora else ''
        check = system in CHECK_SYSTEMS
        name = f'bridge-{"check-" if check else ""}{kind}{system.lower()}-{precision.lower()}-{tag}'
        step = (int(r['global_batch']) * int(r['seq_len']) /
                (float(r['tokens_per_s_per_gpu']) * gpus))
        # DeepSeek V4 Flash's rows in groups of their own: its attention is its own step's.
        family = (' hybrid' if hybrid else ' DeepSeek V4' if model == 'deepseek-v4-flash'
                  else ' MoE' if moe else '')
        group = (f'{system} {precision} LoRA (Megatron-Bridge)' if lora else
                 f'{system} {precision}{family} check, not fitted (Megatron-Bridge, NeMo)' if check
                 else f'{system} {precision}{family} (Megatron-Bridge, NeMo)')
        if check:
            extra_rules += '\n' + CHECK_RULES
        text = f"""# {r['release']} {r['table']}: {r['model']} on {gpus} {system} GPUs, {r['precision']}.
# Generated by tools/make_validation_scenarios.py from the reference data's megatron_bridge_nemo.csv.
{BRIDGE_RULES.format(recipe=recipe, fp8=fp8_text)}{extra_rules}{chr(10) + BRIDGE_MOE_RULES if moe else ''}{chr(10) + BRIDGE_MODEL_RULES[model] if model in BRIDGE_MODEL_RULES else ''}
name: "{name}"
model: "{model}"
job {{
  global_batch_size: {r['global_batch']}
  sequence_length: {r['seq_len']}
  precision: {job_precision}{fp8_line}
  optimizer: {"MUON" if muon else "ADAM"}
  steps: 1{routing_line}{lora_line}{chr(10) + '  transformer_engine_cross_entropy: true' if te_loss else ''}
}}
cluster {{ instance: "{instance}" nodes: {gpus // per_node} fabric: "ib-rail-optimized"{cluster_extra} }}
parallelism {{
  {chr(10).join('  ' + x for x in lines).strip()}
}}
""" + published(group, r['model_tflops_per_gpu'],
                  bridge_flops_convention(r['release'], model, causal, hybrid),
                  r['source'].replace('"', "'"), tokens=r['tokens_per_s_per_gpu'])
        text += f'# published step time (derived): {step:.3f} s\n'
        write_scenario(out, name, text)


AUTOMODEL_RULES = """# NeMo AutoModel rows (PyTorch-native training, not Megatron-Core), one rule for all of them: the
#   benchmark recipe the page links for the row (NVIDIA-NeMo/Automodel @ 36044ad3
#   docs/performance-summary.mdx, examples/llm_benchmark/{yaml}), whose distributed block sets
#   strategy fsdp2: every transformer layer one fully_shard module over the FSDP (data x context)
#   ranks (zero_stage 3 with fsdp2: one all-gather of the layer's BF16 weights before its forward,
#   the next one prefetched, one before its backward, one reduce-scatter of its gradients after),
#   gradients reduced in the default MixedPrecisionPolicy's reduce_dtype of the commit that
#   published the row (param_dtype bfloat16 throughout): bfloat16 for the dense rows
#   (components/distributed/fsdp2.py FSDP2Manager @ 507bfb75, components/distributed/config.py
#   @ 2013a4dd; NVIDIA-NeMo/Automodel#2237 of 2026-05-14 made it float32), float32 for the
#   mixture-of-experts rows (components/moe/parallelizer.py apply_fsdp), reduce-scattered every
#   micro-batch (defer_fsdp_grad_sync False, the recipes' setting or default); activation
#   checkpointing where the recipe sets activation_checkpointing (RECOMPUTE_FULL; the 1-GPU LoRA
#   recipes leave it at its default, False), every such recipe also setting enable_compile
#   (components/distributed/parallelizer.py @ 2013a4dd: NO_REENTRANT checkpoint wrappers on each
#   layer's self_attn and mlp, then torch.compile of each decoder layer, whose joint forward and
#   backward graph recomputes only what the backward reads: compiled_recompute); sequence
#   parallelism and asynchronous tensor parallelism (overlap_tensor_communication) where the
#   recipe sets sequence_parallel and enable_async_tensor_parallel; context parallelism as
#   PyTorch's ring attention with cp_rotate_method "allgather"
#   (components/distributed/context_parallel/sharder.py: keys and values all-gathered, then
#   torch's _templated_ring_attention, as torchtitan runs it: TORCH_ALL_GATHER), tensor ranks innermost, then context, then data (the device
#   mesh's order, TP_DP_PP); Adam (torch.optim.Adam / AdamW, Transformer Engine's FusedAdam);
#   the loss as the recipe's loss_fn, MaskedCrossEntropy (components/loss/masked_ce.py at
#   89e3a9fd, bb0c0bfb0 and 36044ad3: F.cross_entropy, PyTorch's log_softmax and nll_loss), on an
#   fp32 copy of the logits (fp32_upcast, True by default: the dense recipes set nothing) or on
#   the 16-bit logits where the recipe sets fp32_upcast false (every mixture-of-experts recipe):
#   job torch_cross_entropy FP32_UPCAST or SIXTEEN_BIT_LOGITS.
#   The dense models as the publishing commit builds them, q, k, v and gate, up as separate
#   projections (job separate_projections) in both: at 507bfb75 (the 1-GPU LoRA rows) transformers'
#   LlamaForCausalLM and Qwen2ForCausalLM (AutoModel's registry held neither custom model until
#   272c9d74b; the recipes' later force_hf keeps them there), whose attn_implementation default
#   "flash_attention_2" ran the flash-attn package's kernels (a missing package is an ImportError
#   AutoModel does not retry: job attention_library FLASH_ATTENTION_2); since 2013a4dd
#   (the other dense rows) AutoModel's own Llama and Qwen2 (components/models/llama/model.py,
#   qwen2/model.py), attention as the recipe or the default attention functions pick (left at
#   the simulator's default: whether the base image ships flash-attn was not read).
#   LoRA rows: peft match_all_linear (every attention and MLP projection: QKV, output, FC1, FC2,
#   or each of q, k, v, gate, up with separate projections; not lm_head), dim 16 (alpha 32, a
#   scale that costs nothing), the base frozen, the recipe's peft
#   dropout on each adapter's output where it sets one (dropout_position "post"). Not simulated,
#   left as they are: torch.compile's kernel fusion, the triton LoRA kernels (use_triton), the
#   activation memory of the compiled layers (the blocks' saved inputs), the fp32 RMSNorm of
#   the pretrain recipe (rms_norm torch_fp32) and the recipe's backward prefetch depth of 2
#   (fsdp2_backward_prefetch_depth; one layer is prefetched either way here). TFLOP/s as the
#   benchmark counts them (recipes/llm/benchmark.py): causal model FLOPs of full training, under
#   LoRA times (2 + adapter / frozen parameters) / 3 (MODEL_FLOPS_CAUSAL_PEFT_SCALED)."""

# The AutoModel rows' models and recipes (examples/llm_benchmark/ at the commit above), by the
# table's (table, model, GPUs): (model, recipe YAML, activation checkpointing, sequence parallel,
# async TP, the peft block's dropout: 0.1 in the Llama 3.1 8B recipe, 0.0 in the Qwen2.5 7B one
# and PeftConfig's default 0.0 in the others, which set none; Hugging Face's model with
# FlashAttention-2: the 1-GPU rows of 507bfb75, AUTOMODEL_RULES).
# Llama3 8B is Llama-3.1-8B, the LoRA Llama3 70B Llama-3.3-70B-Instruct and the
# pretrain one Llama-3.1-70B (the Llama 3 shapes); Qwen2.5 32B is Qwen2.5-32B-Instruct.
AUTOMODEL_ROWS = {
    ('pretrain', 'Llama3 70B', 64): (
        'llama3-70b', 'llama3_3/custom_llama3_1_70b_pretrain_benchmark_8nodes.yaml', True, False,
        False, 0, False),
    ('finetune_lora', 'Llama3 8B', 1): (
        'llama3-8b', 'llama3_1/llama3_1_8b_peft_benchmark.yaml', False, False, False, 0.1,
        True),
    ('finetune_lora', 'Qwen2.5 7B', 1): (
        'qwen2.5-7b', 'qwen/qwen2_5_7b_peft_benchmark.yaml', False, False, False, 0, True),
    ('finetune_lora', 'Llama3 70B', 8): (
        'llama3-70b', 'llama3_3/custom_llama3_3_70b_instruct_peft_benchmark.yaml', True, True, True,
        0, False),
    ('finetune_lora', 'Qwen2.5 32B', 8): (
        'qwen2.5-32b', 'qwen/custom_qwen2_5_32b_peft_benchmark.yaml', True, False, False, 0, False),
    ('finetune_lora', 'Llama3 70B 2-node', 16): (
        'llama3-70b', 'llama3_3/custom_llama3_3_70b_instruct_peft_benchmark_2nodes.yaml', True,
        True, True, 0, False),
    ('finetune_lora', 'Qwen2.5 32B 2-node', 16): (
        'qwen2.5-32b', 'qwen/custom_qwen2_5_32b_peft_benchmark_2nodes.yaml', True, False, False,
        0, False),
}
AUTOMODEL_MOE_RULES = """# Mixture-of-experts rows, one more rule for all of them (the recipe YAML the page links, read at
#   the commit above): expert parallelism engages AutoModel's MoE parallelizer
#   (_transformers/infrastructure.py: parallelize_model whenever ep_size > 1;
#   components/moe/parallelizer.py apply_fsdp): the routed experts of each layer one fully_shard
#   module over the expert data-parallel ranks (the moe mesh's ep_shard axis, dp x cp / EP; none
#   where that is 1: each GPU then holds its experts whole, left out of FSDP), the rest of the
#   block one over the data x context ranks (zero_stage 3 with fsdp2: the experts' gathers and
#   reduce-scatters over their group beside the rest's); EP as the table gives it, or where the
#   table has none the recipe's ep_size (the page's kernel column says DeepEP for these rows, which
#   dispatches over an expert-parallel group); the expert-parallel ranks innermost (the moe mesh
#   (ep_shard, ep) unflattened from the non-pipeline ranks); the dispatcher, "deepep" or
#   "hybridep", deduplicating tokens per node (EXPERT_NODE_DEDUPLICATED), the experts' grouped
#   GEMMs ("gmm" or "torch_mm"), each one launch for all the GPU's experts after the dispatcher's
#   one host synchronisation (single_launch_grouped_experts: GroupedExpertsDeepEP,
#   components/moe/experts.py @ bb0c0bfb0: ops.gmm with the tokens per expert a host tensor, no
#   Python per local expert), the fake balanced gate (fake_balanced_gate, noise 0:
#   components/moe/layers.py FakeBalancedGate gives token t of a rank's batch experts t k .. t k +
#   k - 1 modulo E, every expert the mean load, a token's experts on one or a few neighbouring
#   ranks, which the dispatcher sends it to once each: expert_routing consecutive_experts); BF16
#   parameters stepped
#   by torch.optim.Adam, its moments in BF16 too, no fp32 master copy (sixteen_bit_states: the
#   recipes build the model with from_config, whose torch_dtype "auto" is bfloat16
#   (_transformers/auto_model.py), and torch.optim keeps its states in the parameter's dtype;
#   MoEConfig's experts in bfloat16 too); the forward's gather kept
#   for the backward (fsdp2_keep_forward_gather) unless the recipe sets moe.reshard_after_forward
#   true (MoEParallelizerConfig's default false; gpt-oss-120b's run, whose recipe is the one
#   committed with the table's layout, examples/benchmark/configs/gptoss_120b_te_deepep.yaml @
#   bdb4dbc7, not 36044ad3's with LBS 1, sets it true and no FSDP optimizations); nothing
#   resharded nor reduced between
#   micro-batches (fsdp2_defer_gradient_sync) where the backend sets enable_fsdp_optimizations
#   (moe/fsdp_mixin.py prepare_for_grad_accumulation) and the pipeline is not parallel; under a
#   pipeline every micro-batch's backward reduce-scatters and reshards each layer, the stream
#   waiting for the reductions at its end (the rows' publishing commit 89e3a9fd: apply_fsdp
#   shards the blocks, embed_tokens, lm_head and the inner model.model, never the stage's outer
#   causal-LM module, so torch.distributed.pipelining's stage.py backward_maybe_with_nosync, whose
#   no-sync branch needs isinstance(submod, FSDPModule), runs a plain backward: FSDP2's defaults,
#   requires_gradient_sync and reshard_after_backward true, is_last_backward true, whose
#   _root_post_backward_final_callback waits on the reduce-scatter's event; AutoModel's
#   MoEFSDPSyncMixin and patched backward_maybe_with_nosync, which defer it on the inner modules,
#   came with #574, 2025-10-08, after the rows), and at that commit the routed experts' FSDP
#   module, where expert data parallelism shards them, reducing in the weights' BF16
#   (fsdp2_expert_reduce_in_weight_type: apply_fsdp's fully_shard of the experts takes no
#   mp_policy, the blocks' reduce_dtype float32);
#   activation checkpointing where the recipe sets it, each block checkpointed whole, not compiled
#   (apply_ac: ptd_checkpoint_wrapper per block; RECOMPUTE_FULL); a row whose figure the page
#   published before its recipe changed runs the recipe and code of the commit that published it:
#   gpt-oss-20b's 10.04 s is on the page since its first version (docs/performance-summary.md of
#   89e3a9fd, #562, 2025-10-06; the row unchanged to 36044ad3, where Qwen3's was re-measured at
#   8d9bfb90e), whose examples/benchmark/configs/gptoss_20b_te_deepep.yaml (79d0ccfdb, the table's
#   GBS 256, LBS 2, EP 8) sets parallelizer.activation_checkpointing true (false only from
#   8df18da35, #613, 2025-11-10, which left the figure as it was), and whose
#   moe/parallelizer.py apply_fsdp reshards after every forward without a pipeline
#   (reshard_after_forward=not pp_enabled) and reduces every micro-batch (recipes/llm/train_ft.py
#   get_sync_ctx sets set_requires_gradient_sync on an FSDP module only, and model_parts[0], the
#   outer GptOssForCausalLM, is none); the pipeline as the table gives
#   it, interleaved 1F1B (pp_schedule interleaved1f1b) over PP x VP virtual stages split as
#   generate_hf_model_split does (components/distributed/pipelining/functional.py: num_layers //
#   stages each, one more on the first num_layers % stages; stage_layers), run as the table's GA
#   pipeline schedules a step (pipeline_runs: the benchmark recipe, recipes/llm/benchmark.py at
#   the page's commit 89e3a9fd, calls the schedule's step() once per local batch of LBS / MBS
#   micro-batches, GBS / (LBS x DP) times a step, each filling and draining the pipeline), each
#   rank's compute stream waiting, after every action of the schedule, for
#   the batch of that time step's sends and receives (overlap_pipeline_communication false:
#   torch.distributed.pipelining schedules.py of torch 2.8, the version pinned at 89e3a9fd,
#   ScheduleInterleaved1F1B is a PipelineScheduleMulti, whose _step_microbatches puts the
#   action's get_fwd_send_ops / get_bwd_send_ops with the receives its neighbours' actions of the
#   same time step imply into one batch_isend_irecv and waits on it, _wait_batch_p2p, before the
#   next action; the waits on those receives, the neighbours' actions of that time step, are not
#   simulated); no multi-token-prediction
#   module trained (job multi_token_prediction_layers 0: AutoModel's DeepSeek-V3,
#   components/models/deepseek_v3/model.py, has none, at the page's date and at the commit above;
#   its Nemotron V3 model gained one with NVIDIA-NeMo/Automodel#2161 of 2026-05-13, after the
#   26.02 rows, and builds the HF config's shape otherwise); the hybrid models' Mamba-2 mixers as
#   AutoModel's NemotronV3Mamba2Mixer runs them (job mamba_fused_norm_projection:
#   components/models/nemotron_v3/layers.py at bb0c0bfb0 and c0e4fe1bc, the commits of the Nano
#   and Super rows: batch-major activations, mamba_ssm's mamba_split_conv1d_scan_combined given
#   the gated RMSNorm and out_proj, the scan without z); the shared experts, where the model has
#   them, on a CUDA stream of their own beside the routed experts' dispatch, GEMMs and combine
#   (parallelism shared_experts_side_stream: components/moe/layers.py MoE.forward,
#   _shared_experts_stream, at every commit of these rows). Not simulated, left as
#   they are: HybridEP's SM budget (dispatcher_num_sms), the attention backends (TE, flex)."""

# The AutoModel mixture-of-experts rows, by the table's (table, model, GPUs): (model, recipe YAML
# under examples/llm_benchmark/ @ 36044ad3, activation checkpointing, moe.reshard_after_forward,
# backend.enable_fsdp_optimizations (not on the pipeline rows, published at 89e3a9fd, before the
# option existed: AUTOMODEL_MOE_RULES), the recipe's ep_size; gpt-oss-120b's the run's recipe, the
# one of 2025-10-08 with the table's GBS 512, LBS 2, EP 64, and gpt-oss-20b's the one of the
# commit that published it, 89e3a9fd: AUTOMODEL_MOE_RULES; Nemotron V3 Ultra 550B's the one of
# cb976544, which published it: AUTOMODEL_ULTRA_RULES).
AUTOMODEL_MOE_ROWS = {
    ('pretrain', 'DeepSeek V3 671B', 256): (
        'deepseek-v3', 'deepseek/deepseek_v3_te_deepep.yaml', True, False, True, 64),
    # The 1024-GPU recipe of the commit above (deepseek_v3_te_deepep_1024.yaml: layers_per_stage
    # 4, 16 virtual stages, VP 4, no activation checkpointing) is not the run of the table's row
    # (VP 8): the 256-GPU recipe's pipeline is (layers_per_stage 2: 32 virtual stages on PP 4).
    ('pretrain', 'DeepSeek V3 671B', 1024): (
        'deepseek-v3', 'deepseek/deepseek_v3_te_deepep.yaml', True, False, True, 64),
    ('pretrain', 'Kimi K2', 256): (
        'kimi-k2', 'kimi/kimi_k2_te_deepep.yaml', True, False, False, 32),
    ('pretrain', 'Qwen3 MoE 30B', 8): (
        'qwen3-30b-a3b', 'qwen/qwen3_moe_30b_te_deepep.yaml', True, False, True, 8),
    # The recipe of the commit that published the row (AUTOMODEL_MOE_RULES): checkpointing, the
    # forward's gather resharded, every micro-batch reduced.
    ('pretrain', 'GPT-OSS 20B', 8): (
        'gpt-oss-20b', 'gpt_oss/gptoss_20b_te_deepep.yaml', True, True, False, 8),
    ('pretrain', 'GPT-OSS 120B', 64): (
        'gpt-oss-120b', 'gpt_oss/gptoss_120b_te_deepep.yaml', False, True, False, 64),
    ('pretrain', 'Nemotron V3 Nano 30B (26.02)', 8): (
        'nemotron3-nano-30b-a3b', 'nemotron/nemotron_nano_v3_te_deepep.yaml', True, False, True,
        8),
    ('pretrain', 'Nemotron V3 Super 120B (26.02)', 64): (
        'nemotron3-super-120b-a12b', 'nemotron/nemotron_super_v3_te_deepep.yaml', True, True,
        False, 64),
    ('pretrain', 'Nemotron V3 Ultra 550B (26.04)', 128): (
        'nemotron3-ultra-550b-a55b', 'nemotron/nemotron_ultra_v3_te_deepep.yaml', True, True,
        False, 64),
}
# The layers of each model, for the pipeline split (models/*.textproto num_layers).
AUTOMODEL_MOE_LAYERS = {'deepseek-v3': 61, 'kimi-k2': 61}
# The models with Mamba-2 layers (hybrid_layer_pattern 'M'): AutoModel's NemotronV3 mixer.
AUTOMODEL_MAMBA_MODELS = {'nemotron3-nano-30b-a3b', 'nemotron3-super-120b-a12b',
                          'nemotron3-ultra-550b-a55b'}
# The models with shared experts (models/*.textproto num_shared_experts): AutoModel's side stream.
AUTOMODEL_SHARED_EXPERT_MODELS = {'deepseek-v3', 'kimi-k2', 'nemotron3-nano-30b-a3b',
                                  'nemotron3-super-120b-a12b', 'nemotron3-ultra-550b-a55b'}
# The rows whose recipe trains the model's multi-token-prediction module and computes the loss with
# a fused linear cross entropy, by model (AUTOMODEL_ULTRA_RULES); every other MoE row trains none
# and takes MaskedCrossEntropy (AUTOMODEL_MOE_RULES).
AUTOMODEL_MTP_LINEAR_CE_MODELS = {'nemotron3-ultra-550b-a55b'}
AUTOMODEL_ULTRA_RULES = """# Nemotron V3 Ultra 550B (26.04), one more rule: the recipe and code of the commit that
#   published the row, NVIDIA-NeMo/Automodel@cb976544 (#2539, 2026-06-12:
#   examples/llm_benchmark/nemotron/nemotron_ultra_v3_te_deepep.yaml with the table's GBS 256,
#   local batch 2, EP 64, 16 nodes; at 36044ad3 the file has local batch 1, GBS 128 and HybridEP,
#   from 5e0ccc1ef of 2026-06-25): activation checkpointing, moe.reshard_after_forward true,
#   no enable_fsdp_optimizations (every micro-batch gathers and reduce-scatters), the DeepEP
#   dispatcher, torch_mm experts, the fake balanced gate, as the MoE rule says; the model's two
#   multi-token-prediction passes of its one "*E" module trained (num_nextn_predict_layers 2,
#   mtp_use_repeated_layer true: models/nemotron3.textproto), no multi_token_prediction_layers 0
#   as the 26.02 rows. Not simulated, left as it is: the loss_fn FusedLinearCrossEntropy
#   (components/loss/linear_ce.py: cut_cross_entropy's linear_cross_entropy, the logits made
#   block by block and never stored, remade in the backward), run as Megatron-Core's fused cross
#   entropy over the stored logits (job torch_cross_entropy unset)."""


def hf_model_split(layers, stages):
    """generate_hf_model_split's layers per virtual stage: the remainder on the first ones."""
    return [layers // stages + (1 if s < layers % stages else 0) for s in range(stages)]


def automodel_moe_lines(r, moe):
    """The parallelism lines of an AutoModel mixture-of-experts row (AUTOMODEL_MOE_RULES)."""
    model, _, _, reshard, deferred, recipe_ep = moe
    ep = int(r['ep']) if r['ep'] not in ('', '-') else recipe_ep
    lines = [f'expert_parallel: {ep}', 'expert_tensor_parallel: 1',
             'expert_dispatcher: EXPERT_NODE_DEDUPLICATED', 'single_launch_grouped_experts: true']
    if model in AUTOMODEL_SHARED_EXPERT_MODELS:
        lines.append('shared_experts_side_stream: true')
    if not reshard:
        lines.append('fsdp2_keep_forward_gather: true')
    pp = int(r['pp'])
    if deferred and pp == 1:
        lines.append('fsdp2_defer_gradient_sync: true')
    if pp > 1:
        lines.append('fsdp2_expert_reduce_in_weight_type: true')
        vp = int(r['vp'])
        split = hf_model_split(AUTOMODEL_MOE_LAYERS[model], pp * vp)
        runs = [f'pipeline_runs: {r["ga"]}'] if int(r['ga']) > 1 else []
        lines = [f'pipeline_parallel: {pp}', 'schedule: INTERLEAVED_ONE_F_ONE_B',
                 f'virtual_stages: {vp}',
                 f'stage_layers: [{", ".join(map(str, split))}]'] + runs + [
                     'overlap_pipeline_communication: false'] + lines
    return lines


AUTOMODEL_LORA = ('lora {{ rank: 16 target_modules: [LINEAR_QKV, LINEAR_PROJ, LINEAR_FC1, LINEAR_FC2]'
                  '{dropout} }}')


def automodel(rows, out):
    """The AutoModel (PyTorch FSDP2) rows of AUTOMODEL_ROWS and AUTOMODEL_MOE_ROWS, one rule for all
    (AUTOMODEL_RULES, and AUTOMODEL_MOE_RULES for the mixture-of-experts ones)."""
    for r in rows:
        if not r['release'].startswith('AutoModel'):
            continue
        key = (r['table'], r['model'], int(r['num_gpus']))
        moe = AUTOMODEL_MOE_ROWS.get(key)
        if key not in AUTOMODEL_ROWS and not moe:
            continue
        model, yaml, checkpointing, sp, async_tp, dropout, hugging_face = (
            moe[:3] + (False, False, 0, False) if moe else AUTOMODEL_ROWS[key])
        gpus, tp, cp = int(r['num_gpus']), int(r['tp']), int(r['cp'])
        lines = [f'tensor_parallel: {tp}', f'context_parallel: {cp}',
                 f'micro_batch_size: {r["micro_batch"]}', f'sequence_parallel: {str(sp).lower()}',
                 'zero_stage: 3', 'fsdp2: true',
                 f'gradient_reduce_in_fp32: {str(bool(moe)).lower()}', 'rank_order: TP_DP_PP']
        if cp > 1:
            lines.append('context_parallel_comm: TORCH_ALL_GATHER')
        if checkpointing:
            lines += ['recompute: RECOMPUTE_FULL'] + ([] if moe else ['compiled_recompute: true'])
        if async_tp:
            lines.append('overlap_tensor_communication: true')
        if moe:
            lines += automodel_moe_lines(r, moe)
        instance, per_node, _ = BRIDGE_SYSTEMS[r['system']]
        cluster = (f'nodes: {gpus // per_node}' if gpus >= per_node
                   else f'nodes: 1 gpus_per_node: {gpus}')
        lora = r['table'] == 'finetune_lora'
        lora_line = ('\n  ' + AUTOMODEL_LORA.format(dropout=f' dropout: {dropout}' if dropout else '')
                     if lora else '')
        mtp = model in AUTOMODEL_MTP_LINEAR_CE_MODELS
        states_line = ('\n  sixteen_bit_states: true\n  expert_routing { consecutive_experts: true }'
                       + ('' if mtp else '\n  multi_token_prediction_layers: 0') if moe else '')
        if model in AUTOMODEL_MAMBA_MODELS:
            states_line += '\n  mamba_fused_norm_projection: true'
        if not moe:
            states_line += '\n  separate_projections: true'
        if hugging_face:
            states_line += '\n  attention_library: FLASH_ATTENTION_2'
        loss = '' if mtp else ('\n  torch_cross_entropy: ' +
                               ('SIXTEEN_BIT_LOGITS' if moe else 'FP32_UPCAST'))
        tag = re.sub(r'[^a-z0-9.]+', '-', f'{r["table"]} {model} {gpus}'.lower())
        name = f'automodel-{r["system"].lower()}-bf16-{tag}'
        text = f"""# {r['release']} {r['table']}: {r['model']} on {gpus} {r['system']} GPUs, BF16, PyTorch FSDP2.
# Generated by tools/make_validation_scenarios.py from the reference data's megatron_bridge_nemo.csv.
{AUTOMODEL_RULES.format(yaml=yaml)}{chr(10) + AUTOMODEL_MOE_RULES if moe else ''}{chr(10) + AUTOMODEL_ULTRA_RULES if mtp else ''}
name: "{name}"
model: "{model}"
job {{
  global_batch_size: {r['global_batch']}
  sequence_length: {r['seq_len']}
  precision: BF16
  optimizer: ADAM
  steps: 1{states_line}{lora_line}{loss}
}}
cluster {{ instance: "{instance}" {cluster} fabric: "ib-rail-optimized" }}
parallelism {{
  {chr(10).join('  ' + x for x in lines).strip()}
}}
""" + published(f'{r["system"]} BF16 AutoModel{" MoE" if moe else ""} (FSDP2)',
                  r['model_tflops_per_gpu'],
                  'MODEL_FLOPS_CAUSAL_PEFT_SCALED', r['source'].replace('"', "'"),
                  r['step_time_s'], r['tokens_per_s_per_gpu'])
        write_scenario(out, name, text)


LONG_CONTEXT_RULES = (
    'Unknowns, one rule for every row of the table (the long-sequence page gives GPUs, batch, '
    'sequence, TP/PP/CP and TFLOP/s per GPU; the rest is the release\'s recipe, {recipe}): '
    'micro-batch 1 ({micro}); data parallel = GPUs / (TP x PP x CP){dp_note}; sequence '
    'parallelism wherever TP > 1 (NeMo\'s long-context recipes, llama3_8b_16k/64k/128k.py: '
    'sequence_parallelism=True{sp_note}); no tensor-parallel communication overlap ({tp_overlap}); '
    'context parallelism as Megatron-Core\'s peer-to-peer ring (cp_comm_type unset, its default '
    '"p2p", load-balanced causal chunks) and its rank order tp-cp-dp-pp (TP_DP_PP); no activation '
    'recomputation ({recompute}); the distributed optimizer with overlapped gradient '
    'reduce-scatter and parameter all-gather, gradients reduced in BF16 ({optimizer}); FP8 as '
    'per-tensor delayed scaling (fp8 hybrid, amax history 1024, max: {fp8}){fp8_params}; '
    'attention in BF16 (FP8 covers the GEMMs only in this release){attention}. TFLOP/s as {flops}: the '
    'attention\'s whole s x s scores (12 s h per token and layer, forward and backward), not the '
    'causal half.')

# Per table of the long-sequence page (megatron_bridge_nemo.csv pretrain_long_context_with_cp):
# its system, model, attention kernel library (job.attention_library; None: the default) and the
# recipe text that LONG_CONTEXT_RULES cites.
LONG_CONTEXT_TABLES = {
    'NeMo 24.03.01': dict(
        system='DGX-H100', model='llama2-7b-1m', fp8_parameters=False,
        recipe='NVIDIA/NeMo-Framework-Launcher 24.03.01 launcher_scripts/conf/training/llama/'
               'llama2_7b.yaml and examples/training/llama/h100/llama2_7b_fp8.sh',
        micro='llama2_7b.yaml: micro_batch_size: 1', dp_note='', printed_dp=False,
        sp_note='; llama2_7b.yaml defaults to sequence_parallel: false, set for its TP runs here',
        tp_overlap='llama2_7b.yaml: ub_tp_comm_overlap: False',
        recompute='llama2_7b.yaml: activations_checkpoint_granularity: null',
        optimizer='distributed_fused_adam with overlap_grad_sync and overlap_param_sync, '
                  ' llama2_7b_fp8.sh: grad_sync_dtype=bf16; Apex\'s DistributedFusedAdam zeroes '
                  'its buckets and averages in the reduce-scatter, ReduceOp.AVG with '
                  'average_grad_sync, its default',
        gradient_passes=['gradient_scaling: AVERAGE_IN_COLLECTIVE'],
        fp8='llama2_7b.yaml fp8_amax_history_len 1024, fp8_amax_compute_algo max, '
            'llama2_7b_fp8.sh fp8=True fp8_hybrid=True',
        fp8_params='; BF16 weights (no fp8_params in the launcher)',
        attention_library='FLASH_ATTENTION_2',
        attention=', by FlashAttention-2 (job.attention_library): the launcher\'s '
                  'launcher_scripts/conf/config.yaml (tag 24.03.01, 5c7e280a) sets env_vars '
                  'NVTE_FUSED_ATTN: 0 ("Disable cudnn FA until we\'ve tested it more"), so '
                  'Transformer Engine\'s 1.x DotProductAttention (v1.4 attention.py, 0fbc76af, as '
                  'v1.2-v1.6) runs flash-attn\'s kernels instead of cuDNN\'s, in every step of '
                  'its context-parallel ring too',
        flops='the launcher\'s auto_configurator/autoconfig/scripts/compare_throughput.py '
              'calculate_tflops counts them for llama, (24 B s h^2 + 4 B s^2 h) x 3 L + 6 B s h V'),
    'NeMo 25.04.rc2': dict(
        system='DGX-B200', model='llama3-8b-1m', fp8_parameters=True,
        recipe='NVIDIA/NeMo v2.3.0rc2 scripts/performance/llm/pretrain_llama3_8b.py with '
               'nemo/collections/llm/recipes/llama3_8b.py (performance mode)',
        micro='llama3_8b_16k/64k/128k.py: MockDataModule micro_batch_size=1',
        sp_note='',
        dp_note=('; not on this table, whose GPU column is 4 x TP x PP x CP x DP in every row, so '
                 'that DP = GPUs / (TP x PP x CP) would exceed the global batch at 512K and 1M: '
                 'the DP printed, on TP x PP x CP x DP GPUs'),
        printed_dp=True,
        tp_overlap='llama3_8b.py pretrain_performance_optimizations: '
                   'MegatronCommOverlapCallback(tp_comm_overlap=False)',
        recompute='no recompute settings in the recipe',
        optimizer='llama3_8b.py trainer: DistributedDataParallelConfig overlap_grad_reduce '
                  'and overlap_param_gather True; grad_reduce_in_fp32 = False; '
                  'check_for_nan_in_grad and average_in_collective True',
        gradient_passes=NEMO2_GRADIENT_PASSES,
        fp8='pretrain_llama3_8b.py: bf16_with_fp8_mixed(), this release\'s scripts have no '
            'other FP8 recipe',
        fp8_params='; FP8 weights (bf16_with_fp8_mixed: fp8_params = True)',
        attention_library=None, attention='',
        flops='nemo/utils/flops_formulas.py llama3() of this release counts them (the '
              'FLOPsMeasurementCallback\'s formula), 12 s / h in its bracket'),
}


def printed_dp(r):
    """The DP column of a long-sequence row, kept in its notes ('DP printed=N')."""
    return int(re.search(r'DP printed=(\d+)', r['notes']).group(1))


def long_context(rows, out):
    """The context-parallel rows of NeMo's long-sequence page, one rule per table above."""
    for r in rows:
        if r['table'] != 'pretrain_long_context_with_cp':
            continue
        release = r['release'].split(' (')[0]
        t = LONG_CONTEXT_TABLES[release]
        tp, pp, cp = int(r['tp']), int(r['pp']), int(r['cp'])
        gpus = tp * pp * cp * printed_dp(r) if t['printed_dp'] else int(r['num_gpus'])
        instance, per_node, _ = BRIDGE_SYSTEMS[t['system']]
        cluster = (f'nodes: {gpus // per_node}' if gpus >= per_node
                   else f'nodes: 1 gpus_per_node: {gpus}')
        lines = [f'tensor_parallel: {tp}', f'pipeline_parallel: {pp}', f'context_parallel: {cp}',
                 'micro_batch_size: 1', f'sequence_parallel: {"true" if tp > 1 else "false"}',
                 'context_parallel_comm: P2P', 'rank_order: TP_DP_PP',
                 'distributed_optimizer: true', 'gradient_reduce_in_fp32: false']
        lines += t['gradient_passes']
        fp8_line = '\n  fp8_parameters: true' if t['fp8_parameters'] else ''
        if t['attention_library']:
            fp8_line += f'\n  attention_library: {t["attention_library"]}'
        name = (f'nemo-longctx-{t["system"].lower()}-fp8-{release.split()[1]}-{t["model"]}-'
                f'{r["seq_len"]}')
        group = f'NeMo long-context CP ({t["system"]} FP8)'
        rules = '\n#   '.join(textwrap.wrap(LONG_CONTEXT_RULES.format(
            **{k: v for k, v in t.items()
               if k not in ('system', 'model', 'fp8_parameters', 'printed_dp', 'attention_library',
                            'gradient_passes')}),
            width=96, break_on_hyphens=False, break_long_words=False))
        text = f"""# {r['release']}: {r['model']} on {gpus} {t['system']} GPUs, FP8, sequence {r['seq_len']}.
# Generated by tools/make_validation_scenarios.py from the reference data's megatron_bridge_nemo.csv.
# {rules}
name: "{name}"
model: "{t['model']}"
job {{
  global_batch_size: {r['global_batch']}
  sequence_length: {r['seq_len']}
  precision: FP8
  fp8_recipe: DELAYED_SCALING{fp8_line}
  optimizer: ADAM
  steps: 1
}}
cluster {{ instance: "{instance}" {cluster} fabric: "ib-rail-optimized" }}
parallelism {{
  {chr(10).join('  ' + x for x in lines).strip()}
}}
""" + published(group, r['model_tflops_per_gpu'], 'MODEL_FLOPS', r['source'].replace('"', "'"))
        write_scenario(out, name, text)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    data = sys.argv[1]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scenarios', 'validation')
    os.makedirs(out, exist_ok=True)
    sc21(list(csv.DictReader(open(os.path.join(data, 'megatron_sc21.csv')))), out)
    readme_rows = list(csv.DictReader(open(os.path.join(data, 'megatron_readme.csv'))))
    mcore(readme_rows, out)
    readme_2021(readme_rows, out)
    bridge_rows = list(csv.DictReader(open(os.path.join(data, 'megatron_bridge_nemo.csv'))))
    bridge(bridge_rows, out)
    automodel(bridge_rows, out)
    long_context(bridge_rows, out)


if __name__ == '__main__':
    main()
