"""The torch-facing half of the kerneljudge worker, embedded in the `kj` binary.

The C++ worker drives the sequence (which trial, when to time, what to report); this module only does what needs
PyTorch: loading problem and candidate sources into fresh modules, building models the KernelBench way, drawing inputs
under a seed, running forwards and comparing tensors. Timing and statistics stay in C++, out of the candidate's reach.
"""
import ast
import linecache
import os
import sys
import traceback
import types

import torch


class KjError(Exception):
    """An error with a verdict attached: `kind` is one of the worker's verdicts (load_error, compile_error, ...)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


def _quiet(probe, default=""):
    try:
        value = probe()
        return default if value is None else value
    except Exception:
        return default


def _package_version(name):
    from importlib import metadata

    return _quiet(lambda: metadata.version(name))


def _nvcc_version():
    import subprocess

    from torch.utils.cpp_extension import CUDA_HOME

    nvcc = os.path.join(CUDA_HOME, "bin", "nvcc") if CUDA_HOME else "nvcc"
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=20).stdout
    return out.strip().splitlines()[-1] if out.strip() else ""


def _cuda_driver_version():
    """cuDriverGetVersion from libcuda (13000 = CUDA 13.0): the newest CUDA the installed driver supports."""
    import ctypes

    version = ctypes.c_int(0)
    ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version))
    return version.value


def _nvidia_driver():
    with open("/proc/driver/nvidia/version") as f:  # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04 ..."
        words = f.readline().split()
    return next((w for w in words if w.count(".") >= 1 and w.replace(".", "").isdigit()), "")


def environment():
    """The stack fingerprint: everything that can change a verdict or a timing, except clocks and temperatures
    (those are per-measurement NVML snapshots). The orchestrator hashes it into the stack id."""
    import platform

    info = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "torch_git": getattr(torch.version, "git_version", ""),
        "cuda_available": bool(torch.cuda.is_available()),
        "torch_cuda": torch.version.cuda or "",
        "cudnn": _quiet(lambda: torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else "", ""),
        "triton": _package_version("triton"),
        "numpy": _package_version("numpy"),
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "backend_flags": backend_flags(),
        "env": {k: v for k, v in sorted(os.environ.items())
                if k.startswith(("TORCHINDUCTOR_", "TORCH_", "PYTORCH_", "CUDA_", "CUBLAS_", "CUDNN_", "NVIDIA_TF32"))
                and k not in ("CUDA_VISIBLE_DEVICES", "TORCH_EXTENSIONS_DIR", "TORCHINDUCTOR_CACHE_DIR")},  # GPU, caches
    }
    if info["cuda_available"]:
        props = torch.cuda.get_device_properties(0)
        info.update({
            "device_name": props.name,
            "device_count": torch.cuda.device_count(),
            "gpu_uuid": str(_quiet(lambda: props.uuid)),
            "sm_count": props.multi_processor_count,
            "compute_capability": f"{props.major}.{props.minor}",
            "gpu_memory_bytes": props.total_memory,
            "l2_bytes": _quiet(lambda: props.L2_cache_size, 0),
            "cuda_driver": _quiet(_cuda_driver_version, 0),
            "nvidia_driver": _quiet(_nvidia_driver),
            "nvcc": _quiet(_nvcc_version),
        })
    else:
        info["device_name"] = info["cpu"]
    return info


def apply_overrides(source, overrides, filename):
    """Rewrites top-level `NAME = <int literal>` assignments named in `overrides`; returns (source, applied)."""
    tree = ast.parse(source, filename)
    lines = source.splitlines(keepends=True)
    edits, applied = [], {}
    for node in tree.body:
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target = node.target.id
        if target not in overrides:
            continue
        value = node.value
        if not (isinstance(value, ast.Constant) and type(value.value) is int):
            continue
        if value.lineno != value.end_lineno:
            continue
        edits.append((value.lineno - 1, value.col_offset, value.end_col_offset, str(int(overrides[target]))))
        applied[target] = int(overrides[target])
    for line, start, end, text in sorted(edits, reverse=True):
        encoded = lines[line].encode()  # ast offsets are in UTF-8 bytes
        lines[line] = (encoded[:start] + text.encode() + encoded[end:]).decode()
    return "".join(lines), applied


def load_module(name, source, filename):
    """Executes `source` in a fresh module registered as `name` (tracebacks show the source's lines)."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


def format_exception(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()


def _is_build_failure(exc):
    import subprocess

    text = f"{type(exc).__name__}: {exc}"
    return isinstance(exc, subprocess.CalledProcessError) or "Error building extension" in text


def _needs_weights(exc):
    """A Hugging Face model that cannot be had: transformers missing, or its weights not downloadable/cached."""
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in ("transformers", "huggingface_hub"):
        return True
    text = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
    return isinstance(exc, OSError) and any(k in text for k in (
        "huggingface", "hf.co", "HF_HUB_OFFLINE", "offline mode", "couldn't connect", "does not appear to have a file"))


def set_seed(seed):
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def to_device(value, device, dtype=None):
    """Moves a tensor to the device; floating tensors are cast to `dtype` when given. Integer and bool inputs keep
    their dtypes (KernelBench main casts every input to its precision: its issue #151)."""
    if not isinstance(value, torch.Tensor):
        return value
    if dtype is not None and value.is_floating_point():
        return value.to(device=device, dtype=dtype)
    return value.to(device=device)


# Process-wide numerics switches a candidate could flip to loosen the reference it is compared with (TF32 matmuls
# and convolutions make an fp32 reference about 1e-3 accurate) or to change how it is timed.
_FLAGS = {
    "float32_matmul_precision": (torch.get_float32_matmul_precision, torch.set_float32_matmul_precision),
    "backends.cuda.matmul.allow_tf32": (lambda: torch.backends.cuda.matmul.allow_tf32,
                                        lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v)),
    "backends.cudnn.allow_tf32": (lambda: torch.backends.cudnn.allow_tf32,
                                  lambda v: setattr(torch.backends.cudnn, "allow_tf32", v)),
    "backends.cuda.matmul.allow_fp16_reduced_precision_reduction": (
        lambda: torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        lambda v: setattr(torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", v)),
    "backends.cuda.matmul.allow_bf16_reduced_precision_reduction": (
        lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        lambda v: setattr(torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", v)),
    "backends.cudnn.benchmark": (lambda: torch.backends.cudnn.benchmark,
                                 lambda v: setattr(torch.backends.cudnn, "benchmark", v)),
    "backends.cudnn.deterministic": (lambda: torch.backends.cudnn.deterministic,
                                     lambda v: setattr(torch.backends.cudnn, "deterministic", v)),
}


def backend_flags():
    import warnings

    with warnings.catch_warnings():  # newer torch deprecates some of these names in favour of fp32_precision
        warnings.simplefilter("ignore")
        return {name: get() for name, (get, _) in _FLAGS.items()}


def set_backend_flags(flags):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, value in flags.items():
            _FLAGS[name][1](value)


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


def _tensor_summary(value):
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype).replace("torch.", "")}
    return {"value": repr(value)[:80]}


class Problem:
    """A problem file loaded into its own module, with integer module constants overridden."""

    def __init__(self, path, source, overrides, dtype=None):
        self.raw_source = source
        self.dtype = dtype  # floating inputs are cast to it (the protocol's precision); None keeps them
        try:
            source, self.applied = apply_overrides(source, overrides, path)
            self.source = source
            self.module = load_module("kj_problem", source, path)
        except SyntaxError as exc:
            raise KjError("problem_error", f"problem file {path}: {format_exception(exc)}") from None
        except Exception as exc:
            if _needs_weights(exc):
                raise KjError("needs_weights", f"problem file {path} needs `transformers` and its model weights "
                              "available offline (KernelBench level 4 loads Hugging Face models): "
                              f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
            raise KjError("problem_error", f"problem file {path} raised while loading:\n{format_exception(exc)}")
        for name in ("Model", "get_inputs", "get_init_inputs"):
            if not hasattr(self.module, name):
                raise KjError("problem_error", f"problem file {path}: no `{name}` defined (KernelBench format needs "
                              "class Model, get_inputs() and get_init_inputs())")
        self.path = path

    def int_constants(self):
        """Top-level `NAME = <int literal>` assignments (after overrides): the sizes `--set` can change."""
        found = {}
        for node in ast.parse(self.source).body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Constant) and type(node.value.value) is int):
                found[node.targets[0].id] = node.value.value
        return found

    def init_inputs(self):
        return list(self.module.get_init_inputs())

    def inputs(self, device, draw_on_device=False):
        """get_inputs() moved to the device; with draw_on_device the random draws themselves run there (much faster
        for GB-sized inputs; the strict cases use it, the compatible trials draw on the CPU as KernelBench does)."""
        if draw_on_device and torch.device(device).type != "cpu":
            with torch.device(device):
                return [to_device(x, device, self.dtype) for x in self.module.get_inputs()]
        return [to_device(x, device, self.dtype) for x in self.module.get_inputs()]

    def describe(self):
        """Shapes and dtypes of inputs and init inputs, drawn on the meta device so nothing is allocated."""
        try:
            with torch.device("meta"):
                inputs = list(self.module.get_inputs())
        except Exception:
            inputs = list(self.module.get_inputs())
        return {"inputs": [_tensor_summary(x) for x in inputs],
                "init_inputs": [_tensor_summary(x) for x in self.init_inputs()],
                "applied_overrides": self.applied}


class Session:
    """One evaluation: a problem, a candidate, the models built from them, and the inputs in use."""

    def __init__(self, device, protocol=None):
        self.device = torch.device(device)
        self.protocol = dict(protocol or {})
        precision = self.protocol.get("precision", "fp32")
        self.dtype = None if precision == "fp32" else DTYPES[precision]
        self.pinned_flags = backend_flags()  # before the candidate is imported: its import may flip them
        self.flag_changes = {}
        self.problem = None
        self.model = None
        self.model_new = None
        self.timing_inputs = None

    def load_problem(self, path, source, overrides):
        self.overrides = dict(overrides)
        self.problem = Problem(path, source, overrides, self.dtype)
        return self.problem.applied

    def load_candidate(self, path, source, overrides):
        """Imports the candidate; module constants it shares with the problem get the same overrides."""
        try:
            source, _ = apply_overrides(source, overrides, path)
            module = load_module("kj_candidate", source, path)
        except SyntaxError as exc:
            raise KjError("load_error", f"candidate {path} has a syntax error:\n{format_exception(exc)}") from None
        except Exception as exc:
            kind = "compile_error" if _is_build_failure(exc) else "load_error"
            raise KjError(kind, f"candidate {path} failed to import:\n{format_exception(exc)}") from None
        if not isinstance(getattr(module, "ModelNew", None), type):
            raise KjError("load_error", f"candidate {path} defines no class `ModelNew`")
        self.candidate_class = module.ModelNew

    def build_models(self, seed):
        self.model, self.model_new = self.construct(self.problem, seed)
        self.sync()

    def construct(self, problem, seed):
        """Builds (Model, ModelNew) for `problem` the protocol's way. KernelBench: seed, init inputs, seed, Model;
        seed, ModelNew, both in train mode. CUDA Agent: ModelNew gets Model's weights by a strict load_state_dict,
        both in eval mode. Both are moved to the device and cast to the protocol's precision."""
        set_seed(seed)
        init_inputs = [to_device(x, self.device, self.dtype) for x in problem.init_inputs()]
        with torch.no_grad():
            set_seed(seed)
            model = self._place(problem.module.Model(*init_inputs))
        try:
            with torch.no_grad():
                set_seed(seed)
                model_new = self._place(self.candidate_class(*init_inputs))
        except Exception as exc:
            raise KjError("runtime_error", f"constructing ModelNew raised:\n{format_exception(exc)}") from None
        if self.protocol.get("weights") == "state_dict":
            try:
                model_new.load_state_dict(model.state_dict(), strict=True)
            except Exception as exc:
                raise KjError("incorrect", "ModelNew does not take Model's weights (load_state_dict(strict=True), "
                              f"as the cuda-agent protocol requires):\n{exc}") from None
        if self.protocol.get("eval_mode"):
            model.eval()
            model_new.eval()
        return model, model_new

    def restore_flags(self):
        """Puts the backend flags back as they were before the candidate ran; every change the candidate made is
        remembered (reported as a `global_flags` finding). Called before each reference forward."""
        current = backend_flags()
        changed = {k: v for k, v in current.items() if v != self.pinned_flags[k]}
        if changed:
            for k, v in changed.items():
                self.flag_changes[k] = f"{self.pinned_flags[k]} -> {v}"
            set_backend_flags(self.pinned_flags)

    def _place(self, model):
        return model.to(device=self.device, dtype=self.dtype) if self.dtype else model.to(self.device)

    def trial_seeds(self, seed, count):
        torch.manual_seed(seed)
        return [int(torch.randint(0, 2**32 - 1, (1,)).item()) for _ in range(count)]

    def stream(self):
        """The CUDA stream forwards run on (its handle as an integer); 0 on the CPU."""
        return int(torch.cuda.current_stream(self.device).cuda_stream) if self.device.type == "cuda" else 0

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def run_trial(self, seed, atol, rtol):
        """One KernelBench correctness trial: reference then candidate on the same inputs; returns a result dict."""
        set_seed(seed)
        inputs = self.problem.inputs(self.device)
        clone = self.protocol.get("clone_inputs", False)
        self.restore_flags()
        with torch.no_grad():
            reference = self.model(*(clone_inputs(inputs) if clone else inputs))
            self.sync()
            try:
                if self.protocol.get("forbid_functional"):
                    with forbid_functional():
                        output = self.model_new(*(clone_inputs(inputs) if clone else inputs))
                else:
                    output = self.model_new(*inputs)
                self.sync()
            except KjError:
                raise
            except Exception as exc:
                raise KjError("runtime_error", f"ModelNew.forward raised:\n{format_exception(exc)}") from None
        try:
            if self.protocol.get("comparison") == "assert_close":
                return assert_close(reference, output, atol, rtol)
            return compare(reference, output, atol, rtol)
        except torch.OutOfMemoryError as exc:  # the harness's comparison ran out of memory, not the candidate
            raise KjError("harness_error", f"comparing the outputs ran out of memory:\n{exc}") from None

    def prepare_timing(self, seed, sets, draw_on_device=False):
        """Draws the timing input sets: the first under `seed` (KernelBench's one fixed set), then up to `sets - 1`
        more under other seeds at other addresses, as long as they fit in a quarter of the free device memory.
        draw_on_device: the draws run on the device (fast; other values than KernelBench's CPU draws). Returns how
        many sets were drawn."""
        set_seed(seed)
        self.timing_sets = [self.problem.inputs(self.device, draw_on_device)]
        size = sum(x.numel() * x.element_size() for x in self.timing_sets[0] if isinstance(x, torch.Tensor))
        free = torch.cuda.mem_get_info(self.device)[0] if self.device.type == "cuda" else float("inf")
        while len(self.timing_sets) < sets and size * len(self.timing_sets) < free / 4:
            set_seed(seed + 7919 * len(self.timing_sets))
            self.timing_sets.append(self.problem.inputs(self.device, draw_on_device))
        self.reset_rotation()
        return len(self.timing_sets)

    def reset_rotation(self):
        self.next_set = {"candidate": 0, "reference": 0}
        self.timed_outputs = {}

    def _rotate(self, which):
        k = self.next_set[which]
        self.next_set[which] = (k + 1) % len(self.timing_sets)
        return k

    def call_candidate(self):
        k = self._rotate("candidate")
        with torch.no_grad():
            self.timed_outputs[k] = self.model_new(*self.timing_sets[k])

    def call_reference(self):
        with torch.no_grad():
            self.model(*self.timing_sets[self._rotate("reference")])

    def check_timed_outputs(self, atol, rtol):
        """Compares the output of the last timed call on each input set with the reference on that set (the
        compatible tolerance); returns one case dict per set. The retained outputs are released."""
        cases = []
        for k, output in sorted(self.timed_outputs.items()):
            self.restore_flags()
            with torch.no_grad():
                reference = self.model(*self.timing_sets[k])
            self.sync()
            result = compare(reference, output, atol, rtol)
            cases.append({"class": "timed_outputs", "index": k, "seed": 0,
                          "status": "pass" if result["passed"] else "fail",
                          "max_abs_err": result["max_abs_err"], "max_rel_err": result["max_rel_err"],
                          "mismatches": result["mismatches"],
                          "message": result["message"] and f"input set {k}: {result['message']}"})
            del reference
        self.timed_outputs = {}
        return cases

    def torch_ops(self, seed):
        """The computing ATen ops of one candidate forward on fresh inputs (see torch_ops_of)."""
        set_seed(seed)
        inputs = self.problem.inputs(self.device)
        ops = torch_ops_of(lambda: self.model_new(*inputs))
        self.sync()
        return ops

    def call_empty(self):
        """The harness's floor: a Python forward that launches nothing, called like a candidate."""
        with torch.no_grad():
            _EMPTY(*self.timing_sets[0])

    def capture_graph(self, which):
        """Captures `which` ("candidate" or "reference") on the first timing set into a CUDA graph; returns a
        replay callable, or raises when the forward cannot be captured."""
        model = self.model_new if which == "candidate" else self.model
        inputs = self.timing_sets[0]
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.no_grad(), torch.cuda.stream(side):
            for _ in range(3):
                model(*inputs)
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(graph):
            model(*inputs)
        self.sync()
        self.graphs = getattr(self, "graphs", []) + [graph]
        return graph.replay

    def empty_cache(self):
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


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
    """The ATen ops `call` runs that compute (not memory, views or copies), with their counts. A
    TorchDispatchMode sees every op that goes through the dispatcher, from Python and from C++ extensions alike
    (at::matmul inside an extension is a fallback too); the extension's own loops and kernels are not ops."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func._schema.name.split("::")[-1]
            if name not in _MEMORY_OPS:
                self.ops[name] = self.ops.get(name, 0) + 1
            return func(*args, **(kwargs or {}))

    with Recorder() as recorder, torch.no_grad():
        call()
    return dict(sorted(recorder.ops.items()))


class _EmptyModel(torch.nn.Module):
    def forward(self, *inputs):
        return None


_EMPTY = _EmptyModel()


def clone_inputs(inputs):
    """A private copy of an input list: tensors cloned, anything else deep-copied."""
    import copy

    return [x.clone() if isinstance(x, torch.Tensor) else copy.deepcopy(x) for x in inputs]


def assert_close(reference, output, atol, rtol):
    """CUDA Agent's check: torch.testing.assert_close(output, reference, atol, rtol), which also requires the same
    dtype and device and fails on NaN; the error measures come from `compare`."""
    result = compare(reference, output, atol, rtol)
    if outputs_of(output) is None or len(outputs_of(output)) != len(outputs_of(reference) or []):
        return result
    try:
        torch.testing.assert_close(output, reference, atol=atol, rtol=rtol)
        result.update(passed=True, message="")
    except AssertionError as exc:
        result.update(passed=False, message="assert_close: " + str(exc).strip().splitlines()[0])
    return result


CHUNK = 1 << 25  # elements per step of a comparison: GB-sized outputs are compared without GB-sized temporaries


def chunks(*tensors):
    flat = [t.reshape(-1) for t in tensors]
    for i in range(0, flat[0].numel(), CHUNK):
        yield [f[i:i + CHUNK] for f in flat]


def outputs_of(value):
    """A forward's outputs as a list: [tensor] for one tensor, the elements of a tuple or list, else None."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return list(value)
    return None


def compare(reference, output, atol, rtol):
    """KernelBench's check, torch.allclose(reference, output, atol, rtol) (NaN anywhere fails), with error measures.
    A reference that returns several tensors (tuple or list) is compared output by output (ARCHITECTURE invariant
    3); the candidate must return the same structure."""
    if isinstance(reference, torch.Tensor):
        return _compare_tensor(reference, output, atol, rtol)
    refs = outputs_of(reference)
    result = {"passed": False, "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "message": ""}
    if refs is None:
        result["message"] = f"the reference returned {type(reference).__name__}, which kj cannot compare"
        return result
    outs = outputs_of(output) if not isinstance(output, torch.Tensor) else None
    if outs is None or len(outs) != len(refs):
        got = f"{type(output).__name__} of {len(outs)}" if outs is not None else type(output).__name__
        result["message"] = f"ModelNew returned {got}, expected a {type(reference).__name__} of {len(refs)} outputs"
        return result
    result["passed"] = True
    for i, (r, o) in enumerate(zip(refs, outs)):
        one = compare(r, o, atol, rtol) if isinstance(r, torch.Tensor) else {
            "passed": r == o, "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": int(r != o),
            "message": "" if r == o else f"expected {r!r}, got {o!r}"}
        result["mismatches"] += one["mismatches"]
        result["max_abs_err"] = max(result["max_abs_err"], one["max_abs_err"])
        result["max_rel_err"] = max(result["max_rel_err"], one["max_rel_err"])
        if not one["passed"] and result["passed"]:
            result["passed"] = False
            result["message"] = f"output {i}: {one['message']}"
    return result


def _compare_tensor(reference, output, atol, rtol):
    """One tensor: computed chunk by chunk so that comparing never needs more than a few chunks of extra memory."""
    result = {"passed": False, "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "message": ""}
    if not isinstance(output, torch.Tensor):
        result["message"] = f"ModelNew returned {type(output).__name__}, expected one torch.Tensor"
        return result
    result["shape"] = list(output.shape)
    result["dtype"] = str(output.dtype).replace("torch.", "")
    if output.shape != reference.shape:
        result["message"] = f"output shape mismatch: expected {list(reference.shape)}, got {list(output.shape)}"
        return result
    if output.dtype != reference.dtype:  # KernelBench's torch.allclose raises on mixed dtypes: incorrect there too
        result["message"] = (f"output dtype mismatch: expected {str(reference.dtype).replace('torch.', '')}, got "
                             f"{result['dtype']}")
        return result
    tiny = torch.finfo(torch.float32).tiny
    with torch.no_grad():
        for r, o in chunks(reference.detach(), output.detach()):
            result["mismatches"] += int((~torch.isclose(r, o, atol=atol, rtol=rtol)).sum())
            if r.is_floating_point():
                diff = (r.double() - o.double()).abs()
                finite = torch.isfinite(diff)
                if bool(finite.any()):
                    result["max_abs_err"] = max(result["max_abs_err"], float(diff[finite].max()))
                    rel = diff.div_(r.double().abs().clamp_min_(tiny))
                    result["max_rel_err"] = max(result["max_rel_err"], float(rel[finite].max()))
    result["passed"] = result["mismatches"] == 0
    if not result["passed"]:
        result["message"] = (f"output mismatch: {result['mismatches']} of {reference.numel()} elements outside "
                             f"atol={atol} rtol={rtol}; max abs error {result['max_abs_err']:.3g}")
    return result
