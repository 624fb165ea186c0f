"""glibc's ``localtime_r`` and ``mktime`` for one zone: what a C scheduler (systemd) reads the clock with.

A port of ``time/mktime.c`` of glibc 2.36 as Debian 12 ships it (the
``release/2.36/master`` branch, whose ``__mktime_internal`` has the
"assume one-hour DST" fallback of gnulib 2022), because systemd's calendar
walk (:mod:`calsim.rules.calendarspec`) normalises every candidate time
with ``mktime(tm_isdst = -1)`` and its DST behaviour follows from how
glibc answers there:

* **the guess.** ``mktime`` starts from the UTC offset its previous call
  found (``static localtime_offset``, mktime.c ``__mktime64``) and probes
  ``localtime`` until the wall time matches. A repeated wall time is
  therefore read in the pass whose offset the *previous* call used:
  :class:`LocalTime` keeps that state (:attr:`LocalTime.offset`);
* **a wall time in a gap** makes the probes oscillate; glibc stops on the
  probe whose ``tm_isdst`` is set when only one of the two is
  (mktime.c lines 397-412, ``dst2 <= (tm.tm_isdst != 0)``), else on the
  guess's own. So the gap's time is moved to the DST side of the gap:
  forward in New York (02:30 -> 03:30 EDT), but *backward* where the
  standard time is the summer one and winter is "negative DST"
  (``Europe/Dublin``: IST is standard, GMT has ``isdst=1``; Morocco's
  Ramadan time): 01:30 on Dublin's spring day becomes 00:30 GMT;
* ``isdst`` of 0 or 1 asks for that kind of time: a match of the other
  kind is moved to a neighbouring period's offset (lines 426-490).

The offsets are calsim's (:class:`~calsim.tz.clock.ZoneClock`); the
``isdst`` flags are the TZif file's types, and past its last transition
the footer's rule (glibc's ``__tzfile_compute`` then reads the TZ string).

>>> from calsim.tz.release import release
>>> g = LocalTime(release("2026f").table("Europe/Dublin"))
>>> g.offset = g.guess_for(1774742400)  # the previous call read 00:00 GMT
>>> t, tm = g.mktime([126, 2, 29, 1, 30, 0, -1])  # 2026-03-29 01:30, in the gap
>>> t, tm[3:5], tm[6]  # 00:30 GMT: moved back, to the isdst=1 side
(1774744200, [0, 30], 1)
"""

from __future__ import annotations

import bisect
import functools

import numpy as np

from .clock import civil
from .posix import days_from_civil
from .tzif import MAX_RULE_YEAR, ZoneTable

__all__ = ["LocalTime", "TM_YEAR_BASE"]

TM_YEAR_BASE = 1900
# __mon_yday (mktime.c): days before each month, normal and leap years.
_MON_YDAY = ((0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365),
             (0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366))
_STRIDE = 601200                      # mktime.c: probe distance looking for the wanted isdst
_DELTA_BOUND = 457243209 // 2 + _STRIDE  # duration_max / 2 + stride
_NEVER = 2**62


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


@functools.lru_cache(maxsize=4096)
def _year_start(year: int) -> int:
    """Days since 1970-01-01 of January 1st of ``year``."""
    return days_from_civil(year, 1, 1)


@functools.lru_cache(maxsize=1 << 16)
def _day(days: int) -> tuple[int, int, int, int, int]:
    """``(tm_year, tm_mon, tm_mday, tm_wday, tm_yday)`` of a day (days since 1970-01-01)."""
    y, mo, d, _, _, _, wd = civil(days * 86400)
    return y - TM_YEAR_BASE, mo - 1, d, wd, days - _year_start(y)


def _isdst_differ(a: int, b: int) -> bool:
    """mktime.c ``isdst_differ``: one is zero and the other positive (a negative one never differs)."""
    return (not a) != (not b) and a >= 0 and b >= 0


class LocalTime:
    """``localtime_r`` and ``mktime`` of one zone, with mktime's remembered offset (see the module docstring).

    A ``struct tm`` is a list ``[tm_year, tm_mon, tm_mday, tm_hour, tm_min,
    tm_sec, tm_isdst, tm_wday, tm_yday]`` (``tm_year`` counts from 1900,
    ``tm_mon`` from 0, ``tm_wday`` 0 = Sunday); :meth:`mktime` reads the
    first seven.
    """

    def __init__(self, table: ZoneTable):
        self.table = table
        self.offset = 0  # localtime_offset: "t - wall" of the previous mktime's answer (0 before any)
        self._load()

    def _load(self) -> None:
        table = self.table
        self._n = len(table.utc)
        raw = table._raw
        # Transitions: calsim's (which drop those that leave the offset alone) plus the file's own,
        # which may change isdst only; the flag of each period from the file, past its end the footer's.
        utc = np.union1d(np.asarray(table.utc, np.int64), np.asarray(raw.trans_utc, np.int64))
        starts = np.concatenate([[np.iinfo(np.int64).min], utc])
        off = table.offset_at_utc(starts).astype(np.int64)
        last = int(raw.trans_utc[-1]) if len(raw.trans_utc) else None
        k = np.searchsorted(np.asarray(raw.trans_utc, np.int64), starts, side="right") - 1
        trans_type = np.asarray(raw.trans_type, np.int64)
        types = (np.where(k >= 0, trans_type[np.maximum(k, 0)], raw.initial_type) if len(trans_type)
                 else np.full(len(starts), raw.initial_type))
        dst = np.asarray(raw.isdst, bool)[types]
        footer = table.footer
        if footer is not None:  # past the file's last transition glibc reads the footer's TZ string
            past = starts >= last if last is not None else np.ones(len(starts), bool)
            rule = (off == footer.dst_offset) if footer.has_dst else np.zeros(len(starts), bool)
            dst = np.where(past, rule, dst)
        keep = np.concatenate([[True], (off[1:] != off[:-1]) | (dst[1:] != dst[:-1])])
        self._utc = [int(u) for u in starts[1:][keep[1:]]]
        self._off = [int(o) for o in off[keep]]
        self._dst = [int(d) for d in dst[keep]]
        grows = footer is not None and footer.has_dst and table.until_year < MAX_RULE_YEAR
        # Past this instant the table may lack footer transitions: ZoneTable.covering() adds them on demand.
        self._limit = days_from_civil(table.until_year + 1, 1, 1) * 86400 - 86400 if grows else _NEVER

    def _fresh(self) -> None:
        if len(self.table.utc) != self._n:  # ZoneTable.covering() extended the table
            self._load()

    def period(self, t: int) -> tuple[int, int]:
        """``(utoff, isdst)`` in force at ``t`` (UTC seconds)."""
        if t >= self._limit:
            self.table.covering(min(civil(t)[0] + 1, MAX_RULE_YEAR))
            self._load()
        i = bisect.bisect_right(self._utc, t)
        return self._off[i], self._dst[i]

    def guess_for(self, t: int) -> int:
        """The :attr:`offset` a ``mktime`` that answered instant ``t`` leaves (``-utoff``)."""
        return -self.period(t)[0]

    def localtime(self, t: int) -> list[int]:
        """``localtime_r(&t)`` as a ``struct tm`` list."""
        return self._localtime(t)[0]

    def _localtime(self, t: int) -> tuple[list[int], int]:
        """``localtime_r(&t)`` and the wall seconds of its fields (``tm_diff``'s right-hand side)."""
        if t >= self._limit:
            self.period(t)
        i = bisect.bisect_right(self._utc, t)
        utoff, isdst = self._off[i], self._dst[i]
        wall = t + utoff
        days, secs = divmod(wall, 86400)
        year, mon, mday, wday, yday = _day(days)
        return [year, mon, mday, secs // 3600, secs // 60 % 60, secs % 60, isdst, wday, yday], wall

    def mktime(self, tp: list[int]) -> tuple[int, list[int]] | None:
        """``mktime(tp)``: ``(t, normalised tm)``, or None where glibc returns -1 (``tp`` is left alone).

        A line-by-line port of ``__mktime_internal`` (mktime.c lines 320-521
        of glibc 2.36's release branch), updating :attr:`offset` as it does.
        """
        self._fresh()
        sec, minute, hour, mday, mon, year_requested, isdst = tp[5], tp[4], tp[3], tp[2], tp[1], tp[0], tp[6]
        dst2 = 0
        year = year_requested + mon // 12            # mon_years with C's remainder correction
        yday = _MON_YDAY[_leap(year + TM_YEAR_BASE)][mon % 12] - 1 + mday
        off = self.offset
        sec_requested = sec
        sec = min(max(sec, 0), 59)                   # LEAP_SECONDS_POSSIBLE: ydhms_diff has 60-second minutes
        wall = (_year_start(year + TM_YEAR_BASE) + yday) * 86400 + hour * 3600 + minute * 60 + sec
        t0 = wall + off                              # ydhms_diff(..., negative_offset_guess = -off)
        t = t1 = t2 = t0
        remaining_probes = 6
        while True:
            tm, probe = self._localtime(t)
            dt = wall - probe
            if dt == 0:
                break
            if t == t1 and t != t2 and (tm[6] < 0 or (dst2 <= (tm[6] != 0) if isdst < 0
                                                       else (isdst != 0) != (tm[6] != 0))):
                break  # goto offset_found: oscillating around a gap, this probe is the answer
            remaining_probes -= 1
            if remaining_probes == 0:
                return None                          # EOVERFLOW
            t1, t2, t, dst2 = t2, t, t + dt, int(tm[6] != 0)
        if dt == 0 and _isdst_differ(isdst, tm[6]):
            found = self._other_isdst(t, wall, isdst, tm)
            if found is None:
                return None
            t, tm = found
        self.offset = t - t0 + off                   # offset_found: t - t0 - negative_offset_guess
        if sec_requested != tm[5]:
            t += (1 if sec == 0 and tm[5] == 60 else 0) - sec + sec_requested
            tm = self.localtime(t)
        return t, tm

    def _other_isdst(self, t: int, wall: int, isdst: int, tm: list[int]) -> tuple[int, list[int]] | None:
        """mktime.c lines 426-496: the wanted isdst is found at a neighbouring instant; use its offset."""
        dst_difference = int(isdst == 0) - int(tm[6] == 0)
        for delta in range(_STRIDE, _DELTA_BOUND, _STRIDE):
            for direction in (-1, 1):
                ot = t + delta * direction
                otm, owall = self._localtime(ot)
                if not _isdst_differ(isdst, otm[6]):
                    gt = ot + (wall - owall)
                    return gt, self.localtime(gt)
        t += 3600 * dst_difference                   # "No unusual DST offset was found nearby."
        return t, self.localtime(t)
