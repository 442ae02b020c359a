#!/usr/bin/env python3
"""Runs KernelBench's own eval_kernel_against_ref on candidates and compares its verdicts with kj's compatible ones.

Usage (on a GPU machine, with a KernelBench checkout's src/ folder; nothing of KernelBench is copied here):
  python3 scripts/kb_compat_check.py --kb-src KernelBench/src --problems kernelbench/suite \
      --candidates examples/candidates/cuda --kj-json results.json
where results.json is `kj results --format json` of a kj run over the same problems and candidates.
"""
import argparse
import importlib
import json
import os
import re
import sys
import tempfile
import time
import types


def load_kb_eval(src):
    # Import kernelbench.eval without the package __init__, and give its utils module empty stand-ins for the LLM
    # client libraries (dotenv, openai, litellm) that evaluation never calls; KernelBench's own code runs unchanged.
    for name, attrs in {"dotenv": {"load_dotenv": lambda *a, **k: None}, "openai": {"OpenAI": None},
                        "litellm": {"completion": None}}.items():
        try:
            importlib.import_module(name)
        except ImportError:
            module = types.ModuleType(name)
            module.__dict__.update(attrs)
            sys.modules[name] = module
    package = types.ModuleType("kernelbench")
    package.__path__ = [os.path.join(src, "kernelbench")]
    sys.modules["kernelbench"] = package
    return importlib.import_module("kernelbench.eval")


def problem_file(problems, level, number):
    folder = os.path.join(problems, f"level{level}")
    for name in os.listdir(folder):
        if name.split("_", 1)[0] == str(number):
            return os.path.join(folder, name)
    raise FileNotFoundError(f"no problem {number} in {folder}")


def kb_verdict(result):
    if not result.compiled:
        return "compile_or_load_error"
    if result.correctness:
        return "correct"
    return "runtime_error" if "runtime_error" in result.metadata else "incorrect"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb-src", required=True)
    parser.add_argument("--problems", required=True)
    parser.add_argument("--candidates", required=True)
    parser.add_argument("--kj-json", required=True)
    parser.add_argument("--shard", default="0/1", help="K/N: only every N-th candidate from the K-th (parallel runs)")
    args = parser.parse_args()
    shard, shards = (int(x) for x in args.shard.split("/"))
    kb_eval = load_kb_eval(args.kb_src)
    pattern = re.compile(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py")
    theirs_by_name = {}
    names = [n for n in sorted(os.listdir(args.candidates)) if pattern.fullmatch(n)]
    for name in names[shard::shards]:
        m = pattern.fullmatch(name)
        ref = open(problem_file(args.problems, int(m[1]), int(m[2]))).read()
        cand = open(os.path.join(args.candidates, name)).read()
        with tempfile.TemporaryDirectory() as build_dir:
            result = kb_eval.eval_kernel_against_ref(ref, cand, seed_num=42, num_correct_trials=5,
                                                     measure_performance=False, build_dir=build_dir, device=0)
        theirs_by_name[name] = kb_verdict(result)
        print(f"{name:45} kernelbench={theirs_by_name[name]}", flush=True)
    while not os.path.exists(args.kj_json):  # kj may still be running beside this script
        time.sleep(5)
    kj = {os.path.basename(r["candidate"]): r for r in json.load(open(args.kj_json))}
    agree = total = 0
    for name, theirs in theirs_by_name.items():
        ours = kj.get(name, {}).get("verdict", "missing")
        same = theirs == ours or (theirs == "compile_or_load_error" and ours in ("compile_error", "load_error"))
        agree += same
        total += 1
        print(f"{name:45} kernelbench={theirs:22} kj={ours:14} {'agree' if same else 'DIFFER'}")
    print(f"{agree} of {total} verdicts agree")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
