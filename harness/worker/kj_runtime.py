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


def sandbox_paths():
    """The folders Python and torch are loaded from (prefixes, sys.path entries that exist): what a sandbox must
    expose read-only for the embedded interpreter to start."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.dirname(torch.__file__))}
    paths.update(p for p in sys.path if p and os.path.isabs(p))
    return sorted(p for p in paths if os.path.isdir(p))


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
        "python_paths": sandbox_paths(),
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

    def describe(self, cost=False):
        """Shapes and dtypes of inputs and init inputs, drawn on the meta device so nothing is allocated; with
        `cost`, also what a forward costs at least (see cost())."""
        try:
            with torch.device("meta"):
                inputs = list(self.module.get_inputs())
        except Exception:
            inputs = list(self.module.get_inputs())
        out = {"inputs": [_tensor_summary(x) for x in inputs],
               "init_inputs": [_tensor_summary(x) for x in self.init_inputs()],
               "applied_overrides": self.applied}
        if cost:
            try:
                out["cost"] = self.cost()
            except Exception as exc:  # an op without a meta kernel, a data-dependent forward: no estimate
                out["cost"] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
        return out

    def cost(self):
        """The bytes a forward must move at least (its inputs, the model's parameters and buffers, its outputs)
        and its FLOPs as torch.utils.flop_counter.FlopCounterMode counts them (matrix products, convolutions,
        attention; elementwise and reduction work is not counted), from one forward on the meta device: nothing
        is allocated or computed. The built-in agent's speed-of-light estimate divides them by the hardware's
        peaks."""
        from torch.utils.flop_counter import FlopCounterMode

        def nbytes(value):
            if isinstance(value, torch.Tensor):
                return value.numel() * value.element_size()
            if isinstance(value, (list, tuple)):
                return sum(nbytes(v) for v in value)
            return 0

        def cast(x):
            if self.dtype is not None and isinstance(x, torch.Tensor) and x.is_floating_point():
                return x.to(self.dtype)
            return x

        with torch.device("meta"):
            inputs = [cast(x) for x in self.module.get_inputs()]
            model = self.module.Model(*self.init_inputs())
            if self.dtype is not None:
                model = model.to(self.dtype)
            counter = FlopCounterMode(display=False)
            with counter, torch.no_grad():
                output = model(*inputs)
        state = list(model.parameters()) + list(model.buffers())
        return {"input_bytes": nbytes(inputs), "parameter_bytes": nbytes(state), "output_bytes": nbytes(output),
                "flops": int(counter.get_total_flops())}


# ---- inputs from recipes: the judge and the runner draw the very same tensors from the same recipe ----

def adversarial(inputs, kind, generator):
    """An adversarial copy of the inputs (floating tensors only): nan, inf, denormal, negzero replace a random tenth
    (a hundredth for nan/inf) of the values; distribution draws magnitudes exp(N(0, 2)), extreme U(0, 1000), both
    with random signs. Draws are made in place so a GB-sized input needs little extra memory."""
    out = []
    for x in inputs:
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()) or x.numel() == 0:
            out.append(x)
            continue
        info = torch.finfo(x.dtype)
        g = generator
        if kind in ("distribution", "extreme"):
            y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
            if kind == "distribution":
                y.normal_(generator=g).mul_(2.0).exp_()  # magnitudes exp(N(0, 2))
            else:
                y.uniform_(0.0, 1000.0, generator=g)
            y.copysign_(torch.rand(x.shape, generator=g, device=x.device).sub_(0.5))
            out.append(y.to(x.dtype))
            continue
        y = x.clone()
        u = torch.rand(x.shape, generator=g, device=x.device)
        pick = u < (0.01 if kind in ("nan", "inf") else 0.1)
        if not bool(pick.any()):
            pick.view(-1)[0] = True
        negative = u < (0.005 if kind in ("nan", "inf") else 0.05)  # half of the picked ones
        if kind == "nan":
            y.masked_fill_(pick, float("nan"))
        elif kind == "inf":
            y.masked_fill_(pick, float("inf")).masked_fill_(negative, float("-inf"))
        elif kind == "denormal":
            tiny = u.mul_(0.9 * info.tiny).add_(0.01 * info.tiny)  # within [0.01, 0.91) x tiny: subnormal
            y = torch.where(pick, torch.where(negative, -tiny, tiny).to(x.dtype), y)
        elif kind == "negzero":
            y.masked_fill_(pick, -0.0)
        else:
            raise ValueError(f"unknown input transform {kind}")
        out.append(y)
    return out


def draw(problem, recipe, device):
    """The inputs a recipe names: {"kind": "trial", "seed"} is KernelBench's draw (CPU RNG, then moved);
    {"kind": "case" or "timing", "seed", "transform"?, "tseed"?} draws on the device, then applies the transform
    with a generator seeded by tseed. With "rng_after", the global RNG is seeded with it once the inputs are
    drawn: the same inputs then meet another RNG state in the forward (the determinism class)."""
    set_seed(int(recipe["seed"]))
    if recipe.get("kind") == "trial":
        inputs = problem.inputs(device)
    else:
        inputs = problem.inputs(device, draw_on_device=True)
        if recipe.get("transform"):
            generator = torch.Generator(device=device).manual_seed(int(recipe["tseed"]))
            inputs = adversarial(inputs, recipe["transform"], generator)
    if "rng_after" in recipe:
        set_seed(int(recipe["rng_after"]))
    return inputs


class TimingInputs:
    """The inputs of timed calls. fresh (method robust): every call gets new inputs drawn on the device under
    base + k, in prepare() (outside the timed window): no two calls see the same contents, so a result cache keyed
    on a tensor's identity or contents never hits, and any call's inputs can be drawn again from its recipe to
    check its output. Otherwise KernelBench's one fixed set (its seed, CPU-drawn), for the kernelbench and
    cuda-agent methods."""

    def __init__(self, problem, device, base, fresh):
        self.problem, self.device, self.base, self.fresh = problem, device, int(base), fresh
        self.calls = 0
        self.current = draw(problem, self.recipe(0), device)

    def recipe(self, k):
        if not self.fresh:
            return {"kind": "trial", "seed": self.base}
        return {"kind": "timing", "seed": (self.base + 7919 * k) % (2**63)}

    def prepare(self):
        if self.fresh:
            self.current = None  # the previous call's inputs go first: one set in memory at a time
            self.current = draw(self.problem, self.recipe(self.calls), self.device)
        self.calls += 1


class Session:
    """The trusted side of an evaluation (and of a baseline): the problem, its reference Model, the inputs drawn
    from recipes. The candidate runs in another process (the runner); `remote` reaches it."""

    def __init__(self, device, protocol=None):
        self.device = torch.device(device)
        self.protocol = dict(protocol or {})
        precision = self.protocol.get("precision", "fp32")
        self.dtype = None if precision == "fp32" else DTYPES[precision]
        self.problem = None
        self.model = None
        self.remote = None
        self.problems = {}

    def load_problem(self, path, source, overrides):
        self.overrides = dict(overrides)
        self.problem = Problem(path, source, overrides, self.dtype)
        return self.problem.applied

    def problem_at(self, sizes):
        """The problem with other module constants (the shape class); cached."""
        if not sizes:
            return self.problem
        key = tuple(sorted(sizes.items()))
        if key not in self.problems:
            overrides = dict(self.overrides)
            overrides.update(sizes)
            self.problems[key] = Problem(self.problem.path, self.problem.raw_source, overrides, self.dtype)
        return self.problems[key]

    def build_reference(self, seed):
        self.model = self.construct_reference(self.problem, seed)
        self.sync()

    def construct_reference(self, problem, seed):
        """Model built the KernelBench way: seed, init inputs, seed, Model; moved and cast; eval() when the protocol
        says so (CUDA Agent)."""
        set_seed(seed)
        init_inputs = [to_device(x, self.device, self.dtype) for x in problem.init_inputs()]
        with torch.no_grad():
            set_seed(seed)
            model = self._place(problem.module.Model(*init_inputs))
        if self.protocol.get("eval_mode"):
            model.eval()
        return model

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

    def reference(self, inputs, model=None):
        with torch.no_grad():
            out = (model or self.model)(*inputs)
        self.sync()
        return out

    def run_trial(self, seed, atol, rtol):
        """One KernelBench correctness trial: the reference on the trial's inputs, the candidate (in the runner)
        on the same draw; returns a result dict."""
        recipe = {"kind": "trial", "seed": seed}
        reference = self.reference(draw(self.problem, recipe, self.device))
        output, _ = self.remote.forward(recipe, phase="trial")
        try:
            if self.protocol.get("comparison") == "assert_close":
                return assert_close(reference, output, atol, rtol)
            return compare(reference, output, atol, rtol)
        except torch.OutOfMemoryError as exc:  # the harness's comparison ran out of memory, not the candidate
            raise KjError("harness_error", f"comparing the outputs ran out of memory:\n{exc}") from None

    # ---- timing of the reference (the candidate is timed in the runner) ----
    def timing_begin(self, base, fresh):
        self.timing = TimingInputs(self.problem, self.device, base, fresh)

    def prepare_call(self):
        self.timing.prepare()

    def call_reference(self):
        with torch.no_grad():
            self.model(*self.timing.current)

    def check_retained(self, calls, atol, rtol):
        """Each output the runner kept from its timed calls (fetched by call number) against the reference on that
        call's inputs, drawn again here from the call's recipe; returns one case dict per call."""
        cases = []
        first = getattr(self, "timed_checks", 0)  # case indices stay unique over the rounds
        for k in calls:
            r = self.remote.call({"op": "fetch", "call": int(k)})
            output = self.remote.outputs(r)
            reference = self.reference(draw(self.problem, r["recipe"], self.device))
            result = compare(reference, output, atol, rtol)
            cases.append({"class": "timed_outputs", "index": first + len(cases), "seed": int(r["recipe"]["seed"]),
                          "status": "pass" if result["passed"] else "fail",
                          "max_abs_err": result["max_abs_err"], "max_rel_err": result["max_rel_err"],
                          "mismatches": result["mismatches"],
                          "message": result["message"] and f"timed call {r['call']}: {result['message']}"})
            del reference, output
        self.timed_checks = first + len(cases)
        return cases

    def capture_graph(self):
        """Captures the reference on the current timing inputs into a CUDA graph; returns a replay callable."""
        return capture_graph(self.model, self.timing.current, self.device, self)

    def empty_cache(self):
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


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


# ---- the arena: judge-owned memory the runner writes the candidate's outputs into ----

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


class RemoteError(KjError):
    pass


class RemoteCandidate:
    """The judge's handle on the candidate in the runner process. `request` (C++) sends one JSON request and
    returns the reply; outputs come back as bytes in the arena, described by the reply (offset, dtype, shape),
    and are cloned out of it at once. Nothing the runner sends is unpickled or executed."""

    def __init__(self, request, device):
        self.request, self.device = request, torch.device(device)
        self.arena, self.arena_id = None, None

    def call(self, message):
        import json

        reply = json.loads(self.request(json.dumps(message)))
        if not reply.get("ok"):
            raise RemoteError(reply.get("kind", "runtime_error"), reply.get("error", "the runner failed"))
        return reply

    def forward(self, recipe, sizes=None, check_inputs=False, phase="case"):
        reply = self.call({"op": "forward", "recipe": recipe, "sizes": sizes or {}, "check_inputs": check_inputs,
                           "phase": phase})
        return self.outputs(reply), reply

    def outputs(self, reply):
        """The forward's result as the judge sees it: a tensor, a tuple/list of tensors, or an `Opaque` for
        anything else."""
        if reply["arena"]["id"] != self.arena_id:
            self.arena, self.arena_id = arena_tensor(reply["arena"], self.device), reply["arena"]["id"]
        parts = [self._tensor(o) if o.get("tensor") else Opaque(o.get("type", "?")) for o in reply["outputs"]]
        structure = reply["structure"]
        if structure == "tensor":
            return parts[0]
        if structure in ("tuple", "list"):
            return tuple(parts) if structure == "tuple" else list(parts)
        return Opaque(reply.get("type", "?"))

    def _tensor(self, o):
        dtype = _DTYPE_NAMES.get(o["dtype"])
        if dtype is None:
            return Opaque(f"tensor of dtype {o['dtype']}")
        nbytes, offset = int(o["nbytes"]), int(o["offset"])
        if offset < 0 or offset + nbytes > self.arena.numel():
            raise KjError("harness_error", "the runner described an output outside the arena")
        flat = self.arena[offset:offset + nbytes].clone()
        return flat.view(dtype).reshape([int(d) for d in o["shape"]])


class Opaque:
    """Something the candidate returned that is not a tensor (its type name only crosses the process boundary)."""

    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return f"<{self.type_name}>"


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
        name = output.type_name if isinstance(output, Opaque) else type(output).__name__
        result["message"] = f"ModelNew returned {name}, expected one torch.Tensor"
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
