"""POSIX TZ footers (``Jn``, ``n``, ``Mm.5.d``) against glibc, and the day count of the zone clock.

Each test pins one behaviour at an exact edge, against a real oracle (found unpinned by a hand-made mutation run).

* **POSIX TZ footers** in the ``Jn`` (1..365, February 29 never counted) and
  ``n`` (0..365, counted) forms and ``Mm.5.d`` ("last"); oracle: glibc's
  ``tzset``/``localtime`` reading the same string from ``TZ`` (time/tzset.c,
  ``compute_change``: ``case J1`` adds a day "if (rule->d >= 60 &&
  __isleap (year))", ``case J0`` adds ``d`` days to January 1st), plus the
  dates the POSIX rule gives, written out. CPython's ``zoneinfo`` is *not*
  an oracle here: it reads ``n`` one day early and ``J59`` as February 29
  in leap years (``Lib/zoneinfo/_zoneinfo.py`` ``_DayOffset.year_to_epoch``:
  ``_post_epoch_days_before_year`` returns the day *before* January 1st and
  the leap test is ``d >= 59``); a test below records that.
"""

from __future__ import annotations

import datetime as dt
import io
import platform
import subprocess
import sys
import zoneinfo

import numpy as np
import pytest
from oracles.instants import us_of
from tzif_writer import tzif_bytes

from calsim.resolution import resolve_wall
from calsim.tz.posix import days_from_civil
from calsim.tz.tzif import ZoneTable

UTC = dt.timezone.utc
US = 1_000_000


# POSIX TZ footers: Jn, n and Mm.5.d, against glibc

_GLIBC = r"""
import sys, time
out = [time.localtime(int(t)).tm_gmtoff for t in sys.stdin.read().split()]
print(" ".join(map(str, out)))
"""


def glibc_offsets(tz: str, instants: np.ndarray) -> np.ndarray:
    """UTC offsets (s) glibc gives for ``TZ=tz`` at each instant (time/tzset.c, ``__tz_compute``)."""
    if platform.libc_ver()[0] != "glibc":
        pytest.skip("not applicable here: the oracle is glibc's POSIX TZ parser, and this C library is "
                    f"{platform.libc_ver()[0] or 'unknown'}")
    proc = subprocess.run([sys.executable, "-c", _GLIBC], input=" ".join(map(str, instants.tolist())),
                          capture_output=True, text=True, check=True, env={"TZ": tz})
    return np.array(proc.stdout.split(), dtype=np.int64)


def _table(footer: str, initial: int) -> ZoneTable:
    # One explicit transition (2000-01-01T00:00Z, to the standard offset); the footer governs after it.
    return ZoneTable.from_bytes("Test/Footer", tzif_bytes([(946684800, initial)], initial, footer=footer))


def test_days_from_civil_counts_days_as_datetime_does_february_of_leap_years_included():
    # The zone clock the ported walks read (tz/clock.py) counts days from the first of the month: February 1 of
    # a leap year is as far from the epoch as datetime says, and so is every other day of these years.
    epoch = dt.date(1970, 1, 1).toordinal()
    days = [dt.date(1899, 1, 1) + dt.timedelta(days=k) for k in range(0, 365 * 3 + 1)]
    days += [dt.date(y, m, 1) for y in (1900, 1970, 2000, 2024, 2028, 2100, 2400) for m in range(1, 13)]
    days += [dt.date(y, 2, 29) for y in (1904, 2000, 2028, 2400)] + [dt.date(y, 3, 1) for y in (1900, 2000, 2100)]
    assert [days_from_civil(d.year, d.month, d.day) for d in days] == [d.toordinal() - epoch for d in days]


# glibc evaluates a rule per UTC calendar year, so no footer here changes near New Year.
FOOTERS = [
    ("<-05>5<-04>,J60/2,J305/2", -18000),  # Jn, n >= 60 in leap years: always March 1 and November 1
    ("<-05>5<-04>,J59/2,J365/2", -18000),  # J59 is February 28 even in leap years; J365 December 31
    ("<-05>5<-04>,59/2,304/2", -18000),  # n: 59 is February 29 in a leap year, else March 1
    ("<-05>5<-04>,60/2,300/2", -18000),  # n: 60 is March 1 in a leap year, else March 2
    ("<+1030>-10:30<+11>-11,279/2,95/2", 37800),  # southern, 30-minute DST, n form both ways
    ("<+01>-1<+02>,M2.5.4/2,M10.5.0/3", 3600),  # last Thursday of February (29 days in leap years)
    ("<+01>-1<+02>,M3.5.0/1,M10.5.0/1", 3600),  # the EU rule, with 5 = last
]


@pytest.mark.parametrize("footer,initial", FOOTERS, ids=[f for f, _ in FOOTERS])
def test_footer_transitions_equal_glibc_every_half_hour_and_at_each_second_edge(footer, initial):
    table = _table(footer, initial).covering(2045)
    start = int(dt.datetime(2019, 1, 1, tzinfo=UTC).timestamp())
    end = int(dt.datetime(2042, 1, 1, tzinfo=UTC).timestamp())
    grid = np.arange(start, end, 1800, dtype=np.int64)
    trans = table.utc[(table.utc >= start) & (table.utc < end)]
    assert len(trans) == 2 * 23  # two changes a year
    probes = np.concatenate([grid, trans - 1, trans])
    assert np.array_equal(table.offset_at_utc(probes), glibc_offsets(footer, probes))


def _posix_day(form: str, n: int, year: int) -> dt.date:
    """The day a POSIX ``Jn`` or ``n`` rule names (POSIX.1-2017 §8.3, TZ)."""
    jan1 = dt.date(year, 1, 1)
    if form == "J":  # 1 <= n <= 365; "February 29 is never counted, even in leap years"
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return jan1 + dt.timedelta(days=n - 1 + (1 if leap and n >= 60 else 0))
    return jan1 + dt.timedelta(days=n)  # 0 <= n <= 365, "leap days shall be counted"


@pytest.mark.parametrize("year", [2027, 2028, 2100, 2400])  # common, leap, common century, leap century
def test_julian_j60_is_march_1_and_zero_based_59_is_february_29_only_in_leap_years(year):
    j = _table("<-05>5<-04>,J60/2,J305/2", -18000).covering(2401)
    n = _table("<-05>5<-04>,59/2,304/2", -18000).covering(2401)

    def days(table):
        lo = int(dt.datetime(year, 1, 1, tzinfo=UTC).timestamp())
        hi = int(dt.datetime(year + 1, 1, 1, tzinfo=UTC).timestamp())
        # Each change at 02:00 local: 07:00Z (start, EST) and 06:00Z (end, EDT), same day.
        return [dt.datetime.fromtimestamp(int(t), UTC).date() for t in table.utc if lo <= t < hi]

    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    assert days(j) == [dt.date(year, 3, 1), dt.date(year, 11, 1)]
    assert days(j) == [_posix_day("J", 60, year), _posix_day("J", 305, year)]
    assert days(n) == ([dt.date(year, 2, 29), dt.date(year, 10, 31)] if leap
                       else [dt.date(year, 3, 1), dt.date(year, 11, 1)])
    assert days(n) == [_posix_day("n", 59, year), _posix_day("n", 304, year)]


def test_julian_j59_is_february_28_in_a_leap_year():
    table = _table("<-05>5<-04>,J59/2,J365/2", -18000)
    lo = int(dt.datetime(2028, 1, 1, tzinfo=UTC).timestamp())
    first = int(table.utc[table.utc >= lo][0])
    assert dt.datetime.fromtimestamp(first, UTC) == dt.datetime(2028, 2, 28, 7, 0, tzinfo=UTC)


def test_cpython_zoneinfo_misreads_the_n_and_j59_forms_so_it_is_no_oracle_for_them():
    """Known CPython bug (3.11 .. main): recorded so nobody "fixes" calsim to agree with it.

    ``_DayOffset.year_to_epoch`` adds ``d`` to ``_post_epoch_days_before_year(year)``,
    which is the day *before* January 1st, and tests ``d >= 59`` for the leap day.
    ``Release.zone`` (zoneinfo) therefore disagrees with ``Release.table`` for a
    footer in these forms (none in 2026f; possible through ``with_override``).
    """
    def first_change(footer: str) -> dt.datetime:
        z = zoneinfo.ZoneInfo.from_file(io.BytesIO(tzif_bytes([(946684800, -18000)], -18000, footer)), key="T")
        t = dt.datetime(2028, 1, 1, tzinfo=UTC)
        while t.astimezone(z).utcoffset() == dt.timedelta(hours=-5):
            t += dt.timedelta(hours=1)
        return t

    # POSIX (and glibc, and calsim): 2028-02-29T07:00Z and 2028-02-28T07:00Z.
    assert first_change("<-05>5<-04>,59/2,304/2") == dt.datetime(2028, 2, 28, 7, tzinfo=UTC)
    assert first_change("<-05>5<-04>,J59/2,J365/2") == dt.datetime(2028, 2, 29, 7, tzinfo=UTC)


def test_a_footer_governs_the_rest_of_the_year_of_the_last_explicit_transition():
    # The last explicit transition is 2000-01-01; the footer's 2000 changes must follow it.
    footer = "<-05>5<-04>,M4.1.0,M10.5.0"  # the US rule of 1987-2006
    table = _table(footer, -18000)
    probes = np.arange(946684800, 946684800 + 366 * 86400, 1800, dtype=np.int64)
    assert np.array_equal(table.offset_at_utc(probes), glibc_offsets(footer, probes))


def test_a_year_long_dst_footer_makes_no_transition_at_new_year():
    # RFC 8536 §3.3.1: "EST5EDT,0/0,J365/25" is daylight saving time all year: each
    # year's end (J365 25:00 EDT) is the next year's start (day 0, 00:00 EST).
    table = _table("<-05>5<-04>,0/0,J365/25", -18000)
    first = int(dt.datetime(2000, 1, 1, 5, tzinfo=UTC).timestamp())  # 2000-01-01T00:00 EST
    covered = int(dt.datetime(2100, 1, 1, tzinfo=UTC).timestamp())  # the table covers through 2100
    assert table.utc[(table.utc >= first) & (table.utc < covered)].tolist() == [first]
    assert set(table.offset_at_utc(np.arange(first, covered, 86400 * 7)).tolist()) == {-14400}
    walls = [dt.datetime(y, 1, 1) + dt.timedelta(minutes=m) for y in (2027, 2028) for m in range(-90, 91, 15)]
    r = resolve_wall(np.array([us_of(w) for w in walls]), table)
    assert set(r.kind.tolist()) == {0} and set(r.offset.tolist()) == {-14400}


@pytest.mark.parametrize("footer,std", [("<-05>5<-04>,M3.2.0,M11.1.0", -18000),
                                        ("<-03>3<-02>,M10.1.0/0,M2.3.0/0", -10800)])
def test_a_file_without_transitions_takes_its_footer_from_1970(footer, std):
    # No explicit transition at all: before the first generated change the other
    # offset of the rule is in force (DST in a southern summer).
    raw = tzif_bytes([], std, footer=footer)
    table = ZoneTable.from_bytes("Test/Bare", raw)
    probes = np.arange(0, 2 * 366 * 86400, 1800, dtype=np.int64)
    assert np.array_equal(table.offset_at_utc(probes), glibc_offsets(footer, probes))
