#!/usr/bin/env python3
"""Times KernelBench problems' eager references with KernelBench's own timing code, for comparison with kj.

Runs kernelbench.timing.measure_ref_program_time (method cuda_event: 5 warmups, 1 discarded + 100 trials, L2
flush, mean rounded to 3 significant figures) on each selected problem and prints one JSON line per problem:
  {"level": 1, "number": 19, "file": "19_ReLU.py", "mean": 3.05, "std": ..., "seconds": ...}
Usage (GPU machine; a KernelBench checkout's src/ folder; nothing of KernelBench is copied here):
  python3 scripts/kb_timing_check.py --kb-src KernelBench/src --problems KernelBench/KernelBench --select 1:1-12 2:1-5
"""
import argparse
import contextlib
import importlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kb_compat_check import load_kb_eval  # noqa: E402  (the same stand-ins for KernelBench's LLM imports)


def parse_ids(text):
    ids = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        ids.update(range(int(lo), int(hi or lo) + 1))
    return ids


def selected(problems, select):
    for item in select:
        level, _, ids = item.partition(":")
        wanted = parse_ids(ids)
        folder = os.path.join(problems, f"level{level}")
        for name in sorted(os.listdir(folder), key=lambda n: int(n.split("_", 1)[0])):
            if name.endswith(".py") and int(name.split("_", 1)[0]) in wanted:
                yield int(level), int(name.split("_", 1)[0]), os.path.join(folder, name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb-src", required=True)
    parser.add_argument("--problems", required=True, help="the folder holding level1/, level2/, ...")
    parser.add_argument("--select", nargs="+", required=True, help="LEVEL:IDS, e.g. 1:1-12")
    args = parser.parse_args()
    load_kb_eval(args.kb_src)
    timing = importlib.import_module("kernelbench.timing")
    import torch

    for level, number, path in selected(args.problems, args.select):
        start = time.time()
        with contextlib.redirect_stdout(sys.stderr):  # KernelBench prints its progress
            stats = timing.measure_ref_program_time(os.path.basename(path), open(path).read(), num_warmup=5,
                                                    num_trials=100, timing_method="cuda_event",
                                                    device=torch.device("cuda:0"))
        line = {"level": level, "number": number, "file": os.path.basename(path), "seconds": time.time() - start}
        line.update(stats or {"error": "measure_ref_program_time returned None"})
        print(json.dumps(line), flush=True)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
