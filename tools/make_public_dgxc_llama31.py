#!/usr/bin/env python3
"""Writes scenarios/public_runs/llama3.1-*-dgxc*.textproto: the Llama 3.1 8B, 70B and 405B tables of
NVIDIA's DGX Cloud benchmarking recipe (H100, BF16 and FP8), a public check outside the calibration
(nothing is fitted on it).

Usage: python3 tools/make_public_dgxc_llama31.py [OUT_DIR]   (default scenarios/public_runs)

Source: NVIDIA/dgxc-benchmarking at 0b71cfda5163 (release 25.02.01, container nemo:24.12; the same
commit as the Nemotron-4 15B check): llama3.1/README_8b.md, README_70b.md and README_405b.md (the
tables), llama3.1/configure.sh (the command line) and llama3.1/llama3.1_{8b,70b,405b}.yaml (the
model's NeMo 1.0 config, run by megatron_gpt_pretraining.py). Each row is written as the recipe runs
it; RECIPE below says what was read where.
"""
import os
import sys
import textwrap

COMMIT = '0b71cfda5163'

# What the recipe runs, read in its files @ COMMIT (not a rule of ours), for every size:
RECIPE = (
    "What ran, read in the recipe (not a rule of ours): NeMo's megatron_gpt_pretraining.py in the "
    "nemo:24.12 container with llama3.1/llama3.1_{size}.yaml and the command line of "
    "llama3.1/configure.sh (NVIDIA/dgxc-benchmarking @ " + COMMIT + "): Apex's "
    "distributed_fused_adam (optim.dtype unset: fp32 Adam states and master weights) with "
    "overlapped gradient reduce-scatter and parameter all-gather (overlap_grad_sync, "
    "overlap_param_sync) and gradients reduced in BF16 (optim.grad_sync_dtype: bf16); no activation "
    "recomputation (activations_checkpoint_granularity null); {tp_overlap}; context parallelism 2 "
    "{cp}; cuDNN's fused attention (NVTE_FUSED_ATTN=1, NVTE_FLASH_ATTN=0); the fused cross entropy "
    "(cross_entropy_loss_fusion: true); Megatron-Core's default rank order (TP_DP_PP). "
    "{fp8}Scored on step time (the README's 'Training step time', the last of 50 steps); "
    "TFLOP/s as the README counts them ({flops:.3g} FLOPs a sequence, its 'model flops for "
    "GBS=1'; for the 405B proxies its MFU x 989 or 1979 TFLOP/s), informative only.")

TP_OVERLAP = {
    '8b': "TP 1, so no sequence parallelism or TP overlap (sequence_parallel and ub_tp_comm_overlap "
          "false in the YAML)",
    '70b': "sequence parallelism and Transformer Engine's userbuffers TP overlap (sequence_parallel, "
           "ub_tp_comm_overlap: true); overlap_p2p_comm: true; defer_embedding_wgrad_compute: true "
           "(the output layer's weight gradient deferred into the pipeline flush, not simulated)",
    '405b': "sequence parallelism and Transformer Engine's userbuffers TP overlap (sequence_parallel, "
            "ub_tp_comm_overlap: true; with FP8 configure.sh also sets the proj and fc2 forward "
            "userbuffers to FP8, fp8_buf, not simulated: the TP exchange is counted in BF16); "
            "overlap_p2p_comm: true; defer_embedding_wgrad_compute: true (not simulated; false on "
            "32 GPUs)",
}
CP_NOTE = "peer to peer (Transformer Engine's ring, the Megatron-Core default)"
FP8_NOTE = ("FP8 as configure.sh's model.fp8=True and model.fp8_hybrid=True run it in NeMo 1.0: "
            "Transformer Engine's delayed scaling (amax history 1024, 'max': the YAML's fp8 knobs) "
            "and FP8 weights (+model.fp8_params=True: fp8_parameters). ")

MODEL_NOTE = {
    '8b': "Model: llama3-8b (the YAML's shape is Meta's: 32 layers, hidden 4096, 8 KV groups; the "
          "Llama 3 tokenizer, 128256 tokens).",
    '70b': "Model: llama3-70b (the YAML's shape is Meta's: 80 layers, hidden 8192, 8 KV groups; the "
           "Llama 3 tokenizer, 128256 tokens; NeMo pads the vocabulary to 128512 at TP 4, not "
           "modelled: 0.2% of the output layer).",
    '405b': "Model: the recipe's own 405B shape (models/llama3_dgxc.textproto: 16 KV groups as "
            "llama3.1_405b.yaml's num_query_groups, the GPT-2 vocabulary of its megatron-gpt2-345m "
            "tokenizer padded to 51200; synthetic data).",
}
PROXY_NOTE = ("Below 576 GPUs the README's rows are 'proxy configs': configure.sh sets "
              "model.num_layers={layers}, pipeline {pp}{vp} and global batch {gbs} on {gpus} GPUs.")

# Per size: catalog model, TP, PP, CP, VP (0: none), sequence, FLOPs a sequence as the README
# counts them (its 'model flops for GBS=1'), batch a GPU (configure.sh: 128 per 8 / 64 GPUs).
SIZES = {
    '8b': dict(model='llama3-8b', tp=1, pp=1, cp=2, vp=0, flops=4.74e14),
    '70b': dict(model='llama3-70b', tp=4, pp=4, cp=2, vp=5, flops=3.94e15),
    '405b': dict(model='llama3.1-405b-dgxc', tp=8, pp=9, cp=2, vp=7, flops=2.17e16),
}

# The README tables @ COMMIT: size -> [(GPUs, BF16 step s, FP8 step s)].
TABLES = {
    '8b': [(8, 12.78, 9.44), (16, 12.99, 9.47), (32, 13.00, 9.60), (64, 13.00, 9.64),
           (128, 13.16, 9.73)],
    '70b': [(64, 14.61, 10.46), (128, 14.70, 10.52), (256, 14.72, 10.75), (512, 14.80, 10.76),
            (1024, 14.86, 10.83), (2048, 14.84, 10.99)],
    '405b': [(32, 9.00, 5.75), (96, 8.87, 5.63), (192, 17.30, 10.8), (576, 17.50, 11.00),
             (1152, 17.60, 11.10), (2304, 17.70, 11.20)],
}

# configure.sh's 405B proxies: GPUs -> (layers, PP, VP or 0, global batch, catalog model).
PROXIES_405B = {32: (7, 1, 0, 126, 'llama3.1-405b-dgxc-7l'),
                96: (21, 3, 7, 126, 'llama3.1-405b-dgxc-21l'),
                192: (42, 3, 7, 252, 'llama3.1-405b-dgxc-42l')}
# The proxies' 'Model flops utilization' in README_405b.md (BF16 %, FP8 %), whose FLOPs a sequence
# the README does not give: TFLOP/s = MFU x its peaks (989 BF16, 1979 FP8).
PROXY_MFU = {32: (57.65, 45.12), 96: (55.41, 43.65), 192: (56.03, 44.87)}


def global_batch(size, gpus):
    """configure.sh: 'Upstream uses GBS 128 for 8 GPUs' (8B), '128 for 64 GPUs' (70B), '252 for 576
    GPUs' (405B), scaled with the GPUs."""
    if size == '8b':
        return 128 * gpus // 8
    if size == '70b':
        return 128 * gpus // 64
    return 252 * gpus // 576


def group(size, fp8):
    return (f'Public check: NeMo DGXC benchmarking, Llama 3.1 {size.upper()} '
            f'(H100, {"FP8" if fp8 else "BF16"})')


def scenario(size, gpus, step, fp8):
    s = SIZES[size]
    model, pp, vp = s['model'], s['pp'], s['vp']
    gbs = global_batch(size, gpus)
    proxy = size == '405b' and gpus in PROXIES_405B
    notes = [RECIPE.format(size=size, tp_overlap=TP_OVERLAP[size], cp=CP_NOTE,
                           fp8=FP8_NOTE if fp8 else '', flops=s['flops']),
             MODEL_NOTE[size]]
    if proxy:
        layers, pp, vp, gbs, model = PROXIES_405B[gpus]
        notes.append(PROXY_NOTE.format(layers=layers, pp=pp, vp=f', {vp} chunks' if vp else
                                       ' (VP=null)', gbs=gbs, gpus=gpus))
    dp = gpus // (s['tp'] * pp * s['cp'])
    prec = 'FP8' if fp8 else 'BF16'
    readme = f'llama3.1/README_{size}.md'
    head = (f"A public run OUTSIDE the calibration (a self-check; nothing is fitted on it): NVIDIA's "
            f"DGX Cloud benchmarking recipe for Llama 3.1 {size.upper()}, its {prec} table: on "
            f"{gpus} H100 GPUs, global batch {gbs} ({gbs // dp} sequences a replica, DP {dp}), "
            f"{step} s a training step (NVIDIA/dgxc-benchmarking {readme} @ {COMMIT}).")
    name = f'llama3.1-{size}-h100-{gpus}-dgxc{"-fp8" if fp8 else ""}'
    lines = ['\n'.join(textwrap.wrap(t, 100, initial_indent='# ', subsequent_indent='# '))
             for t in [head] + notes]
    lines.append('# Generated by tools/make_public_dgxc_llama31.py.')
    lines += [f'name: "{name}"',
              f'model: "{model}"',
              'job {',
              f'  global_batch_size: {gbs}',
              '  sequence_length: 8192',
              f'  precision: {prec}']
    if fp8:
        lines += ['  fp8_recipe: DELAYED_SCALING', '  fp8_parameters: true']
    lines += ['  optimizer: ADAM',
              '  steps: 1',
              '}',
              f'cluster {{ instance: "onprem.dgx-h100" nodes: {gpus // 8} '
              'fabric: "ib-rail-optimized" }',
              'parallelism {',
              f'  tensor_parallel: {s["tp"]}',
              f'  pipeline_parallel: {pp}',
              f'  context_parallel: {s["cp"]}',
              '  micro_batch_size: 1',
              f'  sequence_parallel: {"true" if s["tp"] > 1 else "false"}']
    if s['tp'] > 1:
        lines.append('  overlap_tensor_communication: true')
    lines += ['  gradient_reduce_in_fp32: false',
              '  rank_order: TP_DP_PP']
    if vp:
        lines += ['  schedule: INTERLEAVED_ONE_F_ONE_B', f'  virtual_stages: {vp}']
    lines += ['  distributed_optimizer: true',
              '}',
              'published {',
              f'  group: "{group(size, fp8)}"']
    if proxy:
        tflops = PROXY_MFU[gpus][fp8] / 100 * (1979 if fp8 else 989)
    else:
        # The README's MFU numerator: global batch x its FLOPs a sequence / step / GPUs.
        tflops = gbs * s['flops'] / step / gpus / 1e12
    lines += [f'  tflops_per_gpu: {tflops:.1f}',
              '  flops_convention: MODEL_FLOPS',
              f'  step_time_s: {step}',
              f'  source: "NVIDIA/dgxc-benchmarking {readme} @ {COMMIT}, table \'Llama 3.1 '
              f'{size} {prec}\', {gpus} GPUs"',
              '}']
    return name, '\n'.join(lines) + '\n'


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'scenarios', 'public_runs')
    for size, rows in TABLES.items():
        for gpus, bf16, fp8 in rows:
            for is_fp8, step in ((False, bf16), (True, fp8)):
                name, text = scenario(size, gpus, step, is_fp8)
                with open(os.path.join(out, name + '.textproto'), 'w') as f:
                    f.write(text)


if __name__ == '__main__':
    main()
