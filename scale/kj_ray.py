#!/usr/bin/env python3
"""kj-ray: one `kj run` spread over a Ray cluster (docs/scaling.md, "Ray").

    kj-ray [--address ADDR] [--shards M] [--gpus-per-task 1] -- <kj run options, --db and --run-id included>

The run's plan is cut into M shards (`kj run --shard i/M`, kj's fixed partition), more shards than judges, and
each shard is a Ray task that asks for one GPU (or --cpus-per-task on a CPU run): free judges claim the next shard,
so the wall time follows the total work, not the slowest static part. A task judges its shard with the real `kj`
on its node, into a copy of the driver's database taken when the driver started (so a resumed run judges only
what it lacks), and gives back that database; the driver merges it into its own with `kj merge` (a row it
already has is kept and the copy skipped: merging twice adds nothing). A task whose worker or node dies is run
again by Ray (--retries); what the dead one judged was never merged, so nothing is lost or counted twice. A driver
killed and started again with the same options resumes: shards merged before are skipped.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

REFUSED = {"--shard": "kj-ray cuts the plan into shards itself (--shards)",
           "--collect-only": "run `kj run --collect-only` without kj-ray",
           "--gpus": "Ray gives each task its GPU (--gpus-per-task)"}


def option(args, name, default=None):
    """The value of `name` in a kj argument list (`--db X` or `--db=X`), or default."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return default


def without(args, name):
    """args less `name` and its value."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == name:
            skip = True
        elif not a.startswith(name + "="):
            out.append(a)
    return out


def parse(argv):
    p = argparse.ArgumentParser(prog="kj-ray", description=__doc__.split("\n\n")[0],
                                epilog="everything after -- is given to `kj run` as it is (docs/scaling.md)")
    p.add_argument("--address", default=os.environ.get("RAY_ADDRESS", "auto"),
                   help="the Ray cluster (ray start's address; default $RAY_ADDRESS, else auto: the local one)")
    p.add_argument("--kj", default=default_kj(),
                   help="the kj binary, at the same path on every node (default $KJ, else kj on PATH, else this "
                        "checkout's build/app/kj)")
    p.add_argument("--shards", type=int, default=0,
                   help="shards to cut the plan into (default: one with one judge, else about sqrt(candidates x "
                        "(judges - 1)), at least one per judge)")
    p.add_argument("--gpus-per-task", type=float, default=None,
                   help="GPUs a task asks Ray for (default 1 on CUDA, 0 on --device cpu)")
    p.add_argument("--cpus-per-task", type=float, default=1, help="CPUs a task asks Ray for (default 1)")
    p.add_argument("--retries", type=int, default=3, help="times Ray runs a task again after its worker died")
    p.add_argument("kj_args", nargs=argparse.REMAINDER, help="-- then kj run's options")
    a = p.parse_args(argv)
    a.kj_args = a.kj_args[1:] if a.kj_args[:1] == ["--"] else a.kj_args
    for name, why in REFUSED.items():
        if option(a.kj_args, name) is not None or name in a.kj_args:
            p.error(f"{name} is not for kj-ray: {why}")
    if a.shards < 0:
        p.error("--shards must be at least 1")
    found = shutil.which(a.kj)
    if not found:
        p.error(f"--kj {a.kj}: not an executable file (build kj, or name it with --kj or $KJ)")
    a.kj = os.path.abspath(found)
    a.db = os.path.abspath(option(a.kj_args, "--db", "kj.sqlite"))
    a.run_id = option(a.kj_args, "--run-id") or time.strftime("ray-%Y%m%d-%H%M%S")
    a.kj_args = without(without(a.kj_args, "--db"), "--run-id")
    cpu = option(a.kj_args, "--device", "cuda" if shutil.which("nvidia-smi") else "cpu") == "cpu"
    if a.gpus_per_task is None:
        a.gpus_per_task = 0 if cpu else 1
    return a


def planned(kj, kj_args):
    """How many candidates the run's plan holds (kj run --collect-only on the driver)."""
    r = subprocess.run([kj, "run", *kj_args, "--collect-only"], capture_output=True, text=True)
    m = re.search(r"--collect-only: (\d+) candidate", r.stdout + r.stderr)
    if r.returncode != 0 or not m:
        print(f"kj-ray: kj run refused the options (exit {r.returncode}):\n{r.stderr.strip()}", file=sys.stderr)
        sys.exit(r.returncode or 2)
    return int(m.group(1))


def _die_with_parent():
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: a killed Ray worker takes its kj along


def scratch(kind):
    """A task's folder, named for its process; those of processes that died (a SIGKILLed Ray worker never ran its
    cleanup) are removed first, so that killed tasks leave no database copies behind."""
    root = tempfile.gettempdir()
    for name in os.listdir(root):
        m = re.fullmatch(r"kj-(?:ray|oracle)-(\d+)-.*", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"kj-{kind}-{os.getpid()}-")


def kj_env():
    """The task's environment for kj: Ray sets OMP_NUM_THREADS to the task's CPUs (1), which would time a CPU
    candidate on one thread where a local run uses the host's; kj's own settings decide, as in a local run."""
    env = dict(os.environ)
    if env.get("KJ_RAY_OMP_NUM_THREADS") is not None:
        env["OMP_NUM_THREADS"] = env["KJ_RAY_OMP_NUM_THREADS"]
    else:
        env.pop("OMP_NUM_THREADS", None)
    return env


def judge_shard(kj, kj_args, run_id, part, snapshot):
    """On a node: `kj run --shard part` into a copy of the driver's database; gives back that database."""
    work = scratch("ray")
    try:
        db = os.path.join(work, "kj.sqlite")
        if snapshot:
            with open(db, "wb") as f:
                f.write(snapshot)
        cmd = [kj, "run", *kj_args, "--db", db, "--run-id", run_id, "--shard", part, "--progress", "never"]
        r = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=_die_with_parent, env=kj_env())
        if r.returncode != 0:  # kj run exits 0 whatever the verdicts; 1 is --maxfail or kj's own error
            raise RuntimeError(f"kj run --shard {part} exited {r.returncode}:\n{r.stderr[-4000:]}")
        out = os.path.join(work, "out.sqlite")
        subprocess.run([kj, "db", "copy", "--db", db, "--to", out], check=True, capture_output=True)
        with open(out, "rb") as f:
            return {"part": part, "db": f.read(), "exit": r.returncode, "node": os.uname().nodename}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def judge_candidate(kj, kj_args, run_id, name, source):
    """On a node: one candidate file (a KernelBench name) judged by `kj run`; gives back its rows and database."""
    work = scratch("oracle")
    try:
        with open(os.path.join(work, name), "w") as f:
            f.write(source)
        db, summary = os.path.join(work, "kj.sqlite"), os.path.join(work, "summary.json")
        cmd = [kj, "run", *kj_args, "--candidates", os.path.join(work, name), "--db", db, "--run-id", run_id,
               "--summary-json", summary, "--progress", "never"]
        r = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=_die_with_parent, env=kj_env())
        with open(summary) as f:
            rows = json.load(f).get("rows", [])
        if r.returncode != 0 or not rows:
            raise RuntimeError(f"kj run on {name} exited {r.returncode}:\n{r.stderr[-4000:]}")
        out = os.path.join(work, "out.sqlite")
        subprocess.run([kj, "db", "copy", "--db", db, "--to", out], check=True, capture_output=True)
        with open(out, "rb") as f:
            return {"rows": rows, "db": f.read()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Oracle:
    """Verdicts and speedups for candidates a Ray program hands over as it goes (an RL trainer's rewards):

        oracle = Oracle("rewards.sqlite", ["--device", "cuda", "--kernelbench", KB, "--quick"])
        oracle.submit(1, 19, source, tag=rollout_id)       # level, problem id, the ModelNew file's text
        for tag, row in oracle.results():                  # as they finish: row["verdict"], row["speedup"], ...
            ...

    Each candidate is a Ray task (one GPU, or CPUs on --device cpu) running the real `kj run` on it; every
    evaluation is merged into `db` under one run, as `kj run` records it (kj results, report and compare read it).
    """

    def __init__(self, db, kj_args, kj=None, run_id=None, producer="oracle", gpus_per_task=None, cpus_per_task=1,
                 retries=3):
        import ray

        self.db, self.kj, self.kj_args = os.path.abspath(db), kj or default_kj(), list(kj_args)
        if option(self.kj_args, "--producer") is None:  # one producer for the run, not each file's folder
            self.kj_args += ["--producer", producer]
        self.run_id = run_id or time.strftime("oracle-%Y%m%d-%H%M%S")
        # the task's code travels with it: the nodes need Ray and kj, not this file on their Python path
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        cpu = option(self.kj_args, "--device", "cuda") == "cpu"
        gpus = (0 if cpu else 1) if gpus_per_task is None else gpus_per_task
        self._task = ray.remote(num_gpus=gpus, num_cpus=cpus_per_task, max_retries=retries,
                                retry_exceptions=False)(judge_candidate)
        self._pending, self._samples = {}, {}

    def submit(self, level, problem_id, source, tag=None):
        """Queues one candidate for KernelBench problem `level`/`problem_id`; returns its Ray object ref."""
        key = (level, problem_id)
        sample = self._samples[key] = self._samples.get(key, -1) + 1  # each submission its own sample
        name = f"level_{level}_problem_{problem_id}_sample_{sample}_kernel.py"
        ref = self._task.remote(self.kj, self.kj_args, self.run_id, name, source)
        self._pending[ref] = tag
        return ref

    def results(self, timeout=None):
        """(tag, row) per candidate as its judging ends, its evaluation merged into the database first; a
        candidate kj could not judge at all gives (tag, {"verdict": None, "error": ...})."""
        import ray

        while self._pending:
            ready, _ = ray.wait(list(self._pending), num_returns=1, timeout=timeout)
            if not ready:
                return
            tag = self._pending.pop(ready[0])
            try:
                result = ray.get(ready[0])
            except Exception as e:  # noqa: BLE001 - the caller gets every submission back
                cause = getattr(e, "cause", None) or e  # a RayTaskError: the task's own exception, not Ray's frame
                yield tag, {"verdict": None, "error": re.sub(r"\x1b\[[0-9;]*m", "", str(cause))}
                continue
            merge(self.kj, self.db, result)
            yield tag, result["rows"][0]


def default_kj():
    built = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "app", "kj")
    return os.environ.get("KJ") or shutil.which("kj") or built


def journal_path(db, run_id):
    return f"{db}.kj-ray-{re.sub(r'[^A-Za-z0-9_.-]', '_', run_id)}.json"


def load_journal(path, shards, kj_args):
    """The shards merged by an earlier driver of this run (same shard count and options), else none."""
    try:
        with open(path) as f:
            j = json.load(f)
    except (OSError, ValueError):
        return set()
    if j.get("shards") != shards or j.get("kj_args") != kj_args:
        sys.exit(f"kj-ray: {path} records this run with {j.get('shards')} shards and options {j.get('kj_args')}; "
                 "resume it with the same, or give another --run-id")
    return set(j.get("merged", []))


def save_journal(path, shards, kj_args, merged):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"shards": shards, "kj_args": kj_args, "merged": sorted(merged)}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def merge(kj, db, result):
    with tempfile.NamedTemporaryFile(suffix=".sqlite", delete=False) as f:
        f.write(result["db"])
    try:
        subprocess.run([kj, "merge", f.name, "-o", db], check=True, capture_output=True, text=True)
    finally:
        os.unlink(f.name)


def merged_parts(db, run_id, shards):
    """The shards of this run whose finished part the database holds: the truth the journal may trail by one (a
    driver killed between a merge and the journal's write must not judge that shard again)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            rows = c.execute("SELECT p.shard FROM run_parts p JOIN runs r ON r.id = p.run_id "
                             "WHERE r.run_uid = ? AND p.status = 'finished'", (run_id,)).fetchall()
    except sqlite3.Error:
        return set()
    return {int(i) for (text,) in rows for i, n in [text.split("/", 1)] if "/" in text and int(n) == shards}


def judged(db, run_id):
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            return c.execute("SELECT count(*) FROM evaluations e JOIN runs r ON r.id = e.run_id WHERE r.run_uid = ?",
                             (run_id,)).fetchone()[0]
    except sqlite3.Error:
        return 0


def snapshot_of(kj, db, run_id):
    """The driver's database as each task starts from it (its cached baselines, its problems), less the run
    itself: each task records its shard as a part of its own, which the merge keeps (kj runs, kj merge)."""
    if not os.path.exists(db):
        return b""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "snap.sqlite")
        subprocess.run([kj, "db", "copy", "--db", db, "--to", out], check=True, capture_output=True)
        with sqlite3.connect(out) as c:
            has_run = c.execute("SELECT 1 FROM runs WHERE run_uid = ?", (run_id,)).fetchone()
        if has_run:
            subprocess.run([kj, "runs", "rm", run_id, "--force", "--db", out], check=True, capture_output=True)
        with open(out, "rb") as f:
            return f.read()


def shard_count(a, judges):
    """The plan's size (None when not asked) and the shards to cut it into. Each shard costs a `kj run` start,
    a database copy and a merge (about 4 s on a 2-core CPU); each judge idles at the end for about half a shard
    while the last ones finish. One judge: one shard, with nothing to balance and the plan not even counted
    first (its probe is 2 s); more: about sqrt(candidates x (judges - 1)) shards, which weighs the two for
    evaluations about twice a shard's cost, never fewer than the judges (docs/scaling.md)."""
    if a.shards:
        return planned(a.kj, a.kj_args), a.shards
    if judges == 1:
        return None, 1
    total = planned(a.kj, a.kj_args)
    return total, max(1, min(total, max(judges, round(math.sqrt(total * (judges - 1))))))


def drive(a):
    import ray

    try:
        ray.init(address=a.address, logging_level="ERROR", log_to_driver=False)
    except ConnectionError as e:
        sys.exit(f"kj-ray: no Ray cluster at {a.address} ({e}): start one with `ray start --head` (the ray of "
                 "kj's .venv), or name it with --address (docs/scaling.md)")
    address = ray.get_runtime_context().gcs_address
    judges = max(1, int(ray.cluster_resources().get("GPU" if a.gpus_per_task else "CPU", 1)
                        / max(a.gpus_per_task or a.cpus_per_task, 1e-9)))
    total, shards = shard_count(a, judges)
    journal = journal_path(a.db, a.run_id)
    done = load_journal(journal, shards, a.kj_args) | merged_parts(a.db, a.run_id, shards)
    snapshot = ray.put(snapshot_of(a.kj, a.db, a.run_id))
    task = ray.remote(num_gpus=a.gpus_per_task, num_cpus=a.cpus_per_task, max_retries=a.retries,
                      retry_exceptions=False)(judge_shard)
    pending = {task.remote(a.kj, a.kj_args, a.run_id, f"{i}/{shards}", snapshot): i
               for i in range(1, shards + 1) if i not in done}
    planned_text = f"{total} candidates" if total is not None else "its candidates"
    print(f"kj-ray: run {a.run_id}: {planned_text} in {shards} shards ({len(done)} merged before) over "
          f"{judges} judges of the Ray cluster at {address}; database {a.db}", file=sys.stderr, flush=True)
    start, before, failed = time.time(), judged(a.db, a.run_id), []
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        i = pending.pop(ready[0])
        try:
            merge(a.kj, a.db, ray.get(ready[0]))
        except Exception as e:  # noqa: BLE001 - a shard that failed is named, the others go on
            failed.append(i)
            print(f"kj-ray: shard {i}/{shards} failed: {e}", file=sys.stderr, flush=True)
            continue
        done.add(i)
        save_journal(journal, shards, a.kj_args, done)
        now = judged(a.db, a.run_id)
        rate = (now - before) / max(time.time() - start, 1e-9)
        eta = f", ETA {(total - now) / rate / 60:.1f} min" if total and rate > 0 and now < total else ""
        print(f"kj-ray: {now} of {total or now} judged, {len(done)} of {shards} shards, {rate * 60:.1f}/min{eta}",
              file=sys.stderr, flush=True)
    final = judged(a.db, a.run_id)
    print(f"kj-ray: run {a.run_id}: {final} of {total if total is not None else final} candidates judged in "
          f"{time.time() - start:.0f} s (kj results --db {a.db} --run {a.run_id})", file=sys.stderr, flush=True)
    if failed:
        print(f"kj-ray: {len(failed)} shard(s) failed ({', '.join(map(str, sorted(failed)))}): "
              f"run kj-ray again with the same options and --run-id {a.run_id} to retry them", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(drive(parse(sys.argv[1:])))
