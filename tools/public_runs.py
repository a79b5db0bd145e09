"""Writes the scenarios of the public-check generators (tools/make_public_*.py).

Each generator builds (name, text) pairs; this module puts them in the directory given as the
generator's first argument, by default this checkout's scenarios/public_runs/.
"""

import os
import sys


def write_scenarios(scenarios):
    """Writes every (name, text) of `scenarios` to NAME.textproto in the output directory."""
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'scenarios', 'public_runs')
    for name, text in scenarios:
        with open(os.path.join(out, name + '.textproto'), 'w') as f:
            f.write(text)
