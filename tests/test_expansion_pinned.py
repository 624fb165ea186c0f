"""Pinned expansion cases on real DST edges, month ends and date-line jumps (tzdata 2026f).

America/New_York 2026: 02:00 -> 03:00 on 03-08 (EST -> EDT), 02:00 -> 01:00 on 11-01.
Australia/Lord_Howe: 02:00 -> 02:30 on 2026-10-04 (+10:30 -> +11).
Pacific/Apia: 2011-12-30 did not happen (-10 -> +14 at the end of the 29th).
Europe/Berlin 2026: 02:00 -> 03:00 on 03-29 (CET -> CEST).
"""

from __future__ import annotations

import datetime as dt

import calsim

UTC = dt.timezone.utc
R = "2026f"


def rows(schedule, start="2026-01-01T00:00Z", end="2027-01-01T00:00Z", release=R):
    return calsim.expand([schedule], start, end, release).iter_rows(named=True)


def dues(schedule, **kw):
    return [r["due_utc"] for r in rows(schedule, **kw)]


class TestNewYorkSpring:
    def test_daily_0900_keeps_local_time_so_utc_hour_moves_from_14_to_13(self):
        s = calsim.Schedule("d", "America/New_York", "2026-03-05T09:00", "FREQ=DAILY;COUNT=6")
        assert [d.hour for d in dues(s)] == [14, 14, 14, 13, 13, 13]

    def test_every_24h_from_the_first_instant_drifts_to_local_1000(self):
        s = calsim.Schedule("e", "America/New_York", "2026-03-05T09:00", calsim.Every("24h"))
        got = list(rows(s, start="2026-03-05T00:00Z", end="2026-03-11T00:00Z"))
        assert [r["nominal_local"].hour for r in got] == [9, 9, 9, 10, 10, 10]
        assert [r["due_utc"].hour for r in got] == [14] * 6

    def test_daily_0230_count_4_with_skip_runs_6_7_9_10_march(self):
        s = calsim.Schedule("n", "America/New_York", "2026-03-06T02:30", "FREQ=DAILY;COUNT=4")
        got = [(r["nominal_local"].day, r["due_utc"] is not None, r["notes"]) for r in rows(s)]
        assert got == [(6, True, []), (7, True, []), (8, False, ["dst_gap_skipped"]), (9, True, []), (10, True, [])]

    def test_daily_0230_count_4_with_shift_runs_6_7_8_9_march_and_the_8th_at_0730z(self):
        s = calsim.Schedule("n", "America/New_York", "2026-03-06T02:30", "FREQ=DAILY;COUNT=4", gap="shift")
        got = list(rows(s))
        assert [r["nominal_local"].day for r in got] == [6, 7, 8, 9]
        assert got[2]["due_utc"] == dt.datetime(2026, 3, 8, 7, 30, tzinfo=UTC)
        assert got[2]["notes"] == ["dst_gap_shifted"]


class TestNewYorkAutumn:
    def test_daily_0130_runs_once_on_the_first_pass_0530z(self):
        s = calsim.Schedule("f", "America/New_York", "2026-10-30T01:30", "FREQ=DAILY;COUNT=4")
        got = [r for r in rows(s) if r["nominal_local"].day == 1]
        assert [(r["due_utc"], r["fold"], r["notes"]) for r in got] == [
            (dt.datetime(2026, 11, 1, 5, 30, tzinfo=UTC), 0, ["dst_fold_first"])
        ]

    def test_daily_0130_with_fold_second_runs_at_0630z(self):
        s = calsim.Schedule("f", "America/New_York", "2026-10-30T01:30", "FREQ=DAILY;COUNT=4", fold="second")
        got = [r for r in rows(s) if r["nominal_local"].day == 1]
        assert [(r["due_utc"], r["fold"]) for r in got] == [(dt.datetime(2026, 11, 1, 6, 30, tzinfo=UTC), 1)]

    def test_daily_0130_with_fold_both_runs_twice(self):
        s = calsim.Schedule("f", "America/New_York", "2026-10-30T01:30", "FREQ=DAILY;COUNT=4", fold="both")
        got = [r for r in rows(s) if r["nominal_local"].day == 1]
        assert [r["fold"] for r in got] == [0, 1]


class TestLordHowe:
    def test_daily_0215_skip_drops_the_4th(self):
        s = calsim.Schedule("l", "Australia/Lord_Howe", "2026-10-02T02:15", "FREQ=DAILY;COUNT=4")
        got = [(r["nominal_local"].day, r["due_utc"] is not None) for r in rows(s)]
        assert got == [(2, True), (3, True), (4, False), (5, True), (6, True)]

    def test_daily_0215_shift_runs_the_4th_at_local_0245(self):
        s = calsim.Schedule("l", "Australia/Lord_Howe", "2026-10-02T02:15", "FREQ=DAILY;COUNT=4", gap="shift")
        r = [r for r in rows(s) if r["nominal_local"].day == 4][0]
        local = r["due_utc"] + dt.timedelta(seconds=r["utc_offset_s"])
        assert local.replace(tzinfo=None) == dt.datetime(2026, 10, 4, 2, 45)


class TestApia2011:
    WINDOW = {"start": "2011-12-01T00:00Z", "end": "2012-02-01T00:00Z"}

    def test_daily_0900_count_5_with_skip_runs_28_29_31_1_2(self):
        s = calsim.Schedule("a", "Pacific/Apia", "2011-12-28T09:00", "FREQ=DAILY;COUNT=5")
        got = [(r["nominal_local"].date().isoformat(), r["due_utc"] is not None) for r in rows(s, **self.WINDOW)]
        assert [d for d, ran in got if ran] == ["2011-12-28", "2011-12-29", "2011-12-31", "2012-01-01", "2012-01-02"]
        assert ("2011-12-30", False) in got

    def test_daily_0900_with_shift_merges_the_30th_onto_the_31sts_instant(self):
        s = calsim.Schedule("a", "Pacific/Apia", "2011-12-28T09:00", "FREQ=DAILY;COUNT=5", gap="shift")
        got = {r["nominal_local"].date().isoformat(): r for r in rows(s, **self.WINDOW)}
        d30, d31 = got["2011-12-30"], got["2011-12-31"]
        assert d30["due_utc"] == dt.datetime(2011, 12, 30, 19, 0, tzinfo=UTC)
        assert d30["notes"] == ["dst_gap_shifted", "merged_with:2011-12-31T09:00:00"]
        assert d31["due_utc"] is None
        assert d31["notes"] == ["merged_into:2011-12-30T09:00:00"]
        assert sorted(got) == ["2011-12-28", "2011-12-29", "2011-12-30", "2011-12-31", "2012-01-01"]


class TestBerlinMonthEnds:
    def test_monthly_on_the_31st_omits_short_months(self):
        s = calsim.Schedule("m", "Europe/Berlin", "2026-01-31T08:00", "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=6")
        assert [r["nominal_local"].month for r in rows(s)] == [1, 3, 5, 7, 8, 10]

    def test_monthly_on_the_31st_backward_uses_each_months_last_day(self):
        s = calsim.Schedule("m", "Europe/Berlin", "2026-01-31T08:00", "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=6",
                            invalid_day="backward")
        got = [(r["nominal_local"].month, r["nominal_local"].day, r["notes"]) for r in rows(s)]
        assert got == [
            (1, 31, []), (2, 28, ["invalid_day_backward"]), (3, 31, []), (4, 30, ["invalid_day_backward"]),
            (5, 31, []), (6, 30, ["invalid_day_backward"]),
        ]

    def test_monthly_on_the_31st_forward_moves_to_the_first_of_the_next_month(self):
        s = calsim.Schedule("m", "Europe/Berlin", "2026-01-31T08:00", "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=3",
                            invalid_day="forward")
        got = [(r["nominal_local"].month, r["nominal_local"].day, r["notes"]) for r in rows(s)]
        assert got == [(1, 31, []), (3, 1, ["invalid_day_forward"]), (3, 31, [])]

    def test_bymonthday_minus_1_is_every_months_last_day(self):
        s = calsim.Schedule("m", "Europe/Berlin", "2026-01-31T08:00", "FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=4")
        assert [r["nominal_local"].day for r in rows(s)] == [31, 28, 31, 30]


def test_berlin_weekly_until_is_inclusive_and_compared_as_an_instant():
    s = calsim.Schedule("w", "Europe/Berlin", "2026-03-23T07:00", "FREQ=WEEKLY;BYDAY=MO,WE,FR;UNTIL=20260401T050000Z")
    got = [r["due_utc"] for r in rows(s)]
    assert got == [
        dt.datetime(2026, 3, 23, 6, 0, tzinfo=UTC),
        dt.datetime(2026, 3, 25, 6, 0, tzinfo=UTC),
        dt.datetime(2026, 3, 27, 6, 0, tzinfo=UTC),
        dt.datetime(2026, 3, 30, 5, 0, tzinfo=UTC),
        dt.datetime(2026, 4, 1, 5, 0, tzinfo=UTC),
    ]
