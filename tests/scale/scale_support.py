"""What the scale-out tests (Ray, Slurm) read of kj's database and how they wait."""
import sqlite3
import time


def verdicts(db, run):
    """(problem file, candidate path#producer#sample) -> [(verdict, strict verdict)]: a list, so that a duplicate
    shows."""
    out = {}
    with sqlite3.connect(db) as c:
        for p, cand, v, s in c.execute(
                "SELECT p.file_name, c.path || '#' || c.producer || '#' || c.sample, e.verdict, e.strict_verdict "
                "FROM evaluations e JOIN runs r ON r.id = e.run_id JOIN problems p ON p.id = e.problem_id "
                "JOIN candidates c ON c.id = e.candidate_id WHERE r.run_uid = ?", (run,)):
            out.setdefault((p, cand), []).append((v, s))
    return out


def wait_for(predicate, seconds):
    """predicate()'s first true value within `seconds` (polled every 0.2 s), else None."""
    end = time.time() + seconds
    while time.time() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return None
