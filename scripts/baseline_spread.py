#!/usr/bin/env python3
"""How far the eager baselines measured again and again (kj baselines --refresh-baselines) spread, per DB.

  python3 scripts/baseline_spread.py LABEL=KJ_DB [LABEL=KJ_DB ...]

Each DB holds several measured rows per problem (one per invocation, each in its own worker process). For each
problem and DB: the medians in the order measured and max/min - 1 (the spread between processes); at the end the
distribution of the spreads.
"""
import sqlite3
import statistics
import sys

QUERY = """SELECT level, file_name, median_ms FROM baselines
           WHERE origin = 'measured' AND mode = 'eager' AND status = 'ok' ORDER BY id"""


def load(path):
    rows = {}
    for level, name, median in sqlite3.connect(path).execute(QUERY):
        rows.setdefault((level, name), []).append(median)
    return rows


def main():
    dbs = [arg.split("=", 1) for arg in sys.argv[1:]]
    loaded = {label: load(path) for label, path in dbs}
    keys = sorted(set().union(*(d.keys() for d in loaded.values())))
    print("| L | problem | " + " | ".join(f"{label} medians [ms] | {label} spread" for label, _ in dbs) + " |")
    print("|---|---|" + "---|---|" * len(dbs))
    spreads = {label: [] for label, _ in dbs}
    for key in keys:
        cells = []
        for label, _ in dbs:
            medians = loaded[label].get(key, [])
            spread = max(medians) / min(medians) - 1 if len(medians) >= 2 else None
            if spread is not None:
                spreads[label].append(spread)
            cells.append(" ".join(f"{m:.4g}" for m in medians) or "-")
            cells.append(f"{100 * spread:.2f}%" if spread is not None else "-")
        print(f"| {key[0]} | {key[1][:40]} | " + " | ".join(cells) + " |")
    for label, values in spreads.items():
        if values:
            print(f"- {label}: {len(values)} problems, spread median {100 * statistics.median(values):.2f}%, "
                  f"<= 1%: {sum(v <= 0.01 for v in values)}, <= 2%: {sum(v <= 0.02 for v in values)}, "
                  f"max {100 * max(values):.2f}%")


if __name__ == "__main__":
    main()
