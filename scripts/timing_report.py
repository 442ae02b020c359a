#!/usr/bin/env python3
"""Summarizes the timing acceptance runs of scripts/gpu-check.sh as markdown (docs/methodology.md keeps the table).

  python3 scripts/timing_report.py KJ_DB [--kb-own kb-own.jsonl] [--runs rep-a rep-b] [--kb-run kb-method]

Repeatability: the eager reference's headline time of each problem in run B over run A. Identity: reference /
candidate within each run (the candidate is the problem's own Model). Each problem is classed by its kernel
trace: host-bound when its kernels keep the GPU busy for less than 90% of a call (the GPU waits for the host). Agreement: kj's `kernelbench` method (mean)
against KernelBench's own timing code (kb_timing_check.py) on the same problems. Floor: the empty forward.
"""
import argparse
import json
import sqlite3
import statistics
import sys

# A forward whose kernels keep the GPU busy for less than this share of its call time is host-bound in part: the
# GPU waits for the host to issue kernels, and its samples move with the host's speed.
GPU_BOUND_BUSY = 0.9

QUERY = """
SELECT p.level, p.number, p.name, t.subject, t.method,
       CASE json_extract(t.params_json, '$.headline') WHEN 'mean' THEN t.mean_ms ELSE t.median_ms END,
       json_extract(t.params_json, '$.throttled'), json_extract(t.params_json, '$.warning'),
       json_extract(t.params_json, '$.trace.busy_ms_per_call'), json_extract(t.params_json, '$.host_change')
FROM timings t JOIN evaluations e ON e.id = t.evaluation_id JOIN runs r ON r.id = e.run_id
JOIN problems p ON p.id = e.problem_id WHERE r.run_uid = ?"""


def load(db, run):
    out = {}
    for level, number, name, subject, method, ms, throttled, warning, busy, host_change in db.execute(QUERY, (run,)):
        row = out.setdefault((level, number), {"name": name})
        row[subject] = ms
        if busy and ms:  # the candidate's kernel trace: the share of a call the GPU was busy
            row["gpu_busy"] = busy / ms
        if host_change and host_change > row.get("host_change", 0):
            row["host_change"] = host_change
        if throttled:
            out[(level, number)]["throttled"] = True
        if warning:
            out[(level, number)]["warning"] = warning
    return out


def distribution(values, label):
    if not values:
        return f"{label}: no data"
    devs = sorted(abs(v - 1) for v in values)
    q = statistics.quantiles(values, n=20) if len(values) >= 2 else values * 19
    return (f"{label}: n={len(values)}, median {statistics.median(values):.4f}, p5 {q[0]:.4f}, p95 {q[-1]:.4f}, "
            f"min {min(values):.4f}, max {max(values):.4f}; |x-1| <= 0.5%: {sum(d <= 0.005 for d in devs)}, "
            f"<= 1%: {sum(d <= 0.01 for d in devs)}, <= 2%: {sum(d <= 0.02 for d in devs)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("--runs", nargs=2, default=["rep-a", "rep-b"])
    parser.add_argument("--kb-run", default="kb-method")
    parser.add_argument("--kb-own")
    args = parser.parse_args()
    db = sqlite3.connect(args.db)
    a, b = (load(db, r) for r in args.runs)
    print("| L | id | problem | ref A [ms] | ref B [ms] | B/A | identity A | identity B | floor [us] | notes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios, identity, floors = [], [], []
    by_class = {"GPU-bound": [], "host-bound": []}
    for key in sorted(set(a) | set(b)):
        ra, rb = a.get(key, {}), b.get(key, {})
        ref_a, ref_b = ra.get("reference_eager"), rb.get("reference_eager")
        ratio = ref_b / ref_a if ref_a and ref_b else None
        ids = [r["reference_eager"] / r["candidate"] for r in (ra, rb) if r.get("candidate") and r.get("reference_eager")]
        busy = ra.get("gpu_busy", rb.get("gpu_busy"))
        if ratio:
            ratios.append(ratio)
            if busy is not None:
                by_class["host-bound" if busy < GPU_BOUND_BUSY else "GPU-bound"].append(ratio)
        identity += ids
        floors += [r["empty_forward"] * 1000 for r in (ra, rb) if r.get("empty_forward")]
        notes = sorted({n for r in (ra, rb) for n in (("throttled",) if r.get("throttled") else ()) +
                        ((r["warning"],) if r.get("warning") else ())})
        if busy is not None:
            notes.insert(0, f"GPU busy {100 * busy:.0f}%")
        host = max(r.get("host_change", 0) for r in (ra, rb))
        if host > 0.05:
            notes.append(f"host probe moved {100 * host:.0f}%")
        notes = ", ".join(notes)
        fmt = lambda v, p=4: f"{v:.{p}g}" if v else "-"
        print(f"| {key[0]} | {key[1]} | {(ra or rb)['name']} | {fmt(ref_a)} | {fmt(ref_b)} | {fmt(ratio, 4)} | "
              f"{fmt(ids[0] if ids else None)} | {fmt(ids[1] if len(ids) > 1 else None)} | "
              f"{fmt(ra.get('empty_forward', 0) * 1000, 3)} | {notes} |")
    print()
    print("- " + distribution(ratios, f"repeatability (ref eager, {args.runs[1]} / {args.runs[0]})"))
    for label, values in by_class.items():
        print("- " + distribution(values, f"  of which {label} (GPU busy {'<' if label == 'host-bound' else '>='} "
                                          f"{100 * GPU_BOUND_BUSY:.0f}% of a call)"))
    print("- " + distribution(identity, "identity speedup (reference / identity candidate)"))
    if identity:
        inside = sum(0.98 <= v <= 1.02 for v in identity)
        print(f"- identity within [0.98, 1.02]: {inside} of {len(identity)} ({100 * inside / len(identity):.0f}%)")
    if floors:
        print(f"- empty-forward floor: median {statistics.median(floors):.1f} us, min {min(floors):.1f}, "
              f"max {max(floors):.1f} (n={len(floors)})")
    if args.kb_own:
        ours = load(db, args.kb_run)
        agreement = []
        print("\n| L | id | problem | kj kernelbench mean [ms] | KernelBench's own mean [ms] | ratio |")
        print("|---|---|---|---|---|---|")
        for line in open(args.kb_own):
            if not line.startswith("{"):  # KernelBench's own progress prints
                continue
            theirs = json.loads(line)
            mine = ours.get((theirs["level"], theirs["number"]), {}).get("reference_eager")
            if mine and theirs.get("mean"):
                agreement.append(mine / theirs["mean"])
            print(f"| {theirs['level']} | {theirs['number']} | {theirs['file']} | {mine if mine else '-'} | "
                  f"{theirs.get('mean', theirs.get('error'))} | "
                  f"{mine / theirs['mean'] if mine and theirs.get('mean') else '-'} |")
        print()
        print("- " + distribution(agreement, "agreement (kj kernelbench method / KernelBench's own)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
