#!/usr/bin/env python3
"""`kj results --format json` on stdin -> one line per evaluation of the kb-honest stage against the verdicts its
candidate's header states (`# kj-expect: VERDICT`, `# kj-strict: pass|fail [CLASS,...]`); the last line counts
them, under the label given as the first argument (default kb-honest). Exit 1 unless every evaluation is as its
header says."""
import json
import re
import sys

GIB = 2 ** 30


def expected(path):
    text = open(path).read()
    verdict = re.search(r"# kj-expect: (\w+)", text).group(1)
    strict = re.search(r"# kj-strict: (\w+) ?([\w,]*)", text)
    return verdict, strict.group(1), [c for c in strict.group(2).split(",") if c]


label = sys.argv[1] if len(sys.argv) > 1 else "kb-honest"
rows, ok = json.load(sys.stdin), 0
for r in rows:
    verdict, strict, classes = expected(r["candidate"])
    failed = r["strict_failed"].split(",")
    good = r["verdict"] == verdict and r["strict_verdict"] == strict and all(c in failed for c in classes)
    ok += good
    peak = ((r.get("memory") or {}).get("device_peak_bytes") or 0) / GIB
    print(f"{'ok  ' if good else 'MISS'} L1 {r['problem_id']} {r['candidate'].split('/')[-1]}: {r['verdict']}/"
          f"{r['strict_verdict']} [{r['strict_failed']}] speedup {r['speedup']} peak {peak:.2f} GiB {' '.join(r['error'].split())[-160:]}")
print(f"{label}: {ok} of {len(rows)} as their headers say")
sys.exit(0 if rows and ok == len(rows) else 1)
