"""``robfig:`` rules against robfig/cron v3 itself, the library a Kubernetes CronJob calls.

The oracle (``tests/oracles/robfig.py``) is the real ``cron.ParseStandard`` and ``SpecSchedule.Next`` of
robfig/cron v3.0.1 (Debian's package), built here with Go and reading the same tz release as calsim
(``ZONEINFO``). Compared:

* **grammar**: every field form robfig reads or refuses (a grid, one field varied at a time, the day
  fields crossed, and random specs from hypothesis): both accept or both refuse; when both accept, the
  first fire times in UTC are the same;
* **the walk**: :meth:`RobfigCron.next_after` against ``Next()`` from instants around every 2026
  transition of the zones below;
* **expansion**: ``calsim.expand`` of ``robfig:`` schedules with ``gap``/``fold="scheduler"`` against the
  chain of ``Next()`` calls a running CronJob makes, over 2026 and over windows that start next to a
  transition (where calsim must find how the walk entered the window);
* **the quirks**, each pinned with robfig's own answer and calsim's rows.

The counts of (rule, instant) pairs compared are in the run's summary.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import os

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.errors import RuleError
from calsim.rules.robfig import RobfigCron
from calsim.tz.clock import ZoneClock

RELEASE = "2026f"
UTC = dt.timezone.utc
T2026 = int(dt.datetime(2026, 1, 1, tzinfo=UTC).timestamp())
T2027 = int(dt.datetime(2027, 1, 1, tzinfo=UTC).timestamp())
ZONES = ("America/New_York", "Europe/Berlin", "Europe/Dublin", "Australia/Lord_Howe", "Pacific/Chatham",
         "Asia/Beirut", "Africa/Cairo", "America/Santiago", "Australia/Sydney", "America/Havana",
         "America/St_Johns", "Africa/Casablanca", "Antarctica/Troll")
DST_SPECS = ("0 0 * * *", "30 0 * * *", "0 1 * * *", "30 1 * * *", "0 2 * * *", "30 2 * * *", "45 2 * * *",
             "0 3 * * *", "50 3 * * *", "0 12 * * *", "0 23 * * *", "59 23 * * *", "0 * * * *", "30 * * * *",
             "15,45 * * * *", "*/15 * * * *", "*/20 1-3 * * *", "30,45 1 * * *", "0 0,12 * * *", "0 */2 * * *",
             "0 0 * * 0", "0 12 * * 0", "0 12 * * 5", "0 12 29 * *", "0 0 1 * *", "0 0 */2 * *", "0 0 * * 1-5",
             "5 4 * * 6", "0 0 1 1 *", "* * * * *")
DENSE = {"* * * * *"}  # compared around transitions only, not over the whole year
LONG = os.environ.get("CALSIM_LONG") == "1"


def WINDOW_STARTS(tau: int) -> tuple[int, ...]:  # noqa: N802 - a table, read as one
    """Window starts around a transition: an hour before and inside its reach (and at it, a day after: LONG)."""
    return (tau - 3600, tau, tau + 1800, tau + 86400) if LONG else (tau - 3600, tau + 1800)


@pytest.fixture(scope="module")
def robfig():
    from oracles.robfig import Robfig, go_version, package_version

    oracle = Robfig(RELEASE)
    print(f"\nrobfig oracle: {package_version()} ({go_version()}), zones of tzdata {RELEASE}")
    yield oracle
    oracle.close()


@pytest.fixture(scope="module")
def tally():
    return {}


@pytest.fixture
def counts(tally, report):
    """Pairs compared by kind, shown as one line of the run's summary (kept up to date by each test)."""
    if "_line" not in tally:
        report.append("")
        tally["_line"] = (report, len(report) - 1)
    yield tally
    lines, i = tally["_line"]
    lines[i] = ("robfig/cron v3.0.1, the real ParseStandard/Next (tzdata " + RELEASE + "): "
                + ", ".join(f"{k} {v:,}" for k, v in tally.items() if k != "_line") + "; 0 disagreements")


def _add(counts, key, n):
    counts[key] = counts.get(key, 0) + n


def chain(robfig, spec: str, zone: str, start: int, until: int) -> list[int]:
    """The fire times of a CronJob running since ``start``, up to ``until`` (UTC seconds), robfig's own.

    Where ``Next`` stops moving (``Next(X) == X``) the chain ends before ``X``: the controller never starts
    ``X`` (v2's ``mostRecentScheduleTime`` errors on two schedule times less than 1 s apart, v1's unmet list
    passes 100) nor anything after it (``test_a_stalled_walk_...`` shows both controllers).
    """
    out, t = [], start
    while True:
        got = robfig.chains(spec, zone, [t], 400)[0]
        for x in got:
            if x and x <= t:  # stalled at t
                return out[:-1] if out and out[-1] == t else out
            if x == 0 or x >= until:
                return out
            out.append(x)
            t = x
        if not got:
            return out


def calsim_fires(spec: str, zone: str, lo: int, hi: int, since: int) -> list[int]:
    """calsim's fire times in ``[lo, hi)`` of a schedule that starts at instant ``since`` (the chain's start)."""
    s = calsim.Schedule("j", zone, _iso(since), "robfig:" + spec, gap="scheduler", fold="scheduler")
    f = calsim.expand(s, _iso(lo), _iso(hi), release=RELEASE)
    return f.filter(pl.col("due_utc").is_not_null())["due_utc"].dt.epoch("s").to_list()


def _iso(t: int) -> str:
    return dt.datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _show(ts, zone: str) -> list[str]:
    z = calsim.release(RELEASE).zone(zone)
    return [dt.datetime.fromtimestamp(t, z).strftime("%Y-%m-%d %H:%M%z") for t in ts]


@functools.cache
def transitions(zone: str) -> tuple[int, ...]:
    utc = calsim.release(RELEASE).table(zone).utc
    return tuple(int(t) for t in utc[(utc >= T2026) & (utc < T2027)])


# -- grammar ------------------------------------------------------------------------------------------------------

ITEMS = {
    "minute": ("*", "?", "0", "59", "60", "+5", "-1", "05", "1-5", "5-1", "1-59/7", "*/15", "*/0", "*/1", "5/10",
               "5-5/3", "*-5", ",", "1,,2", "1,2,59", "a", "1/2/3", "1-2-3", "1-", "/5", "9" * 20, "1-5/0", "?/10"),
    "hour": ("*", "0", "23", "24", "9-9/1", "9/1", "*/5", "22-2", "0-23/6", "1,13", "x"),
    "day-of-month": ("*", "?", "1", "31", "32", "0", "L", "1W", "*/2", "*/1", "15-20", "10/10", "1,15,31"),
    "month": ("*", "1", "12", "13", "0", "JAN", "jan", "Jan-Mar", "dec/2", "jan/2", "1-12/3", "FEB,aug", "JANUARY"),
    "day-of-week": ("*", "?", "0", "6", "7", "5/2", "SUN", "sat", "mon-fri", "fri-mon", "5L", "1#2", "*/2", "0-7",
                    "0-6/3", "1,3,5", "Sun/3"),
}
DAY_PAIRS = [(dom, dow) for dom in ("*", "?", "1", "*/2", "*/1", "13", "1-7") for dow in ("*", "?", "5", "*/2", "*/1",
                                                                                       "1-5", "0")]
WHOLE = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "@Daily", "@hourly ",
         "@every 5m", "@reboot", "@fortnightly", "TZ=UTC 0 0 * * *", "CRON_TZ=UTC 0 0 * * *", "0 0 * *",
         "0 0 * * * *", "", "  ", "0\t12\t*\t*\t*", " 0 12 * * * ", "0 0 30 2 *", "0 0 31 4 *")


def grammar_specs() -> list[str]:
    base = ["0", "12", "*", "*", "*"]
    specs = []
    for i, name in enumerate(ITEMS):
        for item in ITEMS[name]:
            parts = list(base)
            parts[i] = item
            specs.append(" ".join(parts))
    specs += [f"0 12 {dom} * {dow}" for dom, dow in DAY_PAIRS]
    return specs + list(WHOLE)


# Refused on purpose, each with its reason in the message: not calendar specs of a rule's own.
STATED = {
    "@every": ("is an elapsed interval", lambda spec: spec.startswith("@every ")),  # calsim.Every (from_kubernetes)
    "TZ=": ("prefix is not allowed", lambda spec: spec.startswith(("TZ=", "CRON_TZ="))),  # the schedule's zone
}


def compare_grammar(robfig, spec: str) -> int:
    """Assert both sides accept or refuse ``spec``, and agree on its first fires in UTC; the pairs compared."""
    ans = robfig.process.ask({"spec": spec, "zone": "UTC", "after": [T2026 - 1], "n": 40})
    for needle, applies in STATED.values():
        if applies(spec):
            with pytest.raises(RuleError, match=needle):
                RobfigCron.parse(spec)
            return 1
    try:
        rule = RobfigCron.parse(spec)
    except RuleError as exc:
        assert "error" in ans, f"{spec!r}: calsim refuses ({exc}), robfig accepts"
        return 1
    assert "error" not in ans, f"{spec!r}: robfig refuses ({ans.get('error')}), calsim accepts"
    want = [t for t in ans["next"][0] if t]
    hi = want[-1] + 1 if want else T2026 + 86400
    s = calsim.Schedule("g", "UTC", "2025-12-31T00:00", rule, gap="scheduler", fold="scheduler")
    got = calsim.expand(s, _iso(T2026), _iso(hi), release=RELEASE)["due_utc"].dt.epoch("s").to_list()
    assert got == want, f"{spec!r}: calsim {_show(got[:5], 'UTC')}, robfig {_show(want[:5], 'UTC')}"
    return max(len(want), 1)


def test_every_field_form_is_read_as_robfig_reads_it(robfig, counts):
    n = sum(compare_grammar(robfig, spec) for spec in grammar_specs())
    _add(counts, "grammar pairs", n)


TOKENS = st.sampled_from(["*", "?", "0", "1", "5", "7", "12", "23", "31", "59", "60", "-", "/", ",", "2", "MON",
                          "jan", "sun", "+3", "L", "W", "#"])


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(TOKENS, min_size=1, max_size=5).map("".join), min_size=5, max_size=5))
def test_random_specs_are_read_as_robfig_reads_them(robfig, counts, fields):
    _add(counts, "random grammar pairs", compare_grammar(robfig, " ".join(fields)))


# -- the walk -------------------------------------------------------------------------------------------------------

OFFSETS = (-2 * 86400, -86400, -3 * 3600, -5400, -3660, -3600, -3540, -1860, -1800, -900, -60, -1, 0, 1, 59, 60,
           900, 1800, 3599, 3600, 5400, 3 * 3600, 86400)


@pytest.mark.parametrize("zone", ZONES)
def test_next_after_is_robfigs_next_from_instants_around_each_transition(robfig, counts, zone):
    clock = ZoneClock(calsim.release(RELEASE).table(zone))
    starts = [t + d for t in transitions(zone) for d in OFFSETS]
    if not starts:
        pytest.skip(f"not applicable here: {zone} has no transition in 2026 in tzdata {RELEASE}")
    n = 0
    for spec in DST_SPECS:
        rule = RobfigCron.parse(spec)
        for t, want in zip(starts, robfig.chains(spec, zone, starts, 3)):
            got, p = [], t
            for _ in want:
                p = rule.next_after(clock, p) or 0
                got.append(p)
                if not p:
                    break
            assert got == want, (f"{spec!r} in {zone} from {_show([t], zone)}: {_show(got, zone)} "
                                 f"vs robfig {_show(want, zone)}")
            n += len(want)
    _add(counts, "Next() calls", n)


@pytest.mark.parametrize("zone", ZONES)
def test_expansion_is_the_chain_a_running_cronjob_fires_over_2026(robfig, counts, zone):
    n = 0
    for spec in DST_SPECS:
        if spec in DENSE:
            continue
        since = T2026 - 86400 * 40
        want = [t for t in chain(robfig, spec, zone, since, T2027) if t >= T2026]
        got = calsim_fires(spec, zone, T2026, T2027, since + 1)  # Next(since) is the chain's first fire
        assert got == want, _diff(spec, zone, got, want)
        n += len(want)
    _add(counts, "year pairs", n)


@pytest.mark.parametrize("zone", ZONES)
def test_a_window_starting_next_to_a_transition_sees_the_walk_that_led_into_it(robfig, counts, zone):
    n = 0
    for spec, tau in itertools.product(DST_SPECS, transitions(zone)):
        daily = spec.split()[2:] == ["*", "*", "*"]  # fires every day: three days of walk reach any fire
        since = tau - 86400 * (3 if daily else 40)
        want_all = chain(robfig, spec, zone, since, tau + 86400 * 3)
        for lo in WINDOW_STARTS(tau):
            hi = lo + 86400 * 2
            want = [t for t in want_all if lo <= t < hi]
            got = calsim_fires(spec, zone, lo, hi, since + 1)
            assert got == want, _diff(spec, zone, got, want) + f" (window from {_show([lo], zone)})"
            n += len(want)
    _add(counts, "window pairs", n)


def _diff(spec, zone, got, want) -> str:
    a, b = set(got), set(want)
    return (f"{spec!r} in {zone}: calsim only {_show(sorted(a - b)[:4], zone)}, "
            f"robfig only {_show(sorted(b - a)[:4], zone)}")


# -- the quirks, pinned -----------------------------------------------------------------------------------------------

def rows(spec: str, zone: str, lo: str, hi: str) -> list[tuple[str, str | None, list[str]]]:
    """calsim's rows: (nominal local, local time of the instant or None, notes)."""
    s = calsim.Schedule("j", zone, "2025-06-01T00:00", "robfig:" + spec, gap="scheduler", fold="scheduler")
    f = calsim.expand(s, lo, hi, release=RELEASE)
    z = calsim.release(RELEASE).zone(zone)
    return [(r["nominal_local"].strftime("%m-%d %H:%M"),
             None if r["due_utc"] is None else r["due_utc"].astimezone(z).strftime("%m-%d %H:%M%z"), r["notes"])
            for r in f.iter_rows(named=True)]


def robfig_local(robfig, spec: str, zone: str, lo: str, hi: str) -> list[str]:
    a, b = (int(dt.datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()) for x in (lo, hi))
    z = calsim.release(RELEASE).zone(zone)
    return [dt.datetime.fromtimestamp(t, z).strftime("%m-%d %H:%M%z")
            for t in chain(robfig, spec, zone, a - 86400 * 40, b) if t >= a]


def fired(rs) -> list[str]:
    return [due for _, due, _ in rs if due is not None]


def test_day_of_week_steps_run_to_saturday_so_5_2_is_fridays_only(robfig):
    got = rows("0 12 * * 5/2", "UTC", "2026-01-01T00:00Z", "2026-01-15T00:00Z")
    assert fired(got) == ["01-02 12:00+0000", "01-09 12:00+0000"]  # Fridays; Vixie cron's 5/2 adds Sundays
    assert fired(got) == robfig_local(robfig, "0 12 * * 5/2", "UTC", "2026-01-01T00:00Z", "2026-01-15T00:00Z")


def test_seven_is_no_weekday_so_robfig_refuses_it(robfig):
    with pytest.raises(RuleError, match=r"end of range \(7\) above maximum \(6\)"):
        RobfigCron.parse("0 0 * * 7")
    assert "above maximum" in robfig.parse_error("0 0 * * 7")


def test_a_star_step_clears_the_star_bit_so_the_day_fields_are_ored(robfig):
    # */2 days OR Mondays in robfig (Vixie cron and cronsim: odd days that are Mondays).
    got = fired(rows("0 0 */2 * MON", "UTC", "2026-01-01T00:00Z", "2026-01-08T00:00Z"))
    assert got == ["01-01 00:00+0000", "01-03 00:00+0000", "01-05 00:00+0000", "01-07 00:00+0000"]
    assert got == robfig_local(robfig, "0 0 */2 * MON", "UTC", "2026-01-01T00:00Z", "2026-01-08T00:00Z")


def test_lord_howes_half_hour_change_loses_the_next_days_midnight_run(robfig):
    # Next() from 10-04 00:00 adds whole hours from 01:00 across 02:00 -> 02:30 and stays on :30 until
    # 10-05 00:30, past that day's midnight.
    got = rows("0 0 * * *", "Australia/Lord_Howe", "2026-10-03T00:00Z", "2026-10-06T00:00Z")
    assert got == [("10-04 00:00", "10-04 00:00+1030", []), ("10-05 00:00", None, ["dst_lost:robfig"]),
                   ("10-06 00:00", "10-06 00:00+1100", [])]
    assert fired(got) == robfig_local(robfig, "0 0 * * *", "Australia/Lord_Howe", "2026-10-03T00:00Z",
                                      "2026-10-06T00:00Z")


def test_a_minute_list_fires_at_an_hour_the_rule_does_not_name_after_lord_howes_change(robfig):
    # From 01:45 the minute loop reaches 02:30 (the clock jumped from 02:00) and stops on a matching minute.
    got = rows("30,45 1 * * *", "Australia/Lord_Howe", "2026-10-03T14:00Z", "2026-10-04T14:00Z")
    assert ("10-04 02:30", "10-04 02:30+1100", ["dst_extra:robfig"]) in got
    assert fired(got) == robfig_local(robfig, "30,45 1 * * *", "Australia/Lord_Howe", "2026-10-03T14:00Z",
                                      "2026-10-04T14:00Z")


def test_a_day_whose_midnight_is_a_gap_loses_its_run_in_beirut(robfig):
    # The day loop lands on 01:00 (midnight does not exist), steps back an hour to Saturday 23:00 and
    # the next AddDate lands on Sunday 23:00: the day's 12:00 is never reached.
    got = rows("0 12 * * 0", "Asia/Beirut", "2026-03-21T00:00Z", "2026-04-06T00:00Z")
    assert got == [("03-22 12:00", "03-22 12:00+0200", []), ("03-29 12:00", None, ["dst_lost:robfig"]),
                   ("04-05 12:00", "04-05 12:00+0300", [])]
    assert fired(got) == robfig_local(robfig, "0 12 * * 0", "Asia/Beirut", "2026-03-21T00:00Z", "2026-04-06T00:00Z")


def test_a_monthly_run_on_a_day_whose_midnight_is_a_gap_is_lost_from_a_month_away(robfig):
    # The walk that loses it starts at the previous fire (01-29): calsim looks back that far.
    got = rows("0 12 29 * *", "Asia/Beirut", "2026-03-01T00:00Z", "2026-05-01T00:00Z")
    assert got == [("03-29 12:00", None, ["dst_lost:robfig"]), ("04-29 12:00", "04-29 12:00+0300", [])]
    assert fired(got) == robfig_local(robfig, "0 12 29 * *", "Asia/Beirut", "2026-03-01T00:00Z", "2026-05-01T00:00Z")


def test_both_passes_of_a_repeated_hour_fire(robfig):
    got = rows("30 1 * * *", "America/New_York", "2026-11-01T00:00Z", "2026-11-02T00:00Z")
    assert fired(got) == ["11-01 01:30-0400", "11-01 01:30-0500"]
    assert fired(got) == robfig_local(robfig, "30 1 * * *", "America/New_York", "2026-11-01T00:00Z",
                                      "2026-11-02T00:00Z")


def test_a_rule_no_day_matches_parses_and_never_fires(robfig):
    assert robfig.parse_error("0 0 30 2 *") is None
    assert rows("0 0 30 2 *", "UTC", "2026-01-01T00:00Z", "2027-01-01T00:00Z") == []
    assert robfig.chains("0 0 30 2 *", "UTC", [T2026], 1) == [[0]]  # robfig's zero time: never


@pytest.mark.parametrize("spec", ["0 0 13 * 5", "0 12 1,15 * 1-5", "0 0 */2 * 1", "0 0 */1 * 1", "0 0 ? * 1",
                                  "30 2 1 * 0"])
def test_next_after_ors_the_day_fields_unless_one_has_the_star_bit(robfig, counts, spec):
    # The grid's specs star one day field; these name both (or clear the star bit with */2), so Next()'s
    # dayMatches decides between AND and OR. Walked from days around Berlin's 2026 changes and across months.
    zone = "Europe/Berlin"
    clock = ZoneClock(calsim.release(RELEASE).table(zone))
    rule = RobfigCron.parse(spec)
    starts = [T2026 + k * 86400 * 3 + 3600 * (k % 24) for k in range(122)]
    n = 0
    for t, want in zip(starts, robfig.chains(spec, zone, starts, 4)):
        got, p = [], t
        for _ in want:
            p = rule.next_after(clock, p) or 0
            got.append(p)
        assert got == want, f"{spec!r} from {_show([t], zone)}: {_show(got, zone)} vs robfig {_show(want, zone)}"
        n += len(want)
    _add(counts, "Next() calls", n)
