#!/usr/bin/env python3
"""Writes a candidate set with a deliberate slowdown on some problems, for kj compare's GPU acceptance.

Each candidate is the problem's own Model (as `kj run --candidates identity` uses it) subclassed as ModelNew;
on every EVERY-th problem its forward then spins the GPU (torch.cuda._sleep) on the same stream for a given
share (cycling through SLOWDOWNS) of the identity candidate's median time in an earlier run. The other
problems get the same subclass without the spin, so they must compare as unchanged. OUT.slowed.json (beside
the folder, so that kj does not read it as a candidate) lists the slowed problems, for checking kj compare.

  kj problems --kernelbench KB --level 1 --ids 1-30 --format json > problems.json
  kj results --run cmp-a --format json > results.json
  scripts/make_slow_candidates.py --problems problems.json --results results.json --out slow/
"""
import argparse
import json
import pathlib
import sys

TEMPLATE = '''

# --- kerneljudge: a deliberately slower candidate (scripts/make_slow_candidates.py) ---
import torch as _kj_torch

_KJ_SLEEP_MS = {sleep_ms!r}  # {share:.0%} of the identity candidate's median, {median_ms:.4g} ms


class ModelNew(Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._kj_cycles = 0
        if _KJ_SLEEP_MS > 0:
            # How many spin cycles make a millisecond on this GPU, measured once with CUDA events.
            start = _kj_torch.cuda.Event(enable_timing=True)
            end = _kj_torch.cuda.Event(enable_timing=True)
            _kj_torch.cuda._sleep(1000)
            start.record()
            _kj_torch.cuda._sleep(20_000_000)
            end.record()
            end.synchronize()
            self._kj_cycles = int(20_000_000 / start.elapsed_time(end) * _KJ_SLEEP_MS)

    def forward(self, *args, **kwargs):
        out = super().forward(*args, **kwargs)
        if self._kj_cycles:
            _kj_torch.cuda._sleep(self._kj_cycles)
        return out
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", required=True, help="kj problems --format json output")
    parser.add_argument("--results", required=True, help="kj results --format json of the identity run")
    parser.add_argument("--out", required=True, help="folder to write the candidates into")
    parser.add_argument("--every", type=int, default=3, help="slow down every n-th problem (default 3)")
    parser.add_argument("--slowdowns", default="0.05,0.10", help="shares to cycle through (default 0.05,0.10)")
    args = parser.parse_args()
    shares = [float(s) for s in args.slowdowns.split(",")]
    problems = json.loads(pathlib.Path(args.problems).read_text())
    medians = {}
    for row in json.loads(pathlib.Path(args.results).read_text()):
        if row.get("candidate_median_ms") is not None and row.get("verdict") == "correct":
            medians[(row["level"], row["problem_id"])] = row["candidate_median_ms"]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    slowed, written = [], 0
    for problem in sorted(problems, key=lambda p: (p["level"], p["id"])):
        key = (problem["level"], problem["id"])
        if key not in medians:
            print(f"skipping L{key[0]} {key[1]}: no correct identity timing", file=sys.stderr)
            continue
        index = written  # counts written candidates only, so that skipped problems do not shift the pattern
        share = shares[(index // args.every) % len(shares)] if index % args.every == 0 else 0.0
        source = pathlib.Path(problem["file"]).read_text()
        text = source + TEMPLATE.format(sleep_ms=medians[key] * share, share=share, median_ms=medians[key])
        name = f"level_{key[0]}_problem_{key[1]}_sample_0_kernel.py"
        (out / name).write_text(text)
        written += 1
        if share > 0:
            slowed.append({"level": key[0], "problem_id": key[1], "slowdown": share})
    out.with_name(out.name + ".slowed.json").write_text(json.dumps(slowed, indent=1) + "\n")
    print(f"{written} candidates in {out}, {len(slowed)} slowed")


if __name__ == "__main__":
    main()
