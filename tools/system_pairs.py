#!/usr/bin/env python3
"""Pairs the training calibration's Megatron-Bridge / NeMo rows across systems: one model, release,
precision and task published on two systems, with the published and predicted ratios between them;
or, with --releases, across releases: one system, precision, task, model and layout published by
several releases; or, with --node-spans, by whether a layer's tensor- and context-parallel group
sits in one node.

Usage:
  build/release/clustersim validate scenarios/validation/*.textproto --format csv > runs.csv
  tools/system_pairs.py runs.csv SYSTEM OTHER... [--scenarios DIR]
  tools/system_pairs.py runs.csv --releases [--scenarios DIR]
  tools/system_pairs.py runs.csv --node-spans [--scenarios DIR]

A row's system is the segment after "dgx-" of its scenario name (bridge-[hybrid-|moe-|lora-]dgx-
SYSTEM-PRECISION-[nemo-]RELEASE-TASK-MODEL-GPUS, as tools/make_validation_scenarios.py names
them: b200, gb200, gb300, h100; a check row, bridge-check-*, as its name without "check-": b300).
Each row of SYSTEM is paired with the row of each OTHER system
whose name is the same but for the system and the GPU count. Per pair: both layouts, read from
DIR/NAME.textproto (default scenarios/validation): TP x PP x CP x EP, "vV" virtual stages, "mbM"
micro-batch, "z3" Megatron FSDP, "offN" activation-offloaded layers, "u" Transformer Engine's TP
overlap, "rc" recomputed modules, and the GPU count; the ratio SYSTEM / OTHER of the published
TFLOP/s per GPU, of the predicted, predicted over published, and each row's step-time error (%)
as `clustersim validate` scores it. Then per OTHER system the pairs grouped by their two tensor-
parallel sizes: how many, and the least, geometric mean and most of predicted over published (1:
the model orders the two systems as the tables do).

With --releases: every set of rows that differ only in their release (NAME's RELEASE, with or
without "nemo-") and have the same layout, the releases in order, each with its published and
predicted step time over the earliest release's and its step error (%). The step model has no
notion of a release: a row's recipe is all that changes, so where the published step moves and
the predicted one does not, the software moved. Then the step error's move from the earliest to
the latest release of each set: mean, median, and in how many sets it rose (the later release
ran faster than the model predicts, against the earlier one).

With --node-spans: every row with a step error (any name: the public checks too) and without
expert parallelism, per instance type (the scenario's
cluster.instance, its gpu_count GPUs a node read from topologies/instances_*.textproto), split by
how many nodes the GPUs of one tensor- x context-parallel group span under Megatron-Core's rank
order (TP innermost, then CP: consecutive ranks, ceil(TP x CP / gpu_count) nodes): how many rows,
their mean step error (%) and its least and most; every row of a group spanning nodes is listed
with its layout. These are the collectives every layer waits on (tensor-parallel overlap, the
context-parallel ring); a cost they pay across nodes and not within one shows as a split here.
"""
import argparse
import csv
import math
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
NAME = re.compile(r'^(bridge-(?:[a-z]+-)?dgx-)([a-z0-9]+)(-.*)-(\d+)$')
RELEASE = re.compile(r'^-([a-z0-9]+)-((?:nemo-)?)(\d+(?:\.\d+)+)(-.*)$')
COLUMNS = ('scenario', 'published_tflops_per_gpu', 'predicted_tflops_per_gpu', 'published_step_s',
           'predicted_step_s', 'step_error_pct')


def field(text, name, default):
    match = re.search(r'^\s*' + name + r':\s*(\S+)', text, flags=re.M)
    return match.group(1) if match else default


def scenario_text(directory, name):
    """(path, text without comments) of the row `name`'s scenario file."""
    path = os.path.join(directory, name + '.textproto')
    try:
        return path, re.sub(r'#.*', '', open(path).read())
    except OSError:
        sys.exit('%s: no scenario file for the row %s (--scenarios)' % (path, name))


def layout(directory, name, gpus):
    """(tensor-parallel size, the row's layout as one string), read from its scenario file."""
    _, text = scenario_text(directory, name)
    sizes = [field(text, f + '_parallel', '1') for f in ('tensor', 'pipeline', 'context', 'expert')]
    parts = ['TP%s PP%s CP%s EP%s' % tuple(sizes)]
    virtual = field(text, 'virtual_stages', '1')
    parts += ['v' + virtual] if virtual != '1' else []
    parts += ['mb' + field(text, 'micro_batch_size', '1')]
    parts += ['z3'] if field(text, 'zero_stage', '0') == '3' else []
    offload = field(text, 'activation_offload_layers', '0')
    parts += ['off' + offload] if offload != '0' else []
    parts += ['u'] if field(text, 'overlap_tensor_communication', 'false') == 'true' else []
    parts += ['rc'] if re.search(r'^\s*recompute_modules:', text, flags=re.M) else []
    return int(sizes[0]), ' '.join(parts) + ' /' + gpus


def read_rows(path, any_name=False):
    """{(pair key, system): (name, GPUs, published, predicted TFLOP/s, step error %, published,
    predicted step s)}; rows named otherwise than NAME left out, or, with `any_name`, keyed
    (name, '')."""
    try:
        with open(path, newline='') as f:
            rows = list(csv.DictReader(f))
    except OSError as error:
        sys.exit('%s: cannot read it (%s)' % (path, error.strerror))
    if not rows or any(c not in rows[0] for c in COLUMNS):
        sys.exit('%s: not the output of clustersim validate --format csv (training rows)' % path)
    out = {}
    for row in rows:
        match = NAME.match(re.sub(r'^bridge-check-', 'bridge-', row['scenario']))
        if not (match or any_name) or not row['published_tflops_per_gpu']:
            continue
        if not row['step_error_pct']:
            continue
        prefix, system, rest, gpus = match.groups() if match else (
            row['scenario'], '', '', row['gpus'])
        out[(prefix + '*' + rest, system)] = (
            row['scenario'], gpus, float(row['published_tflops_per_gpu']),
            float(row['predicted_tflops_per_gpu']), float(row['step_error_pct']),
            float(row['published_step_s']), float(row['predicted_step_s']))
    return out


def summary(label, ratios):
    mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    return '  %s: %d pair%s, predicted / published %.3f .. %.3f, geometric mean %.3f' % (
        label, len(ratios), '' if len(ratios) == 1 else 's', min(ratios), max(ratios), mean)


def release_sets(rows, directory):
    """{(prefix, system, precision, task and model, layout): [(release, nemo, row)]}, the sets of
    two or more rows that differ only in their release, each in release order."""
    sets = {}
    for (key, system), row in rows.items():
        prefix, rest = key.split('*')
        match = RELEASE.match(rest)
        if not match:
            continue
        precision, nemo, release, model = match.groups()
        _, shape = layout(directory, row[0], row[1])
        sets.setdefault((prefix, system, precision, model, shape), []).append(
            (tuple(int(n) for n in release.split('.')), nemo + release, row))
    return {key: sorted(members) for key, members in sets.items() if len(members) > 1}


def print_releases(rows, directory):
    moves = []
    print('Rows differing only in their release (step time published and predicted over the '
          'earliest release\'s; step errors %):')
    for (prefix, system, precision, model, shape), members in sorted(
            release_sets(rows, directory).items()):
        first = members[0][2]
        print('  %s%s-%s-*%s  %s' % (prefix, system, precision, model, shape))
        for _, release, row in members:
            print('    %-12s %.3f %.3f %+6.1f' % (release, row[5] / first[5], row[6] / first[6],
                                                 row[4]))
        moves.append(members[-1][2][4] - first[4])
    if not moves:
        sys.exit('no two rows differ only in their release')
    print('  %d set%s: step error from the earliest to the latest release %+.1f points on average '
          '(median %+.1f), up in %d' % (len(moves), '' if len(moves) == 1 else 's',
                                        sum(moves) / len(moves), sorted(moves)[len(moves) // 2],
                                        sum(m > 0 for m in moves)))


def gpus_per_node(instance):
    """gpu_count of the instance type named `instance` in ROOT/topologies/instances_*.textproto."""
    directory = os.path.join(ROOT, 'topologies')
    for path in sorted(os.listdir(directory)):
        if not (path.startswith('instances_') and path.endswith('.textproto')):
            continue
        text = re.sub(r'#.*', '', open(os.path.join(directory, path)).read())
        for block in text.split('instance {')[1:]:
            if field(block, 'name', '') == '"%s"' % instance:
                return int(field(block, 'gpu_count', '1'))
    sys.exit('%s: no instance type of that name in %s' % (instance, directory))


def print_node_spans(rows, directory):
    groups = {}
    for name, _, _, _, error, _, _ in sorted(rows.values()):
        path, text = scenario_text(directory, name)
        if field(text, 'expert_parallel', '1') != '1':
            continue
        instance = re.search(r'\binstance:\s*"([^"]+)"', text)
        if instance is None:
            sys.exit('%s: no cluster.instance to count its GPUs a node' % path)
        instance = instance.group(1)
        per_node = gpus_per_node(instance)
        tp, cp = int(field(text, 'tensor_parallel', '1')), int(field(text, 'context_parallel', '1'))
        nodes = -(-tp * cp // per_node)
        groups.setdefault((instance, per_node), {}).setdefault(nodes, []).append(
            (name, tp, cp, error))
    if not groups:
        sys.exit('no row without expert parallelism has a step error')
    print('Rows by the nodes one tensor- x context-parallel group spans (step errors %; '
          'negative: predicted faster than published):')
    for (instance, per_node), by_nodes in sorted(groups.items()):
        print('  %s (%d GPUs a node)' % (instance, per_node))
        for nodes, members in sorted(by_nodes.items()):
            errors = [m[3] for m in members]
            print('    %s: %d row%s, mean %+.1f, %+.1f .. %+.1f' % (
                'within one node' if nodes == 1 else 'across %d nodes' % nodes, len(members),
                '' if len(members) == 1 else 's', sum(errors) / len(errors), min(errors),
                max(errors)))
            for name, tp, cp, error in members if nodes > 1 else []:
                print('      %-60s TP%d CP%d %+6.1f' % (name, tp, cp, error))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('csv', help='output of clustersim validate --format csv')
    parser.add_argument('system', nargs='?', help='the system whose rows are paired, e.g. gb200')
    parser.add_argument('others', nargs='*', help='the systems to pair them with, e.g. b200 gb300')
    parser.add_argument('--releases', action='store_true',
                        help='pair each system\'s rows across releases instead')
    parser.add_argument('--node-spans', action='store_true',
                        help='split each instance type\'s rows by the nodes a layer\'s TP x CP '
                             'group spans instead')
    parser.add_argument('--scenarios', default=os.path.join(ROOT, 'scenarios', 'validation'),
                        help='directory of the rows\' scenario files')
    args = parser.parse_args()
    if (args.releases or args.node_spans) != (args.system is None) or (
            args.releases and args.node_spans):
        parser.error('give a system and the systems to pair it with, or --releases or '
                     '--node-spans alone')
    if args.system is not None and not args.others:
        parser.error('give the systems to pair %s with' % args.system)
    rows = read_rows(args.csv, any_name=args.node_spans)
    if args.releases:
        return print_releases(rows, args.scenarios)
    if args.node_spans:
        return print_node_spans(rows, args.scenarios)
    systems = {system for _, system in rows}
    for system in [args.system] + args.others:
        if system not in systems:
            sys.exit('%s: no row of system "%s" (the rows have: %s)' % (
                args.csv, system, ', '.join(sorted(systems))))
    for other in args.others:
        by_tp = {}
        print('%s against %s (published ratio, predicted ratio, predicted / published; '
              'step errors %%):' % (args.system, other))
        for (key, system), mine in sorted(rows.items()):
            theirs = rows.get((key, other))
            if system != args.system or theirs is None:
                continue
            published, predicted = mine[2] / theirs[2], mine[3] / theirs[3]
            tp, mine_layout = layout(args.scenarios, mine[0], mine[1])
            their_tp, their_layout = layout(args.scenarios, theirs[0], theirs[1])
            by_tp.setdefault((tp, their_tp), []).append(predicted / published)
            print('  %s\n    %-34s %+6.1f | %-34s %+6.1f | %.3f %.3f %.3f' % (
                key.replace('*', args.system + '|' + other), mine_layout, mine[4], their_layout,
                theirs[4], published, predicted, predicted / published))
        for (tp, their_tp), ratios in sorted(by_tp.items()):
            print(summary('TP %d against TP %d' % (tp, their_tp), ratios))


if __name__ == '__main__':
    main()
