"""Terraform ``aws_scheduler_schedule`` resources (HCL, ``.tf.json``, ``terraform show -json``) read as EventBridge.

Argument names from the hashicorp/aws provider's ``aws_scheduler_schedule``
documentation (``schedule_expression``, ``schedule_expression_timezone``,
``flexible_time_window { mode, maximum_window_in_minutes }``, ``target {
arn, retry_policy { maximum_event_age_in_seconds, maximum_retry_attempts }
}``, ``start_date``, ``end_date``, ``state``); the JSON shapes from
Terraform's "JSON Configuration Syntax" and "JSON Output Format" pages.
Each Terraform shape must give exactly what the CloudFormation example of
the same three schedules gives (one reader decides what a schedule does).
"""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.errors import CalsimError, InputError
from calsim.importers.eventbridge import from_eventbridge
from messages import assert_clear

EXAMPLES = pathlib.Path(__file__).parents[2] / "data" / "examples"
HCL = EXAMPLES / "schedules.tf"
CFN = EXAMPLES / "schedules.cloudformation.yaml"

# The same three schedules in Terraform's JSON configuration syntax (blocks as objects, as people write them).
TF_JSON = {
    "variable": {"report_function_arn": {"type": "string"}},
    "resource": {
        "aws_iam_role": {"scheduler": {"name": "reporting-scheduler"}},
        "aws_scheduler_schedule": {
            "month_end_report": {
                "name": "month-end-report", "group_name": "reporting",
                "schedule_expression": "cron(0 18 LW * ? *)", "schedule_expression_timezone": "America/New_York",
                "flexible_time_window": {"mode": "OFF"},
                "target": {"arn": "${var.report_function_arn}", "role_arn": "${aws_iam_role.scheduler.arn}",
                           "retry_policy": {"maximum_event_age_in_seconds": 86400, "maximum_retry_attempts": 185}}},
            "cache_warmer": {
                "group_name": "reporting", "schedule_expression": "rate(15 minutes)",
                "start_date": "2026-03-01T00:00:00Z", "end_date": "2026-12-31T00:00:00Z",
                "flexible_time_window": {"mode": "FLEXIBLE", "maximum_window_in_minutes": 5},
                "target": {"arn": "${var.report_function_arn}", "role_arn": "${aws_iam_role.scheduler.arn}"}},
            "audit_once": {
                "name": "audit-2026q1", "group_name": "reporting", "schedule_expression": "at(2026-03-29T02:30:00)",
                "schedule_expression_timezone": "Europe/Berlin", "action_after_completion": "DELETE",
                "flexible_time_window": [{"mode": "OFF"}],
                "target": [{"arn": "${var.report_function_arn}", "role_arn": "${aws_iam_role.scheduler.arn}"}]},
        },
    },
}


def _state_values(args: dict) -> dict:
    """A resource's arguments as ``terraform show -json`` prints them: every block a list, every default filled."""
    out = {"name": args.get("name", ""), "name_prefix": "", "group_name": args["group_name"], "state": "ENABLED",
           "schedule_expression_timezone": args.get("schedule_expression_timezone", "UTC"),
           "start_date": args.get("start_date", ""), "end_date": args.get("end_date", ""), "kms_key_arn": "",
           "description": "", "schedule_expression": args["schedule_expression"],
           "action_after_completion": args.get("action_after_completion", "NONE")}
    ftw = args["flexible_time_window"]
    ftw = ftw[0] if isinstance(ftw, list) else ftw
    out["flexible_time_window"] = [{"mode": ftw["mode"], "maximum_window_in_minutes": ftw.get(
        "maximum_window_in_minutes", 0)}]
    target = args["target"][0] if isinstance(args["target"], list) else args["target"]
    retry = target.get("retry_policy", {"maximum_event_age_in_seconds": 86400, "maximum_retry_attempts": 185})
    out["target"] = [{"arn": "arn:aws:lambda:us-east-1:123456789012:function:report",
                      "role_arn": "arn:aws:iam::123456789012:role/reporting-scheduler", "retry_policy": [retry]}]
    return out


def _show_json(key: str = "values") -> dict:
    """``terraform show -json`` of a state where the schedules live in a child module."""
    schedules = TF_JSON["resource"]["aws_scheduler_schedule"]
    resources = [{"address": f"module.reporting.aws_scheduler_schedule.{name}", "mode": "managed",
                  "type": "aws_scheduler_schedule", "name": name, "values": _state_values(args)}
                 for name, args in schedules.items()]
    # In the state, a schedule created without `name` has the name Terraform generated.
    resources[1]["values"]["name"] = "cache_warmer"
    return {"format_version": "1.0", "terraform_version": "1.9.0",
            key: {"root_module": {"resources": [
                {"address": "aws_iam_role.scheduler", "mode": "managed", "type": "aws_iam_role", "name": "scheduler",
                 "values": {"name": "reporting-scheduler"}},
                {"address": "data.aws_caller_identity.me", "mode": "data", "type": "aws_caller_identity",
                 "name": "me", "values": {}}],
                "child_modules": [{"address": "module.reporting", "resources": resources}]}}}


def _behaviour(imported) -> list[tuple]:
    """What decides when and how each schedule runs (not where it came from)."""
    return [(s.id, s.zone, str(s.rule), s.gap, s.fold, s.effective_from, s.effective_to, s.policy,
             imported.presets[s.id].settings, imported.presets[s.id].suspended) for s in imported]


def test_hcl_example_reads_three_schedules_and_skips_the_role():
    t = from_eventbridge(HCL)
    assert [s.id for s in t] == ["reporting/month-end-report", "reporting/cache_warmer", "reporting/audit-2026q1"]
    assert [sk.what for sk in t.skipped] == ["resource aws_iam_role.scheduler"]
    assert t.refused == ()


def test_hcl_maps_nested_blocks_onto_the_preset():
    t = from_eventbridge(HCL)
    month_end, warmer = t[0], t[1]
    assert (month_end.zone, month_end.rule) == ("America/New_York", "quartz:0 0 18 LW * ? *")
    assert dict(t.presets[month_end.id].settings)["maximum_retry_attempts"] == 185
    assert dict(t.presets[warmer.id].settings)["flexible_window_minutes"] == 5
    assert (warmer.effective_from, warmer.effective_to) == ("2026-03-01T00:00:00+00:00", "2026-12-31T00:00:00+00:00")


def test_hcl_gives_what_the_cloudformation_template_of_the_same_schedules_gives():
    cfn = from_eventbridge(CFN)
    cfn_by_name = {s.id.split("/")[1]: s for s in cfn}
    # The template has no Name for the warmer either; CloudFormation falls back to the logical id.
    renamed = {"CacheWarmer": "cache_warmer"}
    hcl = from_eventbridge(HCL)
    for s in hcl:
        other = cfn_by_name.get(s.id.split("/")[1]) or cfn_by_name[
            next(k for k, v in renamed.items() if v == s.id.split("/")[1])]
        assert (s.zone, str(s.rule), s.effective_from, s.effective_to, s.policy) == (
            other.zone, str(other.rule), other.effective_from, other.effective_to, other.policy)


def test_tf_json_reads_the_same_as_hcl():
    assert _behaviour(from_eventbridge(json.dumps(TF_JSON))) == _behaviour(from_eventbridge(HCL))


@pytest.mark.parametrize("key", ["values", "planned_values"])
def test_terraform_show_json_reads_the_same_as_hcl_including_child_modules(key):
    shown = from_eventbridge(json.dumps(_show_json(key)))
    assert _behaviour(shown) == _behaviour(from_eventbridge(HCL))
    assert [sk.what for sk in shown.skipped] == ["resource aws_iam_role.scheduler"]  # data sources are not resources


def test_terraform_show_json_takes_the_evaluated_target_arn():
    shown = from_eventbridge(json.dumps(_show_json()))
    assert (shown.sources["reporting/month-end-report"].command
            == "arn:aws:lambda:us-east-1:123456789012:function:report")


def test_a_variable_in_a_schedule_argument_refuses_that_schedule_only():
    text = HCL.read_text().replace('"America/New_York"', "var.zone")
    t = from_eventbridge(text)
    assert [s.id for s in t] == ["reporting/cache_warmer", "reporting/audit-2026q1"]
    (refused,) = t.refused
    assert "ScheduleExpressionTimezone" in refused.reason and "var.zone" in refused.reason
    assert "terraform show -json" in refused.reason
    with pytest.raises(InputError, match="Terraform expression"):
        from_eventbridge(text, strict=True)


def test_an_interpolated_expression_is_refused_not_read_as_a_literal():
    text = HCL.read_text().replace('"cron(0 18 LW * ? *)"', '"cron(0 ${var.hour} LW * ? *)"')
    (refused,) = from_eventbridge(text).refused
    assert "ScheduleExpression" in refused.reason and "Terraform expression" in refused.reason


def test_a_block_that_is_not_an_object_refuses_that_schedule():
    doc = json.loads(json.dumps(TF_JSON))
    doc["resource"]["aws_scheduler_schedule"]["audit_once"]["flexible_time_window"] = "OFF"
    t = from_eventbridge(json.dumps(doc))
    assert len(t) == 2 and "FlexibleTimeWindow" in t.refused[0].reason


def test_malformed_hcl_is_one_input_error_naming_the_file():
    with pytest.raises(InputError, match=r"schedules\.tf.*not valid HCL") as exc:
        from_eventbridge(HCL.read_text()[:-40] + "\n", source="schedules.tf")
    assert_clear(exc.value)


def test_load_detects_hcl_and_terraform_json(tmp_path):
    (tmp_path / "main.tf.json").write_text(json.dumps(TF_JSON))
    (tmp_path / "state.json").write_text(json.dumps(_show_json()))
    for path in (HCL, tmp_path / "main.tf.json", tmp_path / "state.json"):
        assert calsim.importers.detect_format(path) == "eventbridge"
        assert len(calsim.load(path)) == 3


def test_cli_expand_reads_a_tf_file(capsys):
    from calsim.cli import main

    assert main(["expand", str(HCL), "--from", "2026-03-01", "--to", "2026-04-01", "--release", "2026f"]) == 0
    assert "reporting/audit-2026q1" in capsys.readouterr().out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(0, 2000), junk=st.text(max_size=20))
def test_fuzzed_hcl_only_raises_calsim_errors(cut, junk):
    text = HCL.read_text()
    try:
        from_eventbridge(text[:cut] + junk + text[cut:])
    except CalsimError as exc:
        assert_clear(exc)


_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-5, 3000) | st.text(max_size=12),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                   max_size=3), max_leaves=8)
_ARGS = st.sampled_from(["name", "group_name", "schedule_expression", "schedule_expression_timezone", "start_date",
                         "end_date", "state", "flexible_time_window", "target"])


@settings(max_examples=150, deadline=None)
@given(extra=st.dictionaries(_ARGS, _VALUES, max_size=4), key=st.sampled_from(["values", "planned_values"]))
def test_fuzzed_show_json_arguments_only_raise_calsim_errors(extra, key):
    doc = _show_json(key)
    doc[key]["root_module"]["child_modules"][0]["resources"][0]["values"].update(extra)
    try:
        from_eventbridge(json.dumps(doc))
    except CalsimError as exc:
        assert_clear(exc)
