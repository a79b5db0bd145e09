#!/usr/bin/env python3
"""Fits a GPU's sustained compute fraction on published training runs.

Usage: tools/fit_sustained_compute.py GPU SCENARIO... [--precision FP8|MXFP8|FP4 |
                                      --attention-like REFERENCE_GPU |
                                      --attention-sustained LIBRARY | --expert-layer-sync]
                                      [--cli PATH] [--root DIR]

The fraction scales the GPU's isolated tensor-core rates (fitted on single-kernel benchmarks)
inside a training step (topologies/gpus.textproto): the GPU's sustained_compute_fraction, or with
--precision the sustained_fraction of that precision's matmul_efficiency (runs whose GEMMs are in
that precision; MXFP8: the FP8 matmul_efficiency's mxfp8_sustained_fraction, FP8 runs under the
MXFP8 recipe; FP4: the FP4 one's, runs under the NVFP4 recipe).

With --attention-like it fits the GPU's fused-attention rates instead, for a GPU without attention
kernels benchmarked by shape: its attention_efficiency lines become REFERENCE_GPU's (fitted on
kernel benchmarks by tools/fit_attention_kernels.py: the rate's growth with the keys per pass,
mask and head dimension) with every max_fraction times one scale (capped at 1), the value fitted
(over [0.3, 3]); give it rows whose step the attention kernels dominate.

With --expert-layer-sync it fits the GPU's expert_layer_sync_us_per_expert instead (the host's
wait per local expert in each forward of an eager expert layer, sim/parallel/expert_layer_host.h):
the value in [0, 1000] us, to 0.1 us by bisection, that puts the scenarios' mean signed step-time
error at zero (a host cost the kernels do not set; give it eager mixture-of-experts rows that the
sync, not the issue floor, limits).

With --attention-sustained it fits the sustained_fraction of the GPU's attention_efficiency lines
of that kernel library (e.g. FLASH_ATTENTION_2): the fraction of their benchmarked rates those
kernels sustain in a training step, in place of the step's; give it runs of that library whose
step its attention dominates.

This finds the value that minimises the mean absolute error of `clustersim validate` over the
given scenarios (the step-time error where a scenario's publication gives a step time or
tokens/s, else the TFLOP/s error): the shipped catalog with only that field of GPU replaced,
golden-section search over [0.3, 1] to 0.0005, then the value rounded to 0.001. Prints
the value and each row's error. Deterministic: the same catalog and scenarios give the same value.
--root: the tree whose models/ and topologies/ are the shipped catalog (default: this repository).
"""
import argparse
import csv
import io
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')


def gpu_entry(name, root=ROOT):
    """The text of the `gpu { ... }` entry named `name` in the shipped GPU catalog under `root`."""
    text = open(os.path.join(root, 'topologies', 'gpus.textproto')).read()
    for match in re.finditer(r'^gpu \{\n.*?^\}\n', text, flags=re.S | re.M):
        if re.search(r'^  name: "' + re.escape(name) + '"$', match.group(0), flags=re.M):
            return match.group(0)
    sys.exit(f'no gpu named "{name}" in topologies/gpus.textproto')


def with_field(line, field, value):
    """`line`, a one-line `matmul_efficiency { ... }`, with `field` set to `value`."""
    fields = re.findall(r'(\w+): (\S+)', line[line.index('{') + 1:line.rindex('}')])
    fields = [(k, v) for k, v in fields if k != field] + [(field, f'{value:.6f}')]
    return '  matmul_efficiency { ' + ' '.join(f'{k}: {v}' for k, v in fields) + ' }'


def attention_lines(reference, scale):
    """REFERENCE's attention_efficiency lines of its default kernels (an entry's text; not those
    of another library, such as FlashAttention-2) with max_fraction x `scale`."""
    lines = [line for line in re.findall(r'^  attention_efficiency \{[^}\n]*\}', reference,
                                         flags=re.M) if 'library:' not in line]
    if not lines:
        sys.exit('the reference GPU has no attention_efficiency lines')
    def scaled(m):
        return f'max_fraction: {min(1.0, float(m.group(1)) * scale):.4f}'
    return ''.join(re.sub(r'max_fraction: (\S+)', scaled, line) + '\n' for line in lines)


def with_library_sustained(entry, library, fraction, digits=6):
    """`entry` with sustained_fraction `fraction` (to `digits` decimals) on its
    attention_efficiency lines of `library`, in place."""
    pattern = r'^  attention_efficiency \{[^}\n]*library: ' + re.escape(library) + r'\b[^}\n]*\}$'
    if not re.search(pattern, entry, flags=re.M):
        sys.exit(f'no attention_efficiency line of library {library} in the GPU entry')
    def line(m):
        fields = re.sub(r' sustained_fraction: \S+', '', m.group(0)[:-2])
        return f'{fields} sustained_fraction: {fraction:.{digits}f} }}'
    return re.sub(pattern, line, entry, flags=re.M)


def with_expert_layer_sync(entry, us):
    """`entry` with expert_layer_sync_us_per_expert `us` (to 0.1 us), in place."""
    pattern = r'^  expert_layer_sync_us_per_expert: \S+$'
    if not re.search(pattern, entry, flags=re.M):
        sys.exit('no expert_layer_sync_us_per_expert in the GPU entry')
    return re.sub(pattern, f'  expert_layer_sync_us_per_expert: {us:.1f}', entry, flags=re.M)


def with_fraction(entry, fraction, precision, reference, library=None):
    if library:
        return with_library_sustained(entry, library, fraction)
    if reference:
        entry = re.sub(r'^  (attention_efficiency|flash_attention_fraction)\b.*\n', '', entry,
                       flags=re.M)
        return entry[:-2] + attention_lines(reference, fraction) + '}\n'
    if precision:
        gemms = 'FP8' if precision == 'MXFP8' else precision
        field = 'mxfp8_sustained_fraction' if precision == 'MXFP8' else 'sustained_fraction'
        pattern = r'^  matmul_efficiency \{ precision: ' + gemms + r' [^}\n]*\}$'
        if not re.search(pattern, entry, flags=re.M):
            sys.exit(f'no matmul_efficiency of precision {gemms} in the GPU entry')
        return re.sub(pattern, lambda m: with_field(m.group(0), field, fraction), entry,
                      flags=re.M)
    line = f'  sustained_compute_fraction: {fraction:.6f}\n'
    if 'sustained_compute_fraction:' in entry:
        return re.sub(r'^  sustained_compute_fraction: .*\n', line, entry, flags=re.M)
    return entry[:-2] + line + '}\n'


def errors(cli, root, entry, scenarios, directory):
    """Each scenario's error in % with the GPU's catalog entry replaced by `entry` (a fitted field
    rewritten), in `directory`."""
    with open(os.path.join(directory, 'gpu.textproto'), 'w') as f:
        f.write(entry)
    out = subprocess.run([cli, 'validate', '--root', root, '--catalog', directory, '--format',
                          'csv'] + scenarios, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    def error(r):
        return r['step_error_pct'] or r['tflops_error_pct']
    missing = [r['scenario'] for r in rows if not error(r)]
    if missing or len(rows) != len(scenarios):
        sys.exit(f'not every scenario was simulated: {missing}')
    return {r['scenario']: float(error(r)) for r in rows}


def mean_absolute(errs):
    return sum(abs(e) for e in errs.values()) / len(errs)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('gpu')
    parser.add_argument('scenarios', nargs='+')
    parser.add_argument('--precision',
                        help='fit this precision\'s sustained_fraction (MXFP8: the FP8 one\'s '
                             'mxfp8_sustained_fraction)')
    parser.add_argument('--attention-like', metavar='REFERENCE_GPU',
                        help='fit a scale of this GPU\'s attention_efficiency max fractions')
    parser.add_argument('--attention-sustained', metavar='LIBRARY',
                        help='fit the sustained_fraction of this library\'s attention_efficiency '
                             'lines')
    parser.add_argument('--expert-layer-sync', action='store_true',
                        help='fit expert_layer_sync_us_per_expert: zero mean signed step error')
    parser.add_argument('--cli', default=os.path.join(ROOT, 'build', 'release', 'clustersim'))
    parser.add_argument('--root', default=ROOT,
                        help='the tree whose models/ and topologies/ are the shipped catalog')
    args = parser.parse_args()
    if sum(map(bool, (args.attention_like, args.precision, args.attention_sustained,
                      args.expert_layer_sync))) > 1:
        sys.exit('give one of --precision, --attention-like, --attention-sustained and '
                 '--expert-layer-sync')
    if args.expert_layer_sync:
        return fit_expert_layer_sync(args)
    library = args.attention_sustained
    entry = gpu_entry(args.gpu, args.root)
    reference = gpu_entry(args.attention_like, args.root) if args.attention_like else None
    with tempfile.TemporaryDirectory() as directory:
        def cost(x):
            return mean_absolute(errors(args.cli, args.root,
                                        with_fraction(entry, x, args.precision, reference, library),
                                        args.scenarios, directory))
        low, high = (0.3, 3.0) if reference else (0.3, 1.0)
        ratio = (math.sqrt(5) - 1) / 2
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        fa, fb = cost(a), cost(b)
        while high - low > 0.0005:
            if fa <= fb:
                high, b, fb = b, a, fa
                a = high - ratio * (high - low)
                fa = cost(a)
            else:
                low, a, fa = a, b, fb
                b = low + ratio * (high - low)
                fb = cost(b)
        best = round((low + high) / 2, 3)
        final = errors(args.cli, args.root,
                       with_fraction(entry, best, args.precision, reference, library),
                       args.scenarios, directory)
    for scenario, error in sorted(final.items()):
        print(f'{scenario:58s} {error:+6.1f}%')
    if reference:
        print(attention_lines(reference, best), end='')
    field = (f'{library} attention sustained_fraction' if library else
             f'{args.attention_like} attention max fractions x' if reference else
             'FP8 mxfp8_sustained_fraction' if args.precision == 'MXFP8' else
             f'{args.precision} sustained_fraction' if args.precision else
             'sustained_compute_fraction')
    print(f'{args.gpu}: {field} {best:.3f}: mean absolute error '
          f'{mean_absolute(final):.2f}% over {len(final)} rows, worst '
          f'{max(abs(e) for e in final.values()):.1f}%')


def fit_expert_layer_sync(args):
    """Bisects expert_layer_sync_us_per_expert to the zero of the mean signed step error (a
    longer sync never makes a step faster) and prints it as the other fits print theirs."""
    entry = gpu_entry(args.gpu, args.root)
    with tempfile.TemporaryDirectory() as directory:
        def mean_signed(us):
            errs = errors(args.cli, args.root, with_expert_layer_sync(entry, us), args.scenarios,
                          directory)
            return sum(errs.values()) / len(errs)
        low, high = 0.0, 1000.0
        if mean_signed(low) > 0 or mean_signed(high) < 0:
            sys.exit('the mean step error does not change sign over [0, 1000] us')
        while high - low > 0.05:
            middle = (low + high) / 2
            if mean_signed(middle) < 0:
                low = middle
            else:
                high = middle
        best = round((low + high) / 2, 1)
        final = errors(args.cli, args.root, with_expert_layer_sync(entry, best), args.scenarios,
                       directory)
    for scenario, error in sorted(final.items()):
        print(f'{scenario:58s} {error:+6.1f}%')
    print(f'{args.gpu}: expert_layer_sync_us_per_expert {best:.1f}: mean absolute error {mean_absolute(final):.2f}% over '
          f'{len(final)} rows, worst {max(abs(e) for e in final.values()):.1f}% (mean signed '
          f'{sum(final.values()) / len(final):+.2f}%)')


if __name__ == '__main__':
    main()
