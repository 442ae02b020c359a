"""The worker's Python modules are embedded in `kj`; the tests import them from harness/worker directly."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness", "worker"))
