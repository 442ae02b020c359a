"""The judge's half of an evaluation, embedded in the `kj` binary: the problem, its reference Model, the inputs drawn
from recipes, the candidate's outputs taken from the arena, KernelBench's comparison, and the memory model. The
candidate runs in another process (the runner, kj_runner.py); nothing here runs its code. Timing and statistics
stay in C++.

Memory model (docs/design.md; the budget and its accounting: kj_memory.py): with I, R and C the bytes of one input
set, of the reference's outputs and of the candidate's, the judge holds at most the arena's copy of C, its own clone
of C, one input set and R, plus comparison chunks; every case frees what it used before the next one starts.
"""
import os
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kj_compare import Opaque, assert_close, compare
from kj_recipes import TimingInputs, draw, seeded_recipe, timing_recipe
from kj_common import (Problem, KjError, SizedProblems, backend_flags, capture_graph, enter_precision, outputs_of,
                       precision_dtype, problem_own, set_backend_flags, set_seed, tensor_bytes, to_device)

from kj_memory import (GIB, SNAPSHOT_MAX, Memory, guarded,  # noqa: F401 (kj_verify and the tests take them here)
                       timed_failure)
from kj_arena import _DTYPE_NAMES, _layout, _sampled_pair, arena_tensor, flat_itemsize  # noqa: F401
from kj_remote import RemoteCandidate, RemoteError  # noqa: F401 (the C++ judge and kj_verify take them here)


_INITIAL_FLAGS = backend_flags()
_INITIAL_DTYPE = torch.get_default_dtype()
_INITIAL_ENVIRON = dict(os.environ)
_INITIAL_THREADS = torch.get_num_threads()
# torch's own setter, bound now: a problem module that replaces torch's Python functions changes nothing
_SET_DETERMINISTIC = torch._C._set_deterministic_algorithms
_INITIAL_DETERMINISTIC = (torch._C._get_deterministic_algorithms(), torch._C._get_deterministic_algorithms_warn_only())
_INITIAL_GRAD = torch.is_grad_enabled()


def clear_device_memory(ptr, nbytes):
    """Zeroes device memory kj is about to share with a runner: memory a warm judge's context freed may come
    back holding what it held (a reference's outputs), which the candidate must never see."""
    arena_tensor({"kind": "cuda", "ptr": ptr, "bytes": nbytes}, "cuda").zero_()
    torch.cuda.synchronize()


def between_jobs():
    """A judge serving one evaluation after another (kj worker --jobs-fd) starts each as a fresh one would: the
    backend flags, default dtype and device, threads, grad mode, deterministic algorithms and environment as at
    its start, no problem module left, torch's cached device memory returned and its peaks reset (each
    evaluation's memory is its own)."""
    import gc
    import sys

    set_backend_flags(_INITIAL_FLAGS)
    torch.set_default_dtype(_INITIAL_DTYPE)
    torch.set_num_threads(_INITIAL_THREADS)
    _restore_deterministic()
    torch.set_grad_enabled(_INITIAL_GRAD)
    if hasattr(torch, "set_default_device"):
        torch.set_default_device(None)  # none, as at its start
    for name in set(os.environ) - set(_INITIAL_ENVIRON):  # what a problem module set in the environment
        del os.environ[name]
    os.environ.update(_INITIAL_ENVIRON)
    sys.modules.pop("kj_problem", None)
    gc.collect()
    try:  # the peak resident size (VmHWM) starts again from here
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _restore_deterministic():
    """The deterministic-algorithms flags as at the judge's start. torch.use_deterministic_algorithms would import
    torch._inductor (and with it Dynamo and sympy: 5.7 s of a judge's first evaluation on an H100) to set Inductor's
    flag too, so the flags are set through torch._C, and Inductor's flag only where a problem module loaded
    Inductor (to what use_deterministic_algorithms gives it)."""
    import sys

    _SET_DETERMINISTIC(_INITIAL_DETERMINISTIC[0], warn_only=_INITIAL_DETERMINISTIC[1])  # cheap: no need to ask first
    inductor = sys.modules.get("torch._inductor.config")
    if inductor is not None:
        inductor.deterministic = _INITIAL_DETERMINISTIC[0]


class FlopCount(TorchDispatchMode):
    """The floating-point operations of the ops a forward runs, by torch's own formulas (torch.utils.flop_counter's
    registry: matmuls, convolutions, attention). torch's FlopCounterMode also tracks modules through hooks that
    keep Dynamo out, and imports torch._dynamo to do so: about 3 s of a judge's first evaluation on an H100."""

    def __init__(self):
        super().__init__()
        self.flops = 0

    @classmethod
    def _should_skip_dynamo(cls):
        return False  # nothing compiles under this mode (as kj_tolerance.DepthMode)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        from torch.utils.flop_counter import flop_registry

        kwargs = kwargs or {}
        formula = flop_registry.get(func._overloadpacket)
        if formula is None and func is not torch.ops.prim.device.default:
            with self:  # a composite op counts by the ops it is made of, as torch's counter does
                out = func.decompose(*args, **kwargs)
            if out is not NotImplemented:
                return out
        out = func(*args, **kwargs)
        if formula is not None:
            self.flops += formula(*args, **kwargs, out_val=out)
        return out


# ---- the session ----

class Session(SizedProblems):
    """The trusted side of an evaluation (and of a baseline): the problem, its reference Model, the inputs drawn
    from recipes. The candidate runs in another process (the runner); `remote` reaches it."""

    def __init__(self, device, protocol=None):
        self.device = torch.device(device)
        self.protocol = dict(protocol or {})
        precision = self.protocol.get("precision", "fp32")
        enter_precision(precision)
        self.dtype = precision_dtype(precision)
        self.rng = self.protocol.get("input_rng", "host")
        self.problem = None
        self.model = None
        self.remote = None
        self.problems = {}
        self.draw_ms = {}  # the judge's slowest draw of each problem (by id: a size's problem is built once)
        self.memory = Memory(device)

    def load_problem(self, path, source, overrides):
        self.overrides = dict(overrides)
        self.problem = Problem(path, source, overrides, self.dtype)
        return self.problem.applied

    def build_reference(self, seed):
        # out of memory here is kj's (retried once), or the candidate's when its process starves the device
        self.model = guarded(self.memory, "building the reference Model",
                             lambda: self.construct_reference(self.problem, seed))
        self.memory.parameter_bytes = tensor_bytes(list(self.model.parameters()) + list(self.model.buffers()))
        self.sync()

    def construct_reference(self, problem, seed):
        """Model built the KernelBench way: seed, init inputs, seed, Model; moved and cast; eval() when the protocol
        says so (CUDA Agent)."""
        set_seed(seed)
        init_inputs = [to_device(x, self.device, self.dtype) for x in problem.init_inputs()]
        with torch.no_grad():
            set_seed(seed)
            model = self._place(problem_own("Model(*get_init_inputs())", lambda: problem.module.Model(*init_inputs)))
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

    def draw(self, recipe, problem=None):
        problem = problem or self.problem
        start = time.perf_counter()
        inputs = guarded(self.memory, "drawing the inputs", lambda: draw(problem, recipe, self.device))
        ms = (time.perf_counter() - start) * 1e3
        self.draw_ms[id(problem)] = max(self.draw_ms.get(id(problem), 0.0), ms)
        return inputs

    def own_draw_cap(self, sizes):
        """How much of a checked call's wait at `sizes` is left off the candidate's clock as kj's draw in its
        process: twice the judge's own slowest draw of those sizes, and 1 ms for the host's noise (the judge's
        measurement, never the runner's word; on CUDA a device draw is timed as launched, so it errs low)."""
        return 2 * self.draw_ms.get(id(self.problem_at(sizes)), 0.0) + 1.0

    def reference(self, inputs, model=None):
        """The reference's outputs on `inputs` (kj's own work: out of memory here is a harness_error)."""
        def run():
            with torch.no_grad():
                out = problem_own("Model.forward", lambda: (model or self.model)(*inputs))
            self.sync()
            return out
        out = guarded(self.memory, "the reference Model", lambda: self.memory.measure_workspace(run))
        self.memory.learn(inputs, out)
        return out

    def run_trial(self, seed, atol, rtol):
        """One KernelBench correctness trial: the reference on the trial's inputs, then the candidate (in the
        runner) on the same draw. The judge keeps only the reference's outputs while the candidate runs."""
        recipe = {"kind": "trial", "seed": seed, "rng": self.rng}
        inputs = self.draw(recipe)
        reference = self.reference(inputs)
        del inputs
        self.memory.release()
        try:
            output, _ = self.remote.forward(recipe, phase="trial")
        except RemoteError as exc:  # believed only when the judge's own draw of the same recipe fails too
            if exc.kind != "problem_error":
                raise
            self.draw(recipe)  # raises the problem's own error
            self.remote.problem_alone(recipe, None, exc)  # and so does the problem alone in kj's sandbox
            raise KjError("runtime_error", "the candidate's process failed at kj's draw of the trial's inputs, "
                          f"which kj's judge and a process of kj's sandbox with no candidate draw: {exc.message}"
                          ) from None
        check = assert_close if self.protocol.get("comparison") == "assert_close" else compare
        result = guarded(self.memory, "comparing the outputs", lambda: check(reference, output, atol, rtol),
                         retry=lambda: compare(reference, output, atol, rtol, chunk=1 << 20), fault="compare")
        del reference, output
        self.memory.release()
        return result

    # ---- timing of the reference (the candidate is timed in the runner) ----
    def timing_begin(self, base, fresh):
        self.timing = TimingInputs(self.problem, self.device, base, fresh, self.rng)

    def drop_output(self):
        """The last call's output goes outside the window, before the next draw, as the runner drops the
        candidate's (freeing a large output is not the reference's time any more than the candidate's)."""
        self.last_output = None

    def prepare_call(self):
        try:
            self.timing.prepare()
        except Exception as exc:
            raise timed_failure(self.memory, "drawing the timed inputs", exc) from None

    def call_reference(self):
        try:
            with torch.no_grad():
                self.last_output = self.model(*self.timing.current)
        except Exception as exc:  # the reference alone runs in this process: never the candidate's failure
            raise timed_failure(self.memory, "Model.forward", exc) from None

    def timing_end(self):
        self.last_output = None
        self.timing.drop()
        self.memory.release()

    def snapshot_bytes(self):
        return self.memory.snapshot_bytes()

    def physical_work(self):
        """What any forward must do, for the physical floor (timing/physical_floor.hpp): the bytes of one call's inputs
        and outputs, and the floating-point operations torch's FLOP counter attributes to the reference's ops
        (matmuls, convolutions, attention; every other op counts 0, so the floor only errs low). One reference call
        on timing inputs, kj's own work."""
        inputs = self.draw(seeded_recipe(1))
        counter = FlopCount()

        def run(mode):
            with mode, torch.no_grad():
                out = self.model(*inputs)
            self.sync()
            return out

        try:
            out = guarded(self.memory, "counting the reference's work", lambda: run(counter))
            flops = counter.flops
        except KjError:
            raise
        except Exception:  # an op kj's counter cannot take (a higher-order op): torch's own counter
            from torch.utils.flop_counter import FlopCounterMode
            counter = FlopCounterMode(display=False)
            out = guarded(self.memory, "counting the reference's work", lambda: run(counter))
            flops = counter.get_total_flops()
        work = {"input_bytes": tensor_bytes(inputs), "output_bytes": tensor_bytes(out), "flops": int(flops)}
        del inputs, out
        self.memory.release()
        return work

    def check_snapshots(self, reply_text, atol, rtol, base, fresh):
        """Each timed call's outputs the runner took into the arena right after the call (whole, or in chunks it
        chose then) against the reference on that call's inputs, drawn again here from the seed the judge chose
        for that call (rounds the judge drives: "seeds") or derived from its own base; returns one case dict per
        call. With the strict verdict on, a timed output is judged as a strict case is (kj_verify: the reduction
        depth's tolerance, float64 where the fp32 reference is the inaccurate one), never only at KernelBench's
        fixed tolerance: a forward cannot pass by computing less precisely only when it is timed. The runner is
        stopped meanwhile and the arena is read in place."""
        import json

        reply = json.loads(reply_text)
        seeds = reply.get("seeds") or {}
        cases = []
        first = getattr(self, "timed_checks", 0)  # case indices stay unique over the rounds
        arena = arena_tensor(reply["arena"], self.device) if reply.get("arena") else None
        verifier = getattr(self, "verifier", None)
        for snap in sorted(reply.get("snapshots", []), key=lambda item: int(item["call"])):
            k = int(snap["call"])
            recipe = seeded_recipe(seeds[str(k)]) if str(k) in seeds else timing_recipe(base, k, fresh)
            reference = self.reference(self.draw(recipe))
            pair = guarded(self.memory, "taking a timed output from the arena",
                           lambda: self._snapshot_pair(arena, reference, snap))
            if verifier is not None and verifier.depth is not None:
                sampled = any("chunks" in o for o in snap.get("outputs", []))
                result = verifier.judge_timed(*pair, None if sampled else recipe)
            else:
                result = guarded(self.memory, "comparing a timed output", lambda: compare(*pair, atol, rtol),
                                 retry=lambda: compare(*pair, atol, rtol, chunk=1 << 20))
            cases.append({"class": "timed_outputs", "index": first + len(cases), "seed": int(recipe["seed"]),
                          "status": "pass" if result["passed"] else "fail",
                          "max_abs_err": result["max_abs_err"], "max_rel_err": result["max_rel_err"],
                          "mismatches": result["mismatches"],
                          "message": result["message"] and f"timed call {k}: {result['message']}"})
            del reference, pair
            self.memory.release()
        del arena
        self.timed_checks = first + len(cases)
        return cases

    def _snapshot_pair(self, arena, reference, snap):
        """(reference, output) as compare() takes them: sampled tensors replaced on both sides by their chunks."""
        structure = snap.get("structure")
        if structure not in ("tensor", "tuple", "list"):
            return reference, Opaque(snap.get("type", "?"))
        refs = [reference] if isinstance(reference, torch.Tensor) else list(outputs_of(reference) or [])
        ref_side, out_side = [], []
        for i, o in enumerate(snap.get("outputs", [])):
            r = refs[i] if i < len(refs) else None
            dtype = _DTYPE_NAMES.get(o.get("dtype")) if o.get("tensor") else None
            if not o.get("tensor"):
                out_side.append(Opaque(o.get("type", "?")))
            elif dtype is None:
                out_side.append(Opaque(f"tensor of dtype {o.get('dtype')}"))
            elif "chunks" in o and isinstance(r, torch.Tensor):
                r, sampled = _sampled_pair(arena, r, o, dtype)
                out_side.append(sampled)
            elif "chunks" in o:
                out_side.append(Opaque("sampled tensor"))
            else:
                out_side.append(self.remote._tensor(arena, o))
            if i < len(refs):
                ref_side.append(r)
        if structure == "tensor":
            out = out_side[0] if out_side else Opaque("nothing")
        else:
            out = tuple(out_side) if structure == "tuple" else list(out_side)
        if isinstance(reference, torch.Tensor):
            return (ref_side[0] if ref_side else reference), out
        if isinstance(reference, (tuple, list)):  # a namedtuple is compared as the tuple it is
            return (tuple if isinstance(reference, tuple) else list)(ref_side + refs[len(ref_side):]), out
        return reference, out

    def capture_graph(self):
        """Captures the reference on the current timing inputs into a CUDA graph; returns a replay callable."""
        return capture_graph(self.model, self.timing.current, self.device, self)

    def empty_cache(self):
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    def memory_peaks(self):
        return self.memory.peaks()
