"""Baselines (kj_baseline): the problem's own Model built the judge's way and called on the session's timing
inputs, its check against the eager output, and failures mapped to the statuses the worker reports
(runtime_error, oom, harness_error for an unknown mode). torch.compile modes are not run here: they import
Dynamo and Inductor (seconds, and a C++ compiler on the CPU)."""
import pytest
import torch

import kj_baseline
import kj_judge as judge
from kj_common import KjError

PROBLEM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, 8)
        self.drop = nn.Dropout(DROP)
        self.seen = None

    def forward(self, x):
        self.seen = x
        return self.drop(self.linear(x))

DROP = 0.0
batch = 4
features = 16

def get_inputs():
    return [torch.rand(batch, features)]

def get_init_inputs():
    return [features]
'''


def session(source=PROBLEM, protocol=None, fresh=False):
    s = judge.Session("cpu", protocol)
    s.load_problem("p.py", source, {})
    kj_baseline.draw_inputs(s, 42, fresh)
    return s


def test_the_eager_baseline_is_the_judges_reference_and_matches_itself():
    s = session()
    b = kj_baseline.Baseline(s, 42, "eager")
    s.build_reference(42)
    assert torch.equal(b.model.linear.weight, s.model.linear.weight)  # the same seeded construction
    assert b.compile_s == 0.0 and b.forward is b.model
    assert torch.equal(b.eager_output, s.model(*s.timing.current))
    check = b.matches_eager(1e-4, 1e-4)
    assert check["passed"] and check["mismatches"] == 0
    assert b.eager_output is None  # the eager output is not kept past the check


def test_each_call_runs_on_the_current_timing_inputs():
    s = session(fresh=True)
    b = kj_baseline.Baseline(s, 42, "eager")
    for _ in range(2):
        s.prepare_call()
        b.call()
        assert b.model.seen is s.timing.current[0]


def test_a_stochastic_model_differs_from_eager_unless_the_protocol_says_eval():
    source = PROBLEM.replace("DROP = 0.0", "DROP = 0.5")
    assert not kj_baseline.Baseline(session(source), 42, "eager").matches_eager(1e-4, 1e-4)["passed"]
    b = kj_baseline.Baseline(session(source, {"eval_mode": True}), 42, "eager")
    assert not b.model.training and b.matches_eager(1e-4, 1e-4)["passed"]


def test_an_unknown_mode_is_kjs_own_error():
    with pytest.raises(KjError) as caught:
        kj_baseline.Baseline(session(), 42, "fastest")
    assert caught.value.kind == "harness_error" and "fastest" in caught.value.message


@pytest.mark.parametrize("where", ["__init__", "forward"])
def test_a_reference_that_raises_is_a_runtime_error(where):
    target = "self.seen = None" if where == "__init__" else "self.seen = x"
    s = session(PROBLEM.replace(target, "raise ValueError('broken reference')"))
    with pytest.raises(KjError) as caught:
        kj_baseline.Baseline(s, 42, "eager")
    assert caught.value.kind == "runtime_error" and "broken reference" in caught.value.message


def test_a_reference_out_of_memory_is_status_oom_with_the_input_bytes():
    s = session(PROBLEM.replace("self.seen = x", "raise torch.OutOfMemoryError('CUDA out of memory. Tried')"))
    with pytest.raises(KjError) as caught:
        kj_baseline.Baseline(s, 42, "eager")
    assert caught.value.kind == "oom" and "the inputs alone take 256 bytes" in caught.value.message


def test_inputs_that_do_not_fit_name_the_bytes_one_set_needs():
    # get_inputs() allocates for real only off the meta device, where kj measures what one set needs
    source = PROBLEM.replace(
        "    return [torch.rand(batch, features)]",
        "    x = torch.empty(1000, 1000)\n    if x.device.type != 'meta':\n"
        "        raise torch.OutOfMemoryError('CUDA out of memory. Tried to allocate 4 MiB')\n    return [x]")
    s = judge.Session("cpu")
    s.load_problem("p.py", source, {})
    with pytest.raises(KjError) as caught:
        kj_baseline.draw_inputs(s, 42, False)
    assert caught.value.kind == "oom" and "one input set needs 4000000 bytes" in caught.value.message
    assert "Tried to allocate 4 MiB" in caught.value.message


def test_inputs_oom_without_a_measurable_draw_says_so():
    source = PROBLEM.replace("    return [torch.rand(batch, features)]", "    raise torch.OutOfMemoryError('no')")
    s = judge.Session("cpu")
    s.load_problem("p.py", source, {})
    err = kj_baseline.inputs_oom(s.problem, torch.OutOfMemoryError("CUDA out of memory"))
    assert err.kind == "oom" and "the size of one input set is unknown" in err.message


def test_a_failing_get_inputs_stays_the_problems_error():
    source = PROBLEM.replace("    return [torch.rand(batch, features)]", "    raise ValueError('no inputs')")
    with pytest.raises(KjError) as caught:
        session(source)
    assert caught.value.kind == "problem_error"
