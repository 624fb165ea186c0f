"""Boundaries outside the simulation engine that a hand-made mutation run found unpinned.

Each test pins one behaviour at an exact edge, against a real oracle:

* **resolution** at the first and last microsecond of a gap and of a fold
  (America/New_York, Europe/Berlin, Australia/Lord_Howe, 2026), alone (the
  single-period fast path of ``resolve_wall``) and in a batch (the per-row
  search), for every gap and fold policy; oracle: ``zoneinfo`` built from
  the same release's TZif bytes (``calsim.release("2026f").zone``), PEP 495.
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
* **RRULE UNTIL and COUNT**: UNTIL equal to an instance is inclusive (RFC
  5545 §3.3.10); COUNT counts instances that survive the gap policy;
  windows are half-open; oracle: python-dateutil ``rrulestr`` (zones
  without DST, where wall time is the instant up to a constant) and pins in
  America/New_York.
* **LedgerStore** idempotence and key: the same rows written again, in any
  order, change nothing; rows differing only in ``fold``, ``kind`` or
  ``revision`` are distinct keys; oracle: DuckDB itself (``SELECT DISTINCT``
  over the key).
"""

from __future__ import annotations

import datetime as dt
import io
import itertools
import platform
import subprocess
import sys
import zoneinfo

import numpy as np
import polars as pl
import pytest
from dateutil.rrule import rrulestr

import calsim
from calsim.errors import AmbiguousTimeError, NonexistentTimeError
from calsim.resolution import resolve_wall
from calsim.rules.rrule import RRule
from calsim.store import DuplicateKeyError, LedgerStore, ScenarioExistsError
from calsim.tz.posix import days_from_civil
from calsim.tz.tzif import ZoneTable
from oracle import first_instant_after_gap
from tzif_writer import tzif_bytes

UTC = dt.timezone.utc
REL = "2026f"
US = 1_000_000
MICRO = dt.timedelta(microseconds=1)


def _zone(name: str):
    return calsim.release(REL).zone(name)


def _us(value: dt.datetime) -> int:
    """Naive or aware datetime -> µs since the epoch (naive: as a wall clock)."""
    naive = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
    d = naive - dt.datetime(1970, 1, 1)
    return (d.days * 86400 + d.seconds) * US + d.microseconds


# ---------------------------------------------------------------------------
# 1. Resolution at the edges of gaps and folds
# ---------------------------------------------------------------------------

# (zone, first wall time of the anomaly, first wall time after it), 2026, release 2026f.
GAPS = [
    ("America/New_York", "2026-03-08T02:00", "2026-03-08T03:00"),
    ("Europe/Berlin", "2026-03-29T02:00", "2026-03-29T03:00"),
    ("Australia/Lord_Howe", "2026-10-04T02:00", "2026-10-04T02:30"),  # a 30-minute gap
]
FOLDS = [
    ("America/New_York", "2026-11-01T01:00", "2026-11-01T02:00"),
    ("Europe/Berlin", "2026-10-25T02:00", "2026-10-25T03:00"),
    ("Australia/Lord_Howe", "2026-04-05T01:30", "2026-04-05T02:00"),  # a 30-minute fold
]
GAP_POLICIES = ("skip", "shift", "next_valid", "shift_backward", "reject")
FOLD_POLICIES = ("first", "second", "both", "reject")


def _edges(lower: str, upper: str) -> list[dt.datetime]:
    """The last µs before, the first, second and last µs of, and the first µs after an anomaly."""
    lo, hi = dt.datetime.fromisoformat(lower), dt.datetime.fromisoformat(upper)
    return [lo - MICRO, lo, lo + MICRO, hi - MICRO, hi]


def _pep495(zone_name: str, wall: dt.datetime) -> tuple[str, dt.datetime, dt.datetime]:
    """zoneinfo's reading of a wall time: kind, fold=0 instant, fold=1 instant (PEP 495)."""
    z = _zone(zone_name)
    u0 = wall.replace(tzinfo=z, fold=0).astimezone(UTC)
    u1 = wall.replace(tzinfo=z, fold=1).astimezone(UTC)
    if u0.astimezone(z).replace(tzinfo=None) != wall:
        return "gap", u0, u1
    return ("fold" if u0 != u1 else "ok"), u0, u1


def _offset(zone_name: str, instant: dt.datetime) -> int:
    return int(instant.astimezone(_zone(zone_name)).utcoffset().total_seconds())


def _expected_gap_row(zone_name: str, wall: dt.datetime, gap: str) -> dict:
    """What DESIGN.md §2 says each gap policy gives, computed with zoneinfo."""
    kind, u0, u1 = _pep495(zone_name, wall)
    if kind != "gap":
        assert kind == "ok"
        return {"due_utc": u0, "utc_offset_s": _offset(zone_name, u0), "kind": "ok", "notes": []}
    if gap == "skip":
        return {"due_utc": None, "utc_offset_s": None, "kind": "gap", "notes": ["dst_gap_skipped"]}
    if gap == "shift":  # PEP 495 fold=0: the offset before the jump
        due = u0
    elif gap == "shift_backward":  # fold=1: the offset after it
        due = u1
    else:  # next_valid: the instant of the jump, the first whose wall clock is past the time
        due_us = first_instant_after_gap(_zone(zone_name), _us(wall), _us(u1), _us(u0))
        due = dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=due_us)
    note = {"shift": "dst_gap_shifted", "next_valid": "dst_gap_next_valid",
            "shift_backward": "dst_gap_shifted_backward"}[gap]
    return {"due_utc": due, "utc_offset_s": _offset(zone_name, due), "kind": "gap", "notes": [note]}


def _rows(frame: pl.DataFrame) -> list[dict]:
    return frame.select("due_utc", "utc_offset_s", "kind", "notes").with_columns(
        pl.col("kind").cast(pl.String)).to_dicts()


@pytest.mark.parametrize("zone,lower,upper", GAPS, ids=[g[0] for g in GAPS])
def test_gap_edges_are_what_zoneinfo_says(zone, lower, upper):
    """The oracle's own view of the edges used below: ok, gap, gap, gap, ok."""
    kinds = [_pep495(zone, w)[0] for w in _edges(lower, upper)]
    assert kinds == ["ok", "gap", "gap", "gap", "ok"]


@pytest.mark.parametrize("gap", GAP_POLICIES)
@pytest.mark.parametrize("zone,lower,upper", GAPS, ids=[g[0] for g in GAPS])
def test_a_single_wall_time_at_each_gap_edge_resolves_as_zoneinfo(zone, lower, upper, gap):
    # One time per call: the single-period fast path of resolve_wall is tried for each.
    for wall in _edges(lower, upper):
        if gap == "reject" and _pep495(zone, wall)[0] == "gap":
            with pytest.raises(NonexistentTimeError, match="does not exist"):
                calsim.resolve([wall], zone, release=REL, gap=gap)
            continue
        expected = _expected_gap_row(zone, wall, "skip" if gap == "reject" else gap)
        got = _rows(calsim.resolve([wall], zone, release=REL, gap=gap))
        assert got == [expected], (zone, wall, gap)


@pytest.mark.parametrize("gap", GAP_POLICIES[:4])
@pytest.mark.parametrize("zone,lower,upper", GAPS, ids=[g[0] for g in GAPS])
def test_the_gap_edges_in_one_batch_resolve_as_zoneinfo(zone, lower, upper, gap):
    walls = _edges(lower, upper)
    got = _rows(calsim.resolve(walls, zone, release=REL, gap=gap))
    assert got == [_expected_gap_row(zone, w, gap) for w in walls]


@pytest.mark.parametrize("zone,lower,upper", GAPS, ids=[g[0] for g in GAPS])
def test_a_batch_ending_exactly_at_a_gap_start_keeps_its_last_time_a_gap(zone, lower, upper):
    # Every time but the last lies in one period, so the batch is one search away
    # from the fast path; the last one is the gap's first µs.
    lo = dt.datetime.fromisoformat(lower)
    walls = [lo - dt.timedelta(hours=h) for h in range(24, 0, -1)] + [lo]
    got = calsim.resolve(walls, zone, release=REL, gap="skip")
    assert got["kind"].cast(pl.String).to_list() == ["ok"] * 24 + ["gap"]
    assert got["due_utc"].to_list() == [_pep495(zone, w)[1] for w in walls[:-1]] + [None]


@pytest.mark.parametrize("zone,lower,upper", GAPS, ids=[g[0] for g in GAPS])
def test_a_batch_starting_exactly_at_a_gap_end_is_all_in_the_new_offset(zone, lower, upper):
    hi = dt.datetime.fromisoformat(upper)
    walls = [hi + dt.timedelta(hours=h) for h in range(0, 24 * 30, 7)]
    got = calsim.resolve(walls, zone, release=REL, gap="skip")
    assert set(got["kind"].cast(pl.String).to_list()) == {"ok"}
    assert got["due_utc"].to_list() == [_pep495(zone, w)[1] for w in walls]
    assert got["utc_offset_s"].to_list() == [_offset(zone, _pep495(zone, w)[1]) for w in walls]


@pytest.mark.parametrize("zone,lower,upper", FOLDS, ids=[f[0] for f in FOLDS])
def test_fold_edges_are_what_zoneinfo_says(zone, lower, upper):
    kinds = [_pep495(zone, w)[0] for w in _edges(lower, upper)]
    assert kinds == ["ok", "fold", "fold", "fold", "ok"]


@pytest.mark.parametrize("fold", FOLD_POLICIES)
@pytest.mark.parametrize("batch", [False, True], ids=["alone", "batch"])
@pytest.mark.parametrize("zone,lower,upper", FOLDS, ids=[f[0] for f in FOLDS])
def test_fold_edges_resolve_as_zoneinfo(zone, lower, upper, batch, fold):
    walls = _edges(lower, upper)
    expected: list[tuple] = []
    for w in walls:
        kind, u0, u1 = _pep495(zone, w)
        if kind == "ok":
            expected.append((w, 0, u0, _offset(zone, u0), "ok", []))
            continue
        note = {"first": "dst_fold_first", "second": "dst_fold_second", "both": "dst_fold_both"}.get(fold)
        if fold in ("first", "both"):
            expected.append((w, 0, u0, _offset(zone, u0), "fold", [note]))
        if fold in ("second", "both"):
            expected.append((w, 1, u1, _offset(zone, u1), "fold", [note]))
    calls = [walls] if batch else [[w] for w in walls]
    if fold == "reject":
        for call in calls:
            if any(_pep495(zone, w)[0] == "fold" for w in call):
                with pytest.raises(AmbiguousTimeError, match="happens twice"):
                    calsim.resolve(call, zone, release=REL, fold=fold)
        return
    got = []
    for call in calls:
        frame = calsim.resolve(call, zone, release=REL, fold=fold)
        got += [tuple(r.values()) for r in frame.select(
            "nominal_local", "fold", "due_utc", "utc_offset_s", pl.col("kind").cast(pl.String), "notes").to_dicts()]
    assert got == expected


# A synthetic zone whose anomalies overlap (transitions closer than their jumps), which
# resolve_wall handles by its definition (_crowded_indices): period k shows wall L iff
# L - offset_k lies in it; fold 0 is the earliest such instant, fold 1 the latest.
CROWDED_BASE = 1_700_000_000
CROWDED = [(CROWDED_BASE, 10800), (CROWDED_BASE + 3600, 0), (CROWDED_BASE + 5400, -7200),
           (CROWDED_BASE + 9000, 5400), (CROWDED_BASE + 9900, 0)]


def test_crowded_transitions_resolve_at_every_period_edge_as_zoneinfo_reads_instants():
    raw = tzif_bytes(CROWDED, 0)
    z = zoneinfo.ZoneInfo.from_file(io.BytesIO(raw), key="Test/Crowded")  # UTC -> local is always defined
    table = ZoneTable.from_bytes("Test/Crowded", raw)
    offsets = sorted({0, *(o for _, o in CROWDED)})
    edges = {t + o for t, _ in CROWDED for o in offsets}  # every wall time where some period starts or ends
    walls = sorted({(e * US + d) for e in edges for d in (-1, 0, 1)})
    want_kind, want_first, want_last = [], [], []

    def wall_at(u: int) -> int:
        # zoneinfo's UTC -> local step (fromutc) only: .utcoffset() of the result would
        # re-read the wall time with PEP 495's fold, which cannot tell 3 readings apart.
        utc = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=u)
        return _us(z.fromutc(utc.replace(tzinfo=z)).replace(tzinfo=None))

    for w in walls:
        # The instants that show wall time w: w - o for each offset o, when zoneinfo agrees.
        shown = sorted({w - o * US for o in offsets if wall_at(w - o * US) == w})
        want_kind.append(0 if len(shown) == 1 else 1 if not shown else 2)
        want_first.append(shown[0] if shown else None)
        want_last.append(shown[-1] if shown else None)
    first = resolve_wall(np.array(walls, dtype=np.int64), table, gap="skip", fold="first")
    second = resolve_wall(np.array(walls, dtype=np.int64), table, gap="skip", fold="second")
    assert first.kind.tolist() == want_kind
    ok = [k != 1 for k in want_kind]
    assert [d for d, o in zip(first.due.tolist(), ok) if o] == [d for d in want_first if d is not None]
    assert [d for d, o in zip(second.due.tolist(), ok) if o] == [d for d in want_last if d is not None]


# ---------------------------------------------------------------------------
# 2. POSIX TZ footers: Jn, n and Mm.5.d, against glibc
# ---------------------------------------------------------------------------

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
    r = resolve_wall(np.array([_us(w) for w in walls]), table)
    assert set(r.kind.tolist()) == {0} and set(r.offset.tolist()) == {-14400}


@pytest.mark.parametrize("footer,std", [("<-05>5<-04>,M3.2.0,M11.1.0", -18000), ("<-03>3<-02>,M10.1.0/0,M2.3.0/0", -10800)])
def test_a_file_without_transitions_takes_its_footer_from_1970(footer, std):
    # No explicit transition at all: before the first generated change the other
    # offset of the rule is in force (DST in a southern summer).
    raw = tzif_bytes([], std, footer=footer)
    table = ZoneTable.from_bytes("Test/Bare", raw)
    probes = np.arange(0, 2 * 366 * 86400, 1800, dtype=np.int64)
    assert np.array_equal(table.offset_at_utc(probes), glibc_offsets(footer, probes))


# ---------------------------------------------------------------------------
# 3. RRULE UNTIL and COUNT
# ---------------------------------------------------------------------------

RULES = [
    "FREQ=DAILY",  # the plain-daily fast path
    "FREQ=HOURLY;INTERVAL=5",
    "FREQ=MINUTELY;INTERVAL=17;BYHOUR=9,10",
    "FREQ=WEEKLY;BYDAY=MO,TH",
    "FREQ=MONTHLY;BYMONTHDAY=-1",
    "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
]
DTSTART = dt.datetime(2026, 1, 5, 9, 30)


def _dateutil(text: str, start: dt.datetime, n: int) -> list[dt.datetime]:
    return list(itertools.islice(rrulestr(text, dtstart=start), n))


def _stamp(value: dt.datetime) -> str:
    return value.strftime("%Y%m%dT%H%M%S")


@pytest.mark.parametrize("rule", RULES)
def test_a_local_until_equal_to_an_instance_includes_it_as_dateutil_does(rule):
    inst = _dateutil(rule, DTSTART, 12)
    for until in (inst[0], inst[7], inst[7] - dt.timedelta(seconds=1)):
        text = f"{rule};UNTIL={_stamp(until)}"
        want = list(rrulestr(text, dtstart=DTSTART))
        wall, _ = RRule.parse(text).wall_times(_us(DTSTART), _us(dt.datetime(2100, 1, 1)))
        assert wall.tolist() == [_us(w) for w in want], text
    assert len(list(rrulestr(f"{rule};UNTIL={_stamp(inst[7])}", dtstart=DTSTART))) == 8


@pytest.mark.parametrize("count", [1, 2, 7])
@pytest.mark.parametrize("rule", RULES)
def test_count_gives_exactly_that_many_instances_as_dateutil_does(rule, count):
    text = f"{rule};COUNT={count}"
    wall, _ = RRule.parse(text).wall_times(_us(DTSTART), _us(dt.datetime(2100, 1, 1)))
    assert wall.tolist() == [_us(w) for w in rrulestr(text, dtstart=DTSTART)]


@pytest.mark.parametrize("rule", ["FREQ=DAILY", "FREQ=HOURLY;INTERVAL=5", "FREQ=WEEKLY;BYDAY=MO,TH"])
def test_candidates_window_is_half_open_at_instances(rule):
    inst = _dateutil(rule, DTSTART, 20)
    parsed = RRule.parse(rule)
    wall, _ = parsed.candidates(_us(DTSTART), _us(inst[3]), _us(inst[11]))
    assert wall.tolist() == [_us(w) for w in inst[3:11]]
    # One µs later on both sides: the instance at lo is out, the one at hi in.
    wall, _ = parsed.candidates(_us(DTSTART), _us(inst[3]) + 1, _us(inst[11]) + 1)
    assert wall.tolist() == [_us(w) for w in inst[4:12]]


def _iso_z(value: dt.datetime) -> str:
    """An instant a few days after ``value`` (naive: read as UTC, as a window bound)."""
    later = (value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value) + dt.timedelta(days=3)
    return later.isoformat() + "Z"


def _expand(schedule: calsim.Schedule, start="2025-12-01T00:00Z", end="2027-12-01T00:00Z") -> pl.DataFrame:
    return calsim.expand([schedule], start, end, release=REL).sort("nominal_local", "fold")


@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo"])  # zones without DST: dateutil's naive walls are exact
@pytest.mark.parametrize("rule", RULES[:1] + RULES[3:])
def test_expand_local_until_equal_to_an_instance_includes_it(zone, rule):
    inst = _dateutil(rule, DTSTART, 12)
    text = f"{rule};UNTIL={_stamp(inst[7])}"
    got = _expand(calsim.Schedule("s", zone, DTSTART.isoformat(), text), end=_iso_z(inst[-1]))
    want = list(rrulestr(text, dtstart=DTSTART))
    assert got["nominal_local"].to_list() == want
    assert got["due_utc"].to_list() == [w.replace(tzinfo=_zone(zone)).astimezone(UTC) for w in want]


@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo"])
@pytest.mark.parametrize("rule", RULES[:1] + RULES[3:])
def test_expand_utc_until_equal_to_an_instance_instant_includes_it(zone, rule):
    z = _zone(zone)
    start = DTSTART.replace(tzinfo=z)
    inst = list(itertools.islice(rrulestr(rule, dtstart=start), 12))
    for until in (inst[7], inst[7] - dt.timedelta(seconds=1)):
        text = f"{rule};UNTIL={_stamp(until.astimezone(UTC))}Z"
        want = list(rrulestr(text, dtstart=start))  # aware: compared as instants
        got = _expand(calsim.Schedule("s", zone, DTSTART.isoformat(), text), end=_iso_z(inst[-1]))
        assert got["due_utc"].to_list() == [w.astimezone(UTC) for w in want], text


@pytest.mark.parametrize("rule,count", [("FREQ=DAILY;INTERVAL=30", 3),  # the 3rd is DTSTART + 60 days exactly
                                        ("FREQ=MONTHLY", 13), ("FREQ=WEEKLY;BYDAY=MO", 2), ("FREQ=DAILY", 1)])
def test_expand_count_in_utc_equals_dateutil(rule, count):
    start = dt.datetime(2026, 1, 4, 9, 30)  # a Sunday: WEEKLY;BYDAY=MO starts the next day
    text = f"{rule};COUNT={count}"
    got = _expand(calsim.Schedule("s", "UTC", start.isoformat(), text))
    assert got["nominal_local"].to_list() == list(rrulestr(text, dtstart=start))


def test_expand_count_is_counted_from_dtstart_not_from_the_window():
    text = "FREQ=DAILY;COUNT=5"
    got = _expand(calsim.Schedule("s", "UTC", "2026-01-01T09:00", text), start="2026-01-03T09:00Z")
    want = list(rrulestr(text, dtstart=dt.datetime(2026, 1, 1, 9)))[2:]
    assert got["nominal_local"].to_list() == want


def test_expand_window_is_half_open_at_instances():
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
    got = calsim.expand([s], "2026-01-01T05:00Z", "2026-01-01T08:00Z", release=REL)
    assert [d.hour for d in got["due_utc"].to_list()] == [5, 6, 7]


NY = "America/New_York"


def _ny(rule: str, start: str, **kw) -> list[tuple]:
    got = _expand(calsim.Schedule("s", NY, start, rule, **kw), "2026-01-01T00:00Z", "2027-01-01T00:00Z")
    return [(r["nominal_local"].isoformat(), r["fold"], r["due_utc"] and r["due_utc"].isoformat(), r["notes"])
            for r in got.to_dicts()]


class TestUntilAndCountInNewYork:
    """Pins in a DST zone, 2026 (EST -5 until 03-08, EDT -4 until 11-01)."""

    def test_local_until_equal_to_the_first_instance_after_the_gap_includes_it(self):
        got = _ny("FREQ=DAILY;UNTIL=20260310T090000", "2026-03-01T09:00")
        assert len(got) == 10 and got[-1] == ("2026-03-10T09:00:00", 0, "2026-03-10T13:00:00+00:00", [])
        assert len(_ny("FREQ=DAILY;UNTIL=20260310T085959", "2026-03-01T09:00")) == 9

    def test_utc_until_equal_to_an_edt_instance_includes_it(self):
        got = _ny("FREQ=DAILY;UNTIL=20260310T130000Z", "2026-03-01T09:00")
        assert got[-1][2] == "2026-03-10T13:00:00+00:00" and len(got) == 10
        assert len(_ny("FREQ=DAILY;UNTIL=20260310T125959Z", "2026-03-01T09:00")) == 9

    def test_utc_until_matches_dateutil_with_an_aware_start(self):
        text = "FREQ=DAILY;UNTIL=20260310T130000Z"
        want = list(rrulestr(text, dtstart=dt.datetime(2026, 3, 1, 9, tzinfo=_zone(NY))))
        assert [g[2] for g in _ny(text, "2026-03-01T09:00")] == [w.astimezone(UTC).isoformat() for w in want]

    def test_local_until_equal_to_a_gap_skipped_instance_keeps_its_row(self):
        got = _ny("FREQ=DAILY;UNTIL=20260308T023000", "2026-03-06T02:30")
        assert got == [("2026-03-06T02:30:00", 0, "2026-03-06T07:30:00+00:00", []),
                       ("2026-03-07T02:30:00", 0, "2026-03-07T07:30:00+00:00", []),
                       ("2026-03-08T02:30:00", 0, None, ["dst_gap_skipped"])]

    def test_utc_until_equal_to_a_shifted_instant_includes_it(self):
        # 02:30 shifted is 03:30 EDT = 07:30Z.
        got = _ny("FREQ=DAILY;UNTIL=20260308T073000Z", "2026-03-06T02:30", gap="shift")
        assert got[-1] == ("2026-03-08T02:30:00", 0, "2026-03-08T07:30:00+00:00", ["dst_gap_shifted"])
        got = _ny("FREQ=DAILY;UNTIL=20260308T072959Z", "2026-03-06T02:30", gap="shift")
        assert got[-1][0] == "2026-03-07T02:30:00"

    def test_local_until_at_a_fold_keeps_both_passes_and_utc_until_only_the_first(self):
        local = _ny("FREQ=DAILY;UNTIL=20261101T013000", "2026-10-30T01:30", fold="both")
        assert [(g[0][:10], g[1], g[2]) for g in local][-2:] == [
            ("2026-11-01", 0, "2026-11-01T05:30:00+00:00"), ("2026-11-01", 1, "2026-11-01T06:30:00+00:00")]
        first = _ny("FREQ=DAILY;UNTIL=20261101T053000Z", "2026-10-30T01:30", fold="both")
        assert [(g[0][:10], g[1]) for g in first][-1] == ("2026-11-01", 0) and len(first) == len(local) - 1
        both = _ny("FREQ=DAILY;UNTIL=20261101T063000Z", "2026-10-30T01:30", fold="both")
        assert both == local

    def test_count_does_not_count_a_gap_skipped_instance(self):
        got = _ny("FREQ=DAILY;COUNT=3", "2026-03-06T02:30")
        assert [(g[0][:10], g[2] is not None) for g in got] == [
            ("2026-03-06", True), ("2026-03-07", True), ("2026-03-08", False), ("2026-03-09", True)]

    def test_count_counts_a_shifted_instance(self):
        got = _ny("FREQ=DAILY;COUNT=3", "2026-03-06T02:30", gap="shift")
        assert [g[0][:10] for g in got] == ["2026-03-06", "2026-03-07", "2026-03-08"]

    def test_count_counts_a_fold_instance_once_even_with_both_passes(self):
        got = _ny("FREQ=DAILY;COUNT=3", "2026-10-31T01:30", fold="both")
        assert [(g[0][:10], g[1]) for g in got] == [
            ("2026-10-31", 0), ("2026-11-01", 0), ("2026-11-01", 1), ("2026-11-02", 0)]


# ---------------------------------------------------------------------------
# 4. LedgerStore: idempotence under row order, and the key
# ---------------------------------------------------------------------------

KEY = ["schedule_id", "revision", "nominal_local", "fold", "kind"]


@pytest.fixture(scope="module")
def ledger() -> calsim.Ledger:
    fleet = [
        calsim.Schedule("hourly", "UTC", "2026-01-01T00:00", "FREQ=HOURLY"),
        calsim.Schedule("ny-0230", NY, "2026-01-01T02:30", "FREQ=DAILY"),  # a gap-skipped row
        calsim.Schedule("ny-0130", NY, "2026-01-01T01:30", "FREQ=DAILY", fold="both"),  # two fold rows
    ]
    scen = calsim.Scenario("s", fleet, "2026-03-05T00:00Z", "2026-03-10T00:00Z", release=REL,
                           outages=[calsim.Outage("2026-03-07T10:00Z", "2026-03-07T13:30Z")])
    # Add a November fold to the same ledger: a second scenario window merged by hand.
    nov = calsim.Scenario("s", fleet, "2026-10-31T00:00Z", "2026-11-03T00:00Z", release=REL)
    a, b = calsim.simulate(scen, progress=False), calsim.simulate(nov, progress=False)
    frame = pl.concat([a.frame, b.frame])
    assert frame.filter(pl.col("fold") == 1).height >= 1
    assert frame.filter(pl.col("notes").list.contains("dst_gap_skipped")).height >= 1
    return frame


def _distinct_keys(store: LedgerStore, name: str) -> int:
    """DuckDB's own count of distinct keys among the scenario's rows."""
    cols = ", ".join(KEY)
    return store.sql(f"SELECT count(*) AS n FROM (SELECT DISTINCT {cols} FROM occurrences WHERE scenario = $1)",
                     [name])["n"][0]


def _orders(frame: pl.DataFrame) -> list[pl.DataFrame]:
    return [frame.reverse(), frame.sample(fraction=1.0, shuffle=True, seed=7),
            frame.sort(KEY, descending=True)]


def test_writing_the_same_rows_in_another_order_changes_nothing(ledger):
    with LedgerStore() as store:
        assert store.write(ledger, name="s") is True
        before = store.sql("SELECT * FROM scenarios")
        for other in _orders(ledger):
            assert store.write(other, name="s") is False
            assert store.write(other, name="s", replace=True) is False
        assert store.sql("SELECT * FROM scenarios").equals(before)
        assert store.ledger("s").equals(ledger)  # the first write's order, kept
        rows = store.sql("SELECT count(*) AS n FROM occurrences")["n"][0]
        assert rows == ledger.height == _distinct_keys(store, "s")


def test_writing_the_same_rows_in_another_order_after_reopening_changes_nothing(ledger, tmp_path):
    path = tmp_path / "l.duckdb"
    with LedgerStore(path) as store:
        store.write(ledger, name="s")
    with LedgerStore(path) as store:
        assert store.write(ledger.reverse(), name="s") is False
        assert store.ledger("s").equals(ledger)


def test_a_digest_from_another_polars_is_checked_against_the_rows_in_any_order(ledger):
    # A store written by another polars version: its digest cannot be compared,
    # so the stored rows are (as a set of keyed rows).
    with LedgerStore() as store:
        store.write(ledger, name="s")
        store._con.execute("UPDATE scenarios SET digest = 'polars-0.0.0:00' WHERE name = 's'")
        assert store.write(ledger.reverse(), name="s") is False
        changed = ledger.with_columns(pl.when(pl.int_range(pl.len()) == 3).then(pl.col("cost") + 1)
                                      .otherwise(pl.col("cost")).alias("cost"))
        with pytest.raises(ScenarioExistsError, match="a different ledger"):
            store.write(changed.reverse(), name="s")


def test_one_changed_value_in_another_order_is_a_different_ledger(ledger):
    changed = ledger.with_columns(pl.when(pl.int_range(pl.len()) == 5).then(pl.col("attempts") + 1)
                                  .otherwise(pl.col("attempts")).alias("attempts"))
    with LedgerStore() as store:
        store.write(ledger, name="s")
        with pytest.raises(ScenarioExistsError, match="a different ledger is already stored as 's'"):
            store.write(changed.reverse(), name="s")
        assert store.ledger("s").equals(ledger)


@pytest.mark.parametrize("column,value", [("fold", 1), ("kind", "manual"), ("revision", 2)])
def test_rows_differing_only_in_one_key_column_are_distinct(ledger, column, value):
    row = ledger.filter((pl.col("fold") == 0) & (pl.col("kind") == "scheduled") & (pl.col("revision") == 1)).head(1)
    twin = row.with_columns(pl.lit(value).cast(ledger.schema[column]).alias(column))
    assert ledger.join(twin, on=KEY, how="semi").height == 0  # a new key
    frame = pl.concat([ledger, twin])
    with LedgerStore() as store:
        assert store.write(frame, name="s") is True
        assert _distinct_keys(store, "s") == frame.height
        assert store.sql("SELECT count(*) AS n FROM occurrences")["n"][0] == frame.height


def test_a_repeated_key_is_refused_and_nothing_is_written(ledger):
    row = ledger.head(1).with_columns(pl.col("attempts") + 1)  # same key, other content
    with LedgerStore() as store:
        with pytest.raises(DuplicateKeyError, match="share a primary key"):
            store.write(pl.concat([ledger, row]), name="s")
        assert store.sql("SELECT count(*) AS n FROM scenarios")["n"][0] == 0
        assert store.sql("SELECT count(*) AS n FROM occurrences")["n"][0] == 0
