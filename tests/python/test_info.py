"""What the judge reports (kj_info): a problem's shapes and least cost drawn on the meta device (overrides applied,
a host draw where get_inputs() cannot run on meta, an error entry where the forward cannot), and the stack
fingerprint."""
import pytest
import torch

import kj_info
from kj_common import KjError, Problem

PROBLEM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features, out, label):
        super().__init__()
        self.linear = nn.Linear(features, out)

    def forward(self, x):
        return self.linear(x)

batch = 4
features = 64

def get_inputs():
    return [torch.rand(batch, features)]

def get_init_inputs():
    return [features, 32, "label"]
'''


def test_describe_gives_shapes_dtypes_and_init_values():
    d = kj_info.describe_problem("p.py", PROBLEM, {})
    assert d == {"inputs": [{"shape": [4, 64], "dtype": "float32"}],
                 "init_inputs": [{"value": "64"}, {"value": "32"}, {"value": "'label'"}],
                 "applied_overrides": {}}


def test_describe_follows_the_overrides():
    d = kj_info.describe_problem("p.py", PROBLEM, {"batch": 7, "absent": 3})
    assert d["inputs"][0]["shape"] == [7, 64] and d["applied_overrides"] == {"batch": 7}


def test_a_long_init_value_is_cut():
    d = kj_info.describe_problem("p.py", PROBLEM.replace('"label"]', '"x" * 500]'), {})
    assert len(d["init_inputs"][2]["value"]) == 80


def test_get_inputs_that_cannot_run_on_meta_is_drawn_on_the_host():
    source = PROBLEM.replace("torch.rand(batch, features)", "torch.rand(batch, int(torch.randint(3, 4, (1,))))")
    assert kj_info.describe_problem("p.py", source, {})["inputs"][0]["shape"] == [4, 3]


def test_cost_counts_bytes_and_matmul_flops():
    cost = kj_info.describe_problem("p.py", PROBLEM, {}, cost=True)["cost"]
    assert cost == {"input_bytes": 4 * 64 * 4, "parameter_bytes": (64 * 32 + 32) * 4, "output_bytes": 4 * 32 * 4,
                    "flops": 2 * 4 * 64 * 32}


def test_cost_at_the_protocols_precision():
    cost = kj_info.cost_of(Problem("p.py", PROBLEM, {}, dtype=torch.bfloat16))
    assert cost["input_bytes"] == 4 * 64 * 2 and cost["parameter_bytes"] == (64 * 32 + 32) * 2
    assert cost["output_bytes"] == 4 * 32 * 2 and cost["flops"] == 2 * 4 * 64 * 32


def test_a_forward_that_needs_values_has_no_cost_estimate():
    source = PROBLEM.replace("return self.linear(x)", "return self.linear(x) * float(x.sum())")
    d = kj_info.describe_problem("p.py", source, {}, cost=True)
    assert set(d["cost"]) == {"error"} and d["cost"]["error"]
    assert d["inputs"][0]["shape"] == [4, 64]  # the shapes are still described


def test_a_broken_problem_is_a_problem_error():
    with pytest.raises(KjError) as caught:
        kj_info.describe_problem("p.py", PROBLEM.replace("def get_inputs", "def other_inputs"), {})
    assert caught.value.kind == "problem_error" and "get_inputs" in caught.value.message


def test_quiet_probes_fall_back_to_their_default():
    assert kj_info._quiet(lambda: 1 // 0, "none") == "none"
    assert kj_info._quiet(lambda: None, 0) == 0
    assert kj_info._quiet(lambda: "12.4") == "12.4"


def test_environment_fingerprints_the_stack_and_only_the_settings_that_matter(monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_MAX_AUTOTUNE", "1")
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/cache")  # a cache folder changes no result
    monkeypatch.setenv("KJ_UNRELATED", "x")
    info = kj_info.environment()
    assert info["torch"] == torch.__version__ and info["cuda_available"] == torch.cuda.is_available()
    assert info["env"] == {k: v for k, v in info["env"].items()
                           if k.startswith(("TORCHINDUCTOR_", "TORCH_", "PYTORCH_", "CUDA_", "CUBLAS_", "CUDNN_",
                                            "NVIDIA_TF32"))}
    assert info["env"]["TORCHINDUCTOR_MAX_AUTOTUNE"] == "1" and info["env"]["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    assert "TORCHINDUCTOR_CACHE_DIR" not in info["env"] and "KJ_UNRELATED" not in info["env"]
    assert "backends.cudnn.benchmark" in info["backend_flags"] and info["python_paths"]
    if not info["cuda_available"]:
        assert info["device_name"] == info["cpu"] and "gpu_uuid" not in info
