"""Baselines: a problem's own Model, eager or under torch.compile, built and called the way a candidate is timed.

The C++ worker times `Baseline.call` with the same timer, method and input sets as candidates; this module builds the
model (KernelBench's seeded construction, the protocol's precision and mode), compiles it after
torch._dynamo.reset(), and maps failures to statuses: compile_error, runtime_error, oom.
"""
import time

import torch

from kj_common import KjError, format_exception
from kj_compare import compare

# mode name -> torch.compile's `mode` argument (None: default); "eager" is not compiled.
COMPILE_MODES = {
    "compile-default": None,
    "max-autotune": "max-autotune",
    "max-autotune-no-cudagraphs": "max-autotune-no-cudagraphs",
    "reduce-overhead": "reduce-overhead",
}


def _input_bytes(inputs):
    return sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))


def _oom(exc, what, inputs):
    return KjError("oom", f"{what} ran out of memory (the inputs alone take {_input_bytes(inputs)} bytes): "
                   f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")


class Baseline:
    """The reference Model of `session`'s problem under `mode`; `session.timing` (its inputs) must be begun."""

    def __init__(self, session, seed, mode):
        if mode != "eager" and mode not in COMPILE_MODES:
            raise KjError("harness_error", f"unknown baseline mode '{mode}'")
        self.session, self.mode = session, mode
        inputs = session.timing.current
        try:
            self.model = self._construct(seed)
            with torch.no_grad():
                self.eager_output = self.model(*inputs)  # also the check that the reference runs at all
            session.sync()
        except torch.OutOfMemoryError as exc:
            raise _oom(exc, "the eager reference", inputs) from None
        except KjError as exc:  # a baseline's statuses: the reference that raised is its runtime_error
            if exc.kind != "problem_error":
                raise
            raise KjError("runtime_error", f"the reference Model raised:\n{exc.message}") from None
        except Exception as exc:
            raise KjError("runtime_error", f"the reference Model raised:\n{format_exception(exc)}") from None
        self.compile_s = 0.0
        self.forward = self.model
        if mode != "eager":
            self.forward = self._compile(inputs)

    def _construct(self, seed):
        """The reference Model exactly as the judge builds it (kj_judge.Session.construct_reference)."""
        return self.session.construct_reference(self.session.problem, seed)

    def _compile(self, inputs):
        """torch.compile after torch._dynamo.reset(); the first call compiles (timed as compile_s)."""
        torch._dynamo.reset()
        start = time.perf_counter()
        try:
            compiled = torch.compile(self.model, mode=COMPILE_MODES[self.mode])
            with torch.no_grad():
                compiled(*inputs)
            self.session.sync()
        except torch.OutOfMemoryError as exc:
            raise _oom(exc, f"torch.compile ({self.mode})", inputs) from None
        except Exception as exc:
            raise KjError("compile_error", f"torch.compile ({self.mode}) failed:\n{format_exception(exc)}") from None
        self.compile_s = time.perf_counter() - start
        return compiled

    def matches_eager(self, atol, rtol):
        """The output on the first timing set against the eager output computed before compiling, at the
        protocol's tolerance. A note for reports, not a verdict: compiled convolutions and deep networks differ
        from eager by more than 1e-4, and for mode eager this is the same forward twice (dropout differs)."""
        with torch.no_grad():
            output = self.forward(*self.session.timing.current)
        self.session.sync()
        result = compare(self.eager_output, output, atol, rtol)
        self.eager_output = None
        return result

    def call(self):
        with torch.no_grad():
            self.forward(*self.session.timing.current)


def release():
    """Between modes and problems: collect the last model and its compiled code, reset dynamo, return cached
    device memory to the driver."""
    import gc

    gc.collect()
    torch._dynamo.reset()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def draw_inputs(session, seed, fresh):
    """session.timing_begin, with running out of memory reported as status oom with the bytes needed."""
    try:
        return session.timing_begin(seed, fresh)
    except torch.OutOfMemoryError as exc:
        raise inputs_oom(session.problem, exc) from None


def inputs_oom(problem, exc):
    """The KjError for inputs that do not fit: the bytes one input set needs (drawn on the meta device)."""
    try:
        with torch.device("meta"):
            needed = _input_bytes(list(problem.module.get_inputs()))
        need = f"one input set needs {needed} bytes ({needed / 2**30:.2f} GiB)"
    except Exception:
        need = "the size of one input set is unknown"
    free = ""
    if torch.cuda.is_available():
        free_bytes, total = torch.cuda.mem_get_info()
        free = f"; the device has {free_bytes} of {total} bytes free"
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return KjError("oom", f"drawing the inputs ran out of memory: {need}{free}: {first}")
