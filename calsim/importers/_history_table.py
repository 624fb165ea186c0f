"""CSV and Parquet run histories: the columns reconcile compares, each value checked where it is read.

A CSV is read whole (polars needs it so: at most the byte cap, checked for
NUL bytes and UTF-8 a MiB at a time, its lines counted against the row cap
and its header against :data:`MAX_COLUMNS` before polars parses it, every
column as text); a Parquet file through :mod:`calsim.importers._parquet`
(its footer and page headers checked before any page is read). Only
:data:`TABLE_COLUMNS` are read. Then every value: ids (not empty, printable,
at most 1,000 characters), times (ISO 8601 text in one format per column,
timestamps or dates, years 0001..9999, checked in the column's own unit
before any conversion), ``fold`` (0 or 1), ``status`` (printable text); the
first bad one is named by its line (CSV) or row (Parquet, frames) and
column.

>>> import polars as pl
>>> read_actual(pl.DataFrame({"schedule_id": ["a"], "scheduled": ["2026-03-09T02:30"],
...                           "started": ["2026-03-09T06:30:02Z"]})).columns
['schedule_id', 'started_utc', 'nominal_local', 'status']
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl

from ..errors import InputError, LedgerSchemaError, shown
from ..input_files import DEFAULT_MAX_HISTORY_BYTES, max_file_bytes, shown_path
from ._history_input import Source, check_bytes, max_history_rows, too_many, whole_number

__all__ = ["read_actual", "load_table", "table", "check_ids", "required", "HISTORY_SCHEMA", "UTC", "TABLE_COLUMNS",
           "MAX_COLUMNS", "MAX_ID_CHARS"]

UTC = pl.Datetime("us", "UTC")
HISTORY_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "schedule_id": pl.String, "scheduled_utc": UTC, "started_utc": UTC, "finished_utc": UTC,
    "status": pl.String, "origin": pl.String}
MAX_COLUMNS = 1_000        # of a CSV header (a history uses at most 8)
MAX_ID_CHARS = 1_000       # as a Schedule id (calsim.schedule.MAX_ID_LENGTH)
# The columns of a CSV / Parquet history; every other column is skipped, never parsed.
TABLE_COLUMNS = ("schedule_id", "started_utc", "started", "scheduled_utc", "nominal_local", "scheduled", "fold",
                 "finished_utc", "status")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_OFFSET = re.compile(r"(Z|[+-]\d\d(:?\d\d(:?\d\d)?)?)$", re.IGNORECASE)


def _cut(value: object) -> str:
    return shown(value)


def required(columns: list[str], where: str) -> None:
    """Refuse a table without the columns reconcile needs (before any row is read)."""
    have = set(columns)
    for need, alias in (("schedule_id", None), ("started_utc", "started")):
        if need not in have and alias not in have:
            raise LedgerSchemaError(f"{where}: missing column {need!r} (have {_names(columns)})")
    if not have & {"nominal_local", "scheduled_utc", "scheduled"}:
        raise LedgerSchemaError(f"{where}: needs 'nominal_local', 'scheduled_utc' or 'scheduled' "
                                f"(have {_names(columns)})")


def _names(columns: list[str]) -> str:
    text = repr(list(columns[:12]))
    return text if len(columns) <= 12 else text[:-1] + f", ... {len(columns) - 12:,} more]"


def load_table(src: Source, kind: str, rows_cap: int, bytes_cap: int) -> tuple[pl.DataFrame, str]:
    """The raw columns of a CSV or Parquet history (only :data:`TABLE_COLUMNS`), and how rows are counted."""
    where = f"history: {src.label}"
    if kind == "parquet":
        from ._parquet import read_parquet

        return read_parquet(src.pread, lambda: src.whole(bytes_cap), src.size, where, TABLE_COLUMNS,
                            max_rows=rows_cap, max_bytes=bytes_cap, require=lambda names: required(names, where)), "row"
    data = src.whole(bytes_cap)
    check_bytes(data, src.label)
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if lines - 1 > rows_cap:  # a quoted field may hold a line break: an upper bound of the rows
        raise too_many(src.label, f"{lines - 1:,} lines after the header", rows_cap)
    end = data.find(b"\n", 0, 1 << 20)
    if end == -1 and len(data) > 1 << 20:
        raise InputError(f"{where} line 1: a header longer than 1 MiB (allowed: at most {MAX_COLUMNS:,} columns)")
    header_line = (data if end == -1 else data[:end]).decode("utf-8").removesuffix("\r")
    if header_line.count(",") >= MAX_COLUMNS:
        raise InputError(f"{where} line 1: more than {MAX_COLUMNS:,} columns (allowed: at most that many)")
    try:
        header = next(csv.reader([header_line]), [])
    except csv.Error as exc:
        raise InputError(f"{where} line 1: not a CSV header ({exc})") from None
    if not header or not any(h.strip() for h in header):
        raise InputError(f"{where}: an empty file (expected a CSV header with schedule_id, started_utc...)")
    required(header, where)
    for c in TABLE_COLUMNS:
        if header.count(c) > 1:
            raise InputError(f"{where} line 1: column {c!r} appears {header.count(c)} times (allowed: once)")
    try:
        frame = pl.read_csv(data, columns=[c for c in header if c in TABLE_COLUMNS], infer_schema=False,
                            glob=False, raise_if_empty=False)
    except (pl.exceptions.PolarsError, ValueError, OverflowError) as exc:
        raise InputError(f"{where}{_ragged(data, len(header))}: not a readable CSV file ({_first(exc)})") from None
    return frame, "line"


def _ragged(data: bytes, width: int) -> str:
    """`` line N`` of the first CSV record whose fields are not ``width`` (for polars' error, which has no line)."""
    def lines() -> Iterator[str]:
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            end = len(data) if end == -1 else end + 1
            yield data[start:end].decode("utf-8")
            start = end

    try:
        for record in (reader := csv.reader(lines())):
            if len(record) != width and record:
                return f" line {reader.line_num}"
    except csv.Error as exc:
        return f" line {reader.line_num} ({exc})"
    return ""


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0][:160] if text else type(exc).__name__)


def read_actual(actual: object, *, max_rows: int | None = None, max_bytes: int | None = None) -> pl.DataFrame:
    """A run history given as a frame or a CSV / Parquet path, in the columns reconcile compares.

    ``schedule_id`` and ``started_utc`` (or ``started``; naive is UTC) are
    required, with ``nominal_local`` (naive wall time), ``scheduled_utc``
    (an instant) or ``scheduled`` (aware: an instant, naive: wall time);
    ``fold`` and ``status`` are kept. Times come out as ``Datetime("us",
    "UTC")`` (``nominal_local`` naive). A path is read as :func:`read_history`
    reads it (a regular file, within the same caps), by its suffix. Errors
    start with ``actual:`` (a frame) or ``history: <path>:``.

    >>> import polars as pl
    >>> read_actual(pl.DataFrame({"schedule_id": ["a"], "scheduled": ["2026-03-09T02:30"],
    ...                           "started": ["2026-03-09T06:30:02Z"]})).columns
    ['schedule_id', 'started_utc', 'nominal_local', 'status']
    """
    if isinstance(actual, (str, os.PathLike)):
        suffix = Path(actual).suffix.lower()
        if suffix not in (".csv", ".parquet"):
            raise InputError(f"actual: {shown_path(actual)!r} is neither .csv nor .parquet")
        rows_cap = max_history_rows(max_rows)
        bytes_cap = whole_number(max_bytes, "max_bytes") if max_bytes is not None else \
            max_file_bytes(DEFAULT_MAX_HISTORY_BYTES)
        src = Source.of(actual, None, bytes_cap)
        try:
            frame, place = load_table(src, suffix[1:], rows_cap, bytes_cap)
        finally:
            src.close()
        return _convert(frame, f"history: {src.label}", place)
    if isinstance(actual, pl.DataFrame):
        return _convert(actual, "actual", "row")
    raise InputError(f"actual: expected a polars DataFrame or a CSV/Parquet path, got {type(actual).__name__}")


def placer(place: str) -> Callable[[int], str]:
    """Row ``i`` (0-based) as messages name it: ``line i+2`` of a CSV (after its header), else ``row i+1``."""
    return (lambda i: f"line {i + 2}") if place == "line" else (lambda i: f"row {i + 1}")


_MIN_US = -62135596800 * 1_000_000          # 0001-01-01T00:00:00
_MAX_US = 253402300800 * 1_000_000 - 1      # 9999-12-31T23:59:59.999999
_RANGE = "allowed: 0001-01-01..9999-12-31"


def _convert(frame: pl.DataFrame, where: str, place: str) -> pl.DataFrame:
    """The reconcile columns of a history table, every value checked (a bad one named by row and column)."""
    at = placer(place)
    if "started" in frame.columns and "started_utc" not in frame.columns:
        frame = frame.rename({"started": "started_utc"})
    if "scheduled" in frame.columns:
        target = "scheduled_utc" if _aware(frame["scheduled"]) else "nominal_local"
        if target not in frame.columns:
            frame = frame.rename({"scheduled": target})
    required(frame.columns, where)
    cols = [_id_column(frame["schedule_id"], where, at), instants(frame["started_utc"], where, at, required=True)]
    if "scheduled_utc" in frame.columns:
        cols.append(instants(frame["scheduled_utc"], where, at))
    if "nominal_local" in frame.columns:
        cols.append(_walls(frame["nominal_local"], where, at))
    if "fold" in frame.columns:
        cols.append(_folds(frame["fold"], where, at))
    if "status" in frame.columns:
        cols.append(_text_column(frame["status"], where, at))
    else:
        cols.append(pl.Series("status", [None] * frame.height, pl.String))
    return pl.DataFrame(cols)


def _aware(s: pl.Series) -> bool:
    """Whether a ``scheduled`` column holds instants: an aware datetime type, or text whose first
    value has an offset."""
    if isinstance(s.dtype, pl.Datetime):
        return s.dtype.time_zone is not None
    if s.dtype == pl.String:
        first = s.drop_nulls().head(1).to_list()
        return bool(first) and bool(_OFFSET.search(str(first[0]).strip()))
    return False


def _bad(where: str, at: Callable[[int], str], s: pl.Series, mask: pl.Series, why: str,
         value: Callable[[int], str] | None = None) -> InputError | None:
    """The error for the first row where ``mask`` holds, else None (``value`` shows row ``i``'s value)."""
    idx = mask.fill_null(False).arg_true()
    if idx.is_empty():
        return None
    i = int(idx[0])
    return InputError(f"{where} {at(i)}: {s.name}: {value(i) if value else _cut(s[i])} {why}")


def _id_column(s: pl.Series, where: str, at: Callable[[int], str]) -> pl.Series:
    if s.dtype != pl.String and not s.dtype.is_integer() and s.dtype not in (pl.Categorical, pl.Null) \
            and not isinstance(s.dtype, pl.Enum):
        raise InputError(f"{where}: column 'schedule_id' is {s.dtype}; allowed: text or integers")
    ids = s.cast(pl.String)
    check_ids(ids, at, f"{where} ")
    return ids


def check_ids(ids: pl.Series, at: Callable[[int], str], where: str) -> None:
    """Refuse an empty id, one with a control character or over :data:`MAX_ID_CHARS` (as a Schedule id)."""
    for mask, why in ((ids.is_null() | (ids.str.strip_chars() == ""), "is empty (every run names its schedule)"),
                      (ids.str.contains(_CONTROL.pattern),
                       f"holds a control character (allowed: printable text, at most {MAX_ID_CHARS:,} characters)"),
                      (ids.str.len_chars() > MAX_ID_CHARS,
                       f"is longer than {MAX_ID_CHARS:,} characters (allowed: printable text, at most that many)")):
        idx = mask.fill_null(False).arg_true()
        if not idx.is_empty():
            i = int(idx[0])
            raise InputError(f"{where}{at(i)}: schedule_id: {_cut(ids[i])} {why}")


def _text_column(s: pl.Series, where: str, at: Callable[[int], str]) -> pl.Series:
    if s.dtype not in (pl.String, pl.Categorical, pl.Null) and not isinstance(s.dtype, pl.Enum):
        raise InputError(f"{where}: column {s.name!r} is {s.dtype}; allowed: text")
    out = s.cast(pl.String)
    err = _bad(where, at, out, out.str.contains(_CONTROL.pattern),
               "holds a control character (allowed: printable text)")
    if err is not None:
        raise err
    return out


def _in_range(s: pl.Series, where: str, at: Callable[[int], str], orig: pl.Series) -> None:
    """Refuse a time outside what a Python datetime holds (years 0001..9999), checked in the column's own unit."""
    dtype = s.dtype
    if isinstance(dtype, pl.Date):
        raw, unit = s.to_physical().cast(pl.Int64), "days"
        mask = (raw < _MIN_US // 86_400_000_000) | (raw > _MAX_US // 86_400_000_000)
    else:
        assert isinstance(dtype, pl.Datetime)  # the callers check: dates or datetimes
        if dtype.time_unit == "ns":
            return  # int64 nanoseconds span 1677..2262: always inside
        raw, unit = s.to_physical(), dtype.time_unit
        lo, hi = (_MIN_US, _MAX_US) if unit == "us" else (_MIN_US // 1000, _MAX_US // 1000)
        mask = (raw < lo) | (raw > hi)
    # The value as stored (a datetime past year 9999 cannot be shown as one: polars panics).
    shown_value = (lambda i: f"{raw[i]:,} {unit} since 1970-01-01") if orig.dtype != pl.String else None
    err = _bad(where, at, orig, mask, f"is out of range ({_RANGE})", shown_value)
    if err is not None:
        raise err


def _parse_text_times(s: pl.Series, where: str, at: Callable[[int], str], zone: str | None) -> pl.Series:
    """ISO 8601 text as Datetime("us"); the first value that is not (in the column's format) is named."""
    allowed = ("is not an ISO 8601 time (allowed: e.g. '2026-03-09T06:30:00Z', naive meaning UTC, in one format "
               "for the whole column, years 0001..9999)" if zone else
               "is not an ISO 8601 wall time (allowed: e.g. '2026-03-09T02:30:00', no offset, years 0001..9999)")
    try:
        parsed = s.str.to_datetime(time_unit="us", time_zone=zone, strict=False)
    except (pl.exceptions.PolarsError, ValueError, OverflowError):
        parsed = None
    if parsed is None:  # no format fits the first value: name the first that Python cannot read either
        for off in range(0, len(s), 65536):
            for i, v in enumerate(s.slice(off, 65536).to_list(), off):
                if v is not None:
                    try:
                        dt.datetime.fromisoformat(v)
                    except ValueError:
                        raise InputError(f"{where} {at(i)}: {s.name}: {_cut(v)} {allowed}") from None
        first = s.drop_nulls().head(1)
        i = int(s.is_not_null().arg_true()[0]) if len(first) else 0
        raise InputError(f"{where} {at(i)}: {s.name}: {_cut(s[i])} {allowed}")
    err = _bad(where, at, s, parsed.is_null() & s.is_not_null() & (s.str.strip_chars() != ""), allowed)
    if err is not None:
        raise err
    return parsed


def instants(s: pl.Series, where: str, at: Callable[[int], str], required: bool = False) -> pl.Series:
    name = s.name
    if s.dtype == pl.String:
        out = _parse_text_times(s, where, at, "UTC")
    elif isinstance(s.dtype, pl.Datetime):
        _in_range(s, where, at, s)
        out = s.dt.convert_time_zone("UTC") if s.dtype.time_zone else s.dt.replace_time_zone("UTC")
    elif isinstance(s.dtype, pl.Date):
        _in_range(s, where, at, s)
        out = s.cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    elif s.dtype == pl.Null:
        out = s.cast(UTC)
    else:
        raise InputError(f"{where}: column {name!r} is {s.dtype}; allowed: ISO 8601 text, datetimes or dates")
    out = out.cast(UTC)
    _in_range(out, where, at, s)
    if required:
        err = _bad(where, at, s, out.is_null(), "is empty (every run has a start)")
        if err is not None:
            raise err
    return out.alias(name)


def _walls(s: pl.Series, where: str, at: Callable[[int], str]) -> pl.Series:
    if s.dtype == pl.String:
        out = _parse_text_times(s, where, at, None)
        parsed = out.dtype
        assert isinstance(parsed, pl.Datetime)  # str.to_datetime's
        if parsed.time_zone is not None:
            raise _bad(where, at, s, s.is_not_null(), "carries an offset (allowed: naive wall time, e.g. "
                                                       "'2026-03-09T02:30:00')") or InputError(where)
    elif isinstance(s.dtype, pl.Datetime):
        if s.dtype.time_zone:
            raise InputError(f"{where}: 'nominal_local' must be naive wall time, got an aware column")
        _in_range(s, where, at, s)
        out = s
    elif isinstance(s.dtype, pl.Date):
        _in_range(s, where, at, s)
        out = s
    elif s.dtype == pl.Null:
        out = s
    else:
        raise InputError(f"{where}: column 'nominal_local' is {s.dtype}; allowed: ISO 8601 text, datetimes or dates")
    out = out.cast(pl.Datetime("us"))
    _in_range(out, where, at, s)
    return out.alias("nominal_local")


def _folds(s: pl.Series, where: str, at: Callable[[int], str]) -> pl.Series:
    if s.dtype == pl.String:
        v = s.str.strip_chars().cast(pl.Int64, strict=False)
    elif s.dtype.is_integer() or s.dtype in (pl.Boolean, pl.Null):
        v = s.cast(pl.Int64)
    else:
        raise InputError(f"{where}: column 'fold' is {s.dtype}; allowed: 0 or 1")
    err = _bad(where, at, s, (s.is_not_null() & v.is_null()) | ~v.is_in([0, 1]), "is not a fold (allowed: 0 or 1)")
    if err is not None:
        raise err
    return v.cast(pl.Int8).alias("fold")


def table(frame: pl.DataFrame, label: str, place: str) -> pl.DataFrame:
    where = f"history: {label}"
    out = _convert(frame, where, place)
    if "finished_utc" in frame.columns:
        out = out.with_columns(instants(frame["finished_utc"], where, placer(place)))
    for c, t in HISTORY_SCHEMA.items():
        if c not in out.columns and not (c == "scheduled_utc" and "nominal_local" in out.columns):
            out = out.with_columns(pl.lit(None, t).alias(c))
    first = 2 if place == "line" else 1
    n = pl.int_range(first, pl.len() + first).cast(pl.String)
    return out.with_columns((pl.lit(f"{label} {place} ") + n).alias("origin"))
