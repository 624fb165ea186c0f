"""The one place a value becomes SQL text: :func:`identifier` and :func:`literal`.

Every name or value calsim puts into the text of a DuckDB statement goes
through one of these two: table, view, type and column names, file paths,
scenario names, the ledger's vocabulary (states, reasons) and computed
numbers. What changes per call is bound as a parameter (``?``, ``$1``)
wherever DuckDB takes one; what is written out in a statement's own text
(``FROM scenarios``, ``state = 'done'``) is SQL, not a value, and is left as
written. Like duckdb-python's one helper that quotes identifiers: no raw
f-string names.

>>> identifier('a"b'), literal("it's"), literal(0.25)
('"a""b"', "'it''s'", '0.25')
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["identifier", "literal", "literals"]


def identifier(name: str) -> str:
    """``name`` as a quoted SQL identifier (a double quote inside doubled), whatever it holds.

    >>> identifier("occ_1")
    '"occ_1"'
    """
    if not isinstance(name, str):
        raise TypeError(f"identifier: expected text, got {type(name).__name__}")
    return '"' + name.replace('"', '""') + '"'


def literal(value: str | int | float) -> str:
    """``value`` as a SQL literal: text quoted (a quote inside doubled), a number as Python writes it.

    >>> literal("/tmp/a'b.parquet"), literal(3)
    ("'/tmp/a''b.parquet'", '3')
    """
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"literal: expected text or a number, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"literal: expected a finite number, got {value!r}")
    return repr(value)


def literals(values: Iterable[str | int | float]) -> str:
    """``values`` as a comma-separated list of literals (for ``IN (...)`` and ``ENUM (...)``).

    >>> literals(("dst_gap", "merged"))
    "'dst_gap', 'merged'"
    """
    return ", ".join(literal(v) for v in values)
