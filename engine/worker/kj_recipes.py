"""Inputs from recipes, embedded in the `kj` binary and imported by the judge and the runner alike: both draw the
very same tensors from the same recipe (a seed, an adversarial transform, the RNG's state after the draw), the
transforms working in place a chunk at a time; and the inputs of timed calls, fresh for every call.
"""
import torch

from kj_common import flat_chunks, set_seed


def _transform_chunk(y, kind, g, info, state):
    """One chunk of an adversarial transform, in place on `y`."""
    if kind in ("distribution", "extreme"):
        v = torch.empty(y.shape, dtype=torch.float32, device=y.device)
        if kind == "distribution":
            v.normal_(generator=g).mul_(2.0).exp_()  # magnitudes exp(N(0, 2))
        else:
            v.uniform_(0.0, 1000.0, generator=g)
        v.copysign_(torch.rand(y.shape, generator=g, device=y.device).sub_(0.5))
        y.copy_(v)
        return
    u = torch.rand(y.shape, generator=g, device=y.device)
    rare = kind in ("nan", "inf")
    pick = u < (0.01 if rare else 0.1)
    negative = u < (0.005 if rare else 0.05)  # half of the picked ones
    if not state["picked"] and bool(pick.any()):
        state["picked"] = True
    if kind == "nan":
        y.masked_fill_(pick, float("nan"))
    elif kind == "inf":
        y.masked_fill_(pick, float("inf")).masked_fill_(negative, float("-inf"))
    elif kind == "denormal":
        tiny = u.mul_(0.9 * info.tiny).add_(0.01 * info.tiny)  # within [0.01, 0.91) x tiny: subnormal
        y.copy_(torch.where(pick, torch.where(negative, -tiny, tiny).to(y.dtype), y))
    elif kind == "negzero":
        y.masked_fill_(pick, -0.0)
    else:
        raise ValueError(f"unknown input transform {kind}")


def adversarial(inputs, kind, generator):
    """The inputs transformed in place (floating tensors only), a chunk at a time: nan, inf, denormal, negzero
    replace a random tenth (a hundredth for nan/inf) of the values; distribution draws magnitudes exp(N(0, 2)),
    extreme U(0, 1000), both with random signs. A transform that picked nothing picks the first value."""
    for x in inputs:
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()) or x.numel() == 0:
            continue
        info, state = torch.finfo(x.dtype), {"picked": False}
        for (y,) in flat_chunks(x):
            _transform_chunk(y, kind, generator, info, state)
        if kind not in ("distribution", "extreme") and not state["picked"]:
            x.reshape(-1)[:1].fill_({"nan": float("nan"), "inf": float("inf"), "negzero": -0.0}.get(kind, 0.5 * info.tiny))
    return inputs


def draw(problem, recipe, device):
    """The inputs a recipe names: {"kind": "trial", "seed", "rng"?} is KernelBench's draw (rng "host": its CPU
    generator, its exact values; "device": the device generator); {"kind": "case" or "timing", "seed",
    "transform"?, "tseed"?} draws on the device, then applies the transform with a generator seeded by tseed.
    With "rng_after", the global RNG is seeded with it once the inputs are drawn: the same inputs then meet
    another RNG state in the forward (the determinism class)."""
    set_seed(int(recipe["seed"]))
    rng = recipe.get("rng", "host") if recipe.get("kind") == "trial" else "device"
    inputs = problem.inputs(device, rng)
    if recipe.get("transform"):
        generator = torch.Generator(device=device).manual_seed(int(recipe["tseed"]))
        inputs = adversarial(inputs, recipe["transform"], generator)
    if "rng_after" in recipe:
        set_seed(int(recipe["rng_after"]))
    return inputs


def timing_recipe(base, k, fresh, rng="host"):
    """The recipe of timed call k: fresh inputs under base + k, or KernelBench's one fixed set (its seed). The
    judge derives it from the base it chose, never from the runner's word."""
    if not fresh:
        return {"kind": "trial", "seed": int(base), "rng": rng}
    return {"kind": "timing", "seed": (int(base) + 7919 * int(k)) % (2**63)}


def seeded_recipe(seed):
    """The recipe of a timed call whose seed the judge chose for it alone (rounds the judge drives)."""
    return {"kind": "timing", "seed": int(seed) % (2**63)}


class TimingInputs:
    """The inputs of timed calls. fresh (method robust): every call gets new inputs drawn on the device under
    base + k, in prepare() (outside the timed window): no two calls see the same contents, so a result cache keyed
    on a tensor's identity or contents never hits, and any call's inputs can be drawn again from its recipe to
    check its output. Otherwise KernelBench's one fixed set (its seed), for the kernelbench and cuda-agent
    methods."""

    def __init__(self, problem, device, base, fresh, rng="host", first=True):
        self.problem, self.device, self.base, self.fresh, self.rng = problem, device, int(base), fresh, rng
        self.calls = 0
        self.current = draw(problem, self.recipe(0), device) if first else None

    def recipe(self, k):
        return timing_recipe(self.base, k, self.fresh, self.rng)

    def prepare(self):
        if self.fresh:
            self.current = None  # the previous call's inputs go first: one set in memory at a time
            self.current = draw(self.problem, self.recipe(self.calls), self.device)
        self.calls += 1

    def prepare_seeded(self, seed):
        """The next call's inputs from a seed the judge sent for that call alone (the judge drives the round call by
        call): the candidate's process holds no seed of a call before the call is prepared."""
        self.current = None
        self.current = draw(self.problem, seeded_recipe(seed), self.device)
        self.calls += 1

    def drop(self):
        self.current = None

    def ensure(self):
        """Inputs for a call outside the timed loop (the trace pass): the last call's recipe drawn again."""
        if self.current is None:
            self.current = draw(self.problem, self.recipe(max(0, self.calls - 1)), self.device)
