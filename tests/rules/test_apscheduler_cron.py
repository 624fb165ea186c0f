"""``apscheduler:`` rules against APScheduler 3.x itself (the installed wheel, in-process).

The oracle is the real ``CronTrigger`` (and ``OrTrigger``) of the installed APScheduler on a
``zoneinfo.ZoneInfo`` built from calsim's own tz release (``oracles.apscheduler_clock.zone``). Compared:

* **grammar**: every field form ``CronTrigger(**fields)`` and ``CronTrigger.from_crontab`` read or refuse
  (one field varied at a time): both accept or both refuse; when both accept, the fire times after a few
  instants agree;
* **the walk**: :meth:`ApschedulerCron.next_after` against ``get_next_fire_time(F, now)`` as a running
  scheduler calls it (``now`` after ``F``), from instants around every 2026 transition of eleven zones,
  and the first call (``previous_fire_time=None``, ``now`` with microseconds);
* **the calendar**: ``wall_times`` against the trigger in UTC (no transitions), which is what
  :mod:`calsim.emulation` takes the walk to give away from transitions;
* **the shortcut**: ``calsim.expand`` against the port called at every step, in windows that start next
  to a transition (where the walk's way into the window must be found);
* **cron rules**: the trigger :meth:`ApschedulerCron.from_cron` writes matches the cron rule's own times.

The counts of (rule, instant) pairs compared are in the run's summary.
"""

from __future__ import annotations

import datetime as dt
import os
import random

import polars as pl
import pytest
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger

import calsim
from calsim.errors import RuleError
from calsim.rules.apscheduler_cron import ApschedulerCron
from calsim.rules.cron import Cron
from calsim.tz.clock import ZoneClock
from oracles import apscheduler_clock as aps

RELEASE = aps.RELEASE
UTC = dt.timezone.utc
US = 1_000_000
T2026 = int(dt.datetime(2026, 1, 1, tzinfo=UTC).timestamp())
T2027 = int(dt.datetime(2027, 1, 1, tzinfo=UTC).timestamp())
ZONES = ("America/New_York", "Europe/Berlin", "Europe/Dublin", "Australia/Lord_Howe", "Pacific/Chatham",
         "Asia/Beirut", "Africa/Cairo", "America/Santiago", "Australia/Sydney", "Europe/Helsinki", "America/Havana")
LONG = os.environ.get("CALSIM_LONG") == "1"

# Rules as CronTrigger keyword arguments (a list of several: an OrTrigger of them).
HOUR_MINUTE = [("2", "30"), ("3", "30"), ("1", "30"), ("3", "0"), ("4", "0"), ("*", "*/30"), ("*", "0"),
               ("*", "30"), ("*/2", "0"), ("1,3", "15"), ("0", "0"), ("0", "30"), ("23", "30"), ("2", "45"),
               ("3", "50"), ("*", "*/15"), ("2-4", "15"), ("0-2", "0")]
RULES = [[{"hour": h, "minute": m}] for h, m in HOUR_MINUTE] + [
    [{"day_of_week": "sun", "hour": "0", "minute": "0"}],
    [{"day_of_week": "mon-fri", "hour": "2", "minute": "30"}],
    [{"day": "1", "hour": "0"}],
    [{"day": "last", "hour": "2", "minute": "30"}],
    [{"day": "last sun", "hour": "2", "minute": "30"}],
    [{"day": "1st sun", "hour": "0", "minute": "30"}],
    [{"day": "*/2", "hour": "0", "minute": "30"}],
    [{"week": "*/2", "hour": "1"}],
    [{"minute": "*/20", "second": "*/30"}],
    [{"hour": "2", "minute": "30", "second": "15,45"}],
    [{"day_of_week": "mon-fri", "hour": "0-3", "minute": "*/10"}],
    [{"month": "3-4,9-10", "day": "1-7", "day_of_week": "sun", "hour": "0-3", "minute": "0,30"}],
    [{"day": "1", "hour": "0", "minute": "0"}, {"day_of_week": "sun", "hour": "0", "minute": "0"}],
    [{"hour": "2", "minute": "30"}, {"hour": "1", "minute": "45"}],
]


def text_of(rule: list[dict]) -> str:
    return "apscheduler:" + " | ".join(" ".join(f"{k}='{v}'" for k, v in kw.items()) for kw in rule)


def trigger_of(rule: list[dict], zone):
    triggers = [CronTrigger(timezone=zone, **kw) for kw in rule]
    return triggers[0] if len(triggers) == 1 else OrTrigger(triggers)


def transitions_2026(zone: str) -> list[int]:
    utc = calsim.release(RELEASE).table(zone).utc
    return [int(t) for t in utc[(utc >= T2026) & (utc < T2027)]]


def _dt(t: int, zone) -> dt.datetime:
    return dt.datetime.fromtimestamp(t, UTC).astimezone(zone)


def _ts(x: dt.datetime | None) -> int | None:
    return None if x is None else int(x.timestamp())


def real_next(trigger, zone, t: int) -> int | None:
    """A running scheduler's ``get_next_fire_time(F, now)``: ``F`` at instant ``t``, ``now`` a second later."""
    f = _dt(t, zone)
    return _ts(trigger.get_next_fire_time(f, (f.astimezone(UTC) + dt.timedelta(seconds=1)).astimezone(zone)))


@pytest.fixture(scope="module")
def tally():
    return {}


@pytest.fixture
def counts(tally, report):
    """Pairs compared by kind, one line of the run's summary (kept up to date by each test)."""
    if "_line" not in tally:
        report.append("")
        tally["_line"] = (report, len(report) - 1)
    yield tally
    lines, i = tally["_line"]
    lines[i] = (f"apscheduler: rules, APScheduler {aps.APSCHEDULER_VERSION}'s own CronTrigger (tzdata {RELEASE}): "
                + ", ".join(f"{k} {v:,}" for k, v in tally.items() if k != "_line") + "; 0 disagreements")


def _add(counts, key, n):
    counts[key] = counts.get(key, 0) + n


# ---------------------------------------------------------------- grammar

FIELD_FORMS = ["*", "*/5", "*/0", "*/60", "*/9999", "5", "0", "59", "60", "5-10", "10-5", "5-10/2", "5-10/6",
               "5/10", "5-5", "1,2", " 1 , 2 ", "1,,2", "", "x", "-1", "+1", "5-", "mon", "MON-fri", "mon-fri/2",
               "monday", "sun-mon", "jan", "jan-mar", "Dec", "janu", "last", "lastx", "last fri", "2nd mon",
               "5th SUN", "6th mon", "last 3", "1st", "L", "5L", "5#3", "?", "1970", "2026-2027", "9999", "10000"]


@pytest.mark.parametrize("name", ["year", "month", "day", "week", "day_of_week", "hour", "minute", "second"])
def test_each_field_form_is_read_or_refused_as_crontrigger_does(name, counts):
    zone = aps.zone("UTC")
    clock = ZoneClock(calsim.release(RELEASE).table("UTC"))
    starts = [int(dt.datetime(y, m, 15, 10, 7, 3, tzinfo=UTC).timestamp()) for y, m in ((2026, 1), (2026, 11))]
    n = 0
    for form in FIELD_FORMS:
        try:
            trigger = CronTrigger(timezone=zone, **{name: form})
        except ValueError:
            trigger = None
        try:
            rule = ApschedulerCron.parse(f"apscheduler:{name}='{form}'")
        except RuleError:
            rule = None
        assert (trigger is None) == (rule is None), (name, form, trigger, rule)
        if trigger is None:
            continue
        for t in starts:
            want = trigger.get_next_fire_time(None, _dt(t, zone))
            assert rule.next_after(clock, t - 1) == _ts(want), (name, form, t)
            n += 1
    _add(counts, "field forms", n)


@pytest.mark.parametrize("text", ["30 2 * * *", "0 2 * * 0", "0 2 * * 6", "*/15 9-17 * * mon-fri",
                                  "0 0 last * *", "0 0 1 jan *", "0 0 * * 7", "0 2 * *", "0 2 * * * *"])
def test_crontab_text_is_read_as_from_crontab_reads_it(text, counts):
    # 3.x: day-of-week 0 is Monday (from_crontab passes the field to CronTrigger as it is).
    zone = aps.zone("Europe/Berlin")
    clock = ZoneClock(calsim.release(RELEASE).table("Europe/Berlin"))
    try:
        trigger = CronTrigger.from_crontab(text, timezone=zone)
    except ValueError:
        with pytest.raises(RuleError, match=r"^apscheduler: "):
            ApschedulerCron.parse("apscheduler:" + text)
        return
    rule = ApschedulerCron.parse("apscheduler:" + text)
    t = T2026
    for _ in range(40):
        want = _ts(trigger.get_next_fire_time(_dt(t, zone), _dt(t + 1, zone)))
        assert rule.next_after(clock, t) == want, text
        t = want
    _add(counts, "crontab texts", 40)


def test_crontab_day_of_week_0_is_monday_in_3x():
    rule = ApschedulerCron.parse("apscheduler:0 2 * * 0")
    clock = ZoneClock(calsim.release(RELEASE).table("UTC"))
    first = dt.datetime.fromtimestamp(rule.next_after(clock, T2026), UTC)  # 2026-01-01 was a Thursday
    assert first == dt.datetime(2026, 1, 5, 2, 0, tzinfo=UTC) and first.weekday() == 0


@pytest.mark.parametrize("text, message", [
    ("apscheduler:hour=2 minute=70", "apscheduler: field 'minute': Error validating expression '70': the last value "
                                     "(70) is higher than the maximum value (59) in 'apscheduler:hour=2 minute=70'"),
    ("apscheduler:minute=x", "apscheduler: Unrecognized expression \"x\" for field \"minute\" in"),
    ("apscheduler:hour=2 timezone=UTC", "apscheduler: unknown field 'timezone' (allowed year, month, day, week, "
                                        "day_of_week, hour, minute, second) (the zone is the schedule's"),
    ("apscheduler:hour=2 hour=3", "apscheduler: field 'hour' given twice"),
    ("apscheduler:day=last fri", "apscheduler: cannot read 'fri' (expected name=value, a value with spaces quoted "
                                 "as day='last fri'"),
    ("apscheduler:0 2 * *", "apscheduler: Wrong number of fields; got 4, expected 5"),
    ("apscheduler:day_of_week=monday", 'apscheduler: field \'day_of_week\': Invalid weekday name "monday"'),
    ("apscheduler:hour=2 |", "apscheduler: empty trigger (join CronTriggers with ' | ')"),
])
def test_refusals_name_the_field_the_value_and_what_is_allowed(text, message):
    with pytest.raises(RuleError) as exc:
        ApschedulerCron.parse(text)
    assert str(exc.value).startswith(message), str(exc.value)


@pytest.mark.parametrize("text", [RULES[k] for k in (0, 18, 21, 24, 30, 31)], ids=str)
def test_rule_text_reads_back_as_the_same_rule(text):
    rule = ApschedulerCron.parse(text_of(text))
    again = ApschedulerCron.parse(rule.rule_text())
    assert again == rule and again.rule_text() == rule.rule_text()
    s = calsim.Schedule("j", "UTC", "2026-01-01T00:00", rule.rule_text())
    assert s.kind == "apscheduler" and s.parsed_rule == rule


def test_fields_left_out_follow_crontrigger_defaults():
    # CronTrigger(): before the last given field '*', after it the minimum (hour=2 is 02:00:00 every day).
    assert ApschedulerCron.parse("apscheduler:hour=2").triggers == (("*", "*", "*", "*", "*", "2", "0", "0"),)
    assert ApschedulerCron.parse("apscheduler:day=1").triggers == (("*", "*", "1", "*", "*", "0", "0", "0"),)
    assert ApschedulerCron.parse("apscheduler:minute=5 second='*'").triggers == (
        ("*", "*", "*", "*", "*", "*", "5", "*"),)


# ---------------------------------------------------------------- the walk


def _instants(tau: int, rng: random.Random) -> list[int]:
    """Instants around a transition: every 450 s within 4 h (jittered by a second), and a day or two away."""
    return [tau + k + rng.randrange(-1, 2) for k in range(-4 * 3600, 4 * 3600, 450 if LONG else 900)] + \
        [tau - 2 * 86400 + 7, tau + 86400 + 13]


@pytest.mark.parametrize("zone", ZONES)
def test_next_after_is_get_next_fire_time_of_a_running_scheduler(zone, counts):
    tz = aps.zone(zone)
    clock = ZoneClock(calsim.release(RELEASE).table(zone))
    rng = random.Random(zone)
    n = 0
    for rule in RULES:
        trigger, port = trigger_of(rule, tz), ApschedulerCron.parse(text_of(rule))
        for tau in transitions_2026(zone):
            for t in _instants(tau, rng):
                assert port.next_after(clock, t) == real_next(trigger, tz, t), (rule, zone, t)
                n += 1
    _add(counts, "walk steps", n)


@pytest.mark.parametrize("zone", ["America/New_York", "Pacific/Chatham", "Asia/Beirut", "Australia/Lord_Howe"])
def test_the_first_call_walks_from_now_rounded_up_to_the_second(zone, counts):
    # add_job: get_next_fire_time(None, now); now has microseconds (datetime_ceil rounds them up in UTC).
    tz = aps.zone(zone)
    clock = ZoneClock(calsim.release(RELEASE).table(zone))
    n = 0
    for rule in RULES[:18]:
        trigger, port = trigger_of(rule, tz), ApschedulerCron.parse(text_of(rule))
        for tau in transitions_2026(zone):
            for k in range(-7200, 7200, 1700):
                now = (dt.datetime.fromtimestamp(tau + k, UTC) + dt.timedelta(microseconds=250_001)).astimezone(tz)
                assert port.next_after(clock, tau + k) == _ts(trigger.get_next_fire_time(None, now)), (rule, now)
                n += 1
    _add(counts, "first calls", n)


def test_a_scheduler_woken_exactly_at_a_gap_fire_time_gets_its_instant_twice():
    """The stated difference: get_next_fire_time(F, now=F) with F a gap time CronTrigger set a field to (not
    normalised) walks from F's instant itself, which matches hour='2-4' again; any later now gives 04:15."""
    tz = aps.zone("America/New_York")
    trigger = CronTrigger(hour="2-4", minute="15", timezone=tz)
    f = trigger.get_next_fire_time(None, dt.datetime(2026, 3, 8, 0, 0, tzinfo=tz))
    assert (f.replace(tzinfo=None), f.fold, _ts(f)) == (dt.datetime(2026, 3, 8, 2, 15), 0, 1772954100)  # 07:15Z
    assert _ts(trigger.get_next_fire_time(f, f)) == _ts(f)  # 03:15 EDT: the same instant
    later = (f.astimezone(UTC) + dt.timedelta(microseconds=1)).astimezone(tz)
    clock = ZoneClock(calsim.release(RELEASE).table("America/New_York"))
    assert _ts(trigger.get_next_fire_time(f, later)) == 1772957700 == ApschedulerCron.parse(
        "apscheduler:hour='2-4' minute=15").next_after(clock, _ts(f))  # 04:15 EDT


def test_or_trigger_takes_the_earlier_wall_time(counts):
    # OrTrigger's min compares datetimes of one zone by wall clock, fold ignored (PEP 495 intra-zone rule).
    rule = [{"hour": "1", "minute": "45"}, {"hour": "1", "minute": "30"}]
    tz = aps.zone("America/New_York")
    clock = ZoneClock(calsim.release(RELEASE).table("America/New_York"))
    trigger, port = trigger_of(rule, tz), ApschedulerCron.parse(text_of(rule))
    t, n = 1793422800, 0  # 2026-10-31T04:20Z
    for _ in range(6):
        want = real_next(trigger, tz, t)
        assert port.next_after(clock, t) == want
        t, n = want, n + 1
    _add(counts, "walk steps", n)


# ---------------------------------------------------------------- the calendar


def _days(rule: ApschedulerCron) -> int:
    """How many days of the real trigger to compare: a year (CALSIM_LONG: two) for a rule of a few times a day,
    some weeks for a denser one (the real walk costs ~50 µs a time)."""
    per_day = len(rule.wall_times(T2026 * US, (T2026 + 7 * 86400) * US)) / 7
    return (2 if LONG else 1) * (366 if per_day <= 4 else 35)


def _utc_chain(trigger, lo: int, hi: int) -> list[int]:
    out, t = [], lo - 1
    while True:
        t = real_next(trigger, aps.zone("UTC"), t)
        if t is None or t >= hi:
            return out
        out.append(t)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: text_of(r)[12:60])
def test_wall_times_are_the_triggers_times_where_the_clock_never_changes(rule, counts):
    port = ApschedulerCron.parse(text_of(rule))
    lo = T2026
    hi = lo + _days(port) * 86400
    want = _utc_chain(trigger_of(rule, aps.zone("UTC")), lo, hi)
    got = (port.wall_times(lo * US, hi * US) // US).tolist()
    assert got == want
    _add(counts, "calendar times (UTC)", len(want))


CRONS = ["30 2 * * *", "*/15 * * * *", "0 */2 * * *", "15 1,3 * * *", "0 0 * * 0", "30 2 * * 1-5", "0 12 29 * *",
         "0 0 1 * 1", "0 0 1,15 * 5", "0 3 L * *", "15 1 * * 0L", "0 2 * * 0#1", "0 2 * * 1#5,3", "0 0 */2 * *",
         "0 0 */2 * 1", "0 0 * 3-5 *", "@daily", "@weekly", "0 0 1 1 *", "0 0 L 2 *", "0 9 * * 7", "0 0 * * 5L,1"]


@pytest.mark.parametrize("expr", CRONS)
def test_from_cron_fires_the_cron_rules_own_times(expr, counts):
    cron = Cron.parse(expr)
    rule = ApschedulerCron.from_cron(cron)
    lo, hi = T2026 * US, (T2026 + 2 * 366 * 86400) * US
    assert rule.wall_times(lo, hi).tolist() == cron.wall_times(lo, hi).tolist()
    # ...and the real CronTrigger(s) with those fields agree, in UTC (the first year of a daily rule)
    kws = [dict(zip(("year", "month", "day", "week", "day_of_week", "hour", "minute", "second"), t))
           for t in rule.triggers]
    days = _days(rule)
    want = _utc_chain(trigger_of(kws, aps.zone("UTC")), T2026, T2026 + days * 86400)
    assert (rule.wall_times(lo, (T2026 + days * 86400) * US) // US).tolist() == want
    _add(counts, "cron rules' times", len(want))


@pytest.mark.parametrize("expr, message", [
    ("0 0 LW * *", "apscheduler: CronTrigger has no expression for day-of-month 'LW'"),
    ("0 0 15W * *", "apscheduler: CronTrigger has no expression for day-of-month '15W'"),
    ("0 0 */2 * 5L", "apscheduler: CronTrigger cannot require both day-of-month '*/2' and day-of-week '5L'"),
])
def test_from_cron_refuses_what_no_crontrigger_expression_says(expr, message):
    with pytest.raises(RuleError) as exc:
        ApschedulerCron.from_cron(Cron.parse(expr))
    assert str(exc.value).startswith(message)


def test_from_cron_writes_weekdays_as_names_and_either_day_field_as_an_or_trigger():
    assert ApschedulerCron.from_cron(Cron.parse("0 2 * * 0,1")).rule_text() == (
        "apscheduler:day_of_week='mon,sun' hour='2' minute='0' second='0'")
    assert ApschedulerCron.from_cron(Cron.parse("0 0 1 * 5L,1")).rule_text() == (
        "apscheduler:day='1,last fri' hour='0' minute='0' second='0' | day_of_week='mon' hour='0' minute='0' "
        "second='0'")


# ---------------------------------------------------------------- the shortcut


def walk_chain(rule: ApschedulerCron, zone: str, start: int, until: int) -> list[int]:
    """The fires of a scheduler running since ``start`` that calls the port at every step."""
    clock, out, t = ZoneClock(calsim.release(RELEASE).table(zone)), [], start
    while True:
        t = rule.next_after(clock, t)
        if t is None or t >= until:
            return out
        out.append(t)


def _iso(t: int) -> str:
    return dt.datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def calsim_fires(text: str, zone: str, lo: int, hi: int, since: int) -> list[int]:
    s = calsim.Schedule("j", zone, _iso(since), text, gap="scheduler", fold="scheduler")
    f = calsim.expand(s, _iso(lo), _iso(hi), release=RELEASE)
    return f.filter(pl.col("due_utc").is_not_null())["due_utc"].dt.epoch("s").to_list()


SHORTCUT_RULES = [RULES[k] for k in (0, 2, 5, 10, 13, 16, 17, 18, 20, 30)]


@pytest.mark.parametrize("zone", ["Australia/Lord_Howe", "Asia/Beirut", "Pacific/Chatham", "America/New_York",
                                  "Europe/Helsinki"])
def test_expansion_is_the_walk_called_at_every_step_in_windows_next_to_each_transition(zone, counts):
    n = 0
    for rule in SHORTCUT_RULES:
        port = ApschedulerCron.parse(text_of(rule))
        for tau in transitions_2026(zone):
            since = tau - 86400 * 40
            want_all = walk_chain(port, zone, since, tau + 86400 * 3)
            for lo in ((tau - 3600, tau - 1200, tau, tau + 1800, tau + 86400) if LONG else (tau - 1200, tau + 1800)):
                want = [t for t in want_all if lo <= t < lo + 2 * 86400]
                got = calsim_fires(port.rule_text(), zone, lo, lo + 2 * 86400, since + 1)
                assert got == want, (rule, zone, _iso(lo), [_iso(t) for t in sorted(set(got) ^ set(want))])
                n += len(want)
    _add(counts, "expansion vs the port at every step", n)


# ---------------------------------------------------------------- the size estimate


@pytest.mark.parametrize("zone", ["Pacific/Chatham", "Europe/Helsinki"])
def test_the_size_estimate_bounds_the_rows_expand_gives(zone):
    lo, hi = "2026-01-01T00:00Z", "2027-01-01T00:00Z"
    for rule in [text_of(r) for r in RULES if not any("second" in kw for kw in r)] + [
            ApschedulerCron.from_cron(Cron.parse(e)).rule_text() for e in CRONS]:
        s = calsim.Schedule("j", zone, "2025-12-01T00:00", rule, gap="scheduler", fold="scheduler")
        rows = calsim.expand(s, lo, hi, release=RELEASE).height
        assert rows <= calsim.limits.estimate([s], lo, hi, RELEASE), rule
