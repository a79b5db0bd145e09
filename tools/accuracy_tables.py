#!/usr/bin/env python3
"""The README's accuracy tables, from `clustersim validate`'s group lines.

    tools/accuracy_tables.py [--cli build/release/clustersim] [--write README.md | --check README.md]

Runs `clustersim validate` over the training and the serving validation scenarios and the public
runs, and prints three markdown tables: per training group the rows, the mean / worst absolute
error of step time (of TFLOP/s where the group has no step times) and the goal its issue sets, if
any; per serving GPU the errors on throughput, TTFT, TPOT and peak memory; and the public runs
(scenarios/public_runs, which no fit reads) by the GPU and precision their group names, step time
mean / worst over their rows. `--write` replaces the tables between the
README's `<!-- accuracy tables -->` markers; `--check` exits 1 when they differ from a fresh run
(a test runs it, so the README's figures cannot go stale).
"""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = '<!-- accuracy tables: tools/accuracy_tables.py --write README.md -->'
END = '<!-- end of accuracy tables -->'

TRAINING_GROUP = re.compile(
    r'^(?P<group>\S.*?): mean absolute error (?:of step time (?P<step_mean>[\d.]+)% over '
    r'(?P<step_rows>\d+) rows, worst (?P<step_worst>[\d.]+)%)?(?:; )?(?:of TFLOP/s '
    r'(?P<tflops_mean>[\d.]+)% over (?P<tflops_rows>\d+) rows, worst (?P<tflops_worst>[\d.]+)%)?$')
SERVING_GROUP = re.compile(
    r'^TensorRT-LLM 0\.9\.0 (?P<models>Mixtral \(fake weights\) )?\((?P<gpu>[^)]+)\): mean absolute '
    r'error throughput (?P<thr>[\d.]+)% \((?P<rows>\d+) rows[^)]*\), TTFT (?P<ttft>[\d.]+)% '
    r'\([^)]*\), TPOT (?P<tpot>[\d.]+)% \([^)]*\), peak memory (?P<mem>[\d.]+)% ')


def validate(cli, pattern, directory='validation'):
    files = sorted(glob.glob(os.path.join(ROOT, 'scenarios', directory, pattern)))
    if not files:
        sys.exit(f'accuracy_tables: no scenarios match scenarios/{directory}/{pattern}')
    run = subprocess.run([cli, 'validate', *files], capture_output=True, text=True, cwd=ROOT)
    if run.returncode != 0:
        sys.exit(f'accuracy_tables: {cli} validate failed:\n{run.stderr}')
    return run.stdout.splitlines()


def goal(group, rows):
    """The goal an issue sets for a group of at least 4 rows of megatron_bridge_nemo.csv (its
    Megatron-Bridge/NeMo rows and its NeMo AutoModel ones, dense or MoE), else ''."""
    ours = '(Megatron-Bridge, NeMo)' in group or 'AutoModel' in group
    if not ours or rows < 4:
        return ''
    return '8% / 15%' if ('MoE' in group or 'hybrid' in group) else '5% / 12%'


def met(goal_text, mean, worst):
    if not goal_text:
        return ''
    mean_goal, worst_goal = (float(x.strip().rstrip('%')) for x in goal_text.split('/'))
    return 'yes' if mean <= mean_goal and worst <= worst_goal else 'no'


def training_table(lines):
    out = ['| group | rows | step time mean / worst | goal | met |', '|---|---|---|---|---|']
    for line in lines:
        m = TRAINING_GROUP.match(line)
        if not m or '  ' in m.group('group'):
            continue
        if m.group('step_mean'):
            rows, mean, worst = int(m.group('step_rows')), float(m.group('step_mean')), float(m.group('step_worst'))
            figure = f'{mean:.1f}% / {worst:.1f}%'
        elif m.group('tflops_mean'):
            rows, mean, worst = int(m.group('tflops_rows')), float(m.group('tflops_mean')), float(m.group('tflops_worst'))
            figure = f'{mean:.1f}% / {worst:.1f}% (TFLOP/s)'
        else:
            continue
        g = goal(m.group('group'), rows)
        out.append(f'| {m.group("group")} | {rows} | {figure} | {g} | {met(g, mean, worst)} |')
    return out


def serving_table(lines):
    out = ['| models | GPU | rows | throughput | TTFT | TPOT | peak memory |', '|---|---|---|---|---|---|---|']
    for line in lines:
        m = SERVING_GROUP.match(line)
        if not m:
            continue
        models = 'Mixtral 8x7B' if m.group('models') else 'dense'
        out.append(f'| {models} | {m.group("gpu")} | {m.group("rows")} | {m.group("thr")}% | '
                   f'{m.group("ttft")}% | {m.group("tpot")}% | {m.group("mem")}% |')
    return out


def public_table(lines):
    """Step-time groups of the public runs pooled by (GPU, precision) as their names give them:
    the rows' mean (each group's mean weighted by its rows) and the worst group's worst."""
    pooled = {}
    for line in lines:
        m = TRAINING_GROUP.match(line)
        if not m or not m.group('step_mean'):
            continue
        # A group of several GPUs ("B200 and B300 servers") is pooled under all it names.
        gpus = '/'.join(dict.fromkeys(
            re.findall(r'\b(A100|H100|H200|B200|B300|GB200|GB300)\b', m.group('group'))))
        precision = re.search(r'\b(BF16|FP8|MXFP8|NVFP4)\b', m.group('group'))
        key = (gpus or 'not named', precision.group(1) if precision else 'not named')
        rows, mean, worst = int(m.group('step_rows')), float(m.group('step_mean')), float(m.group('step_worst'))
        for k in (key, ('all', 'all')):
            n, total, most = pooled.get(k, (0, 0.0, 0.0))
            pooled[k] = (n + rows, total + rows * mean, max(most, worst))
    out = ['| GPU | precision | rows | step time mean / worst |', '|---|---|---|---|']
    for (gpu, precision), (n, total, most) in sorted(pooled.items(), key=lambda kv: kv[0] == ('all', 'all')):
        out.append(f'| {gpu} | {precision} | {n} | {total / n:.1f}% / {most:.1f}% |')
    return out


def tables(cli):
    training = training_table(validate(cli, '*.textproto'))
    serving = serving_table(validate(cli, os.path.join('serving', '*.textproto')))
    public = public_table(validate(cli, '*.textproto', 'public_runs'))
    return '\n'.join([BEGIN, '', 'Training:', '', *training, '', 'Serving:', '', *serving, '',
                      'Public runs no fit reads (training, step time; `scenarios/public_runs`):', '',
                      *public, '', END])


def replace(readme_text, fresh):
    start, end = readme_text.find(BEGIN), readme_text.find(END)
    if start < 0 or end < start:
        sys.exit(f'accuracy_tables: README has no "{BEGIN}" ... "{END}" block')
    return readme_text[:start] + fresh + readme_text[end + len(END):]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--cli', default=os.path.join(ROOT, 'build', 'release', 'clustersim'))
    action = parser.add_mutually_exclusive_group()
    action.add_argument('--write', metavar='README')
    action.add_argument('--check', metavar='README')
    args = parser.parse_args()
    fresh = tables(args.cli)
    if not (args.write or args.check):
        print(fresh)
        return
    path = args.write or args.check
    with open(path) as f:
        text = f.read()
    updated = replace(text, fresh)
    if args.write:
        with open(path, 'w') as f:
            f.write(updated)
    elif updated != text:
        print(f'{path}: the accuracy tables differ from `clustersim validate`; run '
              f'tools/accuracy_tables.py --write {os.path.basename(path)}. Fresh tables:\n{fresh}')
        sys.exit(1)


if __name__ == '__main__':
    main()
