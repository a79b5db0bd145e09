#!/usr/bin/env python3
"""Pairs training rows that differ only in their precision: the same model, cluster, layout and
recipe published once in BF16 and once in an 8- or 4-bit format (FP8, MXFP8, NVFP4), with the
published and predicted step-time ratios between them.

Usage:
  build/release/clustersim validate scenarios/public_runs/*.textproto --format csv > runs.csv
  tools/precision_pairs.py runs.csv [--scenarios DIR ...] [--by FIELD ...]

Each row of the csv is read from DIR/NAME.textproto (default: scenarios/validation and
scenarios/public_runs). Two rows pair when their scenario files are the same once comments, the
`name`, the `published { ... }` block and the precision fields (`precision`, every `fp8_*` field,
`fp4_*`) are taken out, and one row is BF16 and the other is not. Per pair: the published step of
the BF16 row over the other's, the predicted one, predicted over published (1: the model orders
the two precisions as the measurement does; above 1: the model's low-precision gain is too large),
and both rows' step errors (%). Then per GPU and per published group of the BF16 row: how many
pairs and the geometric mean of predicted over published. With --by FIELD (repeatable), the same
per value of that scenario field as the low-precision row's file sets it (its first `FIELD:`, e.g.
model, tensor_parallel, context_parallel, fp8_recipe; "(absent)" where the file leaves it out):
which property of the rows the ratio's error follows, if any.

A fitted constant per GPU and precision carries whatever separates the sources it was fitted on;
where BF16 and FP8 were fitted on different sources (the H100: Megatron-Core r0.8.0 BF16 rows,
Megatron-Bridge FP8 rows), these same-recipe pairs show what that leaves in the ratio.
"""
import argparse
import collections
import csv
import math
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
DEFAULT_DIRS = ('scenarios/validation', 'scenarios/public_runs')
PRECISION_FIELD = re.compile(r'^\s*(precision|fp8_\w+|fp4_\w+):.*$', flags=re.M)
NUMBER_COLUMNS = ('published_step_s', 'predicted_step_s', 'step_error_pct')


def strip_published(text):
    """The scenario text without its `published { ... }` block (balanced braces)."""
    start = re.search(r'^\s*published\s*\{', text, flags=re.M)
    if not start:
        return text
    depth, end = 0, start.end() - 1
    for end in range(start.end() - 1, len(text)):
        depth += {'{': 1, '}': -1}.get(text[end], 0)
        if depth == 0:
            break
    return text[:start.start()] + text[end + 1:]


def recipe(directories, name):
    """(precision, the scenario's recipe key: everything but name, precision and published)."""
    text = scenario_text(directories, name)
    text = re.sub(r'^\s*name:.*$', '', text, flags=re.M)
    match = re.search(r'^\s*precision:\s*(\w+)', text, flags=re.M)
    precision = match.group(1) if match else 'BF16'
    key = PRECISION_FIELD.sub('', strip_published(text))
    return precision, ' '.join(key.split())


def scenario_path(directories, name):
    for directory in directories:
        path = os.path.join(directory, name + '.textproto')
        if os.path.exists(path):
            return path
    sys.exit('%s: no scenario file in %s (--scenarios)' % (name, ', '.join(directories)))


def scenario_text(directories, name):
    """The scenario file `name`, its comments taken out."""
    return re.sub(r'#.*', '', open(scenario_path(directories, name)).read())


def field_value(directories, name, field):
    """The first value the scenario file `name` gives `field` (comments out), or '(absent)'."""
    match = re.search(r'(^|[\s{])' + field + r':\s*"?([^"\s}]+)', scenario_text(directories, name),
                      flags=re.M)
    return match.group(2) if match else '(absent)'


def geometric_mean(ratios):
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios))


def gpu_of(name):
    for gpu in ('gb300', 'gb200', 'b300', 'b200', 'h200', 'h100', 'a100'):
        if re.search(r'(^|-)' + gpu + r'(-|$)', name):
            return gpu.upper()
    return '?'


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('csv', help='clustersim validate --format csv output')
    parser.add_argument('--scenarios', action='append', help='scenario directory (repeatable)')
    parser.add_argument('--by', action='append', default=[], metavar='FIELD',
                        help='summarise per value of this scenario field (repeatable)')
    args = parser.parse_args()
    for field in args.by:
        if not re.match(r'^[a-z][a-z0-9_]*$', field):
            sys.exit('--by %s: not a scenario field name (lower case, digits and _)' % field)
    directories = [os.path.join(ROOT, d) if not os.path.isabs(d) else d
                   for d in (args.scenarios or DEFAULT_DIRS)]
    try:
        with open(args.csv, newline='') as f:
            rows = list(csv.DictReader(f))
    except OSError as error:
        sys.exit('%s: cannot read it (%s)' % (args.csv, error.strerror))
    if not rows or any(c not in rows[0] for c in ('scenario', 'group') + NUMBER_COLUMNS):
        sys.exit('%s: not the output of clustersim validate --format csv (training rows)' % args.csv)

    by_recipe = collections.defaultdict(list)
    for row in rows:
        if any(not re.match(r'^-?[0-9.e+-]+$', row[c]) for c in NUMBER_COLUMNS):
            continue  # a row scored on TFLOP/s only has no step times to pair
        precision, key = recipe(directories, row['scenario'])
        by_recipe[key].append((precision, row))

    pairs = []
    for members in by_recipe.values():
        wide = [row for precision, row in members if precision == 'BF16']
        narrow = [(precision, row) for precision, row in members if precision != 'BF16']
        for bf16 in wide:
            for precision, low in narrow:
                published = float(bf16['published_step_s']) / float(low['published_step_s'])
                predicted = float(bf16['predicted_step_s']) / float(low['predicted_step_s'])
                pairs.append((bf16, low, precision, published, predicted))
    if not pairs:
        sys.exit('%s: no two rows differ only in their precision' % args.csv)

    print('| BF16 row | other row | precision | published BF16/other | predicted | predicted / '
          'published | BF16 step error % | other step error % |')
    print('|---|---|---|---|---|---|---|---|')
    for bf16, low, precision, published, predicted in sorted(pairs, key=lambda p: p[0]['scenario']):
        print('| %s | %s | %s | %.3f | %.3f | %.3f | %+.1f | %+.1f |' % (
            bf16['scenario'], low['scenario'], precision, published, predicted,
            predicted / published, float(bf16['step_error_pct']), float(low['step_error_pct'])))

    print('\n| GPU | BF16 group | pairs | geometric mean of predicted / published |')
    print('|---|---|---|---|')
    summary = collections.defaultdict(list)
    for bf16, low, precision, published, predicted in pairs:
        summary[(gpu_of(bf16['scenario']), bf16['group'])].append(predicted / published)
    for (gpu, group), ratios in sorted(summary.items()):
        print('| %s | %s | %d | %.3f |' % (gpu, group, len(ratios), geometric_mean(ratios)))
    for field in args.by:
        by_value = collections.defaultdict(list)
        for bf16, low, precision, published, predicted in pairs:
            value = field_value(directories, low['scenario'], field)
            by_value[(gpu_of(bf16['scenario']), value)].append(predicted / published)
        print('\n| GPU | %s | pairs | predicted / published: geometric mean, least, most |' % field)
        print('|---|---|---|---|')
        for (gpu, value), ratios in sorted(by_value.items()):
            print('| %s | %s | %d | %.3f, %.3f, %.3f |' % (
                gpu, value, len(ratios), geometric_mean(ratios), min(ratios), max(ratios)))
    every = [p[4] / p[3] for p in pairs]
    print('\nAll %d pairs: geometric mean of predicted / published %.3f (least %.3f, most %.3f)' % (
        len(every), geometric_mean(every), min(every), max(every)))


if __name__ == '__main__':
    main()
