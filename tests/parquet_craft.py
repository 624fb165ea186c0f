"""Parquet files that lie, made by hand for the hostile-history tests (no writer produces them).

A Parquet file is ``PAR1``, column chunks of pages (each a Thrift
``PageHeader`` and its bytes), the ``FileMetaData`` footer (Thrift compact
protocol), the footer's length (4 bytes, little-endian) and ``PAR1``
(parquet-format's ``parquet.thrift``). This module decodes a structure of the
compact protocol into nested ``{field id: (type, value)}`` dicts and encodes
it back, so a test takes a small file a real writer made, changes what the
footer or a page header declares (10^8 rows, a page of 1 GiB) and writes the
file again with every offset fixed.

>>> import io, pyarrow as pa, pyarrow.parquet as pq
>>> buf = io.BytesIO(); pq.write_table(pa.table({"a": [1, 2]}), buf)
>>> meta = footer(buf.getvalue())
>>> meta[3]  # FileMetaData.num_rows
(6, 2)
"""

from __future__ import annotations

import struct
from typing import Any

# Compact protocol type ids (thrift/lib/cpp/src/thrift/protocol/TCompactProtocol.tcc).
STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)
Struct = dict[int, tuple[int, Any]]


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _value(data: bytes, i: int, t: int) -> tuple[Any, int]:
    if t in (TRUE, FALSE):
        return t == TRUE, i
    if t == BYTE:
        return data[i], i + 1
    if t in (I16, I32, I64):
        v, i = _varint(data, i)
        return _zigzag(v), i
    if t == DOUBLE:
        return struct.unpack_from("<d", data, i)[0], i + 8
    if t == BINARY:
        n, i = _varint(data, i)
        return bytes(data[i:i + n]), i + n
    if t in (LIST, SET):
        head = data[i]
        i += 1
        n, et = head >> 4, head & 0x0F
        if n == 15:
            n, i = _varint(data, i)
        items = []
        for _ in range(n):
            if et in (TRUE, FALSE):  # a bool in a list is a byte: 1 true, else false
                items.append(data[i] == 1)
                i += 1
            else:
                v, i = _value(data, i, et)
                items.append(v)
        return (et, items), i
    if t == MAP:
        n, i = _varint(data, i)
        if n == 0:
            return (0, 0, []), i
        kv = data[i]
        i += 1
        pairs = []
        for _ in range(n):
            k, i = _value(data, i, kv >> 4)
            v, i = _value(data, i, kv & 0x0F)
            pairs.append((k, v))
        return (kv >> 4, kv & 0x0F, pairs), i
    if t == STRUCT:
        return decode(data, i)
    raise ValueError(f"unknown compact type {t}")


def decode(data: bytes, i: int = 0) -> tuple[Struct, int]:
    """The struct at ``data[i:]`` and the offset after it."""
    out: Struct = {}
    last = 0
    while True:
        head = data[i]
        i += 1
        if head == STOP:
            return out, i
        t, delta = head & 0x0F, head >> 4
        if delta:
            fid = last + delta
        else:
            raw, i = _varint(data, i)
            fid = _zigzag(raw)
        v, i = _value(data, i, t)
        out[fid] = (FALSE if t in (TRUE, FALSE) else t, v)
        last = fid


def _put_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _put(t: int, v: Any) -> bytes:
    if t in (TRUE, FALSE):
        return b""
    if t == BYTE:
        return bytes([v & 0xFF])
    if t in (I16, I32, I64):
        return _put_varint((v << 1) ^ (v >> 63))
    if t == DOUBLE:
        return struct.pack("<d", v)
    if t == BINARY:
        return _put_varint(len(v)) + v
    if t in (LIST, SET):
        et, items = v
        head = bytes([(len(items) << 4) | et]) if len(items) < 15 else bytes([0xF0 | et]) + _put_varint(len(items))
        body = b"".join(bytes([1 if x else 2]) if et in (TRUE, FALSE) else _put(et, x) for x in items)
        return head + body
    if t == MAP:
        kt, vt, pairs = v
        if not pairs:
            return b"\x00"
        return _put_varint(len(pairs)) + bytes([(kt << 4) | vt]) + b"".join(_put(kt, a) + _put(vt, b)
                                                                          for a, b in pairs)
    if t == STRUCT:
        return encode(v)
    raise ValueError(f"unknown compact type {t}")


def encode(s: Struct) -> bytes:
    """The compact encoding of a struct as :func:`decode` returns it."""
    out = bytearray()
    last = 0
    for fid in sorted(s):
        t, v = s[fid]
        wire = (TRUE if v else FALSE) if t in (TRUE, FALSE) else t
        if 0 < fid - last <= 15:
            out.append(((fid - last) << 4) | wire)
        else:
            out.append(wire)
            out += _put_varint((fid << 1) ^ (fid >> 15))
        out += _put(t, v)
        last = fid
    out.append(STOP)
    return bytes(out)


def footer(data: bytes) -> Struct:
    """The ``FileMetaData`` of a Parquet file's bytes."""
    n = struct.unpack_from("<I", data, len(data) - 8)[0]
    meta, _ = decode(data, len(data) - 8 - n)
    return meta


def with_footer(data: bytes, meta: Struct) -> bytes:
    """``data`` with its footer replaced by ``meta`` (the pages kept where they are)."""
    n = struct.unpack_from("<I", data, len(data) - 8)[0]
    body = encode(meta)
    return data[: len(data) - 8 - n] + body + struct.pack("<I", len(body)) + b"PAR1"


def set_rows(data: bytes, rows: int) -> bytes:
    """``data`` declaring ``rows`` rows in the file and in each of its row groups."""
    meta = footer(data)
    meta[3] = (I64, rows)
    for rg in meta[4][1][1]:
        rg[3] = (I64, rows // len(meta[4][1][1]))
        for chunk in rg[1][1][1]:
            chunk[3][1][5] = (I64, rows // len(meta[4][1][1]))  # ColumnMetaData.num_values
    return with_footer(data, meta)


def pages(data: bytes) -> list[tuple[int, Struct, int]]:
    """``[(offset, PageHeader, offset of its data)]`` of every page of every column chunk."""
    meta = footer(data)
    out = []
    for rg in meta[4][1][1]:
        for chunk in rg[1][1][1]:
            cm = chunk[3][1]
            start = cm.get(11, (I64, None))[1] or cm[9][1]
            at, end = start, start + cm[7][1]
            while at < end:
                header, body = decode(data, at)
                out.append((at, header, body))
                at = body + header[3][1]
    return out


def set_page(data: bytes, index: int, **fields: int) -> bytes:
    """``data`` with page ``index``'s header fields changed (``uncompressed=``, ``values=``), offsets fixed."""
    at, header, body = pages(data)[index]
    if "uncompressed" in fields:
        header[2] = (I32, fields["uncompressed"])
    if "values" in fields:
        sub = 5 if 5 in header else 7 if 7 in header else 8
        header[sub][1][1] = (I32, fields["values"])
    new = encode(header)
    shift = len(new) - (body - at)
    out = data[:at] + new + data[body:]
    meta = footer(out[:len(out)])
    for rg in meta[4][1][1]:
        for chunk in rg[1][1][1]:
            cm = chunk[3][1]
            for k in (9, 10, 11):
                if k in cm and cm[k][1] > at:
                    cm[k] = (I64, cm[k][1] + shift)
            start = cm.get(11, (I64, None))[1] or cm[9][1]
            if start <= at < start + cm[7][1] - shift or start == at:
                cm[7] = (I64, cm[7][1] + shift)
                cm[6] = (I64, cm[6][1] + shift)
            if chunk.get(2) and chunk[2][1] > at:
                chunk[2] = (I64, chunk[2][1] + shift)
        if 5 in rg and rg[5][1] > at:
            rg[5] = (I64, rg[5][1] + shift)
    return with_footer(out, meta)


def repeat_row_groups(data: bytes, n: int) -> bytes:
    """``data`` whose footer lists its first row group ``n`` times (the same pages each time)."""
    meta = footer(data)
    first = meta[4][1][1][0]
    meta[4] = (LIST, (STRUCT, [first] * n))
    meta[3] = (I64, first[3][1] * n)
    return with_footer(data, meta)


def set_file_path(data: bytes, path: str) -> bytes:
    """``data`` whose first column chunk says its pages are in the file ``path`` (ColumnChunk.file_path)."""
    meta = footer(data)
    meta[4][1][1][0][1][1][1][0][1] = (BINARY, path.encode())
    return with_footer(data, meta)


def set_footer_length(data: bytes, n: int) -> bytes:
    """``data`` whose last 8 bytes declare a footer of ``n`` bytes."""
    return data[:-8] + struct.pack("<I", n) + b"PAR1"
