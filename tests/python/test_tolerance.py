"""The strict comparison (kj_tolerance): honest orders of a long sum pass, lower precision fails, NaN/Inf
positions and integer outputs are judged right, every pass works a chunk at a time."""
import math

import pytest
import torch

import kj_tolerance as tol

RTOL, ATOL = tol.TOLERANCES[torch.float32]


def sequential_sum(x):
    """A running sum in fp32, left to right (cumsum's last column)."""
    return torch.cumsum(x, dim=1)[:, -1].contiguous()


def depth_of(fn, *inputs):
    mode = tol.DepthMode()
    with mode:
        fn(*inputs)
    return mode.depth


def test_depth_counts_reductions_and_elementwise_ops():
    x = torch.randn(4, 4096)
    assert depth_of(lambda t: torch.sum(t, dim=1), x) == pytest.approx(math.sqrt(4096))
    assert depth_of(lambda a, b: a @ b, torch.randn(8, 1024), torch.randn(1024, 8)) == pytest.approx(32)
    assert depth_of(torch.sigmoid, x) == pytest.approx(1.0)
    assert depth_of(torch.relu, x) == 0  # exact ops add no rounding


def test_another_summation_order_passes_where_a_fixed_1e4_fails():
    torch.manual_seed(0)
    x = torch.randn(64, 262144)
    ref, out = torch.sum(x, dim=1), sequential_sum(x)
    depth = depth_of(lambda t: torch.sum(t, dim=1), x)
    ok, details = tol.judge(out, ref, RTOL, ATOL, depth)
    assert ok, details
    assert details["max_rel_err"] < details["bound"]


def test_bf16_accumulation_fails():
    torch.manual_seed(1)
    x = torch.randn(64, 65536)
    ref = torch.sum(x, dim=1)
    out = torch.sum(x.to(torch.bfloat16), dim=1, dtype=torch.bfloat16).float()
    ok, details = tol.judge(out, ref, RTOL, ATOL, depth_of(lambda t: torch.sum(t, dim=1), x))
    assert not ok and details["mismatches"] > 0


def test_nan_positions_must_match():
    ref = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert tol.judge(ref.clone(), ref, RTOL, ATOL, 1.0)[0]
    dropped = torch.tensor([1.0, 0.0, float("inf"), -float("inf")])  # NaN mapped to 0
    ok, details = tol.judge(dropped, ref, RTOL, ATOL, 1.0)
    assert not ok and details["nonfinite_mismatches"] == 1 and details["first_index"] == 1


def test_fp64_accepts_a_finite_result_where_the_fp32_reference_overflowed():
    # scale / x for a denormal x: torch's fp32 scale * (1 / x) overflows where the true result is finite
    x = torch.tensor([1e-40, 2.0, 4.0])
    scale = 1e-3
    ref32 = scale * (1.0 / x)
    ref64 = scale / x.double()
    out = torch.full_like(x, scale).div_(x)  # a kernel computing scale / x directly: 1e37, finite
    assert torch.isinf(ref32[0]) and torch.isfinite(out[0])
    assert not tol.judge(out, ref32, RTOL, ATOL, 1.0)[0]
    ok, details = tol.judge64(out, ref32, ref64, RTOL, ATOL, 1.0)
    assert ok, details


def test_integer_outputs_are_exact():
    ref = torch.tensor([3, 1, 2], dtype=torch.int64)
    assert tol.judge(ref.clone(), ref, 0.0, 0.0, 1.0)[0]
    assert not tol.judge(torch.tensor([3, 1, 1]), ref, 0.0, 0.0, 1.0)[0]
    assert tol.finite_rms(ref) == pytest.approx(math.sqrt(14 / 3))


def test_chunked_result_matches_one_pass():
    torch.manual_seed(2)
    ref = torch.randn(10_000)
    out = ref + 1e-3 * torch.randn(10_000)
    whole = tol.judge(out, ref, RTOL, ATOL, 1.0, chunk=1 << 20)[1]
    pieces = tol.judge(out, ref, RTOL, ATOL, 1.0, chunk=97)[1]
    assert whole["mismatches"] == pieces["mismatches"]
    assert whole["max_abs_err"] == pytest.approx(pieces["max_abs_err"])


def test_worth_fp64_skips_wrong_kernels():
    assert tol.worth_fp64({"nonfinite_mismatches": 1, "max_rel_err": 5.0, "bound": 1e-5})
    assert tol.worth_fp64({"nonfinite_mismatches": 0, "max_rel_err": 1e-4, "bound": 1e-5})
    assert not tol.worth_fp64({"nonfinite_mismatches": 0, "max_rel_err": 0.5, "bound": 1e-5})


def test_a_single_finite_value_is_informative():
    # KernelBench's losses (L1 94 MSELoss, 96 HuberLoss) return one value: agreeing with it says something
    assert not tol.constant(torch.tensor(0.37))
    assert not tol.constant(torch.tensor([2]))
    assert tol.constant(torch.tensor(float("nan")))
    assert tol.constant(torch.zeros(5))
    assert not tol.constant(torch.arange(5.0))
