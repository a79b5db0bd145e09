#!/usr/bin/env python3
"""Fits the serving runtime's per-GPU efficiencies on the serving calibration scenarios.

Usage: tools/fit_serving.py [--clustersim build/release/clustersim] [--memory | --shared |
       --experts] [GPU ...]

For each GPU (default: every GPU fitted in topologies/serving.textproto), searches its
compute_fraction, memory_fraction, layer_overhead_us, fp8_matmul_fraction and
fp8_kv_reread_fraction where it has them, and kv_reread_fraction (which only the runs of the
grouped-query models without the grouped kernel, Mistral 7B and Falcon 180B, depend on; an FP8
cache's runs on fp8_kv_reread_fraction where the GPU has one) for the least mean of the three mean
absolute errors `clustersim validate scenarios/validation/serving/*.textproto` reports for it
(throughput, TTFT, time per output token; the table "TensorRT-LLM 0.9.0", so not the Mixtral
rows), by coordinate descent in relative steps of 10%, 3% and 1%, each trial a catalog directory
whose serving runtime (and pcie link class) replaces the shipped one. With --memory, fits instead
its memory_overhead_gib and tensor_parallel_memory_gib: least squares of the published peak memory
minus the predicted one without them, against 1 and TP - 1, over its rows. Prints the fitted
`gpu { ... }` lines.

With --shared, fits instead the constants every GPU shares, on the rows they act on (every
scenario with tensor parallelism, all GPUs together: the mean of the three errors of the
"all GPUs" line): the runtime's allreduce_overhead_us, the efficiency_fraction of the pcie link
class and the efficiency_fraction and step_latency_us of the socket class
(topologies/links.textproto; only the PCIe GPUs' runs cross PCIe links, and only their TP-8 runs
the sockets, so these are fitted on those). The pcie class's step latencies are NCCL's.
Prints the fitted values.

With --experts, fits instead each GPU's expert_matmul_fraction (the runtime's mixture-of-experts
grouped GEMMs' rate against its dense matmuls', at most 1) and expert_layer_overhead_us (its
routing kernels' time per expert layer; descent from 10 us where unset) on its Mixtral runs, the
only mixture-of-experts rows: the least mean of the three errors of its "TensorRT-LLM 0.9.0
Mixtral (fake weights)" line, by the same descent; where the GPU's dense runs all keep an FP8 KV
cache (it has an fp8_kv_reread_fraction and no FP16 or BF16 scenario), also its kv_reread_fraction,
which of its runs only the Mixtral ones (a 16-bit cache) depend on. Its other constants stay as
they are.

Only the `gpu { ... }` fits are written: the default fits of the GPUs without one are the means of
these per form factor, which the catalog computes at load (sim/serve/serving_default_fit.h).
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
LINKS = os.path.join(ROOT, 'topologies', 'links.textproto')
# Key of [allreduce_overhead_us, then efficiency_fraction and step_latency_us of each of CLASSES].
SHARED = '(shared)'
CLASSES = ('pcie', 'socket')
OVERHEAD = re.compile(r'allreduce_overhead_us: ([\d.]+)')


def link_class_pattern(name):
    return re.compile(r'link_class \{\n  name: "%s"\n  efficiency_fraction: ([\d.]+)\n'
                      r'  step_latency_us: ([\d.]+)\n(?:.*\n)*?\}\n' % name)
FIT = re.compile(r'gpu \{ gpu: "([^"]+)" compute_fraction: ([\d.]+) memory_fraction: ([\d.]+) '
                 r'layer_overhead_us: ([\d.]+)(?: memory_overhead_gib: ([\d.]+) '
                 r'tensor_parallel_memory_gib: ([\d.]+))?(?: kv_reread_fraction: ([\d.]+))?'
                 r'(?: fp8_kv_reread_fraction: ([\d.]+))?(?: fp8_matmul_fraction: ([\d.]+))?'
                 r'(?: expert_matmul_fraction: ([\d.]+))?'
                 r'(?: expert_layer_overhead_us: ([\d.]+))? \}')
LINE = re.compile(r'^TensorRT-LLM 0\.9\.0 \(([^)]+)\): mean absolute error throughput ([\d.]+)%.*'
                  r'TTFT ([\d.]+)%.*TPOT ([\d.]+)%', re.M)
MIXTRAL_LINE = re.compile(r'^TensorRT-LLM 0\.9\.0 Mixtral \(fake weights\) \(([^)]+)\): mean absolute '
                          r'error throughput ([\d.]+)%.*TTFT ([\d.]+)%.*TPOT ([\d.]+)%', re.M)


def fit_line(gpu, values):
    line = 'gpu { gpu: "%s" compute_fraction: %.3f memory_fraction: %.3f layer_overhead_us: %.1f' % (
        (gpu,) + tuple(values[:3]))
    if values[3] is not None:
        line += ' memory_overhead_gib: %.2f tensor_parallel_memory_gib: %.2f' % tuple(values[3:5])
    if values[5] != 1:
        line += ' kv_reread_fraction: %.3f' % values[5]
    if values[9] is not None:
        line += ' fp8_kv_reread_fraction: %.3f' % values[9]
    if values[6] is not None:
        line += ' fp8_matmul_fraction: %.3f' % values[6]
    if values[7] is not None:
        line += ' expert_matmul_fraction: %.3f' % values[7]
    if values[8] is not None:
        line += ' expert_layer_overhead_us: %.1f' % values[8]
    return line + ' }'


def runtime_text(fits):
    text = FIT.sub(lambda m: fit_line(m.group(1), fits[m.group(1)]), open(RUNTIME).read())
    return OVERHEAD.sub('allreduce_overhead_us: %.2f' % fits[SHARED][0], text, count=1)


def links_text(fits):
    """The shipped link classes of CLASSES with the trial efficiencies and step latencies."""
    text = ''
    for i, name in enumerate(CLASSES):
        block = link_class_pattern(name).search(open(LINKS).read()).group(0)
        block = re.sub(r'efficiency_fraction: [\d.]+',
                       'efficiency_fraction: %.3f' % fits[SHARED][1 + 2 * i], block, count=1)
        text += re.sub(r'step_latency_us: [\d.]+',
                       'step_latency_us: %.2f' % fits[SHARED][2 + 2 * i], block, count=1)
    return text


def shared_constants():
    values = [float(OVERHEAD.search(open(RUNTIME).read()).group(1))]
    for name in CLASSES:
        values += [float(x) for x in link_class_pattern(name).search(open(LINKS).read()).groups()]
    return values


def scenarios_of(gpu, instances, mixtral=False):
    """The non-Mixtral scenarios on `instances` (None: all); `mixtral`: the Mixtral ones."""
    files = []
    for path in sorted(glob.glob(os.path.join(ROOT, 'scenarios/validation/serving/*.textproto'))):
        text = open(path).read()
        if ('mixtral' in path) != mixtral:
            continue
        if instances is None or any('instance: "%s"' % i in text for i in instances):
            files.append(path)
    return files


def validate(clustersim, fits, files, csv=False):
    with tempfile.TemporaryDirectory() as catalog:
        with open(os.path.join(catalog, 'serving.textproto'), 'w') as f:
            f.write(runtime_text(fits))
        with open(os.path.join(catalog, 'links.textproto'), 'w') as f:
            f.write(links_text(fits))
        extra = ['--format', 'csv'] if csv else []
        return subprocess.run([clustersim, 'validate', '--root', ROOT, '--catalog', catalog] +
                              extra + files, capture_output=True, text=True).stdout


def error(clustersim, fits, gpu, files, line=LINE):
    out = validate(clustersim, fits, files)
    for m in line.finditer(out):
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


def descend(fits, key, free, capped, objective):
    """Coordinate descent of the values `free` of fits[key] (those in `capped` at most 1)."""
    best = objective(fits)
    for step in (0.10, 0.03, 0.01):
        improved = True
        while improved:
            improved = False
            for k in free:
                for sign in (1, -1):
                    trial = list(fits[key])
                    trial[k] *= 1 + sign * step
                    if k in capped:
                        trial[k] = min(trial[k], 1.0)
                    candidate = dict(fits, **{key: trial})
                    e = objective(candidate)
                    if e < best - 1e-3:
                        best, fits = e, candidate
                        improved = True
    print('# %s: mean of the three errors %.2f%%' % (key, best), file=sys.stderr)
    return fits


def fit(clustersim, fits, gpu):
    files = scenarios_of(gpu, instances_of(gpu))
    fp8 = tuple(i for i in (6, 9) if fits[gpu][i] is not None)
    return descend(fits, gpu, (0, 1, 2, 5) + fp8, (0, 1, 5) + fp8,
                   lambda f: error(clustersim, f, gpu, files))


def sixteen_bit_cache(path):
    """Whether a scenario's runs keep a 16-bit KV cache (the sweep's FP16 and BF16 runs)."""
    return re.search(r'-(fp16|bf16)-tp\d+\.textproto$', path) is not None


def fit_experts(clustersim, fits, gpu):
    files = scenarios_of(gpu, instances_of(gpu), mixtral=True)
    start = list(fits[gpu])
    start[7] = start[7] or 1.0
    start[8] = start[8] or 10.0
    # The Mixtral runs' cache is 16-bit: where the GPU's dense runs are all FP8-cache ones (its
    # fp8_kv_reread_fraction fitted on them), the Mixtral runs fit its kv_reread_fraction too.
    dense = scenarios_of(gpu, instances_of(gpu))
    cache = (5,) if start[9] is not None and not any(map(sixteen_bit_cache, dense)) else ()
    return descend(dict(fits, **{gpu: start}), gpu, (7, 8) + cache, (7,) + cache,
                   lambda f: error(clustersim, f, gpu, files, MIXTRAL_LINE))


def fit_shared(clustersim, fits):
    files = [path for path in scenarios_of(None, None) if not path.endswith('-tp1.textproto')]
    # The pcie class's step latencies are NCCL's (its tuner's PCI hop latencies), not fitted.
    return descend(fits, SHARED, (0, 1, 3, 4), (1, 3),
                   lambda f: error(clustersim, f, 'all GPUs', files))


def fit_memory(clustersim, fits, gpu):
    """Least squares of residual = base + per_rank (tp - 1), in GiB, over the GPU's rows."""
    files = scenarios_of(gpu, instances_of(gpu))
    trial = dict(fits, **{gpu: fits[gpu][:3] + [0.0, 0.0] + fits[gpu][5:]})
    rows = [line.split(',') for line in validate(clustersim, trial, files, csv=True).splitlines()]
    header = rows[0]
    name, pub, pred = (header.index(k) for k in
                       ('scenario', 'published_peak_memory_gb', 'predicted_peak_memory_gb'))
    xs, ys = [], []
    for r in rows[1:]:
        if r[pub] and r[pred]:
            xs.append(int(re.search(r'-tp(\d+)$', r[name]).group(1)) - 1)
            ys.append((float(r[pub]) - float(r[pred])) * 1e9 / 2 ** 30)
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    per_rank = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    base = my - per_rank * mx
    memory = [max(base, 0.0), max(per_rank, 0.0)]
    return dict(fits, **{gpu: fits[gpu][:3] + memory + fits[gpu][5:]})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--clustersim', default=os.path.join(ROOT, 'build/release/clustersim'))
    parser.add_argument('--memory', action='store_true', help='fit the runtime memory instead')
    parser.add_argument('--shared', action='store_true', help='fit the shared constants instead')
    parser.add_argument('--experts', action='store_true',
                        help='fit the expert GEMMs\' fraction on the Mixtral runs instead')
    parser.add_argument('gpus', nargs='*')
    args = parser.parse_args()
    fits = {m.group(1): [float(m.group(i)) if m.group(i) else None for i in range(2, 7)] +
            [float(m.group(7) or 1)] +
            [float(m.group(i)) if m.group(i) else None for i in (9, 10, 11, 8)]
            for m in FIT.finditer(open(RUNTIME).read())}
    fits[SHARED] = shared_constants()
    if args.shared:
        fits = fit_shared(args.clustersim, fits)
        print('allreduce_overhead_us: %.2f' % fits[SHARED][0])
        for i, name in enumerate(CLASSES):
            print('%s efficiency_fraction: %.3f step_latency_us: %.2f'
                  % ((name,) + tuple(fits[SHARED][1 + 2 * i:3 + 2 * i])))
        return
    for gpu in args.gpus or [g for g in fits if g != SHARED]:
        fitter = fit_memory if args.memory else fit_experts if args.experts else fit
        fits = fitter(args.clustersim, fits, gpu)
        print('  ' + fit_line(gpu, fits[gpu]), flush=True)


if __name__ == '__main__':
    main()
