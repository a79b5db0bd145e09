#!/usr/bin/env python3
"""Fits the serving runtime's per-GPU efficiencies on the serving calibration scenarios.

Usage: tools/fit_serving.py [--clustersim build/release/clustersim] [GPU ...]

For each GPU (default: every GPU fitted in topologies/serving.textproto), searches its
compute_fraction, memory_fraction and layer_overhead_us for the least mean of the three mean
absolute errors `clustersim validate scenarios/validation/serving/*.textproto` reports for it
(throughput, TTFT, time per output token; the table "TensorRT-LLM 0.9.0", so not the Mixtral
rows), by coordinate descent in relative steps of 10%, 3% and 1%, each trial a catalog directory
whose serving runtime replaces the shipped one. Prints the fitted `gpu { ... }` lines.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
RUNTIME = os.path.join(ROOT, 'topologies', 'serving.textproto')
FIT = re.compile(r'gpu \{ gpu: "([^"]+)" compute_fraction: ([\d.]+) memory_fraction: ([\d.]+) '
                 r'layer_overhead_us: ([\d.]+) \}')
LINE = re.compile(r'^TensorRT-LLM 0\.9\.0 \((\S+)\): mean absolute error throughput ([\d.]+)%.*'
                  r'TTFT ([\d.]+)%.*TPOT ([\d.]+)%', re.M)


def runtime_text(fits):
    text = open(RUNTIME).read()
    return FIT.sub(lambda m: 'gpu { gpu: "%s" compute_fraction: %.4f memory_fraction: %.4f '
                   'layer_overhead_us: %.2f }' % ((m.group(1),) + tuple(fits[m.group(1)])), text)


def scenarios_of(gpu, instances):
    files = []
    for path in sorted(glob.glob(os.path.join(ROOT, 'scenarios/validation/serving/*.textproto'))):
        text = open(path).read()
        if 'mixtral' in path:
            continue
        if any('instance: "%s"' % i in text for i in instances):
            files.append(path)
    return files


def error(clustersim, fits, gpu, files):
    with tempfile.TemporaryDirectory() as catalog:
        with open(os.path.join(catalog, 'serving.textproto'), 'w') as f:
            f.write(runtime_text(fits))
        out = subprocess.run([clustersim, 'validate', '--root', ROOT, '--catalog', catalog] + files,
                             capture_output=True, text=True).stdout
    for m in LINE.finditer(out):
        if m.group(1) == gpu:
            return sum(float(x) for x in m.groups()[1:]) / 3
    sys.exit('no result for %s:\n%s' % (gpu, out))


def instances_of(gpu):
    names = []
    for path in glob.glob(os.path.join(ROOT, 'topologies', 'instances_*.textproto')):
        for m in re.finditer(r'name: "([^"]+)"\n(?:.*\n){0,3}?  gpu: "%s"' % re.escape(gpu),
                             open(path).read()):
            names.append(m.group(1))
    return names


def fit(clustersim, fits, gpu):
    files = scenarios_of(gpu, instances_of(gpu))
    best = error(clustersim, fits, gpu, files)
    for step in (0.10, 0.03, 0.01):
        improved = True
        while improved:
            improved = False
            for k in range(3):
                for sign in (1, -1):
                    trial = list(fits[gpu])
                    trial[k] *= 1 + sign * step
                    if k < 2:
                        trial[k] = min(trial[k], 1.0)
                    candidate = dict(fits, **{gpu: trial})
                    e = error(clustersim, candidate, gpu, files)
                    if e < best - 1e-3:
                        best, fits = e, candidate
                        improved = True
    print('# %s: mean of the three errors %.2f%%' % (gpu, best), file=sys.stderr)
    return fits


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--clustersim', default=os.path.join(ROOT, 'build/release/clustersim'))
    parser.add_argument('gpus', nargs='*')
    args = parser.parse_args()
    fits = {m.group(1): [float(m.group(2)), float(m.group(3)), float(m.group(4))]
            for m in FIT.finditer(open(RUNTIME).read())}
    for gpu in args.gpus or list(fits):
        fits = fit(args.clustersim, fits, gpu)
        c, mem, layer = fits[gpu]
        print('  gpu { gpu: "%s" compute_fraction: %.3f memory_fraction: %.3f '
              'layer_overhead_us: %.1f }' % (gpu, c, mem, layer), flush=True)


if __name__ == '__main__':
    main()
