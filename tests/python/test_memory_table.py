"""scripts/gpu/memory_table.py: the gate's largest-problem check fails a judge over its memory budget."""
import json
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gpu", "memory_table.py")
GIB = 2 ** 30


def row(judge_gib, budget_gib, verdict="correct"):
    return {"level": 1, "problem_id": 38, "problem": "L1Norm_", "verdict": verdict, "strict_verdict": "pass",
            "strict_failed": "", "error": "",
            "memory": {"device_peak_bytes": int(40 * GIB), "judge_device_bytes": int(judge_gib * GIB),
                       "runner_device_bytes": int(16 * GIB), "budget_bytes": int(budget_gib * GIB)}}


def table(rows):
    done = subprocess.run([sys.executable, SCRIPT], input=json.dumps(rows), capture_output=True, text=True)
    return done.returncode, done.stdout


def test_within_the_budget_passes():
    code, out = table([row(30.0, 31.0), row(32.0, 31.0)])  # 3% over: the allocator's rounding
    assert code == 0 and "2 of 2 correct" in out


def test_a_judge_over_its_budget_fails_and_says_by_how_much():
    code, out = table([row(30.0, 31.0), row(34.1, 31.0)])
    assert code == 1
    assert "over its budget by 3.10 GiB" in out and "1 of 2 correct" in out


def test_an_incorrect_row_still_fails():
    code, out = table([row(1.0, 31.0, verdict="incorrect")])
    assert code == 1 and "0 of 1" in out
