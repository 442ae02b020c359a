"""The worker's Python modules are embedded in `kj`; the tests import them from engine/worker directly."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "engine", "worker"))
