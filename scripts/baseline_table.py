#!/usr/bin/env python3
"""Markdown tables of the baselines in a kj database (docs/baselines.md is made with it).

Usage: baseline_table.py KJ.SQLITE [--imported LABEL] [--levels 1,2,3]

1. Coverage: per level and mode, how many baselines are ok and why the others are not.
2. Compile time per mode (the cold compile of kj baselines' parallel pass).
3. Our eager and compile-default headline times next to an imported KernelBench JSON (--imported LABEL, e.g.
   H100_Modal) for the same problem files, with the ratio ours / theirs.
4. compile-default vs max-autotune vs max-autotune-no-cudagraphs where all three were measured.
Only the standard library: runs wherever the database is.
"""
import argparse
import sqlite3
import statistics
from collections import Counter, defaultdict

HEADLINE = "CASE json_extract(params_json, '$.headline') WHEN 'mean' THEN mean_ms ELSE median_ms END"


def latest_measured(db, levels):
    """(level, file, mode) -> row of the newest measured baseline."""
    rows = db.execute(f"SELECT level, file_name, mode, status, error, compile_s, {HEADLINE}, hardware, method, id "
                      "FROM baselines WHERE origin = 'measured' ORDER BY id").fetchall()
    out = {}
    for r in rows:
        if r[0] in levels:
            # "incorrect" is what kj wrote, before the compiled-vs-eager check became a note, for a timed
            # baseline whose output differed from eager beyond the protocol's tolerance: timed, so ok here
            out[(r[0], r[1], r[2])] = r if r[3] != "incorrect" else r[:3] + ("ok",) + r[4:]
    return out


def coverage(measured):
    print("| level | mode | problems | ok | not ok (status: count) |\n|---|---|---|---|---|")
    by = defaultdict(list)
    for (level, _, mode), r in measured.items():
        by[(level, mode)].append(r)
    for (level, mode), rows in sorted(by.items()):
        ok = sum(r[3] == "ok" for r in rows)
        bad = Counter(r[3] for r in rows if r[3] != "ok")
        print(f"| {level} | {mode} | {len(rows)} | {ok} | {', '.join(f'{k}: {v}' for k, v in bad.items()) or '-'} |")
    print()
    failures = [r for r in measured.values() if r[3] != "ok"]
    if failures:
        print("Not ok, with the first line of the reason:\n")
        for r in sorted(failures)[:40]:
            reason = (r[4] or "").strip().splitlines()
            print(f"- L{r[0]} {r[1]} {r[2]}: {r[3]}: {reason[-1][:160] if reason else ''}")
        print()


def compile_times(measured):
    print("| mode | compiled | sum [s] | median [s] | max [s] |\n|---|---|---|---|---|")
    by = defaultdict(list)
    for (_, _, mode), r in measured.items():
        if mode != "eager" and r[5] is not None and r[3] == "ok":
            by[mode].append(r[5])
    for mode, t in sorted(by.items()):
        print(f"| {mode} | {len(t)} | {sum(t):.0f} | {statistics.median(t):.1f} | {max(t):.1f} |")
    print()


def versus_imported(db, measured, label):
    imported = {(r[0], r[1], r[2]): r[3] for r in db.execute(
        "SELECT level, file_name, mode, mean_ms FROM baselines WHERE origin = 'imported' AND hardware = ?", (label,))}
    print(f"| problem | ours eager [ms] | {label} eager [ms] | ratio | ours compile [ms] | {label} compile [ms] | ratio |")
    print("|---|---|---|---|---|---|---|")
    ratios = defaultdict(list)
    for (level, file, mode), r in sorted(measured.items()):
        if mode != "eager":
            continue
        cells = []
        for m in ("eager", "compile-default"):
            ours = measured.get((level, file, m))
            ours_ms = ours[6] if ours and ours[3] == "ok" else None
            theirs = imported.get((level, file, m))
            ratio = ours_ms / theirs if ours_ms and theirs else None
            if ratio:
                ratios[m].append(ratio)
            cells += [f"{ours_ms:.4g}" if ours_ms else "-", f"{theirs:.4g}" if theirs else "-",
                      f"{ratio:.2f}" if ratio else "-"]
        print(f"| L{level} {file} | " + " | ".join(cells) + " |")
    print()
    for m, r in ratios.items():
        print(f"- {m}: {len(r)} problems in both; ours / {label}: median {statistics.median(r):.2f}, "
              f"geomean {statistics.geometric_mean(r):.2f}, min {min(r):.2f}, max {max(r):.2f}")
    print()


def autotune(measured):
    modes = ("compile-default", "max-autotune", "max-autotune-no-cudagraphs")
    rows = []
    for (level, file, mode), r in sorted(measured.items()):
        if mode != "compile-default":
            continue
        got = [measured.get((level, file, m)) for m in modes]
        if all(g and g[3] == "ok" for g in got):
            rows.append((level, file, [g[6] for g in got], [g[5] for g in got]))
    if not rows:
        return
    print("| problem | default [ms] | max-autotune [ms] | no-cudagraphs [ms] | fastest | compile s (d / ma / ma-ncg) |")
    print("|---|---|---|---|---|---|")
    fastest = Counter()
    for level, file, ms, cs in rows:
        best = modes[ms.index(min(ms))]
        fastest[best] += 1
        print(f"| L{level} {file} | " + " | ".join(f"{x:.4g}" for x in ms) + f" | {best} | "
              + " / ".join(f"{c:.0f}" if c is not None else "-" for c in cs) + " |")
    print()
    print("- fastest mode: " + ", ".join(f"{m} {n}" for m, n in fastest.items()))
    slower = sum(ms[1] > ms[0] for _, _, ms, _ in rows)
    print(f"- max-autotune slower than default on {slower} of {len(rows)}")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db")
    ap.add_argument("--imported", default="H100_Modal")
    ap.add_argument("--levels", default="1,2,3")
    args = ap.parse_args()
    db = sqlite3.connect(args.db)
    measured = latest_measured(db, {int(x) for x in args.levels.split(",")})
    hardware = Counter(r[7] for r in measured.values())
    print(f"Measured on: {', '.join(hardware)}; {len(measured)} baselines.\n")
    coverage(measured)
    compile_times(measured)
    versus_imported(db, measured, args.imported)
    autotune(measured)


if __name__ == "__main__":
    main()
