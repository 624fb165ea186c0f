"""EventBridge Scheduler importer: get-schedule JSON and CloudFormation, onto the eventbridge preset.

Field names from the API's ``GetScheduleOutput`` and ``AWS::Scheduler::Schedule``;
expression grammar from the Scheduler user guide's "Schedule types" page.
DST: Europe/Berlin springs forward 2026-03-29 02:00->03:00, New York falls back 2026-11-01.
"""

from __future__ import annotations

import json
import pathlib

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.errors import CalsimError, InputError, RuleError
from calsim.importers.eventbridge import from_eventbridge
from messages import assert_clear

EXAMPLES = pathlib.Path(__file__).parents[2] / "data" / "examples"
JSON_EXAMPLE = EXAMPLES / "schedule.eventbridge.json"
CFN_EXAMPLE = EXAMPLES / "schedules.cloudformation.yaml"


def one(props: dict) -> calsim.Schedule:
    return from_eventbridge(json.dumps({"Name": "job", "FlexibleTimeWindow": {"Mode": "OFF"}, **props}))[0]


def expand(s: calsim.Schedule, start: str, end: str):
    return calsim.expand([s], start, end, release="2026f")


class TestGetScheduleJson:
    def test_example_maps_every_field_onto_the_preset(self):
        t = from_eventbridge(JSON_EXAMPLE)
        s = t[0]
        assert (s.id, s.zone, s.rule) == ("billing/nightly-invoices", "Europe/Berlin", "quartz:0 30 2 ? * MON-FRI *")
        assert s.policy.jitter_us == 15 * 60 * 10**6 and s.policy.max_lateness_us == 3600 * 10**6
        assert (s.gap, s.fold, s.effective_from) == ("skip", "first", "2026-02-01T00:00:00+00:00")
        assert t.presets[s.id].settings == (("flexible_window_minutes", 15), ("maximum_event_age_seconds", 3600),
                                            ("maximum_retry_attempts", 3))
        assert t.sources[s.id].command == "arn:aws:lambda:eu-central-1:123456789012:function:nightly-invoices"

    def test_example_fires_on_weekdays_at_0230_berlin(self):
        f = expand(from_eventbridge(JSON_EXAMPLE)[0], "2026-03-02T00:00Z", "2026-03-09T00:00Z")
        assert [t.isoformat() for t in f["due_utc"]] == [f"2026-03-0{d}T01:30:00+00:00" for d in range(2, 7)]

    def test_one_line_json_text_is_content_not_a_file_name(self):
        assert from_eventbridge('{"Name": "x", "ScheduleExpression": "rate(1 hour)"}')[0].id == "default/x"

    def test_missing_timezone_is_utc_and_missing_group_is_default(self):
        s = one({"ScheduleExpression": "cron(0 12 * * ? *)"})
        assert (s.id, s.zone) == ("default/job", "UTC")

    def test_flexible_window_off_means_no_jitter(self):
        assert one({"ScheduleExpression": "cron(0 12 * * ? *)"}).policy.jitter is None

    def test_start_date_without_offset_is_utc(self):
        s = one({"ScheduleExpression": "cron(0 12 * * ? *)", "StartDate": "2026-03-01T00:00:00"})
        assert s.effective_from == "2026-03-01T00:00:00+00:00"

    def test_end_date_excludes_times_from_it_on(self):
        s = one({"ScheduleExpression": "cron(0 12 * * ? *)", "EndDate": "2026-03-03T12:00:00Z"})
        f = expand(s, "2026-03-01T00:00Z", "2026-03-10T00:00Z")
        assert [t.day for t in f["nominal_local"]] == [1, 2]

    def test_list_schedules_summary_is_refused_with_the_reason(self):
        with pytest.raises(InputError, match="list-schedules output is a summary"):
            from_eventbridge('{"Schedules": [{"Name": "a", "State": "ENABLED"}]}')


class TestExpressions:
    def test_cron_last_weekday_of_the_month(self):
        f = expand(one({"ScheduleExpression": "cron(0 18 LW * ? *)"}), "2026-01-01T00:00Z", "2026-03-01T00:00Z")
        assert [t.day for t in f["nominal_local"]] == [30, 27]

    def test_cron_third_friday_with_hash(self):
        f = expand(one({"ScheduleExpression": "cron(0 9 ? * 6#3 *)"}), "2026-01-01T00:00Z", "2026-03-01T00:00Z")
        assert [t.day for t in f["nominal_local"]] == [16, 20]

    def test_cron_year_field_limits_the_years(self):
        f = expand(one({"ScheduleExpression": "cron(0 0 1 1 ? 2027)"}), "2026-01-01T00:00Z", "2029-01-01T00:00Z")
        assert [t.year for t in f["nominal_local"]] == [2027]

    def test_cron_0230_on_berlin_spring_forward_is_skipped(self):
        s = one({"ScheduleExpression": "cron(30 2 * * ? *)", "ScheduleExpressionTimezone": "Europe/Berlin"})
        f = expand(s, "2026-03-29T00:00Z", "2026-03-29T12:00Z")
        assert f["notes"].to_list() == [["dst_gap_skipped"]]

    def test_cron_0130_on_new_york_fall_back_runs_once(self):
        s = one({"ScheduleExpression": "cron(30 1 * * ? *)", "ScheduleExpressionTimezone": "America/New_York"})
        f = expand(s, "2026-11-01T00:00Z", "2026-11-02T00:00Z")
        assert [t.isoformat() for t in f["due_utc"]] == ["2026-11-01T05:30:00+00:00"]

    def test_rate_is_elapsed_time_from_start_date(self):
        s = one({"ScheduleExpression": "rate(90 minutes)", "StartDate": "2026-03-01T00:15:00Z"})
        f = expand(s, "2026-03-01T00:00Z", "2026-03-01T04:00Z")
        assert [t.isoformat()[11:16] for t in f["due_utc"]] == ["00:15", "01:45", "03:15"]

    def test_rate_days_drift_in_local_time_across_dst(self):
        s = one({"ScheduleExpression": "rate(1 day)", "StartDate": "2026-03-27T08:00:00Z",
                 "ScheduleExpressionTimezone": "Europe/Berlin"})
        f = expand(s, "2026-03-27T00:00Z", "2026-03-31T00:00Z")
        assert [t.hour for t in f["nominal_local"]] == [9, 9, 10, 10]

    def test_rate_without_start_date_anchors_at_creation_date(self):
        s = one({"ScheduleExpression": "rate(6 hours)", "CreationDate": "2026-01-12T09:41:27.512000+01:00"})
        f = expand(s, "2026-01-12T00:00Z", "2026-01-13T00:00Z")
        assert [t.isoformat()[11:19] for t in f["due_utc"]] == ["08:41:27", "14:41:27", "20:41:27"]

    def test_at_is_one_time_in_the_schedule_zone(self):
        s = one({"ScheduleExpression": "at(2026-06-01T09:00:00)", "ScheduleExpressionTimezone": "Europe/Berlin"})
        f = expand(s, "2026-01-01T00:00Z", "2027-01-01T00:00Z")
        assert [t.isoformat() for t in f["due_utc"]] == ["2026-06-01T07:00:00+00:00"]

    def test_at_in_a_dst_gap_stays_one_skipped_time_not_the_next_day(self):
        s = from_eventbridge(CFN_EXAMPLE).by_id("reporting/audit-2026q1")
        f = expand(s, "2026-03-01T00:00Z", "2026-05-01T00:00Z")
        assert f["nominal_local"].to_list()[0].isoformat() == "2026-03-29T02:30:00" and f.height == 1
        assert f["notes"].to_list() == [["dst_gap_skipped"]]

    def test_at_ignores_end_date(self):
        s = one({"ScheduleExpression": "at(2026-06-01T09:00:00)", "EndDate": "2026-01-01T00:00:00Z"})
        assert expand(s, "2026-01-01T00:00Z", "2027-01-01T00:00Z").height == 1


class TestCloudFormation:
    def test_template_reads_schedules_and_skips_other_resources(self):
        t = from_eventbridge(CFN_EXAMPLE)
        assert [s.id for s in t] == ["reporting/month-end-report", "reporting/CacheWarmer", "reporting/audit-2026q1"]
        assert [str(k) for k in t.skipped] == [
            "eventbridge: schedules.cloudformation.yaml item 1: resource 'SchedulerRole': "
            "Type 'AWS::IAM::Role' is not AWS::Scheduler::Schedule"]

    def test_resource_without_name_uses_its_logical_id(self):
        assert from_eventbridge(CFN_EXAMPLE)[1].id == "reporting/CacheWarmer"

    def test_disabled_state_marks_the_preset_suspended(self):
        t = from_eventbridge(CFN_EXAMPLE)
        assert t.presets["reporting/audit-2026q1"].suspended
        assert not t.presets["reporting/month-end-report"].suspended

    def test_short_form_intrinsic_in_a_needed_field_is_refused_by_name(self):
        text = CFN_EXAMPLE.read_text().replace("America/New_York", "!Ref Zone")
        with pytest.raises(InputError) as err:
            from_eventbridge(text, source="t.yaml", strict=True)
        assert str(err.value) == ("eventbridge: t.yaml schedule 1 'month-end-report': ScheduleExpressionTimezone: "
                                  "!Ref is a CloudFormation function; calsim needs the literal value")

    def test_json_template_equals_the_yaml_one(self):
        data = yaml.load(CFN_EXAMPLE.read_text(), Loader=yaml.BaseLoader)  # tags dropped: values are strings
        assert [s.rule for s in from_eventbridge(json.dumps(data))] == [s.rule for s in from_eventbridge(CFN_EXAMPLE)]

    def test_single_resource_fragment(self):
        s = from_eventbridge("Type: AWS::Scheduler::Schedule\nProperties:\n  Name: x\n"
                             "  ScheduleExpression: cron(0 6 1 * ? *)\n  FlexibleTimeWindow: {Mode: 'OFF'}\n")[0]
        assert (s.id, s.rule) == ("default/x", "quartz:0 0 6 1 * ? *")


def _to_get_schedule(t, s: calsim.Schedule) -> dict:
    """What get-schedule would print for an imported schedule (the test's writer)."""
    group, name = s.id.split("/", 1)
    settings = dict(t.presets[s.id].settings)
    window = settings["flexible_window_minutes"]
    out = {"Name": name, "GroupName": group, "ScheduleExpression": t.sources[s.id].text,
           "ScheduleExpressionTimezone": s.zone,
           "FlexibleTimeWindow": {"Mode": "OFF"} if window is None else {"Mode": "FLEXIBLE",
                                                                         "MaximumWindowInMinutes": window},
           "State": "DISABLED" if t.presets[s.id].suspended else "ENABLED",
           "Target": {"RetryPolicy": {"MaximumEventAgeInSeconds": settings["maximum_event_age_seconds"],
                                      "MaximumRetryAttempts": settings["maximum_retry_attempts"]}}}
    if s.effective_from is not None:
        out["StartDate"] = s.effective_from
    if s.effective_to is not None:
        out["EndDate"] = s.effective_to
    return out


@pytest.mark.parametrize("example", [JSON_EXAMPLE, CFN_EXAMPLE])
def test_round_trip_through_get_schedule_json_keeps_every_schedule(example):
    t = from_eventbridge(example)
    again = from_eventbridge(json.dumps([_to_get_schedule(t, s) for s in t], indent=1))
    assert [(s.id, s.zone, s.rule, s.gap, s.fold, s.policy, s.effective_from, s.effective_to) for s in again] == \
        [(s.id, s.zone, s.rule, s.gap, s.fold, s.policy, s.effective_from, s.effective_to) for s in t]


class TestRefused:
    @pytest.mark.parametrize("props, error, message", [
        ({"ScheduleExpression": "cron(0 12 * * * *)"}, RuleError, "exactly one must be '?'"),
        ({"ScheduleExpression": "cron(0 12 * * ?)"}, RuleError, "expected 6 fields"),
        ({"ScheduleExpression": "rate(5 weeks)"}, RuleError, "is not cron(...), rate(n unit) or at("),
        ({"ScheduleExpression": "rate(0 minutes)"}, InputError, "has value 0"),
        ({"ScheduleExpression": "at(2026-02-30T00:00:00)"}, InputError, "is not a real date and time"),
        ({"ScheduleExpression": "cron(0 12 * * ? *)", "ScheduleExpressionTimezone": "Mars/Base"}, CalsimError,
         "ScheduleExpressionTimezone"),
        ({"ScheduleExpression": "cron(0 12 * * ? *)", "FlexibleTimeWindow": {"Mode": "SOMETIMES"}}, InputError,
         "FlexibleTimeWindow.Mode: 'SOMETIMES' is not OFF or FLEXIBLE"),
        ({"ScheduleExpression": "cron(0 12 * * ? *)", "FlexibleTimeWindow": {"Mode": "FLEXIBLE"}}, InputError,
         "FlexibleTimeWindow.MaximumWindowInMinutes: expected a whole number, got None"),
        ({"ScheduleExpression": "cron(0 12 * * ? *)",
          "FlexibleTimeWindow": {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 2000}}, CalsimError,
         "flexible_window_minutes: invalid value 2000"),
        ({"ScheduleExpression": "cron(0 12 * * ? *)", "Target": {"RetryPolicy": {"MaximumRetryAttempts": 500}}},
         CalsimError, "maximum_retry_attempts: invalid value 500"),
        ({"ScheduleExpression": "cron(0 12 * * ? *)", "State": "PAUSED"}, InputError, "State: 'PAUSED'"),
        ({"ScheduleExpression": "cron(0 12 * * ? *)", "StartDate": "soon"}, InputError,
         "StartDate: 'soon' is not an ISO 8601 date and time"),
        ({"ScheduleExpression": 42}, InputError, "ScheduleExpression: expected a string, got 42"),
    ])
    def test_bad_field_names_the_schedule_and_the_field(self, props, error, message):
        with pytest.raises(error) as err:
            from_eventbridge(json.dumps({"Name": "job", **props}), source="s.json")
        assert message in str(err.value) and str(err.value).startswith("eventbridge: s.json schedule 1 'job'")
        assert_clear(err.value)

    def test_no_schedule_in_the_file_is_refused(self):
        with pytest.raises(InputError, match="no schedule found"):
            from_eventbridge('{"Resources": {}}')

    def test_repeated_ids_are_refused(self):
        item = {"Name": "a", "ScheduleExpression": "rate(1 hour)"}
        with pytest.raises(InputError, match="id 'default/a' repeats"):
            from_eventbridge(json.dumps([item, item]), strict=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.sampled_from([JSON_EXAMPLE, CFN_EXAMPLE]), cut=st.integers(0, 2000), junk=st.binary(max_size=30))
def test_fuzzed_files_only_raise_calsim_errors(which, cut, junk):
    data = which.read_bytes()
    try:
        from_eventbridge(data[:cut] + junk + data[cut:])
    except CalsimError as exc:
        assert_clear(exc)


_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-5, 3000) | st.text(max_size=12),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                   max_size=3), max_leaves=8)
_KEYS = st.sampled_from(["Name", "GroupName", "ScheduleExpression", "ScheduleExpressionTimezone", "StartDate",
                         "EndDate", "State", "FlexibleTimeWindow", "Target", "CreationDate"])


@settings(max_examples=200, deadline=None)
@given(extra=st.dictionaries(_KEYS, _VALUES, max_size=4))
def test_fuzzed_field_values_only_raise_calsim_errors(extra):
    base = json.loads(JSON_EXAMPLE.read_text())
    try:
        from_eventbridge(json.dumps({**base, **extra}))
    except CalsimError as exc:
        assert_clear(exc)


def test_an_item_that_is_not_an_object_is_refused_and_the_others_imported():
    t = from_eventbridge(json.dumps([{"Name": "a", "ScheduleExpression": "rate(1 hour)"}, 5, ["x"]]))
    assert [s.id for s in t] == ["default/a"]
    assert [r.source.item for r in t.refused] == [2, 3]
    assert all("expected an object (mapping), got" in r.reason for r in t.refused)


def test_a_cloudformation_schedule_without_properties_is_refused_alone():
    doc = {"Resources": {"Good": {"Type": "AWS::Scheduler::Schedule",
                                  "Properties": {"ScheduleExpression": "rate(1 hour)"}},
                         "Bad": {"Type": "AWS::Scheduler::Schedule", "Properties": "oops"}}}
    t = from_eventbridge(json.dumps(doc))
    assert [s.id for s in t] == ["default/Good"]
    assert "Bad" in t.refused[0].reason and "expected an object" in t.refused[0].reason
