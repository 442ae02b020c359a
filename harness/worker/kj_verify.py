"""The strict verdict's case classes: adversarial inputs, output and input checks, run candidate-first.

Each class returns case dicts {class, index, seed, status: pass|fail|uninformative, ...}. In every case the
candidate runs first, on its own clone of fresh inputs; the reference runs after, on the pristine inputs, and its
outputs are dropped after the comparison (ARCHITECTURE invariant 1). A case passes when the candidate is within
tolerance of the fp32 reference or of a float64 reference (model and inputs upcast), and NaN/+Inf/-Inf positions
match exactly. See docs/methodology.md for the tolerances and why.
"""
import copy

import torch

from kj_runtime import KjError, Problem, chunks, clone_inputs, format_exception, outputs_of, set_seed

# (rtol, atol relative to the RMS of the finite reference values) per output dtype.
TOLERANCES = {torch.float32: (1e-4, 1e-5), torch.float64: (1e-7, 1e-9), torch.float16: (1e-2, 1e-3),
              torch.bfloat16: (2e-2, 1e-2)}
RANDOM_SEEDS = 6


def _floating(x):
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def _same(a, b):
    """Bitwise-equal tensors, NaN equal to NaN."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        return bool(torch.equal(torch.isnan(a), torch.isnan(b))) and bool(torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0)))
    return bool(torch.equal(a, b))


def _judge(out, ref, rtol, atol_rel):
    """Compares one output with one reference, chunk by chunk; returns (passed, details)."""
    masks = (torch.isnan, torch.isposinf, torch.isneginf)
    squares, count = 0.0, 0
    for (r,) in chunks(ref):
        f = r[torch.isfinite(r)].double()
        squares += float(f.square().sum())
        count += f.numel()
    scale = (squares / count) ** 0.5 if count else 0.0
    atol = atol_rel * scale
    d = {"max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "nonfinite_mismatches": 0, "first_index": -1}
    offset = 0
    for r, o in chunks(ref, out):
        wrong = torch.zeros(r.shape, dtype=torch.bool, device=r.device)
        for m in masks:
            wrong |= m(o) != m(r)
        d["nonfinite_mismatches"] += int(wrong.sum())
        both = torch.isfinite(o) & torch.isfinite(r)
        diff = torch.where(both, (o.double() - r.double()).abs(), 0.0)
        bad = both & (diff > atol + rtol * r.double().abs())
        d["mismatches"] += int(bad.sum())
        d["max_abs_err"] = max(d["max_abs_err"], float(diff.max()) if diff.numel() else 0.0)
        wrong |= bad
        if d["first_index"] < 0 and bool(wrong.any()):
            d["first_index"] = offset + int(wrong.nonzero()[0])
        offset += r.numel()
    d["max_rel_err"] = d["max_abs_err"] / scale if scale > 0 else 0.0
    return d["mismatches"] == 0 and d["nonfinite_mismatches"] == 0, d


def _constant(ref):
    flat = ref.reshape(-1)
    if flat.numel() == 0:
        return True
    first = flat[0]
    return all(bool((c == first).all()) or (bool(torch.isnan(first)) and bool(torch.isnan(c).all()))
               for (c,) in chunks(ref))


class Verifier:
    """Runs the case classes for one Session (problem, candidate and models already built)."""

    def __init__(self, session, seed):
        self.s = session
        self.seed = seed
        self.generator = torch.Generator(device=session.device).manual_seed(seed ^ 0x6B6A)
        self.output_failures = []
        self.input_failures = []
        self.model64 = None
        self.device = session.device

    # ---- inputs ----
    def base_inputs(self, seed, problem=None):
        set_seed(seed)
        return (problem or self.s.problem).inputs(self.device, draw_on_device=True)

    def transform(self, inputs, kind):
        """An adversarial copy of the inputs; draws are made in place so a GB-sized input needs little extra memory."""
        out = []
        for x in inputs:
            if not _floating(x) or x.numel() == 0:
                out.append(x)
                continue
            info = torch.finfo(x.dtype)
            g = self.generator
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
            out.append(y)
        return out

    # ---- one case ----
    def _reference64(self, inputs):
        self.s.restore_flags()
        if self.model64 is None:
            self.model64 = copy.deepcopy(self.s.model).double()
        with torch.no_grad():
            return self.model64(*[x.double() if _floating(x) else x for x in inputs])

    def _check_tensor(self, out, ref, inputs):
        problems = []
        if type(out) is not torch.Tensor:
            problems.append(f"returned {type(out).__module__}.{type(out).__name__}, expected a plain torch.Tensor")
        elif out.dtype != ref.dtype:
            problems.append(f"dtype {out.dtype}, expected {ref.dtype}")
        elif out.shape != ref.shape:
            problems.append(f"shape {list(out.shape)}, expected {list(ref.shape)}")
        elif out.layout != torch.strided:
            problems.append(f"layout {out.layout}, expected dense")
        if isinstance(out, torch.Tensor) and out.layout == torch.strided:
            own = out.untyped_storage()
            lo, hi = own.data_ptr(), own.data_ptr() + own.nbytes()
            others = list(inputs) + list(self.s.model_new.parameters()) + list(self.s.model_new.buffers())
            for t in others:
                if isinstance(t, torch.Tensor) and t.layout == torch.strided and t.untyped_storage().nbytes():
                    st = t.untyped_storage()
                    if st.data_ptr() < hi and lo < st.data_ptr() + st.nbytes():
                        problems.append("output storage overlaps an input, parameter or buffer")
                        break
        return problems

    def _check_output(self, out, ref, inputs, case):
        """Structure, then each output: a plain dense tensor of the reference's dtype and shape, not aliasing an
        input, parameter or buffer. Several outputs (tuple/list) are checked one by one."""
        if isinstance(ref, torch.Tensor):
            problems = self._check_tensor(out, ref, inputs)
        else:
            refs, outs = outputs_of(ref), outputs_of(out) if not isinstance(out, torch.Tensor) else None
            if outs is None or len(outs) != len(refs):
                problems = [f"returned {type(out).__name__}, expected a {type(ref).__name__} of {len(refs)} tensors"]
            else:
                problems = [f"output {i}: {p}" for i, (o, r) in enumerate(zip(outs, refs))
                            for p in self._check_tensor(o, r, inputs)]
        if problems:
            self.output_failures.append(f"{case}: " + "; ".join(problems))
        return problems

    def _poison(self, nbytes):
        """Fills memory of the output's size with NaN and frees it: an unwritten output then reads NaN."""
        if nbytes > 0:
            junk = torch.full((max(1, nbytes // 4),), float("nan"), dtype=torch.float32, device=self.device)
            del junk

    def run_case(self, cls, index, seed, inputs, problem_model=None, model_new=None):
        model = problem_model or self.s.model
        candidate = model_new or self.s.model_new
        case = {"class": cls, "index": index, "seed": seed, "status": "pass", "judged_against": "",
                "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "nonfinite_mismatches": 0,
                "first_index": -1, "message": ""}
        own = clone_inputs(inputs)
        self._poison(getattr(self, "out_nbytes", 0))
        try:
            with torch.no_grad():
                out = candidate(*own)
            self.s.sync()
        except Exception as exc:
            case.update(status="fail", message="ModelNew.forward raised: " + format_exception(exc).splitlines()[-1])
            return case, None
        changed = [i for i, (a, b) in enumerate(zip(own, inputs)) if isinstance(a, torch.Tensor) and not _same(a, b)]
        if changed:
            self.input_failures.append(f"{cls}[{index}]: input(s) {changed} modified in place")
        self.s.restore_flags()
        with torch.no_grad():
            ref = model(*inputs)
        self.s.sync()
        refs = outputs_of(ref)
        if not refs or not all(isinstance(r, torch.Tensor) for r in refs):
            case.update(status="uninformative", message="reference did not return tensors")
            return case, out
        self.out_nbytes = sum(r.numel() * r.element_size() for r in refs)
        if self._check_output(out, ref, own, f"{cls}[{index}]"):
            case.update(status="fail", message="output: " + self.output_failures[-1].split(": ", 1)[1])
            return case, out
        outs = outputs_of(out)
        ref64 = None
        ok = True
        details = {"max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "nonfinite_mismatches": 0,
                   "first_index": -1}
        against = set()
        for i, (o, r) in enumerate(zip(outs, refs)):
            rtol, atol_rel = TOLERANCES.get(r.dtype, (0.0, 0.0))
            one_ok, one = _judge(o, r, rtol, atol_rel)
            judged = "fp32"
            if not one_ok and r.is_floating_point() and problem_model is None:
                # torch's own fp32 result may be the inexact one (NaN/Inf positions included): judge against
                # the reference computed in float64 as well
                if ref64 is None:
                    ref64 = outputs_of(self._reference64(inputs))
                ok64, one64 = _judge(o.double(), ref64[i], rtol, atol_rel)
                if ok64:
                    one_ok, one, judged = True, one64, "fp64"
            against.add(judged)
            ok = ok and one_ok
            for key in ("mismatches", "nonfinite_mismatches"):
                details[key] += one[key]
            for key in ("max_abs_err", "max_rel_err"):
                details[key] = max(details[key], one[key])
            if details["first_index"] < 0 and one["first_index"] >= 0:
                details["first_index"] = one["first_index"]
                details["failing_output"] = i
        case.update({k: v for k, v in details.items() if k != "failing_output"})
        case["judged_against"] = "fp64" if "fp64" in against else "fp32"
        if ok and all(_constant(r) for r in refs):
            # Agreeing with a constant (or all-NaN/Inf) reference says nothing; disagreeing with it still fails.
            case.update(status="uninformative", message="reference output is constant or has no finite value")
        if not ok:
            where = f" of output {details['failing_output']}" if len(refs) > 1 and "failing_output" in details else ""
            case["status"] = "fail"
            case["message"] = (f"{case['mismatches']} values outside tolerance (atol relative to the RMS), "
                               f"{case['nonfinite_mismatches']} NaN/Inf positions differ; max error "
                               f"{case['max_rel_err']:.3g} x RMS at flat index {case['first_index']}{where}")
        del ref
        return case, out

    # ---- classes ----
    def seeds(self, count):
        g = torch.Generator().manual_seed(self.seed + 7919)
        return [int(torch.randint(0, 2**31 - 1, (1,), generator=g)) for _ in range(count)]

    def run_class(self, cls):
        if cls == "random":
            return [self.run_case(cls, i, s, self.base_inputs(s))[0] for i, s in enumerate(self.seeds(RANDOM_SEEDS))]
        if cls in ("distribution", "nan", "inf", "denormal", "extreme", "negzero"):
            seed, base = self.transform_base()
            return [self.run_case(cls, 0, seed, self.transform(base, cls))[0]]
        if cls == "determinism":
            return [self.determinism()]
        if cls == "shape":
            return self.shapes()
        if cls == "output":
            return [self._summary_case("output", self.output_failures)]
        if cls == "inputs":
            seed, base = self.transform_base()
            self.run_case("inputs", 0, seed, self.transform(base, "distribution"))
            return [self._summary_case("inputs", self.input_failures)]
        raise ValueError(f"unknown case class {cls}")

    def transform_base(self):
        """One input set, drawn once, that every adversarial transform starts from (inputs are costly to draw)."""
        if getattr(self, "_base", None) is None:
            seed = self.seeds(RANDOM_SEEDS + 1)[-1]
            self._base = (seed, self.base_inputs(seed))
        return self._base

    def _summary_case(self, cls, failures):
        return {"class": cls, "index": 0, "seed": 0, "status": "fail" if failures else "pass", "judged_against": "",
                "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": len(failures), "nonfinite_mismatches": 0,
                "first_index": -1, "message": "; ".join(failures[:3])}

    def determinism(self):
        seed = self.seeds(1)[0]
        inputs = self.base_inputs(seed)
        outs = []
        for _ in range(2):
            with torch.no_grad():
                out = self.s.model_new(*clone_inputs(inputs))
            self.s.sync()
            parts = outputs_of(out)
            outs.append([p.detach().clone() if isinstance(p, torch.Tensor) else p for p in parts] if parts else None)
        same = (outs[0] is not None and outs[1] is not None and len(outs[0]) == len(outs[1])
                and all(isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and _same(a, b)
                        for a, b in zip(*outs)))
        return {"class": "determinism", "index": 0, "seed": seed, "status": "pass" if same else "fail",
                "judged_against": "", "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0,
                "nonfinite_mismatches": 0, "first_index": -1,
                "message": "" if same else "two calls on the same inputs gave different outputs"}

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
        overrides = dict(self.s.overrides)
        new = self.shape_overrides()
        if not new:
            return [self._skip("shape", "the problem has no integer size constants to vary")]
        overrides.update(new)
        try:
            problem = Problem(self.s.problem.path, self.s.problem.raw_source, overrides, self.s.dtype)
            with torch.no_grad():
                set_seed(self.seed)
                model = problem.module.Model(*problem.init_inputs())
                set_seed(self.seed)
                inputs = self.base_inputs(self.seed, problem)
                self.s._place(model)(*inputs)
        except Exception as exc:
            return [self._skip("shape", f"the reference does not run at sizes {new}: {exc}")]
        try:
            model, model_new = self.s.construct(problem, self.seed)
        except Exception as exc:
            case = self._skip("shape", f"ModelNew raised at sizes {new}: {getattr(exc, 'message', exc)}")
            case["status"] = "fail"
            return [case]
        cases = []
        for i, s in enumerate(self.seeds(2)):
            case, _ = self.run_case("shape", i, s, self.base_inputs(s, problem), model, model_new)
            case["message"] = (case["message"] + f" (sizes {new})").strip()
            cases.append(case)
        return cases

    def _skip(self, cls, why):
        case = self._summary_case(cls, [])
        case.update(status="uninformative", message=why)
        return case
