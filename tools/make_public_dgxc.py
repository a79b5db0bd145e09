#!/usr/bin/env python3
"""Writes scenarios/public_runs/{llama3.1,grok1}-*-dgxc*.textproto: the published tables of NVIDIA's
DGX Cloud benchmarking recipes for Llama 3.1 8B / 70B / 405B and Grok-1 314B (BF16 and FP8), a
public check outside the calibration (nothing is fitted on it).

Usage: python3 tools/make_public_dgxc.py [OUT_DIR]   (default scenarios/public_runs)

Sources, all NVIDIA/dgxc-benchmarking (each README's table, the launch scripts, the configs they
run; for NeMo 2.0 also the NVIDIA/NeMo commit the recipe's setup.sh pins):
  - 0b71cfda5163 (release 25.02.01, nemo:24.12, NeMo 1.0's megatron_gpt_pretraining.py; the commit
    of the Nemotron-4 15B check): llama3.1/README_{8b,70b,405b}.md, configure.sh and
    llama3.1_{8b,70b,405b}.yaml; grok1/README_314b.md, configure.sh and grok1_314b.yaml (H100);
  - 741c886025a7 (25.04, nemo:25.02.01): llama3.1/README.md, pretrain_llama31.py, llama31_utils.py
    and setup.sh (H100, NeMo 2.0);
  - 68eaf7e117bf (25.05, nemo:25.04.01) and 60d6fd33ba95 (25.05.01): llama3.1/README.md, launch.sh
    and setup.sh (the GB200 405B table, the H100 405B row);
  - dfc80397b9e1 (25.05.01, nemo:25.04.00): grok1/README.md, launch.sh and setup.sh (GB200 and the
    revised H100 row).
Each row is written as the recipe runs it; the notes below say what was read where.
"""
import textwrap

from public_runs import write_scenarios

COMMIT = '0b71cfda5163'
# The READMEs' MFU denominators, TFLOP/s (BF16, FP8).
PEAK = {'H100': {False: 989, True: 1979}, 'GB200': {False: 2450, True: 4900}}
# The clusters: an 8-GPU DGX H100 node; a GB200 NVL72 compute tray of 4 GPUs, in NVLink domains
# of 16 trays: the Slurm segment NeMo's performance scripts ask for (scripts/performance/utils.py
# slurm_executor: the largest divisor up to 18 of the job's trays, 16 for 32, 64 and 128), as the
# calibration's GB200 rows (tools/make_validation_scenarios.py nvl72_segment_trays).
CLUSTER = {'H100': ('onprem.dgx-h100', 8, ''),
           'GB200': ('onprem.gb200-nvl72', 4, ' nvlink_domain_nodes: 16')}
# Megatron-Core's defer_embedding_wgrad_compute with its wgrad_deferral_limit
# (parallelism.defer_output_weight_gradient, output_weight_gradient_deferral_limit) per Llama size,
# written where PP > 1 (Megatron-Core refuses it without pipeline parallelism):
#   NeMo 1.0 (@ COMMIT): llama3.1/llama3.1_70b.yaml lines 118-119 (true, 22) and llama3.1_405b.yaml
#     lines 124-125 (true, 50); configure.sh sets it false on the 405B's 32-GPU proxy (PP 1);
#     llama3.1_8b.yaml false; grok1/grok1_314b.yaml sets neither (NeMo 1.0's default, off).
#   NeMo 2.0 (NVIDIA/NeMo @ LLAMA2_NEMO for release 25.04, 7a8f1cc7bc40 and 6f2c6fdaffcc for the
#     25.05 405B rows): nemo/collections/llm/recipes/llama3_70b.py and llama31_405b.py
#     pretrain_performance_optimizations give MegatronCommOverlapCallback
#     defer_embedding_wgrad_compute=True, wgrad_deferral_limit=22 and 50, which neither the
#     recipe's pretrain_llama31.py nor scripts/performance/llm/pretrain_llama31_405b.py (-fsdp 0)
#     changes; llama3_8b.py and scripts/performance/llm/pretrain_grok1_314b.py's
#     pretrain_performance_optimizations set none (the callback's default, off).
OUTPUT_WGRAD_DEFERRAL = {'70b': 22, '405b': 50}

# The passes over the gradient buffer (parallelism.check_for_nan_in_grad, gradient_scaling):
#   NeMo 1.0 (nemo:24.12): Apex's distributed_fused_adam averages in its reduce-scatter
#     (ReduceOp.AVG under average_grad_sync, its default), and NeMo 1.0's Megatron-Core optimizer
#     (mcore_distributed_optim) builds its DistributedDataParallelConfig with
#     check_for_nan_in_grad = optim.check_for_nan_in_grad, default False, and average_in_collective
#     = optim.average_in_collective, default True (NVIDIA/NeMo v2.1.0 nemo/collections/nlp/models/
#     language_modeling/megatron_gpt_model.py:591 and :595), which no YAML of the tag sets;
#   NeMo 2.0: the recipes' DistributedDataParallelConfig(check_for_nan_in_grad=True,
#     average_in_collective=True) (nemo/collections/llm/recipes/llama3_8b.py, llama3_70b.py,
#     llama31_405b.py at v2.1.0-v2.4.0), which scripts/performance leaves alone.
GRADIENT_PASSES = {False: ['gradient_scaling: AVERAGE_IN_COLLECTIVE'],
                   True: ['check_for_nan_in_grad: true', 'gradient_scaling: AVERAGE_IN_COLLECTIVE']}
GRADIENT_NOTE = {False: "The gradient buffer averaged in the reduce-scatter, no NaN check "
                        "(NeMo 1.0's optimizers' defaults). ",
                 True: "The gradient buffer's NaN check on and averaged in the reduce-scatter "
                       "(the NeMo 2.0 recipe's DistributedDataParallelConfig). "}

FP8_NOTE = ("FP8 as configure.sh's model.fp8=True and model.fp8_hybrid=True run it in NeMo 1.0: "
            "Transformer Engine's delayed scaling (amax history 1024, 'max': the YAML's fp8 knobs) "
            "and FP8 weights (model.fp8_params=True: fp8_parameters). ")
SCORED = ("Scored on step time (the README's 'Training step time'); TFLOP/s as the README's MFU "
          "row x {peak} TFLOP/s, informative only.")

LLAMA_RECIPE = (
    "What ran, read in the recipe (not a rule of ours): NeMo's megatron_gpt_pretraining.py in the "
    "nemo:24.12 container with llama3.1/llama3.1_{size}.yaml and the command line of "
    "llama3.1/configure.sh (NVIDIA/dgxc-benchmarking @ " + COMMIT + "): Apex's "
    "distributed_fused_adam (optim.dtype unset: fp32 Adam states and master weights) with "
    "overlapped gradient reduce-scatter and parameter all-gather (overlap_grad_sync, "
    "overlap_param_sync) and gradients reduced in BF16 (optim.grad_sync_dtype: bf16); no activation "
    "recomputation (activations_checkpoint_granularity null); {tp_overlap}; context parallelism 2 "
    "peer to peer (Transformer Engine's ring, the Megatron-Core default); cuDNN's fused attention "
    "(NVTE_FUSED_ATTN=1, NVTE_FLASH_ATTN=0); the fused cross entropy (cross_entropy_loss_fusion: "
    "true); Megatron-Core's default rank order (TP_DP_PP). ")
LLAMA_TP = {
    '8b': "TP 1, so no sequence parallelism or TP overlap (sequence_parallel and ub_tp_comm_overlap "
          "false in the YAML)",
    '70b': "sequence parallelism and Transformer Engine's userbuffers TP overlap (sequence_parallel, "
           "ub_tp_comm_overlap: true); overlap_p2p_comm: true; defer_embedding_wgrad_compute: true "
           "with wgrad_deferral_limit: 22 (the output layer's weight-gradient GEMMs of the step's "
           "first 22 micro-batches run in the pipeline flush: parallelism."
           "defer_output_weight_gradient)",
    '405b': "sequence parallelism and Transformer Engine's userbuffers TP overlap (sequence_parallel, "
            "ub_tp_comm_overlap: true; with FP8 configure.sh also sets the proj and fc2 forward "
            "userbuffers to FP8, fp8_buf, not simulated: the TP exchange is counted in BF16); "
            "overlap_p2p_comm: true; defer_embedding_wgrad_compute: true with "
            "wgrad_deferral_limit: 50 (parallelism.defer_output_weight_gradient; configure.sh sets "
            "it false on 32 GPUs, PP 1)",
}
LLAMA_MODEL = {
    '8b': "Model: llama3-8b (the YAML's shape is Meta's: 32 layers, hidden 4096, 8 KV groups; the "
          "Llama 3 tokenizer, 128256 tokens).",
    '70b': "Model: llama3-70b (the YAML's shape is Meta's: 80 layers, hidden 8192, 8 KV groups; the "
           "Llama 3 tokenizer, 128256 tokens; NeMo pads the vocabulary to 128512 at TP 4, not "
           "modelled: 0.2% of the output layer).",
    '405b': "Model: the recipe's own 405B shape (models/llama3_dgxc.textproto: 16 KV groups as "
            "llama3.1_405b.yaml's num_query_groups, the GPT-2 vocabulary of its megatron-gpt2-345m "
            "tokenizer padded to 51200; synthetic data).",
}
# Per size: catalog model, TP, PP, CP, VP (0: none), and configure.sh's global batch: 'Upstream
# uses GBS 128 for 8 GPUs' (8B), '128 for 64 GPUs' (70B), '252 for 576 GPUs' (405B), scaled with
# the GPUs.
LLAMA = {
    '8b': dict(model='llama3-8b', tp=1, pp=1, cp=2, vp=0, gbs=lambda g: 128 * g // 8),
    '70b': dict(model='llama3-70b', tp=4, pp=4, cp=2, vp=5, gbs=lambda g: 128 * g // 64),
    '405b': dict(model='llama3.1-405b-dgxc', tp=8, pp=9, cp=2, vp=7, gbs=lambda g: 252 * g // 576),
}
# The README tables @ COMMIT: size -> [(GPUs, BF16 step s, FP8 step s, BF16 MFU %, FP8 MFU %)].
LLAMA_TABLES = {
    '8b': [(8, 12.78, 9.44, 59.99, 40.59), (16, 12.99, 9.47, 59.03, 40.45),
           (32, 13.00, 9.60, 58.99, 39.94), (64, 13.00, 9.64, 58.99, 39.77),
           (128, 13.16, 9.73, 58.28, 39.41)],
    '70b': [(64, 14.61, 10.46, 54.52, 38.08), (128, 14.70, 10.52, 54.20, 37.84),
            (256, 14.72, 10.75, 54.12, 37.04), (512, 14.80, 10.76, 53.84, 37.00),
            (1024, 14.86, 10.83, 53.63, 36.77), (2048, 14.84, 10.99, 53.68, 36.23)],
    '405b': [(32, 9.00, 5.75, 57.65, 45.12), (96, 8.87, 5.63, 55.41, 43.65),
             (192, 17.30, 10.8, 56.03, 44.87), (576, 17.50, 11.00, 54.85, 43.61),
             (1152, 17.60, 11.10, 54.54, 43.22), (2304, 17.70, 11.20, 54.23, 42.83)],
}
# configure.sh's 405B proxies: GPUs -> (layers, PP, VP or 0, global batch, catalog model).
LLAMA_405B_PROXIES = {32: (7, 1, 0, 126, 'llama3.1-405b-dgxc-7l'),
                      96: (21, 3, 7, 126, 'llama3.1-405b-dgxc-21l'),
                      192: (42, 3, 7, 252, 'llama3.1-405b-dgxc-42l')}

GROK_RECIPE = (
    "What ran, read in the recipe (not a rule of ours): NeMo's megatron_gpt_pretraining.py in the "
    "nemo:24.12 container with grok1/grok1_314b.yaml and the command line of grok1/configure.sh "
    "(NVIDIA/dgxc-benchmarking @ " + COMMIT + "): Megatron-Core's distributed optimizer "
    "(optim.name mcore_distributed_optim, fp32 states) with overlapped gradient reduce-scatter and "
    "parameter all-gather and gradients reduced in BF16 (optim.grad_sync_dtype: bf16); no "
    "activation recomputation; sequence parallelism and the userbuffers TP overlap "
    "(model.sequence_parallel=true and model.ub_tp_comm_overlap=true on the command line, over the "
    "YAML's false); overlap_p2p_comm: true; the experts over expert_model_parallel_size GPUs, each "
    "expert split over the TP group (Megatron-Core 0.10's expert_tensor_parallel default), the "
    "all-to-all token dispatcher (moe_token_dispatcher_type: alltoall) with the router's capacity "
    "1.0 and every expert padded to it (moe_expert_capacity_factor: 1.0, "
    "moe_pad_expert_input_to_capacity: true), the local experts as one GEMM each "
    "(moe_grouped_gemm: false, Megatron-Core's SequentialMLP); FlashAttention-2 "
    "(NVTE_FUSED_ATTN=0); the loss as the unfused cross entropy (cross_entropy_loss_fusion unset, "
    "as tools/make_public_nemo24.py reads NeMo 1.0's default; job.unfused_cross_entropy); "
    "Megatron-Core's default rank order (TP_DP_PP). Model: the recipe's Grok-1 shape "
    "(models/grok1_dgxc.textproto: the Llama 3 tokenizer's 128256 tokens, synthetic data). ")
GROK_PROXY = ("Below 512 GPUs the README's rows are 'proxy configs': configure.sh sets "
              "model.num_layers={layers}, sequence {seq}, TP 4, PP {pp}{vp}, CP {cp}, EP {ep} and "
              "global batch 1024 on {gpus} GPUs.")
# README_314b.md's layout table and configure.sh's per-node-count branches @ COMMIT: GPUs ->
# (layers, sequence, PP, CP, EP, VP or 0, global batch), then the step table (BF16 s, FP8 s,
# BF16 MFU %, FP8 MFU %).
GROK = [
    (8, (2, 4096, 1, 1, 2, 0, 1024), (24.00, 19.71, 45.4, 27.7)),
    (16, (4, 4096, 1, 1, 4, 0, 1024), (21.71, 17.80, 44.5, 27.1)),
    (32, (4, 4096, 1, 1, 8, 0, 1024), (10.70, 8.70, 45.1, 27.7)),
    (64, (8, 8192, 1, 2, 8, 0, 1024), (21.42, 17.53, 42.9, 26.2)),
    (128, (16, 8192, 2, 2, 8, 8, 1024), (20.73, 16.70, 42.8, 26.6)),
    (256, (32, 8192, 4, 2, 8, 8, 1024), (20.83, 16.75, 41.8, 26.0)),
    (512, (64, 8192, 8, 2, 8, 8, 1024), (21.01, 16.90, 41.09, 25.53)),
    (1024, (64, 8192, 8, 2, 8, 8, 2048), (21.20, 17.01, 40.73, 25.24)),
    (2048, (64, 8192, 8, 2, 8, 8, 4096), (21.29, 17.30, 40.56, 24.94)),
]


# The NeMo 2.0 Llama 3.1 405B rows of releases 25.05 (GB200, 68eaf7e117bf, NeMo @ 7a8f1cc7bc40:
# "r2.3.0 llmb-nemo") and 25.05.01 (the H100 row, 60d6fd33ba95, NeMo @ 6f2c6fdaffcc), each the
# NEMO_COMMIT its llama3.1/setup.sh pins; launch.sh's defaults for the system.
NEMO2_405B_RECIPE = (
    "What ran, read in the recipe (not a rule of ours): llama3.1/launch.sh (NVIDIA/dgxc-benchmarking "
    "@ {commit}, nemo:25.04.01) runs NVIDIA/NeMo @ {nemo} "
    "scripts/performance/llm/pretrain_llama31_405b.py with -tp {tp} -pp 8 -cp 2 -vp 8 -mb 1 -gb "
    "GPUs/2 -fsdp 0 -ep 1; the rest of its row of recommended_model_configs/model_configs_{csv}.csv "
    "(no CUDA graphs, no recomputation, no activation offload) and llama31_405b.py's "
    "pretrain_recipe(performance_mode=True): Meta's shape (the Llama 3.1 tokenizer), the "
    "distributed optimizer with overlapped gradient reduce-scatter and parameter all-gather, "
    "gradients reduced in BF16 (pretrain_performance_optimizations: grad_reduce_in_fp32 = False), "
    "sequence parallelism and the userbuffers TP overlap ({ub}), "
    "defer_embedding_wgrad_compute with wgrad_deferral_limit 50 (parallelism."
    "defer_output_weight_gradient), the embedding and the loss counted as pipeline layers "
    "(account_for_embedding/loss_in_pipeline_split: 126 + 2 layers on 64 chunks), "
    "Transformer Engine's cross entropy (utils.py set_primary_perf_configs: "
    "cross_entropy_fusion_impl 'te'), context parallelism peer to peer, Megatron-Core's default "
    "rank order (TP_DP_PP). {fp8}")
NEMO2_405B_FP8 = ("FP8 as the script's default --fp8_recipe ds runs it: bf16_with_fp8_mixed, "
                  "per-tensor delayed scaling (amax history 1024) with FP8 weights "
                  "(fp8_param_gather = True). ")
# llama3.1/README.md at each commit: (system, commit, NeMo commit, TP, GPUs, (BF16 s, FP8 s,
# BF16 MFU %, FP8 MFU %)).
NEMO2_405B = [
    ('GB200', '68eaf7e117bf', '7a8f1cc7bc40', 4, 128, (9.347, 6.131, 47.4, 36.1)),
    ('GB200', '68eaf7e117bf', '7a8f1cc7bc40', 4, 256, (9.484, 6.183, 46.7, 35.8)),
    ('GB200', '68eaf7e117bf', '7a8f1cc7bc40', 4, 512, (9.508, 6.244, 46.6, 35.5)),
    ('H100', '60d6fd33ba95', '6f2c6fdaffcc', 8, 512, (19.810, 13.020, 55.34, 42.12)),
]
UB_405B = {'GB200': 'userbuffers_{bf16,fp8}_b200_h16384_tp4_cp2_mbs1_seqlen8192',
           'H100': 'userbuffers_{bf16,fp8}_h100_h16384_tp8_cp2_mbs1_seqlen8192, four of its '
                   'exchanges with aggregate False'}

LLAMA2_COMMIT = '741c886025a7'
LLAMA2_NEMO = 'd2b21556f245'  # llama3.1/setup.sh @ LLAMA2_COMMIT: NEMO_COMMIT (+ gsw_nemo.patch)
LLAMA2_RECIPE = (
    "What ran, read in the recipe (not a rule of ours): llama3.1/launch.sh (NVIDIA/dgxc-benchmarking "
    "@ " + LLAMA2_COMMIT + ", nemo:25.02.01) runs the recipe's own "
    "scripts/performance/llm/pretrain_llama31.py in NVIDIA/NeMo @ " + LLAMA2_NEMO + " (its "
    "gsw_nemo.patch adds command-line options only), layouts from llama31_utils.py "
    "llama31_auto_configs: {layout}. NeMo's {recipe}.py pretrain_recipe(performance_mode=True): "
    "the distributed optimizer (fp32 states) with overlapped gradient reduce-scatter and parameter "
    "all-gather, gradients reduced in BF16 (grad_reduce_in_fp32 = False), {overlap}no "
    "recomputation, no CUDA graphs (--cuda_graphs unset); GPTConfig's fused cross entropy "
    "(cross_entropy_loss_fusion True; this NeMo's set_primary_perf_configs does not choose "
    "Transformer Engine's); cuDNN's fused attention; context parallelism peer to peer; "
    "Megatron-Core's default rank order (TP_DP_PP). Model: {model}. {fp8}")
LLAMA2_OVERLAP = {
    '8b': "no TP (tp_comm_overlap=False in llama3_8b's performance mode), ",
    '70b': "sequence parallelism and the userbuffers TP overlap (userbuffers_{{bf16,fp8}}_h100_h8192_"
           "tp4_mbs1_seqlen8192), defer_embedding_wgrad_compute with wgrad_deferral_limit 22 "
           "(parallelism.defer_output_weight_gradient), ",
    '405b': "sequence parallelism and the userbuffers TP overlap (userbuffers_{{bf16,fp8}}_h100_"
            "h16384_tp8_cp2_mbs1_seqlen8192), defer_embedding_wgrad_compute with "
            "wgrad_deferral_limit 50 (parallelism.defer_output_weight_gradient; not at PP 1, where "
            "Megatron-Core refuses it), the embedding and the loss counted as pipeline layers "
            "(llama31_405b.py: account_for_embedding/loss_in_pipeline_split True), ",
}
LLAMA2_FP8 = ("FP8 as pretrain_llama31.py sets it for --compute_dtype fp8: bf16_with_fp8_mixed, "
              "per-tensor delayed scaling (amax history 1024) with FP8 weights (fp8_params True). ")
# llama3.1/README.md @ LLAMA2_COMMIT, per size and precision: [(GPUs, step s, MFU %)], and
# llama31_auto_configs' layouts: (TP, PP, CP, VP or 0, global batch a GPU).
LLAMA2_TABLES = {
    ('8b', False): [(8, 12.27, 62.47), (16, 12.3, 62.31), (32, 12.32, 62.21), (64, 12.33, 62.16),
                    (128, 12.33, 62.16)],
    ('8b', True): [(8, 9.33, 41.07), (16, 9.36, 40.94), (32, 9.43, 40.64), (64, 9.48, 40.42),
                   (128, 9.54, 40.17)],
    ('70b', False): [(64, 14.66, 54.32), (128, 14.67, 54.29), (256, 14.68, 54.25),
                     (512, 14.67, 54.29), (1024, 14.65, 54.36), (2048, 14.66, 54.32)],
    ('70b', True): [(64, 9.86, 40.38), (128, 9.95, 40.02), (256, 10.0, 39.82), (512, 10.07, 39.54),
                    (1024, 10.08, 39.50), (2048, 10.15, 39.23)],
    ('405b', False): [(32, 5.4, 55.23), (64, 10.1, 52.52), (128, 19.62, 55.31),
                      (512, 19.78, 55.47), (1024, 19.84, 55.31), (2048, 19.87, 55.22)],
    ('405b', True): [(32, 3.53, 42.24), (64, 6.32, 41.97), (128, 12.18, 44.55),
                     (512, 12.37, 44.35), (1024, 12.42, 44.17), (2048, 12.56, 43.68)],
}


def llama2_layout(size, fp8, gpus):
    """llama31_auto_configs @ LLAMA2_COMMIT: (model, TP, PP, CP, VP or 0, global batch, note)."""
    if size == '8b':
        return 'llama3-8b', 1, 1, 2, 0, 16 * gpus, 'TP 1, PP 1, CP 2, 16 sequences a GPU'
    if size == '70b':
        if fp8:
            return 'llama3-70b', 4, 8, 1, 5, 2 * gpus, 'FP8: TP 4, PP 8, CP 1, VP 5, 2 a GPU'
        return 'llama3-70b', 4, 4, 2, 5, 2 * gpus, 'TP 4, PP 4, CP 2, VP 5, 2 sequences a GPU'
    proxies = {128: (62, 4, 8, 128), 64: (30, 4, 8, 64), 32: (8, 1, 0, 64)}
    if gpus in proxies:
        layers, pp, vp, gbs = proxies[gpus]
        return (f'llama3-405b-{layers}l', 8, pp, 2, vp, gbs,
                f'the proxy on {gpus} GPUs: num_layers {layers}, TP 8, PP {pp}, CP 2'
                f'{f", VP {vp}" if vp else ""}, global batch {gbs}')
    return 'llama3-405b', 8, 8, 2, 8, gpus // 2, 'TP 8, PP 8, CP 2, VP 8, global batch GPUs/2'


GROK2_COMMIT = 'dfc80397b9e1'
GROK2_NEMO = '6f2c6fdaffcc'  # grok1/setup.sh @ GROK2_COMMIT: NEMO_COMMIT
GROK2_RECIPE = (
    "What ran, read in the recipe (not a rule of ours): grok1/launch.sh (NVIDIA/dgxc-benchmarking "
    "@ " + GROK2_COMMIT + ", nemo:25.04.00) runs NVIDIA/NeMo @ " + GROK2_NEMO + " "
    "scripts/performance/llm/pretrain_grok1_314b.py with its {system} defaults: {layout}, global "
    "batch 2 a GPU, micro-batch 1 (no recommended_model_configs row exists for Grok-1, so nothing "
    "else comes from a CSV). The script's pretrain_recipe(performance_mode=True): the model "
    "(models/grok1_dgxc.textproto grok1-314b-nemo2), Megatron-Core's distributed optimizer with "
    "overlapped gradient reduce-scatter and parameter all-gather, gradients reduced in BF16 "
    "(grad_reduce_in_fp32 = False), sequence parallelism and the userbuffers TP overlap "
    "(tp_comm_overlap, userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192 for every system), "
    "MegatronTokenDropCallback (capacity factor 1.0, every expert padded to it), MixtralConfig's "
    "all-to-all dispatcher and aux-loss router, moe_grouped_gemm unset (Megatron-Core's default "
    "False: one GEMM per local expert), no recomputation; utils.py set_primary_perf_configs: "
    "Transformer Engine's cross entropy (cross_entropy_fusion_impl 'te'){graphs}; cuDNN's fused "
    "attention (Transformer Engine's default); Megatron-Core's default rank order (TP_DP_PP). "
    "{fp8}")
GROK2_FP8 = ("FP8 as the script sets it for --compute_dtype fp8: bf16_with_fp8_mixed, per-tensor "
             "delayed scaling (amax history 1024) with FP8 weights (fp8_param_gather = True). ")
# grok1/README.md @ GROK2_COMMIT: (system, GPUs, TP, PP, CP, EP, ETP, VP or 0, CUDA graphs) and
# (BF16 s, FP8 s, BF16 MFU %, FP8 MFU %). launch.sh's defaults equal the README's layout table.
GROK2 = [('GB200', 128, (4, 1, 1, 8, 4, 0, True), (7.325, 5.298, 47.59, 32.90)),
         ('GB200', 256, (4, 1, 1, 8, 4, 0, True), (7.39, 5.224, 47.17, 33.36)),
         ('GB200', 512, (4, 1, 1, 8, 4, 0, True), (7.324, 5.193, 47.6, 33.6)),
         ('H100', 512, (4, 8, 2, 8, 1, 8, False), (15.933, 13.433, 54.2, 32.2))]


def wrap(text):
    return '\n'.join(textwrap.wrap(text, 100, initial_indent='# ', subsequent_indent='# '))


def write(row):
    """The scenario of one row: a dict of name, title, readme, table, gpus, step, fp8, mfu, model,
    gbs, seq, tp, pp, cp, vp, ep (0: dense), notes, and deferral (the recipe's
    wgrad_deferral_limit, or none)."""
    fp8, tp, pp, cp = row['fp8'], row['tp'], row['pp'], row['cp']
    system, commit = row.get('system', 'H100'), row.get('commit', COMMIT)
    instance, gpus_per_node, domain = CLUSTER[system]
    dp = row['gpus'] // (tp * pp * cp)
    prec = 'FP8' if fp8 else 'BF16'
    head = (f"A public run OUTSIDE the calibration (a self-check; nothing is fitted on it): NVIDIA's "
            f"DGX Cloud benchmarking recipe for {row['title']}, its {prec} table: on {row['gpus']} "
            f"{system} GPUs, global batch {row['gbs']} ({row['gbs'] // dp} sequences a replica, DP "
            f"{dp}), {row['step']} s a training step (NVIDIA/dgxc-benchmarking {row['readme']} @ "
            f"{commit}).")
    fp8_note = row.get('fp8_note', FP8_NOTE) if fp8 else ''
    nemo2 = commit != COMMIT
    notes = [head] + row['notes'] + [GRADIENT_NOTE[nemo2] + fp8_note +
                                     SCORED.format(peak=PEAK[system][fp8])]
    lines = [wrap(t) for t in notes]
    lines += ['# Generated by tools/make_public_dgxc.py.',
              f'name: "{row["name"]}{"-fp8" if fp8 else ""}"',
              f'model: "{row["model"]}"',
              'job {',
              f'  global_batch_size: {row["gbs"]}',
              f'  sequence_length: {row["seq"]}',
              f'  precision: {prec}']
    if fp8:
        lines += ['  fp8_recipe: DELAYED_SCALING', '  fp8_parameters: true']
    lines += ['  optimizer: ADAM'] + [f'  {j}' for j in row.get('job_extra', [])]
    lines += ['  steps: 1',
              '}',
              f'cluster {{ instance: "{instance}" nodes: {row["gpus"] // gpus_per_node} '
              f'fabric: "ib-rail-optimized"{domain} }}',
              'parallelism {',
              f'  tensor_parallel: {tp}',
              f'  pipeline_parallel: {pp}',
              f'  context_parallel: {cp}']
    if row['ep']:
        lines.append(f'  expert_parallel: {row["ep"]}')
    lines += ['  micro_batch_size: 1',
              f'  sequence_parallel: {"true" if tp > 1 else "false"}']
    if tp > 1:
        lines.append('  overlap_tensor_communication: true')
    lines += ['  gradient_reduce_in_fp32: false',
              '  rank_order: TP_DP_PP']
    if row['vp']:
        lines += ['  schedule: INTERLEAVED_ONE_F_ONE_B', f'  virtual_stages: {row["vp"]}']
    lines += ['  distributed_optimizer: true'] + [f'  {p}' for p in row.get('par_extra', [])]
    lines += [f'  {p}' for p in GRADIENT_PASSES[nemo2]]
    if row.get('deferral') and pp > 1:
        lines += ['  defer_output_weight_gradient: true',
                  f'  output_weight_gradient_deferral_limit: {row["deferral"]}']
    lines += ['}',
              'published {',
              f'  group: "Public check: NeMo DGXC benchmarking, {row["group"]} ({system}, {prec})"',
              f'  tflops_per_gpu: {row["mfu"] / 100 * PEAK[system][fp8]:.1f}',
              '  flops_convention: MODEL_FLOPS',
              f'  step_time_s: {row["step"]}',
              f'  source: "NVIDIA/dgxc-benchmarking {row["readme"]} @ {commit}, table '
              f'\'{row["table"]} {prec}\', {row["gpus"]} GPUs"',
              '}']
    return f'{row["name"]}{"-fp8" if fp8 else ""}', '\n'.join(lines) + '\n'


def llama_rows():
    for size, table in LLAMA_TABLES.items():
        s = LLAMA[size]
        for gpus, bf16, fp8, mfu_bf16, mfu_fp8 in table:
            row = dict(title=f'Llama 3.1 {size.upper()}', readme=f'llama3.1/README_{size}.md',
                       table=f'Llama 3.1 {size}', group=f'Llama 3.1 {size.upper()}',
                       name=f'llama3.1-{size}-h100-{gpus}-dgxc', gpus=gpus, model=s['model'],
                       gbs=s['gbs'](gpus), seq=8192, tp=s['tp'], pp=s['pp'], cp=s['cp'],
                       vp=s['vp'], ep=0, deferral=OUTPUT_WGRAD_DEFERRAL.get(size))
            notes = [LLAMA_RECIPE.format(size=size, tp_overlap=LLAMA_TP[size]), LLAMA_MODEL[size]]
            if size == '405b' and gpus in LLAMA_405B_PROXIES:
                layers, pp, vp, gbs, model = LLAMA_405B_PROXIES[gpus]
                row.update(pp=pp, vp=vp, gbs=gbs, model=model)
                notes.append(f"Below 576 GPUs the README's rows are 'proxy configs': configure.sh "
                             f"sets model.num_layers={layers}, pipeline {pp}"
                             f"{f', {vp} chunks' if vp else ' (VP=null)'} and global batch {gbs} "
                             f"on {gpus} GPUs.")
            for is_fp8, step, mfu in ((False, bf16, mfu_bf16), (True, fp8, mfu_fp8)):
                yield dict(row, fp8=is_fp8, step=step, mfu=mfu, notes=notes)


def grok_rows():
    for gpus, (layers, seq, pp, cp, ep, vp, gbs), (bf16, fp8, mfu_bf16, mfu_fp8) in GROK:
        model = 'grok1-314b-dgxc' if layers == 64 else f'grok1-314b-dgxc-{layers}l'
        notes = [GROK_RECIPE]
        if layers < 64:
            notes.append(GROK_PROXY.format(layers=layers, seq=seq, pp=pp, cp=cp, ep=ep, gpus=gpus,
                                           vp=f', {vp} chunks' if vp else ' (VP=null)'))
        row = dict(title='Grok-1 314B', readme='grok1/README_314b.md', table='Grok 1 314b',
                   group='Grok-1 314B', name=f'grok1-314b-h100-{gpus}-dgxc', gpus=gpus,
                   model=model, gbs=gbs, seq=seq, tp=4, pp=pp, cp=cp, vp=vp, ep=ep, notes=notes,
                   job_extra=['attention_library: FLASH_ATTENTION_2', 'unfused_cross_entropy: true',
                              'expert_routing { capacity_factor: 1.0 pad_to_capacity: true }'])
        for is_fp8, step, mfu in ((False, bf16, mfu_bf16), (True, fp8, mfu_fp8)):
            yield dict(row, fp8=is_fp8, step=step, mfu=mfu)


def nemo2_405b_rows():
    for system, commit, nemo, tp, gpus, (bf16, fp8, mfu_bf16, mfu_fp8) in NEMO2_405B:
        row = dict(title='Llama 3.1 405B', readme='llama3.1/README.md', table='Llama3.1 405b',
                   group='Llama 3.1 405B, NeMo 2.0' if system == 'H100' else 'Llama 3.1 405B',
                   name=(f'llama3.1-405b-{system.lower()}-{gpus}-dgxc'
                         f'{"-nemo2-25.05" if system == "H100" else ""}'),
                   gpus=gpus, model='llama3-405b', gbs=gpus // 2, seq=8192, tp=tp, pp=8, cp=2,
                   vp=8, ep=0, system=system, commit=commit, fp8_note='',
                   deferral=OUTPUT_WGRAD_DEFERRAL['405b'],
                   job_extra=['transformer_engine_cross_entropy: true'],
                   par_extra=['embedding_in_pipeline_split: true', 'loss_in_pipeline_split: true'])
        for is_fp8, step, mfu in ((False, bf16, mfu_bf16), (True, fp8, mfu_fp8)):
            notes = [NEMO2_405B_RECIPE.format(commit=commit, nemo=nemo, tp=tp,
                                              csv=system.lower(), ub=UB_405B[system],
                                              fp8=NEMO2_405B_FP8 if is_fp8 else '')]
            yield dict(row, fp8=is_fp8, step=step, mfu=mfu, notes=notes)


def llama_nemo2_rows():
    for (size, fp8), table in LLAMA2_TABLES.items():
        recipe = {'8b': 'llama3_8b', '70b': 'llama3_70b', '405b': 'llama31_405b'}[size]
        for gpus, step, mfu in table:
            model, tp, pp, cp, vp, gbs, layout = llama2_layout(size, fp8, gpus)
            par_extra = (['embedding_in_pipeline_split: true', 'loss_in_pipeline_split: true']
                         if size == '405b' else [])
            notes = [LLAMA2_RECIPE.format(
                layout=layout, recipe=recipe, overlap=LLAMA2_OVERLAP[size].replace('{{', '{')
                .replace('}}', '}'), model=model + (" (Meta's shape, the Llama 3 tokenizer)"),
                fp8=LLAMA2_FP8 if fp8 else '')]
            yield dict(title=f'Llama 3.1 {size.upper()}', readme='llama3.1/README.md',
                       table=f'Llama 3.1 {size}', group=f'Llama 3.1 {size.upper()}, NeMo 2.0',
                       name=f'llama3.1-{size}-h100-{gpus}-dgxc-nemo2', gpus=gpus, model=model,
                       gbs=gbs, seq=8192, tp=tp, pp=pp, cp=cp, vp=vp, ep=0, commit=LLAMA2_COMMIT,
                       fp8_note='', par_extra=par_extra, fp8=fp8, step=step, mfu=mfu, notes=notes,
                       deferral=OUTPUT_WGRAD_DEFERRAL.get(size))


def grok_nemo2_rows():
    for system, gpus, (tp, pp, cp, ep, etp, vp, graphs), (bf16, fp8, mfu_bf16, mfu_fp8) in GROK2:
        layout = (f"TP {tp}, PP {pp}, CP {cp}, EP {ep}, expert TP {etp}"
                  f"{f', VP {vp}' if vp else ''}, CUDA graphs {'on' if graphs else 'off'}")
        job_extra = ['transformer_engine_cross_entropy: true',
                     'expert_routing { capacity_factor: 1.0 pad_to_capacity: true }']
        par_extra = [f'expert_tensor_parallel: {etp}']
        if graphs:
            par_extra.append('cuda_graphed_expert_layers: true')
        row = dict(title='Grok-1 314B', readme='grok1/README.md', table='Grok1 314b',
                   group='Grok-1 314B, NeMo 2.0', name=f'grok1-314b-{system.lower()}-{gpus}-dgxc-nemo2',
                   gpus=gpus, model='grok1-314b-nemo2', gbs=2 * gpus, seq=8192, tp=tp, pp=pp, cp=cp,
                   vp=vp, ep=ep, system=system, commit=GROK2_COMMIT, fp8_note='',
                   job_extra=job_extra, par_extra=par_extra)
        notes_for = lambda f: [GROK2_RECIPE.format(
            system=system, layout=layout, fp8=GROK2_FP8 if f else '',
            graphs=("; per-layer CUDA graphs (--cuda_graphs true: enable_cuda_graph, static "
                    "shapes under the padded router: cuda_graphed_expert_layers)" if graphs else
                    "; no CUDA graphs"))]
        for is_fp8, step, mfu in ((False, bf16, mfu_bf16), (True, fp8, mfu_fp8)):
            yield dict(row, fp8=is_fp8, step=step, mfu=mfu, notes=notes_for(is_fp8))


def main():
    write_scenarios(write(row) for rows in (llama_rows(), grok_rows(), nemo2_405b_rows(),
                                            llama_nemo2_rows(), grok_nemo2_rows())
                    for row in rows)


if __name__ == '__main__':
    main()
