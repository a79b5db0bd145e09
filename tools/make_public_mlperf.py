#!/usr/bin/env python3
"""Writes scenarios/public_runs/mlperf-v3.1-gpt3-175b-*.textproto: NVIDIA's MLPerf Training v3.1
GPT-3 175B submissions on Eos (DGX H100, 512 to 10,752 GPUs) and Azure's ND H100 v5 one (10,752
GPUs), a public check outside the calibration (nothing is fitted on them).

Usage: python3 tools/make_public_mlperf.py [OUT_DIR]   (default scenarios/public_runs)

Source: mlcommons/training_results_v3.1 at d06288b. The recipe: NVIDIA/benchmarks/gpt3/
implementations/pytorch/ (config_DGXH100_<nodes>x8x<minibs>x4x8_mbs1.sh, config_common.sh,
config_fp8.sh, run_and_time.sh, conf/custom.yaml, conf/optim/distributed_fused_adam.yaml,
Dockerfile); Azure's copy under Azure+NVIDIA/ is the same recipe. The step time: MLPerf publishes
time to train; each result_N.txt's MLLOG lines carry the blocks of training between evaluations
(block_start / block_stop, metadata epoch_count = the block's tokens) and NeMo's own per-step timer
(tracked_stats train_step_timing). STEP_S below is, in result_0.txt, the summed time of blocks 2 to
the last over their steps (epoch_count / 2048 / global_batch_size each; the first block, with the
steps that warm up after the checkpoint load, left out): training samples over elapsed time,
evaluations excluded. CROSS_S is the same of result_1.txt; TIMER_S the median of result_0.txt's
train_step_timing, which leaves out the host's time between steps (the next batch's fetch, the
MLPerf callbacks: 1.3-2.5% of the step at 4,096 GPUs and more).
"""
import os
import sys
import textwrap

REPO = 'mlcommons/training_results_v3.1 @ d06288b'
RECIPE = 'NVIDIA/benchmarks/gpt3/implementations/pytorch'

# results directory, nodes, global batch size (MLLOG global_batch_size), the config's MINIBS
# (sequences a data-parallel replica), STEP_S, CROSS_S, TIMER_S, group.
H100 = 'Public check: MLPerf Training v3.1 GPT-3 175B (DGX H100, FP8)'
AZURE = 'Public check: MLPerf Training v3.1 GPT-3 175B (Azure ND H100 v5, FP8)'
ROWS = [
    ('NVIDIA/results/eos_n64_ngc23.09_nemo', 64, 2048, 128, 11.066, 11.088, 11.045, H100),
    ('NVIDIA/results/eos_n96_ngc23.09_nemo', 96, 3072, 128, 11.108, 11.105, 11.072, H100),
    ('NVIDIA/results/eos-dfw_n512_ngc23.09_nemo', 512, 2048, 16, 1.6295, 1.6293, 1.6084, H100),
    ('NVIDIA/results/eos-dfw_n768_ngc23.09_nemo', 768, 3072, 16, 1.6377, 1.6398, 1.6159, H100),
    ('NVIDIA/results/eos-dfw_n1024_ngc23.09_nemo', 1024, 4096, 16, 1.6441, 1.6425, 1.6193, H100),
    ('NVIDIA/results/eos-dfw_n1280_ngc23.09_nemo', 1280, 2560, 8, 0.9500, 0.9487, 0.9256, H100),
    ('NVIDIA/results/eos-dfw_n1344_ngc23.09_nemo', 1344, 2688, 8, 0.9553, 0.9544, 0.9296, H100),
    ('Azure+NVIDIA/results/ND_H100_v5_n1344_pytorch', 1344, 2688, 8, 0.9811, 0.9804, 0.9451,
     AZURE),
]
TP, PP, VP, MBS = 4, 8, 12, 1
# Model FLOPs a sequence, forward and backward, attention over the whole s x s product (Megatron's
# count, Narayanan et al. SC'21 Eq. 3 without the recomputed forward): 72 s l h^2 (1 + s / 6h +
# V / 12 l h) with l 96, h 12288, s 2048, V 50257: 2.2044e15.
L, H, S, V = 96, 12288, 2048, 50257
SEQUENCE_FLOPS = 72 * S * L * H**2 * (1 + S / (6 * H) + V / (12 * L * H))

HEADER = (
    "What ran, read in the recipe ({recipe}, not a rule of ours): NeMo at bd0b818a (r1.20 base) "
    "in the pytorch:23.09 container, Transformer Engine 09ba8427, flash-attn 2.0.8 (Dockerfile); "
    "TP 4, PP 8, MBS 1, {minibs} sequences a replica ({config}); virtual pipeline 12 "
    "(custom.yaml's INTERLEAVED_PIPELINE default: one layer a model chunk); sequence parallelism "
    "(SEQ_PARALLEL default True) and userbuffers TP overlap (TP_COMM_OVERLAP=True); Apex "
    "distributed_fused_adam (USE_DIST_OPTIMIZER=True) with overlap_grad_sync and "
    "overlap_param_sync, grad_sync_dtype bf16 (gradients reduced in BF16), fp32 master weights "
    "and moments; no activation recomputation (ACT_CKPT_GRANULARITY null); hidden and attention "
    "dropout 0 (model gpt3-175b-mlperf); FP8 as Transformer Engine's delayed scaling "
    "(config_fp8.sh: FP8_HYBRID, amax history 1024, max) with 16-bit weights cast each step (no "
    "fp8 parameters in this release); attention as flash-attn's FlashAttention-2 (TE 09ba8427's "
    "DotProductAttention prefers flash-attn whenever NVTE_FLASH_ATTN is unset, and "
    "config_common.sh leaves it unset); the loss as Megatron's unfused vocabulary-parallel cross "
    "entropy (NeMo 1.20's own GPT model; no fusion in that release); Megatron's rank order "
    "tp-dp-pp (TP_DP_PP). Not expressible, left at the simulator's one model: the atomic FP8 "
    "GEMM + reduce-scatter variant of the TP overlap (NVTE_UB_ATOMIC_GEMM_RS=1, "
    "NVTE_RS_STRIDED_ATOMIC=1), the asynchronous amax reduction (NVTE_ASYNC_AMAX_REDUCTION=1), the "
    "per-collective CTA limits (MEGATRON_CORE_*_MAX_CTAS) and the 100 MB gradient buckets "
    "(bucket_cap_mb). Scored on step time: {how} TFLOP/s derived from it (not published) as 72 s l h^2 (1 + s/6h + V/12lh) FLOPs a sequence.")


def scenario(row):
    results, nodes, gbs, minibs, step, cross, timer, group = row
    gpus = nodes * 8
    dp = gpus // (TP * PP)
    assert dp * minibs == gbs, results
    azure = group == AZURE
    config = f'config_DGXH100_{nodes}x8x{minibs}x4x8_mbs1.sh'
    if nodes == 64:
        # The repository's 64-node file is config_DGXH100_64x8x192x4x8_mbs1.sh (global batch
        # 3072); the run logged global_batch_size 2048 and gradient_accumulation_steps 128, which
        # is MINIBS 128 at TP 4, PP 8, MBS 1 (the 96-node config's per-replica batch).
        config += (' (the run\'s MLLOG global_batch_size 2048 and gradient_accumulation_steps '
                   '128; the repository\'s 64-node file says MINIBS 192)')
    how = (f'in {results}/gpt3/result_0.txt, the training samples of blocks 2-last over their summed '
           f'elapsed time (block_start to block_stop, evaluations excluded): {step} s a step; '
           f'result_1.txt gives {cross} s, NeMo\'s own per-step timer (train_step_timing '
           f'median) {timer} s.')
    text = HEADER.format(recipe=('Azure+NVIDIA/benchmarks/gpt3/implementations/pytorch, '
                                 'the same files as NVIDIA\'s' if azure else RECIPE),
                         minibs=minibs, config=config, how=how)
    system = (
        f'{nodes} Azure ND H100 v5 VMs (8 H100 SXM 80 GB on NVLink 4, 8 x 400 Gb/s Quantum-2 '
        'InfiniBand: Azure+NVIDIA/systems/ND_H100_v5_n1344_pytorch.json). The catalog has no Azure '
        'instance; onprem.dgx-h100 stands in (the same GPUs, NVSwitch and NICs) on the '
        'rail-optimized fabric, an unknown of this row.'
        if azure else
        f'{nodes} DGX H100 of Eos (8 x 400 Gb/s NDR: NVIDIA/systems/{results.split("/")[-1]}.json), '
        'a rail-optimized SuperPOD fabric.')
    name = (f'mlperf-v3.1-gpt3-175b-{"azure-" if azure else ""}h100-{gpus}')
    wrap = lambda s: '\n'.join(textwrap.wrap(s, 98, initial_indent='# ', subsequent_indent='# ',
                                            break_on_hyphens=False))
    lines = [wrap(f'MLPerf Training v3.1, GPT-3 175B on {gpus} H100 GPUs, FP8 ({REPO}, '
                  f'{results}/gpt3). Generated by tools/make_public_mlperf.py; a public check '
                  'outside the calibration (nothing is fitted on it).'),
             wrap(system), wrap(text),
             f'name: "{name}"',
             'model: "gpt3-175b-mlperf"',
             'job {',
             f'  global_batch_size: {gbs}',
             '  sequence_length: 2048',
             '  precision: FP8',
             '  fp8_recipe: DELAYED_SCALING',
             '  fp8_parameters: false',
             '  optimizer: ADAM',
             '  steps: 1',
             '  flash_attention: true',
             '  attention_library: FLASH_ATTENTION_2',
             '  unfused_cross_entropy: true',
             '}',
             f'cluster {{ instance: "onprem.dgx-h100" nodes: {nodes} fabric: "ib-rail-optimized" }}',
             'parallelism {',
             f'  tensor_parallel: {TP}',
             f'  pipeline_parallel: {PP}',
             f'  micro_batch_size: {MBS}',
             '  schedule: INTERLEAVED_ONE_F_ONE_B',
             f'  virtual_stages: {VP}',
             '  sequence_parallel: true',
             '  overlap_tensor_communication: true',
             '  distributed_optimizer: true',
             '  gradient_reduce_in_fp32: false',
             '  rank_order: TP_DP_PP',
             '}',
             'published {',
             f'  group: "{group}"',
             f'  step_time_s: {step}',
             f'  tflops_per_gpu: {gbs * SEQUENCE_FLOPS / step / gpus / 1e12:.1f}',
             '  flops_convention: MODEL_FLOPS',
             f'  source: "{REPO} {results}/gpt3/result_0.txt (MLLOG block_start/block_stop, blocks '
             f'2-last)"',
             '}']
    return name, '\n'.join(lines) + '\n'


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'scenarios', 'public_runs')
    for row in ROWS:
        name, text = scenario(row)
        with open(os.path.join(out, name + '.textproto'), 'w') as f:
            f.write(text)


if __name__ == '__main__':
    main()
