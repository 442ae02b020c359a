"""kj audit: a problem judged before any candidate.

Null candidates that compute nothing of the operator (zeros; a constant fill: the reference output's mean on other
inputs, drawn once; the first input passed through) and precision downgrades of the reference itself (its weights and inputs in fp16 or bf16;
TF32 matmuls and convolutions, on a GPU) are judged by KernelBench's rule on the compatible verdict's trials and by
the strict rule (kj_tolerance, against float64 where that could change the outcome) on fresh random inputs. The
reference also runs twice on the same inputs under two RNG states: a forward that draws random numbers (Dropout
left in train mode) makes any verdict on the problem a draw. A problem is unsound when the strict rule accepts a
null candidate, or its reference is stochastic or constant; the reasons say which.
"""
import copy

import torch

import kj_tolerance as tol
from kj_common import backend_flags, outputs_of, set_backend_flags, set_seed
from kj_compare import compare
from kj_judge import Session

EMPTY = ("zeros", "mean", "input")  # compute nothing of the operator: the strict rule must reject each
DOWNCASTS = ("fp16", "bf16", "tf32")
STRICT_SEEDS = (1234567, 7654321)
CONSTANT_SEED = 24681357  # the draw the constant fill's value comes from: never one a rule judges on


def _each_output(ref, fn):
    """fn applied to every tensor output of `ref`, in its structure (None when fn gives None for one)."""
    if isinstance(ref, torch.Tensor):
        return fn(ref)
    outs = [fn(r) if isinstance(r, torch.Tensor) else r for r in outputs_of(ref) or []]
    return None if any(o is None for o in outs) else type(ref)(outs)


def _passthrough(inputs):
    first = next((x for x in inputs if isinstance(x, torch.Tensor)), None)

    def same_as(r):
        if first is None or first.shape != r.shape or first.dtype != r.dtype:
            return None
        return first.clone()
    return same_as


def _downcast(model, inputs, dtype):
    """The model run in `dtype`, or None when it cannot run so as written (a tensor attribute that .to() does not
    cast, e.g. an RNN's initial state, meets the cast weights): the downcast then says nothing of the problem."""
    low = copy.deepcopy(model).to(dtype)
    args = [x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    try:
        with torch.no_grad():
            return low(*args)
    except RuntimeError as exc:
        if "dtype" in str(exc) or "scalar type" in str(exc):
            return None
        raise


def _free(device):
    """Hands cached blocks back between steps: a KernelBench level-1 input is up to 16 GiB, its float64 copy twice
    that, and the next step's allocations must not find the card full of the last one's."""
    if device.type == "cuda":
        torch.cuda.empty_cache()


class Audit:
    """The audit of one problem (a judge Session with the problem loaded and its reference built)."""

    def __init__(self, session, protocol):
        self.s = session
        self._constants = None
        self.atol, self.rtol = float(protocol["atol"]), float(protocol["rtol"])
        self.seed = int(protocol.get("seed", 42))
        self.trials = int(protocol.get("trials", 5))

    def null_output(self, name, inputs, ref):
        """The output a null candidate returns on `inputs` (None: not applicable to this problem)."""
        if name == "zeros":
            return _each_output(ref, torch.zeros_like)
        if name == "mean":
            return self._constant_fill(ref)
        if name == "input":
            return _each_output(ref, _passthrough(inputs))
        if name == "tf32":
            if self.s.device.type != "cuda":
                return None  # no TF32 on the CPU
            saved = backend_flags()
            set_backend_flags({**saved, "backends.cuda.matmul.allow_tf32": True, "backends.cudnn.allow_tf32": True})
            try:
                with torch.no_grad():
                    return self.s.model(*inputs)
            finally:
                set_backend_flags(saved)
        dtype = torch.float16 if name == "fp16" else torch.bfloat16
        floating = [r for r in (outputs_of(ref) or []) if isinstance(r, torch.Tensor)]
        if not floating or any(r.dtype != torch.float32 for r in floating):
            return None  # a downcast says something only about an fp32 task
        out = _downcast(self.s.model, inputs, dtype)
        return None if out is None else _each_output(out, lambda o: o.to(torch.float32))

    def constants(self):
        """Each output's mean on inputs of their own (CONSTANT_SEED): the value a candidate that fills its output
        with one constant would have learned from the problem's distribution, not from the inputs it is judged on.
        A one-value output (a loss) is then caught only when the loss barely depends on its inputs."""
        if self._constants is None:
            inputs = self.s.draw({"kind": "case", "seed": CONSTANT_SEED})
            ref = self.s.reference(inputs)
            self._constants = [float(r.double().mean()) if isinstance(r, torch.Tensor) and r.is_floating_point()
                               else None for r in (outputs_of(ref) or [])]
            del inputs, ref
            _free(self.s.device)
        return self._constants

    def _constant_fill(self, ref):
        constants = self.constants()
        if isinstance(ref, torch.Tensor):
            c = constants[0] if constants else None
            return None if c is None or not ref.is_floating_point() else torch.full_like(ref, c)
        outs = []
        for r, c in zip(outputs_of(ref) or [], constants):
            if isinstance(r, torch.Tensor):
                if c is None or not r.is_floating_point():
                    return None
                r = torch.full_like(r, c)
            outs.append(r)
        return type(ref)(outs)

    def compatible(self, names):
        """KernelBench's rule over the compatible verdict's trials: True when every trial passes."""
        accepted = {n: True for n in names}
        applicable = {n: False for n in names}
        for seed in self.s.trial_seeds(self.seed, self.trials):
            inputs = self.s.draw({"kind": "trial", "seed": seed, "rng": self.s.rng})
            ref = self.s.reference(inputs)
            for n in names:
                out = self.null_output(n, inputs, ref)
                if out is None:
                    continue
                applicable[n] = True
                accepted[n] = accepted[n] and compare(ref, out, self.atol, self.rtol)["passed"]
                del out
            del inputs, ref
            _free(self.s.device)
        return {n: (accepted[n] if applicable[n] else None) for n in names}

    def strict(self, names):
        """The strict rule on fresh random inputs: True when every case passes (a constant reference makes the
        cases uninformative: None), with the reference's reduction depth and its own error against float64."""
        accepted = {n: True for n in names}
        applicable = {n: False for n in names}
        depth, constant, tolerance_use = None, True, None
        model64 = None
        for seed in STRICT_SEEDS:
            recipe = {"kind": "case", "seed": seed}
            inputs = self.s.draw(recipe)
            if depth is None:
                mode = tol.DepthMode()
                with mode:
                    ref = self.s.reference(inputs)
                depth = mode.depth or 1.0
            else:
                ref = self.s.reference(inputs)
            refs = [r for r in outputs_of(ref) or [] if isinstance(r, torch.Tensor)]
            constant = constant and all(tol.constant(r) for r in refs)
            if model64 is None and refs and all(r.dtype == torch.float32 for r in refs):
                model64 = copy.deepcopy(self.s.model).to(torch.float64)
            refs64 = self._reference64(model64, inputs) if model64 is not None else None
            if refs64:
                use = max(self._kb_use(r, r64) for r, r64 in zip(refs, refs64))
                tolerance_use = use if tolerance_use is None else max(tolerance_use, use)
            for n in names:
                out = self.null_output(n, inputs, ref)
                if out is None:
                    continue
                applicable[n] = True
                accepted[n] = accepted[n] and self._strict_pass(outputs_of(out), refs, refs64, depth)
                del out
            del inputs, ref, refs, refs64
            _free(self.s.device)
        result = {n: (accepted[n] if applicable[n] and not constant else None) for n in names}
        return result, {"depth": depth or 1.0, "constant": constant, "tolerance_use": tolerance_use}

    def _reference64(self, model64, inputs):
        args = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
        try:
            with torch.no_grad():
                return [r for r in outputs_of(model64(*args)) or [] if isinstance(r, torch.Tensor)]
        except Exception:  # an op without float64: judged against fp32 alone
            return None

    def _kb_use(self, r32, r64):
        """How much of KernelBench's tolerance the fp32 reference's own rounding uses (1.0: at the edge)."""
        both = torch.isfinite(r32) & torch.isfinite(r64)
        if not bool(both.any()):
            return 0.0
        err = (r32.double() - r64).abs()[both]
        return float((err / (self.atol + self.rtol * r64.abs()[both])).max())

    def _strict_pass(self, outs, refs, refs64, depth):
        if outs is None or len(outs) != len(refs):
            return False
        for i, (o, r) in enumerate(zip(outs, refs)):
            if o.shape != r.shape or o.dtype != r.dtype:
                return False
            rtol, atol_rel = tol.TOLERANCES.get(r.dtype, (0.0, 0.0))
            ok, details = tol.judge(o, r, rtol, atol_rel, depth)
            if not ok and refs64 and tol.worth_fp64(details):
                ok, _ = tol.judge64(o, r, refs64[i], rtol, atol_rel, depth)
            if not ok:
                return False
        return True

    def stochastic(self):
        """Whether the reference's output depends on the global RNG state (the same inputs, two states): '' when
        it does not, else what differed. Judged by the strict rule (relative to the output's RMS, with the
        reduction's rounding allowed): KernelBench's absolute 1e-4 cannot see a Dropout before a softmax over
        16384 features, whose outputs are all below it (KernelBench L2 66)."""
        inputs = self.s.draw({"kind": "trial", "seed": self.seed, "rng": self.s.rng})
        set_seed(self.seed + 1)
        mode = tol.DepthMode()
        with mode:
            first = outputs_of(self.s.reference(inputs)) or []
        set_seed(self.seed + 2)
        second = outputs_of(self.s.reference(inputs)) or []
        for i, (a, b) in enumerate(zip(first, second)):
            if not isinstance(a, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
                continue
            rtol, atol_rel = tol.TOLERANCES.get(a.dtype, (0.0, 0.0))
            same, details = tol.judge(b, a, rtol, atol_rel, mode.depth or 1.0)
            if not same:
                kb = "" if compare(a, b, self.atol, self.rtol)["passed"] else ", and beyond KernelBench's tolerance"
                return (f"output {i} changed with the RNG state on the same inputs (max difference "
                        f"{details['max_rel_err']:.3g} x RMS{kb})")
        return ""


def audit_problem(path, source, overrides, device, protocol):
    """The audit record of one problem: {nulls: {name: {compatible, strict}}, stochastic, constant, depth,
    tolerance_use, unsound, reasons, notes}. compatible/strict: True accepted, False rejected, None not applicable."""
    session = Session(device, protocol)
    session.load_problem(path, source, overrides)
    session.model = session.construct_reference(session.problem, int(protocol.get("seed", 42)))
    audit = Audit(session, protocol)
    names = EMPTY + DOWNCASTS
    stochastic = audit.stochastic()
    compatible = audit.compatible(names)
    strict, facts = audit.strict(names)
    if stochastic:  # its float64 copy draws other random numbers: no measure of its rounding
        facts["tolerance_use"] = None
    reasons, notes = [], []
    if stochastic:
        reasons.append("stochastic reference: " + stochastic)
    if facts["constant"]:
        reasons.append("constant reference: its output is the same value everywhere, so a constant matches it")
    for n in EMPTY:
        if strict[n]:
            reasons.append(f"the strict rule accepts the '{n}' null candidate")
    weak = [n for n in EMPTY if compatible[n]]
    if weak:
        notes.append("KernelBench's rule accepts " + ", ".join(f"'{n}'" for n in weak))
    loose = [n for n in DOWNCASTS if strict[n]]
    if loose:
        notes.append("the strict rule accepts " + ", ".join(loose) + " (the output does not resolve the precision)")
    return {"nulls": {n: {"compatible": compatible[n], "strict": strict[n]} for n in names},
            "stochastic": bool(stochastic), "constant": facts["constant"], "depth": facts["depth"],
            "tolerance_use": facts["tolerance_use"], "unsound": bool(reasons), "reasons": reasons, "notes": notes}
