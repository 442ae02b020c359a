"""kj_paths: the runner's sandbox paths, found before the judge imports torch."""
import os
import subprocess
import sys

import kj_paths

WORKER = os.path.join(os.path.dirname(__file__), "..", "..", "engine", "worker")


def test_sandbox_paths_hold_python_and_torch():
    import torch

    paths = kj_paths.sandbox_paths()
    assert sys.prefix in paths
    assert os.path.dirname(os.path.dirname(torch.__file__)) in paths
    assert paths == sorted(paths) and all(os.path.isabs(p) and os.path.isdir(p) for p in paths)


def test_sandbox_paths_do_not_import_torch():
    code = "import sys, kj_paths; kj_paths.sandbox_paths(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=WORKER, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
