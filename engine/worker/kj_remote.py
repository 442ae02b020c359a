"""The judge's handle on the candidate's process (the runner): requests out, outputs back through the arena as
bytes (never unpickled, never executed), and the control asked when the runner blames the problem."""
import math

import torch

from kj_arena import _DTYPE_NAMES, _layout, arena_tensor, flat_itemsize
from kj_common import KjError
from kj_compare import Opaque
from kj_memory import Memory, guarded


class RemoteError(KjError):
    pass


class RemoteCandidate:
    """The judge's handle on the candidate in the runner process. `request` (C++) sends one JSON request and
    returns the reply; outputs come back as bytes in the arena, described by the reply (offset, dtype, shape),
    and are cloned out of it at once; then `release` (C++) has the runner drop its copy and frees a large arena,
    so that no case starts with the last one's memory held. Nothing the runner sends is unpickled or executed."""

    def __init__(self, request, device, release=None, memory=None, allow=None, draw_cap=None, control=None):
        self.request, self.device, self.release = request, torch.device(device), release
        self.control, self.alone = control, {}  # the problem alone in kj's sandbox (C++), asked once per size
        self.memory = memory or Memory(device)
        # The runner's draw of a checked call's inputs is kj's work in the candidate's process: `allow` (C++)
        # leaves the first `draw_cap(sizes)` ms of the call's wait off the candidate's clock (--timeout): the
        # judge's own draws of those sizes bound it, never the candidate's word.
        self.allow, self.draw_cap = allow, draw_cap

    def call(self, message):
        import json

        reply = json.loads(self.request(json.dumps(message)))
        if not reply.get("ok") and reply.get("kind") == "harness_error" and reply.get("reason") == "out_of_memory":
            self.memory.release(make_room=True)  # what is kj's goes before the blame is decided
            raise self.memory.out_of_memory("allocating the arena for the candidate's outputs", reply.get("error", ""))
        if not reply.get("ok"):
            raise RemoteError(reply.get("kind", "runtime_error"), reply.get("error", "the runner failed"),
                              reply.get("reason", ""))
        return reply

    def forward(self, recipe, sizes=None, check_inputs=False, phase="case"):
        if self.allow is not None and self.draw_cap is not None:
            self.allow(self.draw_cap(sizes or {}))
        message = {"op": "forward", "recipe": recipe, "sizes": sizes or {}, "check_inputs": check_inputs,
                   "phase": phase}
        if check_inputs:  # the most the input check's copy may hold on the device: the reference's outputs' bytes
            message["pristine_device_bytes"] = int(self.memory.output_bytes)
        reply = self.call(message)
        return self.outputs(reply), reply

    def problem_alone(self, recipe, sizes, exc):
        """The runner blamed the problem's draw and the judge's own draw worked: a control runner with no
        candidate in it draws the same recipe in kj's sandbox. Raises the problem's error when it fails there
        too (a get_inputs() that needs the network or $HOME); returns when the candidate broke its process."""
        import json

        key = json.dumps(sizes or {}, sort_keys=True)
        if self.control is not None and key not in self.alone:
            self.alone[key] = json.loads(self.control(json.dumps(
                {"op": "forward", "recipe": recipe, "sizes": sizes or {}, "check_inputs": False, "phase": "case"})))
        reply = self.alone.get(key) or {}
        if not reply.get("ok", True) and reply.get("kind") == "problem_error":
            raise KjError("problem_error", reply.get("error", ""))  # worded by the control (problem_alone.cpp)

    def outputs(self, reply):
        """The forward's result as the judge sees it: a tensor, a tuple/list of tensors, or an `Opaque` for
        anything else; cloned out of this reply's arena, which is then released."""
        try:
            # The description is the runner's (the candidate's process) word: what does not fit it is its failure.
            tensors = any(o.get("tensor") and int(o.get("nbytes", 0)) > 0 for o in reply["outputs"])
            if tensors and "arena" not in reply:
                raise KjError("runtime_error", "the candidate's process described outputs in no arena kj holds")
            arena = arena_tensor(reply["arena"], self.device) if tensors else None
            self.memory.arena_bytes = int(reply["arena"]["bytes"]) if tensors else 0
            self.memory.arena_peak = max(self.memory.arena_peak, self.memory.arena_bytes)
            parts = [self._tensor(arena, o) if o.get("tensor") else Opaque(o.get("type", "?"))
                     for o in reply["outputs"]]
            span = sum(int(o.get("span_bytes", 0)) for o in reply["outputs"] if o.get("tensor"))
            self.memory.candidate_span = max(getattr(self.memory, "candidate_span", 0), span)
            del arena
        finally:
            if self.release is not None:
                self.release()
            self.memory.arena_bytes = 0
        structure = reply["structure"]
        if structure == "tensor":
            return parts[0]
        if structure in ("tuple", "list"):
            return tuple(parts) if structure == "tuple" else list(parts)
        return Opaque(reply.get("type", "?"))

    def _tensor(self, arena, o):
        dtype = _DTYPE_NAMES.get(o["dtype"])
        if dtype is None:
            return Opaque(f"tensor of dtype {o['dtype']}")
        shape, strides = _layout(o, dtype)
        span, offset = int(o.get("span_bytes", 0)), int(o["offset"] if "offset" in o else -1)
        if math.prod(shape) == 0:  # an empty output needs no arena (one may be released)
            return torch.empty(shape, dtype=dtype, device=self.device)
        if arena is None or offset < 0 or offset + span > arena.numel():
            raise KjError("runtime_error", "the candidate's process described an output outside the arena")
        logical = math.prod(shape) * flat_itemsize(dtype)
        if self.memory.output_bytes and logical > 2 * self.memory.output_bytes + (64 << 20):
            # far larger than the reference's outputs (a broadcast view of a few bytes, say): compared by its
            # shape alone, never laid out in the judge's memory
            return torch.empty(shape, dtype=dtype, device="meta")
        flat = guarded(self.memory, "taking the candidate's output from the arena",
                       lambda: arena[offset:offset + span].clone())
        view = torch.as_strided(flat.view(dtype), shape, strides)
        if view.is_contiguous():
            return view
        return guarded(self.memory, "laying out the candidate's output", lambda: view.contiguous())


