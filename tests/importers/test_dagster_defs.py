"""Dagster schedules (``dg list defs --json``, GraphQL ``schedulesOrError``) to schedules with the dagster preset.

The fixtures hold what Dagster 1.13.29's own ``ScheduleDefinition``s give in each shape, and their first ticks from
Dagster's ``cron_string_iterator`` (``tools/capture_readers.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.errors import CalsimError, InputError, RuleError, ScheduleError
from calsim.importers import detect_format, detect_text, import_any
from calsim.importers.dagster import from_dagster
from calsim.presets import dagster
from messages import assert_clear
from test_fuzz_parsers import field_paths, only_calsim_errors, replaced

FIXTURES = Path(__file__).parents[1] / "fixtures" / "readers"
DEFS = FIXTURES / "dagster-1.13.29-defs.json"
GRAPHQL = FIXTURES / "dagster-1.13.29-graphql.json"
TICKS = json.loads((FIXTURES / "dagster-1.13.29-ticks.json").read_text())


def _defs(*schedules: dict) -> str:
    return json.dumps({"assets": [], "jobs": [], "schedules": list(schedules), "sensors": []})


def _gql(*results: dict) -> str:
    return json.dumps({"data": {"schedulesOrError": {"__typename": "Schedules", "results": list(results)}}})


def _due(schedules, n: int) -> list[str]:
    f = calsim.expand(list(schedules), "2026-03-06T00:00Z", "2026-04-01T00:00Z", release="2026f")
    f = f.drop_nulls("due_utc")
    return sorted(t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in f["due_utc"].to_list())[:n]


# -- detection


@pytest.mark.parametrize("fixture", [DEFS, GRAPHQL])
def test_dagster_exports_are_detected_by_content(tmp_path, fixture):
    misleading = tmp_path / "dags.json"
    misleading.write_text(fixture.read_text())
    assert detect_format(misleading) == "dagster"
    assert "daily_refresh" in [s.id for s in import_any(misleading)]


def test_dagster_json_that_mentions_an_interval_is_not_temporal():
    assert detect_text('{"schedules": [{"name": "a", "cron_schedule": "0 1 * * *", "interval": 1}]}') == "dagster"


# -- the two shapes


def test_dg_list_defs_gives_one_schedule_per_cron_string_in_utc_with_the_status_unknown():
    got = from_dagster(DEFS)
    assert [(s.id, s.zone, s.rule) for s in got] == [
        ("berlin_morning", "UTC", "30 6 * * 1-5"), ("daily_refresh", "UTC", "0 2 * * *"),
        ("every_15_minutes", "UTC", "*/15 * * * *"), ("twice_a_day:1", "UTC", "0 9 * * *"),
        ("twice_a_day:2", "UTC", "0 17 * * *")]
    notes = " ".join(got[0].source.notes)
    assert "no execution_timezone in the export" in notes and "status not in the export" in notes
    assert not any(p.suspended for p in got.presets.values())


def test_graphql_gives_the_zone_and_the_status():
    got = from_dagster(GRAPHQL)
    assert [(s.id, s.zone) for s in got] == [("berlin_morning", "Europe/Berlin"), ("daily_refresh", "UTC"),
                                             ("every_15_minutes", "UTC"), ("twice_a_day:1", "America/New_York"),
                                             ("twice_a_day:2", "America/New_York")]
    assert [got.presets[s.id].suspended for s in got] == [False, True, True, False, False]
    assert any(n.startswith("status STOPPED") for n in got.by_id("daily_refresh").source.notes)


@pytest.mark.parametrize("name", list(TICKS))
def test_a_schedule_ticks_when_dagsters_cron_iterator_does(name):
    got = from_dagster(GRAPHQL)
    crons = TICKS[name]
    ids = [name] if len(crons) == 1 else [f"{name}:{n}" for n in range(1, len(crons) + 1)]
    for sid, ticks in zip(ids, crons.values()):
        assert _due([got.by_id(sid)], 5) == ticks


def test_every_schedule_gets_the_dagster_preset():
    got = from_dagster(GRAPHQL)
    s = got.by_id("berlin_morning")
    preset = dagster()
    assert got.presets[s.id] == preset and (s.gap, s.fold) == preset.dst_for(s)
    assert s.policy.catchup == preset.policy.catchup
    assert dict(from_dagster(DEFS, max_catchup_runs=3).presets["daily_refresh"].settings)["max_catchup_runs"] == 3


def test_a_list_cron_schedule_is_read_from_each_shape_of_it():
    for value in ("['0 9 * * *', '0 17 * * *']", '["0 9 * * *", "0 17 * * *"]', "0 9 * * *, 0 17 * * *"):
        got = from_dagster(_defs({"name": "x", "cron_schedule": value}))
        assert [s.rule for s in got] == ["0 9 * * *", "0 17 * * *"]
    assert [s.rule for s in from_dagster(_defs({"name": "x", "cron_schedule": ["0 9 * * *"]}))] == ["0 9 * * *"]
    assert "union of its strings" in " ".join(from_dagster(GRAPHQL).by_id("twice_a_day:1").source.notes)


def test_an_execution_timezone_and_default_status_in_a_defs_entry_are_read():
    got = from_dagster(_defs({"name": "x", "cron_schedule": "0 9 * * *", "execution_timezone": "Asia/Tokyo",
                              "default_status": "STOPPED"}))
    assert got[0].zone == "Asia/Tokyo" and got.presets["x"].suspended


def test_zone_is_the_zone_of_schedules_that_name_none():
    assert from_dagster(DEFS, zone="Europe/Paris")[0].zone == "Europe/Paris"


def test_a_repository_query_is_read_too():
    schedule = {"name": "r", "cronSchedule": "0 3 * * *", "executionTimezone": "UTC",
                "scheduleState": {"status": "RUNNING"}}
    doc = {"data": {"repositoryOrError": {"__typename": "Repository", "schedules": [schedule]}}}
    assert [s.id for s in from_dagster(json.dumps(doc))] == ["r"]


# -- refusals


@pytest.mark.parametrize("entry, error, says", [
    ({"name": "x", "cron_schedule": "61 * * * *"}, RuleError, "cron_schedule: minute value '61' is out of range"),
    ({"name": "x", "cron_schedule": "0 0 30 2 1"}, RuleError, "the 30th of February never occurs"),
    ({"name": "x", "cron_schedule": "0 0 * * * *"}, RuleError, "expected 5 fields"),
    ({"name": "x", "cron_schedule": 5}, RuleError, "cron_schedule: expected a cron string or a list of them"),
    ({"name": "x", "cron_schedule": []}, RuleError, "0 cron strings (allowed 1..100)"),
    ({"name": "x", "cron_schedule": "['0 9 * * *'"}, RuleError, "is not a list of cron strings"),
    ({"name": "x", "cron_schedule": "0 9 * * *", "execution_timezone": "Mars/Base"}, CalsimError,
     "execution_timezone: unknown zone 'Mars/Base'"),
    ({"name": "x", "cron_schedule": "0 9 * * *", "default_status": "PAUSED"}, ScheduleError,
     "default_status: str 'PAUSED' is not RUNNING or STOPPED"),
    ({"cron_schedule": "0 9 * * *"}, InputError, "name: expected a non-empty string"),
    ("daily", InputError, "expected a schedule object, got str 'daily'"),
])
def test_a_schedule_that_cannot_be_read_is_refused_alone_naming_field_and_value(entry, error, says):
    got = from_dagster(_defs(entry, {"name": "ok", "cron_schedule": "0 1 * * *"}))
    assert [s.id for s in got] == ["ok"]
    (r,) = got.refused
    assert isinstance(r.error, error) and says in r.reason and r.reason.startswith("dagster: <dagster text> ")
    assert_clear(r.error)


def test_one_bad_string_of_a_list_refuses_that_string_only():
    got = from_dagster(_defs({"name": "x", "cron_schedule": ["0 9 * * *", "0 99 * * *"]}))
    assert [s.id for s in got] == ["x:1"] and got.refused[0].what == "x:2"
    assert "schedules[0] cron[1] 'x'" in got.refused[0].reason


def test_a_schedule_name_given_twice_is_refused_the_second_time():
    got = from_dagster(_defs({"name": "a", "cron_schedule": "0 1 * * *"}, {"name": "a", "cron_schedule": "0 2 * * *"}))
    assert len(got) == 1 and "name: 'a' is given twice (first schedules[0])" in got.refused[0].reason


def test_strict_raises_the_first_refused_schedule():
    with pytest.raises(RuleError, match=r"schedules\[0\] 'x': cron_schedule"):
        from_dagster(_defs({"name": "x", "cron_schedule": "61 * * * *"}, {"name": "ok", "cron_schedule": "0 1 * * *"}),
                     strict=True)


@pytest.mark.parametrize("doc, says", [
    ('{"errors": [{"message": "Cannot query field"}]}', "errors: the GraphQL query failed: str 'Cannot query field'"),
    ('{"data": {"schedulesOrError": {"__typename": "RepositoryNotFoundError", "message": "no repo"}}}',
     "schedulesOrError: str 'RepositoryNotFoundError': str 'no repo'"),
    ('{"assets": [], "schedules": []}', "no schedule in the file"),
    ('{"assets": []}', "no schedules: expected dg list defs --json output"),
    ('{"schedules": 3}', "schedules: expected a list of schedules, got int 3"),
    ("[", "not valid JSON"),
])
def test_a_file_without_readable_schedules_or_with_a_graphql_error_is_an_input_error(doc, says):
    with pytest.raises(InputError, match=re.escape(says)) as err:
        from_dagster(doc + "\n")
    assert_clear(err.value)


# -- hostile input


@pytest.mark.hostile
@pytest.mark.parametrize("doc", [
    "[" * 100_000 + "]" * 100_000,
    _defs({"name": "x", "cron_schedule": "[" + ", ".join(["'0 1 * * *'"] * 100_000) + "]"}),
    _defs({"name": "x", "cron_schedule": "['" + "\\\\" * 100_000 + "']"}),
    _defs({"name": "x", "cron_schedule": ", ".join(["1"] * 200_000)}),
    _defs({"name": "x" * 1_000_000, "cron_schedule": {"a": [[[]]]}}),
    _gql({"name": "x", "cronSchedule": "0 1 * * *", "scheduleState": {"status": ["RUNNING"] * 100_000}}),
])
def test_hostile_exports_give_a_one_line_calsim_error(doc):
    with pytest.raises(CalsimError) as err:
        from_dagster(doc + "\n", strict=True)
    assert_clear(err.value)
    assert len(str(err.value)) < 600


DATA = json.loads(GRAPHQL.read_text())
PATHS = list(field_paths(DATA, items=None))
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=True)
                      | st.text(max_size=20) | st.sampled_from(["0 2 * * *", "['0 1 * * *', 'x']", "STOPPED",
                                                               "Europe/Berlin", "Schedules", "PythonError"]),
                      lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
                      max_leaves=6)


@pytest.mark.fuzz
@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(where=st.sampled_from(PATHS), value=VALUES)
def test_any_value_in_any_field_gives_only_calsim_errors(where, value):
    only_calsim_errors(from_dagster, json.dumps(replaced(DATA, where, value)) + "\n")
