"""The strict verdict's case classes: adversarial inputs, output and input checks, run in the judge.

Each class returns case dicts {class, index, seed, status: pass|fail|uninformative|harness_error, ...}. Each case is
a recipe (seed, transform, sizes): the candidate runs first, in the runner process, on its own draw of the recipe's
inputs; the judge draws the same inputs, runs the reference and compares (kj_tolerance.py). The candidate never
shares a process, or memory, with the reference or its outputs (docs/design.md, invariant 1). Out of memory in the
judge's own work is the case's harness_error, never the candidate's failure.
"""
import copy

import torch

import kj_tolerance as tol
from kj_common import KjError, is_out_of_memory as tol_is_oom, outputs_of, same_bits
from kj_recipes import draw
from kj_compare import Opaque
from kj_judge import GIB, RemoteError, guarded
from kj_memory import host_available

RANDOM_SEEDS = 6


def _floating(x):
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def _case(cls, index, seed, status="pass", message=""):
    return {"class": cls, "index": index, "seed": seed, "status": status, "judged_against": "", "max_abs_err": 0.0,
            "max_rel_err": 0.0, "mismatches": 0, "nonfinite_mismatches": 0, "first_index": -1, "message": message}


def fp64_on_device(need, held, budget, free):
    """Whether the float64 reference (`need` bytes) runs on the device: within kj's budget beside what the judge
    holds (docs/design.md, "Memory model"), or past it when the device has the room and 2 GiB to spare. A case
    is judged while the candidate's process waits between its calls, so that room is taken from nobody, and it is
    given back before the next case; on the host, a full-size problem's float64 reference took 10-20 s a case."""
    if need > 0.9 * free:
        return False
    return need + held <= budget or need + 2 * GIB <= 0.9 * free


class Verifier:
    """Runs the case classes for one judge Session (problem and reference built, the runner loaded)."""

    def __init__(self, session, seed):
        self.s = session
        self.seed = seed
        self.output_failures = []
        self.input_failures = []
        self.models64 = {}
        self.device = session.device
        self.memory = session.memory
        self.depth = None  # the reference's reduction depth, measured on the first case
        self.fp64_error = ""
        # Set by the judge once the compatible verdict failed: strict is then decided by its first failing case,
        # and what follows would only add float64 references and forwards (docs/methodology.md, "Cost").
        self.stop_at_failure = False

    def recipe(self, seed, transform=None):
        r = {"kind": "case", "seed": int(seed)}
        if transform:
            r.update(transform=transform, tseed=(int(seed) ^ 0x6B6A) + len(transform))
        return r

    # ---- one case ----
    def _check_tensor(self, out, ref):
        if isinstance(out, Opaque):
            return [f"returned {out.type_name}, expected a plain dense torch.Tensor"]
        if out.dtype != ref.dtype:
            return [f"dtype {out.dtype}, expected {ref.dtype}"]
        if out.shape != ref.shape:
            return [f"shape {list(out.shape)}, expected {list(ref.shape)}"]
        return []

    def _check_output(self, out, ref, reply, case):
        """Structure, then each output: a plain dense tensor of the reference's dtype and shape, not aliasing an
        input, parameter or buffer (the runner reports aliasing). Several outputs are checked one by one."""
        if isinstance(ref, torch.Tensor):
            problems = self._check_tensor(out, ref) if not isinstance(out, (tuple, list)) else [
                f"returned {type(out).__name__}, expected one torch.Tensor"]
        else:
            refs, outs = outputs_of(ref), outputs_of(out) if isinstance(out, (tuple, list)) else None
            if outs is None or len(outs) != len(refs):
                got = out.type_name if isinstance(out, Opaque) else type(out).__name__
                problems = [f"returned {got}, expected a {type(ref).__name__} of {len(refs)} tensors"]
            else:
                problems = [f"output {i}: {p}" for i, (o, r) in enumerate(zip(outs, refs))
                            for p in self._check_tensor(o, r)]
        if reply.get("overlap"):
            problems.append("output storage overlaps an input, parameter or buffer")
        if problems:
            self.output_failures.append(f"{case}: " + "; ".join(problems))
        return problems

    def _forward(self, case, recipe, sizes, check_inputs):
        """The candidate's outputs for the case, or None with the case failed. A runner that blames the problem's
        get_inputs() is believed only when the judge's own draw fails too."""
        try:
            return self.s.remote.forward(recipe, sizes, check_inputs)
        except RemoteError as exc:
            if exc.kind == "problem_error":
                self.s.draw(recipe, self.s.problem_at(sizes))  # raises the problem's own error
                self.s.remote.problem_alone(recipe, sizes, exc)  # and so does the problem alone in kj's sandbox
            detail = f"{exc.kind}/{exc.reason}" if exc.reason else exc.kind
            last = exc.message.strip().splitlines()[-1] if exc.message.strip() else exc.kind
            if exc.reason == "out_of_memory":
                last += f" ({self.memory.describe()})"
            case.update(status="fail", message=f"ModelNew.forward failed ({detail}): {last}"[:600])
            return None

    def run_case(self, cls, index, recipe, sizes=None, check_inputs=False):
        case = _case(cls, index, recipe["seed"])
        try:
            got = self._forward(case, recipe, sizes, check_inputs)
        except KjError as exc:  # kj's own failure around the call (its arena), or the candidate starving it
            if exc.kind == "problem_error":
                raise
            case.update(status="harness_error" if exc.kind == "harness_error" else "fail", message=exc.message[:600])
            return case
        if got is None:
            return case
        out, reply = got
        if reply.get("inputs_changed"):
            self.input_failures.append(f"{cls}[{index}]: input(s) {reply['inputs_changed']} modified in place")
        try:
            self._judge_case(case, cls, index, recipe, sizes, out, reply)
        except KjError as exc:
            if exc.kind != "harness_error":
                raise
            case.update(status="harness_error", message=exc.message[:600])
        finally:
            del out
            self.memory.release()
        return case

    def _judge_case(self, case, cls, index, recipe, sizes, out, reply):
        problem = self.s.problem_at(sizes)
        model = self.s.model if not sizes else self.s.construct_reference(problem, self.seed)
        inputs = self.s.draw(recipe, problem)
        try:
            ref = self._reference(inputs, model, measure=not sizes)
        except KjError as exc:  # the reference itself fails on this case's inputs: the case tells nothing
            if exc.kind != "problem_error":
                raise
            case.update(status="uninformative", message=exc.message.strip().splitlines()[-1][:600])
            return
        del inputs
        refs = outputs_of(ref)
        if not refs or not all(isinstance(r, torch.Tensor) for r in refs):
            case.update(status="uninformative", message="reference did not return tensors")
            return
        if self._check_output(out, ref, reply, f"{cls}[{index}]"):
            case.update(status="fail", message="output: " + self.output_failures[-1].split(": ", 1)[1])
            return
        outs = outputs_of(out)
        guarded(self.memory, "comparing the outputs",
                lambda: self._judge_values(case, outs, refs, recipe if not sizes else None),
                retry=lambda: self._judge_values(case, outs, refs, recipe if not sizes else None, chunk=1 << 18),
                fault="compare")

    def _reference(self, inputs, model, measure):
        if self.depth is None and measure:
            mode = tol.DepthMode()
            with mode:
                ref = self.s.reference(inputs, model)
            self.depth = mode.depth
            return ref
        return self.s.reference(inputs, model)

    def _judge_values(self, case, outs, refs, recipe, chunk=None):
        """Each output against its reference; a failing floating output is judged again against float64 when
        that could change the outcome (recipe None: other sizes, fp32 only)."""
        depth = self.depth or 1.0
        ok, against, failing, first_values = True, set(), None, ""
        total = {"max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "nonfinite_mismatches": 0,
                 "first_index": -1}
        refs64 = None
        for i, (o, r) in enumerate(zip(outs, refs)):
            rtol, atol_rel = tol.TOLERANCES.get(r.dtype, (0.0, 0.0))
            one_ok, one = tol.judge(o, r, rtol, atol_rel, depth, chunk)
            judged = "fp32"
            if not one_ok and r.is_floating_point() and recipe is not None and tol.worth_fp64(one):
                if refs64 is None:
                    refs64 = self._reference64(recipe, refs)
                if refs64:
                    ok64, one64 = tol.judge64(o, r, refs64[i], rtol, atol_rel, depth, chunk)
                    one_ok, one, judged = ok64, one64, "fp64"
            against.add(judged)
            ok = ok and one_ok
            for key in ("mismatches", "nonfinite_mismatches"):
                total[key] += one[key]
            for key in ("max_abs_err", "max_rel_err"):
                total[key] = max(total[key], one[key])
            if total["first_index"] < 0 and one["first_index"] >= 0:
                total["first_index"], failing, first_values = one["first_index"], i, one.get("first_values", "")
        case.update(total)
        case["judged_against"] = "fp64" if "fp64" in against else "fp32"
        if ok and all(tol.constant(r) for r in refs):
            # Agreeing with a constant (or all-NaN/Inf) reference says nothing; disagreeing with it still fails.
            case.update(status="uninformative", message="reference output is constant or has no finite value")
        if not ok:
            where = f" of output {failing}" if len(refs) > 1 and failing is not None else ""
            case["status"] = "fail"
            case["message"] = (f"{case['mismatches']} values outside tolerance, {case['nonfinite_mismatches']} "
                               f"NaN/Inf positions differ (against {case['judged_against']}); max error "
                               f"{case['max_rel_err']:.3g} x RMS at flat index {case['first_index']}{where}"
                               + (f" ({first_values})" if first_values else "")
                               + (f"; no float64 reference: {self.fp64_error}" if self.fp64_error else ""))

    def judge_timed(self, ref, out, recipe):
        """A timed call's output (taken from the arena) judged as a strict case's is: structure, dtype and shape,
        then the values at the reduction depth's tolerance, against float64 where that could change the outcome
        (recipe None: a sampled output, its chunks only against the fp32 reference). A dict as compare()'s."""
        result = {"passed": False, "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "message": ""}
        refs = outputs_of(ref)
        outs = [out] if isinstance(ref, torch.Tensor) else outputs_of(out) if isinstance(out, (tuple, list)) else None
        if not refs or outs is None or len(outs) != len(refs):
            result["message"] = f"returned {type(out).__name__}, expected {type(ref).__name__}"
            return result
        problems = [p for o, r in zip(outs, refs) for p in self._check_tensor(o, r)]
        if problems:
            result["message"] = "; ".join(problems)
            return result
        if any(o.device.type == "meta" for o in outs):
            result["message"] = "an output far larger than the reference's"
            return result
        case = {}
        guarded(self.memory, "comparing a timed output", lambda: self._judge_values(case, outs, refs, recipe),
                retry=lambda: self._judge_values(case, outs, refs, recipe, chunk=1 << 18))
        result.update(passed=case.get("status") != "fail", max_abs_err=case.get("max_abs_err", 0.0),
                      max_rel_err=case.get("max_rel_err", 0.0), mismatches=case.get("mismatches", 0),
                      message=case.get("message", "") if case.get("status") == "fail" else "")
        return result

    # ---- the float64 reference, where it fits ----
    def _reference64(self, recipe, refs):
        """The reference in float64 on the recipe's inputs: on the device where `fp64_on_device` says it fits, else
        on the host (the judge's own memory), else a harness_error. Out of memory on the device goes to the host."""
        input_bytes, output_bytes = self.memory.input_bytes, sum(r.numel() * r.element_size() for r in refs)
        parameter_bytes = sum(p.numel() * p.element_size() for p in self.s.model.parameters())
        need = 3 * input_bytes + 2 * output_bytes + 2 * parameter_bytes + 2 * self.memory.workspace_bytes + GIB // 4
        device = self.device
        if device.type == "cuda":
            free, _ = torch.cuda.mem_get_info(device)
            if not fp64_on_device(need, self.memory.held(), self.memory.budget(), free):
                device = torch.device("cpu")
        try:
            return self._run64_or_host(recipe, device, need)
        except KjError:
            raise
        except Exception as exc:  # kj's own float64 copy failed (an op without fp64, a dtype the model fixes)
            if tol_is_oom(exc):
                raise
            self.fp64_error = f"{type(exc).__name__}: {exc}"[:300]
            return []

    def _run64_or_host(self, recipe, device, need):
        if device.type == "cuda":
            try:
                return self._run64(recipe, device)
            except Exception as exc:
                if not tol_is_oom(exc):
                    raise
            self.models64.pop(device, None)  # the device had less room than it said: the host's turn
            self.memory.release()
            device = torch.device("cpu")
        if need > host_available():
            raise KjError("harness_error", f"the float64 reference needs {need} bytes, more than the memory budget "
                          f"on the device and the host has ({self.memory.describe()})", reason="out_of_memory")
        return self._run64(recipe, device)

    def _run64(self, recipe, device):
        if device not in self.models64:
            self.models64[device] = copy.deepcopy(self.s.model).to(device=device, dtype=torch.float64)
        inputs = [x.to(device=device, dtype=torch.float64) if _floating(x) else x.to(device)
                  if isinstance(x, torch.Tensor) else x for x in draw(self.s.problem, recipe, self.device)]
        with torch.no_grad():
            out = self.models64[device](*inputs)
        del inputs
        return outputs_of(out)

    # ---- classes ----
    def seeds(self, count):
        g = torch.Generator().manual_seed(self.seed + 7919)
        return [int(torch.randint(0, 2**31 - 1, (1,), generator=g)) for _ in range(count)]

    def run_class(self, cls):
        if cls == "random":
            cases = []
            for i, s in enumerate(self.seeds(RANDOM_SEEDS)):
                cases.append(self.run_case(cls, i, self.recipe(s)))
                if self.stop_at_failure and cases[-1]["status"] == "fail":
                    break
            return cases
        if cls in ("distribution", "nan", "inf", "denormal", "extreme", "negzero"):
            return [self.run_case(cls, 0, self.recipe(self.transform_seed(), cls))]
        if cls == "determinism":
            return [self.determinism()]
        if cls == "shape":
            return self.shapes()
        if cls == "output":
            return [self._summary_case("output", self.output_failures)]
        if cls == "inputs":
            self.run_case("inputs", 0, self.recipe(self.transform_seed(), "distribution"), check_inputs=True)
            return [self._summary_case("inputs", self.input_failures)]
        raise ValueError(f"unknown case class {cls}")

    def transform_seed(self):
        """The seed of the base draw every adversarial transform starts from."""
        return self.seeds(RANDOM_SEEDS + 1)[-1]

    def _summary_case(self, cls, failures):
        case = _case(cls, 0, 0, "fail" if failures else "pass", "; ".join(failures[:3]))
        case["mismatches"] = len(failures)
        return case

    def determinism(self):
        seed = self.seeds(1)[0]
        outs = []
        for k in range(2):  # the same inputs, the RNG in another state: a result that depends on it differs
            try:
                out, _ = self.s.remote.forward(dict(self.recipe(seed), rng_after=seed ^ (0x5EED + k)))
            except KjError as exc:
                return _case("determinism", 0, seed, "fail", f"ModelNew.forward failed ({exc.kind})")
            outs.append(outputs_of(out) if isinstance(out, (torch.Tensor, tuple, list)) else None)
            del out
        same = (outs[0] is not None and outs[1] is not None and len(outs[0]) == len(outs[1])
                and all(isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and same_bits(a, b)
                        for a, b in zip(*outs)))
        del outs
        self.memory.release()
        return _case("determinism", 0, seed, "pass" if same else "fail",
                     "" if same else "two calls on the same inputs gave different outputs")

    def shape_overrides(self):
        """Smaller, odd sizes for every integer module constant of at least 2 (primes where possible)."""
        def prime_at_most(n):
            for v in range(max(n, 2), 1, -1):
                if all(v % d for d in range(2, int(v ** 0.5) + 1)):
                    return v
            return 2
        consts = self.s.problem.int_constants()
        return {k: prime_at_most(max(2, v // 3)) if v >= 8 else max(2, v - 1) for k, v in consts.items() if v >= 3}

    def shapes(self):
        new = self.shape_overrides()
        if not new:
            return [self._skip("shape", "the problem has no integer size constants to vary")]
        try:
            problem = self.s.problem_at(new)
            model = self.s.construct_reference(problem, self.seed)
            self.s.reference(self.s.draw(self.recipe(self.seed), problem), model)
        except Exception as exc:
            return [self._skip("shape", f"the reference does not run at sizes {new}: {exc}")]
        finally:
            self.memory.release()
        cases = []
        for i, s in enumerate(self.seeds(2)):
            case = self.run_case("shape", i, self.recipe(s), sizes=new)
            case["message"] = (case["message"] + f" (sizes {new})").strip()
            cases.append(case)
        return cases

    def _skip(self, cls, why):
        return _case(cls, 0, 0, "uninformative", why)
