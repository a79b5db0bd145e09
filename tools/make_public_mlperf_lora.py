#!/usr/bin/env python3
"""Writes scenarios/public_runs/mlperf-*-llama2-70b-lora-*.textproto: NVIDIA's MLPerf Training
submissions of the Llama 2 70B LoRA fine-tuning benchmark (llama2_70b_lora: GovReport, sequences
of 8,192 tokens, LoRA of rank 16 on the attention's linear layers of a frozen base), v4.0 and v4.1
on DGX H100 (1, 8 and 128 nodes) and v4.0's DGX H200, v4.1's DGX B200 preview, v5.0 on DGX B200
and GB200 NVL72 (8 to 512 GPUs) and v5.1 on GB200 and GB300 NVL72 (8 to 512 GPUs, the 8-GPU runs
in NVFP4). A public check outside the calibration (nothing is fitted on them).

Usage: python3 tools/make_public_mlperf_lora.py [OUT_DIR]   (default scenarios/public_runs)

Sources: mlcommons/training_results_v4.0 at 6fe9543, mlcommons/training_results_v4.1 at b87b9e3,
mlcommons/training_results_v5.0 at 0fdc28f and mlcommons/training_results_v5.1 at 441d65f4. Each
row's recipe is NVIDIA/benchmarks/llama2_70b_lora/implementations/<dir>/ (its config_*.sh, the
config_common.sh it sources, conf/megatron_gpt_peft_tuning_config.yaml, conf/tp_overlap/*.yaml,
v5.x's train.py, custom_llama.py and custom_callbacks.py); its logs
NVIDIA/results/<dir>/llama2_70b_lora/result_N.txt.

The recipe in every release (not a rule of ours): NeMo's LoRA of rank 16 (adapter_dim / dim 16,
alpha 32) on the attention's two linear layers (v4.x target_modules ['attention'], NeMo's
linear_qkv and linear_proj adapters; v5.x train.py target_modules ["linear_proj", "linear_qkv"]),
dropout 0.1 on each adapter's input (dropout_position "pre"); GovReport packed into 8,192-token
rows (packed_sequence True) whose attention runs over the whole row (packed_sequence_return_cu_
seqlen False: no document boundaries reach the kernel); global batch MINIBS x data-parallel ranks
(the YAML's global_batch_size: MINIBS x GPUs / (TP x PP) / CP), micro-batch 1 (MBS=1); the base
model's weights in FP8 (v4.x fp8_params = FP8; v5.0 fp8_params = FP8; v5.1 custom_llama.py builds
the model under te.fp8_model_init where FP8, and custom_callbacks.py quantizes it to NVFP4 in
place where FP4 with PRE_QUANTIZED_MODEL=True), frozen: no weight gradients, no cast per step
(Hopper's transposes aside).

Left out: the L40S runs (no catalog GPU); the partners' submissions (not read this round); the
v5.1 rows' later healing phase (below).

The step time: each result_N.txt's MLLOG lines mark blocks of training between evaluations
(block_start / block_stop). A block's steps: v4.x, its samples (the next eval_start's
samples_count less the block_start's) over the logged global_batch_size; v5.0, the same (its
block_stop carries the block's starting count); v5.1, the step metadata of block_start and
block_stop. STEP_S below is, in result_0.txt, the summed time of blocks 2 to the last over their
summed steps (the first block, 3-4x longer and holding the run's first steps, left out);
CROSS_S the same of result_1.txt. v5.1's NVFP4 runs switch to FP8 delayed scaling at step
HEALING_ITER=350 (custom_callbacks.py's healing: the weights re-quantized, the CUDA graphs kept),
inside their last block (steps 336-384), which ran 1.5-2.3x slower: their STEP_S is blocks 2-4,
steps 192-336, all in NVFP4. The logs' tracked_stats (v4.x throughput, v5.x train_step_time) agree
with these to 0.5% but for v4.0's 128-node run (blocks of 3 steps, 4% apart).
"""

from public_runs import mlperf_published, wrap, write_scenarios

# Model FLOPs a sequence of a LoRA step with a frozen base, attention over the whole s x s product
# (the simulator's MODEL_FLOPS under job.lora): every frozen weight's forward and data gradient,
# 2 x 2 FLOPs a parameter a token (the QKV h (h + 2kd), the output projection h^2, the SwiGLU MLP
# 3hf, over l layers, and the output layer hV); attention's two products 4sh a layer forward, 3x
# with its backward; each adapter parameter 2 FLOPs a token forward, 3x with its backward (rank r
# on QKV and the projection: r (h + h + 2kd) + r (h + h) a layer). Only to print TFLOP/s beside
# the step time; the rows are scored on step time. Llama 2 70B: l 80, h 8192, k 8, d 128, f 28672,
# V 32000, s 8192, r 16: 2.782e15.
def lora_flops(layers=80, h=8192, kv_heads=8, head_dim=128, ffn=28672, vocab=32000, rank=16,
               s=8192):
    frozen = layers * (h * (h + 2 * kv_heads * head_dim) + h * h + 3 * h * ffn) + h * vocab
    adapters = layers * rank * ((h + h + 2 * kv_heads * head_dim) + (h + h))
    return s * (4 * frozen + 3 * layers * 4 * s * h + 6 * adapters)


LORA_FLOPS = lora_flops()
FLOPS_TEXT = ('4 x (frozen weights) + 3 x 4sh l (attention) + 6 x (adapter parameters) FLOPs a '
              'token')

REPOS = {
    'v4.0': 'mlcommons/training_results_v4.0 @ 6fe9543',
    'v4.1': 'mlcommons/training_results_v4.1 @ b87b9e3',
    'v5.0': 'mlcommons/training_results_v5.0 @ 0fdc28f',
    'v5.1': 'mlcommons/training_results_v5.1 @ 441d65f4',
}

# What each release's recipe runs (not a rule of ours), beyond the module docstring's common part.
RELEASES = {
    'v4.0': dict(
        recipe='NVIDIA/benchmarks/llama2_70b_lora/implementations/nemo',
        what=("NeMo's megatron_gpt_peft_tuning_config.yaml (mcore_gpt, the 24.04 container): "
              "megatron_amp_O2 with NeMo's fused_adam (no distributed optimizer; the adapters' "
              "gradients all-reduced), FP8 as Transformer Engine's delayed scaling (FP8=True, "
              "fp8_hybrid, amax history 32, algorithm max) with FP8 weights (fp8_params) "
              "whose transposes are made at each use (disable_parameter_transpose_cache: "
              "True: fp8_weight_transpose_per_use), FP8 attention forward and backward "
              "(config_common.sh FP8_DPA=1, NVTE_FP8_DPA_BWD=1) in cuDNN's fused kernels "
              "(NVTE_FUSED_ATTN=1, NVTE_FLASH_ATTN=0), hidden, attention and FFN dropout 0, no "
              "activation recomputation (ACG null), RoPE fusion; "),
        missing=("NeMo's LoRA all-to-all of the r-wide activations between an adapter's two "
                 "GEMMs (LORA_A2A=1, a2a_experimental) and alpha's scale; the amax reduction "
                 "where FP8_REDUCE_AMAX=True; NCCL's channel and CTA settings; the GPU clock "
                 "boost (VBOOST_VALUE); SHARP where the config asks for it (the adapters' "
                 "all-reduce: 44.6 M parameters, 16 (8192 + 10240 + 8192 + 8192) a layer, split "
                 "over TP); the loss over the answer tokens only (answer_only_loss: the logits "
                 "of every token are computed).")),
    'v4.1': dict(
        recipe='NVIDIA/benchmarks/llama2_70b_lora/implementations/{results_dir}',
        what=("NeMo's megatron_gpt_peft_tuning_config.yaml (mcore_gpt, the 24.09 container): "
              "Megatron-Core's distributed optimizer (optim mcore_distributed_optim, "
              "overlap_grad_sync, overlap_param_sync) over the adapters, FP8 as Transformer "
              "Engine's delayed scaling (FP8=True, fp8_hybrid, amax history 32, algorithm max) "
              "with FP8 weights (fp8_params) whose transposes are made at each use "
              "(disable_parameter_transpose_cache: True: fp8_weight_transpose_per_use), cuDNN's "
              "fused attention (NVTE_FUSED_ATTN=1, NVTE_FLASH_ATTN=0), hidden, attention and FFN "
              "dropout 0, no activation recomputation; "),
        missing=("NeMo's LoRA all-to-all of the r-wide activations between an adapter's two "
                 "GEMMs (LORA_A2A=1) and alpha's scale; the CUDA graphs where LAYER_CUDA_GRAPH=1 "
                 "(the simulator charges a dense layer no host launch time); NCCL's channel and "
                 "CTA settings; the GPU clock boost (VBOOST_VALUE); SHARP where the config asks "
                 "for it; the loss over the answer tokens only.")),
    'v5.0': dict(
        recipe='NVIDIA/benchmarks/llama2_70b_lora/implementations/{results_dir}',
        what=("NeMo 2.0's train.py (the 25.04 container): Megatron-Core's distributed optimizer "
              "(use_distributed_optimizer True) over the adapters, FP8 as Transformer Engine's "
              "delayed scaling (config_common.sh FP8=True, FP8_AMAX_HISTORY=4, max, "
              "FP8_REDUCE_AMAX=True) with FP8 weights (fp8_params), FP8 attention forward and "
              "backward (FP8_DPA=1, NVTE_FP8_DPA_BWD=1) in cuDNN's fused kernels, no tensor "
              "parallelism (TP=1, SP=0), no activation recomputation; "),
        missing=("NeMo's LoRA all-to-all (LORA_A2A=1) and alpha's scale; the adapters' dropout "
                 "as Thunder's fused kernel (NEMO_LORA_USE_THUNDER_DROPOUT=1; the simulator "
                 "charges PyTorch's dropout kernel); the CUDA graphs where MCORE_CUDA_GRAPH=1; "
                 "cuDNN's normalization kernels (NVTE_NORM_FWD/BWD_USE_CUDNN=1); the amax "
                 "reduction; NCCL's settings (NVLink SHARP on: NCCL_NVLS_ENABLE=1, except the "
                 "DGX B200's config); the loss over the answer tokens only.")),
    'v5.1': dict(
        recipe='NVIDIA/benchmarks/llama2_70b_lora/implementations/nemo',
        what=("NeMo 2.0's train.py (the 25.09 container): Megatron-Core's distributed optimizer "
              "over the adapters, no tensor parallelism (config_common.sh TP=1, SP=0), FP8 "
              "attention forward and backward (FP8_DPA=1, NVTE_FP8_DPA_BWD=1) in cuDNN's fused "
              "kernels, each layer captured as a CUDA graph (MCORE_CUDA_GRAPH=1), no activation "
              "recomputation; "),
        missing=("NeMo's LoRA all-to-all (LORA_A2A=1) and alpha's scale; the adapters' dropout "
                 "as Thunder's fused kernel (NEMO_LORA_USE_THUNDER_DROPOUT=1); Transformer "
                 "Engine's operation fuser (USE_TE_OPS=1) and the fused QKV + RoPE kernel "
                 "(FUSED_SINGLE_QKV_ROPE=1); the CUDA graphs (the simulator charges a dense layer "
                 "no host launch time); cuDNN's normalization kernels; the gradient clipping on "
                 "the device (ON_DEVICE_CLIP_GRAD=1); the amax reduction; NCCL's settings "
                 "(NVLink SHARP on); the loss over the answer tokens only.")),
}

FP8_DELAYED_V51 = ("FP8 as Transformer Engine's delayed scaling (config_common.sh FP8=True, "
                   "FP8_AMAX_HISTORY=4, max, FP8_REDUCE_AMAX=True), the weights built in FP8 "
                   "(custom_llama.py te.fp8_model_init); ")
NVFP4_V51 = ("NVFP4 GEMMs (config_common_fp4.sh FP4=True, FP4_RECIPE nvfp4, FP8=False) without "
             "the random Hadamard transform and 2D weight blocks (NVTE_NVFP4_DISABLE_RHT=1, "
             "NVTE_NVFP4_DISABLE_2D_QUANTIZATION=1), the frozen weights quantized to NVFP4 once "
             "(PRE_QUANTIZED_MODEL=True: custom_callbacks.py replaces them in place), the "
             "attention's FP8 under delayed scaling (NVTE_DPA_FP8_RECIPE=\"DelayedScaling\", "
             "HYBRID, amax history 4); from step HEALING_ITER=350 the GEMMs in FP8 delayed "
             "scaling (HEALING_PRECISION FP8_DS), after the scored blocks; ")

NVFP4_MISSING = ("NVFP4 without the Hadamard transform and with 1D weight blocks (the "
                 "simulator's NVFP4 is Transformer Engine's default recipe; its fused cast writes "
                 "both copies of an activation in one read, which is what a plain cast-transpose "
                 "does); ")

# The machines: catalog instance, GPUs a node, and how the header names them.
SYSTEMS = {
    'h100': dict(instance='onprem.dgx-h100', gpus_per_node=8, gpu='H100'),
    'h200': dict(instance='aws.p5e.48xlarge', gpus_per_node=8, gpu='H200'),
    'b200': dict(instance='onprem.dgx-b200', gpus_per_node=8, gpu='B200'),
    'gb200': dict(instance='onprem.gb200-nvl72', gpus_per_node=4, gpu='GB200',
                  nics='4 x 400 Gb/s ConnectX-7 NDR InfiniBand'),
    'gb300': dict(instance='onprem.gb300-nvl72', gpus_per_node=4, gpu='GB300',
                  nics='4 x 800 Gb/s ConnectX-8 XDR InfiniBand'),
}

GROUPS = {
    ('h100', 'FP8'): 'Public check: MLPerf Training Llama 2 70B LoRA (DGX H100, FP8)',
    ('h200', 'FP8'): 'Public check: MLPerf Training Llama 2 70B LoRA (DGX H200, FP8)',
    ('b200', 'FP8'): 'Public check: MLPerf Training Llama 2 70B LoRA (DGX B200, FP8)',
    ('gb200', 'FP8'): 'Public check: MLPerf Training Llama 2 70B LoRA (GB200 NVL72, FP8)',
    ('gb300', 'FP8'): 'Public check: MLPerf Training Llama 2 70B LoRA (GB300 NVL72, FP8)',
    ('gb200', 'FP4'): ('Public check: MLPerf Training Llama 2 70B LoRA (GB200 and GB300 NVL72 '
                       'trays, 8 GPUs, NVFP4)'),
    ('gb300', 'FP4'): ('Public check: MLPerf Training Llama 2 70B LoRA (GB200 and GB300 NVL72 '
                       'trays, 8 GPUs, NVFP4)'),
}

# release, results directory, system, nodes (NVL72: compute trays; with the NVLink domain's trays
# for NVL72), config file, MINIBS, TP, CP, global batch (MLLOG global_batch_size), STEP_S, CROSS_S,
# and the row's own settings: fp8_attention (FP8_DPA as the config leaves it), precision,
# tp_overlap_sms (the userbuffers reduce-scatter SMs of proj_fprop and fc2_fprop with the YAML
# that sets them), fp8_activation_input_store (FP8_ACTIVATION / FP8_ACT set), the config's own
# lines worth naming, and the blocks scored where not 2-last.
ROWS = [
    dict(release='v4.0', results='NVIDIA/results/eos_ngc24.04_nemo', system='h100', nodes=1,
         config='config_DGXH100_1x8x4xtp4pp1cp1.sh', minibs=4, tp=4, cp=1, gbs=8,
         step=3.7122, cross=3.7452, fp8_attention=True,
         tp_overlap_sms=(32, 16, 'conf/tp_overlap/h100tp4mbs1.yaml: proj_fprop and fc2_fprop '
                                 'pipeline, num_sm 32 and 16, set_sm_margin 1'),
         config_text='FP8_AMAX_HISTORY=32, FP8_REDUCE_AMAX=False, VBOOST_VALUE=1'),
    dict(release='v4.0', results='NVIDIA/results/eos_n8_ngc24.04_nemo', system='h100', nodes=8,
         config='config_DGXH100_8x8x1xtp4pp1cp2.sh', minibs=1, tp=4, cp=2, gbs=8,
         step=0.6385, cross=0.6381, fp8_attention=True,
         tp_overlap_sms=(32, 16, 'conf/tp_overlap/h100tp4mbs1.yaml: proj_fprop and fc2_fprop '
                                 'pipeline, num_sm 32 and 16, set_sm_margin 1'),
         config_text='FP8_REDUCE_AMAX=True, SHARP=True'),
    dict(release='v4.0', results='NVIDIA/results/eos_n128_ngc24.04_nemo', system='h100',
         nodes=128, config='config_DGXH100_128x8x1xtp4pp1cp2.sh', minibs=1, tp=4, cp=2, gbs=128,
         step=0.6846, cross=0.6929, fp8_attention=True,
         tp_overlap_sms=(32, 16, 'conf/tp_overlap/h100tp4mbs1.yaml: proj_fprop and fc2_fprop '
                                 'pipeline, num_sm 32 and 16, set_sm_margin 1'),
         config_text='FP8_REDUCE_AMAX=True, SHARP=True',
         note=('its blocks are 3 steps each (384 samples at global batch 128), each after an '
               'evaluation: the per-block times spread 0.65-0.76 s a step')),
    dict(release='v4.0', results='NVIDIA/results/h200_ngc24.04_nemo', system='h200', nodes=1,
         config='config_DGXH200_1x8x2xtp2pp1cp1.sh', minibs=2, tp=2, cp=1, gbs=8,
         step=3.2314, cross=3.2297, fp8_attention=True,
         tp_overlap_sms=(1, 1, 'conf/tp_overlap/h100tp2mbs1.yaml: proj_fprop and fc2_fprop '
                               'ring_exchange, num_sm 1, set_sm_margin 1'),
         fp8_activation_input_store=True,
         config_text=('FP8_AMAX_ALGO=most_recent, FP8_AMAX_HISTORY=4, FP8_ACTIVATION=True, '
                      'VBOOST_VALUE=1')),
    dict(release='v4.1', results='NVIDIA/results/eos_ngc24.09_nemo', system='h100', nodes=1,
         config='config_DGXH100_1x8x4xtp4pp1cp1.sh', minibs=4, tp=4, cp=1, gbs=8,
         step=3.6797, cross=3.6722, fp8_attention=True,
         tp_overlap_sms=(32, 16, 'conf/tp_overlap/h100tp4mbs1.yaml: proj_fprop and fc2_fprop '
                                 'pipeline, num_sm 32 and 16, set_sm_margin 1'),
         config_text='FP8_DPA=1, NVTE_FP8_DPA_BWD=1: FP8 attention, VBOOST_VALUE=1'),
    dict(release='v4.1', results='NVIDIA/results/eos_n8_ngc24.09_nemo', system='h100', nodes=8,
         config='config_DGXH100_8x8x1xtp4pp1cp2.sh', minibs=1, tp=4, cp=2, gbs=8,
         step=0.5416, cross=0.5438, fp8_attention=False,
         tp_overlap_sms=(32, 16, 'conf/tp_overlap/h100tp4mbs1.yaml: proj_fprop and fc2_fprop '
                                 'pipeline, num_sm 32 and 16, set_sm_margin 1'),
         config_text=('FP8_DPA=0: 16-bit attention, LAYER_CUDA_GRAPH=1, '
                      'MC_TP_OVERLAP_RS_DGRAD=False, SHARP=True')),
    dict(release='v4.1', results='NVIDIA/results/eos_n128_ngc24.09_nemo', system='h100',
         nodes=128, config='config_DGXH100_128x8x1xtp4pp1cp2.sh', minibs=1, tp=4, cp=2, gbs=128,
         step=0.5494, cross=0.5494, fp8_attention=False,
         tp_overlap_sms=(32, 16, 'conf/tp_overlap/h100tp4mbs1.yaml: proj_fprop and fc2_fprop '
                                 'pipeline, num_sm 32 and 16, set_sm_margin 1'),
         config_text=('FP8_DPA=0: 16-bit attention, LAYER_CUDA_GRAPH=1, '
                      'MC_TP_OVERLAP_RS_DGRAD=False, SHARP=True'),
         note='its blocks are 3 steps each (384 samples at global batch 128)'),
    dict(release='v4.1', results='NVIDIA/results/h200_ngc24.09_nemo', system='h200', nodes=1,
         config='config_DGXH200_1x8x2xtp1pp1cp2.sh', minibs=2, tp=1, cp=2, gbs=8,
         step=3.2373, cross=3.2280, fp8_attention=False,
         fp8_activation_input_store=True,
         config_text='FP8_DPA=0: 16-bit attention, SP=0, FP8_ACTIVATION=True, VBOOST_VALUE=1'),
    dict(release='v4.1', results='NVIDIA/results/b200_preview_nemo',
         system='b200', nodes=1,
         config='config_DGXB200_1x8x2xtp1pp1cp2.sh', minibs=2, tp=1, cp=2, gbs=8,
         step=1.7038, cross=1.7038, fp8_attention=True,
         config_text=('FP8_DPA=1, NVTE_FP8_DPA_BWD=1: FP8 attention; FP8_AMAX_HISTORY=4, '
                      'FP8_REDUCE_AMAX=True, SP=0, LAYER_CUDA_GRAPH=1, '
                      'NEMO_LORA_MEMORY_SAVING_DROPOUT=0; its configs/config_common.sh sets '
                      'NEMO_LORA_USE_THUNDER_DROPOUT=1, Thunder\'s fused dropout, not expressed'),
         system_text=('NVIDIA/systems/b200_preview_nemo.json: "Nyx (1x NVIDIA DGX B200)", a '
                      'preview system')),
    dict(release='v5.0', results='NVIDIA/results/nyx_n1_ngc25.04_nemo',
         system='b200', nodes=1,
         config='config_DGXB200_1x8x1xtp1pp1cp1.sh', minibs=1, tp=1, cp=1, gbs=8,
         step=1.5427, cross=1.4991, fp8_attention=True,
         fp8_activation_input_store=True,
         config_text='FP8_ACT=1, MCORE_CUDA_GRAPH=0, NCCL_NVLS_ENABLE=0',
         system_text='NVIDIA/systems/nyx_n1_ngc25.04_nemo.json: "Nyx (1x NVIDIA DGX B200)"'),
    dict(release='v5.0', results='NVIDIA/results/tyche_ngpu8_ngc25.04_nemo',
         system='gb200',
         nodes=2, domain=2, racks=1, config='config_GB200_2x4x1xtp1pp1cp1.sh', minibs=1, tp=1,
         cp=1, gbs=8, step=1.4713, cross=1.4878, fp8_attention=True,
         fp8_activation_input_store=True,
         config_text='FP8_ACT=1, MCORE_CUDA_GRAPH=0'),
    dict(release='v5.0', results='NVIDIA/results/tyche_ngpu72_ngc25.04_nemo', system='gb200',
         nodes=18, domain=18, racks=1, config='config_GB200_18x4x1xtp1pp1cp8.sh', minibs=1,
         tp=1, cp=8, gbs=9, step=0.2374, cross=0.2400, fp8_attention=True,
         config_text='MCORE_CUDA_GRAPH=1'),
    dict(release='v5.0', results='NVIDIA/results/tyche_ngpu144_ngc25.04_nemo', system='gb200',
         nodes=36, domain=18, racks=2, config='config_GB200_36x4x1xtp1pp1cp8.sh', minibs=1,
         tp=1, cp=8, gbs=18, step=0.2441, cross=0.2442, fp8_attention=True,
         config_text='MCORE_CUDA_GRAPH=1'),
    dict(release='v5.0', results='NVIDIA/results/tyche_ngpu512_ngc25.04_nemo', system='gb200',
         nodes=128, domain=16, racks=8, config='config_GB200_128x4x1xtp1pp1cp8.sh', minibs=1,
         tp=1, cp=8, gbs=64, step=0.2590, cross=0.2577, fp8_attention=True,
         config_text='MCORE_CUDA_GRAPH=1'),
    dict(release='v5.1', results='NVIDIA/results/tyche_ngpu8_ngc25.09_nemo', system='gb200',
         nodes=2, domain=2, racks=1, config='config_GB200_2x4x2xtp1pp1cp2_fp4.sh', minibs=2,
         tp=1, cp=2, gbs=8, step=1.0291, cross=1.0323, fp8_attention=True, precision='FP4',
         config_text='sources config_common_fp4.sh; HEALING_ITER=350',
         blocks='2-4'),
    dict(release='v5.1', results='NVIDIA/results/tyche_ngpu72_ngc25.09_nemo', system='gb200',
         nodes=18, domain=18, racks=1, config='config_GB200_18x4x1xtp1pp1cp8.sh', minibs=1,
         tp=1, cp=8, gbs=9, step=0.1997, cross=0.2004, fp8_attention=True),
    dict(release='v5.1', results='NVIDIA/results/tyche_ngpu512_ngc25.09_nemo', system='gb200',
         nodes=128, domain=16, racks=8, config='config_GB200_128x4x1xtp1pp1cp8.sh', minibs=1,
         tp=1, cp=8, gbs=64, step=0.2105, cross=0.2099, fp8_attention=True),
    dict(release='v5.1', results='NVIDIA/results/theia_ngpu8_ngc25.09_nemo', system='gb300',
         nodes=2, domain=2, racks=1, config='config_GB300_2x4x1xtp1pp1cp1_fp4.sh', minibs=1,
         tp=1, cp=1, gbs=8, step=0.7457, cross=0.7455, fp8_attention=True, precision='FP4',
         config_text='sources config_common_fp4.sh; HEALING_ITER=350',
         blocks='2-4'),
    dict(release='v5.1', results='NVIDIA/results/theia_ngpu72_ngc25.09_nemo', system='gb300',
         nodes=18, domain=18, racks=1, config='config_GB300_18x4x1xtp1pp1cp8.sh', minibs=1,
         tp=1, cp=8, gbs=9, step=0.1725, cross=0.1729, fp8_attention=True),
    dict(release='v5.1', results='NVIDIA/results/theia_ngpu512_ngc25.09_nemo', system='gb300',
         nodes=128, domain=16, racks=8, config='config_GB300_128x4x1xtp1pp1cp8.sh', minibs=1,
         tp=1, cp=8, gbs=64, step=0.1837, cross=0.1840, fp8_attention=True),
]


def system_sentence(row, hw):
    """The header's sentence on the machine a run used, and its stand-in where the catalog has
    none."""
    results_dir = row['results'].split('/')[-1]
    systems_file = f'NVIDIA/systems/{results_dir}.json'
    nodes = row['nodes']
    if hw['gpus_per_node'] == 4:
        name = 'Tyche' if hw['gpu'] == 'GB200' else 'Theia'
        return (f'{nodes} {hw["gpu"]} NVL72 compute trays (4 {hw["gpu"]} each, {hw["nics"]}) in '
                f'{row["racks"]} rack{"s" if row["racks"] > 1 else ""} ({systems_file}: "{name} '
                f'({row["racks"]}x NVIDIA {hw["gpu"]} NVL72)"), {nodes // row["racks"]} of each '
                f'rack\'s 18 trays: NVLink domains of {row["domain"]} trays '
                '(nvlink_domain_nodes) on a rail-optimized fabric.')
    if hw['gpu'] == 'H200':
        return (f'One NVIDIA DGX H200 (8 H200 SXM 141 GB on NVLink 4 and NVSwitch: {systems_file}: '
                '"DGX H200"). The catalog has no DGX H200 instance; aws.p5e.48xlarge stands in '
                '(the same 8 H200 on NVSwitch); one server, so no network enters the step.')
    if hw['gpu'] == 'B200':
        return (f'One NVIDIA DGX B200 (8 B200 on NVLink 5 and NVSwitch; {row["system_text"]}), '
                'onprem.dgx-b200; one server, so no network enters the step.')
    return (f'{nodes} DGX H100 (8 H100 SXM 80 GB, 8 x 400 Gb/s NDR: {systems_file}), '
            f'{"a rail-optimized SuperPOD fabric" if nodes > 1 else "one server"}.')


def scenario(row):
    release = row['release']
    r = RELEASES[release]
    hw = SYSTEMS[row['system']]
    tp, cp, minibs, gbs = row['tp'], row['cp'], row['minibs'], row['gbs']
    gpus = row['nodes'] * hw['gpus_per_node']
    assert gpus // (tp * cp) * minibs == gbs, row['results']
    results_dir = row['results'].split('/')[-1]
    precision = row.get('precision', 'FP8')
    recipe = r['recipe'].format(results_dir=results_dir)
    ran = r['what']
    if release == 'v5.1':
        ran += NVFP4_V51 if precision == 'FP4' else FP8_DELAYED_V51
    sequence_parallel = tp > 1
    overlap = row.get('tp_overlap_sms')
    if overlap:
        ran += (f'sequence parallelism with userbuffers\' TP overlap (TP_COMM_OVERLAP, '
                f'MC_TP_OVERLAP_AG and MC_TP_OVERLAP_RS True), the reduce-scatter kernels beside '
                f'the attention output projection and the MLP down projection reserving '
                f'{overlap[0]} and {overlap[1]} of the GPU\'s SMs ({overlap[2]}: '
                'tensor_overlap_attention_out_sms, tensor_overlap_mlp_down_sms); ')
    if row.get('fp8_activation_input_store'):
        ran += ('the SwiGLU input kept in FP8 for the backward (FP8_ACTIVATION / FP8_ACT: '
                'activation_func_fp8_input_store, fp8_activation_input_store); ')
    attention = ('FP8 attention under the GEMMs\' delayed scaling'
                 if row['fp8_attention'] and precision == 'FP8' else
                 'FP8 attention under delayed scaling' if row['fp8_attention'] else
                 '16-bit attention')
    ring = f"CP {cp} (Megatron-Core's peer-to-peer ring), " if cp > 1 else ''
    layout = (f'TP {tp}{" with sequence parallelism" if sequence_parallel else ""}, {ring}MBS 1, '
              f'{minibs} sequence{"s" if minibs > 1 else ""} a replica, global batch {gbs}')
    config_text = f': {row["config_text"]}' if row.get('config_text') else ''
    what = (f'What ran, read in the recipe ({recipe}; not a rule of ours): LoRA of rank 16 on '
            'linear_qkv and linear_proj, dropout 0.1 on the adapters\' inputs, the frozen base in '
            f'{"NVFP4" if precision == "FP4" else "FP8"}, 8,192-token packed rows attended whole '
            f'(the module docstring of tools/make_public_mlperf_lora.py); {ran}{attention}; '
            f'{layout} ({row["config"]}{config_text}). Not expressible, left at the simulator\'s '
            f'one model: {NVFP4_MISSING if precision == "FP4" else ""}{r["missing"]}')
    blocks = row.get('blocks', '2-last')
    steps_by = ('the step metadata' if release == 'v5.1' else
                'the samples between block_start and the next eval_start over the global batch')
    how = (f'Scored on step time: in {row["results"]}/llama2_70b_lora/result_0.txt, the summed '
           f'elapsed time of blocks {blocks} (MLLOG block_start to block_stop, evaluations '
           f'excluded) over their steps (by {steps_by}): {row["step"]} s a step; result_1.txt '
           f'gives {row["cross"]} s.'
           + (' Blocks 2-4 only: the run switches to FP8 at step 350, inside block 5 '
              '(steps 336-384).' if blocks == '2-4' else '')
           + (f' Of this row: {row["note"]}.' if row.get('note') else '')
           + f' TFLOP/s derived from it (not published) as {FLOPS_TEXT}.')
    name = (f'mlperf-{release}-llama2-70b-lora-{hw["gpu"].lower()}-{gpus}'
            f'{"-nvfp4" if precision == "FP4" else ""}')
    transpose_per_use = release in ('v4.0', 'v4.1')
    lines = [wrap(f'MLPerf Training {release}, Llama 2 70B LoRA on {gpus} {hw["gpu"]} GPUs, '
                  f'{"NVFP4" if precision == "FP4" else "FP8"} ({REPOS[release]}, '
                  f'{row["results"]}/llama2_70b_lora). Generated by '
                  'tools/make_public_mlperf_lora.py; a public check outside the calibration '
                  '(nothing is fitted on it).'),
             wrap(system_sentence(row, hw)), wrap(what), wrap(how),
             f'name: "{name}"',
             'model: "llama2-70b-mlperf"',
             'job {',
             f'  global_batch_size: {gbs}',
             '  sequence_length: 8192',
             f'  precision: {precision}',
             f'  fp8_recipe: {"NVFP4" if precision == "FP4" else "DELAYED_SCALING"}',
             '  fp8_parameters: true']
    if transpose_per_use:
        lines.append('  fp8_weight_transpose_per_use: true')
    lines += ['  optimizer: ADAM',
             '  steps: 1',
             '  lora {',
             '    rank: 16',
             '    target_modules: LINEAR_QKV',
             '    target_modules: LINEAR_PROJ',
             '    dropout: 0.1',
             '    dropout_position: LORA_DROPOUT_PRE',
             '  }']
    if row.get('fp8_activation_input_store'):
        lines.append('  fp8_activation_input_store: true')
    if row['fp8_attention']:
        lines.append('  fp8_attention: true')
        if precision == 'FP4':
            lines.append('  fp8_attention_recipe: DELAYED_SCALING')
    domain = f' nvlink_domain_nodes: {row["domain"]}' if 'domain' in row else ''
    lines += ['}',
              f'cluster {{ instance: "{hw["instance"]}" nodes: {row["nodes"]} '
              f'fabric: "ib-rail-optimized"{domain} }}',
              'parallelism {',
              f'  tensor_parallel: {tp}',
              '  pipeline_parallel: 1']
    if cp > 1:
        lines.append(f'  context_parallel: {cp}')
    lines += ['  micro_batch_size: 1',
              f'  sequence_parallel: {str(sequence_parallel).lower()}',
              f'  overlap_tensor_communication: {str(bool(overlap)).lower()}',
              f'  distributed_optimizer: {str(release != "v4.0").lower()}']
    if overlap:
        lines += [f'  tensor_overlap_attention_out_sms: {overlap[0]}',
                  f'  tensor_overlap_mlp_down_sms: {overlap[1]}']
    tflops = gbs * LORA_FLOPS / row['step'] / gpus / 1e12
    lines += ['}'] + mlperf_published(GROUPS[(row['system'], precision)], row['step'], tflops,
                                      REPOS[release],
                                      f'{row["results"]}/llama2_70b_lora/result_0.txt',
                                      f'MLLOG block_start to block_stop, blocks {blocks}')
    return name, '\n'.join(lines) + '\n'


def main():
    write_scenarios(scenario(row) for row in ROWS)


if __name__ == '__main__':
    main()
