#!/usr/bin/env python3
"""The README's accuracy tables and the shipped accuracy evidence, from `clustersim validate`.

    tools/accuracy_tables.py [--cli build/release/clustersim] [--write README.md | --check README.md]
    tools/accuracy_tables.py [--cli ...] --write-evidence results/accuracy_evidence.textproto
    tools/accuracy_tables.py [--cli ...] --check-evidence results/accuracy_evidence.textproto

Runs `clustersim validate` over the training and the serving validation scenarios and the public
runs, and prints three markdown tables: per training group the rows, the mean / worst absolute
error of step time (of TFLOP/s where the group has no step times) and the goal its issue sets, if
any; per serving GPU the errors on throughput, TTFT, TPOT and peak memory; and the public runs
(scenarios/public_runs, which no fit reads) by the GPU and precision their group names, step time
mean / worst over their rows. `--write` replaces the tables between the
README's `<!-- accuracy tables -->` markers; `--check` exits 1 when they differ from a fresh run
(a test runs it, so the README's figures cannot go stale).

`--write-evidence` writes the accuracy evidence run, sweep, cost and serve print beside their
predictions (schema sim/io/schema/accuracy_evidence.proto): per GPU, precision and kind (dense or
MoE) of training, the runs and mean / worst absolute step-time error of the calibration (rows of
scenarios/validation on a GPU and precision whose sustained fraction is fitted on its own runs) and
of the checks no fit reads (scenarios/public_runs, and the validation rows whose GPU and precision
take a fraction derived from another's: the DGX-B300's, the B200's NVFP4), each row keyed by the
GPU, precision label, kind and fraction_fitted `validate --format csv` gives it (the GPU its
scenario's instance holds, its job's precision); per serving runtime, GPU and kind, the serving
calibration's group line (runtime `tensorrt-llm`, TensorRT-LLM 0.9.0's static-batching sweep) and
the serving checks no fit reads (scenarios/serving/checks, each on the runtime it names, run with
`clustersim serve --format csv`): the throughput error of every check at maximum load against the
output tokens/s its description publishes, the TTFT and TPOT errors of every check of latency
against concurrency against its header's table (the TTFT mean and TPOT mean columns). A row scored
on TFLOP/s alone (no published step time) counts with the step-time error its TFLOP/s error
implies. `--check-evidence` exits 1 when the file differs from a fresh run (a test runs it).
"""
import argparse
import csv
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = '<!-- accuracy tables: tools/accuracy_tables.py --write README.md -->'
END = '<!-- end of accuracy tables -->'

TRAINING_GROUP = re.compile(
    r'^(?P<group>\S.*?): mean absolute error (?:of step time (?P<step_mean>[\d.]+)% over '
    r'(?P<step_rows>\d+) rows, worst (?P<step_worst>[\d.]+)%)?(?:; )?(?:of TFLOP/s '
    r'(?P<tflops_mean>[\d.]+)% over (?P<tflops_rows>\d+) rows, worst (?P<tflops_worst>[\d.]+)%)?$')
SERVING_GROUP = re.compile(
    r'^TensorRT-LLM 0\.9\.0 (?P<models>Mixtral \(fake weights\) )?\((?P<gpu>[^)]+)\): mean absolute '
    r'error throughput (?P<thr>[\d.]+)% \((?P<rows>\d+) rows, worst (?P<thr_worst>[\d.]+)%\), '
    r'TTFT (?P<ttft>[\d.]+)% \((?P<ttft_rows>\d+) rows, worst (?P<ttft_worst>[\d.]+)%\), '
    r'TPOT (?P<tpot>[\d.]+)% \((?P<tpot_rows>\d+) rows, worst (?P<tpot_worst>[\d.]+)%\), '
    r'peak memory (?P<mem>[\d.]+)% ')


def validate(cli, pattern, directory='validation', extra=()):
    files = sorted(glob.glob(os.path.join(ROOT, 'scenarios', directory, pattern)))
    if not files:
        sys.exit(f'accuracy_tables: no scenarios match scenarios/{directory}/{pattern}')
    run = subprocess.run([cli, 'validate', *extra, *files], capture_output=True, text=True, cwd=ROOT)
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


def step_error(row):
    """A simulated row's step-time error in %: its own, or where the publication gives TFLOP/s
    alone the one its TFLOP/s error implies (the same FLOPs over the step: published / predicted
    step = predicted / published TFLOP/s); None when not simulated."""
    if row['step_error_pct']:
        return float(row['step_error_pct'])
    if row['tflops_error_pct']:
        return 100 * (100 / (100 + float(row['tflops_error_pct'])) - 1)
    return None


def keyed_rows(cli, directory):
    """The simulated rows of `validate --format csv` over scenarios/DIRECTORY: (key, fitted, step
    error), the key (GPU, precision label, MoE) and fitted (the step's sustained fraction fitted on
    its GPU and precision's own runs) as validate gives them."""
    rows = csv.DictReader(validate(cli, '*.textproto', directory, ['--format', 'csv']))
    return [((r['gpu'], r['precision'], r['moe'] == 'true'), r['fraction_fitted'] == 'true', step_error(r))
            for r in rows if step_error(r) is not None]


def errors_text(name, errors):
    mean = sum(abs(e) for e in errors) / len(errors)
    worst = max(abs(e) for e in errors)
    return f'  {name} {{ runs: {len(errors)} mean_abs_pct: {mean:.1f} worst_abs_pct: {worst:.1f} }}'


# The serving calibration's runs (scenarios/validation/serving) and runtime.
CALIBRATION_RUNTIME = 'tensorrt-llm'
CALIBRATION_RUNS = "runs of TensorRT-LLM 0.9.0's static-batching sweep"
# A check at maximum load (scenarios/serving/checks): its published output tokens/s, of the whole
# run or per GPU.
MAX_LOAD = re.compile(r'^description: ".* at max load.*, published (?P<published>[\d.]+) tok/s'
                      r'(?P<per_gpu>/GPU)?"$', re.M)
MAX_LOAD_RUNS = "runs at maximum load of TensorRT-LLM's benchmarks (releases 0.14 to 1.2)"
# A check of latency against concurrency: the header's published table (users, TTFT ms, ITL ms,
# output tokens/s), compared with the TTFT mean and TPOT mean of the row of as many users.
CONCURRENCY_ROW = re.compile(r'^#\s+(?P<users>\d+)\s+(?P<ttft>[\d.]+)\s+(?P<itl>[\d.]+)\s+'
                             r'(?P<tokens>[\d.]+)$', re.M)
CONCURRENCY_RUNS = 'load levels of NIM 1.8.0 (1 to 250 users of a closed loop)'


def catalog_rows(cli, what):
    """name -> row of `clustersim catalog WHAT --format csv`."""
    run = subprocess.run([cli, 'catalog', what, '--format', 'csv'], capture_output=True,
                         text=True, cwd=ROOT)
    if run.returncode != 0:
        sys.exit(f'accuracy_tables: {cli} catalog {what} failed:\n{run.stderr}')
    return {r['name']: r for r in csv.DictReader(run.stdout.splitlines())}


def serve_rows(cli, path, root):
    """The CSV rows of `clustersim serve PATH` under `root` (the project's catalog without the
    evidence this writes: serve reads the evidence, which may be stale or of an older schema)."""
    run = subprocess.run([cli, 'serve', path, '--format', 'csv', '--limit', '0', '-j', '2',
                          '--root', root], capture_output=True, text=True, cwd=ROOT)
    if run.returncode != 0:
        sys.exit(f'accuracy_tables: {cli} serve {path} failed:\n{run.stderr}')
    return list(csv.DictReader(run.stdout.splitlines()))


def pct_error(predicted, published):
    return 100 * (float(predicted) / float(published) - 1)


def serving_checks(cli):
    """The serving checks no fit reads (scenarios/serving/checks): (runtime, GPU, MoE) -> metric ->
    (runs_of, [errors in %]). Throughput: every check at maximum load (`description` "... at max
    load ..., published N tok/s[/GPU]"); TTFT and TPOT: every check of latency against concurrency
    (its header's table of users, TTFT, ITL and tokens/s)."""
    gpu_of = {name: r['gpu'] for name, r in catalog_rows(cli, 'instances').items()}
    # A mixture of experts runs a part of its parameters per token.
    moe_of = {name: float(r['active_parameters_billion']) < float(r['parameters_billion'])
              for name, r in catalog_rows(cli, 'models').items()}
    checks = {}
    root = tempfile.mkdtemp()
    for directory in ('models', 'topologies'):
        os.symlink(os.path.join(ROOT, directory), os.path.join(root, directory))
    for path in sorted(glob.glob(os.path.join(ROOT, 'scenarios', 'serving', 'checks', '*.textproto'))):
        with open(path) as f:
            text = f.read()
        max_load = MAX_LOAD.search(text)
        levels = CONCURRENCY_ROW.findall(text)
        if not max_load and not levels:
            continue
        field = lambda name: re.search(rf'^\s*{name}: "([^"]+)"', text, re.M).group(1)
        runtime = re.search(r'^\s*runtime: "([^"]+)"', text, re.M)
        key = (runtime.group(1) if runtime else CALIBRATION_RUNTIME, gpu_of[field('instance')],
               moe_of[field('model')])
        metrics = checks.setdefault(key, {})
        rows = serve_rows(cli, os.path.relpath(path, ROOT), root)
        if max_load:
            row, = rows
            predicted = float(row['output_tokens_per_s'])
            if max_load.group('per_gpu'):
                predicted /= (int(row['tensor_parallel']) * int(row['pipeline_parallel'] or 1) *
                              int(row['replicas']))
            metrics.setdefault('throughput', (MAX_LOAD_RUNS, []))[1].append(
                pct_error(predicted, max_load.group('published')))
            continue
        by_users = {int(r['concurrency']): r for r in rows}
        for users, ttft, itl, _ in levels:
            row = by_users[int(users)]
            metrics.setdefault('ttft', (CONCURRENCY_RUNS, []))[1].append(pct_error(row['ttft_mean_ms'], ttft))
            metrics.setdefault('tpot', (CONCURRENCY_RUNS, []))[1].append(pct_error(row['tpot_mean_ms'], itl))
    shutil.rmtree(root)
    return checks


def serving_errors_text(name, runs_of, errors):
    mean = sum(abs(e) for e in errors) / len(errors)
    worst = max(abs(e) for e in errors)
    return (f'  {name} {{ runs: {len(errors)} mean_abs_pct: {mean:.1f} worst_abs_pct: {worst:.1f} '
            f'runs_of: "{runs_of}" }}')


def evidence(cli):
    """The text of results/accuracy_evidence.textproto."""
    training = {}  # (gpu, precision, moe) -> {'calibration': [errors], 'checks': [errors]}
    for directory in ('validation', 'public_runs'):
        for key, fitted, error in keyed_rows(cli, directory):
            sets = training.setdefault(key, {'calibration': [], 'checks': []})
            sets['calibration' if fitted and directory == 'validation' else 'checks'].append(error)
    out = ['# Generated by tools/accuracy_tables.py --write-evidence from `clustersim validate` over',
           '# scenarios/validation (calibration; its rows of derived fractions are checks), scenarios/public_runs',
           '# (checks no fit reads) and scenarios/validation/serving (the serving calibration), and from',
           '# `clustersim serve` over scenarios/serving/checks (serving checks no fit reads). Do not edit: a',
           '# test fails when it differs from a fresh run (schema: sim/io/schema/accuracy_evidence.proto).']
    for (gpu, precision, moe), sets in sorted(training.items()):
        out.append(f'training {{ gpu: "{gpu}" precision: "{precision}" moe: {str(moe).lower()}')
        out += [errors_text(name, errors) for name, errors in sets.items() if errors]
        out.append('}')
    for line in validate(cli, os.path.join('serving', '*.textproto')):
        m = SERVING_GROUP.match(line)
        if not m or m.group('gpu') == 'all GPUs':
            continue
        out.append(f'serving {{ runtime: "{CALIBRATION_RUNTIME}" gpu: "{m.group("gpu")}" '
                   f'moe: {"true" if m.group("models") else "false"} calibration: true')
        for name, group, rows in (('throughput', 'thr', 'rows'), ('ttft', 'ttft', 'ttft_rows'),
                                  ('tpot', 'tpot', 'tpot_rows')):
            out.append(f'  {name} {{ runs: {m.group(rows)} mean_abs_pct: {m.group(group)} '
                       f'worst_abs_pct: {m.group(group + "_worst")} runs_of: "{CALIBRATION_RUNS}" }}')
        out.append('}')
    for (runtime, gpu, moe), metrics in sorted(serving_checks(cli).items()):
        out.append(f'serving {{ runtime: "{runtime}" gpu: "{gpu}" moe: {str(moe).lower()} calibration: false')
        out += [serving_errors_text(name, *metrics[name]) for name in ('throughput', 'ttft', 'tpot')
                if name in metrics]
        out.append('}')
    return '\n'.join(out) + '\n'


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
    action.add_argument('--write-evidence', metavar='FILE')
    action.add_argument('--check-evidence', metavar='FILE')
    args = parser.parse_args()
    if args.write_evidence or args.check_evidence:
        fresh = evidence(args.cli)
        path = args.write_evidence or args.check_evidence
        if args.write_evidence:
            with open(path, 'w') as f:
                f.write(fresh)
            return
        with open(path) as f:
            if f.read() != fresh:
                print(f'{path}: the accuracy evidence differs from `clustersim validate`; run '
                      f'tools/accuracy_tables.py --write-evidence {path}. Fresh evidence:\n{fresh}')
                sys.exit(1)
        return
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
