"""``presets.dagster`` against Dagster 1.13.29 itself.

The oracle is Dagster's own code on a fake clock, recorded by
``python tools/capture_dagster.py`` into ``tests/fixtures/dagster/`` (the
fixture names the versions): the tick iterator the daemon walks, through the
eight 2026 DST changes of New York, Berlin, Sydney and Adelaide and of zones
whose changes are at midnight (Santiago, Beirut) or off the hour (Chatham,
Lord Howe), and the daemon's tick function with a real instance after
outages of 3 hours and 3 days. Chatham and Lord Howe are the preset's stated
differences, counted apart.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

import calsim
from calsim.presets._dagster import dagster
from oracles.restarts import started_from_restart, utc

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dagster" / "dagster-1.13.29.json"
DATA = json.loads(FIXTURE.read_text())
RELEASE = DATA["system_tzdata"]
Z = "%Y-%m-%dT%H:%M:%SZ"


def _fires(case: dict, preset) -> list[str]:
    lo, hi = case["window_utc"]
    s = preset.apply(calsim.Schedule("job", case["zone"], "2026-01-01T00:00", case["rule"]))
    frame = calsim.expand([s], lo, hi, release=RELEASE)
    return [t.strftime(Z) for t in frame.drop_nulls("due_utc")["due_utc"]]


def test_the_fixture_names_the_dagster_it_was_captured_with():
    assert DATA["system"] == "dagster" and DATA["packages"]["dagster"] == DATA["version"] == "1.13.29"
    assert DATA["daylight_savings_hours"] == [1, 2, 3]  # the local hours whose changes the daemon repairs


def test_schedules_fire_as_dagster_through_every_2026_dst_change_in_the_hours_it_repairs(report):
    preset, cases = dagster(), DATA["fire_cases"]
    apart = [(c["zone"], c["rule"], c["window_utc"][0]) for c in cases if _fires(c, preset) != c["fires_utc"]]
    extra = DATA["extra_fire_cases"]
    stated = [c for c in extra if _fires(c, preset) != c["fires_utc"]]
    report.append(f"dagster 1.13.29 fire times: {len(cases)} cases, {sum(len(c['fires_utc']) for c in cases):,} "
                  f"fires, {len(apart)} apart; outside its repair hours: {len(extra)} cases, {len(stated)} apart "
                  "(stated: Chatham's and Lord Howe's changes off the hour)")
    assert len(cases) >= 56 and not apart, apart
    assert len(extra) >= 100 and all(c["zone"] in ("Pacific/Chatham", "Australia/Lord_Howe") for c in stated), \
        [(c["zone"], c["rule"]) for c in stated if c["zone"] not in ("Pacific/Chatham", "Australia/Lord_Howe")]


def test_a_0230_and_a_0200_job_in_the_spring_gap_both_run_at_0300_edt():
    tz = calsim.release(RELEASE).zone("America/New_York")
    for rule in ("30 2 * * *", "0 2 * * *"):
        s = dagster().apply(calsim.Schedule("job", "America/New_York", "2026-01-01T00:00", rule))
        f = calsim.expand([s], "2026-03-08T05:00Z", "2026-03-09T05:00Z", release=RELEASE).drop_nulls("due_utc")
        assert [t.astimezone(tz).strftime("%H:%M %Z") for t in f["due_utc"]] == ["03:00 EDT"]


def _local_runs(preset, rule: str, lo: str, hi: str, zone: str = "America/New_York") -> list[str]:
    tz = calsim.release(RELEASE).zone(zone)
    s = preset.apply(calsim.Schedule("job", zone, "2026-01-01T00:00", rule))
    f = calsim.expand([s], lo, hi, release=RELEASE).drop_nulls("due_utc")
    return [t.astimezone(tz).strftime("%H:%M %Z") for t in f["due_utc"]]


def test_on_the_fall_back_day_a_fixed_time_runs_the_standard_time_pass_and_an_hourly_rule_both():
    assert _local_runs(dagster(), "30 1 * * *", "2026-11-01T04:00Z", "2026-11-02T04:00Z") == ["01:30 EST"]
    assert _local_runs(dagster(), "30 * * * *", "2026-11-01T04:00Z", "2026-11-01T08:00Z") == [
        "00:30 EDT", "01:30 EDT", "01:30 EST", "02:30 EST"]


OUTAGES = DATA["outage_cases"]


@pytest.mark.parametrize("max_catchup_runs", [5, 1000])
def test_after_an_outage_only_the_newest_missed_tick_runs_whatever_max_catchup_runs_says(max_catchup_runs, report):
    apart, runs = [], 0
    for case in (c for c in OUTAGES if c["settings"]["max_catchup_runs"] == max_catchup_runs):
        down, up = case["down_utc"]
        s = dagster(max_catchup_runs=max_catchup_runs).apply(
            calsim.Schedule("job", case["zone"], "2026-01-01T00:00", case["rule"]))
        started = started_from_restart(s, case["settings"]["schedule_started_utc"], down, up,
                                       utc(up) + dt.timedelta(minutes=1), RELEASE)
        got = [t.strftime(Z) for t in started.filter(pl.col("started_utc") == utc(up))["due_utc"]]
        want = sorted(r["logical_date_utc"] for r in case["runs"] if r["created_at_utc"] == up)
        runs += len(want)
        if got != want:
            apart.append((case["zone"], case["rule"], case["down_utc"], want, got))
    report.append(f"dagster 1.13.29 outages (max_catchup_runs={max_catchup_runs}): {runs} runs at the restarts, "
                  f"{len(apart)} apart")
    assert runs >= 100 and not apart, apart[:5]


def test_max_catchup_runs_is_checked_and_kept_as_given():
    assert ("max_catchup_runs", 1000) in dagster(max_catchup_runs=1000).settings
    with pytest.raises(calsim.PolicyError, match=r"^max_catchup_runs: invalid value 0 \(allowed: an integer"):
        dagster(max_catchup_runs=0)
