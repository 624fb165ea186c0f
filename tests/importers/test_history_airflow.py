"""Airflow DAG runs as a run history (``kind="airflow"``, calsim.importers.history.airflow_runs).

The fixtures are Airflow 3.3.2's own output (``python tools/capture_histories.py``): ``GET /api/v2/dags/~/dagRuns``
and ``airflow dags list-runs nightly_etl -o json`` over 2026-03-05..10. ``nightly_etl`` runs ``30 2 * * *`` in
America/New_York (CronTriggerTimetable): 03-05 and 03-06 succeed, 03-07 fails and is re-run by hand at 15:00Z,
03-08 -- clocks spring forward, 02:30 does not exist -- runs at 03:30 EDT (07:30Z), 03-09 starts 22 minutes late,
03-10 stays queued; a backfill on 03-09 fills 03-04. ``daily_report`` runs ``0 6 * * *`` UTC under a
CronDataIntervalTimetable (each run due at its interval's end, its logical date a day earlier); ``on_new_data``
runs once, triggered by an asset.
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
REST = FIX / "airflow-3.3.2-dag-runs.json"
CLI = FIX / "airflow-3.3.2-list-runs.json"
HIST = ROOT / "data" / "examples" / "histories"
UTC = dt.timezone.utc


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def rest_runs() -> list[dict]:
    return json.loads(REST.read_text())["dag_runs"]


def run_of(dag_id: str, run_id_prefix: str) -> dict:
    return next(r for r in rest_runs() if r["dag_id"] == dag_id and r["dag_run_id"].startswith(run_id_prefix))


def doc(*runs: dict) -> str:
    return json.dumps({"dag_runs": list(runs), "total_entries": len(runs)}) + "\n"


def first_etl(**changes: object) -> dict:
    """nightly_etl's 03-05 run as the REST API gives it, with ``changes``."""
    return {**run_of("nightly_etl", "scheduled__2026-03-05"), **changes}


class TestDetection:
    def test_the_rest_collection_is_detected_as_airflow(self):
        assert detect_history(REST.read_text()) == "airflow"

    def test_the_list_runs_output_is_detected_as_airflow(self):
        assert detect_history(CLI.read_text()) == "airflow"

    def test_a_list_of_runs_joined_from_pages_is_detected_as_airflow(self):
        assert detect_history(json.dumps(rest_runs(), indent=2)) == "airflow"

    def test_one_run_is_detected_as_airflow_and_read(self):
        text = json.dumps(first_etl()) + "\n"
        assert detect_history(text) == "airflow"
        assert read_history(text)["scheduled_utc"].to_list() == [at("2026-03-05T07:30")]

    def test_a_collection_with_sorted_keys_is_detected_as_airflow(self):
        text = json.dumps({"total_entries": 1, "dag_runs": [first_etl()]}, sort_keys=True, indent=2)
        assert detect_history(text) == "airflow"

    def test_a_collection_longer_than_the_mib_looked_at_is_detected_by_its_first_key(self):
        big = first_etl(conf={"payload": "x" * (2 << 20)})
        assert detect_history(doc(big, first_etl())) == "airflow"

    def test_the_shipped_histories_of_the_other_kinds_are_detected_as_before(self):
        kinds = {f: detect_history((HIST / f).read_text()) for f in ("jobs.json", "journal.json", "cron.log",
                                                                      "runs.csv", "backup.journal.json")}
        assert kinds == {"jobs.json": "kubernetes", "journal.json": "journal", "cron.log": "syslog",
                         "runs.csv": "csv", "backup.journal.json": "journal"}

    def test_a_kubectl_job_list_that_mentions_dag_runs_stays_kubernetes(self):
        jobs = json.loads((HIST / "jobs.json").read_text())
        jobs["items"][0]["metadata"].setdefault("annotations", {})["dag_runs"] = "dag_id run_id"
        assert detect_history(json.dumps(jobs, indent=4)) == "kubernetes"

    def test_a_journal_line_that_mentions_dag_runs_stays_journal(self):
        line = json.dumps({"__REALTIME_TIMESTAMP": "1773038400000000", "UNIT": "a.service",
                           "MESSAGE": '{"dag_runs": []}'})
        assert detect_history(line + "\n") == "journal"

    def test_an_empty_list_is_airflow_only_when_kind_says_so(self):
        assert detect_history("[]\n") == "csv"
        out = read_history("[]\n", kind="airflow")
        assert out.height == 0 and dict(out.schema) == HISTORY_SCHEMA


class TestScheduledInstant:
    def test_reads_into_the_history_schema_one_row_per_run_that_started(self):
        out = read_history(REST)
        assert dict(out.schema) == HISTORY_SCHEMA
        assert out.height == 14  # 15 runs, one still queued

    def test_a_cron_trigger_run_is_scheduled_at_its_run_after_which_is_its_logical_date(self):
        etl = read_history(REST).filter(pl.col("schedule_id") == "nightly_etl", pl.col("scheduled_utc").is_not_null())
        runs = [r for r in rest_runs() if r["dag_id"] == "nightly_etl" and r["run_type"] == "scheduled"
                and r["start_date"]]
        assert all(r["run_after"] == r["logical_date"] for r in runs)
        assert sorted(etl["scheduled_utc"].to_list())[1:] == [at(r["run_after"][:-1]) for r in runs]

    def test_the_spring_forward_run_is_due_at_0330_edt(self):
        etl = read_history(REST).filter(pl.col("schedule_id") == "nightly_etl")
        assert at("2026-03-08T07:30") in etl["scheduled_utc"].to_list()  # 02:30 EST does not exist on 03-08

    def test_a_data_interval_run_is_scheduled_at_its_interval_end_not_its_logical_date(self):
        report = read_history(REST).filter(pl.col("schedule_id") == "daily_report")
        assert report["scheduled_utc"].to_list() == [at(f"2026-03-{d:02}T06:00") for d in range(5, 11)]
        first = run_of("daily_report", "scheduled__2026-03-05")
        assert (first["logical_date"], first["data_interval_end"]) == ("2026-03-04T06:00:00Z", "2026-03-05T06:00:00Z")

    def test_without_run_after_the_interval_end_dates_the_run(self):
        run = run_of("daily_report", "scheduled__2026-03-05")
        del run["run_after"]
        assert read_history(doc(run))["scheduled_utc"].to_list() == [at("2026-03-05T06:00")]

    def test_without_run_after_and_interval_the_logical_date_dates_the_run(self):
        run = first_etl(logical_date="2026-03-05T02:30:00-05:00", data_interval_end=None)
        del run["run_after"]
        assert read_history(doc(run))["scheduled_utc"].to_list() == [at("2026-03-05T07:30")]

    def test_a_backfill_run_keeps_the_run_after_of_the_interval_it_fills(self):
        out = read_history(REST).filter(pl.col("started_utc") == at("2026-03-09T10:00:20"))
        assert out["scheduled_utc"].to_list() == [at("2026-03-04T07:30")]

    def test_the_cli_output_gives_the_rows_the_rest_api_gives(self):
        cols = ["schedule_id", "scheduled_utc", "started_utc", "finished_utc", "status"]
        rest = read_history(REST).filter(pl.col("schedule_id") == "nightly_etl").select(cols)
        assert read_history(CLI).select(cols).equals(rest)


class TestRunsNothingScheduled:
    def test_a_manual_run_is_read_without_a_scheduled_time(self):
        out = read_history(REST).filter(pl.col("started_utc") == at("2026-03-07T15:00:02"))
        assert out.select("schedule_id", "scheduled_utc", "status").row(0) == ("nightly_etl", None, "succeeded")

    def test_an_asset_triggered_run_is_read_without_a_scheduled_time(self):
        out = read_history(REST).filter(pl.col("schedule_id") == "on_new_data")
        assert out["scheduled_utc"].to_list() == [None]

    @pytest.mark.parametrize("run_type", ["manual", "operator_triggered", "asset_triggered", "asset_materialization"])
    def test_every_run_type_a_timetable_did_not_make_has_no_scheduled_time(self, run_type):
        assert read_history(doc(first_etl(run_type=run_type)))["scheduled_utc"].to_list() == [None]

    def test_without_run_type_the_run_id_prefix_tells_a_manual_run_as_airflow_does(self):
        runs = [{k: v for k, v in first_etl(dag_run_id=i).items() if k != "run_type"}
                for i in ("manual__2026-03-05T07:30:00+00:00", "backfill__2026-03-05T07:30:00+00:00", "my-rerun")]
        assert read_history(json.dumps(runs) + "\n")["scheduled_utc"].to_list() == [None, at("2026-03-05T07:30"),
                                                                                     None]


class TestStates:
    @pytest.mark.parametrize(("state", "status"), [("success", "succeeded"), ("failed", "failed"),
                                                   ("running", "running")])
    def test_each_dag_run_state_maps_to_a_history_status(self, state, status):
        assert read_history(doc(first_etl(state=state)))["status"].to_list() == [status]

    def test_a_queued_run_has_not_run_and_is_not_read(self):
        queued = run_of("nightly_etl", "scheduled__2026-03-10")
        assert queued["state"] == "queued" and read_history(doc(queued)).height == 0

    def test_a_queued_run_with_a_start_date_has_not_run_either(self):
        # models/backfill.py creates a backfill run QUEUED with start_date=utcnow()
        assert read_history(doc(first_etl(state="queued"))).height == 0

    def test_a_run_marked_done_without_starting_is_not_read(self):
        assert read_history(doc(first_etl(start_date=None, end_date=None))).height == 0

    def test_a_failed_run_keeps_its_end(self):
        out = read_history(REST).filter(pl.col("status") == "failed")
        assert out.select("started_utc", "finished_utc").row(0) == (at("2026-03-07T07:30:03"), at("2026-03-07T07:35"))


def _scenario() -> calsim.Scenario:
    """The two DAGs' schedules as calsim models them (Airflow 3 runs a cron time in a gap an hour later)."""
    return calsim.Scenario("airflow", [
        calsim.Schedule("nightly_etl", "America/New_York", "2026-03-01T00:00", "30 2 * * *", gap="shift"),
        calsim.Schedule("daily_report", "UTC", "2026-03-01T00:00", "0 6 * * *")],
        "2026-03-05T00:00Z", "2026-03-11T00:00Z")


class TestReconcile:
    def test_reconcile_tells_the_story_of_the_dag_runs(self):
        store = calsim.LedgerStore()
        store.write(calsim.simulate(_scenario(), progress=False))
        out = store.reconcile("airflow", read_history(REST).drop("origin"), start="2026-03-05T00:00Z",
                              end="2026-03-11T00:00Z")
        got = {(sid, c): n for sid, c, n in out.group_by("schedule_id", "class").len().iter_rows()}
        # the backfill of 03-04 is outside the window; the manual re-run and the asset run are extra
        assert got == {("daily_report", "matched"): 6, ("nightly_etl", "matched"): 4, ("nightly_etl", "late"): 1,
                       ("nightly_etl", "missing"): 1, ("nightly_etl", "unexpected"): 1,
                       ("on_new_data", "unexpected"): 1}

    def test_a_dag_of_two_crons_gets_each_run_on_the_cron_that_fired_it(self):
        # from_airflow names a MultipleCronTriggerTimetable's crons nightly_etl:1 and :2; the runs know the DAG
        store = calsim.LedgerStore()
        store.write(calsim.simulate(calsim.Scenario("airflow", [
            calsim.Schedule("nightly_etl:1", "America/New_York", "2026-03-01T00:00", "30 2 * * *", gap="shift"),
            calsim.Schedule("nightly_etl:2", "America/New_York", "2026-03-01T00:00", "0 18 * * *")],
            "2026-03-05T00:00Z", "2026-03-11T00:00Z"), progress=False))
        history = read_history(REST).filter(pl.col("schedule_id") == "nightly_etl").drop("origin")
        out = store.reconcile("airflow", history, start="2026-03-05T00:00Z", end="2026-03-11T00:00Z")
        got = {(sid, c): n for sid, c, n in out.group_by("schedule_id", "class").len().iter_rows()}
        assert got == {("nightly_etl:1", "matched"): 4, ("nightly_etl:1", "late"): 1,
                       ("nightly_etl:1", "missing"): 1, ("nightly_etl:1", "unexpected"): 1,
                       ("nightly_etl:2", "missing"): 6}

    def test_calsim_reconcile_reads_the_airflow_history_by_content(self, tmp_path, capsys):
        db = tmp_path / "airflow.duckdb"
        with calsim.LedgerStore(str(db)) as store:
            store.write(calsim.simulate(_scenario(), progress=False))
        assert main(["reconcile", "airflow", str(REST), "--db", str(db), "--id", "nightly_etl"]) == 0
        out = capsys.readouterr().out
        assert "4 matched, 1 late, 0 wrong-instant, 1 missing, 1 extra" in out


class TestHostileInput:
    def test_a_page_of_a_larger_collection_is_refused_with_how_to_join_the_pages(self):
        page = json.dumps({"dag_runs": rest_runs()[:3], "total_entries": 15}) + "\n"
        with pytest.raises(InputError, match=r"^airflow dag runs: <history>: one page of 3 of 15 DAG runs "
                                             r"\(total_entries\); fetch every page .* "
                                             r"jq -s '\[\.\[\]\.dag_runs\[\]\]'"):
            read_history(page)

    def test_more_runs_than_max_rows_are_refused_before_a_run_is_read(self):
        with pytest.raises(InputError, match=r"^history: <history>: 15 DAG runs, over the limit of 3 rows"):
            read_history(REST.read_text(), max_rows=3)

    def test_a_document_over_the_document_cap_is_refused_unread(self, tmp_path):
        big = tmp_path / "runs.json"
        with open(big, "wb") as f:
            f.write(b'{"dag_runs": [')
            f.truncate((64 << 20) + 1)  # sparse: nothing past the head is ever read
        with pytest.raises(InputError, match=r"is 67,108,865 bytes, over the limit of 67,108,864 for a document"):
            read_history(big)

    def test_deep_nesting_is_refused(self):
        deep = '{"dag_runs": [{"conf": ' + "[" * 100_000 + "]" * 100_000 + "}]}\n"
        with pytest.raises(InputError, match=r"^airflow dag runs: <history>: JSON nested too deeply"):
            read_history(deep, kind="airflow")

    def test_a_number_of_5000_digits_is_refused(self):
        with pytest.raises(InputError, match=r"^airflow dag runs: <history>: cannot read the JSON \(Exceeds the limit "
                                             r"\(4300 digits\)"):
            read_history('{"dag_runs": [], "total_entries": ' + "9" * 5000 + "}\n")

    def test_not_json_is_refused(self):
        with pytest.raises(InputError, match=r"^airflow dag runs: <history>: not valid JSON"):
            read_history('{"dag_runs": [\n', kind="airflow")

    def test_an_object_that_is_no_dag_run_document_is_refused(self):
        with pytest.raises(InputError, match=r"expected the object GET /api/v2/dags/~/dagRuns returns .* got an "
                                             r"object without dag_runs"):
            read_history('{"items": []}\n', kind="airflow")

    @pytest.mark.parametrize(("changes", "message"), [
        ({"dag_id": 5}, r" \(scheduled__2026-03-05T07:30:00\+00:00\): dag_id: expected the DAG's id \(text, "
                        r"not empty\), got 5"),
        ({"dag_id": " "}, r"dag_id: expected the DAG's id \(text, not empty\), got ' '"),
        ({"dag_run_id": ["a"]}, r": dag_run_id: expected the run's id \(text\), got \['a'\]"),
        ({"state": "done"}, r"state: 'done' is not a DAG run state \(allowed: queued, running, success, failed\)"),
        ({"state": ["success"]}, r"state: \['success'\] is not a DAG run state"),
        ({"run_type": "cron"}, r"run_type: 'cron' is not a DAG run type \(allowed: backfill, scheduled, manual, "
                               r"operator_triggered, asset_triggered, asset_materialization\)"),
        ({"start_date": "soon"}, r"start_date: expected an RFC 3339 time such as '2026-03-09T06:30:00Z' "
                                 r"\(years 0001..9999\), got 'soon'"),
        ({"start_date": 1772695804}, r"start_date: expected an RFC 3339 time .*, got 1772695804"),
        ({"end_date": "2026-03-05T07:42:00"}, r"end_date: '2026-03-05T07:42:00' has no offset"),
        ({"run_after": "9999-12-31T23:59:59-01:00"}, r"run_after: '9999-12-31T23:59:59-01:00' is out of range"),
        ({"run_after": "2026-03-05T07:30:00Z" + " " * 100}, r"run_after: expected an RFC 3339 time"),
    ])
    def test_a_bad_field_names_the_item_the_field_the_value_and_what_is_allowed(self, changes, message):
        with pytest.raises(InputError, match=r"^airflow dag runs: <history> item 0.*" + message):
            read_history(doc(first_etl(**changes)))

    def test_an_item_that_is_not_an_object_is_named(self):
        with pytest.raises(InputError, match=r"^airflow dag runs: <history> item 1: expected a DAG run object, "
                                             r"got 'nightly_etl'"):
            read_history(json.dumps({"dag_runs": [first_etl(), "nightly_etl"]}) + "\n")

    @pytest.mark.parametrize(("value", "message"), [
        ({}, r"dag_runs: expected a list of DAG runs, got \{\}"),
        (None, r"dag_runs: expected a list of DAG runs, got None"),
    ])
    def test_dag_runs_that_is_not_a_list_is_refused(self, value, message):
        with pytest.raises(InputError, match=r"^airflow dag runs: <history>: " + message):
            read_history(json.dumps({"dag_runs": value}) + "\n")

    def test_total_entries_of_the_wrong_type_is_refused(self):
        with pytest.raises(InputError, match=r"total_entries: expected a whole number or null, got '15'"):
            read_history(json.dumps({"dag_runs": [], "total_entries": "15"}) + "\n")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=st.dictionaries(
    st.sampled_from(["dag_run_id", "run_id", "dag_id", "run_type", "state", "start_date", "end_date", "run_after",
                     "data_interval_end", "logical_date", "conf"]),
    st.none() | st.booleans() | st.integers() | st.text(max_size=30)
    | st.sampled_from(["scheduled", "manual", "backfill", "success", "queued", "running", "failed", "",
                       "2026-03-05T07:30:00Z", "2026-03-05T07:30:00", "0001-01-01T00:00:00+01:00"])
    | st.lists(st.integers(), max_size=2) | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    max_size=9),
    shape=st.sampled_from(["collection", "list", "one"]))
def test_fuzzed_dag_runs_only_raise_calsim_errors(run, shape):
    body = {"collection": {"dag_runs": [run]}, "list": [run], "one": run}[shape]
    try:
        out = read_history(json.dumps(body) + "\n", kind="airflow")
    except CalsimError:
        return
    assert dict(out.schema) == HISTORY_SCHEMA
