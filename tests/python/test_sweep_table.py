"""scripts/gpu/sweep_table.py: the sweep's per-level table and its pass rule (issue 41's acceptance)."""
import io
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gpu"))
import sweep_table  # noqa: E402


def row(level, verdict="correct", speedup=1.0, reason="", phases=None):
    return {"level": level, "verdict": verdict, "speedup": speedup, "reason": reason,
            "phases": phases if phases is not None else {"strict": 2.0, "timing": 1.0, "start": 1.0}}


def run(rows, monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(rows)))
    code = sweep_table.main(list(args))
    return code, capsys.readouterr().out


def test_a_clean_sweep_passes_with_a_row_per_level_and_all(monkeypatch, capsys):
    rows = [row(1), row(1, speedup=1.009), row(2, speedup=0.995), row(3, speedup=1.0)]
    code, out = run(rows, monkeypatch, capsys)
    assert code == 0
    assert "| 1 | 2 | 2 | - | 0 | 0 | 4.0 |" in out
    assert "| all | 4 | 4 |" in out and "4 of 4 |" in out
    assert "strict 50%" in out
    assert out.rstrip().endswith("PASS")


def test_a_harness_error_or_out_of_memory_fails_the_sweep(monkeypatch, capsys):
    code, out = run([row(1), row(1, "harness_error", None)], monkeypatch, capsys)
    assert code == 1 and "harness_error 1" in out and "FAIL" in out
    code, out = run([row(2), row(2, "runtime_error", None, reason="out_of_memory")], monkeypatch, capsys)
    assert code == 1 and "1 out of memory" in out


def test_too_few_speedups_near_one_fail(monkeypatch, capsys):
    rows = [row(1, speedup=1.2), row(1, speedup=0.8), row(1), row(1)]
    code, out = run(rows, monkeypatch, capsys)
    assert code == 1 and "2 of 4 speedups within 1% of 1.0" in out
    code, _ = run(rows, monkeypatch, capsys, "--min-within", "0.5")
    assert code == 0


def test_no_rows_is_a_failure_not_a_pass(monkeypatch, capsys):
    code, out = run([], monkeypatch, capsys)
    assert code == 1 and "FAIL" in out


def test_host_bound_speedups_are_counted_apart(monkeypatch, capsys):
    rows = [row(3), row(3, speedup=1.004), row(3, speedup=0.65), row(3, speedup=1.41)]
    rows[2]["speedup_host_bound"] = rows[3]["speedup_host_bound"] = True
    code, out = run(rows, monkeypatch, capsys)
    assert code == 0 and "2 of 2 speedups within 1% of 1.0 (2 host-bound apart)" in out
    assert "| 3 | 4 | 4 |" in out and "2 of 2 | 2 |" in out
