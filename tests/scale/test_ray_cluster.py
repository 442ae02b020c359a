"""kj-ray on a local two-node Ray cluster (a head and a second node on this machine, CPU device), issue 44:
the same verdicts as a local `kj run`; a Ray worker killed with SIGKILL mid-run, and the driver killed and started
again, lose and duplicate nothing (counted in the database). Run by ctest (label slow); skipped (77) without Ray.
KJ_BINARY: the kj under test."""
import json
import os
import signal
import subprocess
import sys
import tempfile

try:
    import ray  # noqa: F401
    from ray.cluster_utils import Cluster
except ImportError:
    print("kj-test-skipped: Ray is not installed in this Python (scripts/setup installs it into .venv)")
    sys.exit(77)
import pytest
from scale_support import verdicts, wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KJ = os.environ.get("KJ_BINARY", os.path.join(ROOT, "build", "app", "kj"))
LAUNCHER = os.path.join(ROOT, "scale", "kj_ray.py")
sys.path.insert(0, os.path.dirname(LAUNCHER))
import kj_ray  # noqa: E402 (the launcher's own reading of a run's parts)
# The built-in problems with the README's LLM-style candidates (correct and incorrect ones), and five problems'
# own Model.
RUN = ["--device", "cpu", "--candidates", os.path.join(ROOT, "examples", "models", "modelA"), "--no-timing"]
IDENTITY = ["--device", "cpu", "--candidates", "builtin:identity", "--quick", "--level", "1", "--ids", "2-6"]


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=1)
    c.wait_for_nodes()
    yield c
    c.shutdown()


@pytest.fixture(scope="module")
def expected(tmp_path_factory):
    """The local run's verdicts of RUN, once for the tests that compare with it."""
    return local(tmp_path_factory.mktemp("local"), RUN, "local")


def local(tmp, args, run):
    db = str(tmp / "local.sqlite")
    r = subprocess.run([KJ, "run", *args, "--db", db, "--run-id", run], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    return verdicts(db, run)


def driver(cluster, db, run, args, shards):
    return subprocess.Popen([sys.executable, LAUNCHER, "--address", cluster.address, "--kj", KJ, "--shards",
                             str(shards), "--", *args, "--db", db, "--run-id", run],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def shard_processes(run):
    """pid -> parent pid of the `kj run --shard ... --run-id RUN` processes running now (this test's Ray tasks'
    kj: another test's shards, a Slurm array's beside it in CI, are not its to kill)."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        ids = [cmd[i + 1] for i in range(len(cmd) - 1) if cmd[i] == b"--run-id"]
        if len(cmd) > 2 and cmd[0] == KJ.encode() and cmd[1] == b"run" and b"--shard" in cmd and ids == [run.encode()]:
            out[int(pid)] = ppid
    return out


def status(db, run):
    runs = json.loads(subprocess.run([KJ, "runs", "--db", db, "--format", "json"], capture_output=True,
                                     text=True, check=True).stdout)
    return next(r["status"] for r in runs if r["run"] == run)


def test_ray_run_gives_the_local_verdicts(cluster, expected, tmp_path):
    assert len(expected) == 3
    p = driver(cluster, str(tmp_path / "ray.sqlite"), "ray", RUN, 4)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    assert verdicts(str(tmp_path / "ray.sqlite"), "ray") == expected
    assert "3 of 3 judged" in err and "ETA" not in err.splitlines()[-1]


def test_a_killed_ray_worker_loses_and_duplicates_nothing(cluster, tmp_path):
    db = str(tmp_path / "ray.sqlite")
    p = driver(cluster, db, "worker-killed", IDENTITY, 3)
    running = wait_for(lambda: shard_processes("worker-killed"), 120)
    assert running, "no kj run --shard started"
    pid, worker = next(iter(running.items()))
    os.kill(worker, signal.SIGKILL)  # the Ray worker process that runs the task: Ray runs the task again
    assert wait_for(lambda: not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z",
                    30), "the task's kj outlived its Ray worker"
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    dead = [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(f"kj-ray-{worker}-")]
    assert not dead, f"the killed task's folder was left behind: {dead}"
    got = verdicts(db, "worker-killed")
    assert len(got) == 5 and all(len(v) == 1 for v in got.values()), got
    assert all(v == [("correct", "pass")] for v in got.values()), got


def test_a_killed_driver_resumes_and_duplicates_nothing(cluster, tmp_path):
    db = str(tmp_path / "ray.sqlite")
    journal = db + ".kj-ray-driver-killed.json"
    p = driver(cluster, db, "driver-killed", IDENTITY, 5)
    assert wait_for(lambda: os.path.exists(journal), 300), "no shard was merged"
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    first = sum(len(v) for v in verdicts(db, "driver-killed").values())
    with open(journal) as f:
        merged = len(json.load(f)["merged"])
    # the database may hold one part more than the journal: the driver killed between a merge and its journal
    parts = len(kj_ray.merged_parts(db, "driver-killed", 5))
    assert merged <= parts <= merged + 1, (merged, parts)
    if parts < 5:  # a run with shards still to judge is never listed as finished (review 12 W2)
        assert status(db, "driver-killed") == f"partial ({parts} of 5 shards)"
    p = driver(cluster, db, "driver-killed", IDENTITY, 5)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    assert "merged before" in err and " 0 merged before" not in err
    got = verdicts(db, "driver-killed")
    assert len(got) == 5 and all(len(v) == 1 for v in got.values()), (first, got)
    assert status(db, "driver-killed") == "finished"  # every shard a part of its own (review 12 W3)
    merge = subprocess.run([KJ, "merge", db, "-o", str(tmp_path / "again.sqlite")], capture_output=True, text=True)
    assert merge.returncode == 0 and "lacks shard" not in merge.stderr, merge.stderr
    refused = driver(cluster, db, "driver-killed", IDENTITY, 7)  # another shard count for the same run
    _, err = refused.communicate(timeout=120)
    assert refused.returncode != 0 and "resume it with the same" in err


def test_the_oracle_gives_verdicts_as_they_finish_and_records_them(cluster, expected, tmp_path):
    ray.init(address=cluster.address, ignore_reinit_error=True, logging_level="ERROR", log_to_driver=False)
    try:
        judged = oracle_verdicts(kj_ray, tmp_path)
    finally:
        ray.shutdown()  # the cluster's nodes cannot be removed while this process is connected
    assert judged == {int(p.split("_")[0]): v[0] for (p, _), v in expected.items()}
    recorded = verdicts(str(tmp_path / "rewards.sqlite"), "rl")
    assert sorted(v[0] for v in recorded.values()) == sorted(judged.values())
    assert {c.split("#")[1] for _, c in recorded} == {"oracle"}  # one producer for the run (review 12 W5)


def oracle_verdicts(kj_ray, tmp_path):
    folder = os.path.join(ROOT, "examples", "models", "modelA")
    oracle = kj_ray.Oracle(str(tmp_path / "rewards.sqlite"), ["--device", "cpu", "--no-timing"], kj=KJ, run_id="rl")
    for problem in (2, 3, 4):
        with open(os.path.join(folder, f"level_1_problem_{problem}_sample_0_kernel.py")) as f:
            oracle.submit(1, problem, f.read(), tag=problem)
    got = {}
    for tag, row in oracle.results():
        assert row["verdict"], row.get("error")
        got[tag] = (row["verdict"], row["strict_verdict"])
    return got


def test_bad_options_are_refused_before_ray_starts(tmp_path):
    for kj, bad, why in ((KJ, ["--shard", "1/2"], "--shard is not for kj-ray"),
                         (KJ, ["--collect-only"], "--collect-only is"),
                         (str(tmp_path / "no-kj"), [], "not an executable file")):  # review 12 W4: no traceback
        r = subprocess.run([sys.executable, LAUNCHER, "--kj", kj, "--", *IDENTITY, *bad], capture_output=True,
                           text=True)
        assert r.returncode == 2 and why in r.stderr and "Traceback" not in r.stderr, r.stderr


if __name__ == "__main__":
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.abspath(__file__)]))
