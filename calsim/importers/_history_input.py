"""The bytes of a run history: one regular file (or content in memory) read in bounded pieces, within the caps.

What :func:`calsim.importers.history.read_history` reads comes through
:class:`Source`: a path is opened by :func:`calsim.input_files.open_regular`
(a FIFO, a device, a directory, a link to one are refused before anything is
read), its size checked against the byte cap before any read; text formats
are read 1 MiB at a time (:func:`lines` for the journal and syslog, a line at
a time), never into a buffer of the cap. The caps: :func:`max_history_rows`
(rows, ``CALSIM_MAX_HISTORY_ROWS``) and
:data:`~calsim.input_files.DEFAULT_MAX_HISTORY_BYTES` (bytes,
``CALSIM_MAX_FILE_BYTES``); :data:`MAX_LINE_BYTES` for one line.

>>> src = Source.of("a\\nb\\n", None, 100)
>>> list(lines(src, 10))
[(1, 'a'), (2, 'b')]
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator

from ..errors import InputError, shown
from ..input_files import CHUNK_BYTES, iter_chunks, open_regular, read_all, shown_path

__all__ = ["Source", "lines", "check_bytes", "whole_text", "too_many", "max_history_rows", "whole_number",
           "DEFAULT_MAX_HISTORY_ROWS", "ROWS_ENV", "MAX_LINE_BYTES", "HEAD_BYTES"]

DEFAULT_MAX_HISTORY_ROWS = 10_000_000  # a year of 20,000 daily schedules is 7.3 M runs; ~100 bytes a row
ROWS_ENV = "CALSIM_MAX_HISTORY_ROWS"
MAX_LINE_BYTES = 16 << 20  # journald's LineMax is 48 KiB, rsyslog's message 8 KiB; `journalctl --all` fields more
HEAD_BYTES = 1 << 20       # what kind=None looks at


def max_history_rows(explicit: object = None) -> int:
    """The row cap: ``explicit``, else ``CALSIM_MAX_HISTORY_ROWS`` (a whole number > 0), else 10 million.

    >>> max_history_rows(), max_history_rows(500)
    (10000000, 500)
    """
    if explicit is not None:
        return whole_number(explicit, "max_rows")
    raw = os.environ.get(ROWS_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_MAX_HISTORY_ROWS
    if not raw.strip().isdigit() or len(raw.strip()) > 18 or int(raw) <= 0:
        raise InputError(f"{ROWS_ENV}: {raw[:40]!r} is not a whole number of rows greater than 0")
    return int(raw)


def whole_number(value: object, name: str) -> int:
    """``value`` if it is a whole number from 1 to 2^62 (a cap given as ``max_rows=`` / ``max_bytes=``),
    else refused."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 1 << 62:
        raise InputError(f"{name}: expected a whole number from 1 to 2^62, got {shown(value)}")
    return value


class Source:
    """A history's bytes: an open regular file (read on demand, never past the caps) or content in memory."""

    def __init__(self, label: str, cap: int, *, fd: int | None = None, size: int = 0,
                 data: bytes | None = None) -> None:
        self.label, self.cap, self.fd, self.data = label, cap, fd, data
        self.size = len(data) if data is not None else size

    @classmethod
    def of(cls, path_or_text: object, source: str | None, cap: int) -> Source:
        if isinstance(path_or_text, (bytes, bytearray, memoryview)):
            data = bytes(path_or_text)
        elif isinstance(path_or_text, str) and ("\n" in path_or_text or "\r" in path_or_text):
            data = path_or_text.encode("utf-8", "surrogatepass")
        elif isinstance(path_or_text, (str, os.PathLike)):
            # The one regular-file reader: a FIFO, a device, a directory are refused before any read.
            fd, size = open_regular(path_or_text, "history", None)
            label = source or shown_path(path_or_text)
            if size > cap:
                os.close(fd)
                raise InputError(f"history: {label!r} is {size:,} bytes, over the limit of {cap:,} (raise it "
                                 "with max_bytes= or the CALSIM_MAX_FILE_BYTES environment variable)")
            return cls(label, cap, fd=fd, size=size)
        else:
            raise InputError(f"history: expected a path, the file's text or a DataFrame, got "
                             f"{type(path_or_text).__name__}")
        label = source or "<history>"
        if len(data) > cap:
            raise InputError(f"history: {label} is {len(data):,} bytes, over the limit of {cap:,} (raise it with "
                             "max_bytes= or the CALSIM_MAX_FILE_BYTES environment variable)")
        return cls(label, cap, data=data)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _open_fd(self) -> int:
        """The open file of a Source without its content in memory (it holds one or the other until closed)."""
        assert self.fd is not None, f"history: {self.label!r} is closed"
        return self.fd

    def head(self) -> bytes:
        if self.data is not None:
            return self.data[:HEAD_BYTES]
        try:
            return os.pread(self._open_fd(), HEAD_BYTES, 0)
        except OSError as exc:
            raise InputError(f"history: cannot read {self.label!r} ({exc.strerror or type(exc).__name__})") from None

    def chunks(self) -> Iterator[bytes]:
        """The content in pieces of at most 1 MiB, refused past the cap."""
        if self.data is not None:
            view = memoryview(self.data)
            for i in range(0, len(view), CHUNK_BYTES):
                yield bytes(view[i:i + CHUNK_BYTES])
            return
        fd = self._open_fd()
        os.lseek(fd, 0, os.SEEK_SET)
        yield from iter_chunks(fd, self.cap, "history", self.label)

    def whole(self, cap: int) -> bytes:
        if self.size > cap:
            raise InputError(f"history: {self.label!r} is {self.size:,} bytes, over the limit of {cap:,} for a "
                             "document read whole (raise it with max_bytes= or CALSIM_MAX_FILE_BYTES)")
        if self.data is not None:
            return self.data
        fd = self._open_fd()
        os.lseek(fd, 0, os.SEEK_SET)
        return read_all(fd, self.size, cap, "history", self.label)

    def pread(self, offset: int, n: int) -> bytes:
        """At most ``n`` bytes at ``offset`` (Parquet's footer and page headers)."""
        if self.data is not None:
            return self.data[offset:offset + n]
        try:
            return os.pread(self._open_fd(), n, offset)
        except OSError as exc:
            raise InputError(f"history: cannot read {self.label!r} ({exc.strerror or type(exc).__name__})") from None


def too_many(label: str, have: str, cap: int) -> InputError:
    return InputError(f"history: {label}: {have}, over the limit of {cap:,} rows (raise it with max_rows= or the "
                      f"{ROWS_ENV} environment variable)")


def lines(src: Source, max_lines: int) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line, read 1 MiB at a time; a line is at most :data:`MAX_LINE_BYTES`.

    Lines end at ``\\n`` only (a U+2028 inside a JSON string is no line
    break); each must be UTF-8 without NUL bytes.
    """
    n = 0
    rest = b""
    first = True
    for chunk in src.chunks():
        if first:
            chunk = chunk[3:] if chunk.startswith(codecs.BOM_UTF8) else chunk
            first = False
        nul = chunk.find(b"\x00")
        if nul != -1:  # refused as it arrives (a file of zeros has no line break to wait for)
            line = n + rest.count(b"\n") + chunk.count(b"\n", 0, nul) + 1
            raise InputError(f"history: {src.label} line {line}: NUL byte (a run history is text)")
        parts = (rest + chunk if rest else chunk).split(b"\n")
        rest = parts.pop()
        if len(rest) > MAX_LINE_BYTES:
            raise InputError(f"history: {src.label} line {n + len(parts) + 1}: longer than {MAX_LINE_BYTES:,} bytes "
                             "(allowed: lines of at most that many)")
        if n + len(parts) > max_lines:
            raise too_many(src.label, f"more than {max_lines:,} lines", max_lines)
        for raw in parts:
            n += 1
            yield n, _line_text(raw, src.label, n)
    if rest:
        n += 1
        if n > max_lines:
            raise too_many(src.label, f"more than {max_lines:,} lines", max_lines)
        yield n, _line_text(rest, src.label, n)


def _line_text(raw: bytes, label: str, n: int) -> str:
    if len(raw) > MAX_LINE_BYTES:
        raise InputError(f"history: {label} line {n}: longer than {MAX_LINE_BYTES:,} bytes "
                         "(allowed: lines of at most that many)")
    nul = raw.find(b"\x00")
    if nul != -1:
        raise InputError(f"history: {label} line {n}: NUL byte at column {nul + 1} (a run history is text)")
    try:
        return raw.decode("utf-8").removesuffix("\r")
    except UnicodeDecodeError as exc:
        raise InputError(f"history: {label} line {n}: not UTF-8 text "
                         f"({exc.reason} at column {exc.start + 1})") from None


def check_bytes(data: bytes, label: str) -> None:
    """Refuse a NUL byte or invalid UTF-8 in ``data``, naming the line; 1 MiB decoded at a time."""
    nul = data.find(b"\x00")
    if nul != -1:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError(f"history: {label} line {line}: NUL byte (a run history is text)")
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    for i in range(0, len(data), CHUNK_BYTES):
        try:
            decoder.decode(view[i:i + CHUNK_BYTES], final=i + CHUNK_BYTES >= len(data))
        except UnicodeDecodeError:
            # Where exactly: decode this piece again from the character that starts at or before it.
            j = i
            while j > 0 and i - j < 3 and data[j] & 0xC0 == 0x80:
                j -= 1
            try:
                bytes(view[j:i + CHUNK_BYTES + 4]).decode("utf-8")
                at, reason = len(data), "unexpected end of data"
            except UnicodeDecodeError as exc:
                at, reason = j + exc.start, exc.reason
            line = data.count(b"\n", 0, at) + 1
            raise InputError(f"history: {label} line {line}: not UTF-8 text ({reason} at byte {at:,})") from None


def whole_text(src: Source, cap: int) -> str:
    data = src.whole(cap)
    check_bytes(data, src.label)
    return data.decode("utf-8-sig")
