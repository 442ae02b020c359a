"""KernelBench's comparison, embedded in the `kj` binary and used by the judge: torch.allclose counted chunk by
chunk with its error measures and the reason of a failure (tolerance, shape, dtype, structure), and CUDA Agent's
assert_close. The strict verdict's comparison is kj_tolerance.py.
"""
import torch

from kj_common import flat_chunks, outputs_of


class Opaque:
    """Something the candidate returned that is not a tensor (its type name only crosses the process boundary)."""

    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return f"<{self.type_name}>"


def _type_name(value):
    return value.type_name if isinstance(value, Opaque) else type(value).__name__


def compare(reference, output, atol, rtol, chunk=None):
    """KernelBench's check, torch.allclose(reference, output, atol, rtol) (NaN anywhere fails), with error measures
    and a reason (tolerance, shape, dtype, structure). A reference that returns several tensors (tuple or list) is
    compared output by output (docs/design.md, invariant 3); the candidate must return the same structure."""
    if isinstance(reference, torch.Tensor):
        return _compare_tensor(reference, output, atol, rtol, chunk)
    refs = outputs_of(reference)
    result = {"passed": False, "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "nonfinite": 0,
              "message": "", "reason": "structure"}
    if refs is None:
        result["message"] = f"the reference returned {type(reference).__name__}, which kj cannot compare"
        return result
    outs = outputs_of(output) if not isinstance(output, torch.Tensor) else None
    if outs is None or len(outs) != len(refs):
        got = f"{type(output).__name__} of {len(outs)}" if outs is not None else _type_name(output)
        result["message"] = f"ModelNew returned {got}, expected a {type(reference).__name__} of {len(refs)} outputs"
        return result
    result.update(passed=True, reason="")
    for i, (r, o) in enumerate(zip(refs, outs)):
        one = compare(r, o, atol, rtol, chunk) if isinstance(r, torch.Tensor) else {
            "passed": r == o, "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": int(r != o),
            "message": "" if r == o else f"expected {r!r}, got {o!r}", "reason": "" if r == o else "tolerance"}
        result["mismatches"] += one["mismatches"]
        result["nonfinite"] += one.get("nonfinite", 0)
        result["max_abs_err"] = max(result["max_abs_err"], one["max_abs_err"])
        result["max_rel_err"] = max(result["max_rel_err"], one["max_rel_err"])
        if not one["passed"] and result["passed"]:
            result.update(passed=False, message=f"output {i}: {one['message']}", reason=one["reason"])
    return result


def _compare_chunk(r, o, atol, rtol, result):
    """torch.isclose(r, o) counted, with the largest absolute and relative differences where both are finite.
    For fp32/fp64 chunks without NaN or Inf, isclose's rule is applied directly to the difference already taken
    (the same arithmetic in the same dtype, one pass fewer)."""
    if not r.is_floating_point():
        result["mismatches"] += int((~torch.isclose(r, o, atol=atol, rtol=rtol)).sum())
        return
    native = r.dtype in (torch.float32, torch.float64)
    diff = (r - o).abs_() if native else (r.double() - o.double()).abs_()
    finite = torch.isfinite(diff)  # a NaN or Inf on either side makes the difference non-finite
    if native and bool(finite.all()):
        result["mismatches"] += int((diff > o.abs().mul_(rtol).add_(atol)).sum())
    else:
        far = ~torch.isclose(r, o, atol=atol, rtol=rtol)
        result["mismatches"] += int(far.sum())
        result["nonfinite"] += int((far & ~finite).sum())  # NaN or Inf where the other side differs
        diff, r = diff[finite], r[finite]
    if diff.numel():
        result["max_abs_err"] = max(result["max_abs_err"], float(diff.max()))
        tiny = torch.finfo(torch.float32).tiny
        rel = diff.double().div_(r.abs().double().clamp_min_(tiny))  # in double: a tiny |r| overflows fp32
        result["max_rel_err"] = max(result["max_rel_err"], float(rel.max()))


def _compare_tensor(reference, output, atol, rtol, chunk):
    """One tensor, a chunk at a time, so that comparing never needs more than a few chunks of extra memory."""
    result = {"passed": False, "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "nonfinite": 0,
              "message": "", "reason": "structure"}
    if not isinstance(output, torch.Tensor):
        result["message"] = f"ModelNew returned {_type_name(output)}, expected one torch.Tensor"
        return result
    result["shape"] = list(output.shape)
    result["dtype"] = str(output.dtype).replace("torch.", "")
    if output.shape != reference.shape:
        result.update(reason="shape", message=f"output shape mismatch: expected {list(reference.shape)}, got "
                      f"{list(output.shape)}")
        return result
    if output.dtype != reference.dtype:  # KernelBench's torch.allclose raises on mixed dtypes: incorrect there too
        result.update(reason="dtype", message=f"output dtype mismatch: expected "
                      f"{str(reference.dtype).replace('torch.', '')}, got {result['dtype']}")
        return result
    with torch.no_grad():
        for r, o in flat_chunks(reference.detach(), output.detach(), size=chunk):
            _compare_chunk(r, o, atol, rtol, result)
    result["passed"] = result["mismatches"] == 0
    # A NaN or Inf where the reference has a number (or the other way) is no tolerance question.
    result["reason"] = "" if result["passed"] else "nonfinite" if result["nonfinite"] else "tolerance"
    if not result["passed"]:
        nonfinite, finite = result["nonfinite"], result["mismatches"] - result["nonfinite"]
        result["message"] = (f"output mismatch: {result['mismatches']} of {reference.numel()} elements outside "
                             f"atol={atol} rtol={rtol}"
                             + (f", {nonfinite} of them NaN or Inf against a number" if nonfinite else "")
                             + (f"; max abs error {result['max_abs_err']:.3g}" if finite else ""))
    return result


def assert_close(reference, output, atol, rtol):
    """CUDA Agent's check: torch.testing.assert_close(output, reference, atol, rtol), which also requires the same
    dtype and device and fails on NaN; the error measures come from `compare`."""
    result = compare(reference, output, atol, rtol)
    if outputs_of(output) is None or len(outputs_of(output)) != len(outputs_of(reference) or []):
        return result
    try:
        torch.testing.assert_close(output, reference, atol=atol, rtol=rtol)
        result.update(passed=True, message="", reason="")
    except AssertionError as exc:
        result.update(passed=False, message="assert_close: " + str(exc).strip().splitlines()[0],
                      reason=result["reason"] or "tolerance")
    return result
