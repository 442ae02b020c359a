"""The judge's memory model (docs/design.md, "Memory model"): the per-case budget of kj's own device memory, the
reference's measured workspace, the peaks an evaluation reports, and `guarded`, which makes an out-of-memory in
kj's own work kj's failure (harness_error), never the candidate's, unless the candidate's process starved it.
"""
import os

import torch

from kj_common import KjError, first_line, format_exception, is_out_of_memory, tensor_bytes, outputs_of

GIB = 1 << 30
SNAPSHOT_MAX = 64 << 20  # bytes of one timed call's snapshot; larger outputs are checked on sampled chunks


# ---- memory ----

class Memory:
    """The judge's view of device memory: the per-case budget and the numbers an out-of-memory message names."""

    def __init__(self, device):
        self.device = torch.device(device)
        self.input_bytes = self.output_bytes = 0
        self.arena_bytes = 0  # the arena the runner writes into, allocated by C++ outside torch
        self.arena_peak = 0
        self.parameter_bytes = 0  # the reference model's parameters and buffers
        self.workspace_bytes = 0  # W: the most the reference allocated inside its own forward (CUDA, measured)
        self.reserved_peak = 0  # torch's reserved peak before the last reset (reference() resets it to measure W)
        self.make_room = None  # frees what kj holds beside the judge (the next job's runner, started ahead)

    def learn(self, inputs, outputs):
        """The sizes of one input set and of the reference's outputs (the largest seen so far)."""
        self.input_bytes = max(self.input_bytes, tensor_bytes(inputs))
        self.output_bytes = max(self.output_bytes, tensor_bytes(outputs))
        pieces = outputs_of(outputs) or []
        self.output_pieces = max(getattr(self, "output_pieces", 1), len(pieces))

    def snapshot_bytes(self):
        """One slot of the arena for a timed call's outputs: room for them twice over (strides that leave gaps)
        and their alignment, at least 1 MiB and at most SNAPSHOT_MAX (larger outputs are sampled in chunks)."""
        pieces = getattr(self, "output_pieces", 1)
        # the candidate's own outputs may span more than they hold (a slice of a padded buffer): as it answered
        wanted = max(2 * self.output_bytes, getattr(self, "candidate_span", 0)) + 256 * (pieces + 1) + 4096
        return min(SNAPSHOT_MAX, max(1 << 20, (wanted + 65535) // 65536 * 65536))

    def budget(self):
        """kj's own share of the device per case (docs/design.md, "Memory model"): 1.25 (I + R + C) + 1 GiB, and
        the reference's own workspace W on top, as measured (0 on the CPU)."""
        return int(1.25 * (self.input_bytes + 2 * self.output_bytes)) + GIB + self.workspace_bytes

    def measure_workspace(self, run):
        """run() (the reference's forward) with its workspace measured: the peak it allocated beyond what was
        allocated before and what it returned. The reserved peak so far is kept (peaks() reports both)."""
        if self.device.type != "cuda":
            return run()
        self.reserved_peak = max(self.reserved_peak, torch.cuda.max_memory_reserved(self.device))
        before = torch.cuda.memory_allocated(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)
        out = run()
        kept = torch.cuda.memory_allocated(self.device) - before
        self.workspace_bytes = max(self.workspace_bytes, torch.cuda.max_memory_allocated(self.device) - before - kept)
        return out

    def held(self):
        if self.device.type != "cuda":
            return self.arena_bytes
        return torch.cuda.memory_reserved(self.device) + self.arena_bytes

    def others(self):
        """Device bytes held outside the judge (the runner's process, whatever it left behind); 0 on the CPU."""
        if self.device.type != "cuda":
            return 0
        free, total = torch.cuda.mem_get_info(self.device)
        return max(0, total - free - self.held())

    def out_of_memory(self, what, first, retried=True):
        """kj's own work ran out of memory: kj's failure (harness_error), unless the candidate's process holds
        more than a process between calls needs (a CUDA context, its model, torch's slack): then it starved kj,
        and that is its runtime_error."""
        others = self.others()
        allowance = GIB + GIB // 2 + 2 * self.parameter_bytes
        if others > allowance:
            return KjError("runtime_error", f"{what} ran out of memory because the candidate's process holds "
                           f"{others} bytes of device memory between its calls (a process needs about "
                           f"{allowance}); {self.describe()}: {first}", reason="out_of_memory")
        again = ", twice" if retried else ""
        return KjError("harness_error", f"{what} ran out of memory in kj's own code{again} ({first}); "
                       f"{self.describe()}", reason="out_of_memory")

    def describe(self):
        text = f"kj's judge holds {self.held()} bytes (its budget {self.budget()})"
        if self.device.type == "cuda":
            free, total = torch.cuda.mem_get_info(self.device)
            text += f"; the device has {free} of {total} bytes free"
        return text

    def release(self, make_room=False):
        """Returns torch's cached device memory; `make_room` (kj's own work ran out of memory) first gives back
        what kj holds beside the judge, before anything is blamed."""
        if make_room and self.make_room is not None:
            self.make_room()
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    def peaks(self):
        """Peak bytes of this process: device (torch's reserved memory plus the largest arena) and host RSS."""
        out = {"judge_rss_bytes": _peak_rss()}
        if self.device.type == "cuda":
            reserved = max(self.reserved_peak, torch.cuda.max_memory_reserved(self.device))
            out["judge_device_bytes"] = reserved + self.arena_peak
        return out


def _proc_bytes(path, key):
    """A `key:  N kB` line of a /proc file, in bytes (0 when it cannot be read)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _peak_rss():
    return _proc_bytes("/proc/self/status", "VmHWM")


def host_available():
    """The host memory the kernel says is available (the float64 reference's fallback, kj_verify)."""
    return _proc_bytes("/proc/meminfo", "MemAvailable")


def timed_failure(memory, what, exc):
    """What a failure in the reference's timed loop is (the reference alone runs in the judge's process: never
    the candidate's own): out of memory is kj's, or the candidate's when its process holds the device (no retry
    inside a timed loop); anything else is the problem's own (its forward or get_inputs())."""
    if isinstance(exc, KjError):
        return exc
    if is_out_of_memory(exc):
        return memory.out_of_memory(f"timing the reference ({what})", first_line(exc), retried=False)
    return KjError("problem_error", f"the problem's {what} raised while kj timed the reference:\n"
                   f"{format_exception(exc)}")


def _injected(fault):
    """Tests force kj's own out-of-memory paths: KJ_TEST_FAULT=compare makes every comparison run out."""
    if fault and fault in os.environ.get("KJ_TEST_FAULT", "").split(","):
        raise MemoryError(f"KJ_TEST_FAULT={fault}")


def guarded(memory, what, work, retry=None, fault=""):
    """Runs kj's own `work` (drawing inputs, the reference, a comparison); out of memory there is kj's failure,
    never the candidate's: free, run `retry` (smaller chunks) once, else raise harness_error with the numbers.
    `fault` names the KJ_TEST_FAULT item that forces it (tests)."""
    try:
        _injected(fault)
        return work()
    except KjError:
        raise
    except Exception as exc:
        if not is_out_of_memory(exc):
            raise
        first = first_line(exc)
    memory.release(make_room=True)
    try:
        _injected(fault)
        return (retry or work)()
    except KjError:
        raise
    except Exception as exc:
        if not is_out_of_memory(exc):
            raise
        raise memory.out_of_memory(what, first) from None
