"""What every history reader shares: its declaration (:class:`HistoryReader`), the caps it reads under, and the
rows it makes (one per run, :data:`~calsim.importers._history_table.HISTORY_SCHEMA`)."""

from __future__ import annotations

import datetime as dt
from typing import Callable, NamedTuple

import polars as pl

from ...errors import InputError, shown
from .._history_table import HISTORY_SCHEMA, check_ids

__all__ = ["HistoryReader", "Caps", "frame", "cut", "instant", "item_rows", "EPOCH"]

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


class Caps(NamedTuple):
    """What a reader may read: rows (lines, items or runs), bytes of file, bytes of a document parsed whole."""

    rows: int
    bytes: int
    doc: int


class HistoryReader(NamedTuple):
    """One history format, declared by its module (``READER``) and registered in :data:`.READERS`.

    ``kind`` is its name (``read_history(kind=...)``, ``calsim reconcile --kind``); ``detect(head, text)``
    says whether the first MiB (bytes, and as text) is this format (the registry asks in order, the last
    reader taking whatever is left); ``read(src, caps, **options)`` returns the rows; ``options`` are the
    keyword arguments of :func:`.read_history` it reads (the others are not passed to it); ``takes_frame``:
    it also reads a polars DataFrame."""

    kind: str
    detect: Callable[[bytes, str], bool]
    read: Callable[..., pl.DataFrame]
    options: tuple[str, ...] = ()
    takes_frame: bool = False


def frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    if not rows:
        return pl.DataFrame(schema=HISTORY_SCHEMA)
    out = pl.DataFrame(rows, schema=HISTORY_SCHEMA, orient="row")
    check_ids(out["schedule_id"], lambda i: str(rows[i]["origin"]), "history: ")
    return out


def cut(value: object) -> str:
    return shown(value)


def instant(value: object, where: str) -> dt.datetime:
    """An RFC 3339 / ISO 8601 time with ``Z`` or an offset, as an aware UTC datetime."""
    allowed = "expected an RFC 3339 time such as '2026-03-09T06:30:00Z' (years 0001..9999)"
    if not isinstance(value, str) or len(value) > 64:
        raise InputError(f"{where}: {allowed}, got {cut(value)}")
    try:
        t = dt.datetime.fromisoformat(value)
    except ValueError:
        raise InputError(f"{where}: {allowed}, got {cut(value)}") from None
    if t.tzinfo is None:
        raise InputError(f"{where}: {cut(value)} has no offset (an instant needs 'Z' or '+HH:MM')")
    try:
        return t.astimezone(dt.timezone.utc)
    except OverflowError:
        raise InputError(f"{where}: {cut(value)} is out of range (allowed: 0001-01-01T00:00Z..9999-12-31T23:59Z)") \
            from None


def item_rows(items: list, max_rows: int, label: str, noun: str, where: str,
              read_one: Callable[[object, str, str], dict[str, object] | None]) -> list[dict[str, object]]:
    """The rows of a JSON document's list of runs (Jobs, DAG runs, flow runs): at most ``max_rows`` items, each
    read by ``read_one(item, where, origin)`` (None: not a run to keep), named ``"<where> item <i>"``."""
    from .._history_input import too_many

    if len(items) > max_rows:
        raise too_many(label, f"{len(items):,} {noun}", max_rows)
    rows = []
    for i, item in enumerate(items):
        row = read_one(item, f"{where} item {i}", f"{label} item {i}")
        if row is not None:
            rows.append(row)
    return rows
