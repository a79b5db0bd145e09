#!/usr/bin/env python3
"""Fits a GPU's fused-attention rates (gpu.proto AttentionEfficiency) on kernel benchmarks.

Usage: tools/fit_attention_kernels.py REFERENCE_DATA_VALIDATION_DIR
       [--kernel cuDNN|FlashAttention-2] [--fp8]
       [--peak TFLOPS]

Reads kernels.csv's FlashAttention-3 paper figures (arXiv:2407.08608, H100 SXM5, 16-bit, sequence
512 to 16k, FLOPs as FlashAttention counts them: causal halves the forward's, backward 2.5x it)
and fits, per pass, mask and head dimension of `--kernel` (cuDNN: the GPU's default fused
kernels; FlashAttention-2: catalog lines with library FLASH_ATTENTION_2),
    rate(s) = peak x max_fraction x s / (s + half_rate_keys)
minimising the squared relative error (for each half_rate_keys the best max_fraction is closed
form; half_rate_keys by golden-section search). The transcription does not name the mask: the
forward charts come in two variants, the lower one at short sequences (B) being the causal panel
(a causal kernel wastes part of its diagonal tiles, which weighs most at short sequences); the
single backward series is the paper's backward figure, without mask. The causal backward is not
measured: it is fitted on the non-causal backward scaled by the forward's causal/non-causal ratio
at each length. Prints the catalog lines and each point's error.

--fp8 fits the FP8 figure's series instead (FP8 inputs, forward only, rates against the FP8 peak,
1979 unless --peak; catalog lines with precision: FP8). Only its head-dimension-256 forward comes
in two variants; the one series at 64 and at 128 names no mask and is the only FP8 curve at its
head dimension, so it is taken for both masks there.
"""
import argparse
import csv
import os
import re
import sys

# The catalog's AttentionEfficiency library of each benchmarked kernel (None: the default).
LIBRARIES = {'cuDNN': None, 'FlashAttention-2': 'FLASH_ATTENTION_2'}


def series(path, kernel, fp8):
    """{(pass, causal, head_dim): [(seq, tflops)]} of H100 rows of `kernel`, 16-bit or FP8."""
    out = {}
    for r in csv.DictReader(open(os.path.join(path, 'kernels.csv'))):
        if (r['kernel'] != kernel or 'H100' not in r['gpu'] or
                r['precision'].startswith('FP8') != fp8):
            continue
        shape = re.search(r'seqlen=(\d+)(k?); headdim=(\d+)', r['shape_seq_headdim'])
        if not shape or r['direction'] not in ('forward', 'backward'):
            continue
        seq = int(shape.group(1)) * (1024 if shape.group(2) else 1)
        head_dim = int(shape.group(3))
        masks = ('(variant B' in r['causal'],)
        if r['direction'] == 'forward' and 'variant' not in r['causal']:
            if not fp8:
                continue  # a forward series without its pair: the mask cannot be told
            masks = (False, True)  # the only FP8 curve at its head dimension
        for causal in masks:
            key = (r['direction'].upper(), causal, head_dim)
            out.setdefault(key, []).append((seq, float(r['tflops'])))
    return out


def best_fraction(points, peak, half):
    g = [peak * s / (s + half) / m for s, m in points]
    return sum(g) / sum(x * x for x in g)


def loss(points, peak, half):
    f = best_fraction(points, peak, half)
    return sum((f * peak * s / (s + half) / m - 1) ** 2 for s, m in points)


def fit(points, peak):
    lo, hi = 0.0, 8192.0
    ratio = (5 ** 0.5 - 1) / 2
    while hi - lo > 0.5:
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if loss(points, peak, a) < loss(points, peak, b):
            hi = b
        else:
            lo = a
    half = round((lo + hi) / 2)
    return round(best_fraction(points, peak, half), 3), half


def rate(peak, fit_, s):
    return peak * fit_[0] * s / (s + fit_[1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('data')
    parser.add_argument('--kernel', default='cuDNN', choices=sorted(LIBRARIES))
    parser.add_argument('--fp8', action='store_true')
    parser.add_argument('--peak', type=float)
    args = parser.parse_args()
    if args.fp8 and LIBRARIES[args.kernel]:
        sys.exit(f'{args.kernel} has no FP8 kernel')
    peak = args.peak or (1979.0 if args.fp8 else 989.0)  # H100 SXM5 dense (gpus.textproto)
    data = series(args.data, args.kernel, args.fp8)
    fits = {key: fit(points, peak) for key, points in data.items()}
    for (p, causal, d), points in sorted(data.items()):
        if p != 'BACKWARD' or causal or ('FORWARD', True, d) not in fits:
            continue
        ratio = [rate(peak, fits[('FORWARD', True, d)], s) /
                 rate(peak, fits[('FORWARD', False, d)], s) for s, _ in points]
        derived = [(s, m * r) for (s, m), r in zip(points, ratio)]
        fits[('BACKWARD', True, d)] = fit(derived, peak)
        data[('BACKWARD', True, d)] = derived
    for key in sorted(fits):
        p, causal, d = key
        f, half = fits[key]
        errs = ', '.join(f'{s}: {100 * (rate(peak, fits[key], s) / m - 1):+.1f}%'
                         for s, m in data[key])
        precision = ' precision: FP8' if args.fp8 else ''
        library = f' library: {LIBRARIES[args.kernel]}' if LIBRARIES[args.kernel] else ''
        print(f'  attention_efficiency {{ pass: {p} causal: {str(causal).lower()} head_dim: {d} '
              f'max_fraction: {f} half_rate_keys: {half}{precision}{library} }}  # {errs}')


if __name__ == '__main__':
    sys.exit(main())
