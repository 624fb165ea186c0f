"""TZif files (RFC 8536) and their POSIX TZ footer, as columnar transition tables.

A zone is turned into one :class:`ZoneTable`: a sorted ``int64`` array of UTC
transition instants (epoch seconds) and an ``int32`` array of the UTC offsets
in force between them. Everything calsim resolves goes through these arrays
with ``numpy.searchsorted``; no ``datetime`` is built per time.

Two details matter for exactness:

* Slim TZif files (the PyPI ``tzdata`` wheels are slim) stop their explicit
  transitions at the last rule change and rely on the POSIX TZ string in the
  footer for every later year (RFC 8536 §3.3). The footer is therefore parsed
  and its transitions generated year by year, as far ahead as a caller needs.
* Transitions that do not change the UTC offset (a change of abbreviation or
  of the isdst flag only) move no wall clock, so they are dropped.

Examples
--------
>>> from calsim.tzif import PosixTZ
>>> tz = PosixTZ.parse("EST5EDT,M3.2.0,M11.1.0")
>>> tz.std_offset, tz.dst_offset
(-18000, -14400)
>>> [t for t, _ in tz.transitions(2026)]  # 2026-03-08T07:00Z, 2026-11-01T06:00Z
[1772953200, 1793512800]
"""

from __future__ import annotations

import calendar
import re
import struct
from dataclasses import dataclass

import numpy as np

from .errors import CorruptReleaseError

__all__ = ["PosixTZ", "ZoneTable", "parse_tzif", "write_tzif"]

_DAYS_BEFORE_MONTH = (0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
_EPOCH_ORDINAL = 719163  # date(1970, 1, 1).toordinal()


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date."""
    leap = 1 if (month > 2 and calendar.isleap(year)) else 0
    y = year - 1
    ordinal = y * 365 + y // 4 - y // 100 + y // 400 + _DAYS_BEFORE_MONTH[month] + leap + day
    return ordinal - _EPOCH_ORDINAL


# ---------------------------------------------------------------------------
# POSIX TZ strings (POSIX.1-2017 §8.3, with the RFC 8536 §3.3.1 extensions:
# hours up to 167 and negative transition times).
# ---------------------------------------------------------------------------

_NAME = r"(?:<[+\-0-9A-Za-z]+>|[A-Za-z]{3,})"
_OFFSET = r"[+\-]?\d{1,3}(?::\d{1,2}(?::\d{1,2})?)?"
_DATE = r"(?:J\d{1,3}|\d{1,3}|M\d{1,2}\.\d\.\d)"
_TZ_RE = re.compile(
    rf"^(?P<std>{_NAME})(?P<stdoff>{_OFFSET})"
    rf"(?:(?P<dst>{_NAME})(?P<dstoff>{_OFFSET})?"
    rf"(?:,(?P<start>{_DATE})(?:/(?P<starttime>{_OFFSET}))?"
    rf",(?P<end>{_DATE})(?:/(?P<endtime>{_OFFSET}))?)?)?$"
)


def _parse_hms(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    parts = [int(p) for p in text.lstrip("+-").split(":")]
    parts += [0] * (3 - len(parts))
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])


@dataclass(frozen=True)
class _RuleDate:
    """One POSIX date rule: ``Jn`` (1..365, no Feb 29), ``n`` (0..365) or ``Mm.w.d``."""

    kind: str  # "J", "n" or "M"
    a: int
    b: int = 0
    c: int = 0

    @classmethod
    def parse(cls, text: str) -> _RuleDate:
        if text.startswith("J"):
            return cls("J", int(text[1:]))
        if text.startswith("M"):
            m, w, d = (int(x) for x in text[1:].split("."))
            return cls("M", m, w, d)
        return cls("n", int(text))

    def day(self, year: int) -> int:
        """Days since the epoch of this rule's date in ``year``."""
        jan1 = _days_from_civil(year, 1, 1)
        if self.kind == "J":
            # Julian day 1..365; February 29 is never counted, so day 60 is
            # always March 1.
            n = self.a
            if calendar.isleap(year) and n >= 60:
                n += 1
            return jan1 + n - 1
        if self.kind == "n":
            return jan1 + self.a  # zero-based, counts February 29
        month, week, weekday = self.a, self.b, self.c
        first = _days_from_civil(year, month, 1)
        # 1970-01-01 was a Thursday (weekday 4 with Sunday = 0).
        first_wd = (first + 4) % 7
        day = first + (weekday - first_wd) % 7 + 7 * (week - 1)
        if week == 5:
            days_in_month = calendar.monthrange(year, month)[1]
            while day >= first + days_in_month:
                day -= 7
        return day


@dataclass(frozen=True)
class PosixTZ:
    """A parsed POSIX TZ string; offsets are seconds east of UTC (so ``EST5`` is -18000)."""

    text: str
    std_offset: int
    dst_offset: int | None = None
    start: _RuleDate | None = None
    start_time: int = 7200
    end: _RuleDate | None = None
    end_time: int = 7200

    @classmethod
    def parse(cls, text: str) -> PosixTZ:
        m = _TZ_RE.match(text)
        if m is None:
            raise CorruptReleaseError(
                f"tz_string: cannot parse POSIX TZ string {text!r} "
                "(expected e.g. 'EST5EDT,M3.2.0,M11.1.0' per RFC 8536 §3.3)"
            )
        # POSIX offsets count hours *west* of Greenwich: "EST5" is UTC-5.
        std = -_parse_hms(m["stdoff"])
        if m["dst"] is None:
            return cls(text, std)
        dst = -_parse_hms(m["dstoff"]) if m["dstoff"] else std + 3600
        if m["start"] is None:
            raise CorruptReleaseError(
                f"tz_string: POSIX TZ string {text!r} names a DST zone without rules; "
                "TZif footers must carry explicit ',start,end' rules (RFC 8536 §3.3)"
            )
        return cls(
            text,
            std,
            dst,
            _RuleDate.parse(m["start"]),
            _parse_hms(m["starttime"]) if m["starttime"] else 7200,
            _RuleDate.parse(m["end"]),
            _parse_hms(m["endtime"]) if m["endtime"] else 7200,
        )

    @property
    def has_dst(self) -> bool:
        return self.dst_offset is not None

    def transitions(self, year: int) -> list[tuple[int, int]]:
        """The two transitions of ``year`` as ``(utc_seconds, offset_after)``, in rule order.

        The start time is read in standard time and the end time in daylight
        time, the local time in force just before each change (POSIX).
        """
        if self.dst_offset is None:
            return []
        assert self.start is not None and self.end is not None
        start = self.start.day(year) * 86400 + self.start_time - self.std_offset
        end = self.end.day(year) * 86400 + self.end_time - self.dst_offset
        return [(start, self.dst_offset), (end, self.std_offset)]


# ---------------------------------------------------------------------------
# TZif parsing (RFC 8536 §3)
# ---------------------------------------------------------------------------

_HEADER = struct.Struct(">4sc15x6l")


@dataclass(frozen=True)
class _RawTZif:
    trans_utc: np.ndarray  # int64 seconds
    trans_type: np.ndarray  # index into utoff/isdst
    utoff: np.ndarray  # int32 seconds east
    isdst: np.ndarray  # bool
    footer: str | None


def _read_block(data: bytes, pos: int, v1: bool, name: str) -> tuple[_RawTZif, int]:
    try:
        magic, _version, isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt = _HEADER.unpack_from(
            data, pos
        )
    except struct.error:
        raise CorruptReleaseError(
            f"tzif: {name!r} is truncated at byte {pos} (expected a 44-byte TZif header, RFC 8536 §3.1)"
        ) from None
    if magic != b"TZif":
        raise CorruptReleaseError(
            f"tzif: {name!r} is not a TZif file (bytes {pos}..{pos + 4} are {magic!r}, expected b'TZif')"
        )
    if typecnt == 0:
        raise CorruptReleaseError(f"tzif: {name!r} declares typecnt=0 (at least 1 local time type is required)")
    pos += _HEADER.size
    tsize = 4 if v1 else 8
    need = timecnt * tsize + timecnt + typecnt * 6 + charcnt + leapcnt * (tsize + 4) + isstdcnt + isutcnt
    if len(data) < pos + need:
        raise CorruptReleaseError(
            f"tzif: {name!r} is truncated: its header announces {need} data bytes after byte {pos}, "
            f"the file has {len(data) - pos}"
        )
    trans = np.frombuffer(data, dtype=">i4" if v1 else ">i8", count=timecnt, offset=pos).astype(np.int64)
    pos += timecnt * tsize
    idx = np.frombuffer(data, dtype=np.uint8, count=timecnt, offset=pos).astype(np.int64)
    pos += timecnt
    ttinfo = np.frombuffer(
        data, dtype=np.dtype([("utoff", ">i4"), ("isdst", "u1"), ("abbr", "u1")]), count=typecnt, offset=pos
    )
    pos += typecnt * 6 + charcnt + leapcnt * (tsize + 4) + isstdcnt + isutcnt
    if timecnt and int(idx.max()) >= typecnt:
        raise CorruptReleaseError(
            f"tzif: {name!r} has a transition type index {int(idx.max())} (allowed 0..{typecnt - 1})"
        )
    if timecnt > 1 and np.any(np.diff(trans) <= 0):
        raise CorruptReleaseError(f"tzif: {name!r} has transition times that are not strictly increasing")
    raw = _RawTZif(trans, idx, ttinfo["utoff"].astype(np.int32), ttinfo["isdst"].astype(bool), None)
    return raw, pos


def parse_tzif(data: bytes, name: str = "<bytes>") -> _RawTZif:
    """Parse TZif bytes, preferring the 64-bit v2+ block and its footer."""
    if len(data) < 5 or data[:4] != b"TZif":
        raise CorruptReleaseError(
            f"tzif: {name!r} is not a TZif file (starts with {bytes(data[:4])!r}, expected b'TZif')"
        )
    version = data[4:5]
    v1, pos = _read_block(data, 0, True, name)
    if version in (b"\x00",):
        return v1
    raw, pos = _read_block(data, pos, False, name)
    footer = None
    if len(data) > pos and data[pos : pos + 1] == b"\n":
        end = data.find(b"\n", pos + 1)
        if end < 0:
            raise CorruptReleaseError(f"tzif: {name!r} has an unterminated footer at byte {pos}")
        footer = data[pos + 1 : end].decode("ascii", "replace") or None
    return _RawTZif(raw.trans_utc, raw.trans_type, raw.utoff, raw.isdst, footer)


class ZoneTable:
    """The UTC offsets of one zone as two columns.

    ``offsets[i]`` is in force over ``[utc[i-1], utc[i])`` (``utc[-1]`` being
    minus infinity), so ``offsets`` has one more element than ``utc``. The
    table covers explicit transitions plus footer-rule transitions through
    ``until_year``; :meth:`covering` extends it when a caller needs later years.
    """

    def __init__(self, name: str, raw: _RawTZif, until_year: int = 2100):
        self.name = name
        self._raw = raw
        self.footer = PosixTZ.parse(raw.footer) if raw.footer else None
        self.until_year = until_year
        self.utc, self.offsets = self._build(until_year)

    @classmethod
    def from_bytes(cls, name: str, data: bytes) -> ZoneTable:
        return cls(name, parse_tzif(data, name))

    def _build(self, until_year: int) -> tuple[np.ndarray, np.ndarray]:
        raw = self._raw
        # Before the first transition the first local time type applies
        # (RFC 8536 §3.2: "time type 0").
        offsets = [int(raw.utoff[0])] + [int(raw.utoff[i]) for i in raw.trans_type]
        utc = [int(t) for t in raw.trans_utc]
        tz = self.footer
        if tz is not None:
            last = utc[-1] if utc else None
            if tz.has_dst:
                first_year = 1970 if last is None else _year_of(last) - 1
                generated: list[tuple[int, int]] = []
                for year in range(first_year, until_year + 1):
                    generated.extend(tz.transitions(year))
                # A rule such as "EST5EDT,0/0,J365/25" (permanent DST written as
                # a year-long DST period) makes one year's end and the next
                # year's start coincide; the later one in rule order wins.
                generated.sort(key=lambda p: p[0])
                for t, off in generated:
                    if last is not None and t <= last:
                        continue
                    if utc and t == utc[-1]:
                        offsets[-1] = off
                        continue
                    utc.append(t)
                    offsets.append(off)
                if last is None and len(offsets) > 1:
                    # No explicit transition: before the first generated one
                    # the rule's other offset is in force.
                    offsets[0] = tz.std_offset if offsets[1] != tz.std_offset else tz.dst_offset
            elif last is None:
                offsets = [tz.std_offset]
            else:
                # After the last transition the footer governs (RFC 8536 §3.3);
                # a consistent file agrees with its last time type anyway.
                offsets[-1] = tz.std_offset
        utc_a = np.asarray(utc, dtype=np.int64)
        off_a = np.asarray(offsets, dtype=np.int32)
        # Drop transitions that do not move the wall clock.
        keep = off_a[1:] != off_a[:-1]
        return utc_a[keep], np.concatenate([off_a[:1], off_a[1:][keep]])

    def covering(self, year: int) -> ZoneTable:
        """Make sure the table holds footer transitions through ``year``; returns self."""
        if year > self.until_year and self.footer is not None and self.footer.has_dst:
            self.until_year = year
            self.utc, self.offsets = self._build(year)
        return self

    def offset_at_utc(self, utc_seconds: np.ndarray) -> np.ndarray:
        """The UTC offset (seconds) in force at each UTC instant (epoch seconds)."""
        return self.offsets[np.searchsorted(self.utc, utc_seconds, side="right")]

    def __repr__(self) -> str:
        return f"ZoneTable({self.name!r}, {len(self.utc)} transitions through {self.until_year})"


def _year_of(epoch_seconds: int) -> int:
    return int(np.datetime64(int(epoch_seconds), "s").astype("datetime64[Y]").astype(int)) + 1970


def write_tzif(utc: np.ndarray, offsets: np.ndarray, footer: str = "") -> bytes:
    """TZif v2 bytes (RFC 8536) for a transition table: ``offsets[i]`` before ``utc[i]``, the last after.

    Used to build what-if zones; abbreviations are generated (``<+0530>``
    style) and isdst is 0, as only UTC offsets matter to calsim. The v1 block
    is empty, as RFC 8536 allows for v2+ readers.

    >>> raw = write_tzif(np.array([0]), np.array([3600, 7200]), "<+02>-2")
    >>> t = ZoneTable.from_bytes("Test/Zone", raw)
    >>> t.utc.tolist(), t.offsets.tolist()
    ([0], [3600, 7200])
    """
    offs = [int(o) for o in offsets]
    types: list[int] = []
    for o in offs:
        if o not in types:
            types.append(o)
    abbrs, abbr_at = b"", []
    for o in types:
        abbr_at.append(len(abbrs))
        sign = "+" if o >= 0 else "-"
        h, m = divmod(abs(o) // 60, 60)
        abbrs += f"{sign}{h:02d}{m:02d}".encode() + b"\x00"
    ttinfos = b"".join(struct.pack(">lBB", o, 0, abbr_at[i]) for i, o in enumerate(types))
    times = b"".join(struct.pack(">q", int(t)) for t in utc)
    # Type 0 is the offset before the first transition (RFC 8536 §3.2).
    idx = bytes(types.index(o) for o in offs[1:])
    header = _HEADER.pack(b"TZif", b"2", 0, 0, 0, len(utc), len(types), len(abbrs))
    v1 = _HEADER.pack(b"TZif", b"2", 0, 0, 0, 0, 1, 1) + struct.pack(">lBB", offs[0], 0, 0) + b"\x00"
    return v1 + header + times + idx + ttinfos + abbrs + b"\n" + footer.encode("ascii") + b"\n"
