#!/usr/bin/env python3
"""Fits a GPU's GEMM efficiency (gpu.proto MatmulEfficiency max_fraction, overhead_us) on the
calibration file validation/gemm.csv (Azure's cuBLASLt GEMMs by shape).

Usage: tools/fit_gemm_efficiency.py REFERENCE_DATA_VALIDATION_DIR GPU_LABEL DTYPE PEAK_TFLOPS
       HBM_GB_PER_S MEMORY_EFFICIENCY [--serial-output-write]

GPU_LABEL: the start of gemm.csv's gpu column (e.g. "H100 80GB"); DTYPE its dtype (fp16, fp8).
The GPU's catalog peak, HBM bandwidth and memory_efficiency_fraction are given on the command line.
The model is sim/hw/compute_model.h's isolated matmul:
    time = max(F / (peak x max x tile use) + write, bytes / (HBM x memory eff)) + overhead,
with tile use over 128-wide tiles, a 16-bit output and write = output bytes / (HBM x memory eff)
under --serial-output-write (MatmulEfficiency.serial_output_write), else 0. Minimises the mean
squared relative error of time: overhead on a 0.01 us grid and, for each, max_fraction by
golden-section search (the max() leaves no closed form). Prints the fit and each row's error.
"""
import argparse
import csv
import math
import os

TILE = 128


def tile_use(size):
    return size / (math.ceil(size / TILE) * TILE)


def predict(row, args, fraction, overhead_us):
    m, n, k = row
    input_bytes = 1 if args.dtype.startswith('fp8') else 2
    flops = 2.0 * m * n * k
    rate = args.hbm * 1e9 * args.memory_efficiency
    output = 2.0 * m * n
    write = output / rate if args.serial_output_write else 0
    compute = flops / (args.peak * 1e12 * fraction * tile_use(m) * tile_use(n)) + write
    memory = (input_bytes * (m * k + k * n) + output) / rate
    return max(compute, memory) + overhead_us * 1e-6


def rms(rows, args, fraction, overhead_us):
    errors = [predict(r[:3], args, fraction, overhead_us) / r[3] - 1 for r in rows]
    return math.sqrt(sum(e * e for e in errors) / len(errors))


def best_fraction(rows, args, overhead_us):
    lo, hi = 0.3, 1.0
    golden = (math.sqrt(5) - 1) / 2
    for _ in range(80):
        a, b = hi - golden * (hi - lo), lo + golden * (hi - lo)
        if rms(rows, args, a, overhead_us) < rms(rows, args, b, overhead_us):
            hi = b
        else:
            lo = a
    return (lo + hi) / 2


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('data_dir')
    parser.add_argument('gpu_label')
    parser.add_argument('dtype')
    parser.add_argument('peak', type=float)
    parser.add_argument('hbm', type=float)
    parser.add_argument('memory_efficiency', type=float)
    parser.add_argument('--serial-output-write', action='store_true')
    args = parser.parse_args()
    rows = []
    with open(os.path.join(args.data_dir, 'gemm.csv'), newline='') as f:
        for r in csv.DictReader(f):
            if (r['gpu'].startswith(args.gpu_label) and 'cuBLASLt' in r['kernel'] and
                    r['dtype'] == args.dtype):
                m, n, k = int(r['m']), int(r['n']), int(r['k'])
                rows.append((m, n, k, 2.0 * m * n * k / (float(r['achieved_tflops']) * 1e12)))
    if not rows:
        raise SystemExit(f'no cuBLASLt {args.dtype} row of {args.gpu_label!r} in gemm.csv')
    fits = []
    for step in range(0, 2001):
        overhead_us = step / 100
        fraction = best_fraction(rows, args, overhead_us)
        fits.append((rms(rows, args, fraction, overhead_us), fraction, overhead_us))
    error, fraction, overhead_us = min(fits)
    print(f'max_fraction: {fraction:.3f} overhead_us: {overhead_us:.1f}'
          f'  # RMS relative time error {100 * error:.1f}% over {len(rows)} shapes')
    for m, n, k, measured in rows:
        predicted = predict((m, n, k), args, fraction, overhead_us)
        print(f'  {m}x{n}x{k}: measured {2e-12 * m * n * k / measured:.1f} TFLOP/s, '
              f'predicted {2e-12 * m * n * k / predicted:.1f} ({predicted / measured - 1:+.1%})')


if __name__ == '__main__':
    main()
