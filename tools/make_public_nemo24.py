#!/usr/bin/env python3
"""Writes scenarios/public_runs/nemo-24.07-*.textproto: the DGX-H100 FP8 pre-training rows of NeMo
24.07's performance summary, a public check outside the calibration (nothing is fitted on it).

Usage: python3 tools/make_public_nemo24.py [OUT_DIR]   (default scenarios/public_runs)

Source: NVIDIA/NeMo docs/source/performance/performance_summary.md at commit
8e3d65dcfe47 ("24.07 perf numbers", 2024-09-09; the table the user guide's 24.09 page
docs.nvidia.com/nemo-framework/user-guide/24.09/performance/performance_summary.html shows),
'Pretraining', Container NeMo24.07, System DGX-H100, FP8. The rows are written as the NeMo 25.02
rows of tools/make_validation_scenarios.py are (the dense rule of its bridge()), with what
NeMo 24.07's own recipe, the NeMo-Framework-Launcher training YAMLs at tag 24.07 (8325688d) and
the H100 FP8 scripts under its examples/training/, says where the two differ (RULES below). Rows the step cannot run as published are left out (LEFT_OUT).
"""
import textwrap

from public_runs import write_scenarios

SOURCE = ('github.com/NVIDIA/NeMo docs/source/performance/performance_summary.md @ '
          '8e3d65dcfe47 (24.07 perf numbers); table Pretraining, Container NeMo24.07, '
          'System DGX-H100, FP8')
GROUP = 'Public check: NeMo 24.07 (H100, FP8)'

# The table: model, GPUs, GBS, MBS, sequence, TP, PP, CP, VP, tokens/s/GPU, model TFLOP/s/GPU.
ROWS = [
    ('GPT3-5B', 64, 2048, 4, 2048, 1, 1, 1, 1, 23406, 765),
    ('GPT3-20B', 64, 256, 2, 2048, 2, 1, 1, 1, 5851, 750),
    ('GPT3-175B', 128, 256, 1, 2048, 4, 8, 1, 6, 716, 771),
    ('GPT3-175B', 512, 2048, 2, 2048, 4, 8, 1, 6, 825, 888),
    ('LLAMA2-7B', 8, 128, 1, 4096, 1, 1, 1, 1, 16934, 780),
    ('LLAMA2-13B', 16, 128, 1, 4096, 1, 4, 1, 10, 8715, 760),
    ('LLAMA2-70B', 64, 128, 1, 4096, 4, 4, 1, 20, 1728, 768),
    ('Nemotron-8B', 64, 256, 4, 4096, 2, 1, 1, 1, 12507, 643),
    ('Nemotron-22B', 64, 256, 2, 4096, 2, 4, 1, 10, 4312, 562),
    ('Nemotron-340B', 128, 32, 1, 4096, 8, 8, 1, 12, 326, 686),
    ('LLAMA3-8B', 8, 128, 1, 8192, 1, 1, 2, 1, 12273, 711),
    ('LLAMA3-70B', 64, 128, 1, 8192, 4, 4, 2, 5, 1524, 734),
]

# Table model -> (catalog model, launcher YAML under launcher_scripts/conf/training/ at tag 24.07).
MODELS = {'GPT3-5B': ('gpt3-5b', 'gpt3/5b.yaml'), 'GPT3-20B': ('gpt3-20b', 'gpt3/20b.yaml'),
          'GPT3-175B': ('gpt3-175b', 'gpt3/175b_fp8.yaml'),
          'LLAMA2-7B': ('llama2-7b', 'llama/llama2_7b.yaml'),
          'LLAMA2-13B': ('llama2-13b', 'llama/llama2_13b.yaml'),
          'LLAMA2-70B': ('llama2-70b', 'llama/llama2_70b.yaml'),
          'Nemotron-8B': ('nemotron-8b', 'nemotron/nemotron_8b.yaml'),
          'Nemotron-22B': ('nemotron-22b', 'nemotron/nemotron_22b.yaml'),
          'Nemotron-340B': ('nemotron4-340b', 'nemotron/nemotron_340b.yaml'),
          'LLAMA3-8B': ('llama3-8b', 'llama/llama3_8b.yaml'),
          'LLAMA3-70B': ('llama3-70b', 'llama/llama3_70b.yaml')}

# Rows left out, with why: none. LLAMA3-8B (TP 1 CP 2 on one DGX-H100) and GPT3-20B (TP 2 MBS 2 on
#   64) were, while the rule read only the YAMLs: under an fp32 gradient buffer they are 11.7 and
#   19.5 GiB over 80 GB in the memory model. The tag's H100 scripts reduce their gradients in BF16
#   (BF16_GRAD_SYNC), and so they fit. Apex's DistributedFusedAdam holds what the memory model counts
#   (results/validation.md, "Apex's DistributedFusedAdam", 2026-12-06).
LEFT_OUT = set()

# Per-model facts of the 24.07 launcher the rule uses:
#   gradients reduced in BF16: optim.grad_sync_dtype bf16 in the YAML (gpt3/175b_fp8.yaml,
#     nemotron/nemotron_340b.yaml), or the tag's H100 FP8 script for the model adds
#     +training.model.optim.grad_sync_dtype=bf16 (examples/training/gpt/h100/{5b_fp8_8node,
#     20b_fp8_8node,175b_fp8_16node}.sh and examples/training/llama/h100/{llama2_7b,llama2_13b,
#     llama2_70b,llama3_8b,llama3_70b}_fp8.sh, 17480c7d of 2024-07-23). Nemotron 8B and 22B: neither
#     their YAML nor their scripts (examples/training/nemotron/h100/nemotron_{8b,22b}_fp8.sh) set it,
#     so Apex's DistributedFusedAdam reduces in its dtype, fp32. Apex keeps its contiguous gradient
#     buffer in that type (apex@f9f19d5c distributed_fused_adam.py _init_grad_buffer).
BF16_GRAD_SYNC = {'gpt3-5b', 'gpt3-20b', 'gpt3-175b', 'llama2-7b', 'llama2-13b', 'llama2-70b',
                  'llama3-8b', 'llama3-70b', 'nemotron4-340b'}
#   The model's H100 FP8 script (for BF16_GRAD_SYNC's reason where the YAML does not say it).
SCRIPTS = {'gpt3-5b': 'gpt/h100/5b_fp8_8node.sh', 'gpt3-20b': 'gpt/h100/20b_fp8_8node.sh',
           'llama2-7b': 'llama/h100/llama2_7b_fp8.sh', 'llama2-13b': 'llama/h100/llama2_13b_fp8.sh',
           'llama2-70b': 'llama/h100/llama2_70b_fp8.sh', 'llama3-8b': 'llama/h100/llama3_8b_fp8.sh',
           'llama3-70b': 'llama/h100/llama3_70b_fp8.sh'}
#   cross_entropy_loss_fusion: true (llama/llama3_8b.yaml, llama3_70b.yaml, nemotron/nemotron_8b.yaml,
#     nemotron_22b.yaml); unset elsewhere.
FUSED_CROSS_ENTROPY = {'llama3-8b', 'llama3-70b', 'nemotron-8b', 'nemotron-22b'}
#   activations_checkpoint_granularity: selective (nemotron/nemotron_340b.yaml); null elsewhere.
SELECTIVE_RECOMPUTE = {'nemotron4-340b'}
#   optim.dtype: bf16 (nemotron/nemotron_340b.yaml): Apex's Adam states and parameter shard in BF16
#     (job.sixteen_bit_states; with fp32 states the layout would be 9.2 GiB over 80 GB); fp32
#     elsewhere.
BF16_STATES = {'nemotron4-340b'}

RULES = ("Unknowns, one rule for every row (the table gives GPUs, batch, sequence, TP/PP/CP/VP "
         "and tokens/s; the rest is NeMo 24.07's recipe, NVIDIA/NeMo-Framework-Launcher tag 24.07 "
         "launcher_scripts/conf/training/{yaml}, where it differs from the NeMo 25.02 rule of "
         "tools/make_validation_scenarios.py, whose other parts hold): sequence parallelism and "
         "Transformer Engine's tensor-parallel overlap wherever TP > 1 (the YAMLs ship a "
         "userbuffers config for every H100 TP > 1 layout, as 25.02's); the distributed optimizer "
         "(Apex distributed_fused_adam) with overlapped gradient reduce-scatter and parameter "
         "all-gather (overlap_grad_sync, overlap_param_sync){states}, its buckets zeroed each "
         "step and averaged in the reduce-scatter (ReduceOp.AVG under average_grad_sync, its "
         "default: gradient_scaling AVERAGE_IN_COLLECTIVE); gradients reduced in "
         "{grad} ({grad_why}); {recompute}; FP8 as per-tensor delayed scaling (fp8_hybrid, amax history "
         "1024: the YAMLs' fp8 knobs) with 16-bit weights cast once per step (no YAML of the tag "
         "but the MLPerf ones, and none of its H100 scripts, sets fp8_params); {ce}; context parallelism peer to peer and Megatron-Core's rank order "
         "tp-cp-dp-pp (TP_DP_PP). Scored on step time: global batch x sequence / (tokens/s per "
         "GPU x GPUs).")


def scenario(row):
    name, gpus, gbs, mbs, seq, tp, pp, cp, vp, tokens, tflops = row
    model, yaml = MODELS[name]
    bf16_grad = model in BF16_GRAD_SYNC
    rules = RULES.format(
        yaml=yaml, grad='BF16' if bf16_grad else 'fp32',
        states=(', its Adam states in BF16 (optim.dtype: bf16: job.sixteen_bit_states)'
                if model in BF16_STATES else ''),
        grad_why=('the tag\'s examples/training/' + SCRIPTS[model] + ' adds '
                  '+training.model.optim.grad_sync_dtype=bf16' if model in SCRIPTS else
                  'optim.grad_sync_dtype: bf16' if bf16_grad else
                  'optim.grad_sync_dtype unset, in the YAML and the tag\'s H100 scripts: Apex '
                  'DistributedFusedAdam reduces in its fp32 dtype'),
        recompute=('selective activation recomputation (activations_checkpoint_granularity: '
                   'selective)' if model in SELECTIVE_RECOMPUTE else
                   'no activation recomputation (activations_checkpoint_granularity null)'),
        ce=('the loss as the fused cross entropy (cross_entropy_loss_fusion: true)'
            if model in FUSED_CROSS_ENTROPY else
            'the loss as the unfused cross entropy (cross_entropy_loss_fusion unset: '
            'Megatron-Core\'s default False; job.unfused_cross_entropy)'))
    step = gbs * seq / (tokens * gpus)
    lines = [f'# NeMo 24.07 pretrain: {name} on {gpus} DGX-H100 GPUs, FP8 (NeMo 1.0, launcher).',
             '# Generated by tools/make_public_nemo24.py from NeMo 24.07\'s performance summary.',
             '\n'.join(textwrap.wrap(rules, 100, initial_indent='# ',
                                      subsequent_indent='#   ')),
             f'name: "nemo-24.07-h100-fp8-{model}-{gpus}"',
             f'model: "{model}"',
             'job {',
             f'  global_batch_size: {gbs}',
             f'  sequence_length: {seq}',
             '  precision: FP8',
             '  fp8_recipe: DELAYED_SCALING',
             '  fp8_parameters: false',
             '  optimizer: ADAM',
             '  steps: 1']
    if model in BF16_STATES:
        lines.append('  sixteen_bit_states: true')
    if model not in FUSED_CROSS_ENTROPY:
        lines.append('  unfused_cross_entropy: true')
    lines += ['}',
              f'cluster {{ instance: "onprem.dgx-h100" nodes: {gpus // 8} '
              'fabric: "ib-rail-optimized" }',
              'parallelism {',
              f'  tensor_parallel: {tp}',
              f'  pipeline_parallel: {pp}',
              f'  context_parallel: {cp}',
              f'  micro_batch_size: {mbs}',
              f'  sequence_parallel: {"true" if tp > 1 else "false"}',
              f'  gradient_reduce_in_fp32: {"false" if bf16_grad else "true"}',
              '  rank_order: TP_DP_PP']
    if model in SELECTIVE_RECOMPUTE:
        lines.append('  recompute: RECOMPUTE_SELECTIVE')
    if vp > 1:
        lines += ['  schedule: INTERLEAVED_ONE_F_ONE_B', f'  virtual_stages: {vp}']
    lines += ['  distributed_optimizer: true', '  gradient_scaling: AVERAGE_IN_COLLECTIVE']
    if tp > 1:
        lines.append('  overlap_tensor_communication: true')
    lines += ['}',
              'published {',
              f'  group: "{GROUP}"',
              f'  tokens_per_s_per_gpu: {tokens}',
              f'  tflops_per_gpu: {tflops}',
              '  flops_convention: MODEL_FLOPS',
              f'  source: "{SOURCE}"',
              '}',
              f'# published step time (derived): {step:.3f} s']
    return f'nemo-24.07-h100-fp8-{model}-{gpus}', '\n'.join(lines) + '\n'


def main():
    write_scenarios(scenario(row) for row in ROWS if row[0] not in LEFT_OUT)


if __name__ == '__main__':
    main()
