"""Tables of runs: CSV and Parquet files (or a polars DataFrame) with the columns :mod:`.._history_table` reads."""

from __future__ import annotations

from typing import Callable

import polars as pl

from .._history_input import Source
from .._history_table import load_table, table
from ._rows import Caps, HistoryReader

__all__ = ["CSV", "PARQUET"]


def _reader(kind: str) -> Callable[[Source, Caps], pl.DataFrame]:
    def read(src: Source, caps: Caps) -> pl.DataFrame:
        frame, place = load_table(src, kind, caps.rows, caps.bytes)
        return table(frame, src.label, place)
    return read


PARQUET = HistoryReader("parquet", lambda head, text: head[:4] == b"PAR1", _reader("parquet"), takes_frame=True)
CSV = HistoryReader("csv", lambda head, text: True, _reader("csv"), takes_frame=True)  # (whatever is left)
