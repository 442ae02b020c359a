"""The untrusted side of an evaluation, embedded in the `kj` binary: the candidate's process (the runner).

It imports the candidate, builds ModelNew the protocol's way, draws inputs from the recipes the judge sends (the same
code the judge draws with, kj_common.py) and calls forward. It computes nothing that is recorded: outputs go back as
bytes into the judge's arena (read and copied by C++ through TensorBase's own descriptors with torch function
handling off: no torch method, mode or dispatcher entry runs), verdicts and statistics are made in the judge, and
timing samples are taken by the C++ timing engine, which also snapshots timed outputs right after each call. Helpers here only serve
the candidate. Memory: a forward's inputs are freed before its outputs are exported, and a large output is dropped
once the judge has taken it (`release`), so the runner holds one input set and one output at most.
"""
import sys

import torch

from kj_common import (EMPTY_MODEL, KjError, Problem, SizedProblems, apply_overrides, backend_flags,
                       capture_graph, enter_precision, first_line, format_exception, is_build_failure,
                       is_out_of_memory, load_module, precision_dtype, same_bits, set_seed, tensor_bytes,
                       to_device)
from kj_recipes import draw

LARGE = 256 << 20  # bytes from which a runner returns its cached device memory after a forward

CANDIDATE_KINDS = ("incorrect", "runtime_error")  # a KjError of these kinds from inside forward passes as is


class _NoBaton:
    """torch's build lock, not needed: the build folder is read-only here and nothing is built."""

    def __init__(self, path):
        self.path = path

    def try_acquire(self):
        return True

    def release(self):
        pass

    def wait(self):
        pass


def use_prebuilt_extensions():
    """The candidate's extensions were compiled by the build step, in its own content-addressed folder, which the
    runner sees read-only: torch.utils.cpp_extension loads them from there (its versioning and import as usual)
    but neither locks nor runs ninja. An extension the build step did not produce is a compile error."""
    import os

    from torch.utils import cpp_extension

    def prebuilt_only(name, build_directory, **_):
        library = os.path.join(build_directory, f"{name}.so")
        if not os.path.exists(library):
            raise RuntimeError(f"Error building extension '{name}': it was not compiled by the build step (an "
                               "extension whose source is decided while the model runs cannot be judged)")

    cpp_extension.FileBaton = _NoBaton
    cpp_extension._write_ninja_file_and_build_library = prebuilt_only


def out_of_memory(exc, device, what="ModelNew.forward"):
    """The runtime_error a candidate's own allocation failure gets (in `what`), with the bytes it saw."""
    numbers = ""
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        numbers = (f" (the runner's torch holds {torch.cuda.memory_reserved(device)} bytes; the device has {free} of "
                   f"{total} bytes free)")
    return KjError("runtime_error", f"{what} ran out of memory{numbers}: {first_line(exc)}",
                   reason="out_of_memory")


class RunnerSession(SizedProblems):
    def __init__(self, device, protocol, prebuilt=True):
        self.device = torch.device(device)
        self.protocol = dict(protocol or {})
        precision = self.protocol.get("precision", "fp32")
        enter_precision(precision)
        self.dtype = precision_dtype(precision)
        self.pinned_flags = backend_flags()  # before the candidate is imported: its import may flip them
        self.models = {}
        self.problems = {}
        self.graphs = []
        self._forbidden = None
        if prebuilt:  # the runner loads what the build step compiled; the build step itself compiles
            use_prebuilt_extensions()

    # ---- loading ----
    def load(self, problem_path, problem_source, candidate_path, candidate_source, overrides, seed):
        self.overrides = dict(overrides)
        self.seed = seed
        self.problem = Problem(problem_path, problem_source, overrides, self.dtype)
        self.import_candidate(candidate_path, candidate_source, overrides)
        self.model_for({})

    def import_candidate(self, candidate_path, candidate_source, overrides):
        """Imports the candidate file (its extensions compile here when the build folder lacks them)."""
        try:
            source, _ = apply_overrides(candidate_source, overrides, candidate_path)
            module = load_module("kj_candidate", source, candidate_path)
        except SyntaxError as exc:
            raise KjError("load_error", f"candidate {candidate_path} has a syntax error:\n"
                          f"{format_exception(exc)}") from None
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # sys.exit() at import is a failed import too
            kind = "compile_error" if isinstance(exc, Exception) and is_build_failure(exc) else "load_error"
            raise KjError(kind, f"candidate {candidate_path} failed to import:\n{format_exception(exc)}") from None
        if not isinstance(getattr(module, "ModelNew", None), type):
            raise KjError("load_error", f"candidate {candidate_path} defines no class `ModelNew`")
        self.candidate_class = module.ModelNew

    def model_for(self, sizes):
        """ModelNew built for the problem at `sizes`, the protocol's way (cached). KernelBench: seed, init inputs,
        seed, ModelNew in train mode. CUDA Agent: Model's weights copied by a strict load_state_dict, eval mode."""
        key = tuple(sorted((sizes or {}).items()))
        if key in self.models:
            return self.models[key]
        problem = self.problem_at(sizes)
        seed = self.seed
        set_seed(seed)
        init_inputs = [to_device(x, self.device, self.dtype) for x in problem.init_inputs()]
        try:
            with torch.no_grad():
                set_seed(seed)
                model_new = self._place(self.candidate_class(*init_inputs))
        except Exception as exc:
            if is_out_of_memory(exc):
                raise out_of_memory(exc, self.device, "constructing ModelNew") from None
            raise KjError("runtime_error", f"constructing ModelNew raised:\n{format_exception(exc)}") from None
        if self.protocol.get("weights") == "state_dict":
            with torch.no_grad():
                set_seed(seed)
                model = self._place(problem.module.Model(*init_inputs))
            try:
                model_new.load_state_dict(model.state_dict(), strict=True)
            except Exception as exc:
                raise KjError("incorrect", "ModelNew does not take Model's weights (load_state_dict(strict=True), "
                              f"as the cuda-agent protocol requires):\n{exc}") from None
            del model
        if self.protocol.get("eval_mode"):
            model_new.eval()
        self.models[key] = model_new
        return model_new

    def _place(self, model):
        return model.to(device=self.device, dtype=self.dtype) if self.dtype else model.to(self.device)

    # ---- calls ----
    def inputs_for(self, recipe, sizes):
        return draw(self.problem_at(sizes), recipe, self.device)

    def prepare_forward(self, recipe, sizes, check_inputs, device_room=0):
        """(model, inputs, pristine) of one checked call: the model at `sizes`, the recipe's inputs and, for the input
        check, a pristine copy of them (`pristine`; `device_room`: the judge's bound on its bytes on the device). The
        runner's C++ makes the call itself, by the one entry it times calls with too (runner_call.hpp): a checked
        call and a timed one look alike from inside forward."""
        model = self.model_for(sizes)
        inputs = self.inputs_for(recipe, sizes)
        pristine = self.pristine(inputs, device_room) if check_inputs else None
        return model, inputs, pristine

    def pristine(self, inputs, device_room):
        """Copies of the inputs for the input check, in the candidate's process as the inputs are: all on the
        device where `pristine_on_device` (decided once for all of them), else on the host; whole before the
        candidate's code runs (a write on a stream of its own could otherwise land before a queued copy read)."""
        nbytes = tensor_bytes([x for x in inputs if isinstance(x, torch.Tensor)])
        on_device = self.device.type == "cuda" and pristine_on_device(
            nbytes, device_room, torch.cuda.mem_get_info(self.device)[0])
        copies = [None if not isinstance(x, torch.Tensor)
                  else x.detach().clone(memory_format=torch.contiguous_format) if on_device and x.is_cuda
                  else x.to("cpu", copy=True) for x in inputs]
        self.sync()
        return copies

    def forward_error(self, exc):
        """The KjError a forward's exception is: the candidate's runtime_error (out of memory named), or a KjError of
        a candidate kind kj's own check raised inside the call (forbid_functional)."""
        if isinstance(exc, KjError):
            if exc.kind in CANDIDATE_KINDS and not exc.reason:
                return exc
            # The candidate can import kj_common and raise kj's error type: a harness_error or problem_error (or an
            # out-of-memory reason) raised inside its forward is its own failure, never blamed on kj or the problem.
            return KjError("runtime_error", f"ModelNew.forward raised kj's error type ({exc.kind}"
                           f"{', ' + exc.reason if exc.reason else ''}), which is the candidate's failure:\n"
                           f"{format_exception(exc)}")
        if isinstance(exc, Exception) and is_out_of_memory(exc):
            return out_of_memory(exc, self.device)
        return KjError("runtime_error", f"ModelNew.forward raised:\n{format_exception(exc)}")

    def after_forward(self, output, model, inputs, pristine, check_inputs):
        """(changed input indices or None, overlap) of a call the runner made; its inputs are gone when this returns
        (only the caller's reference is left)."""
        self.sync()
        changed = None
        if check_inputs:
            changed = [i for i, (a, b) in enumerate(zip(inputs, pristine))
                       if isinstance(a, torch.Tensor) and (b is None or not same_bits(a, b))]
        overlap = self.overlap(output, model, inputs)
        return changed, overlap, tensor_bytes(inputs) >= LARGE

    def set_forbidden(self, on):
        """CUDA Agent's rule (the cuda-agent protocol), for every call of ModelNew.forward alike, checked and timed:
        torch.nn.functional raises while `on`. The runner turns it on around a checked call and around a whole
        timed round, so that inside forward the two look the same."""
        if not self.protocol.get("forbid_functional"):
            return
        if on and self._forbidden is None:
            self._forbidden = forbid_functional().__enter__()
        elif not on and self._forbidden is not None:
            self._forbidden.__exit__(None, None, None)
            self._forbidden = None

    def overlap(self, output, model, inputs):
        """Whether an output's storage overlaps an input, a parameter or a buffer (an alias, not a result)."""
        if isinstance(output, torch.Tensor):
            outs = [output]
        elif isinstance(output, (tuple, list)):
            outs = [o for o in output if isinstance(o, torch.Tensor)]
        else:
            return False
        others = [x for x in inputs if isinstance(x, torch.Tensor)] + list(model.parameters()) + list(model.buffers())
        for out in outs:
            if out.layout != torch.strided or not out.untyped_storage().nbytes():
                continue
            st = out.untyped_storage()
            lo, hi = st.data_ptr(), st.data_ptr() + st.nbytes()
            for t in others:
                if t.layout != torch.strided:
                    continue
                ts = t.untyped_storage()
                if ts.nbytes() and ts.data_ptr() < hi and lo < ts.data_ptr() + ts.nbytes():
                    return True
        return False

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def stream(self):
        return int(torch.cuda.current_stream(self.device).cuda_stream) if self.device.type == "cuda" else 0

    def empty_cache(self):
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    def memory_peaks(self):
        if self.device.type != "cuda":
            return {}
        return {"runner_device_bytes": torch.cuda.max_memory_reserved(self.device)}

    def empty_forward(self, inputs):
        with torch.no_grad():
            EMPTY_MODEL(*inputs)

    def graph_of(self, inputs):
        return capture_graph(self.model_for({}), inputs, self.device, self)

    # ---- findings ----
    def flag_changes(self):
        """Backend flags (TF32, reduced-precision reductions, cuDNN modes) the candidate changed."""
        current = backend_flags()
        return {k: f"{self.pinned_flags[k]} -> {v}" for k, v in current.items() if v != self.pinned_flags[k]}

    def torch_ops(self, recipe):
        """{"ops": the computing ATen ops and their counts, "dtypes": {dtype: {op: count}} of the floating tensors
        every op (copies and casts included) produced}: the judge names a fallback and a lower precision."""
        model = self.model_for({})
        inputs = self.inputs_for(recipe, {})
        ops, dtypes = torch_ops_of(lambda: model(*inputs))
        self.sync()
        del inputs
        return {"ops": ops, "dtypes": dtypes}


class CalibrationSession:
    """What a calibration round needs of a session before anything is loaded (runner.cpp, driven_round.hpp): the
    judge times its handshake with the runner while only kj's code has run in it."""

    def __init__(self, device):
        self.device = torch.device(device)

    def stream(self):
        return int(torch.cuda.current_stream(self.device).cuda_stream) if self.device.type == "cuda" else 0

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def empty_cache(self):
        pass

    def flag_changes(self):
        return {}

    def set_forbidden(self, on):
        pass


def pristine_on_device(nbytes, room, free):
    """Whether the input check's copies (`nbytes`) stay on the device: at most `room`, the reference outputs' bytes
    (KernelBench's eval holds them beside the candidate's forward; kj's judge holds nothing then, so kj's device
    use stays within KernelBench's), and at most a quarter of what is free there. Else on the host, where a
    full-size level-1 input (6.4 GB) took 1.4 s an evaluation to copy and compare."""
    return nbytes <= room and nbytes <= free // 4


class forbid_functional:
    """CUDA Agent's check: every public function of torch.nn.functional raises while active (ModelNew.forward)."""

    def __enter__(self):
        import torch.nn.functional as F

        self.saved = {}
        for name in dir(F):
            value = getattr(F, name)
            if name.startswith("_") or not callable(value) or isinstance(value, type):
                continue
            self.saved[name] = value
            setattr(F, name, self._raiser(name))
        return self

    @staticmethod
    def _raiser(name):
        def forbidden(*args, **kwargs):
            raise KjError("incorrect", f"ModelNew.forward called torch.nn.functional.{name}, which the cuda-agent "
                          "protocol forbids")
        return forbidden

    def __exit__(self, *exc):
        import torch.nn.functional as F

        for name, value in self.saved.items():
            setattr(F, name, value)
        return False


# ATen ops that only allocate, copy, view or describe memory: a kernel may call them around its own work.
# Anything else run during ModelNew.forward is PyTorch doing the computation (a torch fallback).
_MEMORY_OPS = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros",
    "view", "_unsafe_view", "reshape", "as_strided", "expand", "permute", "transpose", "t", "contiguous", "clone",
    "copy_", "_to_copy", "to", "detach", "alias", "unsqueeze", "squeeze", "select", "slice", "split", "narrow",
    "unbind", "lift_fresh", "resize_", "set_", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset",
    "is_contiguous", "item", "_local_scalar_dense", "flatten", "view_as", "expand_as", "_reshape_alias",
    "unflatten", "movedim", "chunk", "split_with_sizes", "dim", "size", "stride", "numel", "is_same_size",
    "zero_", "fill_", "ones", "ones_like", "new_ones", "full", "full_like", "new_full",
}


def torch_ops_of(call):
    """The ATen ops `call` runs that compute (not memory, views or copies), with their counts, and the floating
    dtypes every op produced ({dtype: {op: count}}: a cast to bfloat16 shows as _to_copy there). A
    TorchDispatchMode sees every op that goes through the dispatcher, from Python and from C++ extensions alike
    (at::matmul inside an extension is a fallback too); the extension's own loops and kernels are not ops."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = {}
            self.dtypes = {}

        @classmethod
        def _should_skip_dynamo(cls):
            # torch keeps Dynamo out of __torch_dispatch__ by importing torch._dynamo (about a second): needed
            # only where the candidate compiles, which has imported it already.
            return "torch._dynamo" in sys.modules

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func._schema.name.split("::")[-1]
            if name not in _MEMORY_OPS:
                self.ops[name] = self.ops.get(name, 0) + 1
            out = func(*args, **(kwargs or {}))
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(t, torch.Tensor) and t.is_floating_point():
                    seen = self.dtypes.setdefault(str(t.dtype).replace("torch.", ""), {})
                    seen[name] = seen.get(name, 0) + 1
            return out

    with Recorder() as recorder, torch.no_grad():
        call()
    return dict(sorted(recorder.ops.items())), recorder.dtypes
