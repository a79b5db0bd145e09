#!/usr/bin/env python3
"""One catalog entry's numbers set, one at a time, to boundary values; each copy run through the tool.

The entry (`KIND { name: "NAME" ... }` of FILE: a gpu, instance, model, storage, fabric,
link_class, serving_runtime, ...) is copied into a temporary --catalog directory, where it replaces
the shipped one, with one number (`field: 12.5`, also inside one-line messages) set to each of 0,
-1, 2^31 - 1, 1e308, nan and 1e-300. Each copy is given to the COMMANDs (clustersim subcommands
with their arguments, e.g. "run scenarios/mixtral_unbalanced_router.textproto --limit 0
--fastest 1"), the next one only after a result, and its outcome sorted as
tests/fuzz/mutate_scenarios.py sorts a mutant's: located, file, result, or a bug (crash, hang,
naninf, unlocated). Deterministic.

Usage (from the project root):
  tests/fuzz/mutate_catalog.py CLUSTERSIM FILE KIND NAME COMMAND...
Exits 1 when any copy is a bug, printing it.
"""
import argparse
import collections
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutate_scenarios  # noqa: E402  (its outcome sorting and text functions)

VALUES = ["0", "-1", "2147483647", "1e308", "nan", "1e-300"]
NUMBER = re.compile(r"(\w+):\s*(-?[0-9][0-9.eE+-]*)")


def entry_lines(path, kind, name):
    """The lines of the entry `kind` named `name` in `path`, or None."""
    lines = open(path).read().split("\n")
    for i, line in enumerate(lines):
        if not re.match(r"%s\s*\{" % re.escape(kind), line):
            continue
        depth = 0
        for j in range(i, len(lines)):
            code = mutate_scenarios.code(lines[j])
            depth += code.count("{") - code.count("}")
            if depth <= 0:
                break
        if any(re.match(r'\s*name:\s*"%s"' % re.escape(name), l) for l in lines[i:j + 1]):
            return lines[i:j + 1]
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clustersim")
    parser.add_argument("file")
    parser.add_argument("kind")
    parser.add_argument("name")
    parser.add_argument("commands", nargs="+")
    args = parser.parse_args()
    entry = entry_lines(args.file, args.kind, args.name)
    if entry is None:
        sys.exit("%s: no %s named \"%s\"" % (args.file, args.kind, args.name))
    counts = collections.Counter()
    with tempfile.TemporaryDirectory() as catalog:
        for i, line in enumerate(entry):
            for number in NUMBER.finditer(mutate_scenarios.code(line)):
                for value in VALUES:
                    mutated = line[:number.start()] + "%s: %s" % (number.group(1), value) + \
                        line[number.end():]
                    with open(os.path.join(catalog, "entry.textproto"), "w") as f:
                        f.write("\n".join(entry[:i] + [mutated] + entry[i + 1:]))
                    for command in args.commands:
                        result, out, _ = mutate_scenarios.outcome(
                            [args.clustersim] + command.split() + ["--catalog", catalog])
                        if result != "result":
                            break
                    counts[result] += 1
                    if result in mutate_scenarios.BUGS:
                        print("%s: %s %s=%s: %s" % (result, command.split()[0], number.group(1),
                                                     value, out[-500:]))
    print("%s \"%s\": %s" % (args.kind, args.name, ", ".join(
        "%s %d" % (k, counts[k]) for k in ("located", "file", "result") + mutate_scenarios.BUGS)))
    return 1 if any(counts[k] for k in mutate_scenarios.BUGS) else 0


if __name__ == "__main__":
    sys.exit(main())
