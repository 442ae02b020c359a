"""The candidate's side (kj_runner.RunnerSession): ModelNew imported and built the protocol's way, its failures
given the right verdict, inputs changed in place and aliased outputs seen, the cuda-agent checks, and the
findings (flipped backend flags, torch ops run inside forward)."""
import pytest
import torch

import kj_common as common
import kj_judge as judge
import kj_runner
from conftest import call_forward

PROBLEM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features, out):
        super().__init__()
        self.linear = nn.Linear(features, out)

    def forward(self, x):
        return self.linear(x)

batch = 4
features = 16

def get_inputs():
    return [torch.rand(batch, features)]

def get_init_inputs():
    return [features, 8]
'''

RECIPE = {"kind": "case", "seed": 5}


def candidate(forward="return self.linear(x)", head="", init="", attribute="linear"):
    return (f"import torch\nimport torch.nn as nn\n{head}\n\nclass ModelNew(nn.Module):\n"
            f"    def __init__(self, features, out):\n        super().__init__()\n"
            f"        self.{attribute} = nn.Linear(features, out)\n{init}\n"
            f"    def forward(self, x):\n        {forward}\n")


def runner(source=None, protocol=None, overrides=None):
    session = kj_runner.RunnerSession("cpu", protocol or {}, prebuilt=False)
    session.load("p.py", PROBLEM, "c.py", source or candidate(), overrides or {}, 42)
    return session


def reference():
    session = judge.Session("cpu")
    session.load_problem("p.py", PROBLEM, {})
    session.build_reference(42)
    return session


def test_modelnew_is_built_like_the_reference_and_sees_the_judges_inputs():
    # KernelBench's construction (seed, init inputs, seed, constructor) on both sides: an honest ModelNew has
    # Model's very weights, starts in train mode, and the runner's draw of a recipe is the judge's.
    s, ref = runner(), reference()
    model = s.model_for({})
    assert torch.equal(model.linear.weight, ref.model.linear.weight) and model.training
    out, changed, overlap = call_forward(s, RECIPE, {}, False)
    assert torch.equal(out, ref.reference(ref.draw(RECIPE)))
    assert changed is None and overlap is False
    assert s.model_for({}) is model


@pytest.mark.parametrize("source, kind, words", [
    ("def broken(:\n", "load_error", "syntax error"),
    ("raise ValueError('no import here')\n", "load_error", "no import here"),
    ("import sys\nsys.exit(3)\n", "load_error", "SystemExit"),
    ("import subprocess\nraise subprocess.CalledProcessError(1, ['ninja'])\n", "compile_error", "ninja"),
    ("x = 1\n", "load_error", "no class `ModelNew`"),
    ("def ModelNew(*args):\n    return None\n", "load_error", "no class `ModelNew`"),
])
def test_a_candidate_that_does_not_import_gets_its_verdict(source, kind, words):
    s = kj_runner.RunnerSession("cpu", {}, prebuilt=False)
    with pytest.raises(common.KjError) as caught:
        s.import_candidate("c.py", source, {})
    assert caught.value.kind == kind and words in caught.value.message


def test_size_overrides_apply_to_the_candidate_source_too():
    source = candidate(head="block = 16", init="        self.block = block\n")
    s = runner(source, overrides={"block": 4, "batch": 2})
    assert s.model_for({}).block == 4
    assert s.inputs_for(RECIPE, {})[0].shape == (2, 16)


def test_other_sizes_get_their_own_model_and_inputs():
    s = runner()
    assert s.inputs_for(RECIPE, {"batch": 3})[0].shape == (3, 16)
    wide = s.model_for({"features": 5})
    assert wide.linear.in_features == 5 and wide is not s.model_for({})
    assert s.model_for({"features": 5}) is wide


def test_a_constructor_that_raises_is_a_runtime_error():
    with pytest.raises(common.KjError) as caught:
        runner(candidate(init="        raise ValueError('bad init')\n"))
    assert caught.value.kind == "runtime_error" and "constructing ModelNew raised" in caught.value.message
    assert "bad init" in caught.value.message


def test_a_constructor_out_of_memory_names_the_constructor():
    # A reviewer's candidate allocated 4 GiB in __init__: the message said "ModelNew.forward ran out of memory".
    with pytest.raises(common.KjError) as caught:
        runner(candidate(init="        raise RuntimeError(\"DefaultCPUAllocator: can't allocate memory: 4 GB\")\n"))
    assert caught.value.kind == "runtime_error" and caught.value.reason == "out_of_memory"
    assert caught.value.message.startswith("constructing ModelNew ran out of memory")


@pytest.mark.parametrize("error, reason", [
    ("ValueError('bad forward')", ""),
    ("MemoryError()", "out_of_memory"),
    ("RuntimeError('DefaultCPUAllocator: can\\'t allocate memory: 9 GB')", "out_of_memory"),
])
def test_a_forward_that_raises_is_the_candidates_runtime_error(error, reason):
    s = runner(candidate(forward=f"raise {error}"))
    with pytest.raises(common.KjError) as caught:
        call_forward(s, RECIPE, {}, False)
    assert caught.value.kind == "runtime_error" and caught.value.reason == reason
    assert "ModelNew.forward" in caught.value.message


@pytest.mark.parametrize("kind, reason", [("harness_error", "out_of_memory"), ("problem_error", ""), ("oom", "")])
def test_kjs_error_type_raised_by_the_candidate_is_still_its_failure(kind, reason):
    # A hostile forward imports kj_common and raises kj's own error type, hoping to pass its failure off as kj's
    # (out of memory in kj's code) or the problem's: it stays the candidate's runtime_error.
    forward = f"import kj_common; raise kj_common.KjError('{kind}', 'not mine', reason='{reason}')"
    s = runner(candidate(forward=forward))
    with pytest.raises(common.KjError) as caught:
        call_forward(s, RECIPE, {}, False)
    assert caught.value.kind == "runtime_error" and caught.value.reason == ""
    assert "candidate's failure" in caught.value.message and kind in caught.value.message


def test_inputs_changed_in_place_are_named():
    s = runner(candidate(forward="x.mul_(2)\n        return self.linear(x)"))
    assert call_forward(s, RECIPE, {}, True)[1] == [0]
    assert call_forward(runner(), RECIPE, {}, True)[1] == []


@pytest.mark.parametrize("forward, aliased", [
    ("return x", True),
    ("return x[:, :8]", True),
    ("return self.linear.weight", True),
    ("return (self.linear(x), x)", True),
    ("return self.linear(x)", False),
    ("return x.clone()", False),
    ("return 3", False),
])
def test_an_output_sharing_storage_with_an_input_or_parameter_overlaps(forward, aliased):
    assert call_forward(runner(candidate(forward=forward)), RECIPE, {}, False)[2] is aliased


kj_flat_chunks = common.flat_chunks


def test_the_input_check_sees_a_change_in_a_zero_dimensional_or_large_input(monkeypatch):
    s = runner()
    scalar, large = torch.tensor(0.5), torch.randn(10, 5)
    pristine = s.pristine([scalar, large, 3], 0)
    assert pristine[2] is None and pristine[1].data_ptr() != large.data_ptr()
    monkeypatch.setattr(common, "flat_chunks", lambda *t: kj_flat_chunks(*t, size=7))  # 7 bytes a chunk
    assert s.after_forward(None, None, [scalar, large, 3], pristine, True)[0] == []  # 0-d inputs crashed it once
    large[9, 4] = -large[9, 4]  # the last chunk's last byte: every chunk is looked at
    scalar.fill_(-0.5)
    assert s.after_forward(None, None, [scalar, large, 3], pristine, True)[0] == [0, 1]


@pytest.mark.parametrize("nbytes, room, free, on_device", [
    (6_400_000_000, 6_400_000_000, 75_000_000_000, True),  # full-size L1 19 (R = I): 1.4 s an evaluation saved
    (6_400_000_000, 4_096, 75_000_000_000, False),  # a reduction: more than KernelBench holds beside the forward
    (20_000_000_000, 20_000_000_000, 75_000_000_000, False),  # past a quarter of the free room
    (1, 0, 100, False),  # no bound from the judge: the host
])
def test_the_input_checks_copy_stays_on_the_device_only_within_kernelbenchs_footprint(nbytes, room, free, on_device):
    assert kj_runner.pristine_on_device(nbytes, room, free) is on_device


def test_state_dict_protocol_copies_models_weights_and_sets_eval_mode():
    protocol = {"weights": "state_dict", "eval_mode": True}
    s = runner(candidate(init="        torch.nn.init.zeros_(self.linear.weight)\n"), protocol)
    model = s.model_for({})
    assert torch.equal(model.linear.weight, reference().model.linear.weight) and not model.training
    with pytest.raises(common.KjError) as caught:
        runner(candidate(attribute="fc", forward="return self.fc(x)"), protocol)
    assert caught.value.kind == "incorrect" and "load_state_dict" in caught.value.message


def test_a_lower_precision_protocol_casts_the_model_and_the_inputs():
    s = runner(protocol={"precision": "bf16"})
    assert s.model_for({}).linear.weight.dtype == torch.bfloat16
    assert s.inputs_for(RECIPE, {})[0].dtype == torch.bfloat16
    assert call_forward(s, RECIPE, {}, False)[0].dtype == torch.bfloat16


def test_forbid_functional_fails_every_call_and_restores_the_functions():
    relu = torch.nn.functional.relu
    # (nn.Linear's own forward calls F.linear: the candidate computes the linear layer itself)
    source = candidate(forward="return torch.nn.functional.relu(x @ self.linear.weight.t())")
    s = runner(source, {"forbid_functional": True})
    with pytest.raises(common.KjError) as caught:
        call_forward(s, RECIPE, {}, False)
    assert caught.value.kind == "incorrect" and "torch.nn.functional.relu" in caught.value.message
    assert torch.nn.functional.relu is relu
    with pytest.raises(common.KjError):  # a strict case or a timed call alike: they look the same from inside
        call_forward(s, RECIPE, {}, False)
    assert call_forward(runner(source), RECIPE, {}, False)[0] is not None


def test_backend_flags_the_candidate_flips_at_import_are_reported():
    before = common.backend_flags()
    try:
        s = runner(candidate(head="torch.backends.cudnn.benchmark = not torch.backends.cudnn.benchmark"))
        was = before["backends.cudnn.benchmark"]
        assert s.flag_changes() == {"backends.cudnn.benchmark": f"{was} -> {not was}"}
    finally:
        common.set_backend_flags(before)
    assert runner().flag_changes() == {}


def test_torch_ops_name_computation_and_lower_precision_but_not_memory_ops():
    seen = runner().torch_ops(RECIPE)
    assert "addmm" in seen["ops"] and "float32" in seen["dtypes"]
    assert runner(candidate(forward="return x.clone()")).torch_ops(RECIPE)["ops"] == {}
    low = runner(candidate(forward="return (x.bfloat16() @ self.linear.weight.bfloat16().t()).float()"))
    dtypes = low.torch_ops(RECIPE)["dtypes"]
    assert "_to_copy" in dtypes["bfloat16"] and "mm" in dtypes["bfloat16"]


def test_an_extension_the_build_step_did_not_compile_is_a_compile_error(monkeypatch, tmp_path):
    from torch.utils import cpp_extension

    # restored after the test: use_prebuilt_extensions patches torch for the whole (runner) process
    monkeypatch.setattr(cpp_extension, "FileBaton", cpp_extension.FileBaton)
    monkeypatch.setattr(cpp_extension, "_write_ninja_file_and_build_library",
                        cpp_extension._write_ninja_file_and_build_library)
    s = kj_runner.RunnerSession("cpu", {}, prebuilt=True)
    source = ("from torch.utils.cpp_extension import load_inline\n"
              f"ext = load_inline(name='kj_never_built', cpp_sources='int f() {{ return 1; }}', functions=['f'], "
              f"build_directory={str(tmp_path)!r})\n")
    with pytest.raises(common.KjError) as caught:
        s.import_candidate("c.py", source, {})
    assert caught.value.kind == "compile_error" and "not compiled by the build step" in caught.value.message
    (tmp_path / "prebuilt.so").write_bytes(b"")
    assert cpp_extension._write_ninja_file_and_build_library(name="prebuilt", build_directory=str(tmp_path)) is None


def test_out_of_memory_names_the_candidates_failure():
    err = kj_runner.out_of_memory(MemoryError("no room"), torch.device("cpu"))
    assert err.kind == "runtime_error" and err.reason == "out_of_memory" and "no room" in err.message
