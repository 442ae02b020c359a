#!/usr/bin/env python3
"""`kj results --format json` on stdin -> one line per evaluation: verdict, strict verdict and the peak device
memory against the memory model's budget (docs/design.md); exit 1 unless every one is correct with strict pass."""
import json
import sys

GIB = 2 ** 30
rows, bad = json.load(sys.stdin), 0
for r in rows:
    m = r.get("memory") or {}
    ok = r["verdict"] == "correct" and r["strict_verdict"] == "pass"
    bad += not ok
    print(f"{r['level']}:{r['problem_id']:<4} {r['problem'][:28]:<28} {r['verdict']:<14} {r['strict_verdict']:<6} "
          f"peak {(m.get('device_peak_bytes') or 0) / GIB:6.2f} GiB  judge {(m.get('judge_device_bytes') or 0) / GIB:6.2f}"
          f"  runner {(m.get('runner_device_bytes') or 0) / GIB:6.2f}  budget {(m.get('budget_bytes') or 0) / GIB:6.2f}"
          + ("" if ok else f"  <-- {r['strict_failed']} {r['error'][-300:]!r}"))
print(f"{len(rows) - bad} of {len(rows)} correct with strict pass")
sys.exit(1 if bad or not rows else 0)
