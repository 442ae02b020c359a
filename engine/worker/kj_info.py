"""What the judge reports about its machine and its problems, embedded in the `kj` binary: the stack fingerprint
(environment()) and a problem's shapes and least cost, drawn on the meta device (describe())."""
import os
import sys

import torch

from kj_common import Problem, backend_flags
from kj_paths import sandbox_paths


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


def _cxx_version():
    """The C++ compiler torch's extensions build with ($CXX, else c++) and its version line: part of the stack
    (it compiles every candidate's extension) and of the precompiled header's key."""
    import subprocess

    cxx = os.environ.get("CXX", "c++")
    out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=20).stdout
    return f"{cxx}: {out.strip().splitlines()[0]}" if out.strip() else cxx


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
        "cxx": _quiet(_cxx_version),
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


def _tensor_summary(value):
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype).replace("torch.", "")}
    return {"value": repr(value)[:80]}


def describe(problem, cost=False):
    """Shapes and dtypes of inputs and init inputs, drawn on the meta device so nothing is allocated; with
    `cost`, also what a forward costs at least (see cost())."""
    try:
        with torch.device("meta"):
            inputs = list(problem.module.get_inputs())
    except Exception:
        inputs = list(problem.module.get_inputs())
    out = {"inputs": [_tensor_summary(x) for x in inputs],
           "init_inputs": [_tensor_summary(x) for x in problem.init_inputs()],
           "applied_overrides": problem.applied}
    if cost:
        try:
            out["cost"] = cost_of(problem)
        except Exception as exc:  # an op without a meta kernel, a data-dependent forward: no estimate
            out["cost"] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
    return out


def cost_of(problem):
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
        if problem.dtype is not None and isinstance(x, torch.Tensor) and x.is_floating_point():
            return x.to(problem.dtype)
        return x

    with torch.device("meta"):
        inputs = [cast(x) for x in problem.module.get_inputs()]
        model = problem.module.Model(*problem.init_inputs())
        if problem.dtype is not None:
            model = model.to(problem.dtype)
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            output = model(*inputs)
    state = list(model.parameters()) + list(model.buffers())
    return {"input_bytes": nbytes(inputs), "parameter_bytes": nbytes(state), "output_bytes": nbytes(output),
            "flops": int(counter.get_total_flops())}


def describe_problem(path, source, overrides, cost=False):
    """The describe job: one problem file's shapes (and cost) without allocating anything."""
    return describe(Problem(path, source, overrides), cost)


# ---- kj's precompiled torch/extension.h (engine/exec/precompiled_header.hpp) ----

class _Captured(Exception):
    pass


def extension_cflags(extra_cflags, scratch):
    """(compiler, flags) torch's load_inline compiles a CPU extension's main.cpp with, for `extra_cflags`, read from
    the build.ninja torch writes (its build itself is never run); the extension's name is left out."""
    import re
    import shlex

    import torch.utils.cpp_extension as ext

    real = ext._run_ninja_build

    def capture(*args, **kwargs):
        raise _Captured()

    ext._run_ninja_build = capture
    try:
        ext.load_inline("kj_pch_flags", cpp_sources="", extra_cflags=list(extra_cflags), build_directory=scratch)
    except _Captured:
        pass
    finally:
        ext._run_ninja_build = real
    with open(os.path.join(scratch, "build.ninja")) as f:
        text = f.read()
    cxx = re.search(r"^cxx = (.*)$", text, re.M).group(1).strip()
    cflags = re.search(r"^cflags = (.*)$", text, re.M).group(1)
    return cxx, [f for f in shlex.split(cflags) if not f.startswith("-DTORCH_EXTENSION_NAME=")]


def make_precompiled_header(folder, variants):
    """Precompiles torch/extension.h into folder/torch/extension.h.gch/<i>.gch, one per list of extra_cflags in
    `variants`, each with exactly the flags torch's load_inline uses, and checks that the compiler takes it for a
    main.cpp as load_inline writes it (gcc -H names the .gch it used). A CPU build given CPATH=folder then skips
    parsing torch's headers; gcc ignores a .gch whose flags differ and reads the header (folder/torch/extension.h
    is torch's own). Returns {"used": [variant indices the check passed], "errors": [...]}."""
    import subprocess
    import tempfile

    from torch.utils.cpp_extension import include_paths

    header = next(os.path.join(p, "torch", "extension.h") for p in include_paths()
                  if os.path.isfile(os.path.join(p, "torch", "extension.h")))
    gch_dir = os.path.join(folder, "torch", "extension.h.gch")
    os.makedirs(gch_dir, exist_ok=True)
    link = os.path.join(folder, "torch", "extension.h")
    if not os.path.islink(link):
        os.symlink(header, link)
    used, errors = [], []
    for i, extra in enumerate(variants):
        with tempfile.TemporaryDirectory(prefix="kj-pch-") as scratch:
            cxx, flags = extension_cflags(extra, scratch)
            target = os.path.join(gch_dir, f"{i}.gch")
            made = subprocess.run([cxx, *flags, "-x", "c++-header", header, "-o", target + ".tmp"],
                                  capture_output=True, text=True)
            if made.returncode != 0:
                errors.append(f"{extra}: {made.stderr[-2000:]}")
                continue
            os.replace(target + ".tmp", target)
            probe = os.path.join(scratch, "main.cpp")
            with open(probe, "w") as f:
                f.write("#include <torch/extension.h>\n\n#include <torch/extension.h>\nint kj_pch_probe;\n")
            check = subprocess.run([cxx, f"-DTORCH_EXTENSION_NAME=kj_pch_probe", *flags, "-H", "-c", probe, "-o",
                                    os.path.join(scratch, "main.o")], capture_output=True, text=True,
                                   env=dict(os.environ, CPATH=folder))
            if check.returncode == 0 and f"! {target}" in check.stderr:
                used.append(i)
            else:
                os.remove(target)
                errors.append(f"{extra}: the compiler did not take it: {check.stderr[-600:]}")
    return {"used": used, "errors": errors}
