"""ctest's entry to the worker's Python unit tests: pytest on this folder; exit 77 (skipped) without pytest."""
import os
import sys

try:
    import pytest
except ImportError:
    print("kj-test-skipped: pytest is not installed in this Python")
    sys.exit(77)

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__))]))
