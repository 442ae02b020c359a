"""CUDA-Agent-Ops-6K's parquet file (kj_sources.read_ops_table): rows selected by 1-based number in the order
asked, the `ops` column read from a list or from the text of one, optional columns carried, and every unreadable
file a source_error naming it (pyarrow missing, not parquet, no `code` column)."""
import sys

import pytest

import kj_sources
from kj_common import KjError

CODE = "import torch\nclass Model(torch.nn.Module):\n    pass\n"


def write(path, columns):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), str(path))
    return str(path)


def test_ops_are_read_from_lists_and_from_their_text():
    assert kj_sources._ops(["conv2d", None, b"relu"]) == ["conv2d", "relu"]
    assert kj_sources._ops('["conv2d", "relu"]') == ["conv2d", "relu"]  # JSON
    assert kj_sources._ops("['conv2d', 'relu']") == ["conv2d", "relu"]  # a Python literal
    assert kj_sources._ops(b"gelu") == ["gelu"]
    assert kj_sources._ops("  matmul ") == ["matmul"]
    assert kj_sources._ops("[not, a list") == ["[not, a list"]  # kept as one name, never an error
    assert kj_sources._ops(None) == [] and kj_sources._ops("") == []


def test_all_rows_with_their_optional_columns(tmp_path):
    path = write(tmp_path / "ops.parquet", {
        "code": [CODE, "second", b"third"], "ops": [["conv2d", "relu"], [], ["matmul"]],
        "name": ["a", None, "c"], "id": [10, 11, 12], "extra": [1, 2, 3]})
    table = kj_sources.read_ops_table(path, [])
    assert table["rows"] == 3 and table["columns"] == ["code", "ops", "name", "id", "extra"]
    assert table["selected"] == [
        {"index": 1, "code": CODE, "ops": ["conv2d", "relu"], "name": "a", "id": "10"},
        {"index": 2, "code": "second", "ops": [], "id": "11"},  # a missing name is left out
        {"index": 3, "code": "third", "ops": ["matmul"], "name": "c", "id": "12"},
    ]


def test_rows_are_selected_by_number_in_the_order_asked(tmp_path):
    path = write(tmp_path / "ops.parquet", {"code": ["one", "two", "three"], "ops": ['["a"]', "b", None]})
    table = kj_sources.read_ops_table(path, [3, 0, 1, 4])  # 0 and 4 are outside the file: skipped
    assert table["rows"] == 3
    assert [(r["index"], r["code"], r["ops"]) for r in table["selected"]] == [(3, "three", []), (1, "one", ["a"])]
    assert kj_sources.read_ops_table(path, [9])["selected"] == []


def test_a_file_without_ops_column_gives_empty_ops(tmp_path):
    path = write(tmp_path / "code_only.parquet", {"code": ["x = 1"]})
    assert kj_sources.read_ops_table(path, [])["selected"] == [{"index": 1, "code": "x = 1", "ops": []}]


def test_a_file_without_code_column_is_a_source_error(tmp_path):
    path = write(tmp_path / "other.parquet", {"prompt": ["p"], "ops": [["relu"]]})
    with pytest.raises(KjError) as caught:
        kj_sources.read_ops_table(path, [])
    assert caught.value.kind == "source_error"
    assert "no `code` column" in caught.value.message and "prompt, ops" in caught.value.message


def test_a_file_that_is_not_parquet_is_a_source_error(tmp_path):
    pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "ops.parquet"
    path.write_text("code,ops\nx,relu\n")
    with pytest.raises(KjError) as caught:
        kj_sources.read_ops_table(str(path), [])
    assert caught.value.kind == "source_error" and str(path) in caught.value.message
    assert "not a readable parquet file" in caught.value.message


def test_without_pyarrow_the_error_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # `import pyarrow.parquet` now fails
    with pytest.raises(KjError) as caught:
        kj_sources.read_ops_table(str(tmp_path / "ops.parquet"), [])
    assert caught.value.kind == "source_error" and "-m pip install pyarrow" in caught.value.message
