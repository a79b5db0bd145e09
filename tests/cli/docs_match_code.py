#!/usr/bin/env python3
"""Checks that the project's docs (README.md, sim/README.md, results/README.md) still describe the
code: the README's first two commands are the install+build+sweep one and the test one, and CI
runs exactly that test command; every `clustersim` command line in a code block is accepted by the
binary (its subcommand and every option, checked by appending --help, which parses them and runs
nothing); every option the README names is one of clustersim's or of a project tool (or one of
the few other programs' it quotes); every path the docs name exists; every sim/ folder has a row
in sim/README.md's module table and a row in its includes table that lists exactly the folders its
files include, and every program in tools/ is named in README.md.

Usage: tests/cli/docs_match_code.py CLI   (run from the repository root; prints every mismatch,
exits 1 if there is one)
"""
import fnmatch
import glob
import os
import re
import subprocess
import sys

# Options the README quotes from other programs than clustersim and the project's tools.
OTHER_PROGRAMS_OPTIONS = {
    "--preset", "--build",  # cmake
    "--array", "--cpus-per-task",  # Slurm
    "--max-concurrency",  # vLLM's benchmark_serving
    "--tp-comm-overlap",  # Megatron-LM
}
TOP_FOLDERS = ("sim", "tools", "scenarios", "results", "models", "topologies", "tests", ".ci")
OUTPUT_OPTIONS = r"(?:--out|-o|--trace|--out-dir|--plot-dir) \S+"
SIM_MODULES = sorted(d for d in os.listdir("sim") if os.path.isdir(os.path.join("sim", d)))

problems = []


def code_blocks(text):
    return re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S)


def help_of(cli, args):
    run = subprocess.run([cli] + args + ["--help"], capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


def clustersim_command_lines(text):
    """Every clustersim command line of the text's code blocks, as its argument list (after the
    word clustersim): optional [groups] taken in, a|b alternatives as the first one, shell
    variables and the placeholders of counts (N, S) as 1."""
    for block in code_blocks(text):
        for line in block.splitlines():
            at = re.search(r"(?:^|\s|: )(?:build/release/)?clustersim (?=[a-zA-Z])", line)
            if not at:
                continue
            command = line[at.end():]
            command = re.split(r"\s#\s|\s\|\|\s|\s\\$", command)[0]
            command = command.replace("[", " ").replace("]", " ")
            command = re.sub(r"\$\{?\(*[A-Za-z_ +0-9]+\)*\}?", "1", command)
            words = []
            for word in command.split():
                word = word.split("|")[0]
                words.append("1" if word in ("N", "S") else word)
            yield line.strip(), words


def check_first_commands(readme):
    blocks = code_blocks(readme)
    first = [l.split("#")[0].strip() for l in blocks[0].splitlines() if l.strip()] if blocks else []
    if first[:2] != ["tools/run", "tools/test"]:
        problems.append(f"README.md: the first two commands are {first[:2]}, not tools/run, tools/test")
    with open(".ci/run") as f:
        commands = [l.strip() for l in f if l.strip() and not l.startswith("#")
                    and not l.startswith(("set ", "cd "))]
    if commands != ["exec tools/test"]:
        problems.append(f".ci/run: runs {commands}, not exactly the README's test command tools/test")


def check_command_lines(cli, text, doc):
    for line, words in clustersim_command_lines(text):
        if words[0] == "COMMAND":
            continue
        code, output = help_of(cli, words)
        if code != 0 or not output.startswith("usage: clustersim " + words[0]):
            problems.append(f"{doc}: not accepted by clustersim: {line}\n  {output.strip()[:300]}")


def clustersim_options(cli):
    code, top = help_of(cli, [])
    commands = re.findall(r"^  ([a-z]+)\s", top, re.M)
    if len(commands) < 10:
        problems.append(f"clustersim --help lists {len(commands)} commands:\n{top}")
    options = set()
    for command in commands:
        _, output = help_of(cli, [command])
        options.update(re.findall(r"(?:^|\s|\[ )(--?[a-z][a-z0-9-]*)", output))
    return options


def tools_text():
    text = ""
    for path in glob.glob("tools/*") + glob.glob("tools/bench/*.py"):
        if os.path.isfile(path):
            with open(path, errors="replace") as f:
                text += f.read()
    return text


def check_options(cli, readme):
    known = clustersim_options(cli) | OTHER_PROGRAMS_OPTIONS
    scripts = tools_text()
    quoted = "\n".join(code_blocks(readme) + re.findall(r"`([^`]+)`", readme))
    for option in sorted(set(re.findall(r"(?:^|[\s\[(])(--[a-z][a-z0-9-]*)", quoted, re.M))):
        in_a_tool = any(f"{q}{option}{e}" in scripts for q in "'\"" for e in "'\"") or \
            f"{option})" in scripts  # an argparse argument, or a shell script's case
        if option not in known and not in_a_tool:
            problems.append(f"README.md: {option} is no option of clustersim or of a tool")


def check_paths(doc, text):
    here = os.path.dirname(doc)
    for quoted in re.findall(r"`([^`\n]+)`", text) + code_blocks(text):
        quoted = re.sub(OUTPUT_OPTIONS, " ", quoted)  # what a command writes need not exist yet
        for path in re.findall(r"(?:^|[\s(=])([A-Za-z0-9_.][\w.*\-]*/[\w./*\-]*)", quoted, re.M):
            path = path.rstrip(".,;:)")
            top = path.split("/")[0]
            if top in TOP_FOLDERS:
                candidates = [path]
            elif here and top in os.listdir(here):
                candidates = [os.path.join(here, path)]
            else:
                continue  # not a path of this repository (a URL, a unit, a build output)
            if not any(glob.glob(c) or glob.glob(c + ".*") for c in candidates):
                problems.append(f"{doc}: names {path}, which does not exist")


def check_everything_described(readme, sim_readme):
    for module in SIM_MODULES:
        if not re.search(rf"^\| `{module}/` \| .+ \| .+ \|$", sim_readme, re.M):
            problems.append(f"sim/README.md: the module table has no row for sim/{module}/")
    named = set(re.findall(r"`(?:tools/)?([\w.*\-/]+)`", readme))
    for path in sorted(glob.glob("tools/*")):
        name = os.path.basename(path)
        if name == "CMakeLists.txt":
            continue
        if os.path.isdir(path):
            name += "/"
        if not any(fnmatch.fnmatch(name, n) or n == f"tools/{name}" for n in named):
            problems.append(f"README.md: tools/{name} is not named in the Layout's tools row")


def included_folders(module):
    found = set()
    for path in glob.glob(f"sim/{module}/**/*.h", recursive=True) + \
            glob.glob(f"sim/{module}/**/*.cpp", recursive=True):
        with open(path) as f:
            found.update(re.findall(r'^#include "sim/(\w+)/', f.read(), re.M))
    return found - {module}


def check_includes_table(sim_readme):
    rows = dict(re.findall(r"^\| `(\w+)/` \| ((?:`\w+`(?:, )?)+|nothing) \|$", sim_readme, re.M))
    for module in SIM_MODULES:
        if module not in rows:
            problems.append(f"sim/README.md: the includes table has no row for sim/{module}/")
            continue
        documented = set(re.findall(r"`(\w+)`", rows[module]))
        actual = included_folders(module)
        for folder in sorted(actual - documented):
            problems.append(f"sim/README.md: sim/{module}/ includes sim/{folder}/, not in its table row")
        for folder in sorted(documented - actual):
            problems.append(f"sim/README.md: sim/{module}/ includes nothing of sim/{folder}/ any more")


def main():
    cli = sys.argv[1]
    with open("README.md") as f:
        readme = f.read()
    with open("sim/README.md") as f:
        sim_readme = f.read()
    with open("results/README.md") as f:
        results_readme = f.read()
    check_first_commands(readme)
    check_command_lines(cli, readme, "README.md")
    check_command_lines(cli, sim_readme, "sim/README.md")
    check_options(cli, readme)
    for doc, text in (("README.md", readme), ("sim/README.md", sim_readme),
                      ("results/README.md", results_readme)):
        check_paths(doc, text)
    check_everything_described(readme, sim_readme)
    check_includes_table(sim_readme)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} mismatches between the docs and the code")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
