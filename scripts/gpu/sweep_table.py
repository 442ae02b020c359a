#!/usr/bin/env python3
"""`kj results --format json` of the sweep's runs (identity candidates on every KernelBench problem) on stdin ->
a Markdown table per level: evaluations, verdicts, harness errors, out-of-memory, seconds per evaluation, where
the time went, and how many identity speedups lie within 1% of 1.0 (issue 41's acceptance), host-bound ones
(`speedup_host_bound`, kj's `h`: the window mostly the host launching, docs/methodology.md) counted apart. Exit 1
when any evaluation is a harness_error or ran out of memory, or when fewer than --min-within of the speedups that
are not host-bound are within 1%."""
import argparse
import json
import sys
from collections import Counter, defaultdict


def level_rows(rows):
    by_level = defaultdict(list)
    for r in rows:
        by_level[r["level"]].append(r)
    return dict(sorted(by_level.items()))


def within(r, tolerance=0.01):
    s = r.get("speedup")
    return isinstance(s, (int, float)) and abs(s - 1.0) <= tolerance


def summary(rows):
    verdicts = Counter(r["verdict"] for r in rows)
    seconds = sum(sum((r.get("phases") or {}).values()) for r in rows)
    phases = Counter()
    for r in rows:
        phases.update(r.get("phases") or {})
    top = ", ".join(f"{name} {100 * s / seconds:.0f}%" for name, s in phases.most_common(3)) if seconds else "-"
    speedups = [r for r in rows if isinstance(r.get("speedup"), (int, float))]
    timed = [r for r in speedups if not r.get("speedup_host_bound")]
    return {"evaluations": len(rows), "correct": verdicts["correct"],
            "other": ", ".join(f"{v} {n}" for v, n in sorted(verdicts.items()) if v != "correct") or "-",
            "harness_error": verdicts["harness_error"],
            "out_of_memory": sum(r.get("reason") == "out_of_memory" for r in rows),
            "seconds": seconds, "per_eval": seconds / len(rows) if rows else 0.0, "top": top,
            "timed": len(timed), "within": sum(within(r) for r in timed), "host_bound": len(speedups) - len(timed)}


def table(rows):
    lines = ["| level | evaluations | correct | other verdicts | harness_error | out of memory | s per evaluation | "
             "minutes | where the time went | speedup within 1% of 1.0 | host-bound (h) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    groups = list(level_rows(rows).items()) + [("all", rows)]
    for level, group in groups:
        s = summary(group)
        lines.append(f"| {level} | {s['evaluations']} | {s['correct']} | {s['other']} | {s['harness_error']} | "
                     f"{s['out_of_memory']} | {s['per_eval']:.1f} | {s['seconds'] / 60:.1f} | {s['top']} | "
                     f"{s['within']} of {s['timed']} | {s['host_bound']} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-within", type=float, default=0.85, help="share of timed rows within 1%% of 1.0")
    args = parser.parse_args(argv)
    rows = json.load(sys.stdin)
    print(table(rows))
    s = summary(rows)
    ok = rows and s["harness_error"] == 0 and s["out_of_memory"] == 0 and s["within"] >= args.min_within * s["timed"]
    print(f"\nsweep: {s['evaluations']} evaluations in {s['seconds'] / 60:.1f} min of judging, "
          f"{s['harness_error']} harness_error, {s['out_of_memory']} out of memory, "
          f"{s['within']} of {s['timed']} speedups within 1% of 1.0 ({s['host_bound']} host-bound apart): "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
