#!/usr/bin/env python3
"""Checks that `clustersim serve --format json` and `--format csv` carry the answers the table's
text prints, with the same values: the cheapest deployment meeting the SLO (its cost and
description, its tie note, its margin lines), the per-instance answer lines, the Pareto front's rows and, for an
autoscaling scenario, the day's totals; that the row fields the formats always had come first, in
their order; that CSV holds the JSON rows' cells; and that under --limit 1 the rows the answers
name follow the first row, their cells those of the unlimited listing.

Usage: tests/cli/serve_answers_match_text.py CLI SCENARIO [serve options...]
(run from the repository root; exits 1 on the first mismatch, saying what differs)
"""
import csv
import io
import json
import re
import subprocess
import sys

ANSWER_KEYS = ["cheapest", "pareto", "instance_answer", "margin"]
DAY_KEYS = ["autoscaling_day_cost", "autoscaling_all_on_demand_cost",
            "autoscaling_baseline_replicas", "autoscaling_baseline_nodes"]


def fail(why):
    print(f"{' '.join(sys.argv[2:])}: {why}")
    sys.exit(1)


def serve(cli, args, fmt, limit):
    run = subprocess.run([cli, "serve"] + args + ["-j", "2", "--format", fmt, "--limit", limit],
                         capture_output=True, text=True)
    if run.returncode not in (0, 1):
        fail(f"--format {fmt} exited {run.returncode}: {run.stderr}")
    return run.stdout, run.returncode


def text_answers(text):
    """The answers the table's text prints below the rows."""
    answers = {"per_instance": {}, "pareto": set(), "ties": re.findall(r"^tie +(.*)$", text, re.M),
               "margin": re.findall(r"^margin +(.*)$", text, re.M)}
    block = re.search(r"^per instance type:\n((?:  .*\n)+)", text, re.M)
    for line in block.group(1).splitlines() if block else []:
        name, answer = line.strip().split(": ", 1)
        answers["per_instance"][name] = answer
    cheapest = re.search(r"^cheapest[^:]*: (.*): ([0-9.]+) [A-Z]+ per million output tokens$",
                         text, re.M)
    answers["cheapest"] = cheapest.groups() if cheapest else None
    front = re.search(r"^Pareto front[^\n]*\n(.*?)\n(?:\n|\Z)", text, re.M | re.S)
    if front:
        lines = front.group(1).splitlines()
        header = re.split(r"  +", lines[0].strip())
        billing = header.index("billing")
        for line in lines[1:]:
            cells = re.split(r"  +", line.strip())
            answers["pareto"].add((int(cells[0]), cells[billing]))
    day = re.search(r"^baseline ([0-9]+) replicas \(([0-9]+) nodes\) .*: the day costs ([0-9.]+) "
                    r"[A-Z]+ against ([0-9.]+) [A-Z]+ all ON_DEMAND", text, re.M)
    answers["day"] = day.groups() if day else None
    return answers


def check_json(rows, text, autoscaling):
    answers = text_answers(text)
    cheapest = [r for r in rows if r["cheapest"]]
    if answers["cheapest"] is None:
        if cheapest:
            fail(f"JSON marks {len(cheapest)} cheapest rows, the text none")
    else:
        if len(cheapest) != 1:
            fail(f"JSON marks {len(cheapest)} cheapest rows, the text one")
        row = cheapest[0]
        description, cost = answers["cheapest"]
        if f"{row['cost_per_million_tokens']:.3f}" != cost:
            fail(f"cheapest costs {row['cost_per_million_tokens']} in JSON, {cost} in the text")
        if row["instance_answer"] is not None and not row["instance_answer"].startswith(
                "meets it with " + description + ", "):
            fail(f"the cheapest row's answer {row['instance_answer']!r} is not {description!r}")
        if row.get("tie", None) != (" | ".join(answers["ties"]) or None):
            fail(f"the cheapest row's tie {row.get('tie')!r}, the text's {answers['ties']}")
        if row["margin"] != (" | ".join(answers["margin"]) or None):
            fail(f"the cheapest row's margin {row['margin']!r}, the text's {answers['margin']}")
    if sum(1 for r in rows if r["margin"]) > (1 if answers["margin"] else 0):
        fail("a row other than the cheapest carries a margin")
    per_instance = {r["instance"]: r["instance_answer"] for r in rows if r["instance_answer"]}
    if per_instance != answers["per_instance"]:
        fail(f"per-instance answers differ:\n  JSON {per_instance}\n  text {answers['per_instance']}")
    pareto = {(r["index"], r["billing"]) for r in rows if r["pareto"]}
    if pareto != answers["pareto"]:
        fail(f"Pareto rows differ: JSON {sorted(pareto)}, text {sorted(answers['pareto'])}")
    if autoscaling:
        day = [r for r in rows if r["autoscaling_day_cost"] is not None]
        if answers["day"] is None:
            fail("the text prints no autoscaled day")
        if len(day) != 1 or not day[0]["cheapest"]:
            fail(f"{len(day)} rows carry the day's totals, not the cheapest alone")
        replicas, nodes, cost, on_demand = answers["day"]
        got = (str(day[0]["autoscaling_baseline_replicas"]), str(day[0]["autoscaling_baseline_nodes"]),
               f"{day[0]['autoscaling_day_cost']:.2f}",
               f"{day[0]['autoscaling_all_on_demand_cost']:.2f}")
        if got != (replicas, nodes, cost, on_demand):
            fail(f"the day's totals are {got} in JSON, {answers['day']} in the text")


def main():
    cli, args = sys.argv[1], sys.argv[2:]
    text, text_rc = serve(cli, args, "table", "0")
    document, json_rc = serve(cli, args, "json", "0")
    rows = json.loads(document)
    table_csv, csv_rc = serve(cli, args, "csv", "0")
    if not text_rc == json_rc == csv_rc:
        fail(f"exit codes differ: table {text_rc}, json {json_rc}, csv {csv_rc}")
    autoscaling = "autoscaling_day_cost" in rows[0]
    added = ANSWER_KEYS + (DAY_KEYS if autoscaling else [])
    keys = list(rows[0])
    if keys[-len(added):] != added:
        fail(f"the answer keys are not the last: {keys}")
    check_json(rows, text, autoscaling)
    csv_rows = list(csv.DictReader(io.StringIO(table_csv)))
    csv_keys = list(csv_rows[0])
    if csv_keys[-len(added):] != added or any(k not in keys for k in csv_keys):
        fail(f"CSV columns {csv_keys} are not the JSON keys' ending in the answer keys")
    for got, want in zip(csv_rows, rows):
        for key in csv_keys:
            value = want[key]
            expected = ("" if value is None else "true" if value is True else
                        "false" if value is False else str(value))
            if got[key] != expected and not (isinstance(value, float) and float(got[key]) == value):
                fail(f"CSV row {want['index']} {key}: {got[key]!r}, JSON {expected!r}")
    if len(csv_rows) != len(rows):
        fail(f"CSV has {len(csv_rows)} rows, JSON {len(rows)}")
    limited, _ = serve(cli, args, "json", "1")
    limited_rows = json.loads(limited)
    named = [r for r in rows[1:] if r["cheapest"] or r["pareto"] or r["instance_answer"]]
    if limited_rows != rows[:1] + named:
        fail(f"--limit 1 lists rows {[r['index'] for r in limited_rows]}, not the first and "
             f"those an answer names, {[r['index'] for r in rows[:1] + named]}")
    print(f"{len(rows)} rows, {len(named)} named by an answer: JSON and CSV answers match the text")


main()
