"""Prefect flow runs as a run history (``kind="prefect"``, calsim.importers.history.prefect_runs).

The fixtures are Prefect 3.9.1's own output (``python tools/capture_histories.py``): ``prefect flow-run ls -o
json`` and ``POST /api/flow_runs/paginate`` over 2026-03-05..10. Deployment ``nightly-etl`` (of flow ``etl``) has a
``CronSchedule("30 2 * * *", timezone="America/New_York")``: 03-05 completes, 03-06 crashes, 03-07 fails and is
re-run by hand (``prefect deployment run``) at 15:00Z, 03-08 -- clocks spring forward, 02:30 does not exist -- runs
at 03:30 EDT (07:30Z), 03-09 is Late and starts 22 minutes late, 03-10 is Late and cancelled before it starts; a
second run by hand on 03-10 12:00Z is still running; a developer's flow run of no deployment ran on 03-08.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.cli import main
from calsim.errors import CalsimError, InputError
from calsim.importers.history import HISTORY_SCHEMA, detect_history, read_history

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "history"
LS = FIX / "prefect-3.9.1-flow-runs.json"
PAGE = FIX / "prefect-3.9.1-paginate.json"
HIST = ROOT / "data" / "examples" / "histories"
DEPLOYMENT = "0193a5c2-2000-7000-8000-000000000002"
UTC = dt.timezone.utc


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def flow_runs() -> list[dict]:
    return json.loads(LS.read_text())


def named(name: str) -> dict:
    return next(r for r in flow_runs() if r["name"] == name)


def first(**changes: object) -> dict:
    """The 03-05 scheduled run (COMPLETED) as ``prefect flow-run ls -o json`` prints it, with ``changes``."""
    return {**named("amber-heron"), **changes}


def text(*runs: dict) -> str:
    return json.dumps(list(runs), indent=2) + "\n"


class TestDetection:
    def test_flow_run_ls_output_is_detected_as_prefect(self):
        assert detect_history(LS.read_text()) == "prefect"

    def test_the_paginate_object_is_detected_as_prefect(self):
        assert detect_history(PAGE.read_text()) == "prefect"

    def test_one_flow_run_is_detected_as_prefect_and_read(self):
        one = json.dumps(first()) + "\n"
        assert detect_history(one) == "prefect"
        assert read_history(one)["scheduled_utc"].to_list() == [at("2026-03-05T07:30")]

    def test_a_list_whose_first_run_is_longer_than_the_mib_looked_at_is_not_guessed(self):
        big = first(parameters={"payload": "x" * (2 << 20)})
        assert detect_history(text(big, first())) == "csv"
        assert read_history(text(big, first()), kind="prefect").height == 2

    def test_a_paginate_object_longer_than_the_mib_looked_at_is_detected_by_its_first_run(self):
        page = json.dumps({"results": [first(), first(parameters={"payload": "x" * (2 << 20)})], "count": 2})
        assert detect_history(page) == "prefect"

    def test_the_shipped_histories_of_the_other_kinds_are_detected_as_before(self):
        kinds = {f: detect_history((HIST / f).read_text()) for f in ("jobs.json", "journal.json", "cron.log",
                                                                      "runs.csv", "backup.journal.json")}
        assert kinds == {"jobs.json": "kubernetes", "journal.json": "journal", "cron.log": "syslog",
                         "runs.csv": "csv", "backup.journal.json": "journal"}
        assert detect_history((FIX / "airflow-3.3.2-dag-runs.json").read_text()) == "airflow"

    def test_a_deployment_list_is_not_a_flow_run_history(self):
        deployments = [{"id": DEPLOYMENT, "name": "nightly-etl", "flow_id": "0193a5c2-1000-7000-8000-000000000001",
                        "schedules": []}]
        assert detect_history(json.dumps(deployments)) != "prefect"

    def test_a_kubectl_job_that_mentions_flow_runs_stays_kubernetes(self):
        jobs = json.loads((HIST / "jobs.json").read_text())
        jobs["items"][0]["metadata"].setdefault("annotations", {})["results"] = '[{"flow_id": 1}]'
        assert detect_history(json.dumps(jobs)) == "kubernetes"

    def test_an_empty_list_is_prefect_only_when_kind_says_so(self):
        assert detect_history("[]\n") == "csv"
        out = read_history("[]\n", kind="prefect")
        assert out.height == 0 and dict(out.schema) == HISTORY_SCHEMA


class TestScheduleIds:
    def test_a_run_is_named_by_its_deployment_id(self):
        assert read_history(LS)["schedule_id"].unique().to_list() == [DEPLOYMENT]

    def test_a_deployment_name_added_to_the_runs_names_them(self):
        runs = [{**r, "deployment_name": "nightly-etl"} for r in flow_runs()]
        assert read_history(text(*runs))["schedule_id"].unique().to_list() == ["nightly-etl"]

    def test_a_run_of_no_deployment_is_not_read(self):
        adhoc = named("icy-panda")
        assert adhoc["deployment_id"] is None and adhoc["state_type"] == "COMPLETED"
        assert read_history(text(adhoc), kind="prefect").height == 0

    def test_the_paginate_object_gives_the_rows_ls_gives(self):
        cols = ["schedule_id", "scheduled_utc", "started_utc", "finished_utc", "status"]
        assert read_history(PAGE).select(cols).equals(read_history(LS).select(cols))


class TestScheduledInstant:
    def test_reads_into_the_history_schema_one_row_per_deployment_run_that_ran(self):
        out = read_history(LS)
        assert dict(out.schema) == HISTORY_SCHEMA
        assert out.height == 7  # 9 runs: one of no deployment, one cancelled while Late

    def test_an_auto_scheduled_run_is_scheduled_at_its_expected_start_time(self):
        auto = read_history(LS).filter(pl.col("scheduled_utc").is_not_null())
        assert auto["scheduled_utc"].to_list() == [at(f"2026-03-0{d}T07:30") for d in (5, 6, 7, 8)] + [
            at("2026-03-09T06:30")]  # 03-08: 02:30 EST does not exist, Prefect runs 03:30 EDT

    def test_a_late_run_keeps_the_time_it_was_scheduled_for(self):
        late = named("eager-mole")
        assert late["expected_start_time"] == "2026-03-09T06:30:00Z" and late["start_time"] == "2026-03-09T06:52:00Z"
        assert read_history(text(late))["scheduled_utc"].to_list() == [at("2026-03-09T06:30")]

    def test_next_scheduled_start_time_is_not_the_scheduled_instant(self):
        run = first(next_scheduled_start_time="2026-03-05T09:00:00Z")
        assert read_history(text(run))["scheduled_utc"].to_list() == [at("2026-03-05T07:30")]


class TestManualRuns:
    def test_a_deployment_run_started_by_hand_has_no_scheduled_time(self):
        manual = named("gentle-yak")
        assert manual["auto_scheduled"] is False and manual["expected_start_time"] == "2026-03-07T15:00:00Z"
        assert read_history(text(manual))["scheduled_utc"].to_list() == [None]

    def test_any_run_not_auto_scheduled_has_no_scheduled_time(self):
        assert read_history(text(first(auto_scheduled=False)))["scheduled_utc"].to_list() == [None]

    def test_a_run_without_auto_scheduled_is_taken_as_not_auto_scheduled(self):
        run = {k: v for k, v in first().items() if k != "auto_scheduled"}
        assert read_history(text(run), kind="prefect")["scheduled_utc"].to_list() == [None]


class TestStates:
    @pytest.mark.parametrize(("state_type", "status"), [
        ("COMPLETED", "succeeded"), ("FAILED", "failed"), ("CRASHED", "failed"), ("CANCELLED", "failed"),
        ("RUNNING", "running"), ("CANCELLING", "running"), ("PAUSED", "running"), ("SCHEDULED", "running"),
        ("PENDING", "running")])
    def test_each_state_type_of_a_run_that_started_maps_to_a_history_status(self, state_type, status):
        assert read_history(text(first(state_type=state_type)))["status"].to_list() == [status]

    def test_the_recorded_states_map_as_prefect_left_them(self):
        out = read_history(LS).sort("started_utc")
        assert out["status"].to_list() == ["succeeded", "failed", "failed", "succeeded", "succeeded", "succeeded",
                                           "running"]

    def test_without_state_type_the_state_object_tells_it(self):
        run = first(state_type=None)
        assert run["state"]["type"] == "COMPLETED"
        assert read_history(text(run))["status"].to_list() == ["succeeded"]

    def test_a_run_of_no_known_state_has_no_status(self):
        assert read_history(text(first(state_type=None, state=None)))["status"].to_list() == [None]

    def test_a_late_run_that_never_started_is_not_read(self):
        late = first(state_type="SCHEDULED", state_name="Late", start_time=None, end_time=None, run_count=0)
        assert read_history(text(late)).height == 0

    def test_a_run_cancelled_before_it_ran_is_not_read_though_prefect_gives_it_a_start_time(self):
        cancelled = named("fierce-newt")
        assert (cancelled["state_type"], cancelled["run_count"]) == ("CANCELLED", 0)
        assert cancelled["start_time"] == cancelled["end_time"] == "2026-03-10T09:00:00Z"
        assert read_history(text(cancelled)).height == 0

    def test_a_run_that_crashed_before_it_ran_is_read_as_failed(self):
        crashed = first(state_type="CRASHED", run_count=0)
        assert read_history(text(crashed))["status"].to_list() == ["failed"]

    def test_a_running_run_has_no_end(self):
        running = read_history(text(named("hazy-crane")))
        assert running.select("status", "finished_utc").row(0) == ("running", None)


def _scenario(*schedules: calsim.Schedule) -> calsim.Scenario:
    """The deployment's schedule as calsim models Prefect's cron (a gap time runs an hour later)."""
    return calsim.Scenario("prefect", list(schedules) or [
        calsim.Schedule("nightly-etl", "America/New_York", "2026-03-01T00:00", "30 2 * * *", gap="shift")],
        "2026-03-05T00:00Z", "2026-03-11T00:00Z")


class TestReconcile:
    def test_reconcile_tells_the_story_of_the_flow_runs(self):
        store = calsim.LedgerStore()
        store.write(calsim.simulate(_scenario(), progress=False))
        history = read_history(LS).with_columns(pl.col("schedule_id").replace({DEPLOYMENT: "nightly-etl"}))
        out = store.reconcile("prefect", history.drop("origin"))
        got = {c: n for c, n in out.group_by("class").len().iter_rows()}
        # 03-10 never ran (cancelled while Late); both runs by hand are extra; 03-06 crashed but ran
        assert got == {"matched": 4, "late": 1, "missing": 1, "unexpected": 2}

    def test_a_deployment_of_two_schedules_gets_each_run_on_the_schedule_that_fired_it(self):
        # from_prefect names them nightly-etl:1 and :2; the runs know only the deployment
        store = calsim.LedgerStore()
        store.write(calsim.simulate(_scenario(
            calsim.Schedule("nightly-etl:1", "America/New_York", "2026-03-01T00:00", "30 2 * * *", gap="shift"),
            calsim.Schedule("nightly-etl:2", "America/New_York", "2026-03-01T00:00", "0 18 * * *")),
            progress=False))
        runs = [{**r, "deployment_name": "nightly-etl"} for r in flow_runs()]
        out = store.reconcile("prefect", read_history(text(*runs)).drop("origin"))
        got = {(sid, c): n for sid, c, n in out.group_by("schedule_id", "class").len().iter_rows()}
        assert got == {("nightly-etl:1", "matched"): 4, ("nightly-etl:1", "late"): 1,
                       ("nightly-etl:1", "missing"): 1, ("nightly-etl:1", "unexpected"): 2,
                       ("nightly-etl:2", "missing"): 6}

    def test_calsim_reconcile_maps_the_deployment_id_to_the_schedule(self, tmp_path, capsys):
        db = tmp_path / "prefect.duckdb"
        with calsim.LedgerStore(str(db)) as store:
            store.write(calsim.simulate(_scenario(), progress=False))
        assert main(["reconcile", "prefect", str(LS), "--db", str(db), "--map",
                     f"{DEPLOYMENT}=nightly-etl"]) == 0
        assert "4 matched, 1 late, 0 wrong-instant, 1 missing, 2 extra" in capsys.readouterr().out


class TestHostileInput:
    def test_a_page_of_more_runs_is_refused_with_how_to_join_the_pages(self):
        page = json.dumps({"results": flow_runs()[:2], "count": 9, "limit": 2, "pages": 5, "page": 1}) + "\n"
        with pytest.raises(InputError, match=r"^prefect flow runs: <history>: one page of 2 of 9 flow runs \(count\); "
                                             r"fetch every page .* jq -s '\[\.\[\]\.results\[\]\]'"):
            read_history(page)

    def test_more_runs_than_max_rows_are_refused_before_a_run_is_read(self):
        with pytest.raises(InputError, match=r"^history: <history>: 9 flow runs, over the limit of 3 rows"):
            read_history(LS.read_text(), max_rows=3)

    def test_a_document_over_the_document_cap_is_refused_unread(self, tmp_path):
        big = tmp_path / "runs.json"
        with open(big, "wb") as f:
            f.write(json.dumps([first()]).encode()[:-1] + b", ")
            f.truncate((64 << 20) + 1)  # sparse: nothing past the head is ever read
        with pytest.raises(InputError, match=r"is 67,108,865 bytes, over the limit of 67,108,864 for a document"):
            read_history(big)

    def test_deep_nesting_is_refused(self):
        deep = '[{"parameters": ' + "[" * 100_000 + "]" * 100_000 + "}]\n"
        with pytest.raises(InputError, match=r"^prefect flow runs: <history>: JSON nested too deeply"):
            read_history(deep, kind="prefect")

    def test_not_json_is_refused(self):
        with pytest.raises(InputError, match=r"^prefect flow runs: <history>: not valid JSON"):
            read_history("[{\n", kind="prefect")

    def test_a_document_of_another_shape_is_refused(self):
        with pytest.raises(InputError, match=r"^prefect flow runs: <history>: expected the list `prefect flow-run ls "
                                             r"-o json` prints, .* got an object without results"):
            read_history('{"flow_runs": []}\n', kind="prefect")

    @pytest.mark.parametrize(("changes", "message"), [
        ({"deployment_id": 7}, r" \(amber-heron\): deployment_id: expected the deployment's id \(a UUID as text\) "
                               r"or null, got 7"),
        ({"deployment_name": ""}, r"deployment_name: expected the deployment's name \(text, not empty\) or null, "
                                  r"got ''"),
        ({"auto_scheduled": "yes"}, r"auto_scheduled: expected true or false, got 'yes'"),
        ({"state_type": "Completed"}, r"state_type: 'Completed' is not a state type \(allowed: SCHEDULED, PENDING, "
                                      r"RUNNING, COMPLETED, FAILED, CANCELLED, CRASHED, PAUSED, CANCELLING, or null\)"),
        ({"state_type": None, "state": {"type": {"a": 1}}}, r"state_type: \{'a': 1\} is not a state type"),
        ({"run_count": -1}, r"run_count: expected a whole number from 0, got -1"),
        ({"run_count": True}, r"run_count: expected a whole number from 0, got True"),
        ({"start_time": "yesterday"}, r"start_time: expected an RFC 3339 time such as '2026-03-09T06:30:00Z' "
                                      r"\(years 0001..9999\), got 'yesterday'"),
        ({"end_time": "2026-03-05T07:41:00"}, r"end_time: '2026-03-05T07:41:00' has no offset"),
        ({"expected_start_time": "0001-01-01T00:00:00+01:00"},
         r"expected_start_time: '0001-01-01T00:00:00\+01:00' is out of range"),
        ({"expected_start_time": ["2026-03-05T07:30:00Z"]}, r"expected_start_time: expected an RFC 3339 time"),
    ])
    def test_a_bad_field_names_the_item_the_field_the_value_and_what_is_allowed(self, changes, message):
        with pytest.raises(InputError, match=r"^prefect flow runs: <history> item 0.*" + message):
            read_history(text(first(**changes)))

    def test_an_item_that_is_not_an_object_is_named(self):
        with pytest.raises(InputError, match=r"^prefect flow runs: <history> item 1: expected a flow run object, "
                                             r"got 42"):
            read_history(json.dumps([first(), 42]) + "\n")

    def test_results_that_is_not_a_list_is_refused(self):
        with pytest.raises(InputError, match=r"^prefect flow runs: <history>: results: expected a list of flow runs, "
                                             r"got 'none'"):
            read_history('{"results": "none"}\n', kind="prefect")

    def test_count_of_the_wrong_type_is_refused(self):
        with pytest.raises(InputError, match=r"count: expected a whole number or null, got 9\.5"):
            read_history(json.dumps({"results": [], "count": 9.5}) + "\n", kind="prefect")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=st.dictionaries(
    st.sampled_from(["name", "flow_id", "deployment_id", "deployment_name", "auto_scheduled", "state_type", "state",
                     "run_count", "expected_start_time", "start_time", "end_time", "parameters"]),
    st.none() | st.booleans() | st.integers() | st.text(max_size=30)
    | st.sampled_from(["COMPLETED", "CANCELLED", "SCHEDULED", "Late", "", DEPLOYMENT, "2026-03-05T07:30:00Z",
                       "2026-03-05T07:30:00", "9999-12-31T23:59:59-01:00"])
    | st.lists(st.integers(), max_size=2) | st.dictionaries(st.sampled_from(["type", "name"]),
                                                            st.text(max_size=10), max_size=2),
    max_size=10),
    shape=st.sampled_from(["list", "page", "one"]))
def test_fuzzed_flow_runs_only_raise_calsim_errors(run, shape):
    body = {"list": [run], "page": {"results": [run], "count": 1}, "one": run}[shape]
    try:
        out = read_history(json.dumps(body) + "\n", kind="prefect")
    except CalsimError:
        return
    assert dict(out.schema) == HISTORY_SCHEMA
