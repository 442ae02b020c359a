#!/usr/bin/env python3
"""`kj results --format json` on stdin -> one line per evaluation: verdict, strict verdict and the peak device
memory against the memory model's budget (docs/design.md); exit 1 unless every one is correct with strict pass
and kj's judge stayed within its budget (the reference's measured workspace included; 5% for the allocator's
rounding and segments)."""
import json
import sys

GIB = 2 ** 30
rows, bad = json.load(sys.stdin), 0
for r in rows:
    m = r.get("memory") or {}
    judge, budget = m.get("judge_device_bytes") or 0, m.get("budget_bytes") or 0
    over = budget > 0 and judge > 1.05 * budget
    ok = r["verdict"] == "correct" and r["strict_verdict"] == "pass" and not over
    bad += not ok
    print(f"{r['level']}:{r['problem_id']:<4} {r['problem'][:28]:<28} {r['verdict']:<14} {r['strict_verdict']:<6} "
          f"peak {(m.get('device_peak_bytes') or 0) / GIB:6.2f} GiB  judge {(m.get('judge_device_bytes') or 0) / GIB:6.2f}"
          f"  runner {(m.get('runner_device_bytes') or 0) / GIB:6.2f}  budget {(m.get('budget_bytes') or 0) / GIB:6.2f}"
          + (f"  <-- the judge over its budget by {(judge - budget) / GIB:.2f} GiB" if over else "")
          + ("" if ok or over else f"  <-- {r['strict_failed']} {r['error'][-300:]!r}"))
print(f"{len(rows) - bad} of {len(rows)} correct with strict pass, the judge within its budget")
sys.exit(1 if bad or not rows else 0)
