"""The judge's handshake per timed call, from a run's candidate timings (kj results --format json): per
evaluation the calibrated overhead (median, floor), the allowance, the most a forged sample can gain, the calls
charged, and whether the runner had a PID namespace of its own. Usage: handshake_table.py DB RUN."""
import json
import sqlite3
import statistics
import sys


def main(db, run):
    rows = sqlite3.connect(db).execute(
        "select e.id, t.params_json from evaluations e join timings t on t.evaluation_id = e.id "
        "where e.run_id = (select id from runs where run_uid = ?) and t.subject = 'candidate'", (run,)).fetchall()
    print("| eval | median overhead us | floor us | allowance us | max gain us | charged calls | calls | runner |")
    print("|---|---|---|---|---|---|---|---|")
    for evaluation, text in rows:
        params = json.loads(text)
        rounds = params.get("handshake") or []
        if not rounds:
            continue
        overheads = [b - s for h in rounds for s, b in zip(h["runner_samples_ms"], h["brackets_ms"])]
        h = rounds[0]
        print(f"| {evaluation} | {1e3 * statistics.median(overheads):.1f} | {1e3 * h['floor_ms']:.1f} | "
              f"{1e3 * h['allowance_ms']:.1f} | {1e3 * h['max_gain_ms']:.1f} | "
              f"{sum(r['charged_calls'] for r in rounds)} | {len(overheads)} | "
              f"{params.get('runner_isolation', 'own PID namespace')} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
