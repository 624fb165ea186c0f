"""RRULE UNTIL and COUNT at their edges, against python-dateutil and pins in New York.

Each test pins one behaviour at an exact edge, against a real oracle (found unpinned by a hand-made mutation run).

* **RRULE UNTIL and COUNT**: UNTIL equal to an instance is inclusive (RFC
  5545 §3.3.10); COUNT counts instances that survive the gap policy;
  windows are half-open; oracle: python-dateutil ``rrulestr`` (zones
  without DST, where wall time is the instant up to a constant) and pins in
  America/New_York.
"""

from __future__ import annotations

import datetime as dt
import itertools

import polars as pl
import pytest
from dateutil.rrule import rrulestr

import calsim
from calsim.rules.rrule import RRule
from oracles.instants import us_of

UTC = dt.timezone.utc
REL = "2026f"


def _zone(name: str):
    return calsim.release(REL).zone(name)


# RRULE UNTIL and COUNT

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
        wall, _ = RRule.parse(text).wall_times(us_of(DTSTART), us_of(dt.datetime(2100, 1, 1)))
        assert wall.tolist() == [us_of(w) for w in want], text
    assert len(list(rrulestr(f"{rule};UNTIL={_stamp(inst[7])}", dtstart=DTSTART))) == 8


@pytest.mark.parametrize("count", [1, 2, 7])
@pytest.mark.parametrize("rule", RULES)
def test_count_gives_exactly_that_many_instances_as_dateutil_does(rule, count):
    text = f"{rule};COUNT={count}"
    wall, _ = RRule.parse(text).wall_times(us_of(DTSTART), us_of(dt.datetime(2100, 1, 1)))
    assert wall.tolist() == [us_of(w) for w in rrulestr(text, dtstart=DTSTART)]


@pytest.mark.parametrize("rule", ["FREQ=DAILY", "FREQ=HOURLY;INTERVAL=5", "FREQ=WEEKLY;BYDAY=MO,TH"])
def test_candidates_window_is_half_open_at_instances(rule):
    inst = _dateutil(rule, DTSTART, 20)
    parsed = RRule.parse(rule)
    wall, _ = parsed.candidates(us_of(DTSTART), us_of(inst[3]), us_of(inst[11]))
    assert wall.tolist() == [us_of(w) for w in inst[3:11]]
    # One µs later on both sides: the instance at lo is out, the one at hi in.
    wall, _ = parsed.candidates(us_of(DTSTART), us_of(inst[3]) + 1, us_of(inst[11]) + 1)
    assert wall.tolist() == [us_of(w) for w in inst[4:12]]


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
