"""The strict verdict's comparison: how far a candidate's output may be from the reference, and why
(docs/methodology.md, "Strict tolerance", has the arithmetic).

A floating output element passes when its NaN/+Inf/-Inf class matches the reference's and, where both are finite,
    |out - ref| <= rtol * |ref| + S * (atol_rel + C_DEPTH * u * D)
with S the RMS of the reference's finite values, u the unit roundoff of fp32 accumulation (2^-24; 2^-53 for fp64
outputs) and D the forward's reduction depth: the sum over its ops of sqrt(K), K the length of the op's longest
reduction (1 for an elementwise op). An honest kernel that sums in another order errs by about u * sqrt(K) * S per
reduction (the probabilistic bound of Higham and Mary, 2019); a kernel in TF32, fp16 or bf16 errs by 2^13 to 2^16
times more and fails. When that check fails, the element is judged against the reference computed in float64:
its class may match the fp32 reference's or the fp64 reference's (rounded to the output dtype), and
    |out - ref64| <= rtol * |ref64| + S64 * (atol_rel + C_DEPTH * u * D) + K_REF * E_ref
with E_ref the fp32 reference's own largest error against float64: an honest kernel is never held to a standard
the fp32 reference itself misses. Every pass works a chunk at a time.
"""
import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kj_common import flat_chunks

# (rtol, atol relative to the RMS of the finite reference values) per output dtype.
TOLERANCES = {torch.float32: (1e-4, 1e-5), torch.float64: (1e-7, 1e-9), torch.float16: (1e-2, 1e-3),
              torch.bfloat16: (2e-2, 1e-2)}
C_DEPTH = 8.0  # how many expected reordering errors an element may carry (a max over many elements is ~5x)
K_REF = 4.0  # how many times the fp32 reference's own error a candidate may make
U32, U64 = 2.0 ** -24, 2.0 ** -53

# ---- the reduction depth of a forward ----

_MEMORY = {"view", "_unsafe_view", "reshape", "as_strided", "expand", "permute", "transpose", "t", "contiguous",
           "clone", "copy_", "_to_copy", "to", "detach", "alias", "unsqueeze", "squeeze", "select", "slice",
           "split", "narrow", "unbind", "lift_fresh", "empty", "empty_like", "empty_strided", "zeros", "zeros_like",
           "ones", "ones_like", "full", "full_like", "new_empty", "new_zeros", "new_ones", "new_full", "fill_",
           "zero_", "cat", "stack", "flatten", "unflatten", "split_with_sizes", "chunk", "index_select", "gather",
           "_reshape_alias", "expand_as", "view_as", "movedim", "sym_size", "sym_stride", "sym_numel", "item",
           "_local_scalar_dense", "is_same_size", "dim", "size", "stride", "numel", "resize_", "set_", "pad",
           "constant_pad_nd", "masked_fill", "masked_fill_", "where", "max", "min", "amax", "amin", "argmax",
           "argmin", "relu", "relu_", "max_pool2d_with_indices", "max_pool3d_with_indices", "max_pool1d"}


def _numel(x):
    return x.numel() if isinstance(x, torch.Tensor) else 0


def _prod(values):
    out = 1
    for v in values:
        out *= int(v)
    return out


def reduction_length(name, args, out):
    """The length K of the longest sum one element of `name`'s output accumulates."""
    a = [x for x in args if isinstance(x, torch.Tensor)]
    if name in ("mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "matmul", "linear"):
        first = args[1] if name.startswith("add") or name == "baddbmm" else args[0]
        return int(first.shape[-1]) if isinstance(first, torch.Tensor) and first.dim() else 1
    if name in ("dot", "vdot", "inner"):
        return _numel(args[0])
    if "convolution" in name and len(args) > 1 and isinstance(args[1], torch.Tensor):
        w = args[1]
        transposed = bool(args[6]) if len(args) > 6 and isinstance(args[6], bool) else False
        return max(1, w.numel() // max(1, int(w.shape[1] if transposed else w.shape[0])))
    if "scaled_dot_product" in name and len(a) >= 2:
        return max(int(a[0].shape[-1]), int(a[1].shape[-2]))
    if name in ("_softmax", "_log_softmax", "softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp"):
        dim = int(args[1]) if len(args) > 1 and isinstance(args[1], int) else -1
        return int(a[0].shape[dim]) if a and a[0].dim() else 1
    if name == "native_layer_norm" and len(args) > 1:
        return _prod(args[1])
    if "batch_norm" in name and a and a[0].dim() > 1:
        return a[0].numel() // max(1, int(a[0].shape[1]))
    if name == "native_group_norm" and len(args) > 6:
        return max(1, int(args[4]) // max(1, int(args[6]))) * int(args[5])
    outs = out if isinstance(out, (tuple, list)) else [out]
    out_numel = max([_numel(o) for o in outs] + [1])
    return max(1, max([_numel(x) for x in a] + [1]) // out_numel)


class DepthMode(TorchDispatchMode):
    """Records, for every computing op a forward runs, sqrt(K) of its longest reduction; `depth` is their sum."""

    def __init__(self):
        super().__init__()
        self.depth, self.ops, self.longest = 0.0, 0, 1

    @classmethod
    def _should_skip_dynamo(cls):
        # Only the reference runs under this mode and nothing compiles in it: torch would otherwise wrap
        # __torch_dispatch__ to keep Dynamo out and import torch._dynamo (about a second) to do so.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func._schema.name.split("::")[-1]
        if name not in _MEMORY and not name.startswith("_foreach"):
            try:
                k = reduction_length(name, args, out)
            except Exception:  # an op whose arguments do not look as expected: count it as elementwise
                k = 1
            self.depth += math.sqrt(k)
            self.ops += 1
            self.longest = max(self.longest, k)
        return out


# ---- comparisons, a chunk at a time ----

def nonfinite_class(t):
    """0 finite, 1 NaN, 2 +Inf, 3 -Inf."""
    c = torch.zeros(t.shape, dtype=torch.int8, device=t.device)
    if t.is_floating_point():
        c.masked_fill_(torch.isnan(t), 1).masked_fill_(torch.isposinf(t), 2).masked_fill_(torch.isneginf(t), 3)
    return c


def finite_rms(t, chunk=None):
    squares, count = 0.0, 0
    for (r,) in flat_chunks(t, size=chunk):
        if not r.is_floating_point():
            r = r.double()  # integer and bool outputs (argmax, masks): their RMS still scales nothing
        elif not bool(torch.isfinite(r).all()):
            r = r[torch.isfinite(r)]
        squares += float(torch.linalg.vector_norm(r, dtype=torch.float64)) ** 2
        count += r.numel()
    return (squares / count) ** 0.5 if count else 0.0


def _fast_pass(o, r, floor, rtol):
    """The largest difference when every element of the chunk is finite and within tolerance, else None (the
    chunk then goes through the full check). fp32 and fp64 differences are taken in their own precision: the
    difference of two close values is exact, and of two far ones far beyond any tolerance."""
    if not r.is_floating_point() or r.dtype not in (torch.float32, torch.float64):
        return None
    diff = (o - r).abs_()
    # NaN and Inf differences fail either test (an Inf reference would make its own limit infinite)
    if not bool((diff <= r.abs().mul_(rtol).add_(floor)).all()) or not bool(torch.isfinite(diff).all()):
        return None
    return float(diff.max()) if diff.numel() else 0.0


def unit_roundoff(dtype):
    return U64 if dtype == torch.float64 else U32


def _details():
    return {"max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "nonfinite_mismatches": 0, "first_index": -1}


def _note_first(d, wrong, r, o, offset):
    if d["first_index"] < 0 and bool(wrong.any()):
        at = int(wrong.nonzero()[0])
        d["first_index"] = offset + at
        d["first_values"] = f"expected {r[at].item()!r}, got {o[at].item()!r}"  # text: JSON has no NaN


def judge(out, ref, rtol, atol_rel, depth, chunk=None):
    """`out` against the fp32 (or the problem's own precision) reference; returns (passed, details)."""
    scale = finite_rms(ref, chunk)
    floor = scale * (atol_rel + C_DEPTH * unit_roundoff(ref.dtype) * depth) if ref.is_floating_point() else 0.0
    d, offset = _details(), 0
    for r, o in flat_chunks(ref, out, size=chunk):
        fast = _fast_pass(o, r, floor, rtol)
        if fast is not None:
            d["max_abs_err"] = max(d["max_abs_err"], fast)
            offset += r.numel()
            continue
        wrong = nonfinite_class(o) != nonfinite_class(r)
        d["nonfinite_mismatches"] += int(wrong.sum())
        both = torch.isfinite(o) & torch.isfinite(r) if r.is_floating_point() else torch.ones_like(wrong, dtype=torch.bool)
        diff = torch.where(both, (o.double() - r.double()).abs(), 0.0)
        bad = both & (diff > floor + rtol * r.double().abs())
        d["mismatches"] += int(bad.sum())
        d["max_abs_err"] = max(d["max_abs_err"], float(diff.max()) if diff.numel() else 0.0)
        wrong |= bad
        _note_first(d, wrong, r, o, offset)
        offset += r.numel()
    d["max_rel_err"] = d["max_abs_err"] / scale if scale > 0 else 0.0
    d["bound"] = floor / scale if scale > 0 else 0.0
    return d["mismatches"] == 0 and d["nonfinite_mismatches"] == 0, d


def reference_error(ref32, ref64, chunk=None):
    """E_ref: the fp32 reference's largest error against float64 where both are finite."""
    worst = 0.0
    for a, b in flat_chunks(ref32, ref64, size=chunk):
        b = b.to(a.device)
        both = torch.isfinite(a) & torch.isfinite(b)
        if bool(both.any()):
            worst = max(worst, float((a.double() - b)[both].abs().max()))
    return worst


def judge64(out, ref32, ref64, rtol, atol_rel, depth, chunk=None):
    """`out` against the float64 reference (which may live on the host), with the fp32 reference's own error
    allowed K_REF times; NaN/Inf classes may match either reference. Returns (passed, details)."""
    e_ref = reference_error(ref32, ref64, chunk)
    scale = finite_rms(ref64, chunk)
    floor = scale * (atol_rel + C_DEPTH * unit_roundoff(out.dtype) * depth) + K_REF * e_ref
    d, offset = _details(), 0
    for o, a, b in flat_chunks(out, ref32, ref64, size=chunk):
        b = b.to(o.device)
        c = nonfinite_class(o)
        wrong = (c != nonfinite_class(a)) & (c != nonfinite_class(b.to(o.dtype)))
        d["nonfinite_mismatches"] += int(wrong.sum())
        both = torch.isfinite(o) & torch.isfinite(b)
        diff = torch.where(both, (o.double() - b).abs(), 0.0)
        bad = both & ~wrong & (diff > floor + rtol * b.abs())
        d["mismatches"] += int(bad.sum())
        d["max_abs_err"] = max(d["max_abs_err"], float(diff.max()) if diff.numel() else 0.0)
        wrong |= bad
        _note_first(d, wrong, b, o, offset)
        offset += o.numel()
    d["max_rel_err"] = d["max_abs_err"] / scale if scale > 0 else 0.0
    d["bound"] = floor / scale if scale > 0 else 0.0
    d["reference_error"] = e_ref / scale if scale > 0 else 0.0
    return d["mismatches"] == 0 and d["nonfinite_mismatches"] == 0, d


def worth_fp64(details):
    """Whether the float64 reference could change a failing fp32 judgment: NaN/Inf mismatches, or value errors
    within a thousand times the bound (a wrong kernel errs by far more, and float64 costs time and memory)."""
    if details["nonfinite_mismatches"]:
        return True
    return details["max_rel_err"] <= 1000 * max(details.get("bound", 0.0), 1e-6)


def constant(ref):
    """Whether agreeing with `ref` says nothing: no value, one value everywhere, or no finite value. A single
    value (a loss, a norm) is informative when finite: it differs from input to input."""
    flat = ref.reshape(-1)
    if flat.numel() == 0:
        return True
    first = flat[0]
    if flat.numel() == 1:
        return not bool(torch.isfinite(first)) if ref.is_floating_point() or ref.is_complex() else False
    return all(bool((c == first).all()) or (bool(torch.isnan(first)) and bool(torch.isnan(c).all()))
               for (c,) in flat_chunks(ref))
