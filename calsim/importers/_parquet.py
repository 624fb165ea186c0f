"""Parquet run histories read within the caps: what the file declares is checked before any page is read.

A Parquet file says how big it is inside before a reader decompresses
anything: the footer (``FileMetaData``) declares the rows, the row groups,
each column chunk's offsets, values and sizes, and each page's header
declares its decompressed size and its number of values. Readers trust
those numbers: pyarrow and polars allocate a page's declared size before
decompressing it and a row group's declared rows before decoding it, so an
800-byte file that declares 10^8 rows, or a page that declares 2 GiB, costs
gigabytes (polars aborts the process when the allocation fails).
:func:`read_parquet` therefore checks, in this order, reading nothing else:

1. the magic bytes and the footer's length (at most :data:`MAX_FOOTER_BYTES`);
2. the footer, parsed by pyarrow with Thrift limits: rows (at most the row
   cap), row groups (:data:`MAX_ROW_GROUPS`), columns (:data:`MAX_COLUMNS`),
   the types of the columns the history uses (flat, no lists or structs),
   each of their chunks' offsets (inside the file), values (one per row) and
   decompressed size (in all, at most the byte cap), no chunk in another
   file (``file_path``);
3. every page header of those chunks (at most :data:`MAX_PAGES` pages),
   decoded here from the Thrift compact protocol: the decompressed sizes add
   up to no more than the chunk declared, the values to no more than its rows;
4. then each row group is read by pyarrow (only those columns, string
   columns kept as dictionaries), and the bytes its strings take once
   expanded are counted against the byte cap before they are expanded.

The format: https://github.com/apache/parquet-format (``parquet.thrift``:
``FileMetaData``, ``ColumnMetaData``, ``PageHeader``); the compact protocol:
https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md.

>>> import io, polars as pl
>>> buf = io.BytesIO()
>>> pl.DataFrame({"schedule_id": ["a"], "started_utc": ["2026-03-09T06:30:02Z"]}).write_parquet(buf)
>>> data = buf.getvalue()
>>> read_parquet(lambda at, n: data[at:at + n], lambda: data, len(data), "runs.parquet",
...              {"schedule_id", "started_utc"}, max_rows=10, max_bytes=1 << 20).shape
(1, 2)
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Collection
from types import ModuleType
from typing import Any

import polars as pl

from ..errors import InputError

__all__ = ["read_parquet", "MAX_FOOTER_BYTES", "MAX_ROW_GROUPS", "MAX_COLUMNS", "MAX_PAGES"]

MAX_FOOTER_BYTES = 8 << 20  # a footer of 10 columns x 1,000 row groups is about 2 MB
MAX_ROW_GROUPS = 10_000     # writers make groups of 10^5..10^6 rows: 10^7 rows are 10..100 groups
MAX_COLUMNS = 1_000         # a history uses at most 8; other columns are skipped, never read
MAX_PAGES = 100_000         # writers cut pages at ~1 MiB or 20,000 rows: a full history has a few thousand
_MAX_HEADER = 16 << 20      # parquet-cpp's own limit on one page header (kDefaultMaxPageHeaderSize)
_CODECS = {"UNCOMPRESSED", "SNAPPY", "GZIP", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"}
_DATA_PAGE, _INDEX_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 1, 2, 3


class _Truncated(Exception):
    """A page header runs past the bytes read so far."""


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(data):
            raise _Truncated
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7
        if shift > 70:
            raise ValueError("a varint longer than 10 bytes")


def _skip(data: bytes, i: int, t: int, depth: int) -> int:
    """The offset after a value of compact type ``t`` at ``i`` (field values the checks do not need)."""
    if depth > 32:
        raise ValueError("Thrift structures nested more than 32 deep")
    if t in (1, 2):  # bool in a field header
        return i
    if t == 3:  # byte
        return i + 1
    if t in (4, 5, 6):
        return _varint(data, i)[1]
    if t == 7:  # double
        return i + 8
    if t == 8:  # binary
        n, i = _varint(data, i)
        return i + n
    if t in (9, 10):  # list, set
        if i >= len(data):
            raise _Truncated
        head = data[i]
        i += 1
        n, et = head >> 4, head & 0x0F
        if n == 15:
            n, i = _varint(data, i)
        if n > len(data):
            raise _Truncated
        for _ in range(n):
            i = i + 1 if et in (1, 2) else _skip(data, i, et, depth + 1)
        return i
    if t == 11:  # map
        n, i = _varint(data, i)
        if n == 0:
            return i
        if i >= len(data) or n > len(data):
            raise _Truncated
        kv = data[i]
        i += 1
        for _ in range(n):
            i = _skip(data, i, kv >> 4, depth + 1)
            i = _skip(data, i, kv & 0x0F, depth + 1)
        return i
    if t == 12:
        return _struct(data, i, depth + 1, {})[1]
    raise ValueError(f"unknown Thrift compact type {t}")


def _struct(data: bytes, i: int, depth: int, want: dict[int, dict]) -> tuple[dict[int, object], int]:
    """The integer fields of a struct (and of the sub-structs named in ``want``), and the offset after it."""
    out: dict[int, object] = {}
    last = 0
    while True:
        if i >= len(data):
            raise _Truncated
        head = data[i]
        i += 1
        if head == 0:
            return out, i
        t, delta = head & 0x0F, head >> 4
        if delta:
            fid = last + delta
        else:
            raw, i = _varint(data, i)
            fid = (raw >> 1) ^ -(raw & 1)
        last = fid
        if t in (5, 6):  # i32, i64
            raw, i = _varint(data, i)
            out[fid] = (raw >> 1) ^ -(raw & 1)
        elif t == 12 and fid in want:
            out[fid], i = _struct(data, i, depth + 1, want[fid])
        else:
            i = _skip(data, i, t, depth)


# PageHeader: 1 type, 2 uncompressed_page_size, 3 compressed_page_size; 5 data_page_header (1 num_values),
# 7 dictionary_page_header (1 num_values), 8 data_page_header_v2 (1 num_values, 3 num_rows).
_PAGE_HEADER: dict[int, dict] = {5: {}, 7: {}, 8: {}}


def page_header(data: bytes) -> tuple[dict[int, object], int]:
    """The fields of the ``PageHeader`` at the start of ``data`` and its length in bytes.

    >>> page_header(bytes([0x15, 0x00, 0x15, 0x14, 0x15, 0x14, 0x2c, 0x15, 0x06, 0x00, 0x00]))
    ({1: 0, 2: 10, 3: 10, 5: {1: 3}}, 11)
    """
    return _struct(data, 0, 0, _PAGE_HEADER)


def _fail(where: str, text: str) -> InputError:
    return InputError(f"{where}: {text}")


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:160] if text else type(exc).__name__


def _pyarrow_error(where: str, exc: BaseException) -> InputError:
    return InputError(f"{where}: not a readable Parquet file ({_first(exc)})")


def _allowed(name: str, t: Any, pa: ModuleType) -> str | None:
    """Why column ``name`` of arrow type ``t`` cannot be read (None: it can)."""
    types = pa.types
    if types.is_dictionary(t):
        t = t.value_type
    text = types.is_string(t) or types.is_large_string(t) or getattr(types, "is_string_view", lambda _: False)(t)
    if name == "schedule_id":
        ok, allowed = text or types.is_integer(t), "text or integers"
    elif name == "status":
        ok, allowed = text, "text (succeeded, failed or running)"
    elif name == "fold":
        ok, allowed = types.is_integer(t) or types.is_boolean(t), "integers 0 or 1"
    else:
        ok, allowed = (text or types.is_timestamp(t) or types.is_date(t)), \
            "timestamps, dates or ISO 8601 text"
    return None if ok else f"column {name!r} is {t}; allowed: {allowed}"


def footer_of(pread: Callable[[int, int], bytes], size: int, where: str, *, max_rows: int):
    """The checked footer of a Parquet file of ``size`` bytes: ``(metadata, arrow schema, last 8 bytes,
    footer length)``, reading nothing but the footer (steps 1 and 2 of the module docstring, before the
    columns): at most ``max_rows`` rows, :data:`MAX_ROW_GROUPS` row groups and :data:`MAX_COLUMNS` columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if size < 12:
        raise _fail(where, f"not a Parquet file ({size} bytes; one holds at least 12)")
    head = pread(0, 4)
    tail = pread(size - 8, 8)
    if head != b"PAR1" or len(tail) != 8 or tail[4:] not in (b"PAR1", b"PARE"):
        raise _fail(where, "not a Parquet file (it neither starts nor ends with the magic bytes PAR1)")
    if tail[4:] == b"PARE":
        raise _fail(where, "an encrypted Parquet file (calsim reads no encrypted files)")
    footer = struct.unpack("<I", tail[:4])[0]
    if footer > size - 12 or footer > MAX_FOOTER_BYTES:
        raise _fail(where, f"the footer declares {footer:,} bytes "
                           f"(allowed: at most {min(size - 12, MAX_FOOTER_BYTES):,}"
                           f"{', the file is smaller' if footer > size - 12 else ''})")
    # The footer alone, framed as a file of its own: pyarrow parses it without reading anything else.
    meta = pread(size - 8 - footer, footer)
    try:
        pf = pq.ParquetFile(pa.BufferReader(b"PAR1" + meta + tail), thrift_string_size_limit=MAX_FOOTER_BYTES,
                            thrift_container_size_limit=max(MAX_ROW_GROUPS, MAX_COLUMNS) + 1,
                            coerce_int96_timestamp_unit="us")
        md = pf.metadata
        schema = pf.schema_arrow
    except (pa.ArrowException, OSError, ValueError, MemoryError) as exc:
        raise _pyarrow_error(where, exc) from None
    if not 0 <= md.num_rows <= max_rows:
        raise _fail(where, f"declares {md.num_rows:,} rows, over the limit of {max_rows:,} "
                           "(raise it with max_rows= or the CALSIM_MAX_HISTORY_ROWS environment variable)")
    if md.num_row_groups > MAX_ROW_GROUPS:
        raise _fail(where, f"declares {md.num_row_groups:,} row groups (allowed: at most {MAX_ROW_GROUPS:,})")
    if md.num_columns > MAX_COLUMNS:
        raise _fail(where, f"declares {md.num_columns:,} columns (allowed: at most {MAX_COLUMNS:,})")
    return md, schema, tail, footer


def read_parquet(pread: Callable[[int, int], bytes], whole: Callable[[], bytes], size: int, where: str,
                 wanted: Collection[str], *, max_rows: int, max_bytes: int,
                 require: Callable[[list[str]], None] | None = None,
                 groups: Collection[int] | None = None,
                 allowed: Callable[[str, Any, ModuleType], str | None] | None = None) -> pl.DataFrame:
    """The columns ``wanted`` (those present) of a Parquet file of ``size`` bytes, within the caps.

    ``pread(offset, n)`` reads at most ``n`` bytes at ``offset`` (the footer
    and the page headers are read so); ``whole()`` is the file's content,
    asked for only once everything it declares has been checked, and handed
    to pyarrow as a buffer (pyarrow reading a Python file object aborts the
    process at exit when polars is loaded: "terminate called without an
    active exception", pyarrow 26 and polars 2.1).

    ``where`` starts every message (``"history: runs.parquet"``). Raises
    :class:`~calsim.errors.InputError` for a file that is not Parquet, one
    whose footer or page headers declare more than the caps (module
    docstring), a column of a type the history cannot use, or one pyarrow
    cannot read. ``require`` is called with the file's column names before
    any page is read (to refuse a file without the columns the caller needs).
    ``groups``: only these row groups are checked and read (None: all).
    ``allowed(name, arrow type, pyarrow)``: why a column cannot be read, None when it can (default: the
    history's columns).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    md, schema, tail, footer = footer_of(pread, size, where, max_rows=max_rows)
    names = schema.names
    if require is not None:
        require(names)
    leaves = {}
    for j in range(md.num_columns):
        col = md.schema.column(j)
        path = col.path.split(".")
        if path[0] in wanted:
            if len(path) != 1 or col.max_repetition_level != 0:
                raise _fail(where, f"column {path[0]!r} is nested ({col.path}); allowed: a flat column")
            leaves[path[0]] = j
    columns = [n for n in names if n in wanted]
    for n in columns:
        if names.count(n) > 1:
            raise _fail(where, f"column {n!r} appears {names.count(n)} times (allowed: once)")
        why = (allowed or _allowed)(n, schema.field(n).type, pa)
        if why is not None or n not in leaves:
            raise _fail(where, why or f"column {n!r} is not a flat column")
    rows_seen = 0
    expanded_total = 0
    pages = 0
    body_end = size - 8 - footer
    plans = []
    chosen = set(range(md.num_row_groups)) if groups is None else set(groups)
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        if rg.num_rows < 0:
            raise _fail(where, f"row group {g} declares {rg.num_rows} rows")
        rows_seen += rg.num_rows
        if g not in chosen:
            continue
        for n in columns:
            c = rg.column(leaves[n])
            at = f"row group {g}, column {n!r}"
            if c.file_path:
                raise _fail(where, f"{at}: its data is in another file ({c.file_path[:60]!r}); calsim reads only "
                                   "the file it is given")
            if c.compression not in _CODECS:
                raise _fail(where, f"{at}: compression {c.compression} (allowed: {', '.join(sorted(_CODECS))})")
            if c.num_values != rg.num_rows:
                raise _fail(where, f"{at}: declares {c.num_values:,} values for {rg.num_rows:,} rows (a flat "
                                   "column holds one value a row)")
            start = c.dictionary_page_offset if c.has_dictionary_page and c.dictionary_page_offset else \
                c.data_page_offset
            if start is None or not 4 <= start or c.total_compressed_size < 0 or \
                    start + c.total_compressed_size > body_end:
                raise _fail(where, f"{at}: declares bytes {start}..{(start or 0) + c.total_compressed_size} outside "
                                   f"the file's pages (4..{body_end})")
            if c.total_uncompressed_size < 0:
                raise _fail(where, f"{at}: declares {c.total_uncompressed_size} decompressed bytes")
            expanded_total += c.total_uncompressed_size
            if expanded_total > max_bytes:
                raise _fail(where, f"its columns declare more than {max_bytes:,} bytes once decompressed, over the "
                                   "limit (raise it with max_bytes= or the CALSIM_MAX_FILE_BYTES environment variable)")
            plans.append((at, start, c.total_compressed_size, c.total_uncompressed_size, c.num_values))
    if rows_seen != md.num_rows:
        raise _fail(where, f"declares {md.num_rows:,} rows but its row groups hold {rows_seen:,}")
    for at, start, compressed, uncompressed, values in plans:
        pages += _check_pages(pread, where, at, start, compressed, uncompressed, values, max_rows, MAX_PAGES - pages)
    text = [n for n in columns if _allowed("status", schema.field(n).type, pa) is None]
    try:  # strings as dictionaries: their expanded size is counted before they are expanded
        pf = pq.ParquetFile(pa.BufferReader(whole()), metadata=md, read_dictionary=text,
                            coerce_int96_timestamp_unit="us")
    except (pa.ArrowException, OSError, ValueError, MemoryError) as exc:
        raise _pyarrow_error(where, exc) from None
    return _read_groups(pf, where, columns, sorted(chosen & set(range(md.num_row_groups))), max_bytes, pa)


def _check_pages(pread: Callable[[int, int], bytes], where: str, at: str, start: int, compressed: int,
                 uncompressed: int, values: int, max_rows: int, pages_left: int) -> int:
    """Walk the page headers of one column chunk; the number of pages. Only the headers are read."""
    end = start + compressed
    pos = start
    sizes = counted = n = 0
    while pos < end:
        n += 1
        if n > pages_left:
            raise _fail(where, f"{at}: more than {MAX_PAGES:,} pages in the columns read (allowed: at most that many)")
        window = min(end - pos, 64 << 10)
        while True:
            data = pread(pos, window)
            try:
                header, length = page_header(data)
                break
            except _Truncated:
                if window >= min(end - pos, _MAX_HEADER):
                    raise _fail(where, f"{at}: page {n} at byte {pos:,}: "
                                       "its header runs past the column chunk") from None
                window = min(end - pos, _MAX_HEADER, window * 4)
            except (ValueError, IndexError) as exc:
                raise _fail(where, f"{at}: page {n} at byte {pos:,}: not a page header ({exc})") from None
        kind, raw, packed = header.get(1), header.get(2), header.get(3)
        if not (isinstance(kind, int) and isinstance(raw, int) and isinstance(packed, int)) or raw < 0 or packed < 0:
            raise _fail(where, f"{at}: page {n} at byte {pos:,}: its header lacks a type or sizes")
        if pos + length + packed > end:
            raise _fail(where, f"{at}: page {n} at byte {pos:,} declares {packed:,} bytes, past its column chunk's end")
        sizes += raw
        if sizes > uncompressed:
            raise _fail(where, f"{at}: page {n} declares {raw:,} bytes decompressed, more than the column chunk "
                               f"declares in all ({uncompressed:,})")
        sub = header.get(5) if kind == _DATA_PAGE else header.get(8) if kind == _DATA_PAGE_V2 else \
            header.get(7) if kind == _DICTIONARY_PAGE else None
        if kind in (_DATA_PAGE, _DATA_PAGE_V2, _DICTIONARY_PAGE):
            count = sub.get(1) if isinstance(sub, dict) else None
            if not isinstance(count, int) or count < 0:
                raise _fail(where, f"{at}: page {n} at byte {pos:,}: its header lacks its number of values")
            if kind == _DICTIONARY_PAGE:
                if count > max_rows:
                    raise _fail(where, f"{at}: a dictionary of {count:,} values, over the limit of {max_rows:,} rows")
            else:
                counted += count
                if counted > values:
                    raise _fail(where, f"{at}: its pages declare more than the {values:,} values of the column chunk")
        elif kind != _INDEX_PAGE:
            raise _fail(where, f"{at}: page {n} at byte {pos:,} has type {kind} "
                               "(allowed: 0..3, parquet.thrift PageType)")
        pos += length + packed
    return n


# A timestamp's bounds in its unit: what a Python datetime holds, 0001-01-01..9999-12-31.
# (polars stores seconds as milliseconds and multiplies without checking: 10^17 s would wrap into range.)
_SECONDS = {"s": 1, "ms": 1000, "us": 1_000_000}
_FIRST_S, _LAST_S = -62135596800, 253402300799


def _timestamps_in_range(col: Any, where: str, name: str, first_row: int, pa: ModuleType, pc: ModuleType) -> None:
    per = _SECONDS[col.type.unit]
    lo, hi = _FIRST_S * per, (_LAST_S + 1) * per - 1
    raw = col.cast(pa.int64())
    bad = pc.or_(pc.less(raw, lo), pc.greater(raw, hi))
    if pc.any(bad).as_py():
        i = pc.index(bad, True).as_py()
        raise _fail(where, f"row {first_row + i + 1}: {name}: {raw[i].as_py():,} {col.type.unit} since "
                           "1970-01-01 is out of range (allowed: 0001-01-01..9999-12-31)")


def _frame(table: Any) -> pl.DataFrame:
    """``pl.from_arrow`` of a pyarrow Table: a DataFrame (typed DataFrame | Series, for an Array)."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame


def _read_groups(pf: Any, where: str, columns: list[str], groups: list[int], max_bytes: int, pa: ModuleType,
                 ) -> pl.DataFrame:
    """Each row group's columns, string columns counted as they expand (within ``max_bytes`` in all)."""
    import pyarrow.compute as pc

    frames: list[pl.DataFrame] = []
    used = 0
    for g in groups:
        first_row = sum(pf.metadata.row_group(h).num_rows for h in range(g))  # (rows are numbered in the file)
        try:
            table = pf.read_row_group(g, columns=columns, use_threads=False)
            out = {}
            for n in columns:
                col = table.column(n)
                try:  # pyarrow does not check that a string column holds UTF-8; polars panics on one that does not
                    col.validate(full=True)
                except pa.ArrowInvalid as exc:
                    raise _fail(where, f"row group {g}, column {n!r}: not valid text ({_first(exc)})") from None
                if pa.types.is_timestamp(col.type) and col.type.unit in _SECONDS:
                    _timestamps_in_range(col, where, n, first_row, pa, pc)
                if pa.types.is_dictionary(col.type):
                    # What the strings take once every row has its own copy: the
                    # dictionary's lengths summed over the indices, before expanding.
                    for chunk in col.chunks:
                        lengths = pc.binary_length(chunk.dictionary)
                        used += (pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0) + 16 * len(chunk)
                        if used > max_bytes:
                            raise _fail(where, f"row group {g}, column {n!r}: its text takes more than "
                                               f"{max_bytes:,} bytes once expanded, over the limit (raise it with "
                                               "max_bytes= or the CALSIM_MAX_FILE_BYTES environment variable)")
                    col = pa.chunked_array([c.dictionary_decode() for c in col.chunks],
                                           type=col.type.value_type)
                else:
                    used += col.nbytes
                out[n] = col
            frames.append(_frame(pa.table(out)))
        except InputError:
            raise
        except (pa.ArrowException, OSError, ValueError, MemoryError) as exc:
            raise _pyarrow_error(f"{where}: row group {g}", exc) from None
    if not frames:
        try:
            return _frame(pf.schema_arrow.empty_table().select(columns))
        except (pa.ArrowException, ValueError) as exc:
            raise _pyarrow_error(where, exc) from None
    return pl.concat(frames, how="vertical_relaxed", rechunk=False) if len(frames) > 1 else frames[0]
