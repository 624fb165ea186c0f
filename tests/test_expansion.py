"""Expansion behaviour beyond the pinned cases: frame, window, calendars, rule kinds, RFC 5545 examples."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calsim
from calsim.expansion import OCCURRENCE_SCHEMA

UTC = dt.timezone.utc
R = "2026f"


def expand(s, start="2026-01-01T00:00Z", end="2027-01-01T00:00Z", release=R):
    return calsim.expand(s if isinstance(s, list) else [s], start, end, release)


def local(frame):
    return [t.isoformat() for t in frame["nominal_local"]]


class TestFrame:
    def test_schema_is_the_occurrence_frame_of_the_contract(self):
        f = expand(calsim.Schedule("a", "Europe/Paris", "2026-01-01T09:00", "FREQ=DAILY;COUNT=2"))
        assert f.schema == OCCURRENCE_SCHEMA
        assert f["tzdata"].unique().to_list() == ["2026f"] and f["zone"].unique().to_list() == ["Europe/Paris"]

    def test_rows_are_sorted_by_instant_then_schedule_revision_nominal_and_fold(self):
        fleet = calsim.examples.fleet(60, seed=3)
        f = expand(fleet, "2026-10-01T00:00Z", "2026-11-15T00:00Z")
        assert f.height > 1000
        runs = f.drop_nulls("due_utc")
        assert runs["due_utc"].is_sorted()
        ties = runs.filter(pl.col("due_utc").is_duplicated())
        assert ties.equals(ties.sort(["due_utc", "schedule_id", "revision", "nominal_local", "fold"]))

    def test_identity_schedule_nominal_fold_is_unique(self):
        f = expand(calsim.examples.fleet(80, seed=5))
        assert f.select(["schedule_id", "revision", "nominal_local", "fold"]).is_duplicated().sum() == 0

    def test_empty_result_keeps_the_schema(self):
        s = calsim.Schedule("a", "UTC", "2030-01-01T00:00", "FREQ=DAILY")
        f = expand(s)
        assert f.height == 0 and f.schema == OCCURRENCE_SCHEMA


class TestWindow:
    def test_window_is_half_open_on_instants_and_naive_bounds_are_utc(self):
        s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
        f = expand(s, "2026-01-01T01:00", "2026-01-01T03:00")
        assert [d.hour for d in f["due_utc"]] == [1, 2]

    def test_a_skipped_row_is_placed_by_its_nominal_time_read_with_the_offset_before_the_gap(self):
        s = calsim.Schedule("n", "America/New_York", "2026-03-01T02:30", "FREQ=DAILY")
        inside = expand(s, "2026-03-08T07:30Z", "2026-03-08T07:31Z")  # 02:30 EST = 07:30Z
        outside = expand(s, "2026-03-08T06:30Z", "2026-03-08T07:30Z")
        assert local(inside) == ["2026-03-08T02:30:00"] and inside["due_utc"].to_list() == [None]
        assert outside.height == 0

    def test_end_not_after_start_is_an_input_error(self):
        with pytest.raises(calsim.InputError, match=r"^end: '2026-01-01T00:00Z' is not after start"):
            calsim.expand([], "2026-01-01T00:00Z", "2026-01-01T00:00Z")


class TestRevisions:
    def test_each_revision_covers_its_half_open_validity_window(self):
        r1 = calsim.Schedule("job", "UTC", "2026-01-01T09:00", "FREQ=DAILY", effective_to="2026-01-03T00:00Z")
        r2 = calsim.Schedule("job", "UTC", "2026-01-01T10:00", "FREQ=DAILY", revision=2,
                             effective_from="2026-01-03T00:00Z")
        f = expand([r1, r2], "2026-01-01T00:00Z", "2026-01-05T00:00Z")
        assert list(zip(f["revision"], [d.hour for d in f["due_utc"]])) == [(1, 9), (1, 9), (2, 10), (2, 10)]

    def test_overlapping_revisions_are_refused(self):
        r1 = calsim.Schedule("job", "UTC", "2026-01-01T09:00", "FREQ=DAILY", effective_to="2026-01-03T00:00Z")
        r2 = calsim.Schedule("job", "UTC", "2026-01-01T10:00", "FREQ=DAILY", revision=2,
                             effective_from="2026-01-02T00:00Z")
        with pytest.raises(calsim.ScheduleError, match=r"^schedule 'job': revision 2 starts before revision 1 ends"):
            expand([r1, r2])

    def test_repeated_revision_numbers_are_refused(self):
        a = calsim.Schedule("job", "UTC", "2026-01-01T09:00", "FREQ=DAILY")
        with pytest.raises(calsim.ScheduleError, match="revision numbers repeat"):
            expand([a, a])


class TestCalendars:
    def test_holiday_calendar_keeps_the_row_without_instant_and_names_its_version(self):
        import holidays

        s = calsim.Schedule("d", "America/New_York", "2026-12-20T09:00", "FREQ=DAILY", exclude="holidays:US")
        f = expand(s, "2026-12-24T00:00Z", "2026-12-27T00:00Z")
        xmas = f.filter(pl.col("nominal_local") == dt.datetime(2026, 12, 25, 9))
        assert xmas["due_utc"].to_list() == [None]
        assert xmas["notes"].to_list() == [[f"excluded:US@{holidays.__version__}"]]
        assert f.height == 3

    def test_china_business_days_run_on_the_make_up_saturday_and_not_on_holidays(self):
        s = calsim.Schedule("d", "Asia/Shanghai", "2026-02-01T09:00", "FREQ=DAILY", exclude="business:CN")
        f = expand(s, "2026-02-13T00:00Z", "2026-02-17T00:00Z")
        ran = {r["nominal_local"].date().isoformat(): r["due_utc"] is not None for r in f.iter_rows(named=True)}
        # 2026-02-14 is a Saturday worked in exchange for the Spring Festival; the 15th is a Sunday.
        assert ran == {"2026-02-13": True, "2026-02-14": True, "2026-02-15": False, "2026-02-16": False}

    def test_explicit_dates_and_a_versioned_calendar_file(self, tmp_path):
        p = tmp_path / "ops-freeze.txt"
        p.write_text("# version: 2026-11\n2026-03-03  # maintenance\n")
        s = calsim.Schedule("d", "UTC", "2026-03-01T09:00", "FREQ=DAILY;COUNT=4", exclude=["2026-03-02", str(p)])
        notes = expand(s)["notes"].to_list()
        assert notes[1][0].startswith("excluded:dates@") and notes[2] == ["excluded:ops-freeze@2026-11"]
        assert notes[0] == [] and notes[3] == []

    def test_unknown_calendar_is_a_schedule_error(self):
        with pytest.raises(calsim.ScheduleError, match=r"exclude: unknown calendar country 'XX'"):
            calsim.Schedule("d", "UTC", "2026-03-01T09:00", "FREQ=DAILY", exclude="holidays:XX")
        with pytest.raises(calsim.ScheduleError, match=r"exclude: unknown calendar 'weekends'"):
            calsim.Schedule("d", "UTC", "2026-03-01T09:00", "FREQ=DAILY", exclude="weekends")


class TestRdateExdate:
    def test_rdate_adds_uncounted_times_and_exdate_removes_after_count(self):
        s = calsim.Schedule("d", "UTC", "2026-03-01T09:00", "FREQ=DAILY;COUNT=3",
                            rdate=["2026-03-10T12:00"], exdate=["2026-03-02T09:00"])
        assert local(expand(s)) == ["2026-03-01T09:00:00", "2026-03-03T09:00:00", "2026-03-10T12:00:00"]


class TestRuleKinds:
    def test_cron_daily_0230_is_skipped_on_the_new_york_spring_day(self):
        s = calsim.Schedule("c", "America/New_York", "2026-03-06T00:00", "30 2 * * *")
        f = expand(s, "2026-03-07T00:00Z", "2026-03-10T00:00Z")
        assert [(r["nominal_local"].day, r["notes"]) for r in f.iter_rows(named=True)] == [
            (7, []), (8, ["dst_gap_skipped"]), (9, [])
        ]

    def test_dtstart_block_sets_start_and_checks_the_zone(self):
        block = "DTSTART;TZID=America/New_York:20260306T023000\nRRULE:FREQ=DAILY;COUNT=2"
        s = calsim.Schedule("b", "America/New_York", None, block)
        assert local(expand(s)) == ["2026-03-06T02:30:00", "2026-03-07T02:30:00"]
        with pytest.raises(calsim.ScheduleError,
                           match=r"TZID=America/New_York but the schedule's zone is 'Europe/Paris'"):
            calsim.Schedule("b", "Europe/Paris", None, block)


class TestRfc5545Examples:
    """RFC 5545 §3.8.5.3 examples, in America/New_York as the RFC writes them."""

    @staticmethod
    def days(rule, dtstart, end="1998-06-01T00:00Z"):
        s = calsim.Schedule("rfc", "America/New_York", dtstart, rule)
        f = calsim.expand([s], "1997-01-01T00:00Z", end, R)
        return [(r["nominal_local"].strftime("%m-%d %H:%M"), r["utc_offset_s"] // 3600)
                for r in f.iter_rows(named=True)]

    def test_every_other_week_on_monday_wednesday_friday_until_december_24(self):
        got = self.days("FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR", "1997-09-01T09:00")
        want = ["09-01", "09-03", "09-05", "09-15", "09-17", "09-19", "09-29", "10-01", "10-03", "10-13", "10-15",
                "10-17", "10-27", "10-29", "10-31", "11-10", "11-12", "11-14", "11-24", "11-26", "11-28", "12-08",
                "12-10", "12-12", "12-22"]
        assert [d[:5] for d, _ in got] == want
        assert {off for d, off in got if d < "10-26"} == {-4} and {off for d, off in got if d > "10-26"} == {-5}

    def test_monthly_on_the_first_and_last_day_for_10_occurrences(self):
        got = self.days("FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1", "1997-09-30T09:00")
        assert [d[:5] for d, _ in got] == ["09-30", "10-01", "10-31", "11-01", "11-30", "12-01", "12-31",
                                         "01-01", "01-31", "02-01"]

    def test_every_3_hours_with_a_utc_until_stops_at_the_until_instant(self):
        # The RFC lists 09:00, 12:00 and 15:00 EDT, but UNTIL 17:00Z is 13:00 EDT and
        # 15:00 EDT is 19:00Z: a known inconsistency of that example. A UTC UNTIL is
        # compared with the resolved instant (RFC 5545 §3.3.10), so 15:00 is past it.
        got = self.days("FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T170000Z", "1997-09-02T09:00")
        assert [d for d, _ in got] == ["09-02 09:00", "09-02 12:00"]

    def test_the_second_to_last_weekday_of_the_month(self):
        got = self.days("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2", "1997-09-29T09:00", end="1998-04-01T00:00Z")
        assert [d[:5] for d, _ in got] == ["09-29", "10-30", "11-27", "12-30", "01-29", "02-26", "03-30"]

    def test_daily_until_december_24_crosses_the_october_fall_back(self):
        got = self.days("FREQ=DAILY;UNTIL=19971224T000000Z", "1997-09-02T09:00")
        assert got[0] == ("09-02 09:00", -4) and got[-1] == ("12-23 09:00", -5) and len(got) == 113

    def test_friday_the_13th_excluding_dtstart(self):
        got = self.days("FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", "1997-09-02T09:00", end="2000-11-01T00:00Z")
        assert [d[:5] for d, _ in got] == ["02-13", "03-13", "11-13", "08-13", "10-13"]


RULES = st.builds(
    lambda freq, interval, byhour, byday, bymonthday: ";".join(
        p for p in (f"FREQ={freq}", f"INTERVAL={interval}",
                    f"BYHOUR={','.join(map(str, byhour))}" if byhour else "",
                    f"BYDAY={','.join(byday)}" if byday and freq in ("WEEKLY", "MONTHLY", "DAILY") else "",
                    f"BYMONTHDAY={','.join(map(str, bymonthday))}" if bymonthday and freq == "MONTHLY" else "") if p),
    st.sampled_from(["DAILY", "WEEKLY", "MONTHLY", "HOURLY"]), st.integers(1, 4),
    st.lists(st.integers(0, 23), max_size=3, unique=True),
    st.lists(st.sampled_from(["MO", "TU", "WE", "TH", "FR", "SA", "SU"]), max_size=3, unique=True),
    st.lists(st.integers(-31, 31).filter(bool), max_size=3, unique=True),
)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(RULES, st.integers(0, 700), st.integers(0, 86399))
def test_expand_in_a_zone_without_dst_equals_dateutil(rule, day, second):
    from dateutil.rrule import rrulestr

    start = dt.datetime(2025, 1, 1) + dt.timedelta(days=day, seconds=second)
    s = calsim.Schedule("p", "Asia/Tokyo", start.isoformat(), rule)
    f = calsim.expand([s], "2026-01-01T00:00Z", "2027-01-01T00:00Z", R)
    lo, hi = dt.datetime(2026, 1, 1, 9), dt.datetime(2027, 1, 1, 9)  # Tokyo is UTC+9 all year
    try:
        want = [t for t in rrulestr(rule, dtstart=start.replace(microsecond=0)).between(lo, hi, inc=True) if t < hi]
    except ValueError:  # dateutil refuses rules whose BYxxx can never match; calsim returns nothing
        assert f.height == 0
        return
    assert f["nominal_local"].to_list() == want


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.sampled_from(["0 9 * * *", "*/20 1-3 * * *", "30 2 * * 0", "15 1 1,15 * *", "0 0 L * *", "0 12 * * 5#2"]),
       st.integers(0, 300))
def test_cron_expansion_in_utc_equals_cronsim(expr, day):
    from cronsim import CronSim

    start = dt.datetime(2026, 1, 1) + dt.timedelta(days=day)
    f = calsim.expand([calsim.Schedule("c", "UTC", start.isoformat(), expr)], start.isoformat() + "Z",
                      "2027-06-01T00:00Z", R)
    it = CronSim(expr, start - dt.timedelta(minutes=1))
    want = []
    for t in it:
        if t >= dt.datetime(2027, 6, 1):
            break
        want.append(t)
    assert f["nominal_local"].to_list() == want


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.sampled_from(["America/New_York", "Australia/Lord_Howe", "Europe/Berlin", "America/Santiago"]),
       st.sampled_from(["00:30", "01:30", "02:00", "02:15", "02:30", "02:59"]), st.integers(0, 365), st.integers(1, 40),
       st.sampled_from(["skip", "shift", "next_valid"]))
def test_count_counts_only_instances_that_survive_the_gap_policy(zone, hhmm, day, count, gap):
    start = (dt.datetime(2026, 1, 1) + dt.timedelta(days=day)).strftime("%Y-%m-%dT") + hhmm
    s = calsim.Schedule("c", zone, start, f"FREQ=DAILY;COUNT={count}", gap=gap)
    f = calsim.expand([s], "2025-12-01T00:00Z", "2028-01-01T00:00Z", R)
    counted = f.filter(~pl.col("notes").list.contains("dst_gap_skipped"))
    assert counted["nominal_local"].n_unique() == count


def test_a_rule_that_can_never_match_returns_empty_after_a_bounded_search():
    s = calsim.Schedule("x", "UTC", "2026-01-01T00:00", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30;COUNT=3")
    assert expand(s).height == 0
    assert calsim.preview(s, n=3, release=R).height == 0
