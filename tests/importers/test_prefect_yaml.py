"""``prefect.yaml`` deployment schedules to schedules with the prefect preset.

``prefect.yaml`` is hand-written; ``prefect-3.9.1-prefect.yaml.json`` is what Prefect 3.9.1's own deploy code makes
of each entry and the first dates its server schedules give (``tools/capture_readers.py``).
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
import calsim.importers.prefect as reader
from calsim.errors import CalsimError, InputError, PolicyError, RuleError, ScheduleError
from calsim.importers import detect_format, detect_text, import_any
from calsim.importers.prefect import from_prefect
from calsim.presets import prefect as real_prefect
from messages import assert_clear
from test_fuzz_parsers import field_paths, only_calsim_errors, replaced

FIXTURES = Path(__file__).parents[1] / "fixtures" / "readers"
EXAMPLES = Path(__file__).parents[2] / "data" / "examples"
PREFECT_YAML = FIXTURES / "prefect.yaml"
ORACLE = json.loads((FIXTURES / "prefect-3.9.1-prefect.yaml.json").read_text())


def _yaml(text: str):
    return from_prefect(textwrap.dedent(text).lstrip())


def _one(entry: str, **dep) -> str:
    extra = "".join(f"    {k}: {v}\n" for k, v in dep.items())
    return f"deployments:\n  - name: job\n    entrypoint: flows/x.py:x\n{extra}    schedules:\n      - {entry}\n"


def _due(schedules, n: int) -> list[str]:
    f = calsim.expand(list(schedules), "2026-03-06T00:00Z", "2026-09-01T00:00Z", release="2026f")
    f = f.drop_nulls("due_utc")
    return sorted(t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in f["due_utc"].to_list())[:n]


def _interval_refusal() -> PolicyError | None:
    try:
        real_prefect(kind="interval")
    except PolicyError as exc:
        return exc
    return None


# -- detection


def test_a_prefect_yaml_is_detected_by_content(tmp_path):
    misleading = tmp_path / "workflow.yml"
    misleading.write_text(PREFECT_YAML.read_text())
    assert detect_format(misleading) == "prefect"
    assert "nightly-report:1" in [s.id for s in import_any(misleading)]


@pytest.mark.parametrize("example, kind", [("nightly.workflow.yml", "github"), ("cronjobs.yaml", "kubernetes"),
                                           ("schedules.cloudformation.yaml", "eventbridge")])
def test_the_other_yaml_formats_are_still_detected_the_same(example, kind):
    assert detect_format(EXAMPLES / example) == kind


def test_deployments_below_the_top_level_is_not_a_prefect_yaml():
    assert detect_text("apiVersion: v1\nkind: ConfigMap\ndata:\n  deployments: |\n    x\n") == "kubernetes"


# -- the fixture, beside what Prefect makes of it


def test_the_fixture_imports_every_entry_prefect_accepts_and_refuses_every_one_it_refuses():
    got = from_prefect(PREFECT_YAML)
    interval_imported = _interval_refusal() is None
    intervals = ["hourly-sync", "daily-at-nine"]
    assert [s.id for s in got] == ["nightly-report:1", "nightly-report:2", "first-monday",
                                   *(intervals[:1] if interval_imported else []), "month-end", "legacy-quarter-hour",
                                   *(intervals[1:] if interval_imported else [])]
    assert [r.what for r in got.refused] == [*([] if interval_imported else intervals[:1]), "broken:1", "broken:2",
                                             "broken:3", *([] if interval_imported else intervals[1:])]
    prefect_refused = [f"{d['name']}:{k + 1}" for d in ORACLE for k, s in enumerate(d["schedules"]) if "error" in s]
    assert prefect_refused == ["broken:1", "broken:2", "broken:3"]
    assert [k.what for k in got.skipped] == ["deployment on-demand"] and ORACLE[5]["schedules"] == []
    for r in got.refused:
        assert_clear(r.error)


@pytest.mark.parametrize("sid, deployment, k", [("nightly-report:1", 0, 0), ("nightly-report:2", 0, 1),
                                                ("first-monday", 1, 0), ("month-end", 3, 0),
                                                ("legacy-quarter-hour", 4, 0)])
def test_a_cron_or_rrule_entry_fires_when_prefects_server_schedule_does(sid, deployment, k):
    got = from_prefect(PREFECT_YAML).by_id(sid)
    oracle = ORACLE[deployment]["schedules"][k]
    assert got.zone == (oracle["schedule"]["timezone"] or "UTC")
    assert _due([got], 5) == oracle["dates_utc"]


def test_an_interval_entry_goes_to_the_preset_as_kind_interval_with_its_anchor(monkeypatch):
    asked = []

    def preset(**kw):
        asked.append(kw["kind"])
        return real_prefect(kind="cron" if kw["kind"] == "interval" else kw["kind"])

    monkeypatch.setattr(reader, "prefect", preset)
    got = from_prefect(PREFECT_YAML).by_id("hourly-sync")
    assert "interval" in asked
    assert (got.kind, got.rule.period_us, got.rule.anchor, got.zone) == ("every", 3600 * 10**6,
                                                                          "2026-01-01T00:15:00Z", "UTC")
    assert _due([got], 5) == ORACLE[2]["schedules"][0]["dates_utc"]


@pytest.mark.parametrize("sid, deployment", [("hourly-sync", 2), ("daily-at-nine", 7)])
def test_an_interval_entry_fires_when_prefects_server_schedule_does_once_the_preset_models_it(sid, deployment):
    got = from_prefect(PREFECT_YAML)
    oracle = ORACLE[deployment]["schedules"][0]
    if _interval_refusal() is not None:  # refused, with the preset's message (the test below)
        assert sid in [r.what for r in got.refused]
        return
    s = got.by_id(sid)
    assert (s.zone, s.rule.anchor) == (oracle["schedule"]["timezone"], oracle["schedule"]["anchor_date"])
    assert _due([s], 5) == oracle["dates_utc"]  # a daily interval keeps 09:00 New York across the change


def test_an_interval_entry_is_refused_with_the_presets_message_until_it_models_intervals():
    refusal = _interval_refusal()
    got = from_prefect(PREFECT_YAML)
    if refusal is None:
        assert got.presets["hourly-sync"].settings[0] == ("kind", "interval")
    else:
        (r,) = [r for r in got.refused if r.what == "hourly-sync"]
        assert isinstance(r.error, PolicyError) and r.reason.endswith(str(refusal))
        assert r.reason.startswith("prefect: prefect.yaml deployments[2].schedules[0] (line 42): kind:")


# -- fields onto the preset and the schedule


def test_each_kind_gets_the_presets_dst_policies():
    got = from_prefect(PREFECT_YAML)
    cron, rrule = got.by_id("nightly-report:1"), got.by_id("month-end")
    assert (cron.gap, rrule.gap) == (real_prefect(kind="cron").dst_for(cron)[0], real_prefect(kind="rrule").gap)
    assert dict(got.presets["month-end"].settings)["kind"] == "rrule"


def test_several_schedules_number_their_ids_and_one_keeps_the_deployment_name():
    got = from_prefect(PREFECT_YAML)
    assert got.by_id("nightly-report:2").rule == "0 9-17 * * 1-5"  # through a YAML alias of definitions:
    assert got.by_id("first-monday").source.line == 35  # its "- cron:" line


def test_day_or_false_reads_as_both_day_fields_required():
    s = from_prefect(PREFECT_YAML).by_id("first-monday")
    assert s.rule == "FREQ=DAILY;BYMONTHDAY=1,2,3,4,5,6,7;BYDAY=MO;BYHOUR=6;BYMINUTE=0;BYSECOND=0"
    assert any(n.startswith("day_or: false") for n in s.source.notes)
    assert _yaml(_one("cron: '0 6 * * 1'\n        day_or: false"))[0].rule == "0 6 * * 1"  # one day field: cron


def test_an_inactive_schedule_and_a_paused_deployment_are_imported_suspended():
    got = from_prefect(PREFECT_YAML)
    assert got.presets["month-end"].suspended and not got.presets["first-monday"].suspended
    paused = from_prefect(_one("cron: '0 1 * * *'", paused="true"))
    assert paused.presets["job"].suspended
    assert any(n.startswith("deployment paused: true") for n in paused[0].source.notes)


def test_the_legacy_schedule_key_is_a_list_of_one():
    s = from_prefect(PREFECT_YAML).by_id("legacy-quarter-hour")
    assert (s.rule, s.zone) == ("*/15 * * * *", "UTC") and "no timezone: UTC, Prefect's default" in s.source.notes


def test_rrule_dtstart_and_until_are_wall_times_in_the_schedules_zone():
    got = _yaml(_one('rrule: "DTSTART:20260306T090000Z\\nRRULE:FREQ=DAILY;UNTIL=20260308T090000Z"\n'
                     "        timezone: America/New_York"))
    assert (got[0].start, got[0].rule) == ("2026-03-06T09:00:00", "FREQ=DAILY;UNTIL=20260308T090000")
    assert _due(got, 5) == ["2026-03-06T14:00:00Z", "2026-03-07T14:00:00Z", "2026-03-08T13:00:00Z"]


def test_an_rrule_in_json_form_and_its_rdate_exdate_are_read():
    rule = "DTSTART:20260306T080000\nRRULE:FREQ=DAILY;COUNT=3\nEXDATE:20260307T080000\nRDATE:20260310T120000"
    as_json = json.dumps({"rrule": rule, "timezone": "Europe/Berlin"})
    got = _yaml(_one(f"rrule: {json.dumps(as_json)}"))  # the JSON text, as a YAML (double-quoted) string
    assert got[0].zone == "Europe/Berlin" and got[0].exdate and got[0].rdate
    assert _due(got, 5) == ["2026-03-06T07:00:00Z", "2026-03-08T07:00:00Z", "2026-03-10T11:00:00Z"]


def test_an_interval_may_be_seconds_an_iso_duration_or_a_clock_time(monkeypatch):
    monkeypatch.setattr(reader, "prefect", lambda **kw: real_prefect(kind="cron"))
    for written, us in (("90", 90), ("1.5", 1.5), ("'PT2H'", 7200), ("'01:30:00'", 5400), ("'1 day, 00:00:00'", 86400)):
        assert _yaml(_one(f"interval: {written}"))[0].rule.period_us == us * 10**6
    got = _yaml(_one("interval: 60\n        anchor_date: '2026-01-01T09:00:00'"))[0]
    assert got.rule.anchor == "2026-01-01T09:00:00Z"  # naive: UTC, as prefect deploy parses it
    assert any(n.startswith("no anchor_date") for n in _yaml(_one("interval: 60"))[0].source.notes)


# -- refusals


@pytest.mark.parametrize("entry, error, says", [
    ("cron: '61 * * * *'", RuleError, "cron: minute value '61' is out of range"),
    ("cron: 'H 9 * * *'", RuleError, "random and hashed expressions (R, H) are unsupported by Prefect"),
    ("cron: 7", RuleError, "cron: expected a cron string"),
    ("timezone: UTC", ScheduleError, "no schedule kind: expected a non-empty 'cron', 'interval' or 'rrule'"),
    ("cron: '0 1 * * *'\n        timezone: Mars/Base", CalsimError, "timezone: unknown zone 'Mars/Base'"),
    ("cron: '{{ $CRON }}'", InputError, "is a Prefect template"),
    ("interval: '3600'", InputError, "is not an interval (allowed: seconds as a number"),
    ("interval: -5", InputError, "interval: -5 must be positive"),
    ('rrule: "FREQ=DAILY\\nEXRULE:FREQ=WEEKLY"', RuleError, "'EXRULE' lines are not read"),
    ('rrule: "FREQ=DAILY\\nRRULE:FREQ=WEEKLY"', RuleError, "more than one RRULE line"),
    ('rrule: "DTSTART:2026\\nRRULE:FREQ=DAILY"', RuleError, "DTSTART: str '2026' is not a date-time"),
    (f"rrule: 'FREQ=DAILY;{'BYHOUR=1;' * 800}'", RuleError, "longer than Prefect's 6,500"),
    ("cron: '0 1 * * *'\n        active: maybe", InputError, "active: expected true or false"),
    ("[1, 2]", InputError, "expected a schedule mapping"),
])
def test_a_bad_entry_is_refused_alone_naming_its_path_field_and_value(entry, error, says):
    text = _one(entry) + "      - cron: '0 2 * * *'\n"
    got = from_prefect(text)
    assert [s.id for s in got] == ["job:2"]
    (r,) = got.refused
    assert isinstance(r.error, error) and says in r.reason and "deployments[0].schedules[0] (line 5)" in r.reason
    assert_clear(r.error)


@pytest.mark.parametrize("deployment, says", [
    ("entrypoint: x.py:x\n    schedules: []", "name: expected a non-empty string"),
    ("name: job\n    schedule: {cron: '0 1 * * *'}\n    schedules: []", "both 'schedule' and 'schedules' are given"),
    ("name: job\n    schedules: 3", "schedules: expected a list of schedules"),
    ("name: other\n    paused: sometimes\n    schedules: []", "paused: expected true or false"),
])
def test_a_bad_deployment_refuses_its_schedules_as_one_item(deployment, says):
    text = f"deployments:\n  - name: ok\n    schedules:\n      - cron: '0 1 * * *'\n  - {deployment}\n"
    got = from_prefect(text)
    assert [s.id for s in got] == ["ok"] and says in got.refused[0].reason and "deployments[1]" in got.refused[0].reason


def test_a_deployment_name_given_twice_is_refused_the_second_time():
    text = "deployments:\n" + "  - name: a\n    schedules:\n      - cron: '0 1 * * *'\n" * 2
    got = from_prefect(text)
    assert len(got) == 1 and "name: 'a' is given twice (first deployments[0])" in got.refused[0].reason


def test_strict_raises_the_first_refused_entry():
    with pytest.raises(CalsimError, match=r"deployments\[2\]\.schedules\[0\]|deployments\[6\]\.schedules\[0\]"):
        from_prefect(PREFECT_YAML, strict=True)


def test_every_entry_refused_raises_the_first_naming_how_many_more():
    with pytest.raises(RuleError, match=r"minute value '61'.*\(and 1 more item\(s\) refused; nothing imported\)"):
        from_prefect(_one("cron: '61 * * * *'") + "      - cron: '0 25 * * *'\n")


@pytest.mark.parametrize("text, says", [
    ("name: x\n", "not a prefect.yaml: expected a mapping with a 'deployments:' list"),
    ("deployments: []\n", "deployments: expected a list of deployments"),
    ("deployments: [\n", "not valid YAML"),
    ("- 1\n- 2\n", "not a prefect.yaml"),
])
def test_a_file_that_is_not_a_prefect_yaml_is_an_input_error(text, says):
    with pytest.raises(InputError, match=re.escape(says)) as err:
        from_prefect(text)
    assert_clear(err.value)


# -- hostile input


@pytest.mark.hostile
@pytest.mark.parametrize("text", [
    "deployments:\n  - name: a\n    schedules:\n      - cron: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"        {n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcdefg", "bcdefgh")),
    "deployments:\n  - name: a\n    schedules:\n      - cron: " + "[" * 10_000 + "]" * 10_000 + "\n",
    "deployments:\n  - name: a\n    schedules:\n      - cron: '" + "1," * 300_000 + "1 * * * *'\n",
    "deployments:\n  - name: a\n    schedules:\n      - interval: " + "9" * 5000 + "\n",
    "deployments:\n  - name: a\n    schedules:\n      - interval: 1e308\n",
    "deployments:\n  - name: a\n    schedules:\n      - interval: 60\n        anchor_date: '" + "9" * 10_000 + "'\n",
    "deployments:\n  - name: &n [*n]\n",
])
def test_hostile_yaml_gives_a_one_line_calsim_error(text):
    with pytest.raises(CalsimError) as err:
        from_prefect(text, strict=True)
    assert_clear(err.value)
    assert len(str(err.value)) < 600


DATA = yaml.safe_load(PREFECT_YAML.read_text())
PATHS = list(field_paths(DATA["deployments"][:5], prefix=("deployments",), items=None))
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=True)
                      | st.text(max_size=20) | st.sampled_from(["0 2 * * *", "PT1H", "FREQ=DAILY", "{{ x }}",
                                                               "Europe/Berlin", "2026-03-08T02:30:00"]),
                      lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
                      max_leaves=6)


@pytest.mark.fuzz
@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(where=st.sampled_from(PATHS), value=VALUES)
def test_any_value_in_any_field_gives_only_calsim_errors(where, value):
    try:
        doc = yaml.safe_dump(replaced(DATA, where, value))
    except (ValueError, TypeError, yaml.YAMLError):
        return
    only_calsim_errors(from_prefect, doc)
