"""Where a candidate's event time differs from the reference's when both run the same model (issue 41's identity
check): one KernelBench problem timed as kj times it (flush and sync, start event, call, device sync, end event)
in one process, and in a child process driven sample by sample over a socket, as kj's judge drives its runner.

usage: python3 launch_gap.py PROBLEM.py [SAMPLES]   (prints a table: mode, median ms, ratio to the loop)
"""
import importlib.util
import os
import subprocess
import socket
import statistics
import sys
import time

import torch

FLUSH_BYTES = 150 * 1024 * 1024


def load(path):
    spec = importlib.util.spec_from_file_location("problem", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(42)
    model = mod.Model(*mod.get_init_inputs()).cuda().eval()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    return model, inputs


class Sampler:
    def __init__(self, path):
        self.model, self.inputs = load(path)
        self.flush_buf = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        self.start, self.end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(5):
            self.flush()
            self.sample()

    def flush(self):
        self.flush_buf.fill_(1)
        torch.cuda.current_stream().synchronize()

    def sample(self):
        self.start.record()
        with torch.no_grad():
            self.model(*self.inputs)
        torch.cuda.synchronize()
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end)


def child(path, sock, spin):
    s = Sampler(path)
    sock.sendall(b"r")
    if spin:
        sock.setblocking(False)
    while True:
        while True:
            try:
                op = sock.recv(1)
                break
            except BlockingIOError:
                continue
        if op in (b"", b"q"):
            return
        if op in (b"p", b"f"):
            s.flush()
            reply = b"ok".ljust(16)
        if op != b"p":
            reply = f"{s.sample():.6f}".ljust(16).encode()
        while True:
            try:
                sock.sendall(reply)
                break
            except BlockingIOError:
                continue


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        data += sock.recv(n - len(data))
    return data


def driven(path, samples, spin, flush_apart):
    parent, kid = socket.socketpair()
    proc = subprocess.Popen([sys.executable, __file__, "--child", path, str(kid.fileno()), "1" if spin else "0"],
                            pass_fds=(kid.fileno(),))
    kid.close()
    recv_exact(parent, 1)
    out = []
    for _ in range(samples):
        if flush_apart:
            parent.sendall(b"p")
            recv_exact(parent, 16)
            parent.sendall(b"g")
        else:
            parent.sendall(b"f")  # the child flushes and samples in one request
        out.append(float(recv_exact(parent, 16)))
    parent.sendall(b"q")
    proc.wait()
    return out


def main():
    if sys.argv[1] == "--child":
        child(sys.argv[2], socket.socket(fileno=int(sys.argv[3])), sys.argv[4] == "1")
        return
    path = sys.argv[1]
    samples = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    rows = []
    # a child that flushes and samples in one request (op "f") must flush: the "g" op does not
    s = Sampler(path)
    loop = []
    for _ in range(samples):
        s.flush()
        loop.append(s.sample())
    rows.append(("one process, loop", loop))
    loop_sleep = []
    for _ in range(samples):
        s.flush()
        time.sleep(0.0002)
        loop_sleep.append(s.sample())
    rows.append(("one process, 0.2 ms sleep after flush", loop_sleep))
    del s
    torch.cuda.empty_cache()
    for spin in (False, True):
        for apart in (True, False):
            rows.append((f"child, {'spin' if spin else 'blocking'} recv, flush {'in its own request' if apart else 'with the call'}",
                         driven(path, samples, spin, apart)))
    base = statistics.median(rows[0][1])
    print(f"{'mode':55s} {'median ms':>10s} {'ratio':>7s}")
    for name, vals in rows:
        m = statistics.median(vals)
        print(f"{name:55s} {m:10.4f} {m / base:7.3f}")


if __name__ == "__main__":
    main()
