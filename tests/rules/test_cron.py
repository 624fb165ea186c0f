"""calsim.rules.cron against cronsim (the oracle), plus pinned behaviour and error messages.

cronsim iterated with *naive* datetimes behaves as a zone without DST, which is
exactly what ``Cron.wall_times`` produces. cronsim starts strictly after its
start time and drops microseconds, so the oracle starts one second before the
window (floored to the second) and keeps only times ``>= lo``.
"""

from __future__ import annotations

import calendar
import datetime as dt

import numpy as np
import pytest
from cronsim import CronSim, CronSimError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calsim.errors import RuleError
from calsim.rules.cron import MACROS, Cron

US = 1_000_000
EPOCH = dt.datetime(1970, 1, 1)


def to_us(value: dt.datetime | str) -> int:
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    d = value - EPOCH
    return (d.days * 86400 + d.seconds) * US + d.microseconds


def to_dt(us: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=int(us))


def iso(times: np.ndarray) -> list[str]:
    return [to_dt(t).isoformat(timespec="minutes") for t in times]


def times(expr: str, lo: str, hi: str) -> list[str]:
    return iso(Cron.parse(expr).wall_times(to_us(lo), to_us(hi)))


def cronsim_times(expr: str, lo: int, hi: int, cap: int) -> tuple[list[int], bool]:
    """cronsim's times in [lo, hi), at most ``cap``; and whether the list is complete."""
    expr = MACROS.get(expr.strip().lower(), expr)  # cronsim has no macros
    start = to_dt(lo).replace(microsecond=0) - dt.timedelta(seconds=1)
    out: list[int] = []
    for t in CronSim(expr, start):  # ends by StopIteration after 50 matchless years
        u = to_us(t)
        if u >= hi:
            return out, True
        if u >= lo:
            if len(out) == cap:
                return out, False
            out.append(u)
    return out, True


def assert_matches_cronsim(expr: str, lo: int, hi: int, cap: int = 300) -> None:
    ours = Cron.parse(expr).wall_times(lo, hi)
    ref, complete = cronsim_times(expr, lo, hi, cap)
    if complete:
        assert iso(ours) == iso(np.array(ref, dtype=np.int64)), expr
    else:
        assert iso(ours[:cap]) == iso(np.array(ref, dtype=np.int64)), expr


# Every feature cronsim shares with calsim; nW and FRIL are calsim-only (tested below).
ORACLE_EXPRESSIONS = [
    "* * * * *",
    "0 0 * * *",
    "30 2 * * *",
    "*/7 * * * *",
    "*/15 9-17 * * MON-FRI",
    "5,10-12,50-59/3 */5 * * *",
    "1-59/2 0 1 1 *",
    "0 0 1 * *",
    "0 0 31 * *",
    "0 0 29 2 *",  # leap years only
    "0 0 30 1-12 *",
    "59 23 31 12 *",
    "0 0 */10 * *",
    "0 0 5/10 * *",  # a/n means a-max/n
    "0 0 5-5/10 * *",  # a one-value range with a step is that value (Debian get_range(), cronsim 2.9)
    "0 9-9/1 * * *",  # once a day at 09:00 (issue 25: calsim read it as 09:00-23:00)
    "0 12 L * *",
    "0 8 L 2 *",
    "0 12 LW * *",
    "0 0 LW,15 * *",
    "0 0 L,1 */3 *",
    "0 9 * * 5L",
    "30 1 * * 2L",
    "0 9 * * 5#5",
    "0 9 * * MON#1",
    "0 0,12 * * 4#2,4#4",
    "0 9 * * 0#5,6L",
    "0 0 * 2 MON#5",  # a fifth Monday in February: leap years starting on a Monday
    "0 0 13 * 5",  # OR: every 13th and every Friday
    "0 0 1-7 * SUN",  # OR
    "0 0 1 * 1-5",  # OR
    "0 0 29 2 1",  # OR: Feb 29 or a Monday in February
    "0 0 31 4,6 MON",  # OR: never the 31st, but Mondays
    "0 0 L * 1",  # OR with L
    "0 0 */2 * MON",  # AND: '*/2' starts with '*'
    "0 0 * * 7",
    "0 0 * * 0,7",
    "0 0 * * */2",
    "0 0 * * 1/2",  # 1,3,5,7: 7 is Sunday
    "0 0 * * 7L",  # the last Sunday
    "0 9 * * 7#2",  # the second Sunday
    "0 0 1,30 2 *",  # February has no 30th, but the 1st
    "0 0 * jan,Jul mon",
    "0 0 1 JAN-MAR/2 *",
    "15 3 * FEB sun",
    "0 */6 * * SAT,SUN",
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
]

# A year boundary, a leap February, and a later odd start; each window is nine years.
WINDOW_STARTS = ["2019-12-30T23:58", "2024-02-27T12:07:30.5", "2031-06-15T00:00"]


class TestAgainstCronsim:
    @pytest.mark.parametrize("expr", ORACLE_EXPRESSIONS)
    def test_hand_picked_expression_matches_cronsim(self, expr):
        for start in WINDOW_STARTS:
            lo = to_us(start)
            assert_matches_cronsim(expr, lo, lo + 9 * 366 * 86400 * US)

    def test_leap_day_fires_only_in_leap_years(self):
        assert times("0 0 29 2 *", "2019-01-01", "2029-01-01") == [
            "2020-02-29T00:00",
            "2024-02-29T00:00",
            "2028-02-29T00:00",
        ]


@st.composite
def field_text(draw, lo, hi, names=(), offset=0, extras=()):
    def value():
        n = draw(st.integers(lo, hi))
        if names and offset <= n < offset + len(names) and draw(st.booleans()):
            name = names[n - offset]
            return draw(st.sampled_from([name, name.lower(), name.title()]))
        return str(n)

    if draw(st.integers(0, 3)) == 0:
        return "*"
    items = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("n", "n", "range", "*/s", "a-b/s", "a/s", *extras)))
        if kind == "n":
            items.append(value())
        elif kind in ("range", "a-b/s"):
            a, b = sorted(draw(st.lists(st.integers(lo, hi), min_size=2, max_size=2)))
            items.append(f"{a}-{b}" + (f"/{draw(st.integers(1, 12))}" if kind == "a-b/s" else ""))
        elif kind == "*/s":
            items.append(f"*/{draw(st.integers(1, hi + 2))}")
        elif kind == "a/s":
            items.append(f"{value()}/{draw(st.integers(1, 12))}")
        elif kind in ("L", "LW"):
            items.append(kind)
        elif kind == "nL":
            items.append(f"{draw(st.integers(0, 7))}L")
        elif kind == "n#k":
            items.append(f"{value()}#{draw(st.integers(1, 5))}")
    return ",".join(items)


@st.composite
def expressions(draw):
    weekdays = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
    months = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
    return " ".join(
        [
            draw(field_text(0, 59)),
            draw(field_text(0, 23)),
            draw(field_text(1, 31, extras=("L", "LW"))),
            draw(field_text(1, 12, months, 1)),
            draw(field_text(0, 7, weekdays, 0, extras=("nL", "n#k"))),
        ]
    )


class TestPropertyAgainstCronsim:
    @settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(
        expressions(),
        st.integers(to_us("1995-01-01") // US, to_us("2035-01-01") // US),
        st.integers(0, 999_999),
        st.integers(3600, 6 * 366 * 86400),
    )
    def test_random_expression_matches_cronsim(self, expr, lo_s, lo_frac, length_s):
        lo = lo_s * US + lo_frac
        hi = lo + length_s * US
        try:
            CronSim(expr, dt.datetime(2000, 1, 1))
        except CronSimError:
            with pytest.raises(RuleError):
                Cron.parse(expr)
            return
        assert_matches_cronsim(expr, lo, hi, cap=200)


def nearest_weekday_reference(year: int, month: int, n: int) -> int | None:
    """Quartz's nW, one month at a time."""
    last = calendar.monthrange(year, month)[1]
    if n > last:
        return None
    weekday = dt.date(year, month, n).weekday()  # Monday = 0
    if weekday == 5:  # Saturday
        return 3 if n == 1 else n - 1
    if weekday == 6:  # Sunday
        return n - 2 if n == last else n + 1
    return n


class TestNearestWeekday:
    # cronsim 2.9 has no nW, so the oracle here is a scalar transcription of Quartz's rule.
    @pytest.mark.parametrize("n", range(1, 32))
    def test_nearest_weekday_matches_scalar_reference_for_every_day(self, n):
        got = times(f"0 0 {n}W * *", "1990-01-01", "2041-01-01")
        ref = []
        for year in range(1990, 2041):
            for month in range(1, 13):
                d = nearest_weekday_reference(year, month, n)
                if d is not None:
                    ref.append(f"{year:04d}-{month:02d}-{d:02d}T00:00")
        assert got == ref

    def test_1w_on_a_month_starting_on_saturday_is_monday_the_3rd(self):
        # 2022-01-01 was a Saturday: Friday the 31st is in another month.
        assert times("0 9 1W * *", "2022-01-01", "2022-02-01") == ["2022-01-03T09:00"]

    def test_15w_moves_saturday_to_friday_and_sunday_to_monday(self):
        assert times("0 9 15W 1 *", "2022-01-01", "2024-01-01") == ["2022-01-14T09:00", "2023-01-16T09:00"]

    def test_last_day_w_on_a_sunday_moves_back_to_friday(self):
        assert times("0 9 31W 7 *", "2022-01-01", "2023-01-01") == ["2022-07-29T09:00"]  # 31st a Sunday

    def test_nearest_weekday_of_a_day_the_month_lacks_gives_no_run(self):
        assert times("0 9 31W * *", "2026-04-01", "2026-07-01") == ["2026-05-29T09:00"]  # May 31 a Sunday

    def test_nearest_weekday_in_a_list_is_ored_with_the_other_days(self):
        both = Cron.parse("0 0 15W,L * *").wall_times(to_us("2020-01-01"), to_us("2030-01-01"))
        w = Cron.parse("0 0 15W * *").wall_times(to_us("2020-01-01"), to_us("2030-01-01"))
        last = Cron.parse("0 0 L * *").wall_times(to_us("2020-01-01"), to_us("2030-01-01"))
        assert both.tolist() == sorted(set(w.tolist()) | set(last.tolist()))


class TestDayRules:
    def test_day_of_month_and_day_of_week_are_ored_when_both_restricted(self):
        got = times("0 0 13 * FRI", "2026-02-01", "2026-03-01")
        # Feb 2026: Fridays 6, 13, 20, 27; the 13th is one of them.
        assert got == ["2026-02-06T00:00", "2026-02-13T00:00", "2026-02-20T00:00", "2026-02-27T00:00"]
        got = times("0 0 13 * FRI", "2026-03-01", "2026-03-14")
        assert got == ["2026-03-06T00:00", "2026-03-13T00:00"]  # the 13th is a Friday again
        got = times("0 0 1 * FRI", "2026-04-01", "2026-04-11")
        assert got == ["2026-04-01T00:00", "2026-04-03T00:00", "2026-04-10T00:00"]

    def test_a_star_step_day_of_month_makes_the_fields_anded_as_in_cronsim(self):
        # cronsim.py: day_and = parts[3].startswith("*") or parts[5].startswith("*")
        assert times("0 0 */2 * MON", "2026-03-01", "2026-04-01") == ["2026-03-09T00:00", "2026-03-23T00:00"]

    def test_a_full_range_day_of_month_is_restricted_and_so_matches_every_day(self):
        assert len(times("0 0 1-31 * MON", "2026-03-01", "2026-04-01")) == 31

    def test_zero_and_seven_both_mean_sunday(self):
        sundays = times("0 0 * * 0", "2026-03-01", "2026-04-01")
        assert sundays == times("0 0 * * 7", "2026-03-01", "2026-04-01")
        assert sundays == times("0 0 * * SUN", "2026-03-01", "2026-04-01")
        assert sundays[0] == "2026-03-01T00:00"

    def test_seven_is_sunday_in_the_last_and_nth_weekday_forms_too(self):
        assert times("0 0 * * 7L", "2026-01-01", "2026-04-01") == ["2026-01-25T00:00", "2026-02-22T00:00",
                                                                    "2026-03-29T00:00"]
        assert times("0 0 * * 7#1", "2026-01-01", "2026-03-01") == times("0 0 * * 0#1", "2026-01-01", "2026-03-01")
        assert times("0 0 * * 7#1", "2026-01-01", "2026-03-01") == ["2026-01-04T00:00", "2026-02-01T00:00"]

    def test_a_day_list_is_refused_only_when_no_day_of_it_occurs_in_the_months(self):
        assert times("0 0 1,30 2 *", "2026-01-01", "2028-01-01") == ["2026-02-01T00:00", "2027-02-01T00:00"]

    def test_names_are_case_insensitive(self):
        assert Cron.parse("0 0 * jan-Mar sun-sat").months == Cron.parse("0 0 * JAN-MAR SUN-SAT").months == (1, 2, 3)

    def test_a_value_with_a_step_runs_to_the_field_maximum(self):
        assert Cron.parse("50/3 * * * *").minutes == (50, 53, 56, 59)

    def test_a_one_value_range_with_a_step_is_that_one_value(self):
        # Debian's get_range() sets just 50, as cronsim 2.9 and robfig/cron do (cronsim 2.8 read '50/3').
        assert Cron.parse("50-50/3 * * * *").minutes == (50,)
        assert times("0 9-9/1 * * *", "2026-01-01", "2026-01-03") == ["2026-01-01T09:00", "2026-01-02T09:00"]

    def test_last_day_of_february_follows_leap_years(self):
        assert times("0 0 L 2 *", "2023-01-01", "2025-01-01") == ["2023-02-28T00:00", "2024-02-29T00:00"]

    def test_last_weekday_backs_off_a_weekend(self):
        # 2026-05-31 is a Sunday, 2026-10-31 a Saturday.
        assert times("0 0 LW 5,10 *", "2026-01-01", "2027-01-01") == ["2026-05-29T00:00", "2026-10-30T00:00"]

    def test_fifth_friday_only_in_months_that_have_one(self):
        assert times("0 0 * * 5#5", "2026-01-01", "2026-07-01") == ["2026-01-30T00:00", "2026-05-29T00:00"]

    def test_last_friday_and_fril_are_the_same(self):
        # FRIL is a calsim extension: cronsim only accepts digits before L.
        assert Cron.parse("0 0 * * FRIL").last_of_weekday == Cron.parse("0 0 * * 5L").last_of_weekday == {5}
        assert times("0 0 * * 5L", "2026-01-01", "2026-03-01") == ["2026-01-30T00:00", "2026-02-27T00:00"]

    def test_macros_expand_like_their_five_field_forms(self):
        for macro, fields in MACROS.items():
            a, b = Cron.parse(macro), Cron.parse(fields)
            assert (a.minutes, a.hours, a.days, a.months, a.weekdays, a.day_or) == (
                b.minutes, b.hours, b.days, b.months, b.weekdays, b.day_or
            )
        assert times("  @Weekly ", "2026-03-01", "2026-03-15") == ["2026-03-01T00:00", "2026-03-08T00:00"]

    def test_a_time_in_a_dst_gap_is_still_returned(self):
        # America/New_York skips 02:00-03:00 on 2026-03-08; wall times know no zone.
        assert times("30 2 * * *", "2026-03-08", "2026-03-09") == ["2026-03-08T02:30"]


class TestOutput:
    @settings(max_examples=60, deadline=None, derandomize=True)
    @given(
        st.sampled_from(["* * * * *", "*/7 3-5 * * *", "0 0 L * *", "0 12 * * 5#3", "59 23 31 12 *"]),
        st.integers(-10**15, 10**15),
        st.integers(0, 3 * 10**13),
    )
    def test_output_is_sorted_int64_within_the_half_open_range(self, expr, lo, length):
        out = Cron.parse(expr).wall_times(lo, lo + length)
        assert out.dtype == np.int64
        assert np.all(np.diff(out) > 0)
        assert np.all((out >= lo) & (out < lo + length))
        assert np.all(out % (60 * US) == 0)

    def test_a_boundary_time_is_in_at_lo_and_out_at_hi(self):
        noon = to_us("2026-01-01T12:00")
        cron = Cron.parse("0 12 * * *")
        assert cron.wall_times(noon, noon + 1).tolist() == [noon]
        assert cron.wall_times(noon - 1, noon).tolist() == []

    def test_an_empty_or_reversed_window_gives_an_empty_int64_array(self):
        for lo, hi in [(0, 0), (10**12, 0)]:
            out = Cron.parse("* * * * *").wall_times(lo, hi)
            assert out.dtype == np.int64 and out.size == 0

    def test_times_before_1970_are_negative_and_correct(self):
        assert times("0 0 1 1 *", "1969-06-01", "1970-06-01") == ["1970-01-01T00:00"]
        assert times("0 0 29 2 *", "1960-01-01", "1961-01-01") == ["1960-02-29T00:00"]

    def test_a_year_of_every_minute_has_525600_times(self):
        # Speed is measured by benchmarks/, not asserted here.
        cron = Cron.parse("* * * * *")
        lo, hi = to_us("2026-01-01"), to_us("2027-01-01")
        assert cron.wall_times(lo, hi).size == 525_600

    def test_parsed_cron_is_frozen_and_hashable(self):
        a, b = Cron.parse("0 0 * * *"), Cron.parse("0 0 * * *")
        assert a == b and hash(a) == hash(b)
        with pytest.raises(AttributeError):
            a.text = "x"  # type: ignore[misc]

    @pytest.mark.parametrize(
        "expr, text",
        [
            ("30 2 * * *", "at 02:30 every day"),
            ("@hourly", "at minute 0 of every hour"),
            ("* * * * *", "every minute"),
            ("0 0 13 * FRI", "at 00:00 on day-of-month 13 or day-of-week FRI"),
            ("0 0 */2 * mon", "at 00:00 on day-of-month */2 and day-of-week MON"),
            ("0 9-17 L 2 *", "at minute 0 past hour 9-17 on day-of-month L in month 2"),
        ],
    )
    def test_explain_gives_a_short_description(self, expr, text):
        assert Cron.parse(expr).explain() == text


MACRO_LIST = "@yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly"
BAD = [
    ("0 0 32 * *", "cron: day-of-month value '32' is out of range (allowed 1..31) in '0 0 32 * *'"),
    ("60 * * * *", "cron: minute value '60' is out of range (allowed 0..59) in '60 * * * *'"),
    ("0 24 * * *", "cron: hour value '24' is out of range (allowed 0..23) in '0 24 * * *'"),
    ("0 0 0 * *", "cron: day-of-month value '0' is out of range (allowed 1..31) in '0 0 0 * *'"),
    ("0 0 * 13 *", "cron: month value '13' is out of range (allowed 1..12) in '0 0 * 13 *'"),
    ("0 0 * * 8", "cron: day-of-week value '8' is out of range (allowed 0..7) in '0 0 * * 8'"),
    ("0 0 32W * *", "cron: day-of-month value '32' is out of range (allowed 1..31) in '0 0 32W * *'"),
    (
        "* * * * * *",
        "cron: expected 5 fields (minute hour day-of-month month day-of-week), got 6 in '* * * * * *'",
    ),
    ("", "cron: expected 5 fields (minute hour day-of-month month day-of-week), got 0 in ''"),
    ("*/0 * * * *", "cron: minute item '*/0' has step '0' (allowed a whole number of 1 or more) in '*/0 * * * *'"),
    ("0 */x * * *", "cron: hour item '*/x' has step 'x' (allowed a whole number of 1 or more) in '0 */x * * *'"),
    ("0 5-1 * * *", "cron: hour range '5-1' is reversed (allowed a-b with a <= b) in '0 5-1 * * *'"),
    ("0 0 * * FRI-MON", "cron: day-of-week range 'FRI-MON' is reversed (allowed a-b with a <= b) in '0 0 * * FRI-MON'"),
    ("1,,2 * * * *", "cron: minute field '1,,2' has an empty item (allowed 0..59) in '1,,2 * * * *'"),
    (
        "0 0 * * MON-",
        "cron: day-of-week item 'MON-' has an empty value (allowed 0..7 or SUN..SAT, nL or n#k) in '0 0 * * MON-'",
    ),
    (
        "0 0 * FOO *",
        "cron: month value 'FOO' is not a number or name (allowed 1..12 or JAN..DEC) in '0 0 * FOO *'",
    ),
    (
        "0 0 * * FUN",
        "cron: day-of-week value 'FUN' is not a number or name (allowed 0..7 or SUN..SAT, nL or n#k) in '0 0 * * FUN'",
    ),
    (
        "0 0 * APRIL *",
        "cron: month value 'APRIL' is not a number or name (allowed 1..12 or JAN..DEC) in '0 0 * APRIL *'",
    ),
    (
        "L * * * *",
        "cron: minute value 'L' uses 'L', allowed only in day-of-month (L, LW) and day-of-week (nL) in 'L * * * *'",
    ),
    ("0 0 * * 15W", "cron: day-of-week value '15W' uses 'W', allowed only in day-of-month (LW, nW) in '0 0 * * 15W'"),
    ("0 0 1#2 * *", "cron: day-of-month value '1#2' uses '#', allowed only in day-of-week (n#k) in '0 0 1#2 * *'"),
    (
        "0 0 5L * *",
        "cron: day-of-month value '5L' is not a number or name (allowed 1..31, L, LW or nW) in '0 0 5L * *'",
    ),
    (
        "0 0 L/2 * *",
        "cron: day-of-month item 'L/2' puts 'L' inside a range or step (allowed 1..31, L, LW or nW) in '0 0 L/2 * *'",
    ),
    ("0 0 * * L", "cron: day-of-week item 'L' needs a weekday before it (allowed nL, as in 5L) in '0 0 * * L'"),
    ("0 0 * * 5#6", "cron: day-of-week item '5#6' has occurrence '6' (allowed 1..5, as in 5#3) in '0 0 * * 5#6'"),
    ("0 0 * * 5#0", "cron: day-of-week item '5#0' has occurrence '0' (allowed 1..5, as in 5#3) in '0 0 * * 5#0'"),
    ("0 0 30 2 *", "cron: day-of-month '30' never occurs in month '2' (the longest has 29 days) in '0 0 30 2 *'"),
    (
        "0 0 31 APR,jun *",
        "cron: day-of-month '31' never occurs in month 'APR,jun' (the longest has 30 days) in '0 0 31 APR,jun *'",
    ),
    ("@reboot", f"cron: '@reboot' has no times, it runs at boot (allowed macros {MACRO_LIST}) in '@reboot'"),
    ("@often", f"cron: unknown macro '@often' (allowed {MACRO_LIST}) in '@often'"),
]


class TestErrors:
    @pytest.mark.parametrize("expr, message", BAD)
    def test_malformed_expression_raises_rule_error_with_the_whole_message(self, expr, message):
        with pytest.raises(RuleError) as info:
            Cron.parse(expr)
        assert str(info.value) == message

    @pytest.mark.parametrize("expr, message", BAD)
    def test_cronsim_rejects_the_same_expressions(self, expr, message):
        # Except where calsim is stricter on purpose: a step on L, and a sixth (seconds) field.
        if expr in ("0 0 L/2 * *", "* * * * * *"):
            CronSim(expr, dt.datetime(2000, 1, 1))  # cronsim accepts these
            return
        with pytest.raises((CronSimError, StopIteration)):
            next(CronSim(expr, dt.datetime(2000, 1, 1)))

    def test_a_non_string_is_a_rule_error(self):
        with pytest.raises(RuleError, match=r"^cron: expected the expression as a str, got int$"):
            Cron.parse(5)  # type: ignore[arg-type]

    def test_a_huge_number_is_out_of_range_not_a_crash(self):
        # cut: CalsimError.MAX_QUOTED
        with pytest.raises(RuleError, match=r"minute value '9{28}\.\.\.9{28}' is out of range"):
            Cron.parse("9" * 4000 + " * * * *")
        assert Cron.parse("*/" + "9" * 4000 + " * * * *").minutes == (0,)

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(
        st.one_of(
            st.text(max_size=40),
            st.lists(st.text(alphabet="0123456789*/,-#LlWw@ JANFEBMONSUNsat\t", max_size=8), max_size=7).map(" ".join),
        )
    )
    def test_no_exception_but_rule_error_escapes_for_any_text(self, text):
        try:
            cron = Cron.parse(text)
        except RuleError:
            return
        out = cron.wall_times(to_us("2024-01-01"), to_us("2024-03-01"))
        assert out.dtype == np.int64
        assert isinstance(cron.explain(), str)
