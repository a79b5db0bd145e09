#!/usr/bin/env python3
"""Breaks the serving calibration's error down by scenario and batch size.

Usage:
  build/release/clustersim validate scenarios/validation/serving/*.textproto --format csv > runs.csv
  tools/serving_residuals.py runs.csv [--metric ttft|tpot|throughput|memory] [PREFIX ...]
  tools/serving_residuals.py runs.csv --metric memory --by-predicted 10 [PREFIX ...]
  tools/serving_residuals.py runs.csv --inversions [--metric tpot|memory] [PREFIX ...]
  tools/serving_residuals.py runs.csv --repeats [PREFIX ...]
  tools/serving_residuals.py runs.csv --terms [PREFIX ...]

For every scenario whose name starts with one of the PREFIXes (all when none is given), prints
its signed and absolute mean error of the metric in percent (predicted against published, as
`clustersim validate` scores it), then per batch size the published minus the predicted value
(ms for ttft and tpot, tokens/s for throughput, GB for memory): median, least and most over the
batch's published runs. The rows without a published value (grid points the source lacks) are
left out.

--by-predicted WIDTH: the same per scenario, grouped by the predicted value in bins of WIDTH (GB for
memory) instead of by batch size, each bin with the most any of its runs published. For the peak
memory it shows whether what a run publishes beyond the model's peak leaves room for the run: an
allocation of the runtime holds its size whatever the run, where memory the run can reclaim shrinks
as the run's own peak grows.

--inversions (TPOT): per scenario and batch size, the pairs of published runs where the run with
the longer mean decode context (input + output / 2 tokens) has the shorter TPOT. A model whose TPOT
does not fall as the context grows misses such a pair, published a < b, by at least (b - a) / b
in absolute error summed over the two runs (best when both are predicted a). Pairs are taken
greedily, largest bound first, each run in at most one, so the bounds add: printed per pair, then
as the least mean absolute TPOT error over the scenario's published runs that any such model has.
With --metric memory, the same for the peak memory: the pairs of published runs of a scenario (one
engine) where a run with no smaller batch, input and output (and one of them larger) peaks lower.
Its KV cache and activations are no smaller, so a model whose peak does not fall as the batch or
a length grows misses such a pair by the same bound.

--repeats (TTFT): the prompt phase does not depend on the output length, yet the source publishes a
TTFT for each output length of the same batch and prompt. Per scenario, the least mean absolute
TTFT error over its published runs that any model giving one TTFT per batch and prompt length has
(each group of repeats predicted at its best published value), then the same over all the
scenarios listed: the share of the error that is run-to-run spread.

--terms (peak memory): per scenario (one engine), the published minus the predicted peak of its
published runs fitted by least squares as a constant plus a term a prompt token (batch x input),
a term a context token (batch x (input + output), what the KV cache holds) and a term a sequence
(batch), in the source's units (GB = 1e9 bytes, KB = 1e3, MB = 1e6), with the root mean square
left by that fit and by a constant alone. A term the model counts too high shows as a negative
slope; what the model misses whatever the run, as the constant.
"""
import argparse
import collections
import csv
import statistics
import sys

COLUMNS = {'ttft': 'ttft_ms', 'tpot': 'tpot_ms', 'throughput': 'output_tokens_per_s',
           'memory': 'peak_memory_gb'}


def residuals(rows, column, prefixes):
    """{scenario: [(batch, published, predicted)]} of the rows with both values."""
    out = collections.defaultdict(list)
    for row in rows:
        name = row['scenario']
        if prefixes and not any(name.startswith(p) for p in prefixes):
            continue
        published, predicted = row['published_' + column], row['predicted_' + column]
        if published and predicted:
            out[name].append((int(row['batch_size']), float(published), float(predicted),
                              int(row['input_tokens']), int(row['output_tokens'])))
    return out


def solve(matrix, vector):
    """x with matrix x = vector (Gauss-Jordan with partial pivoting); None when singular."""
    n = len(vector)
    a = [list(row) + [v] for row, v in zip(matrix, vector)]
    for i in range(n):
        pivot = max(range(i, n), key=lambda k: abs(a[k][i]))
        if abs(a[pivot][i]) < 1e-9 * max(1.0, max(abs(x) for row in a for x in row[:n])):
            return None
        a[i], a[pivot] = a[pivot], a[i]
        for k in range(n):
            if k != i:
                f = a[k][i] / a[i][i]
                a[k] = [x - f * y for x, y in zip(a[k], a[i])]
    return [a[i][n] / a[i][i] for i in range(n)]


def memory_terms(runs):
    """(constant GB, GB a prompt token, GB a context token, GB a sequence, rms of the fit, rms of
    a constant alone) of published - predicted over runs (batch, published, predicted, input,
    output); None when the runs do not determine the four terms."""
    rows = [[1.0, b * i, b * (i + o), b] for b, _, _, i, o in runs]
    gaps = [published - predicted for _, published, predicted, _, _ in runs]
    if len(rows) < 4:
        return None
    # Scaled columns keep the normal equations well conditioned.
    scale = [1.0, 1e4, 1e4, 1e2]
    scaled = [[x / s for x, s in zip(row, scale)] for row in rows]
    normal = [[sum(r[i] * r[j] for r in scaled) for j in range(4)] for i in range(4)]
    terms = solve(normal, [sum(r[i] * g for r, g in zip(scaled, gaps)) for i in range(4)])
    if terms is None:
        return None
    terms = [t / s for t, s in zip(terms, scale)]
    fitted = [sum(t * x for t, x in zip(terms, row)) for row in rows]
    rms = (sum((g - f) ** 2 for g, f in zip(gaps, fitted)) / len(gaps)) ** 0.5
    mean = statistics.mean(gaps)
    spread = (sum((g - mean) ** 2 for g in gaps) / len(gaps)) ** 0.5
    return terms + [rms, spread]


def print_memory_terms(name, runs):
    terms = memory_terms(runs)
    if terms is None:
        print('%s (%d published): too few distinct runs for four terms' % (name, len(runs)))
        return
    constant, prompt, context, sequence, rms, spread = terms
    print('%s (%d published): constant %+.2f GB, %+.1f KB a prompt token, %+.2f KB a context '
          'token, %+.2f MB a sequence; rms left %.3f GB (a constant alone: %.3f)' % (
              name, len(runs), constant, prompt * 1e6, context * 1e6, sequence * 1e3, rms,
              spread))


def must_not_fall(metric, small, large):
    """Whether run `large` (batch, published, input, output) may not publish less than run
    `small`: for TPOT, the same batch at a longer mean decode context; for the peak memory, no
    smaller batch, input or output, one of them larger."""
    if metric == 'tpot':
        return large[0] == small[0] and large[2] + large[3] / 2 > small[2] + small[3] / 2
    return (large[0] >= small[0] and large[2] >= small[2] and large[3] >= small[3] and
            (large[0], large[2], large[3]) != (small[0], small[2], small[3]))


def inversions(runs, metric):
    """[(bound, higher run, lower run)] of disjoint inverted pairs, a run being (batch, published,
    input, output): the lower run may not publish less (must_not_fall) but does."""
    published = [(batch, value, inputs, outputs) for batch, value, _, inputs, outputs in runs]
    candidates = [((high[1] - low[1]) / high[1], high, low)
                  for high in published for low in published
                  if low[1] < high[1] and must_not_fall(metric, high, low)]
    chosen, used = [], set()
    for bound, high, low in sorted(candidates, reverse=True):
        if high not in used and low not in used:
            chosen.append((bound, high, low))
            used.update({high, low})
    return sorted(chosen, key=lambda c: (c[1][0], c[1][2:], c[2][2:]))


def repeat_floor(runs):
    """(groups of two or more runs of one batch and input, summed least absolute relative error of
    one value per group) over runs (batch, published, predicted, input, output)."""
    groups = collections.defaultdict(list)
    for batch, published, _, inputs, _ in runs:
        groups[(batch, inputs)].append(published)
    repeated = [values for values in groups.values() if len(values) > 1]
    return len(repeated), sum(min(sum(abs(c - v) / v for v in values) for c in values)
                              for values in repeated)


def print_inversions(name, runs, metric):
    pairs = inversions(runs, metric)
    floor = sum(bound for bound, _, _ in pairs) / len(runs) * 100
    print('%s (%d published): %d inverted pairs, mean absolute %s error at least %.1f%%' % (
        name, len(runs), len(pairs), 'TPOT' if metric == 'tpot' else 'peak memory', floor))
    for bound, high, low in pairs:
        if metric == 'tpot':
            print('  batch %5d: %d/%d %.2f ms > %d/%d %.2f ms (at least %.1f%% over the two)' % (
                high[0], high[2], high[3], high[1], low[2], low[3], low[1], bound * 100))
        else:
            print('  batch %d %d/%d %.2f GB > batch %d %d/%d %.2f GB (at least %.1f%% over the two)'
                  % (high[0], high[2], high[3], high[1], low[0], low[2], low[3], low[1],
                     bound * 100))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('csv', help='output of clustersim validate --format csv')
    parser.add_argument('--metric', choices=sorted(COLUMNS), help='default: tpot (--repeats: ttft)')
    parser.add_argument('--inversions', action='store_true',
                        help='TPOT pairs whose longer context is faster (--metric memory: peak '
                             'memory pairs whose larger run peaks lower), and the error they force')
    parser.add_argument('--repeats', action='store_true',
                        help='the TTFT error that runs of one batch and prompt published at '
                             'different output lengths force on any model')
    parser.add_argument('--terms', action='store_true',
                        help='the peak memory gap per scenario as a constant and terms a prompt '
                             'token, a context token and a sequence')
    parser.add_argument('--by-predicted', type=float, metavar='WIDTH',
                        help='group by the predicted value in bins of WIDTH, not by batch size')
    parser.add_argument('prefix', nargs='*', help='scenario name prefixes (default: all)')
    args = parser.parse_intermixed_args()
    if args.repeats and (args.inversions or args.by_predicted is not None or
                         args.metric not in (None, 'ttft')):
        parser.error('--repeats reads TTFT and takes neither --inversions nor --by-predicted')
    if args.terms and (args.inversions or args.repeats or args.by_predicted is not None or
                       args.metric not in (None, 'memory')):
        parser.error('--terms reads the peak memory and takes no other mode')
    args.metric = args.metric or ('ttft' if args.repeats else 'memory' if args.terms else 'tpot')
    if args.inversions and args.metric not in ('tpot', 'memory'):
        parser.error('--inversions reads TPOT or peak memory; it does not take --metric %s' %
                     args.metric)
    if args.by_predicted is not None and (args.inversions or not args.by_predicted > 0):
        parser.error('--by-predicted takes a positive bin width and no --inversions')
    with open(args.csv, newline='') as f:
        rows = list(csv.DictReader(f))
    if not rows or 'scenario' not in rows[0] or 'published_' + COLUMNS[args.metric] not in rows[0]:
        sys.exit('%s: not the output of clustersim validate --format csv' % args.csv)
    found = residuals(rows, COLUMNS[args.metric], args.prefix)
    if not found:
        sys.exit('%s: no published %s for scenarios starting with %s' % (
            args.csv, args.metric, ', '.join(args.prefix)))
    if args.repeats:
        total_floor, total_runs = 0.0, 0
        for name, runs in sorted(found.items()):
            groups, floor = repeat_floor(runs)
            total_floor, total_runs = total_floor + floor, total_runs + len(runs)
            print('%s (%d published): %d repeated prompts, mean absolute TTFT error at least %.2f%%'
                  % (name, len(runs), groups, floor / len(runs) * 100))
        print('all %d published: mean absolute TTFT error at least %.2f%%' % (
            total_runs, total_floor / total_runs * 100))
        return
    for name, runs in sorted(found.items()):
        if args.terms:
            print_memory_terms(name, runs)
            continue
        if args.inversions:
            print_inversions(name, runs, args.metric)
            continue
        errors = [(predicted / published - 1) * 100 for _, published, predicted, _, _ in runs]
        print('%s (%d published): signed %+.1f%%, absolute %.1f%%' % (
            name, len(runs), statistics.mean(errors), statistics.mean(abs(e) for e in errors)))
        groups = collections.defaultdict(list)
        for batch, published, predicted, _, _ in runs:
            key = batch if not args.by_predicted else int(predicted // args.by_predicted)
            groups[key].append((published - predicted, published))
        for key, group in sorted(groups.items()):
            gaps = [gap for gap, _ in group]
            spread = '%+.2f (%+.2f to %+.2f over %d)' % (
                statistics.median(gaps), min(gaps), max(gaps), len(gaps))
            if args.by_predicted:
                print('  predicted %g-%g: published - predicted %s, published at most %.2f' % (
                    key * args.by_predicted, (key + 1) * args.by_predicted, spread,
                    max(published for _, published in group)))
            else:
                print('  batch %5d: published - predicted %s' % (key, spread))


if __name__ == '__main__':
    main()
