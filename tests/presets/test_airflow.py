"""``presets.airflow`` against Apache Airflow 3.3.2 itself.

The oracle is Airflow's own code on a fake clock, recorded by
``python tools/capture_airflow.py`` into ``tests/fixtures/airflow/`` (the
fixture names the versions): each timetable walked as the scheduler walks it
through the eight 2026 DST changes of New York, Berlin, Sydney and Adelaide,
and the runs the scheduler creates when it comes back from an outage; with
``max_active_runs`` 1, 4 and 16 and 10-minute runs, the order and start of
the backlog runs (the real ``SchedulerJobRunner`` run creation and start on
in-memory objects, its loop emulated).
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


def _schedule(case: dict, preset, start: str = "2026-01-01T00:00", policy: calsim.Policy | None = None
              ) -> calsim.Schedule:
    rule = case["rule"]
    if rule.startswith("timedelta("):  # Delta timetables: elapsed time from the DAG's start
        hours = {"timedelta(hours=1)": 1, "timedelta(days=1)": 24}[rule]
        rule = calsim.Every(f"{hours}h", anchor=case.get("earliest_utc") or start)
    return preset.apply(calsim.Schedule("dag", case["zone"], start, rule, policy=policy))


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
    """(the run_after of the runs Airflow creates at the restart, the due instants calsim starts there).

    The DAG starts at the case's ``start_date``: a data-interval timetable's
    first time there opens its first interval."""
    down, up = case["down_utc"]
    settings = case["settings"]
    variant = "recomputed" if settings["variant"] == "stored_or_recomputed" else settings["variant"]
    preset = airflow(timetable=case["kind"], catchup=settings["catchup"], next_run=variant)
    start = settings["start_date_utc"]
    started = started_from_restart(_schedule(case, preset, start), start, down, up,
                                   utc(up) + dt.timedelta(minutes=1), RELEASE)
    calsim_runs = sorted(t.strftime(Z) for t in started.filter(pl.col("started_utc") == utc(up))["due_utc"])
    airflow_runs = sorted(r["run_after_utc"] for r in case["runs"] if r["created_at_utc"] == up)
    return airflow_runs, calsim_runs


# Stated (docs/research/airflow_dagster.md, "Surprise 1" and "Surprise 2"): with catchup=False a recomputed
# data-interval 02:30/02:00 DAG loses the interval ending in the spring gap (croniter moves the gap time forward
# twice); a delta trigger without catchup creates its run at the restart with the restart as its logical date,
# where calsim starts the latest missed time there (interval_from="restart" then counts from the restart, as
# Airflow does): the same runs start at the same instants, under another name.
def _stated(case: dict, want: list[str], got: list[str]) -> str | None:
    s = case["settings"]
    if case["kind"] == "cron_data_interval" and not s["catchup"] and s["variant"] == "recomputed" and not want:
        return "data interval ending in the spring gap lost"
    up = case["down_utc"][1]
    if case["kind"] == "delta_trigger" and not s["catchup"] and got and sorted(got[:-1] + [up]) == want:
        return "delta trigger: the run at the restart is named after the restart"
    return None


@pytest.mark.parametrize("kind", ["cron_trigger", "cron_data_interval", "delta_trigger", "delta_data_interval"])
def test_after_an_outage_the_runs_created_at_the_restart_are_airflows(kind, report):
    cases = [c for c in DATA["outage_cases"] if c["kind"] == kind]
    apart, stated, runs = [], {}, 0
    for case in cases:
        want, got = _restart_runs(case)
        runs += len(want)
        if want != got:
            why = _stated(case, want, got)
            if why is None:
                apart.append((case["zone"], case["rule"], case["settings"]["catchup"], case["settings"]["variant"],
                              case["down_utc"], want, got))
            else:
                stated[why] = stated.get(why, 0) + 1
    report.append(f"airflow 3.3.2 outages ({kind}; catchup True/False; next run stored/recomputed; 3 h and 3 d over "
                  f"each change): {len(cases)} cases, {runs:,} runs created at the restarts, {len(apart)} apart, "
                  f"stated: {stated}")
    assert len(cases) >= 96 and runs > len(cases) and not apart, apart[:5]


def test_a_stale_stored_next_run_gives_two_runs_after_a_three_day_outage_without_catchup():
    case = next(c for c in DATA["outage_cases"] if c["kind"] == "cron_data_interval" and c["rule"] == "30 2 * * *"
                and c["settings"]["variant"] == "stored" and c["settings"]["outage"] == "3d"
                and c["zone"] == "America/New_York" and not c["settings"]["catchup"])
    want, got = _restart_runs(case)
    assert len(want) == 2 and got == want


def test_with_catchup_every_missed_data_interval_is_created_at_the_restart_at_once():
    s = airflow(timetable="cron_data_interval", catchup=True).apply(calsim.Schedule("dag", "UTC", "2026-06-01T00:00",
                                                                                    "0 0 * * *"))
    sc = calsim.Scenario("x", [s], "2026-06-01T00:00Z", "2026-06-13T00:00Z", release=RELEASE,
                         outages=[calsim.Outage("2026-06-08T12:00Z", "2026-06-11T12:00Z")])
    f = calsim.simulate(sc, progress=False).frame.filter(pl.col("started_utc") == utc("2026-06-11T12:00:00Z"))
    assert f.select(pl.col("window_start_utc", "window_end_utc").dt.strftime("%m-%d")).rows() == [
        ("06-08", "06-09"), ("06-09", "06-10"), ("06-10", "06-11")]


@pytest.mark.parametrize("reverse,order", [(False, [1, 2, 3]), (True, [3, 2, 1])])
def test_a_backfill_runs_oldest_first_or_newest_first_one_at_a_time_under_max_active_runs_one(reverse, order):
    s = airflow(max_active_runs=1).apply(calsim.Schedule("dag", "UTC", "2026-01-01T00:00", "0 0 * * *",
                                                         policy=calsim.Policy(duration="1h")))
    sc = calsim.Scenario("x", [s], "2026-06-01T00:00Z", "2026-06-02T00:00Z", release=RELEASE,
                         events=[calsim.Backfill("dag", "2026-05-01T00:00Z", "2026-05-04T00:00Z", reverse,
                                                 at="2026-06-01T06:00Z")])
    f = calsim.simulate(sc, progress=False).frame.filter(pl.col("kind") == "backfill").sort("started_utc")
    assert f["nominal_local"].dt.day().to_list() == order
    assert f["started_utc"].dt.hour().to_list() == [6, 7, 8]


def test_max_active_runs_one_works_the_backlog_oldest_first_one_at_a_time():
    s = airflow(catchup=True, max_active_runs=1).apply(calsim.Schedule(
        "dag", "UTC", "2026-03-01T00:00", "0 * * * *", policy=calsim.Policy(duration="10min")))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-01T06:00Z", release=RELEASE,
                         outages=[calsim.Outage("2026-03-01T00:30Z", "2026-03-01T03:30Z")])
    f = calsim.simulate(sc, progress=False).frame.filter(pl.col("started_utc") >= utc("2026-03-01T03:30:00Z"))
    assert f.sort("started_utc")["due_utc"].dt.hour().to_list()[:4] == [1, 2, 3, 4]
    assert f.sort("started_utc")["started_utc"].dt.strftime("%H:%M").to_list()[:3] == ["03:30", "03:40", "03:50"]


def test_a_dag_switched_on_after_its_start_date_runs_every_interval_with_catchup_or_the_latest_without():
    got = {}
    for catchup in (True, False):
        s = airflow(timetable="cron_data_interval", catchup=catchup).apply(
            calsim.Schedule("dag", "UTC", "2026-03-01T00:00", "0 0 * * *"))
        switch = [calsim.Pause("2026-03-01T00:00Z", "dag"), calsim.Resume("2026-03-04T12:00Z", "dag")]
        sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-06T00:00Z", release=RELEASE, events=switch)
        f = calsim.simulate(sc, progress=False).frame
        got[catchup] = f.filter(pl.col("started_utc") == utc("2026-03-04T12:00:00Z"))["window_start_utc"].dt.day()
    assert got[True].to_list() == [1, 2, 3] and got[False].to_list() == [3]


@pytest.mark.parametrize("kind", ["cron_data_interval", "delta_data_interval"])
def test_data_interval_timetables_fire_at_each_intervals_end_with_airflows_intervals(kind, report):
    cases = [c for c in DATA["fire_cases"] if c["kind"] == kind]
    apart = []
    for case in cases:
        lo, hi = case["window_utc"]
        s = _schedule(case, airflow(timetable=kind, catchup=True), case["earliest_utc"])
        f = calsim.simulate(calsim.Scenario("x", [s], lo, hi, release=RELEASE), progress=False).frame
        f = f.filter(pl.col("due_utc") <= utc(case["fires_utc"][-1]) if case["fires_utc"] else pl.lit(False))
        got = [[a.strftime(Z), b.strftime(Z)] for a, b in f.select("window_start_utc", "window_end_utc").rows()]
        if got != case["data_intervals_utc"]:
            apart.append((case["zone"], case["rule"], case["window_utc"][0], case["data_intervals_utc"][:3], got[:3]))
    report.append(f"airflow 3.3.2 {kind}: {len(cases)} cases, "
                  f"{sum(len(c['fires_utc']) for c in cases):,} intervals, {len(apart)} apart")
    assert cases and not apart, apart[:3]


MAX_ACTIVE_CASES = DATA["max_active_cases"]


def _backlog(case: dict) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(Airflow with 1 s scheduler loops, Airflow with loops that take no time, calsim): the (run_after/due,
    start) of every run started from the restart until the DAG caught up, in the order they start."""
    st = case["settings"]
    down, up = case["down_utc"]
    preset = airflow(timetable=case["kind"], catchup=True, max_active_runs=st["max_active_runs"])
    s = _schedule(case, preset, st["start_date_utc"], calsim.Policy(duration=f"{st['run_duration_s']}s"))
    last = max(r["started_at_utc"] for r in case["runs"])
    sc = calsim.Scenario("x", [s], st["start_date_utc"], utc(last) + dt.timedelta(hours=2), release=RELEASE,
                         outages=[calsim.Outage(down, up)])
    f = calsim.simulate(sc, progress=False).frame.filter(pl.col("started_utc") >= utc(up))
    f = f.sort(["started_utc", "due_utc"])
    got = [(a.strftime(Z), b.strftime(Z)) for a, b in zip(f["due_utc"], f["started_utc"])]
    looped = [(r["run_after_utc"], r["started_at_utc"]) for r in case["runs"]]
    zero = [(a, b) for a, b in case["zero_loop_runs_utc"]]
    return looped, zero, got


def test_the_max_active_runs_cases_record_one_run_created_per_loop_and_started_as_created():
    assert len(MAX_ACTIVE_CASES) == 192 and {c["settings"]["max_active_runs"] for c in MAX_ACTIVE_CASES} == {1, 4, 16}
    for case in MAX_ACTIVE_CASES:
        created = [r["created_at_utc"] for r in case["runs"]]
        # _create_dag_runs creates at most one run of a DAG per loop (scheduler_job_runner.py:2445-2552), and a
        # run is only created under the limit, so _start_queued_dagruns starts it in the same loop
        assert len(set(created)) == len(created) and created == sorted(created)
        assert all(r["started_at_utc"] == r["created_at_utc"] for r in case["runs"])
        assert [r["run_after_utc"] for r in case["runs"]] == sorted(r["run_after_utc"] for r in case["runs"])


@pytest.mark.parametrize("limit", [1, 4, 16])
def test_under_max_active_runs_the_backlog_starts_in_airflows_order_at_airflows_instants(limit, report):
    """calsim against Airflow's run creation and start after an outage, ``catchup=True``, 10-minute runs.

    With scheduler loops that take no time the start instants are Airflow's to the second. With 1 s loops
    (``scheduler_idle_sleep_time``) the order is the same and each run starts a whole number of loops later
    than calsim says, at most one loop per run started before it since the restart: Airflow creates one run of
    a DAG per loop, and a slot freed by a finished run is used by the next loop
    (docs/research/airflow_dagster.md). Stated, not modelled: scheduler-loop seconds."""
    cases = [c for c in MAX_ACTIVE_CASES if c["settings"]["max_active_runs"] == limit]
    apart, order_apart, lags, runs = [], [], [], 0
    for case in cases:
        looped, zero, got = _backlog(case)
        runs += len(looped)
        loop_s = case["settings"]["loop_seconds"]
        if got[:len(zero)] != zero:
            apart.append((case["zone"], case["kind"], case["rule"], case["settings"]["outage"],
                          sorted(set(got[:len(zero)]) ^ set(zero))[:3]))
        if [d for d, _ in got[:len(looped)]] != [d for d, _ in looped]:
            order_apart.append((case["zone"], case["kind"], case["rule"], case["settings"]["outage"]))
            continue
        for k, ((_, airflow_start), (_, calsim_start)) in enumerate(zip(looped, got)):
            lag = (utc(airflow_start) - utc(calsim_start)).total_seconds()
            assert lag >= 0 and lag % loop_s == 0 and lag <= k * loop_s, (case["zone"], case["rule"], k, lag)
            lags.append(lag)
        assert looped[-1][0] == looped[-1][1] and got[len(looped) - 1] == looped[-1]  # caught up: on time in both
    late = sum(x > 0 for x in lags)
    report.append(f"airflow 3.3.2 max_active_runs={limit} backlogs (catchup=True, 10 min runs, 3 h and 3 d outages "
                  f"over each change, 4 schedules): {len(cases)} cases, {runs:,} runs from the restart to catching "
                  f"up; with zero-time scheduler loops {len(apart)} apart; with 1 s loops order {len(order_apart)} "
                  f"apart, start instants {late:,} runs later than calsim by whole loops (max {max(lags):.0f} s), "
                  f"stated: one run created per loop")
    assert len(cases) == 64 and runs > 5 * len(cases) and not apart and not order_apart, (apart[:3], order_apart[:3])


def test_max_active_runs_one_after_a_three_day_outage_runs_the_72_hours_one_after_another():
    case = next(c for c in MAX_ACTIVE_CASES if c["zone"] == "Europe/Berlin" and c["kind"] == "cron_trigger"
                and c["rule"] == "0 * * * *" and c["settings"]["outage"] == "3d"
                and c["settings"]["max_active_runs"] == 1 and c["down_utc"][0].startswith("2026-03"))
    looped, zero, got = _backlog(case)
    up = case["down_utc"][1]
    assert zero == got[:len(zero)]
    starts = [utc(b) for _, b in zero]
    assert starts[0] == utc(up) and {(b - a).total_seconds() for a, b in zip(starts[:72], starts[1:73])} == {600}
    # with 1 s loops the n-th run of the backlog starts n s after calsim's instant
    assert [(utc(b) - utc(a)).total_seconds() for (_, a), (_, b) in zip(got[:5], looped[:5])] == [0, 1, 2, 3, 4]
