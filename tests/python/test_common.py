"""Inputs from recipes (kj_recipes): the judge and the runner draw the same tensors; adversarial transforms work in
place a chunk at a time; a problem's own get_inputs failure is the problem's."""
import pytest
import torch

import kj_common as common
import kj_recipes as recipes

PROBLEM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

size = 1000

def get_inputs():
    return [torch.rand(4, size)]

def get_init_inputs():
    return []
'''


def problem(source=PROBLEM):
    return common.Problem("p.py", source, {})


def test_the_same_recipe_draws_the_same_inputs():
    p = problem()
    recipe = {"kind": "case", "seed": 7, "transform": "nan", "tseed": 11}
    a, b = recipes.draw(p, recipe, "cpu"), recipes.draw(p, recipe, "cpu")
    assert common.same_bits(a[0], b[0])
    c = recipes.draw(p, dict(recipe, seed=8), "cpu")
    assert not common.same_bits(a[0], c[0])


@pytest.mark.parametrize("kind", ["nan", "inf", "denormal", "negzero", "distribution", "extreme"])
def test_transforms_change_values_and_keep_shape(kind):
    p = problem()
    plain = recipes.draw(p, {"kind": "case", "seed": 3}, "cpu")[0]
    out = recipes.draw(p, {"kind": "case", "seed": 3, "transform": kind, "tseed": 5}, "cpu")[0]
    assert out.shape == plain.shape and out.dtype == plain.dtype
    if kind == "nan":
        assert torch.isnan(out).any()
    if kind == "inf":
        assert torch.isinf(out).any()
    if kind == "denormal":
        tiny = torch.finfo(torch.float32).tiny
        assert ((out.abs() < tiny) & (out != 0)).any()
    if kind == "negzero":
        assert ((out == 0) & torch.signbit(out)).any()
    if kind in ("distribution", "extreme"):
        assert (out < 0).any() and (out > 0).any()


def test_transforms_are_chunked_without_changing_values(monkeypatch):
    p = problem()
    recipe = {"kind": "case", "seed": 3, "transform": "denormal", "tseed": 5}
    whole = recipes.draw(p, recipe, "cpu")[0]
    monkeypatch.setattr(common, "HOST_CHUNK", 128)
    pieces = recipes.draw(p, recipe, "cpu")[0]
    assert whole.shape == pieces.shape  # the chunk size changes the random stream, never the shape or dtype
    assert ((pieces.abs() < torch.finfo(torch.float32).tiny) & (pieces != 0)).any()


def test_a_tiny_input_still_gets_one_picked_value():
    p = problem(PROBLEM.replace("size = 1000", "size = 1"))
    out = recipes.draw(p, {"kind": "case", "seed": 1, "transform": "nan", "tseed": 2}, "cpu")[0]
    assert torch.isnan(out).any()


def test_get_inputs_failure_is_a_problem_error():
    p = problem(PROBLEM.replace("return [torch.rand(4, size)]", "raise ValueError('no inputs')"))
    with pytest.raises(common.KjError) as caught:
        recipes.draw(p, {"kind": "case", "seed": 1}, "cpu")
    assert caught.value.kind == "problem_error" and "no inputs" in caught.value.message


@pytest.mark.parametrize("body, expected", [
    ("return 5", "returned int, expected a list"),
    ("raise KeyError('no such size')", "get_init_inputs() raised"),
])
def test_get_init_inputs_failure_is_a_problem_error(body, expected):
    p = problem(PROBLEM.replace("def get_init_inputs():\n    return []", "def get_init_inputs():\n    " + body))
    with pytest.raises(common.KjError) as caught:
        p.init_inputs()
    assert caught.value.kind == "problem_error" and expected in caught.value.message


def test_the_problem_own_code_raising_is_a_problem_error_but_out_of_memory_is_not():
    with pytest.raises(common.KjError) as caught:
        common.problem_own("Model.forward", lambda: 1 / 0)
    assert caught.value.kind == "problem_error" and "ZeroDivisionError" in caught.value.message
    with pytest.raises(MemoryError):
        common.problem_own("Model.forward", lambda: (_ for _ in ()).throw(MemoryError()))


def test_out_of_memory_is_recognized():
    assert common.is_out_of_memory(MemoryError())
    assert common.is_out_of_memory(RuntimeError("DefaultCPUAllocator: can't allocate memory: 3 GB"))
    assert not common.is_out_of_memory(RuntimeError("shape mismatch"))


def test_timing_inputs_are_fresh_per_call_and_can_be_dropped():
    p = problem()
    t = recipes.TimingInputs(p, "cpu", 42, fresh=True)
    first = t.current[0].clone()
    t.prepare()
    t.prepare()
    assert not common.same_bits(first, t.current[0])
    t.drop()
    assert t.current is None
    t.ensure()
    assert t.current is not None


def test_same_bits_compares_zero_dimensional_outputs():
    # the determinism class compares a loss's 0-d output bit for bit (a view as bytes needs a dimension)
    a = torch.tensor(0.25)
    assert common.same_bits(a, a.clone())
    assert not common.same_bits(a, torch.tensor(0.5))
    assert not common.same_bits(torch.tensor(-0.0), torch.tensor(0.0))


def test_a_cuda_library_that_cannot_allocate_is_out_of_memory_not_the_problem_error():
    # a candidate that starves the device makes cuBLAS/cuDNN fail in the judge's reference: never the problem's
    for text in ("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
                 "cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
                 "CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"):
        assert common.is_out_of_memory(RuntimeError(text))
        with pytest.raises(RuntimeError):
            common.problem_own("Model.forward", lambda: (_ for _ in ()).throw(RuntimeError(text)))
    assert not common.is_out_of_memory(RuntimeError("CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm`"))


def test_tf32_is_fp32_tensors_with_tf32_numerics_and_other_precisions_cast():
    import kj_judge as judge

    saved = common.backend_flags()
    try:
        assert common.precision_dtype("fp32") is None and common.precision_dtype("tf32") is None
        assert common.precision_dtype("bf16") is torch.bfloat16 and common.precision_dtype("fp16") is torch.float16
        common.set_backend_flags({**saved, "backends.cuda.matmul.allow_tf32": False,
                                  "backends.cudnn.allow_tf32": False, "float32_matmul_precision": "highest"})
        session = judge.Session("cpu", {"precision": "fp32"})
        assert session.dtype is None and common.backend_flags()["backends.cuda.matmul.allow_tf32"] is False
        session = judge.Session("cpu", {"precision": "tf32"})  # the flags a session at tf32 runs its reference with
        flags = common.backend_flags()
        assert session.dtype is None
        assert flags["backends.cuda.matmul.allow_tf32"] and flags["backends.cudnn.allow_tf32"]
        assert flags["float32_matmul_precision"] == "high"
        assert judge.Session("cpu", {"precision": "bf16"}).dtype is torch.bfloat16
    finally:
        common.set_backend_flags(saved)
