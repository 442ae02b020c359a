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
                                        "offset": 0, "nbytes": len(data)}],
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
        {"tensor": True, "dtype": "float32", "shape": [1], "offset": 0, "nbytes": 4}]}), "cpu", lambda: None)
    with pytest.raises(KjError) as caught:
        remote.forward({"kind": "case", "seed": 1})
    assert caught.value.kind == "runtime_error"


def test_an_empty_output_needs_no_arena():
    remote = judge.RemoteCandidate(lambda m: json.dumps({"ok": True, "structure": "tensor", "outputs": [
        {"tensor": True, "dtype": "float32", "shape": [0, 3], "offset": 0, "nbytes": 0}]}), "cpu", lambda: None)
    out, _ = remote.forward({"kind": "case", "seed": 1})
    assert out.shape == (0, 3) and out.dtype == torch.float32
    lying = judge.RemoteCandidate(lambda m: json.dumps({"ok": True, "structure": "tensor", "outputs": [
        {"tensor": True, "dtype": "float32", "shape": [2], "offset": 0, "nbytes": 0}]}), "cpu", lambda: None)
    with pytest.raises(KjError) as caught:
        lying.forward({"kind": "case", "seed": 1})
    assert caught.value.kind == "runtime_error"


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
