#!/usr/bin/env python3
"""Checks a training sweep's rows (`clustersim sweep S --out R.csv`) against relations every
answer must keep, and prints each violation:
  - cost = billed hours x price_per_hour (whole months or years for a subscription) + storage_cost;
  - p95 time and cost not below p50, the time to train no shorter than steps x step time;
  - a spot row no faster than its on-demand row, a subscription as fast as it;
  - one price per node for an instance type and billing mode (one-type clusters);
  - with --answer (the sweep's stdout): its fastest and cheapest are the least time and cost over
    the ranked (status ok) rows, ties to the lower index, and its Pareto front is the
    non-dominated set of those rows;
  - with --subset-of WIDER.csv (the rows of the same scenario with an axis widened): every row is
    in WIDER, equal in every cell but the index.
Exit status 1 when a relation breaks. Usage:
  tools/sweep_invariants.py R.csv [--answer ANSWER.txt] [--subset-of WIDER.csv]
"""
import argparse
import csv
import math
import re
import sys

PERIOD_HOURS = {"SUBSCRIPTION_MONTHLY": 730, "SUBSCRIPTION_YEARLY": 8760}
BILLING = ("ON_DEMAND", "SPOT", "SUBSCRIPTION_MONTHLY", "SUBSCRIPTION_YEARLY")


def number(text):
    return float(text) if text else math.nan


def row_checks(rows):
    problems = []
    for r in rows:
        hours, cost, price = (number(r[k]) for k in ("time_to_train_h", "cost", "price_per_hour"))
        where = f"row {r['index']} {r['billing']}"
        if math.isnan(hours):
            continue
        if not math.isnan(cost):
            period = PERIOD_HOURS.get(r["billing"])
            billed = math.ceil(hours / period) * period if period else hours
            # The checkpoint storage, billed for the wall time, where its tier is priced.
            storage = r.get("storage_cost") or "0"
            expected = billed * price + float(storage)
            if abs(cost - expected) > 1e-9 * max(cost, 1):
                problems.append(f"{where}: cost {cost} is not billed hours x price + storage "
                                f"({expected})")
            if number(r["cost_p95"]) < cost:
                problems.append(f"{where}: cost_p95 below cost")
        if number(r["time_to_train_p95_h"]) < hours:
            problems.append(f"{where}: time_to_train_p95_h below time_to_train_h")
        # The run simulation's clock ticks in microseconds: its time rounds to the nearest one.
        if hours * 3600 < number(r["steps"]) * number(r["step_s"]) - 1e-6:
            problems.append(f"{where}: time to train shorter than steps x step_s")
    by_index = {}
    for r in rows:
        by_index.setdefault(r["index"], {})[r["billing"]] = r
    for index, modes in by_index.items():
        if "ON_DEMAND" not in modes or not modes["ON_DEMAND"]["time_to_train_h"]:
            continue
        on_demand = number(modes["ON_DEMAND"]["time_to_train_h"])
        if "SPOT" in modes and number(modes["SPOT"]["time_to_train_h"]) < on_demand:
            problems.append(f"row {index}: SPOT faster than ON_DEMAND")
        for mode in PERIOD_HOURS:
            if mode in modes and number(modes[mode]["time_to_train_h"]) != on_demand:
                problems.append(f"row {index}: {mode} time differs from ON_DEMAND")
    per_node = {}
    for r in rows:
        if r["pools"] == "1" and not r["nodes_added"] and r["price_per_hour"]:
            key = (r["instance"], r["billing"])
            per_node.setdefault(key, set()).add(round(number(r["price_per_hour"]) / int(r["nodes"]), 9))
    problems += [f"{key}: several prices per node {sorted(v)}" for key, v in per_node.items() if len(v) > 1]
    return problems


def answer_checks(rows, answer):
    problems = []
    ranked = [r for r in rows if r["status"] == "ok"]
    for label, key in (("fastest", "time_to_train_h"), ("cheapest", "cost")):
        candidates = [r for r in ranked if r[key]]
        line = re.search(rf"^{label} +(.*)$", answer, re.M)
        if not candidates or not line:
            continue
        best = min(candidates, key=lambda r: (number(r[key]), int(r["index"])))
        name = best["instance"] + (f" x {best['nodes']}" if best["pools"] == "1" else "")
        if not line.group(1).startswith(name + ",") or best["billing"] + ":" not in line.group(1):
            problems.append(f"{label} says '{line.group(1)}', the rows' least is row {best['index']} {best['billing']}")
    points = [(number(r["time_to_train_h"]), number(r["cost"]), int(r["index"]), r["billing"])
              for r in ranked if r["cost"]]
    front = sorted(p for p in points if not any(
        q[0] <= p[0] and q[1] <= p[1] and (q[0] < p[0] or q[1] < p[1]) for q in points))
    if "Pareto front" in answer:
        printed = []
        for line in answer.split("Pareto front", 1)[1].splitlines()[2:]:
            fields = line.split()
            if not fields or not fields[0].isdigit():
                break
            printed.append((int(fields[0]), next(f for f in fields if f in BILLING)))
        expected = [(p[2], p[3]) for p in front][:len(printed)]
        if printed != expected:
            problems.append(f"Pareto front printed {printed}, the rows give {expected}")
    return problems


def subset_checks(rows, wider):
    in_wider = {tuple(v for k, v in r.items() if k != "index") for r in wider}
    return [f"row {r['index']} {r['billing']} is not in the wider sweep" for r in rows
            if tuple(v for k, v in r.items() if k != "index") not in in_wider]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results")
    parser.add_argument("--answer")
    parser.add_argument("--subset-of")
    args = parser.parse_args()
    with open(args.results) as f:
        rows = list(csv.DictReader(f))
    problems = row_checks(rows)
    if args.answer:
        with open(args.answer) as f:
            problems += answer_checks(rows, f.read())
    if args.subset_of:
        with open(args.subset_of) as f:
            problems += subset_checks(rows, list(csv.DictReader(f)))
    for problem in problems:
        print(f"{args.results}: {problem}")
    print(f"{args.results}: {len(rows)} rows, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
