"""The strict verdict's case classes (kj_verify.Verifier): an honest candidate passes every class; a wrong value,
shape, structure, an input changed in place, a result that depends on the RNG, sizes baked in and a NaN
swallowed each fail their class; a constant reference is uninformative; the problem's own failure ends the
evaluation, while a candidate that blames the problem only fails its case.

The candidate runs in a real kj_runner.RunnerSession in this process; `Bridge` stands in for the C++ runner
loop (runner.cpp) only: it turns a forward into the reply and host-arena bytes the judge reads."""
import os
import tempfile

import pytest
import torch

from conftest import call_forward

import kj_judge as judge
import kj_runner
import kj_verify
from kj_common import KjError

PROBLEM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 3.0

rows = 16
cols = 32

def get_inputs():
    return [torch.rand(rows, cols)]

def get_init_inputs():
    return []
'''

HONEST = "return x * 3.0"


def candidate(forward):
    return ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
            f"        {forward}\n")


class Bridge:
    """runner.cpp's forward, in Python: the runner's outputs copied into a host arena file, described as
    export_outputs describes them; a KjError becomes a failure reply with its kind and reason."""

    def __init__(self, runner):
        self.runner = runner
        self.paths = []

    def request(self, text):
        import json

        message = json.loads(text)
        try:
            output, changed, overlap = call_forward(self.runner, message["recipe"], message.get("sizes") or {},
                                                    message.get("check_inputs", False))
        except KjError as exc:
            return json.dumps({"ok": False, "kind": exc.kind, "reason": exc.reason, "error": exc.message})
        reply = {"ok": True, "inputs_changed": changed or [], "overlap": overlap, "outputs": []}
        if isinstance(output, torch.Tensor):
            reply["structure"], items = "tensor", [output]
        elif type(output) in (tuple, list):
            reply["structure"], items = type(output).__name__, list(output)
        else:
            reply.update(structure="other", type=type(output).__name__)
            return json.dumps(reply)
        data = b""
        for item in items:
            if not isinstance(item, torch.Tensor):
                reply["outputs"].append({"tensor": False, "type": type(item).__name__})
                continue
            flat = item.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
            strides, step = [], 1
            for d in reversed(item.shape):
                strides.insert(0, step)
                step *= max(d, 1)
            reply["outputs"].append({"tensor": True, "dtype": str(item.dtype).replace("torch.", ""),
                                     "shape": list(item.shape), "strides": strides, "offset": len(data),
                                     "nbytes": len(flat), "span_bytes": len(flat)})
            data += flat
        fd, path = tempfile.mkstemp()
        os.write(fd, data or b"\0")
        os.close(fd)
        self.paths.append(path)
        reply["arena"] = {"id": 1, "kind": "file", "path": path, "bytes": max(1, len(data))}
        return json.dumps(reply)

    def release(self):
        while self.paths:
            os.unlink(self.paths.pop())


def verifier(forward=HONEST, problem=PROBLEM, seed=42):
    session = judge.Session("cpu")
    session.load_problem("p.py", problem, {})
    session.build_reference(seed)
    runner = kj_runner.RunnerSession("cpu", {}, prebuilt=False)
    runner.load("p.py", problem, "c.py", candidate(forward), {}, seed)
    bridge = Bridge(runner)
    session.remote = judge.RemoteCandidate(bridge.request, "cpu", bridge.release, session.memory)
    return kj_verify.Verifier(session, seed)


def statuses(cases):
    return [c["status"] for c in cases]


def test_an_honest_candidate_passes_every_class():
    v = verifier()
    random = v.run_class("random")
    assert statuses(random) == ["pass"] * kj_verify.RANDOM_SEEDS
    assert len({c["seed"] for c in random}) == kj_verify.RANDOM_SEEDS
    assert all(c["judged_against"] == "fp32" and c["mismatches"] == 0 for c in random)
    for cls in ("nan", "inf", "denormal", "negzero", "distribution", "extreme", "determinism", "shape",
                "inputs", "output"):
        assert set(statuses(v.run_class(cls))) == {"pass"}, cls


def test_wrong_values_fail_with_the_numbers():
    case = verifier("return x * 3.5").run_class("random")[0]
    assert case["status"] == "fail" and case["mismatches"] == 16 * 32
    assert case["judged_against"] == "fp32"  # far off: the float64 reference could not change it
    assert "values outside tolerance" in case["message"] and case["first_index"] == 0


def test_a_half_precision_candidate_fails_against_float64_too():
    # close enough that the float64 reference is consulted, and still far beyond fp32's rounding
    case = verifier("return (x.half() * 3.0).float()").run_class("random")[0]
    assert case["status"] == "fail" and case["judged_against"] == "fp64"


@pytest.mark.parametrize("forward, words", [
    ("return (x * 3.0)[:8]", "shape [8, 32], expected [16, 32]"),
    ("return x.double() * 3.0", "dtype torch.float64, expected torch.float32"),
    ("return (x * 3.0,)", "returned tuple, expected one torch.Tensor"),
    ("return 3", "returned int, expected a plain dense torch.Tensor"),
    ("x.mul_(3.0)\n        return x", "overlaps an input"),
])
def test_a_malformed_output_fails_its_case_and_the_output_class(forward, words):
    v = verifier(forward)
    case = v.run_class("random")[0]
    assert case["status"] == "fail" and words in case["message"]
    summary = v.run_class("output")[0]
    assert summary["status"] == "fail" and summary["mismatches"] == kj_verify.RANDOM_SEEDS
    assert words in summary["message"]


def test_a_forward_that_raises_fails_its_case():
    case = verifier("raise ValueError('boom')").run_class("random")[0]
    assert case["status"] == "fail"
    assert case["message"].startswith("ModelNew.forward failed (runtime_error)") and "boom" in case["message"]


def test_an_input_changed_in_place_fails_the_inputs_class():
    v = verifier("y = x * 3.0\n        x.zero_()\n        return y")
    case = v.run_class("inputs")[0]
    assert case["status"] == "fail" and "modified in place" in case["message"]


def test_a_result_that_depends_on_the_rng_is_not_deterministic():
    case = verifier("return x * 3.0 + 1e-3 * torch.rand_like(x)").run_class("determinism")[0]
    assert case["status"] == "fail" and "different outputs" in case["message"]


def test_a_nan_swallowed_fails_the_nan_class():
    v = verifier("return torch.nan_to_num(x) * 3.0")
    assert statuses(v.run_class("random")) == ["pass"] * kj_verify.RANDOM_SEEDS
    case = v.run_class("nan")[0]
    assert case["status"] == "fail" and case["nonfinite_mismatches"] > 0


def test_sizes_baked_into_the_candidate_fail_the_shape_class():
    v = verifier("return (x.reshape(16, 32) * 3.0)")
    assert v.shape_overrides() == {"rows": 5, "cols": 7}  # primes at most a third of 16 and 32
    cases = v.run_class("shape")
    assert statuses(cases) == ["fail", "fail"] and "(sizes {'rows': 5, 'cols': 7})" in cases[0]["message"]


def test_shape_overrides_pick_smaller_odd_sizes():
    source = PROBLEM.replace("rows = 16", "rows = 64\nsmall = 5\ntiny = 2\neight = 8")
    assert verifier(problem=source).shape_overrides() == {"rows": 19, "small": 4, "eight": 2, "cols": 7}


def test_a_problem_without_size_constants_skips_the_shape_class():
    source = PROBLEM.replace("rows = 16\ncols = 32\n", "").replace("rand(rows, cols)", "rand(16, 32)")
    cases = verifier(problem=source).run_class("shape")
    assert statuses(cases) == ["uninformative"] and "no integer size constants" in cases[0]["message"]


def test_a_constant_reference_is_uninformative():
    source = PROBLEM.replace("return x * 3.0", "return x - x")
    assert statuses(verifier("return x - x", problem=source).run_class("random")) == ["uninformative"] * 6
    assert statuses(verifier("return x", problem=source).run_class("random")) == ["fail"] * 6


def test_the_problems_own_get_inputs_failure_ends_the_evaluation():
    source = PROBLEM.replace("return [torch.rand(rows, cols)]", "raise ValueError('no inputs')")
    with pytest.raises(KjError) as caught:
        verifier(problem=source).run_class("random")
    assert caught.value.kind == "problem_error" and "no inputs" in caught.value.message


def test_a_candidate_blaming_the_problem_only_fails_its_case():
    # kj's error type raised inside forward is the candidate's runtime_error in the runner already (and the
    # runner's word would be checked too: the judge's own draw of the recipe works)
    case = verifier("import kj_common\n        raise kj_common.KjError('problem_error', 'not mine')").run_class(
        "random")[0]
    assert case["status"] == "fail" and "runtime_error" in case["message"]


def test_an_unknown_class_is_refused():
    with pytest.raises(ValueError):
        verifier().run_class("nonsense")


GIB = 1 << 30


@pytest.mark.parametrize("need, held, budget, free, on_device", [
    (4 * GIB, 2 * GIB, 8 * GIB, 70 * GIB, True),     # within kj's budget
    (32 * GIB, 13 * GIB, 25 * GIB, 60 * GIB, True),  # past it, the device has the room (L1 19 at full size, H100)
    (32 * GIB, 13 * GIB, 25 * GIB, 36 * GIB, False), # past it, not 2 GiB to spare
    (4 * GIB, 2 * GIB, 8 * GIB, 4 * GIB, False),     # within the budget, but the device is full
])
def test_the_float64_reference_runs_on_the_device_where_it_has_room(need, held, budget, free, on_device):
    assert kj_verify.fp64_on_device(need, held, budget, free) == on_device


def test_a_float64_reference_the_device_had_no_room_for_runs_on_the_host(monkeypatch):
    v = verifier()
    placed = []

    def run64(recipe, device):
        placed.append(device.type)
        if device.type == "cuda":
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 32.00 GiB")
        return ["host"]

    monkeypatch.setattr(v, "_run64", run64)
    v.models64[torch.device("cuda")] = "a float64 copy on the device"
    assert v._run64_or_host(v.recipe(1), torch.device("cuda"), 1 << 20) == ["host"]
    assert placed == ["cuda", "cpu"] and torch.device("cuda") not in v.models64
