"""Writes the scenarios of the public-check generators (tools/make_public_*.py).

Each generator builds (name, text) pairs; this module puts them in the directory given as the
generator's first argument, by default this checkout's scenarios/public_runs/. Also the pieces of
text the MLPerf generators (make_public_mlperf.py, make_public_mlperf_lora.py) write alike.
"""

import os
import sys
import textwrap


def write_scenarios(scenarios):
    """Writes every (name, text) of `scenarios` to NAME.textproto in the output directory."""
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'scenarios', 'public_runs')
    for name, text in scenarios:
        with open(os.path.join(out, name + '.textproto'), 'w') as f:
            f.write(text)


def wrap(text):
    """`text` as comment lines of a scenario's header, 98 columns wide."""
    return '\n'.join(textwrap.wrap(text, 98, initial_indent='# ', subsequent_indent='# ',
                                   break_on_hyphens=False))


def mlperf_published(group, step_s, tflops, repo, log, how):
    """The published block of an MLPerf row: its step time from the result log `log` of the
    results repository `repo` (`how` says which MLLOG marks and blocks), TFLOP/s as model FLOPs."""
    return ['published {',
            f'  group: "{group}"',
            f'  step_time_s: {step_s}',
            f'  tflops_per_gpu: {tflops:.1f}',
            '  flops_convention: MODEL_FLOPS',
            f'  source: "{repo} "',
            f'    "{log}"',
            f'    " ({how})"',
            '}']
