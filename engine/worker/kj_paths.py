"""The folders the embedded interpreter and torch are loaded from, found without importing torch: the worker asks
for them first, to start the candidate's runner (whose sandbox exposes them read-only) while the judge is still
importing torch itself."""
import importlib.util
import os
import sys


def sandbox_paths():
    """Python's prefixes, torch's site folder and the sys.path entries that exist: what a sandbox must expose
    read-only for the embedded interpreter to start and import torch."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    torch_spec = importlib.util.find_spec("torch")
    if torch_spec is not None and torch_spec.origin:
        paths.add(os.path.dirname(os.path.dirname(torch_spec.origin)))
    paths.update(p for p in sys.path if p and os.path.isabs(p))
    return sorted(p for p in paths if os.path.isdir(p))
