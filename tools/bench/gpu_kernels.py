#!/usr/bin/env python3
"""Measures on one NVIDIA GPU what clustersim's compute model predicts: dense GEMM TFLOP/s by shape
(BF16, and FP8 e4m3 where the GPU has it), fused-attention TFLOP/s by sequence, head dimension,
mask and pass for PyTorch's cuDNN and FlashAttention-2 backends, and HBM bandwidth (copy, read,
an elementwise SwiGLU). Needs PyTorch with CUDA; prints CSV rows and writes them to OUT_DIR.

Conventions, so the rows compare with the published kernel tables the compute model is fitted on:
- GEMM: 2*M*N*K FLOPs; A is M x K, B is K x N; mean of the timed runs after warm-ups.
- Attention: FlashAttention's benchmark (Dao 2023): 16,384 tokens a batch, model width 2048
  (heads = 2048 / head_dim), forward FLOPs 4*b*h*s*s*d, halved under the causal mask, backward
  2.5x the forward; the backward time is (forward+backward) - forward.
- Bandwidth: bytes read plus bytes written over the time.

Usage: python3 tools/bench/gpu_kernels.py OUT_DIR
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


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    header = (f"# {props.name}, {props.multi_processor_count} SMs, "
              f"{props.total_memory / 2**30:.1f} GiB; torch {torch.__version__}, "
              f"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")
    print(header, flush=True)
    rows = []
    for part in (gemm_rows, attention_rows, bandwidth_rows):
        t = time.time()
        rows += part(dev)
        print(f"# {part.__name__}: {time.time() - t:.1f} s", flush=True)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "gpu_kernels.csv"), "w", newline="") as f:
        f.write(header + "\n")
        w = csv.writer(f)
        w.writerow(["kernel", "precision", "shape", "mask", "pass", "ms", "tflops_or_TBps"])
        for r in rows:
            w.writerow(list(r[:5]) + [f"{r[5]:.4f}", f"{r[6]:.3f}"])
    for r in rows:
        print(",".join(str(x) for x in r[:5]), f"{r[5]:.4f}", f"{r[6]:.3f}", sep=",")


if __name__ == "__main__":
    main()
