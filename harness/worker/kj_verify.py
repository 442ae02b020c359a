"""The strict verdict's case classes: adversarial inputs, output and input checks, run in the judge.

Each class returns case dicts {class, index, seed, status: pass|fail|uninformative, ...}. Each case is a recipe (seed,
transform, sizes): the candidate runs first, in the runner process, on its own draw of the recipe's inputs; the judge
draws the same inputs, runs the reference and compares. The candidate never shares a process, or memory, with the
reference or its outputs (ARCHITECTURE invariant 1). A case passes when the candidate is within
tolerance of the fp32 reference or of a float64 reference (model and inputs upcast), and NaN/+Inf/-Inf positions
match exactly. See docs/methodology.md for the tolerances and why.
"""
import copy

import torch

from kj_runtime import KjError, Opaque, chunks, draw, outputs_of, set_seed

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
            at = int(wrong.nonzero()[0])
            d["first_index"] = offset + at
            d["first_values"] = f"expected {r[at].item()!r}, got {o[at].item()!r}"  # text: JSON has no NaN
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
    """Runs the case classes for one judge Session (problem and reference built, the runner loaded)."""

    def __init__(self, session, seed):
        self.s = session
        self.seed = seed
        self.output_failures = []
        self.input_failures = []
        self.model64 = None
        self.device = session.device

    def recipe(self, seed, transform=None):
        r = {"kind": "case", "seed": int(seed)}
        if transform:
            r.update(transform=transform, tseed=(int(seed) ^ 0x6B6A) + len(transform))
        return r

    # ---- one case ----
    def _reference64(self, inputs):
        if self.model64 is None:
            self.model64 = copy.deepcopy(self.s.model).double()
        with torch.no_grad():
            return self.model64(*[x.double() if _floating(x) else x for x in inputs])

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

    def run_case(self, cls, index, recipe, sizes=None, check_inputs=False):
        case = {"class": cls, "index": index, "seed": recipe["seed"], "status": "pass", "judged_against": "",
                "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "nonfinite_mismatches": 0,
                "first_index": -1, "message": ""}
        try:
            out, reply = self.s.remote.forward(recipe, sizes, check_inputs)
        except KjError as exc:
            first = exc.message.strip().splitlines()[-1] if exc.message.strip() else exc.kind
            case.update(status="fail", message=f"ModelNew.forward failed ({exc.kind}): {first}"[:400])
            return case
        if reply.get("inputs_changed"):
            self.input_failures.append(f"{cls}[{index}]: input(s) {reply['inputs_changed']} modified in place")
        problem = self.s.problem_at(sizes)
        model = self.s.model if not sizes else self.s.construct_reference(problem, self.seed)
        inputs = draw(problem, recipe, self.device)
        ref = self.s.reference(inputs, model)
        refs = outputs_of(ref)
        if not refs or not all(isinstance(r, torch.Tensor) for r in refs):
            case.update(status="uninformative", message="reference did not return tensors")
            return case
        if self._check_output(out, ref, reply, f"{cls}[{index}]"):
            case.update(status="fail", message="output: " + self.output_failures[-1].split(": ", 1)[1])
            return case
        self._judge_values(case, outputs_of(out), refs, inputs, exact_sizes=not sizes)
        return case

    def _judge_values(self, case, outs, refs, inputs, exact_sizes):
        ref64 = None
        ok = True
        details = {"max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "nonfinite_mismatches": 0,
                   "first_index": -1}
        against, failing, first_values = set(), None, ""
        for i, (o, r) in enumerate(zip(outs, refs)):
            rtol, atol_rel = TOLERANCES.get(r.dtype, (0.0, 0.0))
            one_ok, one = _judge(o, r, rtol, atol_rel)
            judged = "fp32"
            if not one_ok and r.is_floating_point() and exact_sizes:
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
                details["first_index"], failing = one["first_index"], i
                first_values = one.get("first_values", "")
        case.update(details)
        case["judged_against"] = "fp64" if "fp64" in against else "fp32"
        if ok and all(_constant(r) for r in refs):
            # Agreeing with a constant (or all-NaN/Inf) reference says nothing; disagreeing with it still fails.
            case.update(status="uninformative", message="reference output is constant or has no finite value")
        if not ok:
            where = f" of output {failing}" if len(refs) > 1 and failing is not None else ""
            case["status"] = "fail"
            case["message"] = (f"{case['mismatches']} values outside tolerance (atol relative to the RMS), "
                               f"{case['nonfinite_mismatches']} NaN/Inf positions differ; max error "
                               f"{case['max_rel_err']:.3g} x RMS at flat index {case['first_index']}{where}"
                               + (f" ({first_values})" if first_values else ""))

    # ---- classes ----
    def seeds(self, count):
        g = torch.Generator().manual_seed(self.seed + 7919)
        return [int(torch.randint(0, 2**31 - 1, (1,), generator=g)) for _ in range(count)]

    def run_class(self, cls):
        if cls == "random":
            return [self.run_case(cls, i, self.recipe(s)) for i, s in enumerate(self.seeds(RANDOM_SEEDS))]
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
        return {"class": cls, "index": 0, "seed": 0, "status": "fail" if failures else "pass", "judged_against": "",
                "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": len(failures), "nonfinite_mismatches": 0,
                "first_index": -1, "message": "; ".join(failures[:3])}

    def determinism(self):
        seed = self.seeds(1)[0]
        outs = []
        for k in range(2):  # the same inputs, the RNG in another state: a result that depends on it differs
            try:
                out, _ = self.s.remote.forward(dict(self.recipe(seed), rng_after=seed ^ (0x5EED + k)))
            except KjError as exc:
                return {"class": "determinism", "index": 0, "seed": seed, "status": "fail", "judged_against": "",
                        "max_abs_err": 0.0, "max_rel_err": 0.0, "mismatches": 0, "nonfinite_mismatches": 0,
                        "first_index": -1, "message": f"ModelNew.forward failed ({exc.kind})"}
            outs.append(outputs_of(out) if isinstance(out, (torch.Tensor, tuple, list)) else None)
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
        new = self.shape_overrides()
        if not new:
            return [self._skip("shape", "the problem has no integer size constants to vary")]
        try:
            problem = self.s.problem_at(new)
            model = self.s.construct_reference(problem, self.seed)
            self.s.reference(draw(problem, self.recipe(self.seed), self.device), model)
        except Exception as exc:
            return [self._skip("shape", f"the reference does not run at sizes {new}: {exc}")]
        cases = []
        for i, s in enumerate(self.seeds(2)):
            case = self.run_case("shape", i, self.recipe(s), sizes=new)
            case["message"] = (case["message"] + f" (sizes {new})").strip()
            cases.append(case)
        return cases

    def _skip(self, cls, why):
        case = self._summary_case(cls, [])
        case.update(status="uninformative", message=why)
        return case
