#!/usr/bin/env python3
"""Writes scenarios/public_runs/mlperf-*.textproto: NVIDIA's MLPerf Training GPT-3 175B submissions
on DGX H100: v3.0 (512 and 768 GPUs, and CoreWeave's 768 to 3,584 HGX H100 runs of
the same recipe), v3.1 (512 to 10,752 GPUs, and Azure's 10,752-GPU ND H100 v5 run of the same
recipe), v4.0 (512 to 11,616 GPUs) and v4.1 (256 and 512 GPUs); v5.0's Llama 3.1 405B
submissions on DGX H100 (512 to 8,192 GPUs), Nebius's on 512 and 1,024 H200, and on GB200 NVL72:
NVIDIA's Tyche (256 and 512 GPUs) and IBM+CoreWeave+NVIDIA's Carina (512 to 2,496 GPUs); v5.1's
NVIDIA submissions on GB200 and GB300 NVL72: Llama 3.1 405B in NVFP4 (512 to 5,120 GPUs) and the
new Llama 3.1 8B in FP8 (72 and 512 GPUs) and in NVFP4 with FP8 attention (8 GPUs); and v5.1's
partner submissions of NVIDIA's recipe on systems the catalog expresses: the University of
Florida's DGX B200 (the 8B on 8 to 256 GPUs, the 405B on 256 and 448), Nebius's B200 and B300
nodes, Dell's, Lenovo's and Supermicro's 8-GPU B200 and B300 servers (Dell's on two servers too)
and Oracle's 8 x BM.GPU.B200.8. A public check outside the calibration (nothing is fitted on
them).

Usage: python3 tools/make_public_mlperf.py [OUT_DIR]   (default scenarios/public_runs)

v5.1's partner results left out: AMD's, and the MI350X / MI355X runs of Cisco, Dell,
GigaComputing and Supermicro (not NVIDIA's recipe); Lambda's GB300 (its only config sources
config_GB200_18x4x1xtp1pp1cp2_8b.sh, which its directory does not hold); Oracle's single node
(two configs fit it, FP8 and NVFP4, and nothing says which ran); HPE's H200 (no benchmarks
directory); Cisco's H100 (an older recipe of its own, README-eos-dfw_n64_ngc25.01_nemo.md, not
read); Verda's 8 x 8 B200 cluster (its systems file's "100GbE InfiniBand" cannot be the fabric of
a step as fast as the DGX B200's at the same layout, and no other is given); Oracle's single node
(above); Nebius's v5.1 H200 405B (logs without step metadata, not read further). Dell's 2-server
and Oracle's 8-server runs are in, their networks an unknown stated in their headers.

Sources: mlcommons/training_results_v3.0 at 63e326c, mlcommons/training_results_v3.1 at d06288b,
mlcommons/training_results_v4.0 at 6fe9543, mlcommons/training_results_v4.1 as mirrored in
swsok/training_results_v4.1 at b9b0547 and mlcommons/training_results_v5.0 as mirrored in
prishajain1/training_results_v5.0 at ab57af8, its GB200 and H200 runs in
mlcommons/training_results_v5.0 at 0fdc28f, and mlcommons/training_results_v5.1 at 441d65f (v4.1's
eos-dfw_n1452 result repeats v4.0's, so is not written again; its b200_n8_preview row is left out:
its config sources config_common_blackwell.sh, which the repository does not hold; v5.0's GB200
configs source it too, and their rows state what it may set). Each release's recipe is its
NVIDIA/benchmarks/<benchmark>/implementations/<dir>/ (RELEASES below: the config_DGXH100_*.sh
files, config_common.sh, config_fp8.sh, run_and_time.sh, conf/custom.yaml, the optimizer YAML or
v5.0's pretrain.py, Dockerfile); the partners' copies (Azure+NVIDIA/, NVIDIA_CoreWeave/) are
NVIDIA's recipe of the same release.

The step time: MLPerf publishes time to train. Each result_N.txt's MLLOG lines carry the blocks of
training between evaluations (block_start / block_stop, metadata epoch_count = the block's tokens;
v3.0's logs mark them by eval_stop and the next eval_start, whose epoch_num gives the tokens;
v5.0's blocks are trainer.val_check_interval = ceil(46080 / global batch) steps each; the logs of
NVIDIA's GB200 runs have no block_stop, and their blocks end at the block's last train_step_time
record, which the Carina logs that have both put 0.2-0.6 s before block_stop; v5.1's logs count
a block's steps in their step metadata, and its 405B runs are scored on their first block alone,
240-300 steps from run_start, the later ones being 15-20 steps each after an evaluation).
STEP_S below is, in result_0.txt, the summed time of blocks 2 to the last (v5.1's 405B: block 1)
over their steps (tokens / sequence / global_batch_size each; the first block, whose steps warm up
after the checkpoint load, left out): training samples over elapsed time, evaluations excluded.
CROSS_S is the same of result_1.txt (Nebius's directories start at result_1.txt: its result_1 and
result_2). TIMER_S (v3.0 and v3.1; none given for the others) is the
median of result_0.txt's tracked_stats train_step_timing, NeMo's own per-step timer, which
leaves out the host's time between steps (the next batch's fetch, the MLPerf callbacks).
"""

from public_runs import mlperf_published, wrap, write_scenarios

# Model FLOPs a sequence, forward and backward, attention over the whole s x s product (the
# simulator's MODEL_FLOPS). Only to print TFLOP/s beside the step time; the rows are scored on step
# time. GPT-3 175B: Megatron's count, Narayanan et al. SC'21 Eq. 3 without the recomputed forward,
# 72 s l h^2 (1 + s / 6h + V / 12 l h) with l 96, h 12288, s 2048, V 50257: 2.2044e15.
GPT3_FLOPS = 72 * 2048 * 96 * 12288**2 * (1 + 2048 / (6 * 12288) + 50257 / (12 * 96 * 12288))
# Llama 3.1 (MLPerf's): 3 x (forward) with, a token, 2 h (h + 2 k d) for Q, K, V, 2 h^2 for the
# output projection, 6 h f for the SwiGLU MLP and 4 s h for the attention's two products, over l
# layers, and 2 h V for the output layer, sequence s 8192. 405B: l 126, h 16384, k 8, d 128,
# f 53248, V 32768 (the Mixtral 8x22B tokenizer): 2.1431e16. 8B: l 32, h 4096, k 8, d 128,
# f 14336, V 128256 (the Llama 3.1 tokenizer): 4.2098e14.
def llama_flops(layers, h, kv_heads, head_dim, ffn, vocab, s=8192):
    return 3 * s * (layers * (2 * h * (h + 2 * kv_heads * head_dim) + 2 * h**2 + 6 * h * ffn
                              + 4 * s * h) + 2 * h * vocab)


LLAMA_FLOPS = llama_flops(126, 16384, 8, 128, 53248, 32768)
LLAMA_8B_FLOPS = llama_flops(32, 4096, 8, 128, 14336, 128256)

BENCHMARKS = {
    'gpt3': dict(model='gpt3-175b-mlperf', title='GPT-3 175B', sequence=2048, flops=GPT3_FLOPS,
                 flops_text='72 s l h^2 (1 + s/6h + V/12lh)'),
    'llama31_405b': dict(model='llama3.1-405b-mlperf', title='Llama 3.1 405B', sequence=8192,
                         flops=LLAMA_FLOPS,
                         flops_text='3 s (l (2h (h + 2kd) + 2h^2 + 6hf + 4sh) + 2hV)'),
    'llama31_8b': dict(model='llama3-8b', title='Llama 3.1 8B', sequence=8192,
                       flops=LLAMA_8B_FLOPS,
                       flops_text='3 s (l (2h (h + 2kd) + 2h^2 + 6hf + 4sh) + 2hV)'),
}

COMMON = (
    "Apex distributed_fused_adam (USE_DIST_OPTIMIZER=True) with overlap_grad_sync and "
    "overlap_param_sync, grad_sync_dtype bf16 (gradients reduced in BF16; its buckets zeroed "
    "each step and not scaled in a pass of their own: averaged in the reduce-scatter, "
    "ReduceOp.AVG under average_grad_sync, or before 2023 divided inside its Adam kernel: "
    "gradient_scaling AVERAGE_IN_COLLECTIVE), fp32 master weights "
    "and moments; sequence parallelism (SEQ_PARALLEL default True) and userbuffers TP overlap "
    "(TP_COMM_OVERLAP=True); no activation recomputation (ACT_CKPT_GRANULARITY null); hidden and "
    "attention dropout 0 (model gpt3-175b-mlperf); FP8 as Transformer Engine's delayed scaling "
    "(config_fp8.sh: FP8_HYBRID, amax history 1024, max); Megatron's rank order tp-dp-pp "
    "(TP_DP_PP).")

# v5.1's Llama 3.1 405B submissions all ran NVFP4 (each README-<system>.md names its *_cg_fp4.sh
# config); one recipe on GB200 and GB300, its text shared.
V51_WHAT = (
    "NeMo and Megatron-Core 25.09-alpha.rc1 in the pytorch:25.09 container, Transformer Engine "
    "release_v2.8 with the recipe's te.patch (userbuffers initialisation only), NCCL v2.28.3-1 "
    "(Dockerfile); pretrain.py: NeMo's Llama31Config405B (model llama3.1-405b-mlperf), "
    "Megatron-Core's distributed optimizer with overlapped gradient reduce-scatter and parameter "
    "all-gather, grad_reduce_in_fp32=False (gradients reduced in BF16, average_in_collective), "
    "the gradient buffer's NaN check off (check_for_nan_in_grad=False), fp32 main weights and "
    "moments; NVFP4 (config_common_fp4.sh: FP4=True, FP4_RECIPE nvfp4, FP8=False) on every layer "
    "(FIRST_LAST_LAYERS_BF16 unset), 16-bit weights cast each step (FP8_PARAM_GATHER=False, no "
    "fp4_param_gather), 16-bit attention (FP8_DPA unset: config_common_fp8attn.sh is not "
    "sourced), cuDNN's fused attention; sequence parallelism without the userbuffers TP overlap "
    "(config_common_fp4.sh TP_COMM_OVERLAP=False: the tensor-parallel all-gathers and "
    "reduce-scatters as NCCL collectives); context parallelism 2 as Megatron-Core's peer-to-peer "
    "ring; no activation recomputation; the loss as Megatron-Core's fused cross entropy "
    "(CROSS_ENTROPY_LOSS_FUSION default True, CE_FUSION_IMPL native); the embedding and the loss "
    "counted as a layer each in the pipeline split (ASYM_PP_EMBED, ASYM_PP_LOSS); the output "
    "layer's weight gradients computed in place (config_common_cg.sh "
    "DEFER_EMBEDDING_WGRAD_COMPUTE=False); the whole step and each layer captured as CUDA graphs "
    "(config_common_cg.sh FULL_CUDA_GRAPH=1, MCORE_CUDA_GRAPH=1: cuda_graph_scope "
    "full_iteration); ")
V51_MISSING = (
    "Not expressible, left at the simulator's one model: the NVFP4 recipe's options "
    "NVTE_NVFP4_DISABLE_RHT=1, NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING=1 and "
    "NVTE_NVFP4_DISABLE_2D_QUANTIZATION=1 (the simulator's NVFP4 is Transformer Engine's default "
    "recipe with all three: without the Hadamard transform the column-wise copy is a plain "
    "cast-transpose, one read of the tensor for both copies as in TE's "
    "quantize_transpose_nvfp4.cuh, which is what the fused default charges; the weights' 16 x 16 "
    "blocks change only their scales); the CUDA graphs (the simulator charges a dense layer no "
    "host launch time); the LayerNorm kernels' SM margin (NVTE_FWD/BWD_LAYERNORM_SM_MARGIN=16) "
    "and cuDNN's normalization kernels (NVTE_NORM_FWD/BWD_USE_CUDNN=1); NCCL's CTA limits "
    "(NCCL_MIN_CTAS=16, NCCL_MAX_CTAS=32) and NVLink SHARP turned off (NCCL_NVLS_ENABLE=0); the "
    "parameter all-gather aligned across chunks (ALIGN_PARAM_GATHER); the DDP bucket size "
    "(custom.yaml bucket_size 134217728).")

# v5.1's new Llama 3.1 8B pre-training benchmark: one recipe directory for every system
# (NVIDIA/benchmarks/llama31_8b/implementations/nemo, the 405B's files but for its configs), FP8
# on 72 and 512 GPUs.
V51_8B_WHAT = (
    "NeMo and Megatron-Core 25.09-alpha.rc1 in the pytorch:25.09 container, Transformer Engine "
    "release_v2.8 (Dockerfile); pretrain.py: NeMo's Llama31Config8B (32 layers, hidden 4096, the "
    "Llama 3.1 tokenizer: model llama3-8b, the same shape), Megatron-Core's distributed optimizer "
    "with overlapped gradient reduce-scatter and parameter all-gather (not aligned: "
    "config_common_8b.sh ALIGN_PARAM_GATHER=False), 768 MB buckets (BUCKET_SIZE=768000000), "
    "grad_reduce_in_fp32=False (gradients reduced in BF16, average_in_collective), the gradient "
    "buffer's NaN check off, fp32 main weights and moments; FP8 as Transformer Engine's "
    "per-tensor current scaling (config_common.sh FP8_RECIPE=tensorwise), hybrid E4M3 / E5M2 "
    "(FP8_HYBRID=True), FP8 weights (FP8_PARAM_GATHER=True: fp8_param_gather); 16-bit attention "
    "(FP8_DPA unset), cuDNN's fused attention; context parallelism as Megatron-Core's "
    "peer-to-peer ring; no activation recomputation; the loss as Transformer Engine's cross "
    "entropy (CE_FUSION_IMPL=te); the output layer's weight gradients computed in place "
    "(DEFER_EMBEDDING_WGRAD_COMPUTE=False); the whole step and each layer captured as CUDA graphs "
    "(config_common_cg.sh FULL_CUDA_GRAPH=1, MCORE_CUDA_GRAPH=1); ")
V51_8B_MISSING = (
    "Not expressible, left at the simulator's one model: Transformer Engine's operation fuser "
    "where the config sets USE_TE_OPS (config_common_8b.sh True, the 512-GPU configs False) and "
    "the fused QKV + RoPE kernel (FUSED_QKV_ROPE=True); the CUDA graphs (the simulator charges "
    "a dense layer no host launch time); the LayerNorm kernels' SM margin "
    "(NVTE_FWD/BWD_LAYERNORM_SM_MARGIN=16); NCCL's CTA limits (NCCL_MIN_CTAS=16, "
    "NCCL_MAX_CTAS=32) and NVLink SHARP turned off (NCCL_NVLS_ENABLE=0); the DDP buckets of "
    "768M parameters (BUCKET_SIZE=768000000; the simulator keeps Megatron-Core's default, max(40M, "
    "1M x the data x context-parallel ranks)).")

RELEASES = {
    'v3.0': dict(
        repo='mlcommons/training_results_v3.0 @ 63e326c',
        recipe='NVIDIA/benchmarks/gpt3/implementations/pytorch',
        group='Public check: MLPerf Training v3.0 GPT-3 175B (DGX H100, FP8)',
        fp8_parameters=False, flash_attention_2=True, fused_loss=False,
        reduce_scatter_sms=(24, 20, 'h100tp4pp8mbs1_tp_comm_overlap_cfg.yaml (config_tp_h100.sh '
                            'at MBS 1): proj_fprop and fc2_fprop pipeline, num_sm 24 and 20, '
                            'set_sm_margin 1'),
        what=("NeMo v1.17.0_pt_23.04 (NeMo's own GPT model) in the pytorch:23.04 container, "
              "Transformer Engine release_v0.8 (Dockerfile); config_common.sh: "
              "INTERLEAVED_PIPELINE=12 (one layer a model chunk), ACT_CKPT_GRANULARITY null; "
              "config_tp_h100.sh: TP_COMM_OVERLAP=True; conf/megatron_gpt_config.yaml: hidden, "
              "attention and FFN dropout 0, distributed_fused_adam with 100 MB buckets; 16-bit "
              "weights cast to FP8 each step (no fp8 parameters in this release); the loss as "
              "Megatron's unfused vocabulary-parallel cross entropy (no fusion in NeMo 1.17); "
              "attention as flash-attn 1.x (TE release_v0.8's DotProductAttention calls "
              "flash_attn_unpadded_func, flash-attn >= 1.0.2, for a causal mask on sm80+ unless "
              "NVTE_FLASH_ATTN=0). The catalog has no FlashAttention-1 rates: the rows run "
              "FlashAttention-2's (attention_library FLASH_ATTENTION_2), the nearest expressible "
              "and faster than what ran, an unknown that biases the prediction fast; "),
        missing=("Not expressible, left at the simulator's one model: FlashAttention-1's kernels "
                 "(above); of the userbuffers configuration, the SMs the bulk overlaps' kernels "
                 "share with the backward's GEMMs (set_sm_margin 0); Transformer Engine "
                 "release_v0.8's synchronous amax reduction (NVTE_ASYNC_AMAX_REDUCTION unset: an "
                 "all-reduce over the amax group after every model chunk's forward and "
                 "backward).")),
    'v3.1': dict(
        repo='mlcommons/training_results_v3.1 @ d06288b',
        recipe='NVIDIA/benchmarks/gpt3/implementations/pytorch',
        group='Public check: MLPerf Training v3.1 GPT-3 175B (DGX H100, FP8)',
        fp8_parameters=False, flash_attention_2=True, fused_loss=False,
        reduce_scatter_sms=(24, 4, 'conf/tp_overlap/h100tp4pp8mbs1.yaml (custom.yaml picks '
                            'h100tp${TP}pp${PP}mbs${MBS}): proj_fprop and fc2_fprop pipeline, '
                            'num_sm 24 and 4, set_sm_margin 1'),
        what=("NeMo at bd0b818a (r1.20 base, NeMo's own GPT model) in the pytorch:23.09 "
              "container, Transformer Engine 09ba8427, flash-attn 2.0.8 (Dockerfile); no config "
              "sets INTERLEAVED_PIPELINE, so custom.yaml's default virtual pipeline 12 holds (one "
              "layer a model chunk); "
              "16-bit weights cast to FP8 each step (no fp8 parameters in this release); attention "
              "as flash-attn's FlashAttention-2 (TE 09ba8427's DotProductAttention takes "
              "flash-attn "
              "whenever NVTE_FLASH_ATTN is unset, as config_common.sh leaves it); the loss as "
              "Megatron's unfused vocabulary-parallel cross entropy (no fusion in NeMo 1.20); "),
        missing=("Not expressible, left at the simulator's one model: the atomic FP8 GEMM + "
                 "reduce-scatter variant of the TP overlap (NVTE_UB_ATOMIC_GEMM_RS=1, "
                 "NVTE_RS_STRIDED_ATOMIC=1), the asynchronous amax reduction "
                 "(NVTE_ASYNC_AMAX_REDUCTION=1), the per-collective CTA limits "
                 "(MEGATRON_CORE_*_MAX_CTAS) and the 100 MB gradient buckets (bucket_cap_mb).")),
    'v4.0': dict(
        repo='mlcommons/training_results_v4.0 @ 6fe9543',
        recipe='NVIDIA/benchmarks/gpt3/implementations/nemo',
        group='Public check: MLPerf Training v4.0 GPT-3 175B (DGX H100, FP8)',
        fp8_parameters=True, flash_attention_2=False, fused_loss=False,
        reduce_scatter_sms=(24, 1, 'conf/tp_overlap/h100tp4mbs{1,2}.yaml (custom.yaml picks '
                            'h100tp${TP}mbs${MBS}): proj_fprop pipeline num_sm 24, fc2_fprop '
                            'ring_exchange num_sm 1, both set_sm_margin 1'),
        what=("NeMo v2.0.0.rc0.beta with Megatron-Core core_v0.7.0.beta's GPT model (custom.yaml "
              "mcore_gpt True) in the pytorch:24.04 container, Transformer Engine v1.6rc1 "
              "(Dockerfile); FP8 weights (config_common.sh FP8_PARAMS=True: fp8_parameters); "
              "attention as cuDNN's fused attention (TE v1.6rc1's DotProductAttention prefers "
              "FusedAttention over flash-attn on sm90); 200 MB gradient buckets "
              "(BUCKET_CAP_MB=200); the loss as Megatron's unfused vocabulary-parallel cross "
              "entropy "
              "(custom.yaml sets no cross_entropy_loss_fusion: Megatron-Core's default False); "),
        missing=("Not expressible, left at the simulator's one model: per-layer CUDA graphs "
                 "where the config sets LAYER_CUDA_GRAPH=1 (the simulator charges a dense layer "
                 "no host launch time, so graphs change nothing in it); the FP8 "
                 "and atomic variants of the TP overlap's reduce-scatter (NVTE_UB_FP8_RS, "
                 "NVTE_UB_ATOMIC_GEMM_RS, NVTE_RS_STRIDED_ATOMIC); the asynchronous amax reduction "
                 "(NVTE_ASYNC_AMAX_REDUCTION=1) and the NCCL CTA limits "
                 "(conf/nccl/custom_communicator_cta.yaml).")),
    'v4.1': dict(
        repo='mlcommons/training_results_v4.1 (mirror swsok/training_results_v4.1 @ b9b0547)',
        recipe='NVIDIA/benchmarks/gpt3/implementations/eos_n{nodes}_ngc24.09_nemo',
        group='Public check: MLPerf Training v4.1 GPT-3 175B (DGX H100, FP8)',
        fp8_parameters=True, flash_attention_2=False, fused_loss=True,
        reduce_scatter_sms=(24, 1, 'conf/tp_overlap/h100tp4mbs2.yaml: proj_fprop pipeline num_sm '
                            '24, fc2_fprop ring_exchange num_sm 1, both set_sm_margin 1'),
        what=("NeMo and Megatron-Core 24.09-alpha.rc0 (Megatron-Core's GPT model, custom.yaml "
              "mcore_gpt True) in the pytorch:24.09 container and its Transformer Engine "
              "(Dockerfile); FP8 weights (config_common.sh FP8_PARAMS=True: fp8_parameters); "
              "attention as cuDNN's fused attention (Transformer Engine 1.x prefers FusedAttention "
              "over flash-attn on sm90, read at v1.6rc1 and v1.11); the loss as Megatron-Core's "
              "fused cross entropy (custom.yaml's CROSS_ENTROPY_LOSS_FUSION default True); "),
        missing=("Not expressible, left at the simulator's one model: vboost where the config "
                 "sets VBOOST_VALUE=1 (at MINIBS 128: nvidia-smi boost-slider, the power budget "
                 "shifted toward the SM clocks); the gradient buckets' size (BUCKET_CAP_MB); the "
                 "atomic "
                 "variant of the TP overlap's "
                 "reduce-scatter (NVTE_UB_ATOMIC_GEMM_RS=1) and the NCCL CTA limits "
                 "(conf/nccl/custom_communicator_cta.yaml).")),
    'v5.0': dict(
        repo='mlcommons/training_results_v5.0 (mirror prishajain1/training_results_v5.0 @ ab57af8)',
        recipe='NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n{nodes}_ngc25.01_nemo',
        group='Public check: MLPerf Training v5.0 Llama 3.1 405B (DGX H100, FP8)',
        benchmark='llama31_405b', context_parallel=2, pipeline_split=True,
        fp8_parameters=True, flash_attention_2=False, fused_loss=True,
        reduce_scatter_sms=(0, 0, 'conf/tp_overlap/h100tp8mbs1.yaml: proj_fprop and fc2_fprop '
                            'ring_exchange, which pretrain.py passes as NeMo\'s '
                            'RingExchangeOverlapCfg (set_sm_margin default False)'),
        what=("NeMo v2.2.0 and Megatron-Core core_r0.11.0 in the pytorch:25.01 container and its "
              "Transformer Engine (Dockerfile); pretrain.py: NeMo's Llama31Config405B (126 layers, "
              "sequence 8192, Mixtral 8x22B's tokenizer: model llama3.1-405b-mlperf), "
              "Megatron-Core's distributed optimizer with overlapped gradient reduce-scatter and "
              "parameter all-gather, grad_reduce_in_fp32=False (gradients reduced in BF16), fp32 "
              "main weights and moments, FP8 weights (FP8_PARAMS=True: fp8_param_gather); FP8 as "
              "Transformer Engine's delayed scaling, E4M3 (FP8_HYBRID unset: pretrain.py's fp8 "
              "'e4m3'), amax history 1; sequence parallelism and userbuffers TP overlap "
              "(TP_COMM_OVERLAP=True); context parallelism 2 as Megatron-Core's peer-to-peer ring "
              "(cp_comm_type unset); no activation recomputation (ACT_CKPT_GRANULARITY null); "
              "cuDNN's fused attention (Transformer Engine's choice on sm90); the loss as "
              "Megatron-Core's fused cross entropy (CROSS_ENTROPY_LOSS_FUSION default True); the "
              "embedding and the loss counted as a layer each in the pipeline split "
              "(ASYM_PP_EMBED, ASYM_PP_LOSS: 128 layers over 64 model chunks); Megatron-Core's "
              "rank order tp-cp-dp-pp (TP_DP_PP); "),
        missing=("Not expressible, left at the simulator's one model: the parameter all-gather "
                 "overlapped with the optimizer step (OVERLAP_PARAM_GATHER_WITH_OPTIM_STEP) and "
                 "aligned across chunks (ALIGN_PARAM_GATHER), the DDP bucket size (BUCKET_SIZE "
                 "200), "
                 "E4M3 against "
                 "hybrid FP8 (one FP8 rate in the simulator) and the NCCL CTA limits "
                 "(conf/nccl/custom_communicator_cta.yaml).")),
    'v5.0-gb200': dict(
        round='v5.0', system='gb200',
        repo='mlcommons/training_results_v5.0 @ 0fdc28f',
        recipe='{submitter}/benchmarks/llama31_405b/implementations/{system_name}',
        group='Public check: MLPerf Training v5.0 Llama 3.1 405B (GB200 NVL72, FP8)',
        benchmark='llama31_405b', context_parallel=2, pipeline_split=True,
        fp8_parameters=True, flash_attention_2=False, fused_loss=True,
        reduce_scatter_sms=(0, 0, 'conf/tp_overlap/gb200tp4mbs1.yaml or b200tp4mbs1.yaml, as '
                            'GPU_ARCH picks: proj_fprop and fc2_fprop ring_exchange, which '
                            'pretrain.py passes as NeMo\'s RingExchangeOverlapCfg (set_sm_margin '
                            'default False)'),
        what=("NeMo and Megatron-Core 25.04-alpha.rc2 in the pytorch:25.04 container, Transformer "
              "Engine v2.2.1 (Dockerfile); pretrain.py: NeMo's Llama31Config405B (126 layers, "
              "sequence 8192, Mixtral 8x22B's tokenizer: model llama3.1-405b-mlperf), "
              "Megatron-Core's distributed optimizer with overlapped gradient reduce-scatter and "
              "parameter all-gather, grad_reduce_in_fp32=False (gradients reduced in BF16, "
              "average_in_collective), fp32 main weights and moments, FP8 weights "
              "(FP8_PARAM_GATHER=True: fp8_param_gather); FP8 as Transformer Engine's delayed "
              "scaling, E4M3 (FP8_HYBRID unset), amax history 1; sequence parallelism and "
              "userbuffers TP overlap (TP_COMM_OVERLAP=True); context parallelism 2 as "
              "Megatron-Core's peer-to-peer ring (cp_comm_type unset); no activation "
              "recomputation; cuDNN's fused attention (Transformer Engine's choice); the loss as "
              "Megatron-Core's fused cross entropy (CROSS_ENTROPY_LOSS_FUSION default True); the "
              "embedding and the loss counted as a layer each in the pipeline split "
              "(ASYM_PP_EMBED, ASYM_PP_LOSS: 128 layers over 64 model chunks); the whole training "
              "step captured "
              "as one CUDA graph (config_common_cg.sh FULL_CUDA_GRAPH=True), so the gradient "
              "buffer's NaN check is off (pretrain.py check_for_nan_in_grad = not "
              "full_cuda_graph) and the parameter all-gather is not overlapped with the "
              "optimizer step (OVERLAP_PARAM_GATHER_WITH_OPTIM_STEP=False); "),
        missing=("Not expressible, left at the simulator's one model: the full-iteration CUDA "
                 "graph (the simulator charges a dense layer no host launch time, so it changes "
                 "nothing here); the recipe's own CUDA embedding kernels (embedding_lib); the "
                 "LayerNorm kernels' SM margin (NVTE_FWD/BWD_LAYERNORM_SM_MARGIN=8); NCCL's "
                 "NVLink SHARP turned off (NCCL_NVLS_ENABLE=0) and its CTA limits "
                 "(conf/nccl/custom_communicator_cta.yaml); the parameter all-gather aligned "
                 "across chunks (ALIGN_PARAM_GATHER); the DDP bucket size (BUCKET_SIZE 200); "
                 "E4M3 against hybrid FP8 (one FP8 rate in the simulator). Unknown: "
                 "config_common_blackwell.sh, which every GB200 config sources, is not in the "
                 "repository; GPU_ARCH, which picks the userbuffers file, is presumably set "
                 "there (the two candidate files differ only in the bulk overlaps' SMs, which "
                 "no field expresses).")),
    'v5.1-gb200': dict(
        round='v5.1', system='gb200', precision='FP4', fp8_recipe='NVFP4', tp_overlap=False,
        first_block=True, name_suffix='-nvfp4', tp_pp_dp_mapping=True,
        repo='mlcommons/training_results_v5.1 @ 441d65f',
        recipe='{submitter}/benchmarks/llama31_405b/implementations/{system_name}',
        group='Public check: MLPerf Training v5.1 Llama 3.1 405B (GB200 NVL72, NVFP4)',
        benchmark='llama31_405b', context_parallel=2, pipeline_split=True,
        fp8_parameters=False, flash_attention_2=False, fused_loss=True, reduce_scatter_sms=None,
        what=V51_WHAT, missing=V51_MISSING),
    'v5.1-8b-gb200': dict(
        round='v5.1', system='gb200', fp8_recipe='CURRENT_SCALING', tp_pp_dp_mapping=True,
        te_cross_entropy=True,
        repo='mlcommons/training_results_v5.1 @ 441d65f',
        recipe='{submitter}/benchmarks/llama31_8b/implementations/nemo',
        group='Public check: MLPerf Training v5.1 Llama 3.1 8B (GB200 NVL72, FP8)',
        benchmark='llama31_8b', fp8_parameters=True, flash_attention_2=False, fused_loss=True,
        reduce_scatter_sms=(0, 0, 'conf/tp_overlap/gb200tp2mbs1.yaml (config_common.sh '
                            'GPU_ARCH=gb200): proj_fprop and fc2_fprop ring_exchange, which '
                            'pretrain.py passes as NeMo\'s RingExchangeOverlapCfg (set_sm_margin '
                            'default False)'),
        what=V51_8B_WHAT, missing=V51_8B_MISSING),
}

# v5.1's GB300 rows: the GB200 recipe of the same benchmark on GB300 NVL72 trays.
RELEASES['v5.1-gb300'] = dict(
    RELEASES['v5.1-gb200'], system='gb300',
    group='Public check: MLPerf Training v5.1 Llama 3.1 405B (GB300 NVL72, NVFP4)')
RELEASES['v5.1-8b-gb300'] = dict(
    RELEASES['v5.1-8b-gb200'], system='gb300',
    group='Public check: MLPerf Training v5.1 Llama 3.1 8B (GB300 NVL72, FP8)',
    reduce_scatter_sms=(0, 0, 'conf/tp_overlap/gb200tp2mbs1.yaml (config_common.sh '
                        'GPU_ARCH=gb200 on GB300 too): proj_fprop and fc2_fprop '
                        'ring_exchange, which pretrain.py passes as NeMo\'s '
                        'RingExchangeOverlapCfg (set_sm_margin default False)'))

# v5.1's 8B in NVFP4 with FP8 attention (config_common_fp4.sh, then config_common_8b.sh, then
# config_common_fp8attn.sh): NVIDIA's 8-GPU runs on two NVL72 trays and the partners' B200 / B300
# servers. config_common_8b.sh, sourced after config_common_fp4.sh, turns the NVFP4 stochastic
# rounding and 2D weight blocks back on (NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING=0,
# NVTE_NVFP4_DISABLE_2D_QUANTIZATION=0), the Hadamard transform stays off.
_V51_8B_FP8_TEXT = (
    "FP8 as Transformer Engine's per-tensor current scaling (config_common.sh "
    "FP8_RECIPE=tensorwise), hybrid E4M3 / E5M2 (FP8_HYBRID=True), FP8 weights "
    "(FP8_PARAM_GATHER=True: fp8_param_gather); 16-bit attention (FP8_DPA unset), cuDNN's fused "
    "attention; ")
assert _V51_8B_FP8_TEXT in V51_8B_WHAT
V51_8B_FP4_WHAT = V51_8B_WHAT.replace(_V51_8B_FP8_TEXT, (
    "NVFP4 GEMMs (config_common_fp4.sh: FP4=True, FP4_RECIPE nvfp4, FP8=False) on every layer, "
    "16-bit weights cast each step (FP8_PARAM_GATHER=False), without the random Hadamard "
    "transform (NVTE_NVFP4_DISABLE_RHT=1), with stochastic rounding and 2D weight blocks where "
    "the config sources config_common_8b.sh after config_common_fp4.sh (it sets "
    "NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING=0 and NVTE_NVFP4_DISABLE_2D_QUANTIZATION=0), without "
    "them where it sources it before; FP8 attention (config_common_fp8attn.sh FP8_DPA=True: "
    "Megatron-Core's fp8_dot_product_attention) under Transformer Engine's current scaling "
    "(config_common_fp4.sh NVTE_DPA_FP8_RECIPE=\"Float8CurrentScaling\", "
    "NVTE_DPA_FP8_FORMAT=\"HYBRID\": release_v2.8 dot_product_attention.py builds a "
    "Float8CurrentScaling recipe for Q, K, V, O and their gradients beside the NVFP4 one: "
    "fp8_attention_recipe CURRENT_SCALING), cuDNN's fused attention; ")).replace(
    "the whole step and each layer captured as CUDA graphs (config_common_cg.sh FULL_CUDA_GRAPH=1, "
    "MCORE_CUDA_GRAPH=1); ",
    "each layer captured as a CUDA graph (config_common_cg.sh MCORE_CUDA_GRAPH=1), the whole step "
    "too where the config leaves config_common_cg.sh's FULL_CUDA_GRAPH=1 (the 8-GPU NVFP4 configs "
    "set 0); ")
assert V51_8B_FP4_WHAT != V51_8B_WHAT
V51_8B_FP4_MISSING = V51_8B_MISSING.replace(
    "Not expressible, left at the simulator's one model: ",
    "Not expressible, left at the simulator's one model: NVFP4 without the Hadamard transform "
    "(NVTE_NVFP4_DISABLE_RHT=1; the simulator's fused cast writes both copies in one read, which "
    "is what a plain cast-transpose does); the FP8 attention's output kept in 16 bits "
    "(NVTE_DPA_FP8CS_O_in_F16=1; the simulator counts no FP8 output of a per-tensor recipe) and "
    "the delayed scaling of its internal S and dP tensors (no amax reduction: "
    "NVTE_DPA_FP8DS_REDUCE_AMAX=0); ")
# The new groups' names sort after the existing MLPerf groups (validate lists groups by name).
V51_8B_FP4_GROUP = 'Public check: MLPerf Training v5.1 {} ({}, NVFP4 with FP8 attention)'
RELEASES['v5.1-8b-gb200-fp4'] = dict(
    RELEASES['v5.1-8b-gb200'], precision='FP4', fp8_recipe='NVFP4', fp8_parameters=False,
    fp8_attention_recipe='CURRENT_SCALING', tp_overlap=False, name_suffix='-nvfp4',
    group=V51_8B_FP4_GROUP.format('Llama 3.1 8B', 'NVL72 trays, GB200 and GB300, 8 GPUs'),
    reduce_scatter_sms=None,
    what=V51_8B_FP4_WHAT, missing=V51_8B_FP4_MISSING)
RELEASES['v5.1-8b-gb300-fp4'] = dict(RELEASES['v5.1-8b-gb200-fp4'], system='gb300')
# The partners' 8-GPU servers: NVIDIA's recipe, each partner's copy of its files (config_common*.sh
# alike but for GPU_ARCH=gb200 left out, which only picks a userbuffers file these TP-1 runs do
# not use), one config per system.
RELEASES['v5.1-8b-b200-fp4'] = dict(
    RELEASES['v5.1-8b-gb200-fp4'], system='b200',
    group=V51_8B_FP4_GROUP.format("partners' Llama 3.1 8B", 'B200 and B300 servers'))
RELEASES['v5.1-8b-b300-fp4'] = dict(RELEASES['v5.1-8b-b200-fp4'], system='b300')
# The same servers and the University of Florida's DGX B200 in the 8B's FP8 recipe (FP8 GEMMs,
# 16-bit attention), as in the NVL72 rows.
V51_8B_SERVER_FP8_GROUP = ("Public check: MLPerf Training v5.1 partners' Llama 3.1 8B (B200 and "
                           'B300 servers, FP8)')
RELEASES['v5.1-8b-b200'] = dict(
    RELEASES['v5.1-8b-gb200'], system='b200', tp_overlap=False, reduce_scatter_sms=None,
    group=V51_8B_SERVER_FP8_GROUP)
RELEASES['v5.1-8b-b300'] = dict(RELEASES['v5.1-8b-b200'], system='b300')
# The University of Florida's Llama 3.1 405B on DGX B200: NVIDIA's FP8 recipe of the release
# (its b200_nemo copy), whose DGX B200 configs were not run by NVIDIA itself.
RELEASES['v5.1-405b-b200'] = dict(
    round='v5.1', system='b200', fp8_recipe='CURRENT_SCALING', tp_overlap=False, first_block=True,
    tp_pp_dp_mapping=True,
    repo='mlcommons/training_results_v5.1 @ 441d65f',
    group="Public check: MLPerf Training v5.1 partners' Llama 3.1 405B (DGX B200, FP8)",
    benchmark='llama31_405b', context_parallel=2, pipeline_split=True,
    fp8_parameters=True, flash_attention_2=False, fused_loss=True, reduce_scatter_sms=None,
    what=V51_WHAT.replace(
        "NVFP4 (config_common_fp4.sh: FP4=True, FP4_RECIPE nvfp4, FP8=False) on every layer "
        "(FIRST_LAST_LAYERS_BF16 unset), 16-bit weights cast each step (FP8_PARAM_GATHER=False, no "
        "fp4_param_gather), ",
        "FP8 as Transformer Engine's per-tensor current scaling (config_common.sh FP8=True, "
        "FP8_RECIPE=tensorwise; FP8_HYBRID unset: E4M3), FP8 weights (FP8_PARAM_GATHER=True: "
        "fp8_param_gather), ").replace(
        "16-bit attention (FP8_DPA unset: config_common_fp8attn.sh is not sourced)",
        "16-bit attention (FP8_DPA unset)").replace(
        "sequence parallelism without the userbuffers TP overlap (config_common_fp4.sh "
        "TP_COMM_OVERLAP=False: the tensor-parallel all-gathers and reduce-scatters as NCCL "
        "collectives)",
        "sequence parallelism without the userbuffers TP overlap (the config, unlike NVIDIA's "
        "config_DGXB200_64x8x144xtp4pp8cp2_cg.sh, leaves TP_COMM_OVERLAP unset: custom.yaml's "
        "ub_tp_comm_overlap default False; MC_TP_OVERLAP_AG/RS=True act only under it)"),
    missing=("Not expressible, left at the simulator's one model: the CUDA graphs (the simulator "
             "charges a dense layer no host launch time); the LayerNorm kernels' SM margin "
             "(NVTE_FWD/BWD_LAYERNORM_SM_MARGIN=16) and cuDNN's normalization kernels "
             "(NVTE_NORM_FWD/BWD_USE_CUDNN=1); NCCL's CTA limits (NCCL_MIN_CTAS=16, "
             "NCCL_MAX_CTAS=32) and NVLink SHARP turned off (NCCL_NVLS_ENABLE=0); the parameter "
             "all-gather aligned across chunks (ALIGN_PARAM_GATHER); the DDP bucket size "
             "(custom.yaml bucket_size 134217728); E4M3 against hybrid FP8 (one FP8 rate in the "
             "simulator)."))

# Nebius's v5.0 H200 runs: NVIDIA's eos-dfw recipe of the same release (pretrain.py, custom.yaml,
# Dockerfile alike) at TP 4 with the H100 TP-4 userbuffers file, NVLink SHARP left on.
_RANK_ORDER_V50 = "Megatron-Core's rank order tp-cp-dp-pp (TP_DP_PP); "
assert _RANK_ORDER_V50 in RELEASES['v5.0']['what']
RELEASES['v5.0-h200'] = dict(
    RELEASES['v5.0'], round='v5.0', system='h200', result_files=('result_1.txt', 'result_2.txt'),
    repo='mlcommons/training_results_v5.0 @ 0fdc28f',
    recipe='{submitter}/benchmarks/llama31_405b/implementations/{system_name}',
    group='Public check: MLPerf Training v5.0 Llama 3.1 405B (Nebius H200, FP8)',
    reduce_scatter_sms=(24, 0, 'conf/tp_overlap/h100tp4mbs1.yaml (GPU_ARCH unset): proj_fprop '
                        'pipeline num_sm 24, set_sm_margin 1, which pretrain.py passes as NeMo\'s '
                        'PipelineOverlapCfg; fc2_fprop ring_exchange, passed as '
                        'RingExchangeOverlapCfg (set_sm_margin default False)'),
    what=RELEASES['v5.0']['what'].replace(_RANK_ORDER_V50, '') + (
        "config_common.sh as NVIDIA's but for NCCL_NVLS_ENABLE=0 commented out (NVLink SHARP "
        "left to NCCL); "))

# The NVL72 runs: 4 GPUs a compute tray, and the systems files name the racks ("Tyche (8x NVIDIA
# GB200 NVL72)" for 128 trays, "Carina (39x NVIDIA GB200 NVL72)" for 624, v5.1's "Tyche-hsg (80x
# NVIDIA GB200 NVL72)" for 1,280, "Theia (8x NVIDIA GB300 NVL72)" for 128): 16 trays of each rack
# in the job, the NVLink domains of the scenarios (nvlink_domain_nodes).
SYSTEMS = {
    'h100': dict(instance='onprem.dgx-h100', gpus_per_node=8, gpu='H100', nvlink_domain_nodes=None),
    'h200': dict(instance='aws.p5e.48xlarge', gpus_per_node=8, gpu='H200', nvlink_domain_nodes=None),
    'gb200': dict(instance='onprem.gb200-nvl72', gpus_per_node=4, gpu='GB200',
                  nvlink_domain_nodes=16, nics='4 x 400 Gb/s ConnectX-7 NDR InfiniBand'),
    'gb300': dict(instance='onprem.gb300-nvl72', gpus_per_node=4, gpu='GB300',
                  nvlink_domain_nodes=16, nics='4 x 800 Gb/s ConnectX-8 XDR InfiniBand'),
    'b200': dict(instance='onprem.dgx-b200', gpus_per_node=8, gpu='B200', nvlink_domain_nodes=None),
    'b300': dict(instance='onprem.dgx-b300', gpus_per_node=8, gpu='B300', nvlink_domain_nodes=None),
}

# The partners' B200 and B300 servers (their systems/<system>.json), each written as the DGX of its
# GPU: 8 SXM GPUs on NVLink 5 and NVSwitch. The single-server rows use no network; where a run
# spans servers, its network is named here.
SERVERS = {
    'Dell/1xXE9680Lx8B200-SXM-180GB': 'a Dell PowerEdge XE9680L (8 B200-SXM-180GB on NVLink 5)',
    'Dell/1xXE9780x8B300-SXM-270GB': 'a Dell PowerEdge XE9780 (8 B300-SXM-270GB)',
    'Lenovo/SR680aV3-8xB200_SXM_180GB': ('a Lenovo ThinkSystem SR680a V3 (8 B200-SXM-180GB, 18 '
                                         'NVLink 5 links each)'),
    'Lenovo/SR780aV3-8xB200_SXM_180GB': ('a Lenovo ThinkSystem SR780a V3 (8 B200-SXM-180GB, 18 '
                                         'NVLink 5 links each)'),
    'Lenovo/SR680aV4-8xB300_SXM': 'a Lenovo ThinkSystem SR680a V4 (8 B300-SXM-270GB)',
    'Nebius/nebius_b200_n1': ('a Nebius B200 node (8 B200-SXM-180GB on NVLink 5, 8 x 400 Gb/s '
                              'ConnectX-7 NDR InfiniBand)'),
    'Nebius/nebius_b200_n2': ('2 Nebius B200 nodes (8 B200-SXM-180GB on NVLink 5, 8 x 400 Gb/s '
                              'ConnectX-7 NDR InfiniBand each)'),
    'Nebius/nebius_b200_n4': ('4 Nebius B200 nodes (8 B200-SXM-180GB on NVLink 5, 8 x 400 Gb/s '
                              'ConnectX-7 NDR InfiniBand each)'),
    'Nebius/nebius_b300_n1': ('a Nebius B300 node (8 B300-SXM-270GB on NVLink 5, 8 x 800 Gb/s '
                              'ConnectX-8 XDR InfiniBand)'),
    'Supermicro/AS-4126GS-NBR-LCC': ('a Supermicro AS-4126GS-NBR-LCC (8 B200-SXM-180GB on NVLink 5 '
                                     'and NVSwitch)'),
    'Supermicro/SYS-422GS-NBRT-LCC': ('a Supermicro SYS-422GS-NBRT-LCC (8 B200-SXM-180GB on NVLink '
                                      '5 and NVSwitch)'),
    'Supermicro/AS-8126GS-NB3RT': ('a Supermicro AS-8126GS-NB3RT (8 B300-SXM-270GB on NVLink 5 and '
                                   'NVSwitch)'),
    'Dell/2xXE9680Lx8B200-SXM-180GB': '2 Dell PowerEdge XE9680L (8 B200-SXM-180GB on NVLink 5 each)',
    'Dell/2xXE9685Lx8B200-SXM-180GB': '2 Dell PowerEdge XE9685L (8 B200-SXM-180GB each)',
    'Oracle/8xBM.GPU.B200.8': ('8 OCI BM.GPU.B200.8 (8 B200-SXM-180GB on NVLink 5 and NVSwitch each, '
                               'RoCE v2)'),
}

# Where a multi-server run's systems file does not give its network (the stand-in's NICs then an
# unknown); Nebius's names its 8 x 400 Gb/s NDR, the DGX B200's.
SERVER_NETWORKS = {
    'Dell': ': the systems file names no cluster network, an unknown of this row',
    'Oracle': (': the systems file says RoCE v2 without the NICs\' count or speed, an unknown of '
               'this row'),
}

# The v5.0 runs whose config sets TP_PP_DP_MAPPING=True (custom.yaml use_tp_pp_dp_mapping:
# Megatron-Core's tp-cp-pp-dp order, a replica's pipeline inside one rack; every v5.1 run, whose
# config_common.sh sets it: the release's tp_pp_dp_mapping); the others keep Megatron's
# tp-cp-dp-pp.
TP_PP_DP_MAPPING = {
    'NVIDIA/results/tyche_ngpu512_ngc25.04_nemo',
    'IBM+CoreWeave+NVIDIA/results/carina_ngpu512_ngc25.04_nemo',
    'IBM+CoreWeave+NVIDIA/results/carina_ngpu1024_ngc25.04_nemo',
    'IBM+CoreWeave+NVIDIA/results/carina_ngpu1536_ngc25.04_nemo',
    'IBM+CoreWeave+NVIDIA/results/carina_ngpu2048_ngc25.04_nemo',
    'IBM+CoreWeave+NVIDIA/results/carina_ngpu2496_ngc25.04_nemo',
}

# The GB200 runs whose logs have no block_stop: each block's training ends at its last
# train_step_time record (the Carina logs, which have both, put block_stop 0.2-0.6 s later).
NO_BLOCK_STOP = {
    'NVIDIA/results/tyche_ngpu256_ngc25.04_nemo',
    'NVIDIA/results/tyche_ngpu512_ngc25.04_nemo',
}

# Megatron-Core's defer_embedding_wgrad_compute and wgrad_deferral_limit per release
# (parallelism.defer_output_weight_gradient, output_weight_gradient_deferral_limit): a function of
# (PP, MINIBS, MBS) giving the limit (0: every micro-batch) or None where the recipe does not defer.
#   v3.0, v3.1: conf/custom.yaml (mlcommons/training_results_v3.1 f33f9444) sets neither, NeMo's
#     own GPT model of those releases has no such path: off.
#   v4.0: conf/custom.yaml (training_results_v4.0 as mirrored in henrique/training_results_v4.0
#     @ 1316e93c; the configs @ mlcommons 62f111b7): defer_embedding_wgrad_compute true when PP > 1,
#     MINIBS <= 256 and MICRO_BATCH_SIZE 1, no wgrad_deferral_limit (Megatron-Core's
#     ModelParallelConfig default 0: every micro-batch deferred).
#   v4.1: eos_n{32,64}_ngc24.09_nemo/config_DGXH100_*_mbs2.sh (swsok/training_results_v4.1
#     @ 8821c703) export DEFER_EMBEDDING_WGRAD_COMPUTE=True, WGRAD_DEFERRAL_LIMIT=65, which
#     conf/custom.yaml passes through (defer_embedding_wgrad_compute, wgrad_deferral_limit).
#   v5.0: config_common.sh (prishajain1/training_results_v5.0 @ 0fdc28f0, the eos-dfw_n*
#     directories) exports DEFER_EMBEDDING_WGRAD_COMPUTE=True, WGRAD_DEFERRAL_LIMIT=50, which
#     pretrain.py get_overlap_callback passes to MegatronCommOverlapCallback.
DEFERRAL = {
    'v4.0': lambda pp, minibs, mbs: 0 if pp > 1 and minibs <= 256 and mbs == 1 else None,
    'v4.1': lambda pp, minibs, mbs: 65,
    'v5.0': lambda pp, minibs, mbs: 50,
    'v5.0-gb200': lambda pp, minibs, mbs: 50,
    'v5.0-h200': lambda pp, minibs, mbs: 50,
}
DEFERRAL_TEXT = {
    'v4.0': "custom.yaml's defer_embedding_wgrad_compute (true at PP > 1, MBS 1, MINIBS <= 256) "
            "without a wgrad_deferral_limit",
    'v4.1': "the config's DEFER_EMBEDDING_WGRAD_COMPUTE=True, WGRAD_DEFERRAL_LIMIT=65",
    'v5.0': "config_common.sh's DEFER_EMBEDDING_WGRAD_COMPUTE=True, WGRAD_DEFERRAL_LIMIT=50",
    'v5.0-gb200': "config_common.sh's DEFER_EMBEDDING_WGRAD_COMPUTE=True, "
                  "WGRAD_DEFERRAL_LIMIT=50",
    'v5.0-h200': "config_common.sh's DEFER_EMBEDDING_WGRAD_COMPUTE=True, WGRAD_DEFERRAL_LIMIT=50",
}

AZURE = 'Public check: MLPerf Training v3.1 GPT-3 175B (Azure ND H100 v5, FP8)'
COREWEAVE = 'Public check: MLPerf Training v3.0 GPT-3 175B (CoreWeave HGX H100, FP8)'
COREWEAVE_GB200 = 'Public check: MLPerf Training v5.0 Llama 3.1 405B (CoreWeave GB200 NVL72, FP8)'

# release, results directory, nodes (NVL72: compute trays), global batch size (MLLOG
# global_batch_size), MINIBS (sequences a data-parallel replica), TP, PP, virtual pipeline, MBS,
# config file, STEP_S, CROSS_S, TIMER_S, and optionally a dict of per-row settings
# (context_parallel, nvlink_domain_nodes) over the release's.
ROWS = [
    ('v3.0', 'NVIDIA/results/dgxh100_n64_nemo', 64, 2048, 128, 4, 8, 12, 1,
     'config_DGXH100_64x8x128x4x8_mbs1.sh', 12.122, 12.108, 12.083),
    ('v3.0', 'NVIDIA/results/dgxh100_n96_nemo', 96, 3072, 128, 4, 8, 12, 1,
     'config_DGXH100_96x8x128x4x8_mbs1.sh', 12.157, 12.160, 12.128),
    ('v3.0', 'NVIDIA_CoreWeave/results/coreweave_hgxh100_n96_ngc23.04_pytorch', 96, 3072, 128, 4,
     8, 12, 1, 'config_DGXH100_96x8x128x4x8_mbs1.sh', 12.374, 12.322, 12.322),
    ('v3.0', 'NVIDIA_CoreWeave/results/coreweave_hgxh100_n192_ngc23.04_pytorch', 192, 3072, 64,
     4, 8, 12, 1, 'config_DGXH100_192x8x64x4x8_mbs1.sh', 6.380, 6.410, 6.326),
    ('v3.0', 'NVIDIA_CoreWeave/results/coreweave_hgxh100_n448_ngc23.04_pytorch', 448, 2688, 24,
     4, 8, 12, 1, 'config_DGXH100_448x8x24x4x8_mbs1.sh', 2.634, 2.647, 2.594),
    ('v3.1', 'NVIDIA/results/eos_n64_ngc23.09_nemo', 64, 2048, 128, 4, 8, 12, 1,
     # The repository's 64-node file is config_DGXH100_64x8x192x4x8_mbs1.sh (global batch 3072);
     # the run logged global_batch_size 2048 and gradient_accumulation_steps 128: MINIBS 128 at
     # TP 4, PP 8, MBS 1, the 96-node config's per-replica batch.
     "the run's MLLOG global_batch_size 2048 and gradient_accumulation_steps 128 at the "
     "recipe's TP 4, PP 8, MBS 1; the repository's 64-node file, "
     "config_DGXH100_64x8x192x4x8_mbs1.sh, says MINIBS 192",
     11.066, 11.088, 11.045),
    ('v3.1', 'NVIDIA/results/eos_n96_ngc23.09_nemo', 96, 3072, 128, 4, 8, 12, 1,
     'config_DGXH100_96x8x128x4x8_mbs1.sh', 11.108, 11.105, 11.072),
    ('v3.1', 'NVIDIA/results/eos-dfw_n512_ngc23.09_nemo', 512, 2048, 16, 4, 8, 12, 1,
     'config_DGXH100_512x8x16x4x8_mbs1.sh', 1.6295, 1.6293, 1.6084),
    ('v3.1', 'NVIDIA/results/eos-dfw_n768_ngc23.09_nemo', 768, 3072, 16, 4, 8, 12, 1,
     'config_DGXH100_768x8x16x4x8_mbs1.sh', 1.6377, 1.6398, 1.6159),
    ('v3.1', 'NVIDIA/results/eos-dfw_n1024_ngc23.09_nemo', 1024, 4096, 16, 4, 8, 12, 1,
     'config_DGXH100_1024x8x16x4x8_mbs1.sh', 1.6441, 1.6425, 1.6193),
    ('v3.1', 'NVIDIA/results/eos-dfw_n1280_ngc23.09_nemo', 1280, 2560, 8, 4, 8, 12, 1,
     'config_DGXH100_1280x8x8x4x8_mbs1.sh', 0.9500, 0.9487, 0.9256),
    ('v3.1', 'NVIDIA/results/eos-dfw_n1344_ngc23.09_nemo', 1344, 2688, 8, 4, 8, 12, 1,
     'config_DGXH100_1344x8x8x4x8_mbs1.sh', 0.9553, 0.9544, 0.9296),
    ('v3.1', 'Azure+NVIDIA/results/ND_H100_v5_n1344_pytorch', 1344, 2688, 8, 4, 8, 12, 1,
     'config_DGXH100_1344x8x8x4x8_mbs1.sh', 0.9811, 0.9804, 0.9451),
    ('v4.0', 'NVIDIA/results/eos_n64_ngc24.04_nemo', 64, 2304, 144, 4, 8, 4, 2,
     # config_DGXH100_64x8x128x4x8_mbs2.sh defaults MINIBS to 128 (its VBOOST_VALUE=1 only then);
     # the run logged global_batch_size 2304 and gradient_accumulation_steps 72: MINIBS 144.
     "config_DGXH100_64x8x128x4x8_mbs2.sh with MINIBS 144, as the run's MLLOG "
     "global_batch_size 2304 and gradient_accumulation_steps 72 say (its vboost only at "
     "MINIBS 128); INTERLEAVED_PIPELINE=4",
     10.902, 10.983, None),
    ('v4.0', 'NVIDIA/results/eos-dfw_n1344_ngc24.04_nemo', 1344, 2688, 6, 4, 6, 8, 1,
     'config_DGXH100_1344x8x6x4x6_mbs1_cg.sh: INTERLEAVED_PIPELINE=8, LAYER_CUDA_GRAPH=1',
     0.9207, 0.9204, None),
    ('v4.0', 'NVIDIA/results/eos-dfw_n1452_ngc24.04_nemo', 1452, 2904, 6, 4, 6, 8, 1,
     'config_DGXH100_1452x8x6x4x6_mbs1_cg.sh: INTERLEAVED_PIPELINE=8, LAYER_CUDA_GRAPH=1',
     0.9222, 0.9214, None),
    ('v4.1', 'NVIDIA/results/eos_n32_ngc24.09_nemo', 32, 2048, 256, 4, 8, 6, 2,
     'config_DGXH100_32x8x256x4x8_mbs2.sh: INTERLEAVED_PIPELINE=6, BUCKET_CAP_MB=125',
     18.407, 18.408, None),
    ('v4.1', 'NVIDIA/results/eos_n64_ngc24.09_nemo', 64, 2048, 128, 4, 8, 6, 2,
     'config_DGXH100_64x8x128x4x8_mbs2.sh: INTERLEAVED_PIPELINE=6',
     9.536, 9.701, None),
    ('v5.0', 'NVIDIA/results/eos-dfw_n64_ngc25.01_nemo', 64, 1152, 288, 8, 8, 8, 1,
     'config_DGXH100_64x8x288xtp8pp8cp2.sh', 55.207, 55.247, None),
    ('v5.0', 'NVIDIA/results/eos-dfw_n256_ngc25.01_nemo', 256, 1152, 72, 8, 8, 8, 1,
     'config_DGXH100_256x8x72xtp8pp8cp2.sh', 14.319, 14.334, None),
    ('v5.0', 'NVIDIA/results/eos-dfw_n304_ngc25.01_nemo', 304, 1216, 64, 8, 8, 8, 1,
     'config_DGXH100_304x8x64xtp8pp8cp2.sh', 12.799, 13.023, None),
    ('v5.0', 'NVIDIA/results/eos-dfw_n320_ngc25.01_nemo', 320, 1120, 56, 8, 8, 8, 1,
     'config_DGXH100_320x8x56xtp8pp8cp2.sh', 11.492, 11.227, None),
    ('v5.0', 'NVIDIA/results/eos-dfw_n1024_ngc25.01_nemo', 1024, 1536, 24, 8, 8, 8, 1,
     'config_DGXH100_1024x8x24xtp8pp8cp2.sh', 5.2505, 5.2476, None),
    # Nebius's H200 rows: their results directories hold result_1 to result_3.
    ('v5.0-h200', 'Nebius/results/nebius_soperator_8xH200_n64_ngc25.01_nemo', 64, 1152, 144, 4,
     8, 8, 1, 'config_DGXH200_64x8x144xtp4pp8cp2.sh', 50.1045, 50.0891, None),
    ('v5.0-h200', 'Nebius/results/nebius_soperator_8xH200_n128_ngc25.01_nemo', 128, 1152, 72, 4,
     8, 8, 1, 'config_DGXH200_128x8x72xtp4pp8cp2.sh', 25.4370, 25.3833, None),
    ('v5.0-gb200', 'NVIDIA/results/tyche_ngpu256_ngc25.04_nemo', 64, 448, 112, 4, 8, 8, 1,
     'config_GB200_64x4x112xtp4pp8cp2_cg.sh', 19.1175, 19.2245, None),
    ('v5.0-gb200', 'NVIDIA/results/tyche_ngpu512_ngc25.04_nemo', 128, 896, 112, 4, 8, 8, 1,
     'config_GB200_128x4x112xtp4pp8cp2_cg_dplast.sh: TP_PP_DP_MAPPING=True', 19.6780, 19.4466,
     None),
    ('v5.0-gb200', 'IBM+CoreWeave+NVIDIA/results/carina_ngpu512_ngc25.04_nemo', 128, 896, 112, 4,
     8, 8, 1, 'config_GB200_128x4x112xtp4pp8cp2.sh: TP_PP_DP_MAPPING=True', 19.4441, 19.2896,
     None),
    ('v5.0-gb200', 'IBM+CoreWeave+NVIDIA/results/carina_ngpu1024_ngc25.04_nemo', 256, 768, 48, 4,
     8, 8, 1, 'config_GB200_256x4x48xtp4pp8cp2.sh: TP_PP_DP_MAPPING=True', 8.4609, 8.4615, None),
    ('v5.0-gb200', 'IBM+CoreWeave+NVIDIA/results/carina_ngpu1536_ngc25.04_nemo', 384, 1152, 48, 4,
     8, 8, 1, 'config_GB200_384x4x48xtp4pp8cp2.sh: TP_PP_DP_MAPPING=True', 8.5053, 8.5092, None),
    ('v5.0-gb200', 'IBM+CoreWeave+NVIDIA/results/carina_ngpu2048_ngc25.04_nemo', 512, 1280, 40, 4,
     8, 8, 1, 'config_GB200_512x4x40xtp4pp8cp2.sh: TP_PP_DP_MAPPING=True', 7.1659, 7.1716, None),
    ('v5.0-gb200', 'IBM+CoreWeave+NVIDIA/results/carina_ngpu2496_ngc25.04_nemo', 624, 1248, 32, 4,
     8, 8, 1, 'config_GB200_624x4x32xtp4pp8cp2.sh: TP_PP_DP_MAPPING=True', 5.8335, 5.8456, None),
    ('v5.1-gb200', 'NVIDIA/results/tyche_ngpu512_ngc25.09_nemo', 128, 1152, 144, 4, 8, 8, 1,
     'config_GB200_128x4x144xtp4pp8cp2_cg_fp4.sh', 17.2747, 17.4005, None),
    ('v5.1-gb200', 'NVIDIA/results/hsg_ngpu2560_ngc25.09_nemo', 640, 960, 24, 4, 8, 8, 1,
     'config_GB200_640x4x24xtp4pp8cp2_cg_fp4.sh', 3.2479, 3.2475, None),
    ('v5.1-gb200', 'NVIDIA/results/hsg_ngpu5120_ngc25.09_nemo', 1280, 1280, 16, 4, 8, 8, 1,
     'config_GB200_1280x4x16xtp4pp8cp2_cg_fp4.sh', 2.2967, 2.3044, None),
    ('v5.1-gb300', 'NVIDIA/results/theia_ngpu512_ngc25.09_nemo', 128, 1152, 72, 2, 8, 8, 1,
     'config_GB300_128x4x72xtp2pp8cp2_cg_fp4.sh', 13.1463, 13.1744, None),
    # The 8B rows: CP and the NVLink domain per row (the 72-GPU configs run in one Slurm segment of
    # all 18 trays of a rack, SEGMENT=18; the 512-GPU ones in segments of 16).
    ('v5.1-8b-gb200', 'NVIDIA/results/tyche_ngpu72_ngc25.09_nemo', 18, 36, 1, 1, 1, 1, 1,
     'config_GB200_18x4x1xtp1pp1cp2_8b.sh', 0.1694, 0.1716, None,
     dict(context_parallel=2, nvlink_domain_nodes=18)),
    ('v5.1-8b-gb200', 'NVIDIA/results/tyche_ngpu512_ngc25.09_nemo', 128, 64, 1, 2, 1, 1, 1,
     'config_GB200_128x4x1xtp2pp1cp4_8b.sh', 0.0902, 0.0903, None, dict(context_parallel=4)),
    ('v5.1-8b-gb300', 'NVIDIA/results/theia_ngpu72_ngc25.09_nemo', 18, 36, 1, 1, 1, 1, 1,
     'config_GB300_18x4x1xtp1pp1cp2_8b.sh', 0.1478, 0.1477, None,
     dict(context_parallel=2, nvlink_domain_nodes=18)),
    ('v5.1-8b-gb300', 'NVIDIA/results/theia_ngpu512_ngc25.09_nemo', 128, 64, 1, 2, 1, 1, 1,
     'config_GB300_128x4x1xtp2pp1cp4_8b.sh', 0.0865, 0.0867, None, dict(context_parallel=4)),
    # The 8-GPU runs: two trays of a rack (systems file "Tyche (1x NVIDIA GB200 NVL72)",
    # number_of_nodes 2), NVFP4 with FP8 attention, one micro-batch of two sequences a GPU.
    ('v5.1-8b-gb200-fp4', 'NVIDIA/results/tyche_ngpu8_ngc25.09_nemo', 2, 16, 2, 1, 1, 1, 2,
     'config_GB200_2x4x2xtp1pp1cp1_8b_fp4.sh', 0.4097, 0.4140, None, dict(nvlink_domain_nodes=2)),
    ('v5.1-8b-gb300-fp4', 'NVIDIA/results/theia_ngpu8_ngc25.09_nemo', 2, 16, 2, 1, 1, 1, 2,
     'config_GB300_2x4x2xtp1pp1cp1_8b_fp4.sh', 0.3498, 0.3496, None, dict(nvlink_domain_nodes=2)),
    # The partners' servers in NVFP4 with FP8 attention.
    ('v5.1-8b-b200-fp4', 'Dell/results/1xXE9680Lx8B200-SXM-180GB', 1, 16, 2, 1, 1, 1, 2,
     'config_1xXE9680Lx8B200-SXM-180GB.sh (FULL_CUDA_GRAPH=0)', 0.4551, 0.4552, None,
     dict(provider='dell-', recipe_dir='Dell/benchmarks/llama31_8b/implementations/nemo')),
    ('v5.1-8b-b200-fp4', 'Lenovo/results/SR680aV3-8xB200_SXM_180GB', 1, 16, 2, 1, 1, 1, 2,
     'config_SR780aV3_SR680aV3_SR680aV4.sh (FULL_CUDA_GRAPH=0)', 0.4488, 0.4485, None,
     dict(provider='lenovo-sr680av3-', recipe_dir='Lenovo/benchmarks/llama31_8b',
          result_files=('result_01.txt', 'result_02.txt'))),
    ('v5.1-8b-b200-fp4', 'Lenovo/results/SR780aV3-8xB200_SXM_180GB', 1, 16, 2, 1, 1, 1, 2,
     'config_SR780aV3_SR680aV3_SR680aV4.sh (FULL_CUDA_GRAPH=0)', 0.4560, 0.4560, None,
     dict(provider='lenovo-sr780av3-', recipe_dir='Lenovo/benchmarks/llama31_8b',
          result_files=('result_01.txt', 'result_02.txt'))),
    ('v5.1-8b-b300-fp4', 'Lenovo/results/SR680aV4-8xB300_SXM', 1, 16, 2, 1, 1, 1, 2,
     'config_SR780aV3_SR680aV3_SR680aV4.sh (FULL_CUDA_GRAPH=0)', 0.4101, 0.4109, None,
     dict(provider='lenovo-', recipe_dir='Lenovo/benchmarks/llama31_8b')),
    ('v5.1-8b-b200-fp4', 'Nebius/results/nebius_b200_n1', 1, 16, 2, 1, 1, 1, 2,
     'config_DGXB200_1x8x2xtp1pp1cp1_8b_fp4.sh (FULL_CUDA_GRAPH=0)', 0.4609, 0.4608, None,
     dict(recipe_dir='Nebius/benchmarks/llama31_8b/configs/nebius_b200_n1',
          result_files=('result_01.txt', 'result_02.txt'))),
    ('v5.1-8b-b200-fp4', 'Nebius/results/nebius_b200_n2', 2, 32, 2, 1, 1, 1, 1,
     'config_DGXB200_2x8x2xtp1pp1cp1_8b_fp4.sh (FULL_CUDA_GRAPH=0)', 0.4968, 0.4976, None,
     dict(recipe_dir='Nebius/benchmarks/llama31_8b/configs/nebius_b200_n2',
          result_files=('result_1.txt', 'result_2.txt'))),
    ('v5.1-8b-b200-fp4', 'Nebius/results/nebius_b200_n4', 4, 32, 1, 1, 1, 1, 1,
     'config_DGXB200_4x8x1xtp1pp1cp1_8b_fp4.sh (FULL_CUDA_GRAPH=0)', 0.2698, 0.2696, None,
     dict(recipe_dir='Nebius/benchmarks/llama31_8b/configs/nebius_b200_n4',
          result_files=('result_01.txt', 'result_02.txt'))),
    # Named for the DGX B200 but sourcing config_common_fp4.sh last: NVFP4 with FP8 attention
    # (its NVTE_DPA_FP8_RECIPE="Float8CurrentScaling" over config_common.sh's "F16").
    ('v5.1-8b-b300-fp4', 'Nebius/results/nebius_b300_n1', 1, 16, 2, 1, 1, 1, 2,
     'config_DGXB200_1x8x2xtp1pp1cp1_8b.sh, which sources config_common_fp4.sh last: no '
     'stochastic rounding nor 2D blocks, FULL_CUDA_GRAPH=1', 0.3987,
     0.3991, None,
     dict(recipe_dir='Nebius/benchmarks/llama31_8b/configs/nebius_b300_n1',
          result_files=('result_1.txt', 'result_2.txt'))),
    ('v5.1-8b-b200-fp4', 'Supermicro/results/AS-4126GS-NBR-LCC', 1, 16, 2, 1, 1, 1, 2,
     'config_AS-4126GS-NBR-LCC_1x8x2xtp1pp1cp1_8b_fp4.sh (FULL_CUDA_GRAPH=0)', 0.4544, 0.4547,
     None,
     dict(provider='supermicro-as4126-',
          recipe_dir='Supermicro/benchmarks/llama31_8b/implementations/AS-4126GS-NBR-LCC',
          result_files=('result_1.txt', 'result_2.txt'))),
    ('v5.1-8b-b200-fp4', 'Supermicro/results/SYS-422GS-NBRT-LCC', 1, 16, 2, 1, 1, 1, 2,
     'config_SYS-422GS-NBRT-LCC_1x8x2xtp1pp1cp1_8b_fp4.sh (FULL_CUDA_GRAPH=0)', 0.4557, 0.4553,
     None,
     dict(provider='supermicro-sys422-',
          recipe_dir='Supermicro/benchmarks/llama31_8b/implementations/SYS-422GS-NBRT-LCC',
          result_files=('result_1.txt', 'result_2.txt'))),
    # The 8B's FP8 recipe on B300 servers and the University of Florida's DGX B200.
    ('v5.1-8b-b300', 'Dell/results/1xXE9780x8B300-SXM-270GB', 1, 16, 2, 1, 1, 1, 2,
     'config_XE9780x8B300-SXM-270GB_1x8x2xtp1pp1cp1_8b.sh', 0.5485, 0.5484, None,
     dict(provider='dell-', recipe_dir='Dell/benchmarks/llama31_8b/implementations/nemo')),
    ('v5.1-8b-b200', 'Dell/results/2xXE9680Lx8B200-SXM-180GB', 2, 32, 2, 1, 1, 1, 2,
     'config_2xXE9680Lx8B200-SXM-180GB_2x8x2xtp1pp1cp1_8b.sh', 0.5948, 0.5921, None,
     dict(provider='dell-xe9680l-', recipe_dir='Dell/benchmarks/llama31_8b/implementations/nemo')),
    ('v5.1-8b-b200', 'Dell/results/2xXE9685Lx8B200-SXM-180GB', 2, 32, 2, 1, 1, 1, 2,
     'config_XE9685Lx8B200-SXM-180GB_2x8x2xtp1pp1cp1.sh', 0.5883, 0.5880, None,
     dict(provider='dell-xe9685l-', recipe_dir='Dell/benchmarks/llama31_8b/implementations/nemo')),
    # NVTE_DPA_FP8_RECIPE="F16" beside no FP8_DPA: 16-bit attention either way.
    ('v5.1-8b-b200', 'Oracle/results/8xBM.GPU.B200.8', 8, 32, 1, 1, 1, 1, 1,
     'config_DGXB200_8x8x1xtp1pp1cp2_8b.sh (NVTE_DPA_FP8_RECIPE="F16")', 0.1922, 0.1913, None,
     dict(provider='oracle-', context_parallel=2, recipe_dir='Oracle/benchmarks/llama31_8b')),
    ('v5.1-8b-b300', 'Supermicro/results/AS-8126GS-NB3RT', 1, 16, 2, 1, 1, 1, 2,
     'config_DGXB200_1x8x2xtp1pp1cp1_8b.sh: FULL_CUDA_GRAPH=0, MCORE_CUDA_GRAPH=0, NCCL over '
     'sockets (NCCL_NET=Socket, NCCL_IB_DISABLE=1; one server, NVLink between its GPUs)', 0.5513,
     0.5513, None,
     dict(provider='supermicro-', default_buckets=True,
          recipe_dir='Supermicro/benchmarks/llama31_8b/implementations/AS-8126GS-NB3RT',
          result_files=('result_1.txt', 'result_2.txt'))),
] + [
    ('v5.1-8b-b200', f'University-of-Florida/results/hpg.dgxb200x8.n{nodes}', nodes, gbs, minibs,
     1, 1, 1, minibs, f'config_DGXB200_{nodes}x8x{minibs}xtp1pp1cp{cp}_8b.sh', step, cross, None,
     dict(context_parallel=cp, default_buckets=True,
          recipe_dir='University-of-Florida/benchmarks/llama31_8b/implementations/hpg.dgxb200x8 '
                     'with the common files of b200_nemo beside it'))
    for nodes, gbs, minibs, cp, step, cross in (
        (1, 16, 2, 1, 0.5445, 0.5446), (2, 32, 2, 1, 0.5723, 0.5740),
        (4, 16, 1, 2, 0.1924, 0.1926), (8, 32, 1, 2, 0.1904, 0.1904),
        (16, 64, 1, 2, 0.1941, 0.1942), (32, 128, 1, 2, 0.2226, 0.2226))
] + [
    ('v5.1-405b-b200', f'University-of-Florida/results/hpg.dgxb200x8.n{nodes}', nodes, gbs, 144, 4,
     8, 8, 1, f'config_DGXB200_{nodes}x8x144xtp4pp8cp2_cg.sh', step, cross, None,
     dict(later_blocks=later,
          recipe_dir='University-of-Florida/benchmarks/llama31_405b/implementations/hpg.dgxb200x8 '
                     'with the common files of b200_nemo beside it'))
    for nodes, gbs, step, cross, later in (
        (32, 576, 27.7385, 27.7157,
         "its 448 steps counted by the log's step metadata, as for NVIDIA's v5.1 405B rows; the "
         'later blocks, 32 and 20 steps after an evaluation each, ran at 27.61 s a step'),
        (56, 1008, 27.9709, 28.0428,
         "its 285 steps counted by the log's step metadata, as for NVIDIA's v5.1 405B rows; the "
         'later block, 19 steps after an evaluation, ran at 28.00 s a step'))
]


def system_text(submitter, system_name, nodes, hw):
    """The header's sentence on the machine a run used, and its stand-in where the catalog has
    none."""
    if submitter == 'Azure+NVIDIA':
        text = (f'{nodes} Azure ND H100 v5 VMs (8 H100 SXM 80 GB on NVLink 4, 8 x 400 Gb/s '
                f'Quantum-2 InfiniBand: {submitter}/systems/{system_name}.json).')
    elif submitter == 'NVIDIA_CoreWeave':
        text = (f'{nodes} CoreWeave HGX H100 nodes (8 H100 SXM5 80 GB on NVLink 4 and '
                'NVSwitch, 8 x 400 Gb/s ConnectX-7 NDR InfiniBand: '
                f'{submitter}/systems/{system_name}.json).')
    elif submitter == 'Nebius' and hw['gpu'] == 'H200':
        return (f'{nodes} Nebius H200 nodes (8 H200 SXM5 141 GB on NVLink 4 and NVSwitch, 8 x 400 '
                f'Gb/s ConnectX-7 NDR InfiniBand: {submitter}/systems/{system_name}.json). The '
                'catalog has no Nebius or DGX H200 instance; aws.p5e.48xlarge stands in (the same '
                '8 H200 on NVSwitch, with EFA\'s 3,200 Gb/s in all for the eight 400 Gb/s NDR '
                'ports) on the rail-optimized fabric, an unknown of this row (a DGX H100 entry '
                'given the H200, in a temporary catalog, moved the step by 0.06% or less).')
    elif hw['gpus_per_node'] == 4:
        trays = hw['nvlink_domain_nodes']
        racks = nodes // trays
        text = (f'{nodes} {hw["gpu"]} NVL72 compute trays (4 {hw["gpu"]} each, {hw["nics"]}) in '
                f'{racks} rack{"s" if racks > 1 else ""} ({submitter}/systems/{system_name}.json: '
                f'"{racks}x NVIDIA {hw["gpu"]} NVL72"), '
                f'{"all" if trays == 18 else trays} of each rack\'s 18 trays: NVLink domains of '
                f'{trays} trays (nvlink_domain_nodes) on a rail-optimized fabric.')
    elif submitter == 'University-of-Florida':
        return (f'{nodes} NVIDIA DGX B200 of HiPerGator (8 B200-SXM-180GB on NVLink 5, InfiniBand: '
                f'{submitter}/systems/{system_name}.json), written as onprem.dgx-b200 (8 x 400 '
                'Gb/s NDR) on a rail-optimized fabric; the NICs\' count and speed are not in the '
                'systems file, an unknown of this row.')
    elif f'{submitter}/{system_name}' in SERVERS:
        server = SERVERS[f'{submitter}/{system_name}']
        network = ('one server: no network enters the step' if nodes == 1 else
                   f'its NICs on a rail-optimized fabric{SERVER_NETWORKS.get(submitter, "")}')
        return (f'{server[0].upper()}{server[1:]} ({submitter}/systems/{system_name}.json). The '
                f'catalog has no instance of this server; {hw["instance"]}, the DGX of the same '
                f'GPU, stands in (8 {hw["gpu"]} on NVSwitch; {network}). The server\'s power '
                'and cooling limits are not the DGX\'s, an unknown of this row.')
    else:
        return (f'{nodes} DGX H100 (8 x 400 Gb/s NDR: {submitter}/systems/{system_name}.json), '
                'a rail-optimized SuperPOD fabric.')
    if submitter != 'NVIDIA':
        text += (f' The catalog has no instance of this provider; {hw["instance"]} stands in (the '
                 'same GPUs, NVSwitch and NICs) on the rail-optimized fabric, an unknown of '
                 'this row.')
    return text


def scenario(row):
    release, results, nodes, gbs, minibs, tp, pp, vp, mbs, config, step, cross, timer = row[:13]
    extra = row[13] if len(row) > 13 else {}
    r = RELEASES[release]
    b = BENCHMARKS[r.get('benchmark', 'gpt3')]
    hw = dict(SYSTEMS[r.get('system', 'h100')])
    hw['nvlink_domain_nodes'] = extra.get('nvlink_domain_nodes', hw['nvlink_domain_nodes'])
    cp = extra.get('context_parallel', r.get('context_parallel', 1))
    tp_overlap = r.get('tp_overlap', True) and tp > 1
    gpus = nodes * hw['gpus_per_node']
    assert gpus // (tp * pp * cp) * minibs == gbs, results
    submitter, _, system_name = results.split('/')
    partner = submitter != 'NVIDIA'
    if 'recipe_dir' in extra:
        recipe = extra['recipe_dir']
    elif 'system' in r:
        recipe = r['recipe'].format(submitter=submitter, system_name=system_name)
        if submitter == 'IBM+CoreWeave+NVIDIA':
            recipe += (", NVIDIA's tyche_ngpu512_ngc25.04_nemo files but for the CPU binding "
                       '(BINDCMD unset) and the MLLOG callbacks')
        elif partner:
            recipe += (", NVIDIA's eos-dfw_n64_ngc25.01_nemo files but for the configs, "
                       'config_common.sh and run.sub')
    elif partner:
        recipe = (f'{submitter}/benchmarks/gpt3/implementations/pytorch, the same files as '
                  'NVIDIA\'s')
    else:
        recipe = r['recipe'].format(nodes=nodes)
    system = system_text(submitter, system_name, nodes, hw)
    common = COMMON if b is BENCHMARKS['gpt3'] else ''
    deferral = DEFERRAL.get(release, lambda *_: None)(pp, minibs, mbs)
    deferred = ''
    if deferral is not None:
        micro_batches = minibs // mbs
        count = (f'the first {deferral} of its {micro_batches}' if 0 < deferral < micro_batches
                 else f'all {micro_batches}')
        deferred = (f"The output layer's weight-gradient GEMMs of {count} micro-batches a step "
                    f"deferred into the pipeline flush ({DEFERRAL_TEXT[release]}: "
                    'parallelism.defer_output_weight_gradient). ')
    elif release in DEFERRAL:
        deferred = (f"The output layer's weight gradients computed in place "
                    f'({DEFERRAL_TEXT[release]}: false at MBS {mbs}). ')
    attention_out_sms, mlp_down_sms, ub_config = (r['reduce_scatter_sms'] if tp_overlap
                                                  else (0, 0, None))
    if ub_config is None:
        reserved = ''
    elif attention_out_sms or mlp_down_sms:
        reserved = (f'The userbuffers reduce-scatter kernels beside the attention output '
                    f'projection and the MLP down projection reserve {attention_out_sms} and '
                    f'{mlp_down_sms} of the GPU\'s SMs ({ub_config}): those GEMMs run on the rest '
                    '(tensor_overlap_attention_out_sms, tensor_overlap_mlp_down_sms). ')
    else:
        reserved = (f'The userbuffers reduce-scatter kernels reserve no SMs beside their GEMMs '
                    f'({ub_config}). ')
    ran = r['what']
    missing = r['missing']
    if extra.get('default_buckets'):
        ran = ran.replace('768 MB buckets (BUCKET_SIZE=768000000)',
                          "128 MiB buckets (custom.yaml bucket_size 134217728: this copy's "
                          'config_common_8b.sh sets no BUCKET_SIZE)')
        missing = missing.replace(
            'the DDP buckets of 768M parameters (BUCKET_SIZE=768000000; the simulator keeps '
            'Megatron-Core\'s default, max(40M, 1M x the data x context-parallel ranks)).',
            'the DDP bucket size (custom.yaml bucket_size 134217728; the simulator keeps '
            'Megatron-Core\'s default, max(40M, 1M x the data x context-parallel ranks)).')
    ran += extra.get('note', '')
    tp_pp_dp = results in TP_PP_DP_MAPPING or r.get('tp_pp_dp_mapping', False)
    if 'system' in r:
        ran += ("Megatron-Core's rank order " +
                ('tp-cp-pp-dp (TP_PP_DP_MAPPING=True: use_tp_pp_dp_mapping); '
                 if tp_pp_dp else 'tp-cp-dp-pp (TP_PP_DP_MAPPING unset); '))
    layout = (f'TP {tp}{" with sequence parallelism" if tp > 1 and pp == 1 else ""}, PP {pp}, '
              f'{f"CP {cp}, " if cp > 1 else ""}'
              f'{f"virtual pipeline {vp}, " if pp > 1 else ""}MBS {mbs}')
    sequences = f'{minibs} sequence{"s" if minibs > 1 else ""} a replica'
    what = (f'What ran, read in the recipe ({recipe}; not a rule of ours): {ran}{layout}, '
            f'{sequences} ({config}); {common}{" " if common else ""}{deferred}{reserved}'
            f'{missing}')
    marks = {'v3.0': 'eval_stop to the next eval_start, the first from block_start',
             'v5.0': 'block_start to block_stop, 46080 / global batch steps a block',
             'v5.0-gb200': 'block_start to block_stop, 46080 / global batch steps a block',
             'v5.0-h200': 'block_start to block_stop, 46080 / global batch steps a block'}.get(
                 release, 'block_start to block_stop')
    if results in NO_BLOCK_STOP:
        marks = ("block_start to the block's last train_step_time record, the log having no "
                 'block_stop; 46080 / global batch steps a block')
    if r.get('first_block'):
        marks = 'block_start at run_start to the first block_stop'
        blocks = "block 1's steps by the step metadata"
        later = extra.get('later_blocks', (
            'its 240-300 steps counted by the log\'s step metadata; the later blocks are 15-20 '
            'steps each, every one after an evaluation carrying 1-5 s that the first block spreads '
            'over its many steps'))
        scored = f'the first block\'s steps over its elapsed time ({marks}, {later})'
    else:
        if r.get('benchmark') == 'llama31_8b':
            marks = ('block_start to block_stop, VAL_CHECK_INTERVAL steps a block by the step '
                     'metadata')
        blocks = 'blocks 2-last'
        scored = (f'the training samples of blocks 2-last over their summed elapsed time '
                  f'({marks}, evaluations excluded)')
    first, second = extra.get('result_files',
                              r.get('result_files', ('result_0.txt', 'result_1.txt')))
    how = (f'Scored on step time: in {results}/{r.get("benchmark", "gpt3")}/{first}, '
           f'{scored}: {step} s a step; {second} gives {cross} s'
           + (f', NeMo\'s own per-step timer (train_step_timing median) {timer} s.' if timer
              else '.')
           + f' TFLOP/s derived from it (not published) as {b["flops_text"]} FLOPs a sequence.')
    provider = extra.get('provider', {'Azure+NVIDIA': 'azure-', 'NVIDIA_CoreWeave': 'coreweave-',
                                      'IBM+CoreWeave+NVIDIA': 'coreweave-', 'Nebius': 'nebius-',
                                      'University-of-Florida': 'uf-'}.get(submitter, ''))
    group = {'Azure+NVIDIA': AZURE, 'NVIDIA_CoreWeave': COREWEAVE,
             'IBM+CoreWeave+NVIDIA': COREWEAVE_GB200}.get(submitter, r['group'])
    bench = r.get('benchmark', 'gpt3')
    mlperf_round = r.get('round', release)
    model_name = {'gpt3': 'gpt3-175b', 'llama31_405b': 'llama3.1-405b',
                  'llama31_8b': 'llama3.1-8b'}[bench]
    name = (f'mlperf-{mlperf_round}-{model_name}-'
            f'{provider}{hw["gpu"].lower()}-{gpus}{r.get("name_suffix", "")}')
    precision = r.get('precision', 'FP8')
    attention_recipe = r.get('fp8_attention_recipe')
    lines = [wrap(f'MLPerf Training {mlperf_round}, {b["title"]} on {gpus} {hw["gpu"]} GPUs, '
                  f'{"NVFP4" if precision == "FP4" else precision}'
                  f'{" with FP8 attention" if attention_recipe else ""} '
                  f'({r["repo"]}, {results}/{bench}). Generated by tools/make_public_mlperf.py; a '
                  'public check outside the calibration (nothing is fitted on it).'),
             wrap(system), wrap(what), wrap(how),
             f'name: "{name}"',
             f'model: "{b["model"]}"',
             'job {',
             f'  global_batch_size: {gbs}',
             f'  sequence_length: {b["sequence"]}',
             f'  precision: {precision}',
             f'  fp8_recipe: {r.get("fp8_recipe", "DELAYED_SCALING")}',
             f'  fp8_parameters: {"true" if r["fp8_parameters"] else "false"}',
             '  optimizer: ADAM',
             '  steps: 1']
    if r['flash_attention_2']:
        lines += ['  flash_attention: true', '  attention_library: FLASH_ATTENTION_2']
    if not r['fused_loss']:
        lines.append('  unfused_cross_entropy: true')
    if r.get('te_cross_entropy'):
        lines.append('  transformer_engine_cross_entropy: true')
    if attention_recipe:
        lines += ['  fp8_attention: true', f'  fp8_attention_recipe: {attention_recipe}']
    domain = (f' nvlink_domain_nodes: {hw["nvlink_domain_nodes"]}' if hw['nvlink_domain_nodes']
              else '')
    lines += ['}',
              f'cluster {{ instance: "{hw["instance"]}" nodes: {nodes} '
              f'fabric: "ib-rail-optimized"{domain} }}',
              'parallelism {',
              f'  tensor_parallel: {tp}',
              f'  pipeline_parallel: {pp}']
    if cp > 1:
        lines.append(f'  context_parallel: {cp}')
    lines.append(f'  micro_batch_size: {mbs}')
    if pp > 1:
        lines += ['  schedule: INTERLEAVED_ONE_F_ONE_B', f'  virtual_stages: {vp}']
    lines += [f'  sequence_parallel: {str(tp > 1).lower()}',
              f'  overlap_tensor_communication: {str(tp_overlap).lower()}',
              '  distributed_optimizer: true',
              '  gradient_scaling: AVERAGE_IN_COLLECTIVE',
              '  gradient_reduce_in_fp32: false',
              f'  rank_order: {"TP_PP_DP" if tp_pp_dp else "TP_DP_PP"}']
    if attention_out_sms:
        lines.append(f'  tensor_overlap_attention_out_sms: {attention_out_sms}')
    if mlp_down_sms:
        lines.append(f'  tensor_overlap_mlp_down_sms: {mlp_down_sms}')
    if r.get('pipeline_split'):
        lines += ['  embedding_in_pipeline_split: true', '  loss_in_pipeline_split: true']
    if deferral is not None:
        lines.append('  defer_output_weight_gradient: true')
        if deferral:
            lines.append(f'  output_weight_gradient_deferral_limit: {deferral}')
    lines += ['}'] + mlperf_published(group, step, gbs * b['flops'] / step / gpus / 1e12,
                                      r['repo'], f'{results}/{bench}/{first}',
                                      f'MLLOG {marks}, {blocks}')
    return name, '\n'.join(lines) + '\n'


def main():
    write_scenarios(scenario(row) for row in ROWS)


if __name__ == '__main__':
    main()
