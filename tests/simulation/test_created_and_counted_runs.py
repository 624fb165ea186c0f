"""The run rules issue 29 added to the one engine, each without a preset: data intervals, the stale stored next
run, catch-up on resume, runs created ahead, intervals counted from the last run, and backfills.

Each rule is checked on both settling paths (``settle="columns"`` and the ordered reference ``"events"``).
"""

from __future__ import annotations

import polars as pl
import pytest

import calsim
from calsim.simulation.engine import run_local

UTC_DAY = "0 0 * * *"
HM = "%m-%d %H:%M"


def _both(scenario: calsim.Scenario) -> pl.DataFrame:
    """The ledger, after checking that the column path and the ordered reference agree on it."""
    a = run_local(scenario).frame.sort("kind", "due_utc")
    b = run_local(scenario, settle="events").frame.sort("kind", "due_utc")
    assert a.equals(b)
    return a


def _hm(frame: pl.DataFrame, *cols: str) -> list[tuple]:
    return frame.select(pl.col(c).dt.strftime(HM) if frame.schema[c] != pl.Enum else pl.col(c).cast(pl.String)
                        for c in cols).rows()


def _daily(policy: calsim.Policy, start: str = "2026-03-01T00:00") -> calsim.Schedule:
    return calsim.Schedule("d", "UTC", start, UTC_DAY, policy=policy)


# -- covers="data_interval" ------------------------------------------------------------------------


def test_a_data_interval_run_is_due_at_its_intervals_end_and_carries_the_interval():
    s = _daily(calsim.Policy(covers="data_interval"))
    f = _both(calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-04T00:00Z"))
    assert _hm(f, "due_utc", "window_start_utc", "window_end_utc") == [
        ("03-02 00:00", "03-01 00:00", "03-02 00:00"), ("03-03 00:00", "03-02 00:00", "03-03 00:00")]


def test_the_first_time_of_a_data_interval_schedule_opens_an_interval_and_runs_nothing():
    opened = _both(calsim.Scenario("x", [_daily(calsim.Policy(covers="data_interval"))], "2026-03-01T00:00Z",
                                   "2026-03-03T00:00Z"))
    own = _both(calsim.Scenario("x", [_daily(calsim.Policy(covers="own_window"))], "2026-03-01T00:00Z",
                                "2026-03-03T00:00Z"))
    assert opened.height == own.height - 1 and _hm(opened, "due_utc") == [("03-02 00:00",)]


def test_a_data_interval_schedule_that_started_before_the_horizon_runs_its_first_row():
    s = _daily(calsim.Policy(covers="data_interval"), start="2026-02-01T00:00")
    f = _both(calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-03T00:00Z"))
    assert _hm(f, "due_utc", "window_start_utc") == [("03-01 00:00", "02-28 00:00"), ("03-02 00:00", "03-01 00:00")]


# -- catchup="earliest_and_latest" -----------------------------------------------------------------


def test_earliest_and_latest_runs_the_stale_stored_run_and_the_latest_and_coalesces_the_rest():
    s = _daily(calsim.Policy(catchup="earliest_and_latest"))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-08T00:00Z",
                         outages=[calsim.Outage("2026-03-01T12:00Z", "2026-03-05T12:00Z")])
    f = _both(sc)
    assert _hm(f, "due_utc", "state") == [("03-01 00:00", "done"), ("03-02 00:00", "done"),
                                          ("03-03 00:00", "coalesced"), ("03-04 00:00", "coalesced"),
                                          ("03-05 00:00", "done"), ("03-06 00:00", "done"), ("03-07 00:00", "done")]
    assert _hm(f.filter(pl.col("due_utc").dt.day().is_in([2, 5])), "started_utc") == [("03-05 12:00",)] * 2


def test_earliest_and_latest_with_one_missed_run_runs_it_once():
    s = _daily(calsim.Policy(catchup="earliest_and_latest"))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-03T00:00Z",
                         outages=[calsim.Outage("2026-03-01T23:00Z", "2026-03-02T01:00Z")])
    assert _both(sc)["state"].to_list() == ["done", "done"]


# -- on_resume -------------------------------------------------------------------------------------


@pytest.mark.parametrize("catchup,done", [("all", 4), ("latest", 1)])
def test_a_resume_with_catch_up_runs_the_paused_occurrences_under_the_catchup_mode(catchup, done):
    s = _daily(calsim.Policy(catchup=catchup, on_resume="catch_up"))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-05T00:00Z",
                         events=[calsim.Pause("2026-02-28T00:00Z", "d"), calsim.Resume("2026-03-04T06:00Z", "d")])
    f = _both(sc)
    at_resume = f.filter(pl.col("started_utc").dt.strftime(HM) == "03-04 06:00")
    assert at_resume.height == done and f.filter(pl.col("state") == "done").height == done
    assert set(f.filter(pl.col("state") != "done")["reason"].to_list()) <= {"catchup"}


def test_by_default_a_resume_drops_what_the_pause_held():
    s = _daily(calsim.Policy(catchup="all"))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-05T00:00Z",
                         events=[calsim.Pause("2026-02-28T00:00Z", "d"), calsim.Resume("2026-03-04T06:00Z", "d")])
    assert set(_both(sc).select("state", "reason").rows()) == {("skipped", "paused")}


# -- ahead_runs / ahead ----------------------------------------------------------------------------


def test_after_a_five_day_outage_a_daily_job_runs_only_the_three_runs_created_before_it():
    s = _daily(calsim.Policy(catchup="all", ahead_runs=3, ahead="1h"))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-09T00:00Z",
                         outages=[calsim.Outage("2026-03-01T12:00Z", "2026-03-06T12:00Z")])
    f = _both(sc)
    down = f.filter(pl.col("due_utc").dt.strftime(HM).is_between(pl.lit("03-01 12:00"), pl.lit("03-06 12:00")))
    assert _hm(down, "due_utc", "state") == [("03-02 00:00", "done"), ("03-03 00:00", "done"), ("03-04 00:00", "done"),
                                             ("03-05 00:00", "skipped"), ("03-06 00:00", "skipped")]
    assert set(down.filter(pl.col("state") == "skipped")["reason"].to_list()) == {"catchup"}


def test_the_look_ahead_time_creates_every_run_due_within_it_and_one_more():
    s = calsim.Schedule("q", "UTC", "2026-03-01T00:00", "*/15 * * * *",
                        policy=calsim.Policy(catchup="all", ahead_runs=3, ahead="1h"))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-01T06:00Z",
                         outages=[calsim.Outage("2026-03-01T01:00Z", "2026-03-01T04:00Z")])
    f = _both(sc)
    ran = f.filter((pl.col("started_utc").dt.strftime(HM) == "03-01 04:00") & (pl.col("due_utc").dt.hour() < 4))
    assert _hm(ran, "due_utc") == [("03-01 01:00",), ("03-01 01:15",), ("03-01 01:30",), ("03-01 01:45",),
                                   ("03-01 02:00",)]


# -- interval_from ---------------------------------------------------------------------------------


def _hourly(mode: str, catchup: str) -> calsim.Scenario:
    s = calsim.Schedule("i", "UTC", "2026-03-01T00:00", calsim.Every("1h", anchor="2026-03-01T00:00Z"),
                        policy=calsim.Policy(catchup=catchup, interval_from=mode))
    return calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-01T06:00Z", tick="1s",
                           outages=[calsim.Outage("2026-03-01T00:50Z", "2026-03-01T03:50Z")])


def test_an_interval_counted_from_the_last_run_restarts_at_the_catch_up_run():
    f = _both(_hourly("last_run", "latest"))
    assert _hm(f.filter(pl.col("state") == "done"), "started_utc") == [("03-01 00:00",), ("03-01 03:50",),
                                                                        ("03-01 04:50",), ("03-01 05:50",)]


def test_an_interval_counted_from_the_restart_runs_one_interval_after_it_without_a_catch_up():
    f = _both(_hourly("restart", "skip"))
    assert _hm(f.filter(pl.col("state") == "done"), "started_utc") == [("03-01 00:00",), ("03-01 04:50",),
                                                                        ("03-01 05:50",)]


def test_an_interval_counted_from_the_schedule_keeps_its_anchor():
    f = _both(_hourly("schedule", "latest"))
    assert _hm(f.filter(pl.col("state") == "done"), "started_utc")[1:3] == [("03-01 03:50",), ("03-01 04:00",)]


def test_an_outage_with_nothing_due_moves_nothing_when_counting_from_the_last_run():
    s = calsim.Schedule("i", "UTC", "2026-03-01T00:00", calsim.Every("6h", anchor="2026-03-01T00:00Z"),
                        policy=calsim.Policy(catchup="latest", interval_from="last_run"))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-02T00:00Z",
                         outages=[calsim.Outage("2026-03-01T01:00Z", "2026-03-01T02:00Z")])
    assert _hm(_both(sc), "due_utc") == [("03-01 00:00",), ("03-01 06:00",), ("03-01 12:00",), ("03-01 18:00",)]


# -- Backfill --------------------------------------------------------------------------------------


def _backfill(reverse: bool, max_active: int = 1, **kw) -> pl.DataFrame:
    s = _daily(calsim.Policy(overlap="buffer_all", max_active=max_active, duration="2h", **kw), "2026-01-01T00:00")
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-02T00:00Z", events=[
        calsim.Backfill("d", "2026-02-25T00:00Z", "2026-03-05T00:00Z", reverse, at="2026-03-01T06:00Z")])
    return _both(sc).filter(pl.col("kind") == "backfill")


def test_a_backfill_runs_the_ranges_occurrences_before_the_horizon_oldest_first_one_at_a_time():
    f = _backfill(False)
    assert [t.day for t in f["nominal_local"]] == [25, 26, 27, 28]
    assert _hm(f.sort("started_utc"), "started_utc") == [("03-01 06:00",), ("03-01 08:00",), ("03-01 10:00",),
                                                         ("03-01 12:00",)]
    assert f.sort("started_utc")["nominal_local"].dt.day().to_list() == [25, 26, 27, 28]


def test_a_reverse_backfill_runs_newest_first():
    assert _backfill(True).sort("started_utc")["nominal_local"].dt.day().to_list() == [28, 27, 26, 25]


def test_a_backfill_is_bounded_by_max_active():
    assert _backfill(False, max_active=2)["started_utc"].dt.strftime(HM).value_counts()["count"].max() == 2


def test_a_backfill_of_a_data_interval_schedule_takes_logical_dates_and_carries_their_intervals():
    f = _backfill(False, covers="data_interval").sort("started_utc")
    # logical dates 02-25 .. 02-28: the intervals [02-25, 02-26) .. [02-28, 03-01), run at their ends
    assert _hm(f, "window_start_utc", "window_end_utc")[0] == ("02-25 00:00", "02-26 00:00")
    assert [t.day for t in f["nominal_local"]] == [26, 27, 28]  # (03-01 00:00, [02-28, 03-01), is the horizon's)


def test_a_backfill_reads_from_a_scenario_file(tmp_path):
    (tmp_path / "fleet.toml").write_text('[[schedule]]\nid = "d"\nzone = "UTC"\nstart = "2026-01-01T00:00"\n'
                                         'rule = "0 0 * * *"\n')
    (tmp_path / "s.toml").write_text('[scenario]\nname = "b"\nfleet = "fleet.toml"\nstart = "2026-03-01T00:00Z"\n'
                                     'end = "2026-03-02T00:00Z"\n[[event]]\ntype = "backfill"\nschedule_id = "d"\n'
                                     'start = "2026-02-27T00:00Z"\nend = "2026-03-01T00:00Z"\n')
    f = calsim.simulate(calsim.load_scenario(tmp_path / "s.toml")).frame
    assert f.filter(pl.col("kind") == "backfill").height == 2


@pytest.mark.parametrize("kw,message", [
    ({"start": "2026-03-02T00:00Z", "end": "2026-03-01T00:00Z"}, r"^backfill\.end: .* is not after start"),
    ({"reverse": "yes"}, r"^backfill\.reverse: expected True or False"),
])
def test_a_bad_backfill_names_the_field(kw, message):
    args = {"schedule_id": "d", "start": "2026-03-01T00:00Z", "end": "2026-03-02T00:00Z", **kw}
    with pytest.raises(calsim.CalsimError, match=message):
        calsim.Backfill(**args)


def test_a_backfill_of_an_unknown_schedule_is_refused_by_the_scenario():
    with pytest.raises(calsim.ScheduleError, match=r"^backfill\.schedule_id: unknown schedule 'nope'"):
        calsim.Scenario("x", [_daily(calsim.Policy())], "2026-03-01T00:00Z", "2026-03-02T00:00Z",
                        events=[calsim.Backfill("nope", "2026-02-01T00:00Z", "2026-02-02T00:00Z")])


@pytest.mark.parametrize("kw,message", [
    ({"ahead": "1h"}, r"^ahead: '1h' is only used with ahead_runs"),
    ({"ahead_runs": -1}, r"^ahead_runs: -1 \(allowed an integer from 0"),
    ({"on_resume": "catchup"}, r"^on_resume: unknown policy 'catchup'"),
    ({"interval_from": "last"}, r"^interval_from: unknown policy 'last'"),
])
def test_a_bad_new_policy_field_names_the_field_and_what_is_allowed(kw, message):
    with pytest.raises(calsim.PolicyError, match=message):
        calsim.Policy(**kw)


def test_a_backfill_inside_the_horizon_runs_only_the_logical_dates_without_a_run():
    s = _daily(calsim.Policy(catchup="latest", overlap="buffer_all", max_active=1))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-08T00:00Z",
                         outages=[calsim.Outage("2026-03-01T12:00Z", "2026-03-05T12:00Z")],
                         events=[calsim.Backfill("d", "2026-03-01T00:00Z", "2026-03-07T00:00Z", at=at)
                                 for at in ("2026-03-06T12:00Z", "2026-03-06T18:00Z")])
    f = _both(sc)
    coalesced = f.filter(pl.col("state") == "coalesced")["nominal_local"].to_list()
    filled = f.filter(pl.col("kind") == "backfill")
    assert sorted(filled["nominal_local"].to_list()) == sorted(coalesced) and len(coalesced) == 3
    assert set(filled["started_utc"].dt.strftime(HM).to_list()) == {"03-06 12:00"}  # (the second found none left)


def test_with_no_minimum_a_schedule_left_without_a_created_run_is_never_topped_up_again():
    s = _daily(calsim.Policy(catchup="all", ahead_runs=0, ahead="1h"))
    sc = calsim.Scenario("x", [s], "2026-03-01T00:00Z", "2026-03-09T00:00Z",
                         outages=[calsim.Outage("2026-03-01T12:00Z", "2026-03-04T12:00Z")])
    f = _both(sc)
    assert _hm(f.filter(pl.col("state") == "done"), "due_utc", "started_utc") == [
        ("03-01 00:00", "03-01 00:00"), ("03-02 00:00", "03-04 12:00")]
    assert set(f.filter(pl.col("due_utc").dt.day() > 4)["state"].to_list()) == {"skipped"}
