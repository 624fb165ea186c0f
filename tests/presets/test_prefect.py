"""``presets.prefect`` (work in progress, issue 29) against Prefect 3.9.1 itself.

The oracle is Prefect's own server schedule classes and run creation,
recorded by ``python tools/capture_prefect.py`` into
``tests/fixtures/prefect/`` (the fixture names its versions): cron and RRULE
schedules through the eight 2026 DST changes of New York, Berlin, Sydney and
Adelaide, and the runs a worker starts after it was down 3 hours or 3 days.
Server outages are also recorded under other scheduler settings (``min_runs``
10, 1 and 0, ``min_scheduled_time`` 1 day and 15 minutes; each case's
``settings``), which the preset is given.
A fixture's window is closed at its end (Prefect's ``get_dates`` includes
it); calsim's windows are half-open, so a fire exactly at the end is left out.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import polars as pl
import pytest

import calsim
from calsim.presets._prefect import prefect
from oracles.restarts import started_from_restart, utc

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "prefect" / "prefect-3.9.x.json"
DATA = json.loads(FIXTURE.read_text())
RELEASE = DATA["zone_data"]["system_tzdata"].split()[-1]  # "version 2025b": the zones Prefect read
Z = "%Y-%m-%dT%H:%M:%SZ"


def test_the_fixture_names_the_prefect_it_was_captured_with():
    assert DATA["system"] == "prefect" and DATA["packages"]["prefect"] == DATA["version"] == "3.9.1"
    assert (DATA["settings"]["min_runs"], DATA["settings"]["min_scheduled_time_s"]) == (3, 3600)


@pytest.mark.parametrize("kind", ["cron", "rrule"])
def test_schedules_fire_as_prefect_through_every_2026_dst_change(kind, report):
    preset, cases, apart = prefect(kind=kind), [c for c in DATA["fire_cases"] if c["kind"] == kind], []
    for c in cases:
        lo, hi = c["window_utc"]
        s = preset.apply(calsim.Schedule("flow", c["zone"], "2026-01-01T00:00", c["rule"]))
        frame = calsim.expand([s], lo, hi, release=RELEASE)
        got = [t.strftime(Z) for t in frame.drop_nulls("due_utc")["due_utc"]]
        want = [w for w in c["fires_utc"] if w != hi]
        if got != want:
            apart.append((c["zone"], c["rule"], lo, sorted(set(got) ^ set(want))))
    report.append(f"prefect {DATA['version']} {kind} fire times: {len(cases)} cases, "
                  f"{sum(len(c['fires_utc']) for c in cases):,} runs, {len(apart)} apart")
    assert len(cases) >= 32 and not apart, apart[:5]


def test_a_daily_0230_rrule_runs_at_0130_est_on_the_spring_day_an_hour_early():
    tz = calsim.release(RELEASE).zone("America/New_York")
    s = prefect(kind="rrule").apply(calsim.Schedule("f", "America/New_York", "2026-01-01T02:30",
                                                    "FREQ=DAILY;BYHOUR=2;BYMINUTE=30"))
    f = calsim.expand([s], "2026-03-08T05:00Z", "2026-03-09T05:00Z", release=RELEASE).drop_nulls("due_utc")
    assert [t.astimezone(tz).strftime("%H:%M %Z") for t in f["due_utc"]] == ["01:30 EST"]


def _settings_label(cases: list[dict]) -> str:
    """The (min_runs, min_scheduled_time) pairs of ``cases``, as "3/1h, 10/1d, ..."."""
    pairs = sorted({(c["settings"]["min_runs"], c["settings"]["min_scheduled_time_s"]) for c in cases})
    unit = {900: "15min", 3600: "1h", 86400: "1d"}
    return ", ".join(f"{n}/{unit.get(t, f'{t}s')}" for n, t in pairs)


@pytest.mark.parametrize("outage", ["worker", "server"])
def test_after_an_outage_the_runs_that_start_are_prefects(outage, report):
    cases = [c for c in DATA["outage_cases"] if c["settings"]["outage"] == outage and c["kind"] != "interval"]
    apart, runs = [], 0
    for c in cases:
        settings = c["settings"]
        preset = prefect(kind=c["kind"], down=outage, min_runs=settings["min_runs"],
                         min_scheduled_time=settings["min_scheduled_time_s"])
        s = preset.apply(calsim.Schedule("flow", c["zone"], "2026-01-01T00:00", c["rule"]))
        down, up = c["down_utc"]
        started = started_from_restart(s, c["started_utc"], down, up,
                                       utc(c["observed_until_utc"]) + dt.timedelta(seconds=1), RELEASE)
        got = [(a.strftime(Z), b.strftime(Z)) for a, b in zip(started["due_utc"], started["started_utc"])]
        want = [(r["scheduled_utc"], r["started_utc"]) for r in c["runs"] if r["started_utc"] >= up]
        runs += len(want)
        if got != want:
            apart.append((c["zone"], c["rule"], settings["min_runs"], settings["min_scheduled_time_s"],
                          c["down_utc"], want[:3], got[:3]))
    report.append(f"prefect {DATA['version']} {outage} outages (cron, rrule; min_runs/min_scheduled_time "
                  f"{_settings_label(cases)}): {len(cases)} cases, {runs:,} runs after the restarts, {len(apart)} "
                  f"apart")
    assert len(cases) >= 20 and runs > len(cases) and not apart, apart[:3]
    assert outage == "worker" or len([c for c in cases if c["settings"]["min_runs"] == 0]) == 36


@pytest.mark.parametrize("min_runs,ahead,first,last", [
    (3, 3600, "2026-03-07T18:00:00Z", "2026-03-07T20:00:00Z"),  # 3 runs (the look-ahead is met by the first)
    (10, 3600, "2026-03-07T18:00:00Z", "2026-03-08T03:00:00Z"),  # 10 runs
    (3, 86400, "2026-03-07T18:00:00Z", "2026-03-08T18:00:00Z"),  # 25: a day ahead, plus the first past it
    (10, 86400, "2026-03-07T18:00:00Z", "2026-03-08T18:00:00Z"),
    (1, 900, "2026-03-07T18:00:00Z", "2026-03-07T18:00:00Z"),  # 1
])
def test_a_three_day_server_outage_runs_the_hourly_runs_the_scheduler_had_created(min_runs, ahead, first, last):
    case = next(c for c in DATA["outage_cases"] if c["settings"]["outage"] == "server" and c["kind"] == "cron"
                and c["rule"] == "0 * * * *" and c["zone"] == "America/New_York" and "3 day" in c["note"]
                and "spring" in c["note"] and (c["settings"]["min_runs"], c["settings"]["min_scheduled_time_s"])
                == (min_runs, ahead))
    down, up = case["down_utc"]
    at_restart = [r["scheduled_utc"] for r in case["runs"] if r["started_utc"] == up]
    assert (at_restart[0], at_restart[-1]) == (first, last) and at_restart == case["precreated_at_down_utc"]
    s = prefect(down="server", min_runs=min_runs, min_scheduled_time=ahead).apply(
        calsim.Schedule("flow", "America/New_York", "2026-01-01T00:00", "0 * * * *"))
    started = started_from_restart(s, case["started_utc"], down, up, utc(up) + dt.timedelta(seconds=1), RELEASE)
    assert [t.strftime(Z) for t in started["due_utc"]] == at_restart


def test_a_cron_gap_time_runs_shifted_forward_and_a_repeated_time_on_its_first_pass():
    tz = calsim.release(RELEASE).zone("America/New_York")

    def runs(rule: str, lo: str, hi: str) -> list[str]:
        s = prefect().apply(calsim.Schedule("flow", "America/New_York", "2026-01-01T00:00", rule))
        f = calsim.expand([s], lo, hi, release=RELEASE).drop_nulls("due_utc")
        return [t.astimezone(tz).strftime("%H:%M %Z") for t in f["due_utc"]]

    assert runs("30 2 * * *", "2026-03-08T05:00Z", "2026-03-09T05:00Z") == ["03:30 EDT"]
    assert runs("30 1 * * *", "2026-11-01T04:00Z", "2026-11-02T04:00Z") == ["01:30 EDT"]


def test_after_a_five_day_server_outage_a_daily_job_runs_the_three_runs_created_before_it():
    s = prefect(down="server").apply(calsim.Schedule("flow", "UTC", "2026-03-01T00:00", "0 9 * * *"))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-08T00:00Z", release=RELEASE,
                         outages=[calsim.Outage("2026-03-01T12:00Z", "2026-03-06T12:00Z")])
    f = calsim.simulate(sc, progress=False).frame.filter(pl.col("due_utc").is_between(
        utc("2026-03-01T12:00:00Z"), utc("2026-03-06T12:00:00Z")))
    assert f["state"].to_list() == ["done"] * 3 + ["skipped"] * 2


def _interval_schedule(case: dict) -> calsim.Schedule:
    """The IntervalSchedule as a user writes it: an Every from the deployment's local anchor, through the preset."""
    unit, n, anchor = re.match(r"IntervalSchedule\(interval=timedelta\((\w+)=(\d+)\), anchor (\S+) local\)",
                               case["rule"]).groups()
    every = calsim.Every(f"{n}d" if unit == "days" else f"{n}h")
    return prefect(kind="interval").apply(calsim.Schedule("flow", case["zone"], anchor, every))


def _dropped_second_pass(case: dict, got: list[str], want: list[str]) -> bool:
    """Stated: Prefect on Python 3.11 drops an hourly interval's second pass of the repeated hour (one run)."""
    extra = sorted(set(got) - set(want))
    return "hours=1" in case["rule"] and not set(want) - set(got) and len(extra) == 1


def test_interval_schedules_fire_as_prefect_through_every_2026_dst_change(report):
    cases = [c for c in DATA["fire_cases"] if c["kind"] == "interval"]
    apart, stated = [], 0
    for c in cases:
        lo, hi = c["window_utc"]
        frame = calsim.expand([_interval_schedule(c)], lo, hi, release=RELEASE)
        got = [t.strftime(Z) for t in frame.drop_nulls("due_utc")["due_utc"]]
        want = [w for w in c["fires_utc"] if w != hi]
        if got != want:
            if _dropped_second_pass(c, got, want):
                stated += 1
            else:
                apart.append((c["zone"], c["rule"], lo, sorted(set(got) ^ set(want))))
    report.append(f"prefect {DATA['version']} interval fire times (Python {DATA['python']}): {len(cases)} cases, "
                  f"{sum(len(c['fires_utc']) for c in cases):,} runs, {len(apart)} apart, {stated} stated "
                  "(the dropped second pass of an hourly interval)")
    assert len(cases) >= 24 and not apart and stated <= 4, apart[:5]


def test_a_daily_interval_from_0230_runs_at_0330_edt_from_the_spring_day_on_and_stays_there():
    s = prefect(kind="interval").apply(calsim.Schedule("flow", "America/New_York", "2026-01-01T02:30",
                                                       calsim.Every("1d")))
    tz = calsim.release(RELEASE).zone("America/New_York")
    f = calsim.expand([s], "2026-03-07T00:00Z", "2026-03-10T00:00Z", release=RELEASE).drop_nulls("due_utc")
    assert [t.astimezone(tz).strftime("%m-%d %H:%M %Z") for t in f["due_utc"]] == [
        "03-07 02:30 EST", "03-08 03:30 EDT", "03-09 03:30 EDT"]
    f = calsim.expand([s], "2026-11-02T00:00Z", "2026-11-03T00:00Z", release=RELEASE).drop_nulls("due_utc")
    assert [t.astimezone(tz).strftime("%H:%M %Z") for t in f["due_utc"]] == ["03:30 EST"]


@pytest.mark.parametrize("outage", ["worker", "server"])
def test_after_an_outage_interval_runs_start_as_prefects(outage, report):
    cases = [c for c in DATA["outage_cases"] if c["settings"]["outage"] == outage and c["kind"] == "interval"]
    apart, stated, runs = [], 0, 0
    for c in cases:
        s = _interval_schedule(c)
        if outage == "server":
            settings = c["settings"]
            s = prefect(kind="interval", down="server", min_runs=settings["min_runs"],
                        min_scheduled_time=settings["min_scheduled_time_s"]).apply(s)
        down, up = c["down_utc"]
        started = started_from_restart(s, c["started_utc"], down, up,
                                       utc(c["observed_until_utc"]) + dt.timedelta(seconds=1), RELEASE)
        got = [a.strftime(Z) for a in started["due_utc"]]
        want = [r["scheduled_utc"] for r in c["runs"] if r["started_utc"] >= up]
        runs += len(want)
        if got != want:
            if _dropped_second_pass(c, got, want):
                stated += 1
            else:
                apart.append((c["zone"], c["rule"], c["settings"]["min_runs"], c["settings"]["min_scheduled_time_s"],
                              c["down_utc"], sorted(set(got) ^ set(want))[:3]))
    report.append(f"prefect {DATA['version']} {outage} outages (interval, Python {DATA['python']}; min_runs/"
                  f"min_scheduled_time {_settings_label(cases)}): {len(cases)} cases, {runs:,} runs after the "
                  f"restarts, {len(apart)} apart, {stated} stated (the dropped second pass)")
    assert len(cases) >= 20 and not apart, apart[:3]
