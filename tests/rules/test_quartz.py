"""Quartz cron (``quartz:`` rules): grammar, day rules, expansion, and DST through the schedule.

Expected fire times are hand-derived from Quartz's ``CronExpression`` Javadoc
and tutorial examples (quartz-scheduler/quartz,
``quartz-core/src/main/java/org/quartz/CronExpression.java``: the class
comment's ``L``, ``W``, ``LW``, ``#`` paragraphs, ``addToSet``'s wrapping
ranges, ``buildExpression``'s "exactly one '?'" check) on a 2026 calendar:
2026-02-01 and 2026-03-01 are Sundays, 2026-01-31 and 2026-02-28 Saturdays,
2026-08-01 a Saturday, 2026-05-31 a Sunday.

DST days: America/New_York 2026-03-08 (02:00->03:00) and 2026-11-01 (02:00->01:00).
"""

from __future__ import annotations

import calendar
import datetime as dt

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calsim
from calsim.errors import CalsimError, RuleError
from calsim.rules.cron import Cron
from calsim.rules.quartz import QuartzCron
from messages import assert_clear

US = 1_000_000


def fires(expr: str, start: str = "2026-01-01", end: str = "2027-01-01") -> list[str]:
    lo, hi = np.array([start, end], "datetime64[us]").astype(np.int64)
    times = QuartzCron.parse(expr).wall_times(lo, hi).astype("datetime64[us]").astype("datetime64[s]")
    return [str(t) for t in times]


def days(expr: str, start: str = "2026-01-01", end: str = "2027-01-01") -> list[str]:
    return [t[:10] for t in fires(expr, start, end)]


class TestFields:
    def test_javadoc_example_every_quarter_hour_on_weekdays_9_to_17(self):
        got = fires("quartz:0 0/15 9-17 ? * MON-FRI", "2026-03-06T17:30", "2026-03-09T09:16")
        assert got == ["2026-03-06T17:30:00", "2026-03-06T17:45:00", "2026-03-09T09:00:00", "2026-03-09T09:15:00"]

    def test_seconds_field_fires_within_the_minute(self):
        assert fires("0/20 0 12 * * ?", "2026-01-01", "2026-01-02") == [
            "2026-01-01T12:00:00", "2026-01-01T12:00:20", "2026-01-01T12:00:40"]

    def test_prefix_is_case_insensitive_and_optional_to_parse(self):
        assert QuartzCron.parse("QUARTZ:0 0 12 * * ?") == QuartzCron.parse("0 0 12 * * ?")

    def test_names_and_letters_in_any_case(self):
        assert days("0 0 12 ? jan mon#1") == ["2026-01-05"]

    def test_sunday_is_1_and_saturday_7(self):
        assert days("0 0 12 ? * 1", "2026-03-01", "2026-03-08") == ["2026-03-01"]
        assert days("0 0 12 ? * 7", "2026-03-01", "2026-03-08") == ["2026-03-07"]

    def test_a_slash_n_runs_from_a_to_the_field_maximum(self):
        # Javadoc: "7/6 in the month field only turns on month 7".
        assert sorted({d[5:7] for d in days("0 0 0 1 7/6 ?")}) == ["07"]

    def test_hour_range_wraps_past_midnight(self):
        # Javadoc: "22-2 to catch 10 o'clock at night until 2 o'clock in the morning" (addToSet wraps).
        assert QuartzCron.parse("0 0 22-2 * * ?").hours == (0, 1, 2, 22, 23)

    def test_weekday_and_month_ranges_wrap(self):
        rule = QuartzCron.parse("0 0 0 ? NOV-FEB FRI-MON")
        assert rule.months == (1, 2, 11, 12) and rule.weekdays == {6, 7, 1, 2}

    def test_day_of_month_range_wraps_over_31(self):
        assert days("0 0 0 30-2 * ?", "2026-02-01", "2026-03-04") == ["2026-02-01", "2026-02-02", "2026-03-01",
                                                                       "2026-03-02"]

    def test_year_field_limits_the_years(self):
        assert days("0 0 0 1 1 ? 2027-2028", "2026-01-01", "2030-01-01") == ["2027-01-01", "2028-01-01"]

    def test_omitted_year_is_every_year(self):
        assert QuartzCron.parse("0 0 0 1 1 ?").years is None


class TestDayRules:
    def test_L_is_the_last_day_of_each_month(self):
        assert days("0 0 12 L * ?")[:3] == ["2026-01-31", "2026-02-28", "2026-03-31"]

    def test_L_minus_3_is_the_third_to_last_day(self):
        assert days("0 0 12 L-3 * ?")[:2] == ["2026-01-28", "2026-02-25"]

    def test_LW_backs_a_saturday_last_day_off_to_friday(self):
        assert days("0 0 12 LW * ?")[:2] == ["2026-01-30", "2026-02-27"]

    def test_15W_moves_a_sunday_15th_to_monday_16th(self):
        assert days("0 0 12 15W * ?", "2026-02-01", "2026-03-01") == ["2026-02-16"]

    def test_15W_moves_a_saturday_15th_to_friday_14th(self):
        assert days("0 0 12 15W * ?", "2026-08-01", "2026-09-01") == ["2026-08-14"]

    def test_1W_on_a_saturday_is_monday_the_3rd_never_the_previous_month(self):
        assert days("0 0 12 1W * ?", "2026-08-01", "2026-09-01") == ["2026-08-03"]

    def test_31W_on_a_sunday_is_friday_the_29th_never_the_next_month(self):
        assert days("0 0 12 31W * ?", "2026-05-01", "2026-06-01") == ["2026-05-29"]

    def test_31W_gives_no_run_in_a_30_day_month(self):
        assert days("0 0 12 31W * ?", "2026-04-01", "2026-05-01") == []

    def test_L_minus_30_gives_no_run_in_february(self):
        assert days("0 0 12 L-30 * ?", "2026-02-01", "2026-03-01") == []

    def test_6L_is_the_last_friday(self):
        assert days("0 0 12 ? * 6L")[:2] == ["2026-01-30", "2026-02-27"]

    def test_FRIL_equals_6L(self):
        assert days("0 0 12 ? * FRIL") == days("0 0 12 ? * 6L")

    def test_L_alone_in_day_of_week_is_saturday(self):
        assert days("0 0 12 ? * L", "2026-03-01", "2026-03-15") == ["2026-03-07", "2026-03-14"]

    def test_6_hash_3_is_the_third_friday(self):
        assert days("0 0 12 ? * 6#3")[:2] == ["2026-01-16", "2026-02-20"]

    def test_fifth_weekday_skips_months_without_one(self):
        got = days("0 0 12 ? * 4#5")  # fifth Wednesday
        assert got[:2] == ["2026-04-29", "2026-07-29"] and len(got) == 4

    def test_day_of_month_list_mixes_L_and_days(self):
        assert days("0 0 12 1,15,L * ?", "2026-02-01", "2026-03-01") == ["2026-02-01", "2026-02-15", "2026-02-28"]

    def test_question_mark_day_of_month_lets_the_weekday_decide_alone(self):
        # Quartz never ORs the day fields (unlike Vixie cron): '?' leaves only the other one.
        assert days("0 0 12 ? * MON", "2026-03-01", "2026-03-15") == ["2026-03-02", "2026-03-09"]


def _reference(rule: QuartzCron, day: dt.date) -> bool:
    """A scalar reading of the Javadoc's day rules, one date at a time (the vectorised mask must agree)."""
    mlen = calendar.monthrange(day.year, day.month)[1]
    if day.month not in rule.months or (rule.years is not None and day.year not in rule.years):
        return False
    if rule.by_dom:
        ok = day.day in rule.days or any(day.day == mlen - n for n in rule.last_offsets)
        for target in [mlen - n for n in rule.last_weekday_offsets] + list(rule.nearest_weekday):
            if not 1 <= target <= mlen:
                continue
            wd = dt.date(day.year, day.month, target).weekday()
            moved = target + {5: (2 if target == 1 else -1), 6: (-2 if target == mlen else 1)}.get(wd, 0)
            ok |= day.day == moved
        return ok
    q = day.isoweekday() % 7 + 1
    if rule.last_of_weekday:
        return q == rule.last_of_weekday and day.day + 7 > mlen
    if rule.nth_weekday:
        return q == rule.nth_weekday[0] and (day.day - 1) // 7 + 1 == rule.nth_weekday[1]
    return q in rule.weekdays


_DOM_ITEMS = st.sampled_from(["1", "15", "31", "L", "L-2", "LW", "L-5W", "1W", "15W", "30W", "1-10/3", "28-3", "*"])
_DOW_FIELDS = st.sampled_from(["MON-FRI", "1", "7", "L", "6L", "SUNL", "2#1", "6#5", "FRI-MON", "*/2", "*"])


@settings(max_examples=60, deadline=None)
@given(dom=st.lists(_DOM_ITEMS, min_size=1, max_size=3), dow=_DOW_FIELDS, by_dom=st.booleans(),
       month=st.sampled_from(["*", "2", "FEB,APR", "NOV-FEB"]))
def test_day_mask_equals_a_scalar_reading_of_the_javadoc(dom, dow, by_dom, month):
    expr = f"0 0 0 {','.join(dom)} {month} ?" if by_dom else f"0 0 0 ? {month} {dow}"
    rule = QuartzCron.parse(expr)
    got = set(days(expr, "2023-01-01", "2029-01-01"))
    want = {str(d) for d in (dt.date(2023, 1, 1) + dt.timedelta(n) for n in range(2192)) if _reference(rule, d)}
    assert got == want


class TestRefused:
    @pytest.mark.parametrize("expr, message", [
        ("0 0 12 * * MON", "day-of-month '*' and day-of-week 'MON': exactly one must be '?'"),
        ("0 0 12 ? * ?", "day-of-month '?' and day-of-week '?': exactly one must be '?'"),
        ("0 0 12 * *", "expected 6 or 7 fields"),
        ("0 0 12 * * ? 2026 x", "expected 6 or 7 fields"),
        ("60 0 12 * * ?", "second value '60' is out of range (allowed 0..59)"),
        ("0 0 24 * * ?", "hour value '24' is out of range (allowed 0..23)"),
        ("0 0 0 0 * ?", "day-of-month value '0' is out of range"),
        ("0 0 0 ? * 0", "day-of-week value '0' is out of range (allowed 1..7 or SUN..SAT"),
        ("0 0 0 ? 13 *", "month value '13' is out of range"),
        ("0 0 0 ? * * 1969", "year value '1969' is out of range (allowed 1970..2199)"),
        ("0 0 0 ? * * 2030-2028", "year range '2030-2028' is reversed"),
        ("0 */0 0 ? * *", "minute item '*/0' has step '0'"),
        ("0 0/61 0 ? * *", "minute item '0/61' has step 61 (allowed 1..59)"),
        ("0 0 0 L-31 * ?", "day-of-month item 'L-31' has offset 31 (allowed L-0..L-30)"),
        ("0 0 0 1-5W * ?", "'W' follows one day"),
        ("0 0 0 ? * 6#6", "has occurrence '6' (allowed 1..5"),
        ("0 0 0 ? * 6L,2", "puts nL or n#k in a list"),
        ("0 0 0 ? * 2#1,3#2", "puts nL or n#k in a list"),
        ("0 0 0L ? * *", "hour item '0L' uses 'L', allowed only in day-of-month and day-of-week"),
        ("0 0 0 ? FOO *", "month value 'FOO' is not a number or name"),
        ("0 0 0 1? * ?", "'?' is allowed only as the whole day-of-month or day-of-week field"),
    ])
    def test_refused_with_field_item_and_allowed(self, expr, message):
        with pytest.raises(RuleError, match="^quartz: ") as info:
            QuartzCron.parse(expr)
        assert message in str(info.value) and repr(expr) in str(info.value)
        assert_clear(info.value)

    def test_vixie_cron_stays_strict_about_question_marks(self):
        with pytest.raises(RuleError):
            Cron.parse("0 12 ? * MON")

    def test_a_bare_six_field_quartz_rule_is_not_guessed(self):
        with pytest.raises(RuleError, match="cannot tell the kind"):
            calsim.Schedule("q", "UTC", "2026-01-01T00:00", "0 0 12 * * ?")

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet="0123456789 */-,?LW#ABCDEFGHIJKLMNOPQRSTUVWXYZ", max_size=40))
    def test_fuzzed_text_raises_only_rule_errors(self, text):
        try:
            QuartzCron.parse(text)
        except CalsimError as exc:
            assert isinstance(exc, RuleError)
            assert_clear(exc)


class TestSchedule:
    def test_quartz_prefix_makes_a_quartz_schedule(self):
        s = calsim.Schedule("q", "UTC", "2026-01-01T00:00", "quartz:0 30 2 ? * SUN")
        assert s.kind == "quartz" and s.explain() == "quartz: at 02:30:00 on day-of-week SUN"

    def test_spring_forward_0230_is_skipped_under_the_quartz_preset(self):
        s = calsim.presets.quartz().apply(
            calsim.Schedule("q", "America/New_York", "2026-03-01T00:00", "quartz:0 30 2 ? * SUN"))
        f = calsim.expand([s], "2026-03-08T00:00Z", "2026-03-09T00:00Z", release="2026f")
        assert f["notes"].to_list() == [["dst_gap_skipped"]] and f["due_utc"].to_list() == [None]

    def test_fall_back_0130_runs_once_in_its_second_pass_under_the_quartz_preset(self):
        # getTimeAfter reads 01:30 back in EST (tests/rules/test_quartz_jar.py checks it on the real jar).
        s = calsim.presets.quartz().apply(
            calsim.Schedule("q", "America/New_York", "2026-10-01T00:00", "quartz:0 30 1 ? * SUN"))
        f = calsim.expand([s], "2026-11-01T00:00Z", "2026-11-02T00:00Z", release="2026f")
        assert [None if t is None else t.isoformat() for t in f["due_utc"]] == [None, "2026-11-01T06:30:00+00:00"]
        assert f["notes"].to_list()[0] == ["dst_lost:quartz"]

    def test_seconds_survive_into_the_occurrence_frame(self):
        s = calsim.Schedule("q", "UTC", "2026-01-01T00:00", "quartz:15 0 12 1 1 ? 2026")
        f = calsim.expand([s], "2026-01-01T00:00Z", "2027-01-01T00:00Z", release="2026f")
        assert [t.isoformat() for t in f["nominal_local"]] == ["2026-01-01T12:00:15"]


def test_the_quartz_example_fleet_loads_with_its_presets_and_expands_as_hand_derived():
    import pathlib

    import calendar as cal
    import datetime as dt

    import calsim

    path = pathlib.Path(__file__).parents[2] / "data" / "examples" / "quartz-jobs.toml"
    fleet = {s.id: s for s in calsim.load(path)}
    assert fleet["hr/payroll-run"].policy.limit_edge == "on_time"  # job_store="jdbc"
    assert fleet["ops/business-hours-poll"].policy.suspend_catchup == "skip"  # DO_NOTHING
    # (a day's margin: Chicago's 2026-12-31 18:00 is 2027-01-01T00:00Z; only local 2026 dates are counted)
    occ = calsim.expand(list(fleet.values()), "2026-01-01T00:00Z", "2027-01-02T00:00Z", release="2026f")
    days = lambda sid: [d.date() for d in occ.filter(occ["schedule_id"] == sid)["nominal_local"]  # noqa: E731
                        if d.year == 2026]

    def last_weekday(y, m):
        d = dt.date(y, m, cal.monthrange(y, m)[1])
        while d.weekday() >= 5:
            d -= dt.timedelta(days=1)
        return d

    assert days("ledger/close-books") == [last_weekday(2026, m) for m in range(1, 13)]
    second_fridays = [dt.date(2026, m, 1) + dt.timedelta(days=(4 - dt.date(2026, m, 1).weekday()) % 7 + 7)
                      for m in range(1, 13)]
    assert days("hr/payroll-run") == second_fridays
    weekdays = sum(1 for k in range(365) if (dt.date(2026, 1, 1) + dt.timedelta(days=k)).weekday() < 5)
    assert len(days("ops/business-hours-poll")) == 36 * weekdays
