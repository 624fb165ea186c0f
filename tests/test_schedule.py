"""Schedule validation at construction, and preview's explanations."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from messages import assert_clear

import calsim
from calsim.errors import CalsimError

R = "2026f"


class TestValidation:
    def test_schedule_is_a_frozen_dataclass_that_replace_rebuilds(self):
        s = calsim.Schedule("a", "UTC", "2026-01-01T09:00", "FREQ=DAILY")
        with pytest.raises(dataclasses.FrozenInstanceError):
            s.zone = "Europe/Paris"  # type: ignore[misc]
        t = dataclasses.replace(s, rule="0 9 * * *")
        assert t.kind == "cron" and s.kind == "rrule"

    def test_unknown_zone_names_the_schedule_and_suggests(self):
        with pytest.raises(calsim.UnknownZoneError) as err:
            calsim.Schedule("billing", "Europe/Berln", "2026-01-01T09:00", "FREQ=DAILY")
        assert str(err.value).startswith("schedule 'billing': zone: unknown zone 'Europe/Berln'")
        assert "'Europe/Berlin'" in str(err.value)

    @pytest.mark.parametrize(
        ("kw", "message"),
        [
            ({"gap": "later"}, "schedule 'a': gap: unknown policy 'later'"),
            ({"fold": "twice"}, "schedule 'a': fold: unknown policy 'twice'"),
            ({"invalid_day": "clamp"},
             "schedule 'a': invalid_day: unknown policy 'clamp' (allowed: 'omit', 'backward' or 'forward')"),
        ],
    )
    def test_unknown_policies_are_policy_errors(self, kw, message):
        with pytest.raises(calsim.PolicyError) as err:
            calsim.Schedule("a", "UTC", "2026-01-01T09:00", "FREQ=DAILY", **kw)
        assert str(err.value).startswith(message)

    def test_unrecognisable_rule_says_which_kinds_exist(self):
        with pytest.raises(calsim.RuleError, match=r"^schedule 'a': rule: cannot tell the kind of 'every day at 9'"):
            calsim.Schedule("a", "UTC", "2026-01-01T09:00", "every day at 9")

    def test_malformed_rrule_and_cron_name_the_part(self):
        with pytest.raises(calsim.RuleError, match=r"BYMONTHDAY=0 is invalid"):
            calsim.Schedule("a", "UTC", "2026-01-01T09:00", "FREQ=MONTHLY;BYMONTHDAY=0")
        with pytest.raises(calsim.RuleError, match=r"day-of-month value '32' is out of range"):
            calsim.Schedule("a", "UTC", "2026-01-01T09:00", "0 0 32 * *")

    def test_count_and_until_together_are_refused(self):
        with pytest.raises(calsim.RuleError, match="MUST NOT occur in the same"):
            calsim.Schedule("a", "UTC", "2026-01-01T09:00", "FREQ=DAILY;COUNT=3;UNTIL=20260201T000000")

    def test_bysetpos_without_another_by_part_is_refused(self):
        with pytest.raises(calsim.RuleError, match="BYSETPOS"):
            calsim.Schedule("a", "UTC", "2026-01-01T09:00", "FREQ=MONTHLY;BYSETPOS=1")

    def test_until_before_start_is_refused(self):
        with pytest.raises(calsim.RuleError,
                           match=r"UNTIL 2025-01-01T00:00:00 is before the start 2026-01-01T09:00:00"):
            calsim.Schedule("a", "UTC", "2026-01-01T09:00", "FREQ=DAILY;UNTIL=20250101T000000")

    def test_start_is_required_and_must_parse(self):
        with pytest.raises(calsim.ScheduleError, match=r"start: required"):
            calsim.Schedule("a", "UTC", None, "FREQ=DAILY")
        with pytest.raises(calsim.InputError, match=r"start: cannot parse 'tomorrow'"):
            calsim.Schedule("a", "UTC", "tomorrow", "FREQ=DAILY")

    def test_effective_window_must_be_half_open_and_non_empty(self):
        with pytest.raises(calsim.ScheduleError,
                           match=r"effective_to: '2026-01-01T00:00Z' is not after effective_from"):
            calsim.Schedule("a", "UTC", "2026-01-01T09:00", "FREQ=DAILY",
                            effective_from="2026-01-01T00:00Z", effective_to="2026-01-01T00:00Z")

    def test_bad_window_and_every_are_rule_errors(self):
        with pytest.raises(calsim.RuleError, match=r"Window.start: expected a local time 'HH:MM'"):
            calsim.Window("8am", "20:00", "30min")
        with pytest.raises(calsim.RuleError, match=r"Window.days: unknown weekday 'XX'"):
            calsim.Window("08:00", "20:00", "30min", days="MO,XX")
        with pytest.raises(calsim.RuleError, match=r"Every.period: cannot parse 'often'"):
            calsim.Every("often")
        with pytest.raises(calsim.RuleError, match=r"Every.anchor: '2026-01-01T00:00' is a naive time"):
            calsim.Every("1h", anchor="2026-01-01T00:00")


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.one_of(st.text(max_size=40), st.text(alphabet="FREQ=DAILYMONTHBYSETPOS;,-0123456789*/ @LW#", max_size=40)),
       st.one_of(st.none(), st.text(max_size=20), st.sampled_from(["2026-01-01T09:00", "2026-01-01T09:00Z"])))
def test_no_exception_but_calsim_error_escapes_schedule_construction(rule, start):
    try:
        calsim.Schedule("fuzz", "Europe/Paris", start, rule)
    except CalsimError as exc:
        assert_clear(exc)


class TestPreview:
    def test_preview_explains_every_dst_surprise(self):
        s = calsim.Schedule("n", "America/New_York", "2026-03-07T02:30", "FREQ=DAILY")
        got = calsim.preview(s, n=3, release=R)["explain"].to_list()
        assert got == [
            "2026-03-07 02:30 EST (07:30Z)",
            "2026-03-08: not run, 02:30 does not exist in America/New_York (tzdata 2026f)",
            "2026-03-09 02:30 EDT (06:30Z)",
        ]

    def test_preview_explains_shift_fold_and_merge(self):
        s = calsim.Schedule("n", "America/New_York", "2026-03-08T02:30", "FREQ=DAILY", gap="shift")
        assert calsim.preview(s, n=1, release=R)["explain"][0] == (
            "2026-03-08: 02:30 does not exist in America/New_York (tzdata 2026f); "
            "runs 2026-03-08 03:30 EDT (07:30Z), shifted forward by the length of the gap"
        )
        s = calsim.Schedule("n", "America/New_York", "2026-11-01T01:30", "FREQ=DAILY", fold="second")
        assert calsim.preview(s, n=1, release=R)["explain"][0] == (
            "2026-11-01: 01:30 happens twice in America/New_York (tzdata 2026f); "
            "runs on the second pass, 2026-11-01 01:30 EST (06:30Z)"
        )
        s = calsim.Schedule("a", "Pacific/Apia", "2011-12-30T09:00", "FREQ=DAILY", gap="shift")
        texts = calsim.preview(s, n=2, release=R)["explain"].to_list()
        assert texts[1] == ("2011-12-31: not run, resolves to the same instant as 2011-12-30T09:00:00, which runs")

    def test_preview_after_an_instant_and_n(self):
        s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
        f = calsim.preview(s, n=4, after="2026-06-01T10:30Z", release=R)
        assert [d.hour for d in f["due_utc"]] == [11, 12, 13, 14]
        assert f.columns[-1] == "explain"


def test_the_shipped_example_fleet_file_loads_every_rule_kind():
    from pathlib import Path

    fleet = calsim.load(Path(__file__).parent.parent / "data" / "examples" / "fleet.toml")
    assert {s.kind for s in fleet} == {"rrule", "cron", "every", "window"}
    assert calsim.expand(fleet, "2026-01-01T00:00Z", "2026-02-01T00:00Z", R).height > 500


def test_fleet_file_errors_name_the_entry_and_key(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[[schedule]]\nid = "a"\nzone = "UTC"\nstart = "2026-01-01T00:00"\ncron = "0 9 * * *"\n'
                 'colour = "red"\n')
    with pytest.raises(calsim.ScheduleError, match=r"^bad.toml:1 schedule #1: unknown key 'colour'"):
        calsim.load(p)
    p.write_text('[[schedule]]\nid = "a"\nzone = "UTC"\nstart = "2026-01-01T00:00"\ncron = "0 9 * * *"\n'
                 'rrule = "FREQ=DAILY"\n')
    with pytest.raises(calsim.ScheduleError, match=r"give exactly one of rule, rrule, cron, every, window"):
        calsim.load(p)
