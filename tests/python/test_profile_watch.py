"""scripts/gpu/profile_watch.py: which processes it samples, and how it sums py-spy's raw stacks per role."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gpu"))
import profile_watch  # noqa: E402


def test_a_frames_lines_are_one_row():
    assert profile_watch.frame_name("judge (<string>:162)") == "judge (<string>)"
    assert profile_watch.frame_name("<module> (torch/__init__.py:12)") == "<module> (torch/__init__.py)"


def test_stacks_are_summed_per_role(tmp_path, capsys):
    (tmp_path / "judge-1.txt").write_text(
        "thread (1);run_case (<string>:117);judge (<string>:162) 300\n"
        "thread (1);run_case (<string>:117);draw (<string>:64) 100\n")
    (tmp_path / "runner-2.txt").write_text("thread (2);forward (p.py:9) 200\nnot a stack line\n")
    profile_watch.summarize(str(tmp_path))
    out = capsys.readouterr().out
    assert "== judge: 1 process(es), 400 samples" in out
    assert "inclusive 100.0%    2.00 s  run_case (<string>)" in out
    assert "own        75.0%    1.50 s  judge (<string>)" in out
    assert "== runner: 1 process(es), 200 samples" in out


def test_only_kjs_judges_and_runners_are_sampled():
    assert profile_watch.role_of(os.getpid()) is None  # pytest is neither
