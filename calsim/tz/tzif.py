"""TZif files (RFC 8536, RFC 9636) as columnar transition tables: read, checked, and written for what-if zones.

A zone is turned into one :class:`ZoneTable`: a sorted ``int64`` array of UTC
transition instants (epoch seconds) and an ``int32`` array of the UTC offsets
in force between them. Everything calsim resolves goes through these arrays
with ``numpy.searchsorted``; no ``datetime`` is built per time.

Two details matter for exactness:

* Slim TZif files (the PyPI ``tzdata`` wheels are slim) stop their explicit
  transitions at the last rule change and rely on the POSIX TZ string in the
  footer for every later year (RFC 8536 §3.3). The footer is therefore parsed
  (:mod:`calsim.tz.posix`) and its transitions generated, as far ahead as a
  caller needs (at most through :data:`MAX_RULE_YEAR`).
* Transitions that do not change the UTC offset (a change of abbreviation or
  of the isdst flag only) move no wall clock, so they are dropped.

A TZif file may come from an untrusted directory or wheel, so everything the
header announces is checked before it is used (counts, sizes, indices, time
range, footer fields): a bad file is one :class:`CorruptReleaseError` naming
the zone and what is wrong, never a numpy error, a huge allocation or a loop.

Examples
--------
>>> from calsim.tz.tzif import ZoneTable, write_tzif
>>> t = ZoneTable.from_bytes("Test/Zone", write_tzif(np.array([0]), np.array([3600, 7200]), "<+02>-2"))
>>> t.offset_at_utc(np.array([-1, 0])).tolist()
[3600, 7200]
>>> parse_tzif(b"NOTTZIF", "Bad/Zone")
Traceback (most recent call last):
...
calsim.errors.CorruptReleaseError: tzif: 'Bad/Zone' is not a TZif file (starts with b'NOTT', expected b'TZif')
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ..errors import CorruptReleaseError, InputError
from .posix import MAX_TZ_STRING, PosixTZ, cut, days_from_civil

__all__ = ["ZoneTable", "parse_tzif", "write_tzif", "MAX_TZIF_BYTES", "MAX_RULE_YEAR", "FIRST_TIME", "END_TIME"]

# A real TZif file is under 5 KB (the largest of tzdata 2026f, fat, is 3.9 KB).
MAX_TZIF_BYTES = 1 << 20
# Footer rules are followed through this year and no further: calsim's times
# are years 1..9999 (datetime), whose instants reach into 10000, and callers
# ask one year beyond their last instant. 8,000 years of a DST rule are 16,000
# transitions (200 KB); beyond, a table would grow without bound.
MAX_RULE_YEAR = 10_001


# TZif parsing follows RFC 9636 §3, which obsoletes RFC 8536 and adds version 4.
_HEADER = struct.Struct(">4sc15x6l")
_VERSIONS = (b"\x00", b"2", b"3", b"4")
# Upper bounds on the header's counts, checked as tz's localtime.c
# (tzloadbody: "0 <= typecnt && typecnt < TZ_MAX_TYPES", 256), times and leap
# seconds generous multiples of tzfile.h's TZ_MAX_TIMES 2000 and TZ_MAX_LEAPS
# 50: a header can neither announce absurd sizes nor make a negative count
# read "the rest of the buffer" (numpy's count=-1). Real files: at most 310
# transitions, 18 types, 27 leap seconds.
_MAX_COUNTS = {"isutcnt": 255, "isstdcnt": 255, "leapcnt": 1000, "timecnt": 10_000, "typecnt": 255, "charcnt": 4096}
# Transitions and leap seconds are refused outside 1800..2500: the earliest
# in tzdata is 1834 (a distribution's build with backzone), the latest 2087.
# The bound also keeps ``seconds * 10**6`` inside int64 for the resolver, and
# what-if overrides (calsim.tz.override) check their instant against it, as the
# file they write must pass these checks.
FIRST_TIME = days_from_civil(1800, 1, 1) * 86400
END_TIME = days_from_civil(2501, 1, 1) * 86400
# Some zic versions wrote a first transition at -2**59 (BIG_BANG in zic.c)
# meaning "from the beginning of time": read as the type in force before any
# transition, not as a time.
_BIG_BANG = -(1 << 59)
# RFC 9636 §3.2: utoff SHOULD lie in -89999..93599 (between -25 and 26 hours).
_MIN_UTOFF, _MAX_UTOFF = -89999, 93599
_MAX_FOOTER = MAX_TZ_STRING


@dataclass(frozen=True)
class _RawTZif:
    trans_utc: np.ndarray  # int64 seconds
    trans_type: np.ndarray  # index into utoff/isdst
    utoff: np.ndarray  # int32 seconds east
    isdst: np.ndarray  # bool
    footer: str | None
    rule: PosixTZ | None = None  # the parsed footer
    initial_type: int = 0  # the type in force before the first transition


def _iso(seconds: int) -> str:
    text = str(np.datetime64(int(seconds), "s")) if abs(int(seconds)) < 1 << 62 else "far out of range"
    return f"{int(seconds)} ({text})"


def _read_block(data: bytes, pos: int, v1: bool, name: str, use: bool) -> tuple[_RawTZif | None, int]:
    """Read (``use``) or skip the data block at ``pos``; returns it and the position after it.

    The version 1 block of a version 2+ file is only skipped (RFC 9636 §4:
    readers should ignore it), as tz's localtime.c ``tzloadbody`` does.
    """
    where = f"tzif: {cut(name)}"
    try:
        magic, _version, *counts = _HEADER.unpack_from(data, pos)
    except struct.error:
        raise CorruptReleaseError(
            f"{where} is truncated at byte {pos} (expected a 44-byte TZif header, RFC 8536 §3.1)"
        ) from None
    if magic != b"TZif":
        raise CorruptReleaseError(
            f"{where} is not a TZif file (bytes {pos}..{pos + 4} are {magic!r}, expected b'TZif')"
        )
    for field, value in zip(_MAX_COUNTS, counts):
        if not 0 <= value <= _MAX_COUNTS[field]:
            raise CorruptReleaseError(
                f"{where} declares {field}={value} in the header at byte {pos} "
                f"(allowed 0..{_MAX_COUNTS[field]}, RFC 9636 §3.1)"
            )
    isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt = counts
    pos += _HEADER.size
    tsize = 4 if v1 else 8
    need = timecnt * tsize + timecnt + typecnt * 6 + charcnt + leapcnt * (tsize + 4) + isstdcnt + isutcnt
    if len(data) < pos + need:
        raise CorruptReleaseError(
            f"{where} is truncated: its header announces {need} data bytes after byte {pos}, "
            f"the file has {len(data) - pos}"
        )
    if not use:
        return None, pos + need
    if typecnt == 0:
        raise CorruptReleaseError(f"{where} declares typecnt=0 (at least 1 local time type is required)")
    for field, value in (("isstdcnt", isstdcnt), ("isutcnt", isutcnt)):
        if value not in (0, typecnt):
            raise CorruptReleaseError(
                f"{where} declares {field}={value} (allowed 0 or typecnt={typecnt}, RFC 9636 §3.1)"
            )
    trans = np.frombuffer(data, dtype=">i4" if v1 else ">i8", count=timecnt, offset=pos).astype(np.int64)
    pos += timecnt * tsize
    idx = np.frombuffer(data, dtype=np.uint8, count=timecnt, offset=pos).astype(np.intp)
    pos += timecnt
    ttinfo = np.frombuffer(
        data, dtype=np.dtype([("utoff", ">i4"), ("isdst", "u1"), ("abbr", "u1")]), count=typecnt, offset=pos
    )
    pos += typecnt * 6
    chars_end = pos + charcnt
    pos = chars_end
    leaps = np.frombuffer(
        data, dtype=np.dtype([("t", ">i4" if v1 else ">i8"), ("corr", ">i4")]), count=leapcnt, offset=pos
    )
    pos += leapcnt * (tsize + 4)
    flags = np.frombuffer(data, dtype=np.uint8, count=isstdcnt + isutcnt, offset=pos)
    pos += isstdcnt + isutcnt

    if timecnt and int(idx.max()) >= typecnt:
        i = int(np.argmax(idx >= typecnt))
        raise CorruptReleaseError(
            f"{where} has transition {i} of type index {int(idx[i])} (allowed 0..{typecnt - 1})"
        )
    initial = 0
    if timecnt and trans[0] == _BIG_BANG:
        initial, trans, idx = int(idx[0]), trans[1:], idx[1:]
    if len(trans) > 1 and np.any(trans[1:] <= trans[:-1]):
        i = int(np.argmax(trans[1:] <= trans[:-1])) + 1
        raise CorruptReleaseError(
            f"{where} has transition times that are not strictly increasing "
            f"(transition {i} at {_iso(trans[i])} follows {_iso(trans[i - 1])})"
        )
    if len(trans) and (trans[0] < FIRST_TIME or trans[-1] >= END_TIME):
        i, t = (0, trans[0]) if trans[0] < FIRST_TIME else (len(trans) - 1, trans[-1])
        raise CorruptReleaseError(f"{where} has transition {i} at {_iso(t)} (allowed years 1800..2500)")
    utoff = ttinfo["utoff"].astype(np.int32)
    bad = (utoff < _MIN_UTOFF) | (utoff > _MAX_UTOFF)
    if bad.any():
        i = int(np.argmax(bad))
        raise CorruptReleaseError(
            f"{where} has local time type {i} with UTC offset {int(utoff[i])} s "
            f"(allowed {_MIN_UTOFF}..{_MAX_UTOFF}, RFC 9636 §3.2)"
        )
    if ttinfo["isdst"].max() > 1:
        i = int(np.argmax(ttinfo["isdst"] > 1))
        raise CorruptReleaseError(
            f"{where} has local time type {i} with isdst={int(ttinfo['isdst'][i])} (allowed 0 or 1)"
        )
    if int(ttinfo["abbr"].max()) >= charcnt:
        i = int(np.argmax(ttinfo["abbr"] >= charcnt))
        raise CorruptReleaseError(
            f"{where} has local time type {i} with abbreviation index {int(ttinfo['abbr'][i])} "
            f"(allowed 0..{charcnt - 1}, the size of its abbreviation table)"
        )
    if data[chars_end - 1] != 0:
        raise CorruptReleaseError(f"{where} has an abbreviation table that does not end with NUL (RFC 9636 §3.2)")
    if leapcnt:
        lt, corr = leaps["t"].astype(np.int64), leaps["corr"].astype(np.int64)
        # As tz's localtime.c: occurrences strictly increase and each correction
        # differs from the previous one by at most 1 (RFC 9636 §3.2).
        if (lt[0] < FIRST_TIME or lt[-1] >= END_TIME or np.any(lt[1:] <= lt[:-1])
                or np.any(np.abs(np.diff(corr)) > 1)):
            raise CorruptReleaseError(
                f"{where} has {leapcnt} leap-second records that are not increasing 1800..2500 "
                "with corrections changing by at most 1 (RFC 9636 §3.2)"
            )
    if isstdcnt + isutcnt and flags.max() > 1:
        raise CorruptReleaseError(f"{where} has standard/wall or UT/local indicators other than 0 or 1")
    raw = _RawTZif(trans, idx, utoff, ttinfo["isdst"].astype(bool), None, None, initial)
    return raw, pos


def parse_tzif(data: bytes, name: str = "<bytes>") -> _RawTZif:
    """Parse and check TZif bytes, preferring the 64-bit v2+ block and its footer.

    >>> parse_tzif(b"TZif2" + bytes(15) + (-1).to_bytes(4, "big", signed=True) + bytes(20), "Bad/Zone")
    Traceback (most recent call last):
    ...
    calsim.errors.CorruptReleaseError: tzif: 'Bad/Zone' declares isutcnt=-1 in the header at byte 0 (allowed 0..255...)
    """
    where = f"tzif: {cut(name)}"
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CorruptReleaseError(f"{where}: expected TZif bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) > MAX_TZIF_BYTES:
        raise CorruptReleaseError(
            f"{where} is {len(data)} bytes (allowed up to {MAX_TZIF_BYTES}; a TZif file is a few KB)"
        )
    if len(data) < 5 or data[:4] != b"TZif":
        raise CorruptReleaseError(f"{where} is not a TZif file (starts with {data[:4]!r}, expected b'TZif')")
    version = data[4:5]
    if version not in _VERSIONS:
        raise CorruptReleaseError(
            f"{where} has version byte {version!r} (allowed NUL, '2', '3' or '4', RFC 9636 §3.1)"
        )
    if version == b"\x00":
        raw, _ = _read_block(data, 0, True, name, use=True)
        assert raw is not None
        return raw
    _, pos = _read_block(data, 0, True, name, use=False)
    raw, pos = _read_block(data, pos, False, name, use=True)
    assert raw is not None
    footer = rule = None
    if pos < len(data):
        # RFC 9636 §3.3: the footer is a TZ string between two newlines.
        if data[pos] != 0x0A:
            raise CorruptReleaseError(
                f"{where} has {data[pos:pos + 8]!r}... at byte {pos} where the footer's newline belongs "
                "(RFC 9636 §3.3)"
            )
        end = data.find(b"\n", pos + 1, pos + 2 + _MAX_FOOTER)
        if end < 0:
            if len(data) - pos - 1 > _MAX_FOOTER:
                raise CorruptReleaseError(f"{where} has a footer longer than {_MAX_FOOTER} bytes at byte {pos}")
            raise CorruptReleaseError(f"{where} has an unterminated footer at byte {pos}")
        try:
            footer = data[pos + 1 : end].decode("ascii") or None
        except UnicodeDecodeError:
            raise CorruptReleaseError(
                f"{where} has a footer that is not ASCII ({data[pos + 1 : min(end, pos + 41)]!r}, RFC 9636 §3.3)"
            ) from None
        if footer is not None:
            rule = PosixTZ.parse(footer, f"{where} footer")
    return _RawTZif(raw.trans_utc, raw.trans_type, raw.utoff, raw.isdst, footer, rule, raw.initial_type)


class ZoneTable:
    """The UTC offsets of one zone as two columns.

    ``offsets[i]`` is in force over ``[utc[i-1], utc[i])`` (``utc[-1]`` being
    minus infinity), so ``offsets`` has one more element than ``utc``. The
    table covers explicit transitions plus footer-rule transitions through
    ``until_year``; :meth:`covering` extends it when a caller needs later years
    (up to :data:`MAX_RULE_YEAR`).
    """

    def __init__(self, name: str, raw: _RawTZif, until_year: int = 2100):
        self.name = name
        self._raw = raw
        if raw.rule is not None:
            self.footer: PosixTZ | None = raw.rule
        else:
            self.footer = PosixTZ.parse(raw.footer, f"tzif: {cut(name)} footer") if raw.footer else None
        self.until_year = self._checked_year(until_year)
        self.utc, self.offsets = self._build(self.until_year)

    @classmethod
    def from_bytes(cls, name: str, data: bytes) -> ZoneTable:
        return cls(name, parse_tzif(data, name))

    def _checked_year(self, year: int) -> int:
        year = int(year)
        if year > MAX_RULE_YEAR and self.footer is not None and self.footer.has_dst:
            raise InputError(
                f"year: {year} is past {MAX_RULE_YEAR}, the last year calsim follows the DST rule "
                f"{cut(self.footer.text)} of zone {cut(self.name)} to (times must lie in years 1..9999)"
            )
        return year

    def _build(self, until_year: int) -> tuple[np.ndarray, np.ndarray]:
        raw = self._raw
        # Before the first transition the first local time type applies
        # (RFC 8536 §3.2: "time type 0"; zic's BIG_BANG transition names another).
        offsets = np.concatenate([raw.utoff[raw.initial_type : raw.initial_type + 1], raw.utoff[raw.trans_type]])
        utc = raw.trans_utc
        tz = self.footer
        if tz is not None:
            last = int(utc[-1]) if len(utc) else None
            if tz.has_dst:
                first_year = 1970 if last is None else _year_of(last) - 1
                gen_utc, gen_off = tz.transitions_between(first_year, until_year)
                order = np.argsort(gen_utc, kind="stable")
                gen_utc, gen_off = gen_utc[order], gen_off[order]
                if last is not None:
                    later = gen_utc > last
                    gen_utc, gen_off = gen_utc[later], gen_off[later]
                # A rule such as "EST5EDT,0/0,J365/25" (permanent DST written as
                # a year-long DST period) makes one year's end and the next
                # year's start coincide; the later one in rule order wins.
                if len(gen_utc) > 1:
                    final = np.append(gen_utc[1:] != gen_utc[:-1], True)
                    gen_utc, gen_off = gen_utc[final], gen_off[final]
                utc = np.concatenate([utc, gen_utc])
                offsets = np.concatenate([offsets, gen_off])
                if last is None and len(offsets) > 1:
                    # No explicit transition: before the first generated one
                    # the rule's other offset is in force.
                    offsets[0] = tz.std_offset if offsets[1] != tz.std_offset else tz.dst_offset
            elif last is None:
                offsets = np.array([tz.std_offset], dtype=np.int32)
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
        """Make sure the table holds footer transitions through ``year``; returns self.

        A year past :data:`MAX_RULE_YEAR` is an :class:`InputError` for a zone
        whose footer has DST rules (a fixed-offset footer needs no table).
        """
        if year > self.until_year and self.footer is not None and self.footer.has_dst:
            self.until_year = self._checked_year(year)
            self.utc, self.offsets = self._build(self.until_year)
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
    if len(types) > _MAX_COUNTS["typecnt"]:  # a transition's type index is one byte
        raise CorruptReleaseError(
            f"tzif: cannot write {len(types)} distinct UTC offsets (allowed up to {_MAX_COUNTS['typecnt']})"
        )
    abbrs, abbr_at = b"", []
    for o in types:
        sign = "+" if o >= 0 else "-"
        h, m = divmod(abs(o) // 60, 60)
        abbr = f"{sign}{h:02d}{m:02d}".encode() + b"\x00"
        if len(abbrs) + len(abbr) > 256:  # the index is one byte: past 42 offsets, share the first
            abbr_at.append(0)
            continue
        abbr_at.append(len(abbrs))
        abbrs += abbr
    ttinfos = b"".join(struct.pack(">lBB", o, 0, abbr_at[i]) for i, o in enumerate(types))
    times = b"".join(struct.pack(">q", int(t)) for t in utc)
    # Type 0 is the offset before the first transition (RFC 8536 §3.2).
    idx = bytes(types.index(o) for o in offs[1:])
    header = _HEADER.pack(b"TZif", b"2", 0, 0, 0, len(utc), len(types), len(abbrs))
    v1 = _HEADER.pack(b"TZif", b"2", 0, 0, 0, 0, 1, 1) + struct.pack(">lBB", offs[0], 0, 0) + b"\x00"
    return v1 + header + times + idx + ttinfos + abbrs + b"\n" + footer.encode("ascii") + b"\n"
