"""What the judge and the runner both need, embedded in the `kj` binary: errors with a verdict, loading problem
sources, chunked passes over tensors, backend flags, and small tensor helpers (inputs from recipes are in
kj_recipes.py). Nothing here compares outputs or decides a verdict (kj_judge.py does).
"""
import ast
import linecache
import sys
import traceback
import types

import torch


class KjError(Exception):
    """An error with a verdict attached: `kind` is one of the worker's verdicts (load_error, compile_error, ...);
    `reason` refines it (out_of_memory, tolerance, ...)."""

    def __init__(self, kind, message, reason=""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.reason = reason


class SizedProblems:
    """The problem at other module constants (a shape class), built once per size: for a session that holds
    `problem`, `overrides`, `problems` (the cache) and `dtype`."""

    def problem_at(self, sizes):
        if not sizes:
            return self.problem
        key = tuple(sorted(sizes.items()))
        if key not in self.problems:
            overrides = dict(self.overrides)
            overrides.update(sizes)
            self.problems[key] = Problem(self.problem.path, self.problem.raw_source, overrides, self.dtype)
        return self.problems[key]


# A CUDA library that could not get device memory for its handle or workspace says so in its own words, not
# torch's: cuBLAS, cuDNN, cuFFT, cuSOLVER, cuSPARSE (cublasCreate failing is out of memory in practice).
_LIBRARY_OUT_OF_MEMORY = ("CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED", "CUFFT_ALLOC_FAILED",
                          "CUSOLVER_STATUS_ALLOC_FAILED", "CUSPARSE_STATUS_ALLOC_FAILED",
                          "CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate")


def is_out_of_memory(exc):
    """torch's device OOM, Python's MemoryError, the CPU allocator's failure (a RuntimeError in torch), or a CUDA
    library's allocation failure (a starved device: never the problem's own error)."""
    if isinstance(exc, (torch.OutOfMemoryError, MemoryError)):
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and ("can't allocate memory" in text or "out of memory" in text
                                              or any(k in text for k in _LIBRARY_OUT_OF_MEMORY))


def format_exception(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()


def first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def set_seed(seed):
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def precision_dtype(precision):
    """The dtype floating tensors are cast to at a precision; None keeps them (fp32, and tf32: fp32 tensors)."""
    return None if precision in ("fp32", "tf32") else DTYPES[precision]


def enter_precision(precision):
    """tf32 is fp32 tensors with TF32 matmuls and convolutions (float32_matmul_precision "high"): the numerics a
    candidate that turns TF32 on computes at. Set before a session records its flags; other precisions leave the
    process's flags as they are."""
    if precision == "tf32":
        set_backend_flags({"float32_matmul_precision": "high", "backends.cuda.matmul.allow_tf32": True,
                           "backends.cudnn.allow_tf32": True})


def to_device(value, device, dtype=None):
    """Moves a tensor to the device; floating tensors are cast to `dtype` when given. Integer and bool inputs keep
    their dtypes (KernelBench main casts every input to its precision: its issue #151)."""
    if not isinstance(value, torch.Tensor):
        return value
    if dtype is not None and value.is_floating_point():
        return value.to(device=device, dtype=dtype)
    return value.to(device=device)


# ---- sources ----

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
        if not (isinstance(value, ast.Constant) and type(value.value) is int) or value.lineno != value.end_lineno:
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


def problem_own(what, work):
    """Runs the problem's own code (`what`: get_init_inputs(), Model(...), its forward): what it raises is a
    problem_error, never a candidate's; out of memory is left to the caller (kj's own, kj_memory.guarded)."""
    try:
        return work()
    except KjError:
        raise
    except Exception as exc:
        if is_out_of_memory(exc):
            raise
        raise KjError("problem_error", f"the problem's {what} raised:\n{format_exception(exc)}") from None


def is_build_failure(exc):
    import subprocess

    text = f"{type(exc).__name__}: {exc}"
    return isinstance(exc, subprocess.CalledProcessError) or "Error building extension" in text


def needs_weights(exc):
    """A Hugging Face model that cannot be had: transformers missing, or its weights not downloadable/cached."""
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in ("transformers", "huggingface_hub"):
        return True
    text = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
    return isinstance(exc, OSError) and any(k in text for k in (
        "huggingface", "hf.co", "HF_HUB_OFFLINE", "offline mode", "couldn't connect", "does not appear to have a file"))


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
            if needs_weights(exc):
                raise KjError("needs_weights", f"problem file {path} needs `transformers` and its model weights "
                              "available offline (KernelBench level 4 loads Hugging Face models): "
                              f"{type(exc).__name__}: {first_line(exc)}") from None
            raise KjError("problem_error", f"problem file {path} raised while loading:\n{format_exception(exc)}")
        for name in ("Model", "get_inputs", "get_init_inputs"):
            if not hasattr(self.module, name):
                raise KjError("problem_error", f"problem file {path}: no `{name}` defined (KernelBench format needs "
                              "class Model, get_inputs() and get_init_inputs())")
        self.path = path
        self.device_draws = None  # whether get_inputs() runs under a device context (decided at the first draw)

    def int_constants(self):
        """Top-level `NAME = <int literal>` assignments (after overrides): the sizes `--set` can change."""
        found = {}
        for node in ast.parse(self.source).body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Constant) and type(node.value.value) is int):
                found[node.targets[0].id] = node.value.value
        return found

    def init_inputs(self):
        """The problem's own get_init_inputs(): a list or tuple, else the problem's error (never a candidate's)."""
        got = problem_own("get_init_inputs()", self.module.get_init_inputs)
        if not isinstance(got, (list, tuple)):
            raise KjError("problem_error", f"the problem's get_init_inputs() returned {type(got).__name__}, expected "
                          "a list of Model's constructor arguments (KernelBench calls Model(*get_init_inputs()))")
        return list(got)

    def get_inputs(self):
        """The problem's own get_inputs(); its failure is the problem's, never a candidate's."""
        return problem_own("get_inputs()", lambda: list(self.module.get_inputs()))

    def inputs(self, device, rng="host"):
        """get_inputs() on the device. rng "host": KernelBench's draw (the CPU generator, then moved: its exact
        values); "device": get_inputs() runs with the device as the default device, so torch.rand/randn/randint
        draw there directly from the device generator (same distributions, other values, no host copy). A
        get_inputs() that cannot run under a device context falls back to the host draw, for judge and runner
        alike (the decision is the same code on the same problem)."""
        if rng == "device" and torch.device(device).type != "cpu" and self.device_draws is not False:
            try:
                with torch.device(device):
                    drawn = self.get_inputs()
                self.device_draws = True
                return [to_device(x, device, self.dtype) for x in drawn]
            except KjError:
                if self.device_draws:
                    raise
                self.device_draws = False
        return [to_device(x, device, self.dtype) for x in self.get_inputs()]


# ---- chunked passes ----

# Elements per step of any elementwise pass: GB-sized tensors never need GB-sized temporaries. On the host the
# temporaries stay under glibc's mmap threshold (32 MiB), so they are reused instead of mapped and faulted in
# afresh; torch's caching allocator does that on the device.
CHUNK = 1 << 24
HOST_CHUNK = 1 << 20


def flat_chunks(*tensors, size=None):
    """Matching flat slices of equally sized tensors, `size` elements at a time (views: no copies)."""
    step = size or (CHUNK if tensors[0].is_cuda else HOST_CHUNK)
    flat = [t.reshape(-1) for t in tensors]
    for i in range(0, flat[0].numel(), step):
        yield [f[i:i + step] for f in flat]


def tensor_bytes(values):
    """Bytes held by the tensors in a (possibly nested) list or tuple."""
    if isinstance(values, torch.Tensor):
        return values.numel() * values.element_size()
    if isinstance(values, (list, tuple)):
        return sum(tensor_bytes(v) for v in values)
    return 0


# ---- backend flags: process-wide numerics switches a candidate could flip ----

# TF32 matmuls and convolutions make an fp32 reference about 1e-3 accurate; cuDNN modes change how it is timed.
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


def json_text(value):
    """JSON for the C++ side, which reads strict JSON: a NaN becomes null and an infinity the largest double (an
    error measure can overflow, and one bad number must not lose a whole evaluation)."""
    import json
    import math

    def safe(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None if math.isnan(v) else math.copysign(1.7976931348623157e308, v)
        if isinstance(v, dict):
            return {k: safe(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [safe(x) for x in v]
        return v

    return json.dumps(safe(value))


# ---- small tensor helpers ----

def outputs_of(value):
    """A forward's outputs as a list: [tensor] for one tensor, the elements of a tuple or list, else None."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return list(value)
    return None


def same_bits(a, b):
    """Bitwise-equal tensors (NaN payloads included), compared a chunk at a time."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.numel() == 0:
        return True
    for x, y in flat_chunks(a.detach().reshape(-1).contiguous().view(torch.uint8),
                           b.detach().reshape(-1).contiguous().view(torch.uint8)):
        if not torch.equal(x, y.to(x.device)):
            return False
    return True


def capture_graph(model, inputs, device, owner):
    """A CUDA graph of model(*inputs) after 3 warmup calls on a side stream; returns its replay. The graph is kept
    alive on `owner`. Raises when the forward cannot be captured."""
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.no_grad(), torch.cuda.stream(side):
        for _ in range(3):
            model(*inputs)
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        model(*inputs)
    torch.cuda.synchronize(device)
    owner.graphs = getattr(owner, "graphs", []) + [graph]
    return graph.replay


class _EmptyModel(torch.nn.Module):
    def forward(self, *inputs):
        return None


EMPTY_MODEL = _EmptyModel()
