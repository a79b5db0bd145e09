#!/usr/bin/env python3
"""Breaks the serving calibration's error down by scenario and batch size.

Usage:
  build/release/clustersim validate scenarios/validation/serving/*.textproto --format csv > runs.csv
  tools/serving_residuals.py runs.csv [--metric ttft|tpot|throughput|memory] [PREFIX ...]

For every scenario whose name starts with one of the PREFIXes (all when none is given), prints
its signed and absolute mean error of the metric in percent (predicted against published, as
`clustersim validate` scores it), then per batch size the published minus the predicted value
(ms for ttft and tpot, tokens/s for throughput, GB for memory): median, least and most over the
batch's published runs. The rows without a published value (grid points the source lacks) are
left out.
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
            out[name].append((int(row['batch_size']), float(published), float(predicted)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('csv', help='output of clustersim validate --format csv')
    parser.add_argument('--metric', choices=sorted(COLUMNS), default='tpot')
    parser.add_argument('prefix', nargs='*', help='scenario name prefixes (default: all)')
    args = parser.parse_intermixed_args()
    with open(args.csv, newline='') as f:
        rows = list(csv.DictReader(f))
    if not rows or 'scenario' not in rows[0] or 'published_' + COLUMNS[args.metric] not in rows[0]:
        sys.exit('%s: not the output of clustersim validate --format csv' % args.csv)
    found = residuals(rows, COLUMNS[args.metric], args.prefix)
    if not found:
        sys.exit('%s: no published %s for scenarios starting with %s' % (
            args.csv, args.metric, ', '.join(args.prefix)))
    for name, runs in sorted(found.items()):
        errors = [(predicted / published - 1) * 100 for _, published, predicted in runs]
        print('%s (%d published): signed %+.1f%%, absolute %.1f%%' % (
            name, len(runs), statistics.mean(errors), statistics.mean(abs(e) for e in errors)))
        by_batch = collections.defaultdict(list)
        for batch, published, predicted in runs:
            by_batch[batch].append(published - predicted)
        for batch, gaps in sorted(by_batch.items()):
            print('  batch %5d: published - predicted %+.2f (%+.2f to %+.2f over %d)' % (
                batch, statistics.median(gaps), min(gaps), max(gaps), len(gaps)))


if __name__ == '__main__':
    main()
