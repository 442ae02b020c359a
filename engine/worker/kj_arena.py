"""The arena as the judge sees it: judge-owned memory (device memory by pointer, a host memfd by path) the runner
writes the candidate's outputs into, and the layouts the runner describes them with, checked before any view is
made (the runner's word: what does not add up is the candidate's failure, never an out-of-bounds view).
"""
import math

import torch

from kj_common import KjError


class _DeviceMemory:
    """Raw device memory seen through __cuda_array_interface__ (torch.as_tensor wraps it without a copy)."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3,
                                         "strides": None}


def arena_tensor(spec, device):
    """A uint8 tensor over an arena {"kind": "cuda", "ptr", "bytes"} or {"kind": "file", "path", "bytes"}."""
    if spec["kind"] == "cuda":
        return torch.as_tensor(_DeviceMemory(int(spec["ptr"]), int(spec["bytes"])), device=device)
    import mmap

    with open(spec["path"], "r+b") as f:
        memory = mmap.mmap(f.fileno(), int(spec["bytes"]))
    return torch.frombuffer(memory, dtype=torch.uint8)


_DTYPE_NAMES = {str(d).replace("torch.", ""): d for d in (
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int16,
    torch.int32, torch.int64, torch.bool, torch.complex64, torch.complex128)}


def flat_itemsize(dtype):
    return torch.empty((), dtype=dtype).element_size()


def _layout(o, dtype):
    """An output's shape and strides as described, checked against its span: the runner's word, so anything that
    does not add up is the candidate's failure (never an out-of-bounds view in the judge)."""
    try:
        shape = [int(d) for d in o["shape"]]
        strides = [int(d) for d in o.get("strides", _contiguous_strides(shape))]
        span = int(o.get("span_bytes", 0))
    except (KeyError, TypeError, ValueError):
        raise KjError("runtime_error", "the candidate's process described an output without a layout") from None
    itemsize = torch.empty((), dtype=dtype).element_size()
    extent = 0 if math.prod(shape) == 0 else 1 + sum((d - 1) * s for d, s in zip(shape, strides))
    if len(strides) != len(shape) or any(d < 0 for d in shape) or any(s < 0 for s in strides) or \
            span != extent * itemsize:
        raise KjError("runtime_error", f"the candidate's process described an output of shape {shape}, strides "
                      f"{strides} in {span} bytes")
    return shape, strides


def _contiguous_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return list(reversed(strides))


def _sampled_pair(arena, reference, o, dtype):
    """A sampled output (its memory in chunks chosen after the call) and the reference's same elements: the
    reference laid out in the candidate's order, the chunks' elements taken from both, as 1-d tensors."""
    shape, strides = _layout(o, dtype)
    if list(reference.shape) != shape or reference.dtype != dtype:  # compare() names the mismatch
        return reference, torch.empty(shape, dtype=dtype, device="meta")
    chunk = int(o["chunk_bytes"])
    itemsize = reference.element_size()
    numel = reference.numel()
    if strides == _contiguous_strides(shape):
        laid = reference.reshape(-1)
    else:
        laid = torch.empty(numel, dtype=dtype, device=reference.device)
        torch.as_strided(laid, shape, strides).copy_(reference)
    pieces, total = [], 0
    for c in o["chunks"]:
        begin = int(c) * chunk // itemsize
        end = min(numel, begin + chunk // itemsize)
        if begin >= end:
            raise KjError("runtime_error", f"the candidate's process described chunk {c} past its output")
        pieces.append(laid[begin:end])
        total += (end - begin) * itemsize
    offset = int(o["offset"])
    if offset < 0 or offset + total > arena.numel():
        raise KjError("runtime_error", "the candidate's process described a sampled output outside the arena")
    return torch.cat(pieces), arena[offset:offset + total].view(dtype)
