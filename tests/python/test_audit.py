"""The problem audit (kj_audit): null candidates judged by KernelBench's rule and the strict rule, a stochastic or
constant reference found, and a sound problem left unflagged."""
import pytest

import kj_audit

PROTOCOL = {"atol": 1e-4, "rtol": 1e-4, "seed": 42, "trials": 2, "input_rng": "host"}

HEAD = "import torch\nimport torch.nn as nn\n\n"
INPUTS = "\n\ndef get_inputs():\n    return [torch.randn(64, 256)]\n\n\ndef get_init_inputs():\n    return []\n"


def problem(forward, init="        super().__init__()\n"):
    return (HEAD + "class Model(nn.Module):\n    def __init__(self):\n" + init +
            "\n    def forward(self, x):\n        return " + forward + "\n" + INPUTS)


def audit(source):
    return kj_audit.audit_problem("p.py", source, {}, "cpu", PROTOCOL)


def test_a_sound_problem_rejects_every_null_candidate():
    a = audit(problem("torch.relu(x @ x.T)"))
    assert not a["unsound"], a["reasons"]
    for name in ("zeros", "mean"):
        assert a["nulls"][name]["strict"] is False
        assert a["nulls"][name]["compatible"] is False
    assert a["nulls"]["input"] == {"compatible": None, "strict": None}  # (64, 256) in, (64, 64) out
    assert a["nulls"]["fp16"]["strict"] is False  # a 256-long fp16 dot product is far off
    assert a["nulls"]["tf32"] == {"compatible": None, "strict": None}  # no TF32 on the CPU
    assert a["depth"] > 1  # the matmul's reduction (kj_tolerance.DepthMode)
    assert 0 < a["tolerance_use"] < 1


def test_tiny_outputs_pass_kernelbench_with_zeros_but_not_strict():
    a = audit(problem("x * 1e-6"))
    assert a["nulls"]["zeros"]["compatible"] is True
    assert a["nulls"]["zeros"]["strict"] is False
    assert not a["unsound"]
    assert any("KernelBench's rule accepts 'zeros'" in n for n in a["notes"])


def test_dropout_in_train_mode_is_a_stochastic_reference():
    a = audit(problem("self.drop(x)", "        super().__init__()\n        self.drop = nn.Dropout(0.5)\n"))
    assert a["stochastic"]
    assert a["unsound"]
    assert any(r.startswith("stochastic reference") for r in a["reasons"])


def test_an_identically_zero_output_is_a_constant_reference():
    a = audit(problem("x - x"))
    assert a["constant"]
    assert a["unsound"]
    assert a["nulls"]["zeros"]["compatible"] is True
    assert a["nulls"]["zeros"]["strict"] is None  # a constant reference makes strict cases uninformative


def test_passing_the_input_through_is_caught_where_it_is_the_answer():
    a = audit(problem("x.clone()"))
    assert a["nulls"]["input"]["strict"] is True
    assert "the strict rule accepts the 'input' null candidate" in a["reasons"]


@pytest.mark.parametrize("forward", ["(x, x.sum(dim=1))", "[x.relu(), x.abs()]"])
def test_several_outputs_are_audited_together(forward):
    a = audit(problem(forward))
    assert a["nulls"]["zeros"]["strict"] is False
    assert a["nulls"]["mean"]["compatible"] is False


def test_a_stochastic_reference_below_kernelbench_tolerance_is_found():
    # outputs of about 1e-6, under KernelBench's atol: its rule cannot see the mask move, the strict rule can
    source = (HEAD + "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.drop = nn.Dropout(0.2)\n\n    def forward(self, x):\n"
              "        return self.drop(x) * 1e-6\n\n\ndef get_inputs():\n"
              "    return [torch.randn(64, 256)]\n\n\ndef get_init_inputs():\n    return []\n")
    a = audit(source)
    assert a["stochastic"]
    reason = next(r for r in a["reasons"] if r.startswith("stochastic reference"))
    assert "beyond KernelBench's tolerance" not in reason


def test_bf16_precision_with_kernelbench_tolerance_of_1e_2():
    # KernelBench issue #165's case: at bf16 (tolerance 1e-2) outputs below 1e-2 let zeros pass its rule
    a = kj_audit.audit_problem("p.py", problem("x * 1e-3"), {}, "cpu",
                               dict(PROTOCOL, atol=1e-2, rtol=1e-2, precision="bf16"))
    assert a["nulls"]["zeros"] == {"compatible": True, "strict": False}
    assert a["nulls"]["fp16"] == {"compatible": None, "strict": None}  # downcasts say something of fp32 only
    assert a["tolerance_use"] is None  # no float64 copy of a bf16 model
    assert not a["unsound"]
