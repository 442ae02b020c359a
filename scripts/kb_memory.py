#!/usr/bin/env python3
"""KernelBench's own eval_kernel_against_ref on identity candidates, with each evaluator's device memory sampled.

For the memory model's acceptance (docs/design.md): kj's peak device memory per evaluation is compared with what
KernelBench's evaluation of the same problem holds. Each problem is evaluated in a process of its own (JOBS at a
time); `nvidia-smi --query-compute-apps` samples every process's used memory every 100 ms, and a process's peak
is its largest sample. Nothing of KernelBench is copied: its src/ folder is imported as it is (kb_compat_check).

Usage: python3 scripts/kb_memory.py --kb-src KernelBench/src --problems KernelBench --level 1 --ids 19,23 --jobs 3
Prints one line per problem: "kb L1 19 peak 18.21 GiB correct True 52.1 s".
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kb_compat_check import load_kb_eval, problem_file  # noqa: E402


def evaluate_one(kb_src, path, perf_trials=10):
    """In a child process: KernelBench's eval of the problem's own Model as ModelNew (5 trials, `perf_trials`
    timed; KernelBench's eval_from_generations times 100)."""
    kb_eval = load_kb_eval(kb_src)
    ref = open(path).read()
    cand = ref + "\n\nModelNew = Model\n"
    with tempfile.TemporaryDirectory() as build_dir:
        result = kb_eval.eval_kernel_against_ref(ref, cand, seed_num=42, num_correct_trials=5, num_perf_trials=perf_trials,
                                                 measure_performance=True, build_dir=build_dir, device=0)
    print(f"correct {bool(result.correctness)}", flush=True)


class Sampler:
    """nvidia-smi's per-process used memory every 100 ms, kept as the largest value per pid [MiB]."""

    def __init__(self):
        self.proc = subprocess.Popen(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits", "-lms", "100"],
            stdout=subprocess.PIPE, text=True)
        self.peak = {}
        import threading

        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                pid, mib = int(parts[0]), int(parts[1])
                self.peak[pid] = max(self.peak.get(pid, 0), mib)

    def stop(self):
        self.proc.terminate()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb-src", required=True)
    parser.add_argument("--problems", required=True)
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--ids", required=True)
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--perf-trials", type=int, default=10)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        evaluate_one(args.kb_src, args.child, args.perf_trials)
        return 0
    sampler = Sampler()

    def run(number):
        path = problem_file(args.problems, args.level, int(number))
        start = time.time()
        child = subprocess.Popen([sys.executable, __file__, "--kb-src", args.kb_src, "--problems", args.problems,
                                  "--ids", number, "--perf-trials", str(args.perf_trials), "--child", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        out, err = child.communicate()
        time.sleep(0.3)  # the last samples of the process
        peak = sampler.peak.get(child.pid, 0) / 1024
        correct = "correct True" in out
        note = "" if child.returncode == 0 else f" exit {child.returncode}: {err.strip().splitlines()[-1:]}"
        return f"kb L{args.level} {number} peak {peak:.2f} GiB correct {correct} {time.time() - start:.1f} s{note}"

    with ThreadPoolExecutor(args.jobs) as pool:
        for line in pool.map(run, args.ids.split(",")):
            print(line, flush=True)
    sampler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
