"""Plain fixed-width tables for terminals and CI logs (the CLI's and the demo's output).

>>> import datetime as dt, polars as pl
>>> print(table(pl.DataFrame({"scenario": ["a"], "lateness_p95_s": [222900.0], "gap": [dt.timedelta(days=3.5)]})))
scenario  lateness_p95  gap
a         2d 13h        3d 12h
"""

from __future__ import annotations

import re

import polars as pl

__all__ = ["table", "span", "durations_as_seconds"]

_SPANS = re.compile(r"(lateness|wait|gap)\w*_s$")  # elapsed spans in seconds (not offsets or signed shifts)


def table(frame: pl.DataFrame) -> str:
    """A plain fixed-width table (no box drawing), readable in a terminal and in CI logs.

    Spans of time — polars ``Duration`` columns, and float seconds named
    ``*lateness*_s``, ``*wait*_s``, ``*gap*_s`` (shown without ``_s``) — are
    printed in the reader's units (``3d 12h``, ``42min``), never as
    ``38035.71428571428`` seconds; csv/json keep numbers
    (:func:`durations_as_seconds`).
    """
    frame = frame.select(
        (pl.col(c).dt.total_microseconds() / 1e6).map_elements(span, return_dtype=pl.String, skip_nulls=True)
        if isinstance(frame.schema[c], pl.Duration) else
        pl.col(c).map_elements(span, return_dtype=pl.String, skip_nulls=True).alias(c[:-2])
        if _SPANS.search(c) and frame.schema[c].is_numeric() else pl.col(c) for c in frame.columns)
    cols = frame.columns
    rows = [[_cell(v) for v in row] for row in frame.iter_rows()]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def durations_as_seconds(frame: pl.DataFrame) -> pl.DataFrame:
    """Each ``Duration`` column as float seconds named ``<name>_s``: what csv and json carry.

    Seconds, not ISO 8601: polars cannot write a Duration to CSV (pola-rs/polars#19971),
    a spreadsheet or ``jq`` computes with a number, and the ``_s`` columns of
    ``calsim compare`` are seconds already.

    >>> import datetime as dt
    >>> durations_as_seconds(pl.DataFrame({"gap": [dt.timedelta(hours=1, microseconds=5)]})).row(0)
    (3600.000005,)
    """
    return frame.select(pl.col(c).dt.total_microseconds().map_batches(_seconds, return_dtype=pl.Float64)
                        .alias(f"{c}_s") if isinstance(t, pl.Duration) else pl.col(c)
                        for c, t in frame.schema.items())


def _seconds(us: pl.Series) -> pl.Series:
    """µs / 1e6 correctly rounded, so ``lateness_s`` comes back bit for bit (polars divides by a
    literal through its reciprocal: one value in three differs in the last bit)."""
    return pl.Series(us.name, us.cast(pl.Float64).to_numpy() / 1e6, nan_to_null=True)


def span(seconds: float) -> str:
    """``"2d 13h"``, ``"42min"``, ``"1.5s"``, ``"0s"``: the two largest units of a span of seconds."""
    if seconds < 60:
        return f"{seconds:.3g}s" if seconds else "0s"
    parts, rest = [], int(round(seconds))
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1)):
        q, rest = divmod(rest, size)
        if q:
            parts.append(f"{q}{unit}")
    return " ".join(parts[:2])


def _cell(v: object) -> str:
    import datetime as dt

    if v is None:
        return "-"
    if isinstance(v, dt.datetime):
        s = v.replace(tzinfo=None).isoformat(timespec="seconds")
        return s + "Z" if v.tzinfo is not None else s
    if isinstance(v, list):
        return ",".join(str(x) for x in v) or "-"
    return str(v)
