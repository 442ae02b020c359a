"""examples/slurm/kj-array.sbatch against a real Slurm (issue 44): a single-node cluster of Debian's munged,
slurmctld and slurmd (examples/slurm/local-cluster.sh) started here; an array run with one task requeued while it
judges, then the merge job, give the verdicts of a local `kj run`, nothing lost or duplicated; an array task
beyond the shard count fails with a message that says what to submit. Run by ctest (label slow); skipped (77)
without the packages or root. KJ_BINARY: the kj under test."""
import ctypes
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KJ = os.environ.get("KJ_BINARY", os.path.join(ROOT, "build", "app", "kj"))
CLUSTER = os.path.join(ROOT, "examples", "slurm", "local-cluster.sh")
SBATCH = os.path.join(ROOT, "examples", "slurm", "kj-array.sbatch")

missing = [t for t in ("munged", "slurmctld", "slurmd", "sbatch") if not shutil.which(t)]
if missing or os.geteuid() != 0:
    why = f"{', '.join(missing)} not installed (scripts/setup installs munge, slurmctld, slurmd, slurm-client)" \
        if missing else "not root (slurmd starts jobs as their user)"
    print(f"kj-test-skipped: {why}")
    sys.exit(77)
import pytest
from scale_support import verdicts, wait_for


def reap():
    """The daemons fork away from local-cluster.sh: as the subreaper, this process collects them when they end."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    folder = str(tmp_path_factory.mktemp("slurm"))
    r = subprocess.run([CLUSTER, "start", folder, "2"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    env = dict(os.environ, SLURM_CONF=os.path.join(folder, "slurm.conf"), KJ=KJ)
    yield env
    subprocess.run([CLUSTER, "stop", folder], capture_output=True, timeout=60)
    reap()


def candidates(folder):
    """Both example models' answers as samples 0 and 1 of L1 2-4: six candidates, correct and incorrect ones."""
    os.makedirs(folder)
    for sample, model in enumerate(("modelA", "modelB")):
        src = os.path.join(ROOT, "examples", "models", model)
        for name in sorted(os.listdir(src)):
            shutil.copy(os.path.join(src, name), os.path.join(folder, name.replace("sample_0", f"sample_{sample}")))
    return ["--device", "cpu", "--no-timing", "--candidates", folder]


def judged(db):
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
            return c.execute("SELECT count(*) FROM evaluations").fetchone()[0]
    except sqlite3.Error:
        return 0


def slurm_cmd(env, *args):
    return subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=60)


def job_field(env, job, field):
    out = slurm_cmd(env, "scontrol", "show", "job", job).stdout
    return next((w.split("=", 1)[1] for w in out.split() if w.startswith(field + "=")), "")


def running_job_of(env, task):
    """The job id Slurm gave array task `task` (e.g. 5_1) once it runs, else None."""
    for line in slurm_cmd(env, "squeue", "-h", "-o", "%i %A %t").stdout.splitlines():
        name, job, state = line.split()
        if name == task and state == "R":
            return job
    return None


def test_an_array_with_a_requeued_task_and_its_merge_give_the_local_verdicts(slurm, tmp_path):
    args = candidates(str(tmp_path / "candidates"))
    local_db = str(tmp_path / "local.sqlite")
    r = subprocess.run([KJ, "run", *args, "--db", local_db, "--run-id", "array"], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    expected = verdicts(local_db, "array")
    assert len(expected) == 6 and {v[0][0] for v in expected.values()} == {"correct", "incorrect"}, expected

    out = str(tmp_path / "out")
    env = dict(slurm, KJ_OUT=out, KJ_RUN_ID="array", KJ_SHARDS="2", KJ_ARGS=" ".join(args),
               TMPDIR=str(tmp_path / "node"))
    os.makedirs(env["TMPDIR"])
    r = subprocess.run(["bash", SBATCH], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    array = r.stdout.split()[2]  # "array job N (...)"
    # Task 1 requeued once kj has recorded a verdict in its node-local DB: Slurm's TERM reaches every process of
    # the task at once (kj stops, its workers ignore it: nothing "crashed"), the script saves the DB, and the next
    # attempt (after the cluster's 10 s credential expiry) starts from it.
    job = wait_for(lambda: running_job_of(env, f"{array}_1"), 120)
    assert job, slurm_cmd(env, "squeue").stdout
    assert wait_for(lambda: judged(os.path.join(env["TMPDIR"], f"kj-{job}", "kj.sqlite")) >= 1, 180)
    r = slurm_cmd(env, "scontrol", "requeue", f"{array}_1")
    assert r.returncode == 0, r.stderr
    merged = os.path.join(out, "array.sqlite")
    assert wait_for(lambda: not slurm_cmd(env, "squeue", "-h").stdout.strip(), 600), slurm_cmd(env, "squeue").stdout
    assert os.path.exists(merged), open(os.path.join(out, "merge.log")).read()
    logs = "".join(open(os.path.join(out, f)).read() for f in sorted(os.listdir(out)) if f.endswith(".log"))
    states = {i: (job_field(env, f"{array}_{i}", "JobState"), job_field(env, f"{array}_{i}", "ExitCode"))
              for i in (1, 2)}
    assert states == {1: ("COMPLETED", "0:0"), 2: ("COMPLETED", "0:0")}, logs
    assert job_field(env, f"{array}_1", "Restarts") == "1"
    assert verdicts(merged, "array") == expected  # nothing lost, nothing twice
    with open(os.path.join(out, "array.csv")) as f:
        assert len(f.read().splitlines()) == 7  # the merge job's results: a header and six rows


def test_an_array_task_beyond_the_shard_count_fails_saying_what_to_submit(slurm, tmp_path):
    out = str(tmp_path / "out")
    os.makedirs(out)
    env = dict(slurm, KJ_OUT=out, KJ_RUN_ID="wrong", KJ_SHARDS="2", KJ_ARGS="--device cpu --candidates builtin:identity")
    r = slurm_cmd(env, "sbatch", "--parsable", "--export=ALL", "--array=3", f"--output={out}/shard-%a.log", SBATCH)
    assert r.returncode == 0, r.stderr
    task = r.stdout.strip().split(";")[0] + "_3"
    assert wait_for(lambda: job_field(env, task, "JobState") in ("FAILED", "COMPLETED"), 120)
    assert job_field(env, task, "JobState") == "FAILED" and job_field(env, task, "ExitCode") == "2:0"
    with open(os.path.join(out, "shard-3.log")) as f:
        log = f.read()
    assert "KJ_SHARDS=2" in log and "--array=1-2" in log, log
    assert not os.path.exists(os.path.join(out, "shard-3-of-2.sqlite"))


def test_the_local_cluster_script_refuses_bad_use():
    for args, why in ((["start"], "usage:"), (["start", tempfile.mkdtemp(), "zero"], "NGPUS must be a positive")):
        r = subprocess.run([CLUSTER, *args], capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and why in r.stderr, r.stderr


if __name__ == "__main__":
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.abspath(__file__)]))
