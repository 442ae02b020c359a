"""Per problem of a run of identity candidates: the candidate's and the reference's median event time, the
candidate's kernels' own time per call (its trace), each side's time beyond it, and the gap (identity_bias.sh).

usage: python3 bias_table.py DB RUN_ID
"""
import sqlite3, json, sys
db = sqlite3.connect(sys.argv[1]); run = sys.argv[2]
q = """select p.number, p.name, t.subject, t.median_ms, t.params_json from evaluations e join runs r on r.id=e.run_id
join problems p on p.id=e.problem_id join timings t on t.evaluation_id=e.id
where r.run_uid=? and t.subject in ('candidate','reference_eager') and t.clock in ('cuda-event','cupti-kernel-sum') order by p.number"""
d = {}
for num, name, subj, med, pj in db.execute(q, (run,)):
    p = json.loads(pj); d.setdefault(num, {'name': name})[subj] = (med, p)
for num, x in d.items():
    if 'candidate' not in x or 'reference_eager' not in x: continue
    c, cp = x['candidate']; r, rp = x['reference_eager']
    tr = cp.get('trace') or {}
    busy = tr.get('busy_ms_per_call')
    nk = len(tr.get('first_kernels', []))//max(tr.get('calls',1),1) if tr else 0
    if busy is None: busy = float('nan')
    print(f"{'*' if abs(r/c-1)>0.01 else ' '}{num:3d} {x['name'][:30]:30s} busy {busy:8.3f} k/call {nk:3d} cand+{(c-busy)*1000:7.1f}us ref+{(r-busy)*1000:7.1f}us diff {(c-r)*1000:7.1f}us ratio {r/c:.3f}")
