"""GitHub Actions workflows: on.schedule cron entries to schedules with GitHub's documented behaviour as notes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calsim
from calsim.errors import CalsimError, InputError, RuleError
from calsim.importers.github import NOTES, from_github_actions

EXAMPLE = Path(__file__).parents[2] / "data" / "examples" / "nightly.workflow.yml"


def _wf(*crons, extra=""):
    lines = ["name: CI", "on:", "  schedule:"]
    for c in crons:
        lines.append(f"    - cron: '{c}'")
    return "\n".join(lines) + "\n" + extra + "jobs: {}\n"


def _due(imported, start, end):
    f = calsim.expand(imported, start, end, release="2026f")
    return [t.strftime("%Y-%m-%dT%H:%M") if t else None for t in f["due_utc"].to_list()]


def test_example_gives_one_schedule_per_cron_entry_named_after_the_workflow():
    w = from_github_actions(EXAMPLE)
    assert [(s.id, s.zone, s.rule) for s in w] == [("Nightly:1", "UTC", "17 3 * * 1-5"),
                                                   ("Nightly:2", "America/New_York", "45 6 1 * *"),
                                                   ("Nightly:3", "Europe/Berlin", "*/30 8-17 * * MON-FRI")]
    assert [w.sources[s.id].line for s in w] == [9, 11, 14]


def test_example_carries_githubs_documented_delay_drop_interval_and_inactivity_notes():
    notes = " ".join(from_github_actions(EXAMPLE).presets["Nightly:1"].notes)
    for fact in ("delayed during periods of high load", "may be dropped", "once every 5 minutes",
                 "disabled after 60 days"):
        assert fact in notes


def test_example_concurrency_group_keeps_one_pending_run():
    assert {s.policy.overlap for s in from_github_actions(EXAMPLE)} == {"buffer_latest"}


def test_a_repeated_schedule_key_is_refused_as_github_refuses_the_workflow():
    # GitHub: "(Line: 3, Col: 3): 'schedule' is already defined", and the workflow never runs. PyYAML would keep
    # the last value, silently dropping the first schedule.
    text = "on:\n  schedule: []\n  schedule:\n    - cron: '0 4 * * *'\n    - cron: '0 5 * * *'\njobs: {}\n"
    with pytest.raises(InputError, match=r"line 3: key 'schedule' is given twice in one mapping \(lines 2 and 3\)"):
        from_github_actions(text)


def test_a_cron_without_timezone_is_utc_and_runs_at_that_utc_time():
    w = from_github_actions(_wf("17 3 * * 1-5"))
    assert _due(w, "2026-03-06T00:00Z", "2026-03-10T00:00Z") == ["2026-03-06T03:17", "2026-03-09T03:17"]


def test_day_of_month_and_day_of_week_follow_posix_or():
    w = from_github_actions(_wf("0 12 13 * 5"))
    assert _due(w, "2026-02-09T00:00Z", "2026-02-21T00:00Z") == ["2026-02-13T12:00", "2026-02-20T12:00"]


def test_a_time_in_the_spring_forward_gap_runs_right_after_the_change():
    w = from_github_actions("on:\n  schedule:\n    - cron: '30 2 * * *'\n      timezone: America/New_York\n",
                            source="dst.yml")
    assert _due(w, "2026-03-08T00:00Z", "2026-03-09T00:00Z") == ["2026-03-08T07:00"]


def test_a_workflow_without_name_takes_the_file_name():
    assert [s.id for s in from_github_actions(_wf("0 5 * * *").replace("name: CI\n", ""), source="x.yml")] == \
        ["x.yml:1"]


def test_quoted_on_key_is_read_like_the_bare_one():
    assert len(from_github_actions(_wf("0 5 * * *").replace("\non:", '\n"on":'))) == 1


def test_no_concurrency_allows_overlap_and_cancel_in_progress_cancels():
    assert from_github_actions(_wf("0 5 * * *"))[0].policy.overlap == "allow"
    w = from_github_actions(_wf("0 5 * * *", extra="concurrency:\n  group: x\n  cancel-in-progress: true\n"))
    assert w[0].policy.overlap == "cancel_other"


def test_a_cron_more_often_than_every_five_minutes_is_imported_with_a_note():
    w = from_github_actions(_wf("*/2 * * * *"))
    assert "more often than every 5 minutes" in w.sources["CI:1"].notes[0]
    assert not any("more often" in n for n in from_github_actions(_wf("*/5 * * * *")).sources["CI:1"].notes)


def test_a_directory_reads_every_workflow_and_lists_those_without_schedule(tmp_path):
    (tmp_path / "a.yml").write_text(_wf("0 5 * * *").replace("CI", "A"))
    (tmp_path / "b.yaml").write_text("name: B\non: [push]\njobs: {}\n")
    w = from_github_actions(tmp_path)
    assert [s.id for s in w] == ["A:1"] and w.skipped[0].what == "B"


@pytest.mark.parametrize("cron,message", [
    ("0 0 L * *", "L, W, # and \\? are not POSIX cron"),
    ("0 0 * * 5#2", "L, W, # and \\? are not POSIX cron"),
    ("@daily", "@-macros are not POSIX cron"),
    ("0 0 0 * * *", "has 6 fields \\(GitHub takes exactly 5"),
    ("61 * * * *", "minute value '61' is out of range \\(allowed 0..59\\)"),
])
def test_crons_github_refuses_are_refused_with_file_and_line(cron, message):
    with pytest.raises(RuleError, match=f"^github: <github text> line 4: cron: .*{message}"):
        from_github_actions(_wf(cron))


def test_a_workflow_without_schedule_is_an_error_naming_it():
    with pytest.raises(InputError, match="github: CI: no on.schedule"):
        from_github_actions("name: CI\non: push\njobs: {}\n")


def test_a_file_that_is_not_a_workflow_is_an_input_error():
    with pytest.raises(InputError, match="not a workflow: no 'on:' key"):
        from_github_actions("name: x\njobs: {}\n")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="0123456789*/,-LW#?@ abcdefMONFRIjan\n:'\"-{}[]", max_size=80))
def test_fuzzed_workflows_only_ever_raise_calsim_errors(text):
    for candidate in (text + "\n", _wf(text.replace("'", "").replace("\n", " "))):
        try:
            w = from_github_actions(candidate)
            calsim.expand(w, "2026-06-01T00:00Z", "2026-06-02T00:00Z", release="2026f")
        except CalsimError as exc:
            assert "\n" not in str(exc)


def test_notes_are_the_module_constant():
    assert from_github_actions(_wf("0 5 * * *")).presets["CI:1"].notes == NOTES
