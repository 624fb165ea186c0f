"""systemd ``OnCalendar=`` expressions: grammar, normalized form, expansion, DST as systemd-analyze 252 does it.

Expansion is compared with ``systemd-analyze calendar`` (:mod:`oracles.systemd`,
zone data pinned to calsim's release 2026f) with ``presets.systemd()``
applied: ``gap``/``fold="scheduler"``, systemd's own walk
(:mod:`calsim.rules.calendarspec`). DST days used (2026): America/New_York
03-08 (02:00->03:00) and 11-01 (02:00->01:00); Europe/Berlin 03-29
(02:00->03:00) and 10-25 (03:00->02:00); Australia/Lord_Howe 10-04
(02:00->02:30) and 04-05 (02:00->01:30, a 30-minute fold); Europe/Dublin
03-29 (01:00 GMT->02:00 IST, GMT being the "negative DST" side) and 10-25.
The grid over every zone of issue 25 is ``tests/rules/test_calendarspec.py``.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim import presets
from calsim.errors import CalsimError, RuleError
from calsim.rules.oncalendar import OnCalendar
from oracles import systemd as oracle

US = 1_000_000
RELEASE = oracle.RELEASE


@pytest.fixture
def systemd_analyze():
    """Skip (fail under CALSIM_REQUIRE_ORACLES=1) where systemd-analyze does not run."""
    oracle.require()


needs_systemd = pytest.mark.usefixtures("systemd_analyze")

DST_DAYS = {
    "America/New_York": ["2026-03-08", "2026-11-01"],
    "Europe/Berlin": ["2026-03-29", "2026-10-25"],
    "Australia/Lord_Howe": ["2026-10-04", "2026-04-05"],
    "Europe/Dublin": ["2026-03-29", "2026-10-25"],
}
# Whole seconds only: systemd-analyze prints elapses to the second.
EXPRESSIONS = [
    "*-*-* 02:30",            # in the gap (New York, Berlin), in the fold (Lord Howe autumn)
    "*-*-* 01:30",            # in the fold (New York, Lord Howe)
    "*:0/15",                 # every quarter hour across both edges
    "*:0/10:30",
    "hourly",
    "*-*-* 01..03:00,20,40",
    "*-*-* 1..3:30",          # Dublin's spring day: systemd loses 02:30 and 03:30 IST too
    "Sun *-*-* 02:00..59/7",
    "*-*-* 02:30 UTC",        # the zone suffix: no DST at all
    "*-*-* 02:30 Europe/Berlin",
]
CASES = [(e, z, d) for e in EXPRESSIONS for z, days in DST_DAYS.items() for d in days]
# Ordinary days: the date grammar (weekdays, '~', repetitions, years, shorthands).
CASES += [
    ("Mon..Fri 08..17/3:00", "Europe/Berlin", "2026-06-15"),
    ("Sat,Sun *-*~01 23:00", "America/New_York", "2026-05-31"),
    ("*-02~03 06:00", "Europe/Berlin", "2026-02-26"),
    ("Mon *-05~07/1 09:15", "America/New_York", "2026-05-25"),
    ("*-*~1..7/2 12:00", "Australia/Lord_Howe", "2026-07-27"),
    ("quarterly", "America/New_York", "2026-07-01"),
    ("semiannually", "Europe/Berlin", "2026-07-01"),
    ("weekly", "Australia/Lord_Howe", "2026-06-15"),
    ("monthly", "Europe/Berlin", "2026-09-01"),
    ("yearly", "America/New_York", "2027-01-01"),
    ("2026..2028-*-1/10 04:05:06", "Europe/Berlin", "2026-08-21"),
    ("26-10-25 02:30:00", "Europe/Berlin", "2026-10-25"),
    ("Wed, 17:48", "America/New_York", "2026-06-17"),
    ("*:*:0/20", "Australia/Lord_Howe", "2026-10-04"),
]


def _day_window(zone: str, day: str) -> tuple[int, int]:
    """UTC µs bounds of the local day."""
    d = dt.date.fromisoformat(day)
    tz = calsim.release(RELEASE).zone(zone)
    a = dt.datetime.combine(d, dt.time(), tz).astimezone(dt.timezone.utc)
    b = dt.datetime.combine(d + dt.timedelta(days=1), dt.time(), tz).astimezone(dt.timezone.utc)
    return int(a.timestamp()) * US, int(b.timestamp()) * US


def _schedule(expr: str, zone: str) -> calsim.Schedule:
    """The expression as a timer: presets.systemd() fires it as systemd's walk does (gap/fold 'scheduler')."""
    return presets.systemd().apply(calsim.Schedule("t", zone, "2020-01-01T00:00", "OnCalendar=" + expr))


def _ours(expr: str, zone: str, lo: int, hi: int) -> list[int]:
    f = calsim.expand([_schedule(expr, zone)], dt.datetime.fromtimestamp(lo / US, dt.timezone.utc),
                      dt.datetime.fromtimestamp(hi / US, dt.timezone.utc), release=RELEASE)
    return [int(x.timestamp()) * US for x in f["due_utc"].drop_nulls()]


@needs_systemd
@pytest.mark.parametrize(("expr", "zone", "day"), CASES, ids=[f"{e}|{z}|{d}" for e, z, d in CASES])
def test_elapses_equal_systemd_analyze_instant_for_instant(expr, zone, day, report):
    lo, hi = _day_window(zone, day)
    theirs = oracle.elapses_between(expr, zone, lo - 1, hi)  # strictly after the base: lo itself counts
    assert _ours(expr, zone, lo, hi) == theirs
    if expr == EXPRESSIONS[0] and zone == "America/New_York" and day == "2026-03-08":
        report.append(f"OnCalendar: {len(CASES)} (expression, day) cases equal {oracle.version()}")


def test_there_are_at_least_40_oracle_cases_with_dst_days_in_four_zones():
    dst = {(z, d) for _, z, d in CASES if d in DST_DAYS.get(z, [])}
    assert len(CASES) >= 40 and {z for z, _ in dst} == set(DST_DAYS)


def _expand_day(expr: str, zone: str, day: str) -> list[tuple[str, object, list[str]]]:
    lo, hi = _day_window(zone, day)
    f = calsim.expand([_schedule(expr, zone)], dt.datetime.fromtimestamp(lo / US, dt.timezone.utc),
                      dt.datetime.fromtimestamp(hi / US, dt.timezone.utc), release=RELEASE)
    return [(str(r["nominal_local"].time()), r["due_utc"], r["notes"]) for r in f.iter_rows(named=True)]


def test_0230_is_skipped_on_new_york_spring_forward_as_systemd_does():
    assert _expand_day("*-*-* 02:30", "America/New_York", "2026-03-08") == [("02:30:00", None, ["dst_gap_skipped"])]


def test_0130_fires_in_the_first_pass_only_on_new_york_fall_back():
    rows = _expand_day("*-*-* 01:30", "America/New_York", "2026-11-01")
    # 05:30Z is 01:30 EDT; the second pass (01:30 EST) is a matching instant the walk does not reach
    assert [(t, due and due.hour) for t, due, _ in rows] == [("01:30:00", 5), ("01:30:00", None)]
    assert rows[1][2] == ["dst_lost:systemd"]


def test_lord_howe_half_hour_gap_skips_0200_to_0220_only():
    rows = _expand_day("*-*-* 02:00..59/10:00", "Australia/Lord_Howe", "2026-10-04")
    assert [t for t, due, _ in rows if due is not None] == ["02:30:00", "02:40:00", "02:50:00"]


def test_dublin_spring_day_loses_the_times_after_a_gap_that_glibc_moves_back():
    """Europe/Dublin's winter GMT is the isdst=1 side: glibc's mktime moves 01:30 (in the gap) back to 00:30 GMT,
    systemd's walk refuses it and goes on with the next day (calsim.rules.calendarspec)."""
    rows = _expand_day("*-*-* 1..3:30", "Europe/Dublin", "2026-03-29")
    assert [(t, notes) for t, _, notes in rows] == [("01:30:00", ["dst_gap_skipped"]),
                                                     ("02:30:00", ["dst_lost:systemd"]),
                                                     ("03:30:00", ["dst_lost:systemd"])]


def test_the_same_rule_without_the_preset_skips_only_the_missing_time():
    """gap='skip', fold='first' (a Schedule's defaults) is what the rule means; presets.systemd() is what runs."""
    lo, hi = _day_window("Europe/Dublin", "2026-03-29")
    s = calsim.Schedule("t", "Europe/Dublin", "2020-01-01T00:00", "OnCalendar=*-*-* 1..3:30")
    f = calsim.expand([s], dt.datetime.fromtimestamp(lo / US, dt.timezone.utc),
                      dt.datetime.fromtimestamp(hi / US, dt.timezone.utc), release=RELEASE)
    assert [str(r["nominal_local"].time()) for r in f.iter_rows(named=True) if r["due_utc"] is not None] == [
        "02:30:00", "03:30:00"]


def test_sub_second_rules_are_not_walked_and_get_the_presets_fallback():
    assert OnCalendar.parse("*-*-* 02:30").emulates == "systemd"
    assert OnCalendar.parse("*:*:0/0.5").emulates is None and OnCalendar.parse("*:*:1.5").emulates is None
    s = presets.systemd().apply(calsim.Schedule("t", "Europe/Dublin", "2026-01-01T00:00", "OnCalendar=*:*:0/0.5"))
    assert (s.gap, s.fold) == ("skip", "first")


def test_trailing_zone_overrides_the_schedule_zone():
    s = calsim.Schedule("t", "America/New_York", "2026-01-01T00:00", "OnCalendar=daily Europe/Berlin")
    assert s.zone == "Europe/Berlin" and s.kind == "oncalendar"


def test_trailing_utc_reads_times_in_utc_case_insensitively():
    assert OnCalendar.parse("daily utc").zone == "UTC"
    assert calsim.Schedule("t", "Asia/Tokyo", "2026-01-01T00:00", "OnCalendar=daily UTC").zone == "UTC"


def test_epoch_timestamp_is_one_utc_instant():
    rule = OnCalendar.parse("@1395716396")
    assert rule.normalized() == "2014-03-25 02:59:56 UTC" and rule.zone == "UTC"


@pytest.mark.parametrize(("expr", "normalized"), [
    ("*:0/15", "*-*-* *:00/15:00"),
    ("Mon-Fri 8..17:00", "Mon..Fri *-*-* 08..17:00:00"),
    ("Sat,Sun *-*~01", "Sat,Sun *-*~01 00:00:00"),
    ("Mon *-05~07/1", "Mon *-05~07/1 00:00:00"),
    ("2026-*-* 1:2:3.5", "2026-*-* 01:02:03.500000"),
    ("*:*:0/0.25", "*-*-* *:*:00/0.250000"),
    ("12-10-15 1:2:3", "2012-10-15 01:02:03"),
    ("Wed, 17:48", "Wed *-*-* 17:48:00"),
    ("Mon,", "Mon *-*-* 00:00:00"),
    ("minutely", "*-*-* *:*:00"),
    ("weekly", "Mon *-*-* 00:00:00"),
    ("quarterly", "*-01,04,07,10-01 00:00:00"),
    ("semi-annually", "*-01,07-01 00:00:00"),
    ("Mon,Tue,Wed,Fri", "Mon..Wed,Fri *-*-* 00:00:00"),
    ("*-*-* 5..7/10:00", "*-*-* 05:00:00"),
])
def test_normalized_form_is_systemd_analyzes(expr, normalized):
    assert OnCalendar.parse(expr).normalized() == normalized


def test_weekday_and_date_must_both_match_unlike_cron():
    rule = OnCalendar.parse("Fri *-*-13")
    lo, hi = np.array(["2026-01-01", "2027-01-01"], "datetime64[us]").astype(np.int64)
    days = rule.wall_times(lo, hi).astype("datetime64[us]").astype("datetime64[D]").astype(str).tolist()
    assert days == ["2026-02-13", "2026-03-13", "2026-11-13"]


def test_tilde_counts_days_from_the_month_end():
    rule = OnCalendar.parse("*-02~03")
    lo, hi = np.array(["2028-01-01", "2029-01-01"], "datetime64[us]").astype(np.int64)
    days = rule.wall_times(lo, hi).astype("datetime64[us]").astype("datetime64[D]").astype(str).tolist()
    assert days == ["2028-02-27"]  # leap year


def test_day_31_is_omitted_in_short_months():
    rule = OnCalendar.parse("*-*-31")
    lo, hi = np.array(["2026-01-01", "2026-06-01"], "datetime64[us]").astype(np.int64)
    days = rule.wall_times(lo, hi).astype("datetime64[us]").astype("datetime64[D]").astype(str).tolist()
    assert days == ["2026-01-31", "2026-03-31", "2026-05-31"]


def test_fractional_seconds_are_kept_to_the_microsecond():
    rule = OnCalendar.parse("*-*-* 00:00:0/0.25")
    lo = np.datetime64("2026-01-01", "us").astype(np.int64)
    got = rule.wall_times(lo, lo + US) - lo
    assert got.tolist() == [0, 250_000, 500_000, 750_000]


def test_no_elapse_after_year_2199():
    rule = OnCalendar.parse("yearly")
    lo, hi = np.array(["2198-06-01", "2202-01-02"], "datetime64[us]").astype(np.int64)
    days = rule.wall_times(lo, hi).astype("datetime64[us]").astype("datetime64[D]").astype(str).tolist()
    assert days == ["2199-01-01"]


@pytest.mark.parametrize(("expr", "message"), [
    ("*-*-* 24:00", "OnCalendar: hour '24' is out of range (allowed 0..23) in '*-*-* 24:00'"),
    ("*:50/15", "OnCalendar: minute '50/15' never repeats within 0..59 in '*:50/15'"),
    ("5..3:00", "OnCalendar: hour range '05..03' is reversed (allowed a..b with a < b) in '5..3:00'"),
    ("*-*~12,26", "OnCalendar: day '~26' is out of range (allowed ~1..~25) in '*-*~12,26'"),
    ("*/2-*-*", "OnCalendar: date: unexpected '/' (allowed year-month-day or month-day, '~' before the day) "
                "in '*/2-*-*'"),
    ("Mon..", "OnCalendar: weekday: the range has no end (allowed 'Mon..Fri') in 'Mon..'"),
    ("*:*:0/0.00001", "OnCalendar: 8,640,000,000 elapses a day (calsim allows at most 1,000,000) in "
                      "'*:*:0/0.00001'"),
])
def test_invalid_expression_message_names_part_and_value(expr, message):
    with pytest.raises(RuleError) as err:
        OnCalendar.parse(expr)
    assert str(err.value) == message


def test_rule_error_from_a_schedule_names_the_schedule():
    with pytest.raises(RuleError, match=r"^schedule 'x': OnCalendar: hour '25' is out of range"):
        calsim.Schedule("x", "UTC", "2026-01-01T00:00", "OnCalendar=25:00")


# -- differential fuzzing against systemd-analyze: same verdict, same normalized form


def _random_component(rng: random.Random, lo: int, hi: int, star: bool = True) -> str:
    if star and rng.random() < 0.3:
        return "*"
    items = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        a, r = rng.randint(lo, hi), rng.random()
        items.append(f"{a}" if r < 0.4 else f"{a}..{rng.randint(lo, hi)}" if r < 0.6
                     else f"{a}/{rng.randint(0, hi - lo + 2)}" if r < 0.8
                     else f"{a}..{rng.randint(lo, hi)}/{rng.randint(1, 6)}")
    return ",".join(items)


def _random_expression(rng: random.Random) -> str:
    names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "monday", "FRIDAY"]
    r = rng.random()
    e = ("" if r < 0.5 else rng.choice(names) + " " if r < 0.7
         else f"{rng.choice(names)}..{rng.choice(names)} " if r < 0.85 else ",".join(rng.sample(names, 2)) + " ")
    if rng.random() < 0.7:
        sep = "~" if rng.random() < 0.25 else "-"
        day = _random_component(rng, 1, 31) if sep == "-" else _random_component(rng, 1, 28, star=False)
        year = f"{_random_component(rng, 2024, 2030)}-" if rng.random() < 0.5 else ""
        e += f"{year}{_random_component(rng, 1, 12)}{sep}{day} "
    if rng.random() < 0.9:
        e += f"{_random_component(rng, 0, 24)}:{_random_component(rng, 0, 60)}"
        if rng.random() < 0.4:
            e += f":{_random_component(rng, 0, 60)}"
    return e.strip()


@needs_systemd
def test_random_expressions_get_systemds_verdict_and_normalized_form(report):
    rng = random.Random(14)
    env = oracle.env("UTC")
    valid = 0
    for _ in range(300):
        expr = _random_expression(rng)
        out = subprocess.run([oracle.ANALYZE, "calendar", expr], capture_output=True, text=True, env=env, timeout=30)
        m = re.search(r"Normalized form: (.*)", out.stdout)
        try:
            ours = OnCalendar.parse(expr).normalized()
        except RuleError:
            ours = None
        assert ours == (m.group(1) if m else None), expr
        valid += ours is not None
    report.append(f"OnCalendar: 300 random expressions ({valid} valid) judged as systemd-analyze does")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(list("0123456789*-~:.,/ @") + ["..", "Mon", "fri", "Sunday", "UTC",
                                                                 "Europe/Berlin", "daily", "~", "24", "99999999999"]),
                max_size=14))
def test_fuzzed_expressions_only_raise_calsim_errors(tokens):
    text = "".join(tokens)
    try:
        rule = OnCalendar.parse(text)
    except CalsimError:
        return
    lo = np.datetime64("2026-03-01", "us").astype(np.int64)
    times = rule.wall_times(lo, lo + 3 * 86_400 * US)
    assert (np.diff(times) > 0).all()
