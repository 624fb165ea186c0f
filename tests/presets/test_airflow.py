"""``presets.airflow`` (work in progress, issue 29) against Apache Airflow 3.3.2 itself.

The oracle is Airflow's own code on a fake clock, recorded by
``python tools/capture_airflow.py`` into ``tests/fixtures/airflow/`` (the
fixture names the versions): each timetable walked as the scheduler walks it
through the eight 2026 DST changes of New York, Berlin, Sydney and Adelaide,
and the runs the scheduler creates when it comes back from an outage.
Zone data: the fixture was captured on the system's tzdata, which it names;
calsim resolves with that release.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

import calsim
from calsim.presets._airflow import airflow
from oracles.restarts import started_from_restart, utc

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "airflow" / "airflow-3.3.2.json"
DATA = json.loads(FIXTURE.read_text())
RELEASE = DATA["system_tzdata"]
Z = "%Y-%m-%dT%H:%M:%SZ"


def _schedule(case: dict, preset) -> calsim.Schedule:
    rule = case["rule"]
    if rule.startswith("timedelta("):  # DeltaTriggerTimetable: elapsed time from the DAG's start
        hours = {"timedelta(hours=1)": 1, "timedelta(days=1)": 24}[rule]
        rule = calsim.Every(f"{hours}h", anchor=case["earliest_utc"])
    return preset.apply(calsim.Schedule("dag", case["zone"], "2026-01-01T00:00", rule))


def _fires(case: dict, preset) -> list[str]:
    lo, hi = case["window_utc"]
    frame = calsim.expand([_schedule(case, preset)], lo, hi, release=RELEASE)
    return [t.strftime(Z) for t in frame.drop_nulls("due_utc")["due_utc"]]


TRIGGER_CASES = [c for c in DATA["fire_cases"] if c["kind"] in ("cron_trigger", "delta_trigger")]


def test_the_fixture_names_the_airflow_it_was_captured_with():
    assert DATA["system"] == "airflow" and DATA["packages"]["apache-airflow"] == DATA["version"] == "3.3.2"
    assert DATA["defaults"] == {"schedule_cron_string_timetable": "CronTriggerTimetable",
                                "schedule_timedelta_timetable": "DeltaTriggerTimetable", "catchup": False}


def test_trigger_timetables_fire_as_airflow_through_every_2026_dst_change(report):
    preset = airflow()
    apart = [(c["zone"], c["rule"], c["window_utc"][0]) for c in TRIGGER_CASES if _fires(c, preset) != c["fires_utc"]]
    rules = {c["rule"] for c in TRIGGER_CASES}
    report.append(f"airflow 3.3.2 fire times: {len(TRIGGER_CASES)} cases ({len(rules)} rules x 4 zones x 2 changes), "
                  f"{sum(len(c['fires_utc']) for c in TRIGGER_CASES):,} fires, {len(apart)} apart")
    assert len(TRIGGER_CASES) >= 72 and not apart, apart


def _nominal(preset, zone: str, rule: str, day: str, hours: int = 24) -> list[str]:
    s = preset.apply(calsim.Schedule("dag", zone, "2026-01-01T00:00", rule))
    start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
    f = calsim.expand([s], start, start + dt.timedelta(hours=hours), release=RELEASE).drop_nulls("due_utc")
    return [t.astimezone(calsim.release(RELEASE).zone(zone)).strftime("%H:%M %Z") for t in f["due_utc"]]


def test_a_0230_job_in_the_spring_gap_runs_at_0330_edt():
    assert _nominal(airflow(), "America/New_York", "30 2 * * *", "2026-03-08T05:00") == ["03:30 EDT"]


def test_0130_on_the_fall_back_day_runs_only_the_second_pass_while_half_past_every_hour_runs_both():
    assert _nominal(airflow(), "America/New_York", "30 1 * * *", "2026-11-01T04:00") == ["01:30 EST"]
    hourly = _nominal(airflow(), "America/New_York", "30 * * * *", "2026-11-01T04:00", hours=4)
    assert hourly == ["00:30 EDT", "01:30 EDT", "01:30 EST", "02:30 EST"]


def test_every_two_hours_runs_0300_and_0400_edt_an_hour_apart_on_the_spring_day():
    got = _nominal(airflow(), "America/New_York", "0 */2 * * *", "2026-03-08T05:00", hours=5)
    assert got[:2] == ["00:00 EST", "03:00 EDT"] and got[2] == "04:00 EDT"


def _restart_runs(case: dict) -> tuple[list[str], list[str]]:
    """(logical dates Airflow creates at the restart, the nominal instants calsim starts there)."""
    down, up = case["down_utc"]
    preset = airflow(catchup=case["settings"]["catchup"])
    started = started_from_restart(_schedule(case, preset), case["settings"]["start_date_utc"], down, up,
                                   utc(up) + dt.timedelta(minutes=1), RELEASE)
    calsim_runs = [t.strftime(Z) for t in started.filter(pl.col("started_utc") == utc(up))["due_utc"]]
    airflow_runs = sorted(r["logical_date_utc"] for r in case["runs"] if r["created_at_utc"] == up)
    return airflow_runs, calsim_runs


OUTAGES = [c for c in DATA["outage_cases"] if c["kind"] == "cron_trigger" and c["settings"]["variant"] != "stored"]


def test_after_an_outage_the_runs_created_at_the_restart_are_airflows_with_and_without_catchup(report):
    apart, runs = [], 0
    for case in OUTAGES:
        want, got = _restart_runs(case)
        runs += len(want)
        if want != got:
            apart.append((case["zone"], case["rule"], case["settings"]["catchup"], case["down_utc"], want, got))
    report.append(f"airflow 3.3.2 outages (cron_trigger, catchup True/False, 3 h and 3 d over each change): "
                  f"{len(OUTAGES)} cases, {runs:,} runs created at the restarts, {len(apart)} apart")
    assert len(OUTAGES) >= 100 and runs > len(OUTAGES) and not apart, apart[:5]


@pytest.mark.parametrize("setting,value", [("timetable", "cron_data_interval"), ("next_run", "stored")])
def test_settings_whose_engine_rules_do_not_exist_yet_are_refused_not_approximated(setting, value):
    with pytest.raises(calsim.PolicyError, match=rf"^{setting}: '{value}' is not modelled yet"):
        airflow(**{setting: value})
