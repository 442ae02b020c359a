#!/usr/bin/env python3
"""Runs one command and samples, with py-spy, every kj judge (`kj worker`) and runner (`kj runner`) process it
starts; then prints where their Python time went (scripts/gpu/profile.sh, the `profile` stage; issue 41).

usage: profile_watch.py PY_SPY OUT_DIR -- COMMAND...

Each process is recorded in OUT_DIR/<role>-<pid>.txt (py-spy's raw format: a stack per line, ';'-separated frames,
then a count), non-blocking (the process is never paused: its timing is not disturbed), so only Python frames are
seen: a thread inside C++ (the timing loop, a kernel launch) counts under the Python frame that called it.
"""
import collections
import os
import subprocess
import sys
import time

RATE = int(os.environ.get("PROFILE_RATE", "200"))


def role_of(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    if len(argv) < 2 or os.path.basename(argv[0].decode(errors="replace")) != "kj":
        return None
    return {b"worker": "judge", b"runner": "runner"}.get(argv[1])


def watch(py_spy, out_dir, command):
    seen, spies = set(), []
    proc = subprocess.Popen(command)
    while proc.poll() is None:
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in seen:
                continue
            pid = int(name)
            role = role_of(pid)
            if role is None:
                continue
            seen.add(pid)
            out = os.path.join(out_dir, f"{role}-{pid}.txt")
            spies.append(subprocess.Popen([py_spy, "record", "--pid", str(pid), "--nonblocking", "--rate", str(RATE),
                                           "--format", "raw", "--output", out],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(0.02)
    for spy in spies:
        try:
            spy.wait(timeout=20)
        except subprocess.TimeoutExpired:
            spy.kill()
    return proc.returncode


def frame_name(frame):
    """`function (file.py:line)` -> `function (file.py)`: lines split one function into many rows."""
    head, _, where = frame.rpartition(" (")
    return f"{head} ({where.split(':')[0]})" if head else frame


def summarize(out_dir, top=25):
    for role in ("judge", "runner"):
        own, inclusive, total = collections.Counter(), collections.Counter(), 0
        files = [f for f in os.listdir(out_dir) if f.startswith(role + "-")]
        for name in files:
            with open(os.path.join(out_dir, name)) as f:
                for line in f:
                    stack, _, count = line.rstrip("\n").rpartition(" ")
                    if not stack or not count.isdigit():
                        continue
                    n, frames = int(count), [frame_name(x) for x in stack.split(";")]
                    total += n
                    own[frames[-1]] += n
                    for frame in set(frames[1:]):  # the first is the thread
                        inclusive[frame] += n
        print(f"== {role}: {len(files)} process(es), {total} samples at {RATE} Hz ({total / RATE:.1f} s with a "
              "Python frame)")
        for label, counts in (("inclusive", inclusive), ("own", own)):
            for frame, n in counts.most_common(top):
                print(f"  {label:9} {100 * n / max(total, 1):5.1f}% {n / RATE:7.2f} s  {frame[:140]}")


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    py_spy, out_dir, command = sys.argv[1], sys.argv[2], sys.argv[4:]
    os.makedirs(out_dir, exist_ok=True)
    rc = watch(py_spy, out_dir, command)
    summarize(out_dir)
    return rc


if __name__ == "__main__":
    sys.exit(main())
