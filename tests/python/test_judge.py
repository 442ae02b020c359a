"""The judge (kj_judge): KernelBench's comparison and its reasons, the arena protocol (outputs cloned out, the
arena released, a released arena never read), and kj's own out-of-memory told apart from the candidate's."""
import json
import mmap
import os
import tempfile

import pytest
import torch

import kj_compare
import kj_judge as judge
from kj_common import KjError


def test_compare_reasons():
    ref = torch.rand(100)
    assert kj_compare.compare(ref, ref.clone(), 1e-4, 1e-4)["passed"]
    assert kj_compare.compare(ref, ref + 1.0, 1e-4, 1e-4)["reason"] == "tolerance"
    nan = kj_compare.compare(ref, torch.full_like(ref, float("nan")), 1e-4, 1e-4)
    assert nan["reason"] == "nonfinite" and "100 of them NaN or Inf" in nan["message"]
    assert "max abs error" not in nan["message"]  # no finite difference to speak of (it once said 0)
    assert kj_compare.compare(ref, ref.reshape(10, 10), 1e-4, 1e-4)["reason"] == "shape"
    assert kj_compare.compare(ref, ref.double(), 1e-4, 1e-4)["reason"] == "dtype"
    assert kj_compare.compare((ref, ref), ref, 1e-4, 1e-4)["reason"] == "structure"


def test_compare_agrees_with_torch_isclose():
    torch.manual_seed(0)
    ref = torch.randn(5000)
    out = ref + 2e-4 * torch.randn(5000)
    out[7] = float("nan")
    got = kj_compare.compare(ref, out, 1e-4, 1e-4, chunk=333)
    assert got["mismatches"] == int((~torch.isclose(ref, out, atol=1e-4, rtol=1e-4)).sum())


class FakeRunner:
    """The runner's side of the arena protocol: outputs written into a host arena file as bytes."""

    def __init__(self, tensor):
        self.tensor = tensor.contiguous()
        fd, self.path = tempfile.mkstemp()
        os.close(fd)
        self.released = 0

    def request(self, message):
        data = self.tensor.numpy().tobytes()
        with open(self.path, "r+b") as f:
            f.truncate(len(data))
            f.write(data)
        return json.dumps({"ok": True, "structure": "tensor", "arena_id": 1,
                           "outputs": [{"tensor": True, "dtype": "float32", "shape": list(self.tensor.shape),
                                        "strides": list(self.tensor.stride()), "offset": 0, "nbytes": len(data),
                                        "span_bytes": len(data)}],
                           "arena": {"id": 1, "kind": "file", "path": self.path, "bytes": len(data)}})

    def release(self):
        self.released += 1


def test_outputs_are_cloned_out_of_the_arena_then_released():
    runner = FakeRunner(torch.arange(6, dtype=torch.float32).reshape(2, 3))
    remote = judge.RemoteCandidate(runner.request, "cpu", runner.release)
    out, _ = remote.forward({"kind": "case", "seed": 1})
    assert runner.released == 1
    with open(runner.path, "r+b") as f:  # the runner writes its next outputs: the clone must not change
        f.write(b"\0" * 24)
    assert torch.equal(out, torch.arange(6, dtype=torch.float32).reshape(2, 3))


def test_a_released_arena_is_never_read():
    # The outputs' description is the runner's (the candidate's process) word: bytes in no arena kj holds are
    # its failure, not kj's (else a candidate could turn a failing case into kj's harness_error).
    remote = judge.RemoteCandidate(lambda m: json.dumps({"ok": True, "structure": "tensor", "outputs": [
        {"tensor": True, "dtype": "float32", "shape": [1], "strides": [1], "offset": 0, "nbytes": 4,
         "span_bytes": 4}]}), "cpu", lambda: None)
    with pytest.raises(KjError) as caught:
        remote.forward({"kind": "case", "seed": 1})
    assert caught.value.kind == "runtime_error"


def test_an_empty_output_needs_no_arena():
    remote = judge.RemoteCandidate(lambda m: json.dumps({"ok": True, "structure": "tensor", "outputs": [
        {"tensor": True, "dtype": "float32", "shape": [0, 3], "strides": [3, 1], "offset": 0, "nbytes": 0,
         "span_bytes": 0}]}), "cpu", lambda: None)
    out, _ = remote.forward({"kind": "case", "seed": 1})
    assert out.shape == (0, 3) and out.dtype == torch.float32
    lying = judge.RemoteCandidate(lambda m: json.dumps({"ok": True, "structure": "tensor", "outputs": [
        {"tensor": True, "dtype": "float32", "shape": [2], "strides": [1], "offset": 0, "nbytes": 0,
         "span_bytes": 0}]}), "cpu", lambda: None)
    with pytest.raises(KjError) as caught:
        lying.forward({"kind": "case", "seed": 1})
    assert caught.value.kind == "runtime_error"


def _arena_of(data):
    """A host arena file holding `data` (bytes) and its spec, as runner_link describes one."""
    fd, path = tempfile.mkstemp()
    os.write(fd, data)
    os.close(fd)
    return {"id": 1, "kind": "file", "path": path, "bytes": len(data)}


def test_an_output_is_laid_out_again_by_its_strides():
    # The runner copies an output's memory as it lies (here a transposed view and a column with gaps): the judge
    # lays it out by the strides it was given.
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    for view in (base.t(), base[:, 1]):
        data = base.numpy().tobytes()[view.storage_offset() * 4:]
        span = (1 + sum((d - 1) * st for d, st in zip(view.shape, view.stride()))) * 4
        meta = {"tensor": True, "dtype": "float32", "shape": list(view.shape), "strides": list(view.stride()),
                "offset": 0, "nbytes": view.numel() * 4, "span_bytes": span}
        remote = judge.RemoteCandidate(lambda m: json.dumps({"ok": True, "structure": "tensor", "outputs": [meta],
                                                             "arena": _arena_of(data[:span])}), "cpu", lambda: None)
        out, _ = remote.forward({"kind": "case", "seed": 1})
        assert torch.equal(out, view)


def test_a_layout_that_does_not_add_up_is_the_candidates_failure():
    # Strides that reach past the span would read outside what was copied: the runner's word, its failure.
    meta = {"tensor": True, "dtype": "float32", "shape": [4, 4], "strides": [4, 1], "offset": 0, "nbytes": 64,
            "span_bytes": 16}
    remote = judge.RemoteCandidate(lambda m: json.dumps({"ok": True, "structure": "tensor", "outputs": [meta],
                                                         "arena": _arena_of(bytes(64))}), "cpu", lambda: None)
    with pytest.raises(KjError) as caught:
        remote.forward({"kind": "case", "seed": 1})
    assert caught.value.kind == "runtime_error"


def test_a_sampled_output_is_compared_on_its_chunks():
    # A large timed output is snapshotted in chunks the runner chose after the call: the judge takes the same
    # elements of the reference (laid out in the candidate's order) and compares them.
    torch.manual_seed(0)
    reference = torch.randn(64, 1024)  # 256 KiB: four 64 KiB chunks
    chunks = [1, 3]
    candidate = reference.t().contiguous().t()  # the same values, stored column-major
    storage = candidate.t().reshape(-1)
    data = b"".join(storage[c * 16384:(c + 1) * 16384].numpy().tobytes() for c in chunks)
    arena = judge.arena_tensor(_arena_of(data), "cpu")
    meta = {"tensor": True, "dtype": "float32", "shape": [64, 1024], "strides": list(candidate.stride()),
            "offset": 0, "nbytes": 262144, "span_bytes": 262144, "chunk_bytes": 65536, "chunks": chunks}
    ref, out = judge._sampled_pair(arena, reference, meta, torch.float32)
    assert out.numel() == 2 * 16384 and kj_compare.compare(ref, out, 1e-6, 1e-6)["passed"]
    arena[:4] = 0  # one wrong element in a sampled chunk fails
    ref, out = judge._sampled_pair(arena, reference, meta, torch.float32)
    assert not kj_compare.compare(ref, out, 1e-6, 1e-6)["passed"]
    wrong = dict(meta, shape=[1024, 64], strides=[64, 1])
    ref, out = judge._sampled_pair(arena, reference, wrong, torch.float32)
    assert kj_compare.compare(ref, out, 1e-6, 1e-6)["reason"] == "shape"


def test_a_broadcast_output_far_larger_than_the_reference_is_never_laid_out():
    # A stride-0 view of one float describing 2**40 elements: 4 bytes copied, 4 TiB if the judge laid it out.
    memory = judge.Memory("cpu")
    memory.learn([torch.empty(10)], torch.empty(10))
    meta = {"tensor": True, "dtype": "float32", "shape": [1 << 40], "strides": [0], "offset": 0,
            "nbytes": 4 << 40, "span_bytes": 4}
    remote = judge.RemoteCandidate(lambda m: json.dumps({"ok": True, "structure": "tensor", "outputs": [meta],
                                                         "arena": _arena_of(bytes(4))}), "cpu", lambda: None, memory)
    out, _ = remote.forward({"kind": "case", "seed": 1})
    assert out.device.type == "meta" and kj_compare.compare(torch.zeros(10), out, 1e-4, 1e-4)["reason"] == "shape"


def test_a_namedtuple_reference_is_compared_as_a_tuple():
    from collections import namedtuple

    pair = namedtuple("pair", "a b")
    session = judge.Session("cpu")
    snap = {"structure": "tuple", "outputs": [{"tensor": False, "type": "int"}, {"tensor": False, "type": "int"}]}
    ref, out = session._snapshot_pair(None, pair(torch.zeros(2), torch.ones(2)), snap)
    assert isinstance(ref, tuple) and not kj_compare.compare(ref, out, 1e-4, 1e-4)["passed"]


def test_a_snapshot_slot_fits_the_reference_outputs_twice_up_to_the_cap():
    memory = judge.Memory("cpu")
    memory.learn([torch.empty(10)], torch.empty(1 << 20))  # 4 MiB of outputs
    assert memory.snapshot_bytes() >= 8 << 20
    memory.learn([torch.empty(10)], torch.empty(1 << 26))  # 256 MiB: sampled, the slot is capped
    assert memory.snapshot_bytes() == judge.SNAPSHOT_MAX


def test_a_runner_failure_carries_its_reason():
    remote = judge.RemoteCandidate(lambda m: json.dumps({"ok": False, "kind": "runtime_error",
                                                         "reason": "out_of_memory", "error": "big"}), "cpu")
    with pytest.raises(judge.RemoteError) as caught:
        remote.forward({"kind": "case", "seed": 1})
    assert caught.value.reason == "out_of_memory"


def test_kj_out_of_memory_is_a_harness_error_after_one_retry(monkeypatch):
    memory = judge.Memory("cpu")
    calls = []

    def work():
        calls.append(1)
        raise MemoryError("no room")
    with pytest.raises(KjError) as caught:
        judge.guarded(memory, "comparing", work)
    assert len(calls) == 2 and caught.value.kind == "harness_error" and caught.value.reason == "out_of_memory"
    monkeypatch.setenv("KJ_TEST_FAULT", "compare")
    with pytest.raises(KjError):
        judge.guarded(memory, "comparing", lambda: 1, fault="compare")
    assert judge.guarded(memory, "comparing", lambda: 1, fault="other") == 1


def test_the_budget_follows_the_memory_model():
    memory = judge.Memory("cpu")
    memory.learn([torch.empty(1 << 20)], torch.empty(1 << 18))
    assert memory.budget() == int(1.25 * ((4 << 20) + 2 * (1 << 20))) + (1 << 30)


def test_relative_error_near_zero_does_not_overflow():
    ref = torch.tensor([0.0, 1.0])
    out = torch.tensor([1e-3, 1.0])
    got = kj_compare.compare(ref, out, 1e-4, 1e-4)
    assert got["max_rel_err"] > 1e30 and got["max_rel_err"] != float("inf")


def test_json_for_cpp_has_no_nan_or_infinity():
    from kj_common import json_text

    text = json_text({"a": float("inf"), "b": [float("nan"), -float("inf")], "c": 1.5})
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text)["b"][0] is None


def test_between_jobs_leaves_a_fresh_judge(monkeypatch):
    """A warm judge's next evaluation starts as a fresh judge's would, whatever a problem module changed."""
    import sys
    import types

    threads, dtype, grad = torch.get_num_threads(), torch.get_default_dtype(), torch.is_grad_enabled()
    flags = judge.backend_flags()
    try:
        os.environ["KJ_PROBLEM_SET_THIS"] = "1"
        sys.modules["kj_problem"] = types.ModuleType("kj_problem")
        torch.set_num_threads(1)
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(not grad)
        torch.backends.cudnn.benchmark = not flags["backends.cudnn.benchmark"]
        torch.set_default_device("cpu")
        judge.between_jobs()
        assert "KJ_PROBLEM_SET_THIS" not in os.environ
        assert "kj_problem" not in sys.modules
        assert torch.get_num_threads() == judge._INITIAL_THREADS
        assert torch.get_default_dtype() == dtype
        assert torch.is_grad_enabled() == judge._INITIAL_GRAD
        assert judge.backend_flags() == judge._INITIAL_FLAGS
    finally:
        os.environ.pop("KJ_PROBLEM_SET_THIS", None)
        torch.set_num_threads(threads)
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)
        judge.set_backend_flags(flags)


def test_between_jobs_imports_no_inductor():
    """Between jobs the judge imports nothing heavy (torch.use_deterministic_algorithms imports torch._inductor:
    Dynamo, sympy, seconds), and still puts back what a problem module changed. In a fresh interpreter."""
    import subprocess
    import sys

    code = ("import sys, torch, kj_judge; kj_judge.between_jobs(); "
            "print('torch._inductor' in sys.modules, torch.are_deterministic_algorithms_enabled()); "
            # a problem module that turned the flags on, and one that replaced torch's getter to hide it
            "torch.use_deterministic_algorithms(True, warn_only=True); "
            "torch.are_deterministic_algorithms_enabled = lambda: False; kj_judge.between_jobs(); "
            "print(torch._C._get_deterministic_algorithms(), "
            "torch.is_deterministic_algorithms_warn_only_enabled(), "
            "sys.modules['torch._inductor.config'].deterministic); "
            # Inductor loaded, the flags as they were: only Inductor's own flag moved
            "sys.modules['torch._inductor.config'].deterministic = True; kj_judge.between_jobs(); "
            "print(sys.modules['torch._inductor.config'].deterministic)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "False", "False", "False", "False"]


def test_make_room_gives_back_before_kj_is_blamed():
    """kj's own out-of-memory first gives back what kj holds beside the judge (the next job's runner)."""
    memory = judge.Memory("cpu")
    calls = []
    memory.make_room = lambda: calls.append(1)
    attempts = []

    def work():
        attempts.append(1)
        if len(attempts) == 1:
            raise torch.OutOfMemoryError("CUDA out of memory (test)")
        return "done"

    assert judge.guarded(memory, "a comparison", work) == "done"
    assert calls == [1]
    memory.release()  # an ordinary release keeps the spare
    assert calls == [1]


def test_a_checked_call_allows_the_judge_own_draw_before_the_candidate_clock_runs():
    # What the runner's draw may take off the candidate's clock is the judge's bound, asked before the call,
    # never a number from the candidate's process.
    got, asked = [], []
    remote = judge.RemoteCandidate(lambda m: json.dumps({"ok": True, "structure": "tensor", "outputs": [
        {"tensor": True, "dtype": "float32", "shape": [0], "strides": [1], "offset": 0, "nbytes": 0,
         "span_bytes": 0}], "draw_ms": 5000.0}), "cpu", lambda: None, allow=got.append,
        draw_cap=lambda sizes: asked.append(sizes) or 7.0)
    remote.forward({"kind": "trial", "seed": 1}, sizes={"n": 3})
    assert got == [7.0] and asked == [{"n": 3}]


def test_the_reference_failing_while_timed_is_the_problem_error_and_its_out_of_memory_kj_own():
    memory = judge.Memory("cpu")
    got = judge.timed_failure(memory, "Model.forward", ValueError("bad shape"))
    assert got.kind == "problem_error" and "while kj timed the reference" in got.message and "bad shape" in got.message
    got = judge.timed_failure(memory, "Model.forward", RuntimeError("CUBLAS_STATUS_ALLOC_FAILED"))
    assert got.kind == "harness_error" and got.reason == "out_of_memory" and "twice" not in got.message
    own = KjError("runtime_error", "kept")
    assert judge.timed_failure(memory, "Model.forward", own) is own


def test_a_timed_reference_call_that_raises_is_the_problem_error():
    class Failing(torch.nn.Module):
        def forward(self, x):
            raise ValueError("the problem's own bug")

    session = judge.Session("cpu")
    session.model = Failing()

    class Inputs:
        current = [torch.zeros(2)]

    session.timing = Inputs()
    with pytest.raises(KjError) as caught:
        session.call_reference()
    assert caught.value.kind == "problem_error" and "the problem's own bug" in caught.value.message


def test_building_the_reference_out_of_memory_is_kj_own_after_one_retry():
    session = judge.Session("cpu")
    attempts = []

    def construct(problem, seed):
        attempts.append(seed)
        raise RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED")

    session.construct_reference = construct
    with pytest.raises(KjError) as caught:
        session.build_reference(7)
    assert attempts == [7, 7] and caught.value.kind == "harness_error" and caught.value.reason == "out_of_memory"


def test_the_problem_is_blamed_only_when_it_fails_alone_in_the_sandbox_asked_once_per_size():
    asked = []

    def control(message):
        asked.append(json.loads(message))
        return json.dumps({"ok": False, "kind": "problem_error",
                           "error": "the problem fails in kj's sandbox too, in a process no candidate ran in: "
                                    "no such file: ~/data.pt"})

    remote = judge.RemoteCandidate(lambda m: "{}", "cpu", control=control)
    exc = judge.RemoteError("problem_error", "said by the runner")
    with pytest.raises(KjError) as caught:
        remote.problem_alone({"kind": "trial", "seed": 3}, None, exc)
    assert caught.value.kind == "problem_error" and "no candidate ran in" in caught.value.message
    assert "~/data.pt" in caught.value.message and asked[0]["recipe"] == {"kind": "trial", "seed": 3}
    with pytest.raises(KjError):
        remote.problem_alone({"kind": "case", "seed": 4}, {}, exc)
    assert len(asked) == 1  # one control per size: a lying candidate cannot make kj start one per case

    works = judge.RemoteCandidate(lambda m: "{}", "cpu", control=lambda m: json.dumps({"ok": True}))
    assert works.problem_alone({"kind": "trial", "seed": 3}, None, exc) is None  # the candidate's failure
    assert judge.RemoteCandidate(lambda m: "{}", "cpu").problem_alone({}, None, exc) is None  # no control


@pytest.mark.parametrize("forward", [
    lambda: torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Linear(30, 5))(torch.rand(2, 3, 32, 32)),
    lambda: torch.bmm(torch.rand(3, 4, 5), torch.rand(3, 5, 6)) + 1,
    lambda: torch.nn.functional.linear(torch.rand(64, 128), torch.rand(32, 128), torch.rand(32)),
])
def test_the_flop_count_is_torchs_own(forward):
    from torch.utils.flop_counter import FlopCounterMode

    ours, torchs = judge.FlopCount(), FlopCounterMode(display=False)
    with ours, torch.no_grad():
        forward()
    with torchs, torch.no_grad():
        forward()
    assert ours.flops == torchs.get_total_flops() > 0
