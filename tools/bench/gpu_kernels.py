#!/usr/bin/env python3
"""Measures on one NVIDIA GPU what clustersim's compute model predicts: dense GEMM TFLOP/s by shape
(BF16, and FP8 e4m3 where the GPU has it), fused-attention TFLOP/s by sequence, head dimension,
mask and pass for PyTorch's cuDNN and FlashAttention-2 backends, HBM bandwidth (copy, read,
an elementwise SwiGLU), mixture-of-experts expert GEMMs (batched, grouped, one per expert),
decode attention over a KV cache, the token permutations around the experts, tensor-parallel
overlap's GEMM chunks on one and three streams, and context parallelism's attention steps. Needs PyTorch
with CUDA; prints CSV rows and writes them to OUT_DIR/gpu_kernels.csv.

Conventions, so the rows compare with the published kernel tables the compute model is fitted on:
- GEMM: 2*M*N*K FLOPs; A is M x K, B is K x N; mean of the timed runs after warm-ups.
- Attention: FlashAttention's benchmark (Dao 2023): 16,384 tokens a batch, model width 2048
  (heads = 2048 / head_dim), forward FLOPs 4*b*h*s*s*d, halved under the causal mask, backward
  2.5x the forward; the backward time is (forward+backward) - forward.
- Bandwidth: bytes read plus bytes written over the time.
- Expert GEMMs: G experts of m tokens each (balanced routing), shape GxMxNxK, mask column = the
  model, pass column = the GEMM (fc1: m x 2f x h, fc2: m x h x f, fc1 wgrad: h x 2f x m);
  2*G*M*N*K FLOPs.
- Decode attention: one query token a sequence over L cached tokens, grouped-query heads; the
  rate is the KV cache's bytes over the time (TB/s).
- GEMMs beside resident CTAs: C CTAs of 512 threads (mask: spinning, or copying 256 MiB through
  HBM) hold C SMs while a batch of GEMMs runs, each against the GEMMs alone next to it (mask
  "none"), alternating which runs first; medians of 6 such pairs; pass column = C and the median
  SM clock read halfway through the batches.
- TP-overlap chunks: the whole GEMM MxNxK, and its M rows cut into TP chunks run one after
  another on one stream or round-robin on three; 2*M*N*K FLOPs over the time of all of them;
  the three timed in turn five times, the median of each.
- Context-parallel attention steps: q queries over k keys of one sequence, H heads of 128; FLOPs
  4*q*k*H*d (causal: q(q+1)/2 pairs); backward 2.5x the forward.
- Before each part a probe times 8192^3 in BF16 once more: the GPU's clock and power over the run.

Usage: python3 tools/bench/gpu_kernels.py OUT_DIR [PART...]
  PART: gemm attention bandwidth expert_gemm expert_gemm_graphed sm_contention decode_attention
  token_permute tp_chunks cp_attention attention_heads attention_heads_fa2 attention_heads_hd64
  (default: all)
"""
import csv
import os
import sys
import time

import torch
import torch.nn.functional as F

WARMUP = 5
TIMED = 20


def time_ms(fn, warmup=WARMUP, timed=TIMED):
    """Mean milliseconds of fn() over `timed` runs after `warmup`, timed with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(timed):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / timed


def gemm_rows(dev):
    shapes = [
        # square shapes, as the vendors' and MAMF tables quote them
        (4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384),
        # transformer GEMMs at 8192 tokens: Llama 3 8B (h 4096, ffn 14336, qkv 6144) and 70B
        # (h 8192, ffn 28672, qkv 10240) at TP 1, 2, 4, 8 (N or K divided by TP)
    ]
    for h, ffn, qkv in ((4096, 14336, 6144), (8192, 28672, 10240)):
        for tp in (1, 2, 4, 8):
            shapes += [(8192, qkv // tp, h), (8192, h, h // tp), (8192, 2 * ffn // tp, h),
                       (8192, h, ffn // tp)]
    # small token counts (decode-like and small micro-batches)
    for m in (16, 64, 256, 1024, 2048):
        shapes += [(m, 8192, 8192), (m, 28672, 8192)]
    rows = []
    for m, n, k in shapes:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
        ms = time_ms(lambda: torch.matmul(a, b))
        rows.append(("gemm", "BF16", f"{m}x{n}x{k}", "", "", ms, 2.0 * m * n * k / ms / 1e9))
        try:
            a8 = a.to(torch.float8_e4m3fn)
            b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
            one = torch.tensor(1.0, device=dev)
            ms8 = time_ms(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one,
                                                   out_dtype=torch.bfloat16))
            rows.append(("gemm", "FP8 e4m3", f"{m}x{n}x{k}", "", "", ms8,
                         2.0 * m * n * k / ms8 / 1e9))
        except Exception as e:  # a GPU or build without FP8 GEMMs
            print(f"# FP8 {m}x{n}x{k}: {e}", file=sys.stderr)
        del a, b
    return rows


def attention_rows(dev):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = (("cuDNN", SDPBackend.CUDNN_ATTENTION),
                ("FlashAttention-2", SDPBackend.FLASH_ATTENTION))
    rows = []
    for name, backend in backends:
        for d in (64, 128):
            heads = 2048 // d
            for s in (512, 1024, 2048, 4096, 8192, 16384):
                batch = 16384 // s
                for causal in (False, True):
                    try:
                        q, k, v = (torch.randn(batch, heads, s, d, device=dev,
                                               dtype=torch.bfloat16, requires_grad=True)
                                   for _ in range(3))
                        g = torch.randn(batch, heads, s, d, device=dev, dtype=torch.bfloat16)
                        with sdpa_kernel([backend]):
                            fwd = lambda: F.scaled_dot_product_attention(q, k, v,
                                                                         is_causal=causal)
                            def both():
                                out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                                out.backward(g)
                            ms_f = time_ms(fwd)
                            ms_fb = time_ms(both)
                    except Exception as e:
                        print(f"# {name} d{d} s{s} causal={causal}: {e}", file=sys.stderr)
                        continue
                    flops_f = 4.0 * batch * heads * s * s * d / (2.0 if causal else 1.0)
                    shape = f"seq{s}_hd{d}"
                    mask = "causal" if causal else "full"
                    rows.append((f"attention {name}", "BF16", shape, mask, "fwd", ms_f,
                                 flops_f / ms_f / 1e9))
                    ms_b = ms_fb - ms_f
                    rows.append((f"attention {name}", "BF16", shape, mask, "bwd", ms_b,
                                 2.5 * flops_f / ms_b / 1e9))
                    rows.append((f"attention {name}", "BF16", shape, mask, "fwd+bwd", ms_fb,
                                 3.5 * flops_f / ms_fb / 1e9))
                    del q, k, v, g
    return rows


def bandwidth_rows(dev):
    """HBM rates in TB/s (the last column), for three sizes well beyond the L2."""
    rows = []
    for mib in (256, 1024, 4096):
        n = mib * 2**20 // 2
        x = torch.randn(n, device=dev, dtype=torch.bfloat16)
        y = torch.empty_like(x)
        z = torch.randn(n, device=dev, dtype=torch.bfloat16)
        nbytes = n * 2
        ms = time_ms(lambda: y.copy_(x))
        rows.append(("hbm copy", "BF16", f"{mib}MiB", "", "", ms, 2 * nbytes / ms / 1e9))
        ms = time_ms(lambda: torch.sum(x, dtype=torch.float32))
        rows.append(("hbm read (sum)", "BF16", f"{mib}MiB", "", "", ms, nbytes / ms / 1e9))
        ms = time_ms(lambda: torch.mul(F.silu(x), z, out=y))
        # silu writes a temporary and mul reads it back: 2 reads + 1 write + 1 temp write/read
        rows.append(("hbm swiglu (silu*mul, unfused)", "BF16", f"{mib}MiB", "", "", ms,
                     5 * nbytes / ms / 1e9))
        del x, y, z
    return rows


# (model, hidden size h, expert FFN width f) of the shipped mixture-of-experts models.
MOE_SHAPES = (("deepseek-v3", 7168, 2048), ("qwen3-235b-a22b", 4096, 1536),
              ("qwen3-30b-a3b", 2048, 768), ("gpt-oss-120b", 2880, 2880),
              ("mixtral-8x7b", 4096, 14336))


def column_major(x):
    """The same matrices stored column-major (the layout FP8 GEMMs want for their B operand)."""
    return x.transpose(-2, -1).contiguous().transpose(-2, -1)


def expert_gemm_operands(dev):
    """(model, GEMM, A, B) of every expert GEMM measured: 8 local experts of 256, 1,024 and 4,096
    tokens each, A of G x M x K and B of G x K x N in BF16 (fc1: m x 2f x h, fc2: m x h x f, fc1's
    weight gradient: h x 2f x m)."""
    g = 8
    for model, h, f in MOE_SHAPES:
        for m in (256, 1024, 4096):
            for gemm, (mm, n, k) in (("fc1", (m, 2 * f, h)), ("fc2", (m, h, f)),
                                     ("fc1 wgrad", (h, 2 * f, m))):
                yield (model, gemm, torch.randn(g, mm, k, device=dev, dtype=torch.bfloat16),
                       torch.randn(g, k, n, device=dev, dtype=torch.bfloat16))


def expert_gemm_row(kernel, precision, model, gemm, a, b, fn, graph=False):
    """The row of one way of running the expert GEMM a x b (fn, captured in a CUDA graph first
    when `graph`), or None where it failed."""
    (g, mm, k), n = a.shape, b.shape[2]
    try:
        ms = time_ms(graphed(fn) if graph else fn)
    except Exception as e:  # a kernel this build or GPU lacks
        print(f"# {kernel} {precision} {model} {gemm}: {e}", file=sys.stderr)
        return None
    return (kernel, precision, f"{g}x{mm}x{n}x{k}", model, gemm, ms,
            2.0 * g * mm * n * k / ms / 1e9)


def expert_gemm_rows(dev):
    """Each expert GEMM three ways: one batched GEMM (torch.bmm: how the compute model times them),
    one grouped GEMM (torch._grouped_mm; FP8 torch._scaled_grouped_mm, row-wise scales) and one
    GEMM per expert (a loop of torch.matmul, as Transformer Engine's GroupedLinear issues them)."""
    rows = []
    for model, gemm, a, b in expert_gemm_operands(dev):
        (g, mm, k), n = a.shape, b.shape[2]
        runs = [("expert gemm bmm", "BF16", lambda: torch.bmm(a, b)),
                ("expert gemm loop", "BF16",
                 lambda: [torch.matmul(a[i], b[i]) for i in range(g)])]
        if gemm != "fc1 wgrad":  # grouped over M; a wgrad groups over K
            a2 = a.reshape(g * mm, k)
            offs = torch.arange(1, g + 1, device=dev, dtype=torch.int32) * mm
            runs.append(("expert gemm grouped", "BF16",
                         lambda: torch._grouped_mm(a2, b, offs=offs)))
            a8 = a2.to(torch.float8_e4m3fn)
            b8 = column_major(b.to(torch.float8_e4m3fn))
            sa = torch.ones(g * mm, device=dev, dtype=torch.float32)
            sb = torch.ones(g, n, device=dev, dtype=torch.float32)
            runs.append(("expert gemm grouped", "FP8 e4m3",
                         lambda: torch._scaled_grouped_mm(a8, b8, sa, sb, offs=offs,
                                                          out_dtype=torch.bfloat16)))
        for kernel, precision, fn in runs:
            row = expert_gemm_row(kernel, precision, model, gemm, a, b, fn)
            if row:
                rows.append(row)
    return rows


def graphed(fn):
    """fn captured in a CUDA graph (warmed up on a side stream first): its replay launches every
    kernel with no host work between them, as a graphed training step does."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def expert_gemm_graphed_rows(dev):
    """One GEMM per expert as a CUDA graph replays them: the GPU's own cost of issuing the experts
    one kernel each (BF16 torch.matmul; FP8 torch._scaled_mm with per-tensor scales, cuBLASLt)."""
    rows = []
    one = torch.tensor(1.0, device=dev)
    for model, gemm, a, b in expert_gemm_operands(dev):
        g = a.shape[0]
        a8 = a.to(torch.float8_e4m3fn)
        b8 = column_major(b.to(torch.float8_e4m3fn))
        runs = (("BF16", lambda: [torch.matmul(a[i], b[i]) for i in range(g)]),
                ("FP8 e4m3", lambda: [torch._scaled_mm(a8[i], b8[i], scale_a=one, scale_b=one,
                                                       out_dtype=torch.bfloat16)
                                      for i in range(g)]))
        for precision, fn in runs:
            row = expert_gemm_row("expert gemm loop (CUDA graph)", precision, model, gemm, a, b,
                                  fn, graph=True)
            if row:
                rows.append(row)
    return rows


def decode_attention_rows(dev):
    """One decode step's attention: 32 query heads over 8 KV heads of dimension 128 (Llama 3 8B),
    b sequences of L cached tokens; PyTorch's default backend for the shape."""
    rows = []
    for b in (1, 16, 64, 256):
        for kv in (1024, 4096, 16384):
            if b * kv > 1 << 20:
                continue
            try:
                q = torch.randn(b, 32, 1, 128, device=dev, dtype=torch.bfloat16)
                k = torch.randn(b, 8, kv, 128, device=dev, dtype=torch.bfloat16)
                v = torch.randn_like(k)
                ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
            except Exception as e:
                print(f"# decode b{b} kv{kv}: {e}", file=sys.stderr)
                continue
            kv_bytes = 2 * k.numel() * 2
            rows.append(("decode attention (SDPA)", "BF16", f"b{b}_kv{kv}_q32_kvh8_hd128", "",
                         "fwd", ms, kv_bytes / ms / 1e9))
            del q, k, v
    return rows


def token_permute_rows(dev):
    """The memory-bound kernels around the experts, T tokens of width h routed to top-k experts:
    the dispatch permutation (a row gather), the combine (weighted rows added back by index) and
    an RMSNorm; rates are bytes read plus written over the time (TB/s)."""
    rows = []
    t, topk = 16384, 8
    for h in (2048, 7168):
        x = torch.randn(t, h, device=dev, dtype=torch.bfloat16)
        gen = torch.Generator(device=dev).manual_seed(0)
        index = torch.randint(0, t, (t * topk,), device=dev, generator=gen)
        routed = torch.randn(t * topk, h, device=dev, dtype=torch.bfloat16)
        probs = torch.rand(t * topk, 1, device=dev, dtype=torch.bfloat16)
        out = torch.zeros(t, h, device=dev, dtype=torch.bfloat16)
        weight = torch.ones(h, device=dev, dtype=torch.bfloat16)
        shape = f"{t}x{h}_top{topk}"
        routed_bytes = t * topk * h * 2
        ms = time_ms(lambda: x.index_select(0, index))
        rows.append(("token permute (gather)", "BF16", shape, "", "", ms, 2 * routed_bytes / ms / 1e9))
        ms = time_ms(lambda: out.index_add_(0, index, routed * probs))
        # routed*probs reads and writes the routed rows; index_add reads them and updates out
        rows.append(("token unpermute (weighted index_add)", "BF16", shape, "", "", ms,
                     (3 * routed_bytes + 2 * t * h * 2) / ms / 1e9))
        ms = time_ms(lambda: F.rms_norm(x, (h,), weight))
        rows.append(("rmsnorm", "BF16", shape, "", "", ms, 2 * t * h * 2 / ms / 1e9))
        del x, routed, out
    return rows


# C CTAs of 512 threads that hold their SMs for `cycles` clocks, as NCCL's collective kernels hold
# theirs for a collective's length: spinning only, or streaming a buffer through HBM meanwhile.
OCCUPY_SOURCE = r"""
extern "C" __global__ void occupy(const float4* src, float4* dst, long long n, long long cycles,
                                  int copy) {
  const long long start = clock64();
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long stride = (long long)gridDim.x * blockDim.x;
  while (clock64() - start < cycles) {
    if (copy) {
      for (long long j = first; j < n; j += stride) dst[j] = src[j];
    }
  }
}
"""


def sm_contention_rows(dev):
    """GEMMs while C CTAs (one SM each) are resident beside them: the share of SMs an overlapped
    collective takes from the compute (sim/parallel/collective_sm_contention.h predicts a time of
    S / (S - C) of the GEMM's alone). Rate = the GEMMs' TFLOP/s; mask = what the CTAs do;
    pass = C. The CTAs start first and outlast the GEMMs (checked: a row is dropped otherwise)."""
    import cupy
    import pynvml
    pynvml.nvmlInit()
    nvml = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    occupy = cupy.RawKernel(OCCUPY_SOURCE, "occupy")
    n = 256 * 2**20 // 16  # float4 elements of a 256 MiB buffer
    src = torch.randn(n * 4, device=dev, dtype=torch.float32)
    dst = torch.empty_like(src)
    side = torch.cuda.Stream()
    main = torch.cuda.current_stream()
    rows = []
    for m, nn, k in ((8192, 8192, 8192), (8192, 28672, 8192), (8192, 4096, 4096)):
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(k, nn, device=dev, dtype=torch.bfloat16)
        reps = max(1, int(4e13 // (2 * m * nn * k)))  # about 50 ms of GEMMs
        gemms = lambda: [torch.matmul(a, b) for _ in range(reps)]
        for _ in range(3):
            gemms()
        torch.cuda.synchronize()

        def batch(ctas, mode):
            """(ms per GEMM, SM clock in MHz read halfway) of one batch with `ctas` CTAs
            resident (0: alone); None if they left before the GEMMs ended."""
            torch.cuda.synchronize()
            held, freed, start, end = (torch.cuda.Event(enable_timing=True) for _ in range(4))
            if ctas:
                with torch.cuda.stream(side):
                    held.record(side)
                    with cupy.cuda.ExternalStream(side.cuda_stream):
                        occupy((ctas,), (512,),
                               (cupy.asarray(src), cupy.asarray(dst), cupy.int64(n),
                                cupy.int64(int(2.0e9 * 0.15)), cupy.int32(mode == "copy")))
                    freed.record(side)
                time.sleep(0.002)  # let the CTAs become resident first
            start.record(main)
            gemms()
            end.record(main)
            time.sleep(0.025)
            mhz = pynvml.nvmlDeviceGetClockInfo(nvml, pynvml.NVML_CLOCK_SM)
            torch.cuda.synchronize()
            if ctas and held.elapsed_time(freed) < held.elapsed_time(end):
                return None
            return start.elapsed_time(end) / reps, mhz

        # Each configuration against the GEMMs alone next to it, in alternating order (clocks
        # follow power, which the SMs taken lower): medians of 6 pairs.
        for mode in ("spin", "copy"):
            for ctas in (8, 16, 32, 64):
                pairs = []
                for i in range(6):
                    alone, beside = ((batch(0, mode), batch(ctas, mode)) if i % 2 == 0 else
                                     reversed((batch(ctas, mode), batch(0, mode))))
                    if beside is not None:
                        pairs.append((alone, beside))
                if not pairs:
                    print(f"# sm_contention {mode} {ctas}: CTAs left before the GEMMs ended",
                          file=sys.stderr)
                    continue
                for label, results in (("none", [p[0] for p in pairs]),
                                       (mode, [p[1] for p in pairs])):
                    ms = sorted(r[0] for r in results)[len(results) // 2]
                    mhz = sorted(r[1] for r in results)[len(results) // 2]
                    rows.append(("gemm beside resident CTAs", "BF16", f"{m}x{nn}x{k}", label,
                                 f"{ctas} @{mhz}MHz", ms, 2.0 * m * nn * k / ms / 1e9))
        del a, b
    return rows


# The layers the TP-overlap rows cut up: (label, tensor parallel, tokens a GPU per micro-batch
# (sequence / context parallel x micro-batch), hidden, QKV width, FFN width). Llama 3.1 405B at
# TP 8 x CP 2 and Llama 3 70B at TP 4, sequence 8192, micro-batch 1: the Megatron-Bridge H100
# FP8 layouts (scenarios/validation/bridge-dgx-h100-fp8-*-llama3-405b-1024 and -70b-64).
TP_LAYERS = (("llama3.1-405b tp8 cp2", 8, 4096, 16384, 18432, 53248),
             ("llama3-70b tp4", 4, 8192, 8192, 10240, 28672))


def tp_chunk_rows(dev):
    """The GEMMs that Transformer Engine's userbuffers overlap with tensor-parallel collectives,
    cut as it cuts them: an all-gather's (or reduce-scatter's) GEMM split into TP chunks of
    1/TP of the rows each, one chunk's GEMM per ring step. Three timings of the same FLOPs: the
    GEMM whole, its chunks one after another on one stream, and its chunks issued round-robin
    on three streams (TE's CommOverlapP2PBase runs chunk i on compute stream i % 3,
    NVTE_COMM_OVERLAP_MAX_STREAMS 3). No communication runs: this isolates what cutting costs.
    Shape = the whole GEMM MxNxK; mask = the layer; pass = "whole" or "chunksC streamsS"."""
    streams = [torch.cuda.Stream() for _ in range(3)]
    rows = []
    one = torch.tensor(1.0, device=dev)
    for label, tp, m, h, qkv, ffn in TP_LAYERS:
        # forward: QKV and FC1 after an all-gather, proj and FC2 before a reduce-scatter;
        # backward data gradients: QKV's and FC1's before a reduce-scatter, proj's and FC2's
        # after an all-gather
        shapes = [(m, qkv // tp, h), (m, 2 * ffn // tp, h), (m, h, h // tp), (m, h, ffn // tp),
                  (m, h, qkv // tp), (m, h, 2 * ffn // tp), (m, h // tp, h), (m, ffn // tp, h)]
        for mm, n, k in shapes:
            for precision in ("BF16", "FP8 e4m3"):
                a = torch.randn(mm, k, device=dev, dtype=torch.bfloat16)
                b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
                if precision == "BF16":
                    gemm = torch.matmul
                else:
                    a = a.to(torch.float8_e4m3fn)
                    b = b.t().contiguous().to(torch.float8_e4m3fn).t()
                    gemm = lambda x, y: torch._scaled_mm(x, y, scale_a=one, scale_b=one,
                                                         out_dtype=torch.bfloat16)
                chunks = list(a.chunk(tp, dim=0))

                def on_streams(count):
                    current = torch.cuda.current_stream()
                    used = streams[:count]
                    for s in used:
                        s.wait_stream(current)
                    for i, c in enumerate(chunks):
                        with torch.cuda.stream(used[i % count]):
                            gemm(c, b)
                    for s in used:
                        current.wait_stream(s)

                flops = 2.0 * mm * n * k
                variants = (("whole", lambda: gemm(a, b)),
                            (f"chunks{tp} streams1", lambda: [gemm(c, b) for c in chunks]),
                            (f"chunks{tp} streams3", lambda: on_streams(3)))
                # The three in turn, five rounds, the median of each: clocks drift between them.
                times = [[time_ms(fn) for _, fn in variants] for _ in range(5)]
                for i, (pass_, _) in enumerate(variants):
                    ms = sorted(t[i] for t in times)[2]
                    rows.append(("gemm tp chunks", precision, f"{mm}x{n}x{k}", label, pass_, ms,
                                 flops / ms / 1e9))
                del a, b, chunks
    return rows


def attention_step_rows(dev, q_len, k_len, heads, causal, library="cuDNN", d=128):
    """The forward and backward rows of one fused attention call (cuDNN's, or FlashAttention-2's,
    through PyTorch SDPA) of `heads` heads of one sequence, `q_len` queries over `k_len` keys,
    each pass replayed from a CUDA graph: a call of a few tens of microseconds is otherwise timed
    at the host's dispatch rate, not the GPU's. Shape = qQ_kK_hH, with _hdD where D is not 128;
    FLOPs 4 x pairs x heads x d (causal: bottom-right aligned, AttentionKernel::pairs);
    backward 2.5x. No rows (and a note on stderr) where the backend refuses the call."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {"cuDNN": SDPBackend.CUDNN_ATTENTION,
               "FlashAttention-2": SDPBackend.FLASH_ATTENTION}[library]
    q = torch.randn(1, heads, q_len, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(1, heads, k_len, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
            for _ in range(2))
    g = torch.randn(1, heads, q_len, d, device=dev, dtype=torch.bfloat16)
    pairs = (q_len * (k_len - q_len + 1) + q_len * (q_len - 1) / 2) if causal else q_len * k_len
    flops_f = 4.0 * heads * pairs * d
    try:
        with sdpa_kernel([backend]):
            fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)

            def both():
                F.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(g)
            ms_f, ms_fb = time_ms(graphed(fwd)), time_ms(graphed(both))
    except Exception as e:
        print(f"# attention {library} q{q_len} k{k_len} h{heads} d{d}: {e}", file=sys.stderr)
        return []
    shape = f"q{q_len}_k{k_len}_h{heads}" + ("" if d == 128 else f"_hd{d}")
    mask = "causal" if causal else "full"
    kernel = f"attention steps {library}"
    return [(kernel, "BF16", shape, mask, "fwd", ms_f, flops_f / ms_f / 1e9),
            (kernel, "BF16", shape, mask, "bwd", ms_fb - ms_f,
             2.5 * flops_f / (ms_fb - ms_f) / 1e9)]


def cp_attention_rows(dev):
    """The attention steps of Megatron-Core's load-balanced causal context parallelism at CP 2
    (each GPU holds chunks c and 3 - c of four): its own two chunks under the causal mask, and the
    peer's step, full, at half the queries or half the keys; and CP 1's whole causal sequence.
    cuDNN, heads a GPU as TP_LAYERS leave them, head dimension 128, keys and values expanded to
    the query heads (attention_step_rows)."""
    steps = ((4096, 4096, 16, True), (4096, 2048, 16, False), (2048, 4096, 16, False),
             (8192, 8192, 16, True))
    return [row for q_len, k_len, heads, causal in steps
            for row in attention_step_rows(dev, q_len, k_len, heads, causal)]


def attention_heads_rows(dev, library="cuDNN", d=128):
    """Fused attention of one sequence by its number of heads (attention_step_rows): cuDNN (or
    FlashAttention-2), head dimension `d`, 4-128 heads, 2k-16k tokens, both masks. The
    FlashAttention benchmark the catalog's curves are fitted on holds 16k tokens a batch at width
    2048 (64 batch-heads of 128 at 4k tokens); a tensor- or context-parallel GPU sees one
    sequence and few heads."""
    return [row for s in (2048, 4096, 8192, 16384) for heads in (4, 8, 16, 32, 64, 128)
            for causal in (True, False)
            for row in attention_step_rows(dev, s, s, heads, causal, library, d)]


def probe_row(dev, part):
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    ms = time_ms(lambda: torch.matmul(a, b))
    return ("gemm probe", "BF16", "8192x8192x8192", "", f"before {part}", ms,
            2.0 * 8192**3 / ms / 1e9)


PARTS = {"gemm": gemm_rows, "attention": attention_rows, "bandwidth": bandwidth_rows,
         "expert_gemm": expert_gemm_rows, "expert_gemm_graphed": expert_gemm_graphed_rows,
         "sm_contention": sm_contention_rows, "decode_attention": decode_attention_rows,
         "token_permute": token_permute_rows, "tp_chunks": tp_chunk_rows,
         "cp_attention": cp_attention_rows, "attention_heads": attention_heads_rows,
         "attention_heads_fa2": lambda dev: attention_heads_rows(dev, "FlashAttention-2"),
         "attention_heads_hd64": lambda dev: attention_heads_rows(dev, d=64)}


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    names = sys.argv[2:] or list(PARTS)
    unknown = [n for n in names if n not in PARTS]
    if unknown:
        sys.exit(f"unknown part(s) {unknown}; parts: {' '.join(PARTS)}")
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    header = (f"# {props.name}, {props.multi_processor_count} SMs, "
              f"{props.total_memory / 2**30:.1f} GiB; torch {torch.__version__}, "
              f"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")
    print(header, flush=True)
    rows = []
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        t = time.time()
        part_rows = [probe_row(dev, name)] + PARTS[name](dev)
        for r in part_rows:
            print(",".join(str(x) for x in r[:5]), f"{r[5]:.4f}", f"{r[6]:.3f}", sep=",")
        rows += part_rows
        write_csv(os.path.join(out_dir, "gpu_kernels.csv"), header, rows)  # kept if stopped
        print(f"# {name}: {time.time() - t:.1f} s", flush=True)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        f.write(header + "\n")
        w = csv.writer(f)
        w.writerow(["kernel", "precision", "shape", "mask", "pass", "ms", "tflops_or_TBps"])
        for r in rows:
            w.writerow(list(r[:5]) + [f"{r[5]:.4f}", f"{r[6]:.3f}"])


if __name__ == "__main__":
    main()
