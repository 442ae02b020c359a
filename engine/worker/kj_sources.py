"""Problem sources that need Python to read: CUDA-Agent-Ops-6K's parquet file.

Each row of that file is one problem: column `code` holds a problem file in KernelBench format (`Model`,
`get_inputs`, `get_init_inputs`), column `ops` the operators it composes. pyarrow is imported here only, when such
a file is read, so a Python without it runs every other job.
"""
import ast
import json
import sys

from kj_common import KjError


def _parquet(path):
    try:
        import pyarrow.parquet
    except ImportError as exc:
        python = sys.executable or "python3"
        raise KjError("source_error", f"reading {path} needs pyarrow in the embedded Python ({python}), e.g. "
                      f"`{python} -m pip install pyarrow` ({type(exc).__name__}: {exc})") from None
    return pyarrow.parquet


def _text(value):
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _ops(value):
    """The operators of a row as a list of strings: a list column, or a string holding a list literal or one name."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [_text(x) for x in value if x is not None]
    text = _text(value).strip()
    if text.startswith("["):
        for parse in (json.loads, ast.literal_eval):
            try:
                parsed = parse(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(parsed, (list, tuple)):
                return [_text(x) for x in parsed if x is not None]
    return [text] if text else []


def read_ops_table(path, rows):
    """The selected rows (1-based numbers; empty: all) of a CUDA-Agent-Ops-6K parquet file.

    Returns {"rows": row count, "columns": names, "selected": [{"index", "code", "ops", "name"?, "id"?}, ...]}.
    Raises KjError("source_error") naming the file when pyarrow is missing, the file is not parquet or it has no
    `code` column.
    """
    pq = _parquet(path)
    try:
        parquet = pq.ParquetFile(path)
        columns = list(parquet.schema_arrow.names)
    except Exception as exc:
        raise KjError("source_error", f"{path} is not a readable parquet file ({type(exc).__name__}: {exc})") from None
    if "code" not in columns:
        raise KjError("source_error", f"{path} has no `code` column (CUDA-Agent-Ops-6K's problem files); its "
                      f"columns are: {', '.join(columns) if columns else 'none'}")
    wanted = [c for c in ("code", "ops", "name", "id") if c in columns]
    try:
        table = parquet.read(columns=wanted)
    except Exception as exc:
        raise KjError("source_error", f"cannot read columns {', '.join(wanted)} of {path} "
                      f"({type(exc).__name__}: {exc})") from None
    total = table.num_rows
    indices = [r - 1 for r in rows if 1 <= r <= total] if rows else list(range(total))
    if rows:
        table = table.take(indices) if indices else table.slice(0, 0)
    values = {c: table.column(c).to_pylist() for c in wanted}
    selected = []
    for k, index in enumerate(indices):
        row = {"index": index + 1, "code": _text(values["code"][k]),
               "ops": _ops(values["ops"][k]) if "ops" in values else []}
        for optional in ("name", "id"):
            if optional in values and values[optional][k] is not None:
                row[optional] = _text(values[optional][k])
        selected.append(row)
    return {"rows": total, "columns": columns, "selected": selected}
