"""Airflow 3 DAG details (REST API, ``airflow dags details -o json``) to schedules with the airflow preset.

The fixtures are Airflow 3.3.2's own responses (``tools/capture_readers.py``); ``airflow-3.3.2-runs.json`` holds
the runs its real timetables create, which the imported schedules must give.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
import calsim.importers.airflow as reader
from calsim.errors import CalsimError, InputError, PolicyError, RuleError, ScheduleError
from calsim.importers import detect_format, detect_text, import_any
from calsim.importers.airflow import from_airflow
from calsim.presets import airflow as real_airflow
from messages import assert_clear
from test_fuzz_parsers import field_paths, only_calsim_errors, replaced

FIXTURES = Path(__file__).parents[1] / "fixtures" / "readers"
EXAMPLES = Path(__file__).parents[2] / "data" / "examples"
DETAILS = FIXTURES / "airflow-3.3.2-dag-details.json"
LIST = FIXTURES / "airflow-3.3.2-dags.json"
CLI = FIXTURES / "airflow-3.3.2-dags-details-cli.json"
RUNS = json.loads((FIXTURES / "airflow-3.3.2-runs.json").read_text())


def _details() -> list[dict]:
    return json.loads(DETAILS.read_text())


def _dag(dag_id: str) -> dict:
    return next(d for d in _details() if d["dag_id"] == dag_id)


def _one(**fields) -> str:
    return json.dumps({"dag_id": "d", "timezone": "UTC", **fields})


def _due(schedules, start: str, n: int) -> list[str]:
    f = calsim.expand(list(schedules), start, "2026-05-01T00:00Z", release="2026f").drop_nulls("due_utc")
    return sorted(t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in f["due_utc"].to_list())[:n]


# -- detection


@pytest.mark.parametrize("fixture", [DETAILS, LIST, CLI])
def test_airflow_exports_are_detected_by_content(tmp_path, fixture):
    misleading = tmp_path / "crontab"
    misleading.write_text(fixture.read_text())
    assert detect_format(misleading) == "airflow"
    assert [s.id for s in import_any(misleading)][0] == "nightly_utc"


def test_an_airflow_dag_run_list_is_not_taken_for_dag_details():
    assert detect_text('{"dag_runs": [{"dag_id": "x", "run_id": "r"}], "total_entries": 1}') != "airflow"


@pytest.mark.parametrize("example, kind", [
    ("backup.timer", "systemd"), ("calendar.ics", "ical"), ("cronjobs.yaml", "kubernetes"), ("crontab", "crontab"),
    ("fleet.toml", "fleet"), ("nightly.workflow.yml", "github"), ("schedule.eventbridge.json", "eventbridge"),
    ("schedule.temporal.json", "temporal"), ("schedules.cloudformation.yaml", "eventbridge"),
    ("schedules.tf", "eventbridge"),
])
def test_the_formats_read_before_are_still_detected_the_same(example, kind):
    assert detect_format(EXAMPLES / example) == kind


# -- the fixture: what is imported, what is refused


def _preset_refuses(timetable: str) -> PolicyError | None:
    """The preset's refusal of a timetable it does not model (yet), or None once it does."""
    try:
        real_airflow(timetable=timetable)
    except PolicyError as exc:
        return exc
    return None


# The data-interval timetables are refused by the preset until it models them; then they import, unchanged here.
DATA_INTERVAL = {"daily_report_interval": "cron_data_interval", "six_hour_interval": "delta_data_interval"}
IMPORTED = ["nightly_utc", "hourly", "daily_macro",
            *[d for d, tt in DATA_INTERVAL.items() if _preset_refuses(tt) is None],
            "twice_daily:1", "twice_daily:2", "weekly_paused", "nightly_or_data"]
REFUSED = ["nightly_ny", *[d for d, tt in DATA_INTERVAL.items() if _preset_refuses(tt) is not None],
           "on_new_data", "manual_only"]


def test_details_import_the_time_schedules_and_refuse_the_others_per_dag():
    got = from_airflow(DETAILS)
    assert [s.id for s in got] == IMPORTED
    assert [r.what for r in got.refused] == [f"DAG {d}" for d in REFUSED]
    assert all(got.presets[s.id].name == "airflow" for s in got)
    for r in got.refused:
        assert_clear(r.error)
        assert r.reason.startswith(f"airflow: {DETAILS.name} item {r.source.item} ")


@pytest.mark.parametrize("dag_id", ["nightly_utc", "hourly", "daily_macro", "weekly_paused", "nightly_or_data"])
def test_an_imported_dag_runs_when_the_real_timetable_runs_it(dag_id):
    got = from_airflow(DETAILS)
    assert _due([got.by_id(dag_id)], "2026-03-06T00:00Z", 6) == RUNS[dag_id]


@pytest.mark.parametrize("dag_id", [d for d in IMPORTED if d in RUNS])
def test_a_simulated_dag_runs_when_the_real_timetable_runs_it(dag_id):
    """Through the engine, so a data-interval DAG's runs are due at its intervals' ends, as Airflow's are."""
    s = from_airflow(DETAILS).by_id(dag_id)
    frame = calsim.simulate(calsim.Scenario("af", [s], "2026-03-06T00:00Z", "2026-04-20T00:00Z",
                                            release="2026f")).frame
    done = sorted(t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in frame.filter(frame["state"] == "done")["due_utc"])
    assert done[:6] == RUNS[dag_id]


def test_a_multiple_cron_timetable_gives_one_schedule_per_cron_whose_union_is_airflows_runs():
    got = from_airflow(DETAILS)
    both = [got.by_id("twice_daily:1"), got.by_id("twice_daily:2")]
    assert _due(both, "2026-03-06T00:00Z", 6) == RUNS["twice_daily"]
    assert "one run for a time several crons give" in " ".join(both[0].source.notes)


def test_a_dag_in_its_own_zone_is_refused_because_airflow_reports_the_servers_zone():
    refused = next(r for r in from_airflow(DETAILS).refused if r.what == "DAG nightly_ny")
    assert isinstance(refused.error, ScheduleError)
    assert "timezone: the next run 2026-03-06T07:30:00Z (next_dagrun_run_after) is not a time '30 2 * * *' gives " \
           "in 'UTC'" in refused.reason
    assert "[core] default_timezone" in refused.reason


def test_a_dag_whose_zone_is_written_in_runs_as_airflow_does_across_the_spring_change():
    dag = _dag("nightly_ny") | {"timezone": "America/New_York"}
    got = from_airflow(json.dumps(dag))
    assert got[0].zone == "America/New_York" and (got[0].gap, got[0].fold) == real_airflow().dst_for(got[0])
    assert _due(got, "2026-03-06T00:00Z", 6) == RUNS["nightly_ny"]  # 02:30 on 03-08 runs at 03:30 EDT = 07:30Z


def test_a_serialized_timetable_gives_the_zone_and_class():
    dag = _dag("nightly_ny") | {"timetable": {
        "__type": "airflow.timetables.trigger.CronTriggerTimetable",
        "__var": {"expression": "30 2 * * *", "timezone": "America/New_York", "interval": 0.0}}}
    got = from_airflow(json.dumps(dag))
    assert got[0].zone == "America/New_York"
    assert "timetable: CronTriggerTimetable, as the export says" in got[0].source.notes


# -- fields onto the preset and the schedule


def test_catchup_and_max_active_runs_map_onto_the_preset():
    got = from_airflow(DETAILS)
    nightly, hourly = got.by_id("nightly_utc"), got.by_id("hourly")
    assert nightly.policy == real_airflow(catchup=True, max_active_runs=3).apply(nightly).policy
    assert nightly.policy.max_active == 3 and hourly.policy.max_active == 16
    assert hourly.policy.catchup == real_airflow(timetable="delta_trigger", catchup=False).policy.catchup
    assert dict(got.presets["nightly_utc"].settings)["catchup"] is True
    assert dict(got.presets["nightly_utc"].settings)["timetable"] == "cron_trigger"


def test_a_timedelta_summary_becomes_an_elapsed_every_anchored_at_start_date():
    s = from_airflow(DETAILS).by_id("hourly")
    assert s.kind == "every" and s.rule.period_us == 3600 * 10**6 and s.rule.anchor == "2026-03-06T00:00:00Z"
    assert dict(from_airflow(DETAILS).presets["hourly"].settings)["timetable"] == "delta_trigger"


def test_a_cron_macro_summary_and_start_date_set_rule_and_start():
    s = from_airflow(_one(timetable_summary="@quarterly", start_date="2026-01-01T00:00:00Z"))[0]
    assert (s.rule, s.start) == ("0 0 1 */3 *", "2026-01-01T00:00:00Z")


def test_end_date_bounds_the_runs_and_a_run_at_end_date_still_runs():
    got = from_airflow(_one(timetable_summary="0 0 * * *", start_date="2026-03-01T00:00:00Z",
                            end_date="2026-03-03T00:00:00Z"))
    assert _due(got, "2026-03-01T00:00Z", 10) == ["2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z",
                                                  "2026-03-03T00:00:00Z"]


def test_an_end_date_before_the_start_date_is_refused():
    with pytest.raises(ScheduleError, match=r"end_date 2026-01-01T00:00:00Z is before start_date"):
        from_airflow(_one(timetable_summary="0 0 * * *", start_date="2026-03-01T00:00:00Z",
                          end_date="2026-01-01T00:00:00Z"))


def test_a_paused_dag_is_imported_suspended_with_a_note():
    got = from_airflow(DETAILS)
    assert got.presets["weekly_paused"].suspended and not got.presets["nightly_utc"].suspended
    assert any(n.startswith("is_paused: true") for n in got.by_id("weekly_paused").source.notes)


def test_a_stale_dag_is_skipped_not_refused():
    got = from_airflow(json.dumps([json.loads(_one(timetable_summary="0 1 * * *")),
                                   json.loads(_one(timetable_summary="0 2 * * *")) | {"dag_id": "gone",
                                                                                       "is_stale": True}]))
    assert [s.id for s in got] == ["d"] and [k.what for k in got.skipped] == ["DAG gone"] and not got.refused


def test_the_cli_shape_reads_its_stringified_values_and_notes_what_it_lacks():
    got = from_airflow(CLI)
    s = got[0]
    assert (s.id, s.zone, s.policy.max_active) == ("nightly_utc", "UTC", 3)
    assert dict(got.presets[s.id].settings)["catchup"] is False
    notes = " ".join(s.source.notes)
    assert "catchup absent: False" in notes and "no timezone in the export" in notes and "no start_date" in notes


def test_the_list_shape_uses_zone_for_the_server_zone():
    got = from_airflow(LIST, zone="UTC")
    assert got.by_id("nightly_utc").zone == "UTC"
    assert "DAG nightly_ny" in [r.what for r in got.refused]  # its next run still tells its zone is not UTC


def test_an_asset_or_time_schedule_imports_its_time_part_with_a_note():
    s = from_airflow(DETAILS).by_id("nightly_or_data")
    assert s.rule == "0 1 * * *" and any(n.startswith("AssetOrTimeSchedule") for n in s.source.notes)


def test_a_fixed_offset_zone_reads_as_an_etc_gmt_zone():
    assert from_airflow(_one(timezone="+02:00", timetable_summary="0 3 * * *"))[0].zone == "Etc/GMT-2"
    with pytest.raises(ScheduleError, match=r"timezone: '\+05:30': a fixed offset calsim reads only in whole hours"):
        from_airflow(_one(timezone="+05:30", timetable_summary="0 3 * * *"))


def test_relativedelta_of_days_is_elapsed_and_of_months_is_refused():
    s = from_airflow(_one(timetable_summary="relativedelta(days=+1, hours=+6)", start_date="2026-01-01T00:00:00Z"))[0]
    assert s.rule.period_us == 30 * 3600 * 10**6
    with pytest.raises(RuleError, match=r"'months=\+1' is not a fixed length of time"):
        from_airflow(_one(timetable_summary="relativedelta(months=+1)"))


# -- which timetable: class, data_intervals=, the next run's data interval


@pytest.mark.parametrize("dag_id", list(DATA_INTERVAL))
def test_the_next_runs_data_interval_tells_a_data_interval_timetable_which_the_preset_gets(dag_id):
    got = from_airflow(DETAILS)
    refusal = _preset_refuses(DATA_INTERVAL[dag_id])
    if refusal is None:
        assert dict(got.presets[dag_id].settings)["timetable"] == DATA_INTERVAL[dag_id]
        assert any(n.startswith("timetable: data interval, because the next run's data interval is not empty")
                   for n in got.by_id(dag_id).source.notes)
    else:  # refused with the preset's own message
        (r,) = [r for r in got.refused if r.what == f"DAG {dag_id}"]
        assert isinstance(r.error, PolicyError) and r.reason.endswith(str(refusal))


def test_the_reader_passes_the_real_timetable_so_a_lifted_refusal_imports_unchanged(monkeypatch):
    asked = []

    def preset(**kw):
        asked.append(kw)
        return real_airflow(**(kw | {"timetable": kw["timetable"].replace("data_interval", "trigger")}))

    monkeypatch.setattr(reader, "airflow", preset)
    got = from_airflow(DETAILS)
    assert {"daily_report_interval", "six_hour_interval"} <= {s.id for s in got}
    assert {a["timetable"] for a in asked} == {"cron_trigger", "delta_trigger", "cron_data_interval",
                                               "delta_data_interval"}


def test_a_data_interval_dags_end_date_keeps_the_run_whose_interval_starts_there():
    end = dt.datetime(2026, 3, 3, tzinfo=dt.timezone.utc)
    assert reader._effective_to(end, "0 0 * * *", "cron_data_interval", "UTC") == end + dt.timedelta(days=1,
                                                                                                    microseconds=1)
    assert reader._effective_to(end, 3600 * 10**6, "delta_data_interval", "UTC") == end + dt.timedelta(
        hours=1, microseconds=1)


def test_timetable_type_and_data_intervals_decide_before_the_next_run(monkeypatch):
    monkeypatch.setattr(reader, "airflow", lambda **kw: real_airflow(**(kw | {"timetable": "cron_trigger"})) if
                        kw["timetable"].startswith("cron") else real_airflow(**kw))
    plain = json.loads(_one(timetable_summary="0 4 * * *"))
    said = from_airflow(json.dumps(plain | {"timetable_type": "CronDataIntervalTimetable"}))[0]
    assert "timetable: CronDataIntervalTimetable, as the export says" in said.source.notes
    forced = from_airflow(json.dumps(plain), data_intervals=True)[0]
    assert "timetable: data interval, as data_intervals=True says" in forced.source.notes
    default = from_airflow(json.dumps(plain))[0]
    assert any(n.startswith("timetable: trigger, Airflow 3's default") for n in default.source.notes)


def test_a_timetable_class_that_reads_another_summary_is_refused():
    with pytest.raises(ScheduleError, match=r"timetable_type 'DeltaTriggerTimetable' does not read a cron summary"):
        from_airflow(_one(timetable_summary="0 4 * * *", timetable_type="DeltaTriggerTimetable"))


# -- refusals


@pytest.mark.parametrize("summary, error, says", [
    (None, ScheduleError, "schedule=None, the DAG runs only when triggered"),
    ("None", ScheduleError, "schedule=None"),
    ("@once", ScheduleError, "OnceTimetable"),
    ("@continuous", ScheduleError, "ContinuousTimetable"),
    ("Asset", ScheduleError, "asset-triggered"),
    ("Partitioned Asset", ScheduleError, "asset-triggered"),
    ("3 events", RuleError, "an events or custom timetable calsim cannot read"),
    ("MyTimetable", RuleError, "an events or custom timetable"),
    ("61 * * * *", RuleError, "minute value '61' is out of range"),
    ("0 0 * * * *", RuleError, "not a cron expression of 5 fields"),
    ("-1 day, 23:00:00", RuleError, "must be positive"),
    ("0:61:00", RuleError, "minutes and seconds 0..59"),
])
def test_a_dag_without_a_time_schedule_or_with_a_bad_one_is_refused_naming_the_field(summary, error, says):
    got = from_airflow(json.dumps([json.loads(_one(timetable_summary="0 1 * * *")) | {"dag_id": "ok"},
                                   json.loads(_one(timetable_summary=summary))]))
    assert [s.id for s in got] == ["ok"]
    (r,) = got.refused
    assert isinstance(r.error, error) and "item 2 'd': timetable_summary" in r.reason and says in r.reason
    assert_clear(r.error)


def test_a_custom_timetable_class_is_refused():
    with pytest.raises(ScheduleError, match=r"timetable_type: 'plugins.MyTimetable' is an events or custom"):
        from_airflow(_one(timetable_summary="0 1 * * *", timetable_type="plugins.MyTimetable"))


@pytest.mark.parametrize("field, value, says", [
    ("catchup", "yes", "catchup: expected true or false, got str 'yes'"),
    ("max_active_runs", 0, "max_active_runs: expected a whole number 1..2147483648, got int 0"),
    ("max_active_runs", "16 runs", "max_active_runs: expected a whole number"),
    ("start_date", "tomorrow", "start_date: str 'tomorrow' is not an ISO 8601 date and time"),
    ("start_date", "2026-01-01T00:00:00", "start_date: str '2026-01-01T00:00:00' has no UTC offset"),
    ("timezone", "Mars/Olympus", "timezone: unknown zone 'Mars/Olympus'"),
    ("is_paused", 1, "is_paused: expected true or false"),
    ("dag_id", 7, "dag_id: expected a non-empty string, got int 7"),
])
def test_a_field_of_the_wrong_type_or_value_refuses_its_dag_naming_field_and_value(field, value, says):
    got = from_airflow(json.dumps([json.loads(_one(timetable_summary="0 1 * * *")) | {"dag_id": "ok"},
                                   json.loads(_one(timetable_summary="0 2 * * *")) | {field: value}]))
    assert [s.id for s in got] == ["ok"] and says in got.refused[0].reason
    assert_clear(got.refused[0].error)


def test_a_dag_id_given_twice_is_refused_the_second_time():
    got = from_airflow(json.dumps([json.loads(_one(timetable_summary="0 1 * * *"))] * 2))
    assert len(got) == 1 and "dag_id: 'd' is given twice (first as item 1)" in got.refused[0].reason


def test_strict_raises_the_first_refusal():
    with pytest.raises(ScheduleError, match=r"item 2 'nightly_ny': timezone"):
        from_airflow(DETAILS, strict=True)
    with pytest.raises(ScheduleError, match=r"item 2 'nightly_ny'"):
        import_any(DETAILS, strict=True)


def test_a_file_where_every_dag_is_refused_raises_the_first_naming_how_many_more():
    dags = [_dag("manual_only"), _dag("on_new_data")]
    with pytest.raises(ScheduleError, match=r"'manual_only'.*\(and 1 more item\(s\) refused; nothing imported\)"):
        from_airflow(json.dumps(dags))


def test_load_warns_once_per_refused_dag():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = calsim.load(DETAILS)
    assert [s.id for s in loaded] == IMPORTED
    assert [str(w.message).split("'")[1] for w in caught] == REFUSED


@pytest.mark.parametrize("doc, says", [
    ("{}", "no DAG: expected a DAG object with 'dag_id'"),
    ("[]", "no DAG in the file"),
    ('{"dags": 3}', "dags: expected a list of DAG objects, got int 3"),
    ("3", "expected a DAG object or a list of them, got int 3"),
    ("[1, 2]", "item 1: expected a DAG object, got int 1"),
    ("{not json", "not valid JSON"),
])
def test_a_file_that_is_not_dag_details_is_an_input_error(doc, says):
    with pytest.raises(InputError, match=re.escape(says)) as err:
        from_airflow(doc + "\n")
    assert_clear(err.value)


# -- hostile input: a one-line CalsimError, never a crash or a hang


@pytest.mark.hostile
@pytest.mark.parametrize("doc", [
    "[" * 100_000 + "]" * 100_000,
    '{"dag_id": "d", "timetable_summary": "' + "0 " * 500_000 + '"}',
    '{"dag_id": "d", "timetable_summary": "' + ", ".join(["0 1 * * *"] * 5000) + '"}',
    '{"dag_id": "d", "timetable_summary": "999999999 days, 0:00:00"}',
    '{"dag_id": "d", "timetable_summary": "0 1 * * *", "max_active_runs": ' + "9" * 5000 + "}",
    '{"dag_id": "d", "timetable_summary": "0 1 * * *", "start_date": "' + "2" * 100_000 + '"}',
    '{"dag_id": "' + "x" * 1_000_000 + '", "timetable_summary": {"a": [[[[]]]]}}',
])
def test_hostile_details_give_a_one_line_calsim_error(doc):
    with pytest.raises(CalsimError) as err:
        from_airflow(doc + "\n", strict=True)
    assert_clear(err.value)
    assert len(str(err.value)) < 600


PATHS = list(field_paths(_details()[:3], items=None))
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=True)
                      | st.text(max_size=20) | st.sampled_from(["0 2 * * *", "1:00:00", "@daily", "Asset", "+01:00",
                                                               "2026-03-08 02:30:00+00:00", "True", "None"]),
                      lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
                      max_leaves=6)


@pytest.mark.fuzz
@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(where=st.sampled_from(PATHS), value=VALUES)
def test_any_value_in_any_field_gives_only_calsim_errors(where, value):
    only_calsim_errors(from_airflow, json.dumps(replaced(_details()[:3], where, value)) + "\n")


def test_the_fixture_is_not_changed_by_reading_it():
    before = copy.deepcopy(_details())
    from_airflow(DETAILS)
    assert _details() == before
