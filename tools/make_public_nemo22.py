#!/usr/bin/env python3
"""Writes scenarios/public_runs/nemo-22.0[68]-*.textproto: the GPT-3 5B and 175B scaling tables
of NeMo Megatron's launcher README on DGX A100 80GB nodes, releases 22.06 and 22.08, a public
check outside the calibration (nothing is fitted on it).

Usage: python3 tools/make_public_nemo22.py [OUT_DIR]   (default scenarios/public_runs)

Source: NVIDIA/NeMo-Framework-Launcher README.md, section 7.1.2 "Training Performance Results"
(nodes and tokens per second of the whole job), at the commit that introduced each table: d4317ddd
(2022-07-14, container bignlp-training:22.06-py3, NeMo 1.10.0) and 3579cdb3 (2022-09-07,
22.08-py3, NeMo 1.11.0, which replaced the 22.06 table). Layout and recipe: the same commit's
conf/training/gpt3/5b.yaml and 175b.yaml. The optimizer paths are read in NVIDIA/NeMo v1.10.0 and
v1.11.0 (nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py) and NVIDIA/apex
(apex/contrib/optimizers/distributed_fused_adam.py at a0f5f3ac, 2022-08-09). Rows the memory
model cannot fit as published are left out (LEFT_OUT).
"""
import textwrap

from public_runs import write_scenarios

RELEASES = {
    '22.06': dict(commit='d4317ddd', date='2022-07-14', container='22.06-py3', nemo='1.10.0',
                  nccl='2.12.10', superpod={'5b': '20 x 8', '175b': '128 x 8'},
                  fate="replaced by 22.08's table, 3579cdb3"),
    '22.08': dict(commit='3579cdb3', date='2022-09-07', container='22.08-py3', nemo='1.11.0',
                  nccl='2.12.12', superpod={'5b': '16 x 8', '175b': '128 x 8'},
                  fate="the README's table until 2023-10"),
}

# (release, YAML) -> the YAML's layout and the table's (nodes, tokens/s) rows. distributed: the
# YAML's optim.name is distributed_fused_adam (else fused_adam); overlap: whether the gradient
# reduction runs in the backward (NeMo 1.10: async_grad_allreduce only when PP == 1; NeMo 1.11:
# configure_optimizers turns overlap_grad_sync off under PP > 1 or sequence parallelism).
TABLES = {
    ('22.06', '5b'): dict(tp=2, pp=1, gbs=1440, distributed=False, overlap=True,
                          rows=[(1, 39543), (2, 79128), (5, 195047), (9, 344523), (10, 383500),
                                (18, 670254), (20, 731791)]),
    ('22.06', '175b'): dict(tp=8, pp=8, gbs=1536, distributed=False, overlap=False,
                            rows=[(16, 20642), (32, 38025), (128, 141306)]),
    ('22.08', '5b'): dict(tp=1, pp=1, gbs=2048, distributed=True, overlap=True,
                          rows=[(1, 40345), (2, 79815), (4, 161754), (8, 312774), (16, 659481),
                                (32, 1159288)]),
    ('22.08', '175b'): dict(tp=8, pp=8, gbs=2048, distributed=True, overlap=False,
                            rows=[(8, 7500), (16, 14950), (32, 29537), (64, 58211),
                                  (128, 109684)]),
}
MICRO_BATCH = 2  # both YAMLs of both releases
# Apex DistributedFusedAdam's bucket_cap_mb default (apex@a0f5f3ac distributed_fused_adam.py
# __init__); NeMo 1.11's setup_optimization passes none and the 22.08 YAMLs' optim sets none.
APEX_BUCKET_CAP_MB = 100
SEQUENCE = 2048

# Rows left out, with why: 22.08's 5B at TP 1 on 1 node (DP 8, micro-batch 2, no recomputation,
# NeMo 1.11's contiguous fp32 gradient buffer) is 2.4 GiB over 80 GB in the memory model (78.8 GiB
# on 2 nodes, which is kept; both were over while the allocator reserve was counted on the model
# states too, results/memory_peaks.md 2026-12-06); the recipe says nothing that would shrink it,
# so it is not bent to fit.
# Apex@a0f5f3ac holds what the memory model counts: the BF16 model (Float16Module), the contiguous
# fp32 gradient buffer (its dtype; rounded up to whole 100 MiB buckets), and per rank its fp32
# parameter, exp_avg and exp_avg_sq shards (StateBucket), 2 + 4 + 12 / DP bytes a parameter; no
# parameter remainders before apex@6f7d8ac3 (results/validation.md, "Apex's DistributedFusedAdam").
LEFT_OUT = {('22.08', '5b', 1)}

# The model shapes (models/gpt3.textproto): layers, hidden, vocabulary, for the TFLOP/s printed
# beside the step time (Megatron's 72 l h^2 (1 + s / 6h + V / 12hl) a sequence over its tokens).
SHAPES = {'5b': (24, 4096, 50257), '175b': (96, 12288, 50257)}

RECIPES = {
    '5b': ('TP {tp}, PP 1, micro-batch 2, global batch {gbs}, sequence 2048, bf16 with '
           'megatron_amp_O2, activations_checkpoint_granularity full with method block and 0 layers '
           '(no layer recomputed), sequence_parallel False, hidden_dropout 0.1, optimizer {optim}.'),
    '175b': ('TP 8, PP 8 (no virtual pipeline), micro-batch 2, global batch {gbs}, sequence 2048, '
             'bf16 with megatron_amp_O2, activations_checkpoint_granularity selective (Korthikanti '
             'et al. 2022), sequence_parallel True, hidden_dropout 0.1, optimizer {optim}.'),
}
OPTIMIZERS = {
    False: ("NeMo {nemo}'s fused_adam under megatron_amp_O2 (megatron_gpt_model.py, "
            "MainParamsOptimizerWrapper): fp32 main gradients all-reduced over data parallelism, no "
            "optimizer sharding, the division fused into the all-reduce (grad_div_ar_fusion True), "
            "asynchronously in the backward only without pipeline parallelism "
            "(async_grad_allreduce when PP == 1), after the pipeline's last backward otherwise;"),
    True: ("NeMo {nemo}'s distributed_fused_adam (megatron_gpt_model.py configure_optimizers, "
           "nemo/core/optim/optimizers.py): Apex's DistributedFusedAdam as of that month "
           "(NVIDIA/apex@a0f5f3ac, 2022-08-09) with a contiguous fp32 gradient buffer, the "
           "gradients reduce-scattered in fp32 (grad_sync_dtype = dtype = float32) and averaged in "
           "the collective (ReduceOp.AVG), in the backward (overlap_grad_sync) only when neither "
           "PP > 1 nor sequence parallelism turns it off, the BF16 parameter all-gather after the "
           "step, not overlapped (its overlap with the forward came in apex@c0a0b0f6, "
           "2023-02-06); both in Apex's buckets of bucket_cap_mb = 100 MiB of fp32 gradients "
           "(its default, which neither NeMo nor the YAML changes), each its own NCCL "
           "collective after the previous one;"),
}
RULE = ("Unknowns, one rule for every row of the table: the README gives nodes and tokens/s only, "
        "so the YAML's global batch ({gbs}) and micro-batch (2) are taken at every node count "
        "(data parallelism = GPUs / (TP x PP)); {optimizer} 2022 Megatron kernels: no fused "
        "(flash) attention, the vocabulary-parallel cross entropy unfused, no Transformer Engine "
        "(no tensor-parallel communication overlap); Megatron-LM's 2022 rank order tp-dp-pp "
        "(TP_DP_PP). Scored on step time: global batch x sequence / (tokens/s per GPU x GPUs) = "
        "{step:.2f} s. The TFLOP/s, not published, is the tokens/s times 72 l h^2 (1 + s / 6h + "
        "V / 12hl) / (B s) a token (MODEL_FLOPS), printed beside the step time only.")


def comment(text):
    return '\n'.join(textwrap.wrap(text, 100, initial_indent='# ', subsequent_indent='#   '))



def launcher_scenario(comments, name, model, global_batch, sequence, nodes, per_gpu,
                      flops_per_token, layout, distributed, overlap, bucket_mib, group, source):
    """The text of a row of NeMo Megatron's launcher README tables on DGX A100 80GB nodes: the
    `comments` as the header, the job every such row shares (BF16 Adam, 2022 Megatron kernels: no
    fused attention, the vocabulary-parallel cross entropy unfused), `layout` the parallelism lines
    before the optimizer's, then Megatron's rank order and fp32 gradients averaged in the
    collective, with Apex's distributed optimizer in `bucket_mib` buckets where `distributed`
    (its parameter all-gather after the step), and the published tokens/s per GPU."""
    parallelism = layout + [
        'rank_order: TP_DP_PP',
        f'distributed_optimizer: {"true" if distributed else "false"}',
        'gradient_reduce_in_fp32: true',
        'gradient_scaling: AVERAGE_IN_COLLECTIVE',
        f'overlap_gradient_reduce: {"true" if overlap else "false"}']
    if distributed:
        parallelism += ['overlap_parameter_gather: false', f'optimizer_bucket_mib: {bucket_mib}']
    lines = [comment(c) for c in comments] + [
        f'name: "{name}"',
        f'model: "{model}"',
        'job {',
        f'  global_batch_size: {global_batch}',
        f'  sequence_length: {sequence}',
        '  precision: BF16',
        '  optimizer: ADAM',
        '  steps: 1',
        '  flash_attention: false',
        '  unfused_cross_entropy: true',
        '}',
        f'cluster {{ instance: "onprem.dgx-a100-80gb" nodes: {nodes} '
        'fabric: "ib-rail-optimized" }',
        'parallelism {'] + ['  ' + line for line in parallelism] + [
        '}',
        'published {',
        f'  group: "{group}"',
        f'  tokens_per_s_per_gpu: {per_gpu:.2f}',
        f'  tflops_per_gpu: {per_gpu * flops_per_token / 1e12:.1f}',
        '  flops_convention: MODEL_FLOPS',
        f'  source: "{source}"',
        '}']
    return '\n'.join(lines) + '\n'

def scenario(release, yaml, table, nodes, tokens):
    r = RELEASES[release]
    size = yaml.upper()
    gpus = nodes * 8
    per_gpu = tokens / gpus
    step = table['gbs'] * SEQUENCE / tokens
    layers, hidden, vocab = SHAPES[yaml]
    flops_per_token = 72 * layers * hidden**2 * (
        1 + SEQUENCE / (6 * hidden) + vocab / (12 * hidden * layers))
    optim = 'distributed_fused_adam' if table['distributed'] else 'fused_adam'
    source = (f'NeMo Megatron {release} (container nvcr.io/ea-bignlp/bignlp-training:'
              f'{r["container"]}, NeMo {r["nemo"]}, NCCL {r["nccl"]}): GPT-3 {size} on {gpus} A100 '
              f'80GB GPUs ({nodes} DGX A100 nodes), BF16. Published: the launcher README\'s section '
              '7.1.2 "Training Performance Results" (NVIDIA/NeMo-Framework-Launcher '
              f'@{r["commit"]}, {r["date"]}, README.md, "NVIDIA DGX SuperPOD '
              f'({r["superpod"][yaml]} x A100 80GB ...)"; {r["fate"]}), {size} row, {nodes} nodes: '
              f'{tokens} tokens per second over the job ({per_gpu:.2f} a GPU). Generated by '
              'tools/make_public_nemo22.py.')
    recipe = (f'Layout and recipe, the same commit\'s conf/training/gpt3/{yaml}.yaml: '
              + RECIPES[yaml].format(tp=table['tp'], gbs=table['gbs'], optim=optim))
    rule = RULE.format(gbs=table['gbs'], step=step,
                       optimizer=OPTIMIZERS[table['distributed']].format(nemo=r['nemo']))
    name = f'nemo-{release}-a100-gpt3-{yaml}-{gpus}'
    tp = table['tp']
    return name, launcher_scenario(
        [source, recipe, rule], name, f'gpt3-{yaml}', table['gbs'], SEQUENCE, nodes,
        per_gpu, flops_per_token,
        [f'tensor_parallel: {table["tp"]}', f'pipeline_parallel: {table["pp"]}',
         f'micro_batch_size: {MICRO_BATCH}', 'schedule: ONE_F_ONE_B',
         f'sequence_parallel: {"true" if yaml == "175b" else "false"}',
         f'recompute: {"RECOMPUTE_SELECTIVE" if yaml == "175b" else "RECOMPUTE_NONE"}'],
        table['distributed'], table['overlap'], APEX_BUCKET_CAP_MB,
        f'Public check: NeMo Megatron {release} GPT-3 {size} (A100 80GB, BF16)',
        f'github.com/NVIDIA/NeMo-Framework-Launcher README.md @{r["commit"]} ({r["date"]}), '
        f'7.1.2 Training Performance Results, {size} row, {nodes} nodes: {tokens} tokens/s')


def main():
    write_scenarios(scenario(release, yaml, table, nodes, tokens)
                    for (release, yaml), table in TABLES.items()
                    for nodes, tokens in table['rows']
                    if (release, yaml, nodes) not in LEFT_OUT)


if __name__ == '__main__':
    main()
