"""Presets: each scheduler's settings mapped to calsim policies, and DST fire times against real code.

Oracles: cronsim 2.9 (Debian cron, incl. its DST quirks) for ``cronie``, and
APScheduler 3.x's own ``CronTrigger.get_next_fire_time`` (the installed 3.11.3,
on zoneinfo built from calsim's release) for ``apscheduler``. Both are iterated
in a zone over a window around DST transitions (for APScheduler: every 2026
transition of eleven zones, and whole years), and the instants compared with
``calsim.expand`` of the preset-applied schedule.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import inspect
import os
import re
import typing
from zoneinfo import ZoneInfo

import pytest
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger
from cronsim import CronSim

import calsim
from calsim import presets
from calsim.simulation.policy import LogNormal, Policy
from oracles import apscheduler_clock as aps_clock

UTC = dt.timezone.utc
US = 1_000_000
DAY_US = 86400 * US


def expand_due(schedule, lo, hi):
    """Instants that run (non-null ``due_utc``) of one schedule over [lo, hi)."""
    f = calsim.expand([schedule], lo, hi, release="2026f")
    return [t for t in f["due_utc"].to_list() if t is not None], f


def utc(text):
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


# ---------------------------------------------------------------- mappings


class TestKubernetes:
    def test_defaults_run_the_most_recent_missed_time_with_no_deadline(self):
        p = presets.kubernetes()
        assert (p.name, p.gap, p.fold, p.tick, p.dialect) == ("kubernetes", "scheduler", "scheduler", "10s", "robfig")
        assert (p.policy.catchup, p.policy.overlap, p.policy.max_lateness, p.policy.max_missed) == (
            "latest", "allow", None, None)
        assert p.policy.jitter_us == 0 and p.zone is None and p.suspended is False

    def test_forbid_with_deadline_buffers_the_latest_and_expires_from_200s(self):
        p = presets.kubernetes(concurrency_policy="Forbid", starting_deadline_seconds=200)
        assert (p.policy.overlap, p.policy.max_lateness_us, p.policy.catchup) == ("buffer_latest", 200 * US, "latest")
        assert p.policy.limit_edge == "late"  # times strictly after now - deadline

    def test_replace_cancels_the_running_job(self):
        assert presets.kubernetes(concurrency_policy="Replace").policy.overlap == "cancel_other"

    def test_too_many_missed_code_sets_no_limit_and_says_why(self):
        p = presets.kubernetes()
        assert p.policy.max_missed is None
        assert any("TooManyMissedTimes" in n for n in p.notes)

    def test_too_many_missed_docs_gives_max_missed_100(self):
        p = presets.kubernetes(too_many_missed="docs")
        assert p.policy.max_missed == 100
        assert any(n.startswith("too_many_missed='docs'") for n in p.notes)

    def test_deadline_below_the_10s_sync_loop_and_zero_are_noted(self):
        assert any("synced every 10 s" in n for n in presets.kubernetes(starting_deadline_seconds=5).notes)
        assert not any("synced every 10 s" in n for n in presets.kubernetes(starting_deadline_seconds=10).notes)
        assert any("never starts a Job" in n for n in presets.kubernetes(starting_deadline_seconds=0).notes)

    def test_time_zone_is_set_on_applied_schedules(self):
        s = calsim.Schedule("b", "UTC", "2026-01-01T00:00", "0 3 * * *")
        out = presets.kubernetes(time_zone="Europe/Berlin").apply(s)
        assert out.zone == "Europe/Berlin"
        assert presets.kubernetes().apply(s).zone == "UTC"

    def test_suspend_is_recorded_and_explained(self):
        p = presets.kubernetes(suspend=True)
        assert p.suspended is True
        assert any(n.startswith("suspend=True") for n in p.notes)

    def test_settings_record_the_cronjob_fields_as_given(self):
        assert dict(presets.kubernetes(starting_deadline_seconds=30).settings) == {
            "concurrency_policy": "Allow", "starting_deadline_seconds": 30, "time_zone": None,
            "suspend": False, "too_many_missed": "code", "cron": "robfig"}

    def test_calendar_mode_still_reads_the_spec_with_robfigs_grammar(self):
        # cron="calendar" changes only the DST walk: day-of-week 5/2 is {5} in robfig (steps run over 0-6), so a
        # CronJob fires Fridays only, where Vixie cron's 5/2 also runs Sundays.
        s = presets.kubernetes(cron="calendar").apply(calsim.Schedule("j", "UTC", "2026-01-01T00:00", "0 12 * * 5/2"))
        got, _ = expand_due(s, "2026-03-01T00:00Z", "2026-03-15T00:00Z")
        assert s.rule.startswith("robfig:") and [t.isoweekday() for t in got] == [5, 5]

    def test_calendar_mode_runs_both_passes_of_a_repeated_time(self):
        s = presets.kubernetes(cron="calendar").apply(
            calsim.Schedule("j", "America/New_York", "2026-01-01T00:00", "30 1 * * *"))
        got, _ = expand_due(s, "2026-11-01T00:00Z", "2026-11-02T00:00Z")
        assert got == [utc("2026-11-01T05:30Z"), utc("2026-11-01T06:30Z")]


class TestTemporal:
    def test_defaults_one_year_window_and_earliest_after_an_outage(self):
        p = presets.temporal()
        assert (p.gap, p.fold, p.tick) == ("skip", "both", "1s")
        assert (p.policy.catchup, p.policy.overlap) == ("earliest", "skip")
        assert p.policy.max_lateness_us == 365 * DAY_US
        assert p.policy.jitter_us == 0

    @pytest.mark.parametrize(
        "overlap, calsim_overlap, catchup",
        [
            ("SKIP", "skip", "earliest"),
            ("BUFFER_ONE", "buffer_one", "all"),
            ("BUFFER_ALL", "buffer_all", "all"),
            ("CANCEL_OTHER", "cancel_other", "latest"),
            ("TERMINATE_OTHER", "cancel_other", "latest"),
            ("ALLOW_ALL", "allow", "all"),
        ],
    )
    def test_each_overlap_policy_maps_to_overlap_and_catchup(self, overlap, calsim_overlap, catchup):
        p = presets.temporal(overlap=overlap)
        assert (p.policy.overlap, p.policy.catchup) == (calsim_overlap, catchup)

    def test_after_outage_latest_is_the_other_reading_and_is_noted(self):
        p = presets.temporal(after_outage="latest")
        assert p.policy.catchup == "latest"
        assert any(n.startswith("after_outage='latest'") for n in p.notes)

    def test_after_outage_has_no_effect_beside_skip(self):
        p = presets.temporal(overlap="BUFFER_ALL", after_outage="latest")
        assert p.policy.catchup == "all"
        assert "after_outage='latest' has no effect with overlap='BUFFER_ALL'" in p.notes

    def test_catchup_window_below_10s_is_clamped_as_the_server_does(self):
        p = presets.temporal(catchup_window="3s")
        assert p.policy.max_lateness_us == 10 * US
        assert any("clamped to 10 s" in n for n in p.notes)
        assert presets.temporal(catchup_window=dt.timedelta(minutes=1)).policy.max_lateness_us == 60 * US

    def test_jitter_becomes_calsim_jitter(self):
        assert presets.temporal(jitter="PT5M").policy.jitter_us == 300 * US


class TestApscheduler:
    def test_defaults_one_second_grace_coalesce_one_instance(self):
        p = presets.apscheduler()
        assert p.policy.max_lateness_us == 1 * US  # misfire_grace_time=1
        assert p.policy.suspend_catchup == "latest"  # coalesce=True
        assert p.policy.catchup == "skip"  # the default memory job store forgets on a restart
        assert p.policy.overlap == "skip"  # max_instances=1
        assert p.policy.misfire_grace is None and p.policy.jitter_us == 0

    def test_dst_is_crontriggers_own_walk_of_the_zone(self):
        p = presets.apscheduler()
        assert (p.gap, p.fold, p.dialect, p.wildcard, p.fallback) == (
            "scheduler", "scheduler", "apscheduler", None, ("shift", "both"))
        assert p.measured.startswith("APScheduler 3.11.3")
        assert {d.topic for d in p.differences} >= {"DST (what APScheduler does)", "catch-up", "runs"}

    def test_grace_none_means_any_lateness_runs(self):
        assert presets.apscheduler(misfire_grace_time=None).policy.max_lateness is None

    def test_no_coalesce_runs_every_missed_time_within_grace(self):
        p = presets.apscheduler(misfire_grace_time=3600, coalesce=False, jobstore="persistent")
        assert (p.policy.catchup, p.policy.max_lateness_us, p.policy.backlog) == ("all", 3600 * US, "in_turn")

    def test_max_instances_is_max_active_with_the_rest_skipped(self):
        p = presets.apscheduler(max_instances=3)
        assert (p.policy.overlap, p.policy.max_active) == ("skip", 3)
        assert not any("max_instances" in str(n) and "unbounded" in str(n) for n in p.notes)

    def test_coalesce_false_works_each_backlog_on_one_instance_whatever_max_instances(self):
        assert presets.apscheduler(coalesce=False, max_instances=3).policy.backlog == "in_turn"

    def test_jitter_seconds(self):
        assert presets.apscheduler(jitter=30).policy.jitter_us == 30 * US

    def test_dst_gap_docs_skips_every_gap_time_and_runs_both_passes(self):
        p = presets.apscheduler(dst_gap="docs")
        assert (p.gap, p.fold, p.wildcard, p.dialect) == ("skip", "both", None, "apscheduler")
        assert any(d.text.startswith("dst_gap='docs': the documented behaviour") for d in p.differences)

    def test_apply_rewrites_a_cron_rule_as_the_crontrigger_with_its_times(self):
        s = presets.apscheduler().apply(calsim.Schedule("j", "UTC", "2026-01-01T00:00", "*/15 9-17 * * 1-5"))
        assert (s.rule, s.kind, s.gap, s.fold) == (
            "apscheduler:day_of_week='mon-fri' hour='9-17' minute='0,15,30,45' second='0'", "apscheduler",
            "scheduler", "scheduler")

    def test_apply_keeps_sunday_zero_as_sunday(self):
        # calsim's cron reads 0 as Sunday; the rule is written with names, so 3.x's 0 = Monday never enters.
        s = presets.apscheduler().apply(calsim.Schedule("j", "UTC", "2026-01-01T00:00", "0 2 * * 0"))
        got, _ = expand_due(s, utc("2026-01-01T00:00Z"), utc("2026-01-15T00:00Z"))
        assert s.rule == "apscheduler:day_of_week='sun' hour='2' minute='0' second='0'"
        assert [t.weekday() for t in got] == [6, 6]

    def test_apply_fires_either_day_field_as_an_or_trigger(self):
        s = presets.apscheduler().apply(calsim.Schedule("j", "UTC", "2026-01-01T00:00", "0 0 1 * MON"))
        assert " | " in s.rule and s.parsed_rule.explain().startswith("OrTrigger([CronTrigger(day='1'")

    def test_apply_refuses_a_cron_rule_no_crontrigger_expression_says(self):
        s = calsim.Schedule("last-weekday", "UTC", "2026-01-01T00:00", "0 18 LW * *")
        with pytest.raises(calsim.RuleError, match=r"^schedule 'last-weekday': apscheduler: apscheduler: CronTrigger "
                                                   r"has no expression for day-of-month 'LW'"):
            presets.apscheduler().apply(s)
        with pytest.warns(UserWarning, match="1 schedule"):
            assert presets.apscheduler().apply([s], refused="drop") == []

    def test_other_rule_kinds_keep_their_rule_and_shift_as_a_set_hour_does(self):
        s = presets.apscheduler().apply(calsim.Schedule("j", "UTC", "2026-01-01T02:30", "FREQ=DAILY"))
        assert (s.kind, s.parsed_rule.text, s.gap, s.fold) == ("rrule", "FREQ=DAILY", "shift", "both")
        own = presets.apscheduler().apply(calsim.Schedule("j", "UTC", "2026-01-01T00:00", "apscheduler:0 2 * * 0"))
        assert own.rule == "apscheduler:day_of_week='0' hour='2' minute='0' second='0'"  # from_crontab: Monday


class TestQuartz:
    @pytest.mark.parametrize(
        "instruction, catchup",
        [("SMART_POLICY", "latest"), ("FIRE_ONCE_NOW", "latest"), ("DO_NOTHING", "skip"),
         ("IGNORE_MISFIRE_POLICY", "all")],
    )
    def test_misfire_instruction_maps_to_catchup(self, instruction, catchup):
        ram = presets.quartz(misfire_instruction=instruction)
        assert (ram.policy.suspend_catchup, ram.policy.catchup, ram.policy.down_is_missed) == (catchup, "skip", True)
        jdbc = presets.quartz(misfire_instruction=instruction, job_store="jdbc")
        assert (jdbc.policy.catchup, jdbc.policy.suspend_catchup, jdbc.policy.limit_edge) == (
            catchup, catchup, "on_time")

    def test_disallow_concurrent_with_ignore_misfire_runs_every_blocked_time(self):
        p = presets.quartz(misfire_instruction="IGNORE_MISFIRE_POLICY", disallow_concurrent=True)
        assert p.policy.overlap == "buffer_all"

    def test_defaults_threshold_60s_and_concurrent_runs(self):
        p = presets.quartz()
        assert (p.policy.misfire_grace_us, p.policy.overlap, p.gap, p.fold) == (
            60 * US, "allow", "scheduler", "scheduler")
        assert p.fallback == ("skip", "second")  # what Quartz's own walk gives where calsim does not walk it

    def test_disallow_concurrent_buffers_one(self):
        assert presets.quartz(disallow_concurrent=True, misfire_threshold_ms=5000).policy.overlap == "buffer_one"
        assert presets.quartz(misfire_threshold_ms=5000).policy.misfire_grace_us == 5 * US


class TestSystemd:
    def test_defaults_no_catch_up_tick_is_accuracy_and_dst_is_measured(self):
        p = presets.systemd()
        assert (p.policy.catchup, p.policy.overlap, p.policy.jitter_us, p.tick) == ("skip", "buffer_one", 0, "1min")
        assert (p.policy.down_is_missed, p.policy.recovery_wake, p.policy.suspend_catchup) == (True, False, "latest")
        assert (p.gap, p.fold, p.fallback) == ("scheduler", "scheduler", ("skip", "first"))
        assert "systemd 252" in p.measured

    def test_persistent_fires_once_for_missed_elapses(self):
        assert presets.systemd(persistent=True).policy.catchup == "latest"

    def test_accuracy_and_randomized_delay(self):
        p = presets.systemd(accuracy_sec="90s", randomized_delay_sec="1h")
        assert (p.tick, p.policy.jitter_us) == ("90s", 3600 * US)
        assert presets.systemd(accuracy_sec="15min").tick == "15min"
        assert calsim.Scenario("t", [], "2026-01-01T00:00Z", "2026-01-02T00:00Z", tick=p.tick).tick_us == 90 * US

    def test_fixed_random_delay_is_noted_as_approximated(self):
        assert any(n.startswith("fixed_random_delay=True") for n in presets.systemd(fixed_random_delay=True).notes)

    def test_defer_reactivation_drops_elapses_during_a_run(self):
        assert presets.systemd(defer_reactivation=True).policy.overlap == "skip"


class TestCronie:
    def test_no_catch_up_concurrent_runs_one_minute_tick(self):
        p = presets.cronie()
        assert (p.policy.catchup, p.policy.overlap, p.tick) == ("skip", "allow", "1min")

    @pytest.mark.parametrize(
        "expr, gap, fold",
        [
            ("30 2 * * *", "next_valid", "first"),
            ("0 1-3 * * MON", "next_valid", "first"),
            ("@daily", "next_valid", "first"),
            ("*/30 * * * *", "skip", "both"),
            ("0 * * * *", "skip", "both"),
            ("@hourly", "skip", "both"),
            ("0 */2 * * *", "skip", "both"),  # '*/2' starts with '*': wildcard, as cronsim and cron's HR_STAR
            ("*/30 2 * * *", "skip", "both"),
        ],
    )
    def test_auto_classifies_like_cronsim(self, expr, gap, fold):
        s = presets.cronie().apply(calsim.Schedule("j", "Europe/Berlin", "2026-01-01T00:00", expr))
        assert (s.gap, s.fold) == (gap, fold)

    def test_job_kind_forces_one_kind(self):
        s = calsim.Schedule("j", "Europe/Berlin", "2026-01-01T00:00", "*/30 * * * *")
        assert (presets.cronie(job_kind="fixed").apply(s).gap, presets.cronie(job_kind="wildcard").apply(s).gap) == (
            "next_valid", "skip")

    def test_non_cron_rules_count_as_fixed_time(self):
        s = calsim.Schedule("j", "Europe/Berlin", "2026-01-01T02:30", "FREQ=HOURLY")
        assert presets.cronie().dst_for(s) == ("next_valid", "first")


class TestEventbridge:
    def test_defaults_skip_gap_run_once_in_fold_event_age_one_day(self):
        p = presets.eventbridge()
        assert (p.gap, p.fold, p.tick) == ("skip", "first", "1min")
        assert (p.policy.catchup, p.policy.overlap, p.policy.max_lateness_us, p.policy.jitter_us) == (
            "all", "allow", 86400 * US, 0)
        assert dict(p.settings)["maximum_retry_attempts"] == 185

    def test_flexible_window_is_jitter(self):
        assert presets.eventbridge(flexible_window_minutes=15).policy.jitter_us == 15 * 60 * US

    def test_event_age_is_max_lateness(self):
        assert presets.eventbridge(maximum_event_age_seconds=60).policy.max_lateness_us == 60 * US


ALL = [presets.kubernetes, presets.temporal, presets.apscheduler, presets.quartz, presets.systemd,
       presets.cronie, presets.eventbridge]


class TestPreset:
    @pytest.mark.parametrize("make", ALL, ids=lambda f: f.__name__)
    def test_each_default_preset_is_frozen_with_notes_and_sources(self, make):
        p = make()
        assert p.name == make.__name__ and isinstance(p.policy, Policy)
        assert p.notes and all(isinstance(n, str) for n in p.notes)
        assert p.sources and all(u.startswith("https://") for u in p.sources)
        assert calsim.Scenario("t", [], "2026-01-01T00:00Z", "2026-01-02T00:00Z", tick=p.tick).tick_us > 0
        with pytest.raises(dataclasses.FrozenInstanceError):
            p.gap = "shift"  # type: ignore[misc]

    def test_a_rule_the_scheduler_does_not_walk_gets_the_default_fallback_skip_both(self):
        p = presets.Preset("walker", Policy(), gap="scheduler", fold="scheduler", tick="1s")
        s = calsim.Schedule("a", "America/New_York", "2026-01-01T00:00", "FREQ=DAILY;BYHOUR=1;BYMINUTE=30")
        assert p.dst_for(s) == ("skip", "both")

    def test_apply_one_gives_one_and_a_list_gives_a_list(self):
        a = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "0 3 * * *")
        b = calsim.Schedule("b", "UTC", "2026-01-01T00:00", "*/5 * * * *")
        p = presets.kubernetes(concurrency_policy="Forbid")
        one = p.apply(a)
        assert isinstance(one, calsim.Schedule) and one.policy == p.policy
        assert (one.rule, one.gap, one.fold) == ("robfig:0 3 * * *", "scheduler", "scheduler")
        many = p.apply((a, b))
        assert [s.id for s in many] == ["a", "b"] and all(s.policy.overlap == "buffer_latest" for s in many)

    def test_apply_keeps_the_workload_fields_of_an_existing_policy(self):
        own = Policy(catchup="all", overlap="allow", duration=LogNormal("10min", "30min"), cost=2.5,
                     account="tenant-a", on_budget="skip", priority=3)
        s = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "0 3 * * *", policy=own)
        out = presets.quartz(misfire_instruction="DO_NOTHING").apply(s).policy
        assert (out.catchup, out.misfire_grace_us, out.overlap) == ("skip", 60 * US, "allow")
        assert (out.duration, out.cost, out.account, out.on_budget, out.priority) == (
            own.duration, 2.5, "tenant-a", "skip", 3)

    def test_apply_rejects_what_is_not_a_schedule(self):
        with pytest.raises(calsim.InputError, match=r"^schedules: item 0 is str 'x', not a Schedule$"):
            presets.cronie().apply(["x"])


# ---------------------------------------------------------------- cronie against cronsim

# The 2026 transitions used (tzdata 2026f), UTC instant of the change:
#   America/New_York   2026-03-08T07:00Z 02:00 EST -> 03:00 EDT   2026-11-01T06:00Z 02:00 EDT -> 01:00 EST
#   Europe/Berlin      2026-03-29T01:00Z 02:00 -> 03:00           2026-10-25T01:00Z 03:00 -> 02:00
#   Australia/Lord_Howe 2026-10-03T15:30Z 02:00 -> 02:30 (+10:30 -> +11, a 30-minute DST)
#                      2026-04-04T15:00Z 02:00 -> 01:30
#   America/Santiago   2026-09-06T04:00Z 00:00 -> 01:00 (the gap is local midnight)
#                      2026-04-05T03:00Z 00:00 -> 23:00 the day before
TRANSITIONS = [
    ("America/New_York", "2026-03-08T07:00Z", "2026-03-08T02:30", "gap"),
    ("America/New_York", "2026-11-01T06:00Z", "2026-11-01T01:30", "fold"),
    ("Europe/Berlin", "2026-03-29T01:00Z", "2026-03-29T02:30", "gap"),
    ("Europe/Berlin", "2026-10-25T01:00Z", "2026-10-25T02:30", "fold"),
    ("Australia/Lord_Howe", "2026-10-03T15:30Z", "2026-10-04T02:15", "gap"),
    ("Australia/Lord_Howe", "2026-04-04T15:00Z", "2026-04-05T01:45", "fold"),
    ("America/Santiago", "2026-09-06T04:00Z", "2026-09-06T00:30", "gap"),
    ("America/Santiago", "2026-04-05T03:00Z", "2026-04-04T23:30", "fold"),
]
FIXED = ["30 2 * * *", "15 1 * * *", "45 1 * * *", "15 2 * * *", "30 0 * * *", "30 23 * * *", "0 2 * * *",
         "0,30 2 * * *", "0 0 * * *"]
WILDCARD = ["*/30 * * * *", "0 * * * *", "*/15 * * * *", "30 * * * *", "*/30 2 * * *", "0 */2 * * *"]


# Pinned differences: wildcard times that exist on the wall clock next to Lord Howe's
# 30-minute transitions, which cron's minute-by-minute matching runs (Debian cron.8:
# wildcard jobs follow the new time) and calsim runs, but cronsim 2.9 misses. Its minute
# and hour searches jump in real time (`tick(delta * 60)`, `tick(3600)`), and a jump across
# a 30-minute change overshoots the matching minute.
CRONSIM_MISSES = {
    ("2026-10-03T15:30Z", "30 * * * *"): ["2026-10-03T15:30Z"],  # 02:30 +11:00, right after the jump
    ("2026-04-04T15:00Z", "30 * * * *"): ["2026-04-04T15:00Z"],  # 01:30 +10:30, the second pass
    ("2026-04-04T15:00Z", "*/30 2 * * *"): ["2026-04-04T15:30Z"],  # 02:00 +10:30
    ("2026-04-04T15:00Z", "0 */2 * * *"): ["2026-04-04T15:30Z"],  # 02:00 +10:30
}


def cronsim_due(expr, zone, lo, hi):
    """cronsim's instants in [lo, hi): it yields strictly after its start, so start one second early."""
    out = []
    for t in CronSim(expr, (lo - dt.timedelta(seconds=1)).astimezone(ZoneInfo(zone))):
        t = t.astimezone(UTC)
        if t >= hi:
            return out
        out.append(t)
    return out


def around(change, hours=14):
    t = utc(change)
    return t - dt.timedelta(hours=hours), t + dt.timedelta(hours=hours)


class TestCronieAgainstCronsim:
    @pytest.mark.parametrize("zone, change, wall, kind", TRANSITIONS)
    def test_the_chosen_days_really_have_the_transition(self, zone, change, wall, kind):
        r = calsim.resolve([wall], zone, "2026f")
        assert r["kind"][0] == kind

    @pytest.mark.parametrize("expr", FIXED + WILDCARD)
    @pytest.mark.parametrize("zone, change, wall, kind", TRANSITIONS, ids=lambda v: str(v))
    def test_fire_times_match_cronsim(self, zone, change, wall, kind, expr):
        lo, hi = around(change)
        s = presets.cronie().apply(calsim.Schedule("job", zone, "2026-01-01T00:00", expr))
        got, _ = expand_due(s, lo, hi)
        oracle = cronsim_due(expr, zone, lo, hi)
        extra = [utc(t) for t in CRONSIM_MISSES.get((change, expr), ())]
        assert not set(extra) & set(oracle)  # still missing in cronsim: else drop the entry
        assert got == sorted(oracle + extra)

    def test_fixed_time_job_in_the_gap_runs_at_the_change(self):
        lo, hi = around("2026-03-08T07:00Z")
        s = presets.cronie().apply(calsim.Schedule("job", "America/New_York", "2026-01-01T00:00", "30 2 * * *"))
        _, f = expand_due(s, lo, hi)
        row = f.filter(f["nominal_local"] == dt.datetime(2026, 3, 8, 2, 30)).row(0, named=True)
        assert (row["due_utc"], row["notes"]) == (utc("2026-03-08T07:00Z"), ["dst_gap_next_valid"])

    def test_fixed_time_job_in_the_fold_runs_once_wildcard_twice(self):
        lo, hi = around("2026-11-01T06:00Z")
        fixed = presets.cronie().apply(calsim.Schedule("f", "America/New_York", "2026-01-01T00:00", "30 1 * * *"))
        wild = presets.cronie().apply(calsim.Schedule("w", "America/New_York", "2026-01-01T00:00", "30 * * * *"))
        f_due, _ = expand_due(fixed, lo, hi)
        w_due, _ = expand_due(wild, lo, hi)
        assert utc("2026-11-01T05:30Z") in f_due and utc("2026-11-01T06:30Z") not in f_due
        assert {utc("2026-11-01T05:30Z"), utc("2026-11-01T06:30Z")} <= set(w_due)

    def test_lord_howe_half_hour_gap_runs_fixed_job_at_0230(self):
        lo, hi = around("2026-10-03T15:30Z")
        s = presets.cronie().apply(calsim.Schedule("job", "Australia/Lord_Howe", "2026-01-01T00:00", "15 2 * * *"))
        got, _ = expand_due(s, lo, hi)
        assert utc("2026-10-03T15:30Z") in got  # 02:30 +11:00, the first instant after the gap

    def test_two_fixed_times_in_one_gap_keep_one_instant_as_cronsim_yields_one(self):
        # cron runs both at the change; cronsim yields one; calsim keeps both rows, one merged.
        lo, hi = around("2026-03-08T07:00Z")
        s = presets.cronie().apply(calsim.Schedule("job", "America/New_York", "2026-01-01T00:00", "0,30 2 * * *"))
        got, f = expand_due(s, lo, hi)
        day = f.filter(f["nominal_local"].dt.date() == dt.date(2026, 3, 8))
        assert day["notes"].to_list() == [["dst_gap_next_valid", "merged_with:2026-03-08T02:30:00"],
                                          ["dst_gap_next_valid", "merged_into:2026-03-08T02:00:00"]]
        assert got.count(utc("2026-03-08T07:00Z")) == 1 == cronsim_due(
            "0,30 2 * * *", "America/New_York", lo, hi).count(utc("2026-03-08T07:00Z"))

    @pytest.mark.parametrize("expr", ["30 9 * * *", "0 * * * *"])
    def test_apia_skipped_day_matches_cronsim_not_cronies_3h_rule(self, expr):
        # Pacific/Apia skipped 2011-12-30 (a 24 h jump). cronie's man page treats changes of
        # 3 h or more as clock corrections (nothing run for the skipped interval); cronsim and
        # calsim still run the fixed-time job at the change (2011-12-31 00:00 +14). Pinned.
        lo, hi = utc("2011-12-28T22:00:01Z"), utc("2012-01-01T10:00Z")
        s = presets.cronie().apply(calsim.Schedule("job", "Pacific/Apia", "2011-12-01T00:00", expr))
        got, _ = expand_due(s, lo, hi)
        assert got == cronsim_due(expr, "Pacific/Apia", lo, hi)
        if expr == "30 9 * * *":
            assert utc("2011-12-30T10:00Z") in got
        assert any("3 h or more" in n for n in presets.cronie().notes)


# ---------------------------------------------------------------- apscheduler against CronTrigger

# The real CronTrigger (APScheduler 3.11.3) on zoneinfo built from calsim's release (oracles.apscheduler_clock.zone).
# Every 2026 transition of these zones, a window of 14 h either side.
APS_ZONES = ("America/New_York", "Europe/Berlin", "Europe/Dublin", "Australia/Lord_Howe", "Pacific/Chatham",
             "Asia/Beirut", "Africa/Cairo", "America/Santiago", "Australia/Sydney", "Europe/Helsinki",
             "America/Havana")
APS_FIELDS = [("2", "30"), ("3", "30"), ("1", "30"), ("3", "0"), ("4", "0"), ("*", "*/30"), ("*", "0"),
              ("*", "30"), ("*/2", "0"), ("1,3", "15"), ("0", "0"), ("0", "30"), ("23", "30"), ("2", "45"),
              ("3", "50"), ("*", "*/15"), ("2-4", "15"), ("0-2", "0")]
# (the schedule's rule as calsim is given it, the CronTrigger keyword arguments an app would write: a list of
# several is an OrTrigger of them; "crontab" is CronTrigger.from_crontab)
APS_RULES = [(f"{m} {h} * * *", [{"hour": h, "minute": m}]) for h, m in APS_FIELDS] + [
    ("0 0 * * 0", [{"day_of_week": "sun", "hour": 0, "minute": 0}]),
    ("30 2 * * 1-5", [{"day_of_week": "mon-fri", "hour": 2, "minute": 30}]),
    ("0 12 * * 6", [{"day_of_week": "sat", "hour": 12, "minute": 0}]),
    ("0 0 1 * *", [{"day": 1, "hour": 0, "minute": 0}]),
    ("0 0 */2 * *", [{"day": "*/2", "hour": 0, "minute": 0}]),
    ("0 3 L * *", [{"day": "last", "hour": 3, "minute": 0}]),
    ("15 1 * * 0L", [{"day": "last sun", "hour": 1, "minute": 15}]),
    ("0 2 * * 0#1", [{"day": "1st sun", "hour": 2, "minute": 0}]),
    ("0 0 1 * 1", [{"day": 1, "hour": 0, "minute": 0}, {"day_of_week": "mon", "hour": 0, "minute": 0}]),
    ("apscheduler:minute='*/30' second='*/20'", [{"minute": "*/30", "second": "*/20"}]),
    ("apscheduler:hour='0-3' minute='0,30' second='30'", [{"hour": "0-3", "minute": "0,30", "second": 30}]),
    ("apscheduler:30 2 * * 6", "crontab"),  # 3.x: 6 is Sunday
]
APS_YEAR_RULES = ("30 2 * * *", "0 0 * * *", "0 * * * *", "0 0 * * 0", "0 0 1 * 1")
APS_YEAR_ZONES = APS_ZONES if os.environ.get("CALSIM_LONG") == "1" else (
    "America/New_York", "Pacific/Chatham", "Asia/Beirut", "Australia/Lord_Howe")


def aps_trigger(rule, zone):
    text, kws = rule
    tz = aps_clock.zone(zone)
    if kws == "crontab":
        return CronTrigger.from_crontab(text.split(":", 1)[1], timezone=tz)
    triggers = [CronTrigger(timezone=tz, **kw) for kw in kws]
    return triggers[0] if len(triggers) == 1 else OrTrigger(triggers)


def crontrigger_due(trigger, lo, hi, wake="later"):
    """Fire times in [lo, hi) as a running scheduler gets them: get_next_fire_time(previous fire, now). ``now`` is
    a microsecond after the previous fire (``wake="later"``: any real clock) or exactly it (``"exact"``: the fake
    clock of tests/oracles/apscheduler_clock.py, which wakes on the fire time)."""
    step = dt.timedelta(microseconds=1 if wake == "later" else 0)
    prev, now, out = None, lo.astimezone(trigger.timezone if hasattr(trigger, "timezone") else UTC), []
    while True:
        t = trigger.get_next_fire_time(prev, now)
        if t is None or t >= hi:
            return out
        out.append(t.astimezone(UTC))
        prev, now = t, t.astimezone(UTC) + step


def aps_schedule(rule, zone, **kw):
    return presets.apscheduler(**kw).apply(calsim.Schedule("job", zone, "2025-12-01T00:00", rule))


def aps_transitions(zone):
    tab = calsim.release("2026f").table(zone).utc
    return [dt.datetime.fromtimestamp(int(t), UTC) for t in tab[(tab >= 1767225600) & (tab < 1798761600)]]


def twice_at_exact_wake(exact, later):
    """The fires ``exact`` has beyond ``later``: each the same instant as the fire before it (the stated
    difference), else None."""
    extra, i = [], 0
    for k, t in enumerate(exact):
        if i < len(later) and later[i] == t:
            i += 1
        elif k and exact[k - 1] == t:
            extra.append(t)
        else:
            return None
    return extra if i == len(later) else None


@pytest.fixture(scope="module")
def aps_tally():
    return {}


@pytest.fixture
def aps_counts(aps_tally, report):
    """Fire times compared with the real CronTrigger, one line of the run's summary (updated by each test)."""
    if "_line" not in aps_tally:
        report.append("")
        aps_tally["_line"] = (report, len(report) - 1)
    yield aps_tally
    lines, i = aps_tally["_line"]
    lines[i] = (f"apscheduler preset vs APScheduler {aps_clock.APSCHEDULER_VERSION}'s CronTrigger (tzdata 2026f, "
                f"{len(APS_RULES)} rules): " + ", ".join(f"{k} {v:,}" for k, v in aps_tally.items() if k != "_line")
                + "; 0 disagreements")


class TestApschedulerAgainstCronTrigger:
    @pytest.mark.parametrize("zone", APS_ZONES)
    def test_fire_times_next_to_every_2026_transition_are_crontriggers(self, zone, aps_counts):
        n = twice = 0
        for rule in APS_RULES:
            s, trigger = aps_schedule(rule[0], zone), aps_trigger(rule, zone)
            for change in aps_transitions(zone):
                lo, hi = change - dt.timedelta(hours=14), change + dt.timedelta(hours=14)
                got, _ = expand_due(s, lo, hi)
                later = crontrigger_due(trigger, lo, hi)
                assert got == later, (rule[0], zone, change, sorted(set(got) ^ set(later)))
                extra = twice_at_exact_wake(crontrigger_due(trigger, lo, hi, wake="exact"), later)
                assert extra is not None, (rule[0], zone, change)
                n, twice = n + len(later), twice + len(extra)
        key = f"fire times within 14 h of every 2026 transition ({len(APS_ZONES)} zones)"
        aps_counts[key] = aps_counts.get(key, 0) + n
        key = "of them given twice at a fake clock's exact wake (stated)"
        aps_counts[key] = aps_counts.get(key, 0) + twice

    @pytest.mark.parametrize("zone", APS_YEAR_ZONES)
    def test_a_year_of_fire_times_is_crontriggers(self, zone, aps_counts):
        lo, hi = utc("2026-01-01T00:00Z"), utc("2027-01-01T00:00Z")
        n = 0
        for expr in APS_YEAR_RULES:
            rule = next(r for r in APS_RULES if r[0] == expr) if expr != "0 0 * * *" else (expr, [{"hour": 0}])
            got, _ = expand_due(aps_schedule(expr, zone), lo, hi)
            want = crontrigger_due(aps_trigger(rule, zone), lo, hi)
            assert got == want, (expr, zone, sorted(set(got) ^ set(want))[:6])
            n += len(want)
        key = f"fire times over 2026 ({len(APS_YEAR_RULES)} rules, {len(APS_YEAR_ZONES)} zones)"
        aps_counts[key] = aps_counts.get(key, 0) + n

    def test_a_gap_time_under_a_set_hour_runs_shifted_by_the_gap(self):
        # 02:30 on New York's spring day comes back as 02:30 fold 0 = 07:30Z = 03:30 EDT: its own row.
        lo, hi = around("2026-03-08T07:00Z")
        assert utc("2026-03-08T07:30Z") in crontrigger_due(aps_trigger(APS_RULES[0], "America/New_York"), lo, hi)
        got, f = expand_due(aps_schedule("30 2 * * *", "America/New_York"), lo, hi)
        day = f.filter(f["nominal_local"].dt.date() == dt.date(2026, 3, 8))
        assert day.select("nominal_local", "due_utc", "notes").rows() == [
            (dt.datetime(2026, 3, 8, 2, 30), None, ["dst_gap_skipped"]),
            (dt.datetime(2026, 3, 8, 3, 30), utc("2026-03-08T07:30Z"), ["dst_extra:apscheduler"])]

    def test_docs_reading_skips_the_gap_time_unlike_the_code(self):
        lo, hi = around("2026-03-08T07:00Z")
        got, _ = expand_due(aps_schedule("30 2 * * *", "America/New_York", dst_gap="docs"), lo, hi)
        real = crontrigger_due(aps_trigger(APS_RULES[0], "America/New_York"), lo, hi)
        assert got == [t for t in real if t != utc("2026-03-08T07:30Z")] and len(got) == len(real) - 1

    def test_several_gap_minutes_under_one_set_hour_run_only_the_first(self):
        # hour=3, minute='*/30' on Helsinki's spring day: CronTrigger returns the shifted 03:00 (01:00Z) and then
        # counts past the gap: 03:30 does not run. Reproduced (it was a pinned difference before the walk).
        lo, hi = around("2026-03-29T01:00Z")
        s = aps_schedule("*/30 3 * * *", "Europe/Helsinki")
        got, _ = expand_due(s, lo, hi)
        real = crontrigger_due(aps_trigger(("", [{"hour": 3, "minute": "*/30"}]), "Europe/Helsinki"), lo, hi)
        assert got == real and utc("2026-03-29T01:00Z") in got and utc("2026-03-29T01:30Z") not in got

    @pytest.mark.parametrize("zone, day", [("Asia/Beirut", "2026-03-29"), ("Africa/Cairo", "2026-04-24"),
                                           ("America/Santiago", "2026-09-06"), ("America/Havana", "2026-03-08")])
    def test_a_midnight_in_a_gap_is_skipped_as_crontrigger_counts_into_the_day(self, zone, day):
        # The day is reached by incrementing it in UTC (datetime_utc_add), which lands past the gap, at 01:00.
        lo, hi = utc(day + "T00:00Z") - dt.timedelta(days=2), utc(day + "T00:00Z") + dt.timedelta(days=2)
        got, f = expand_due(aps_schedule("0 0 * * *", zone), lo, hi)
        assert got == crontrigger_due(aps_trigger(APS_RULES[10], zone), lo, hi)
        row = f.filter(f["nominal_local"] == dt.datetime.fromisoformat(day)).row(0, named=True)
        assert (row["due_utc"], row["notes"]) == (None, ["dst_gap_skipped"])

    def test_chathams_second_pass_is_lost_as_the_walk_sets_the_minute_past_it(self):
        lo, hi = around("2026-04-04T14:00Z")
        got, f = expand_due(aps_schedule("*/15 * * * *", "Pacific/Chatham"), lo, hi)
        assert got == crontrigger_due(aps_trigger(APS_RULES[15], "Pacific/Chatham"), lo, hi)
        lost = f.filter(f["notes"].list.contains("dst_lost:apscheduler"))
        assert lost["nominal_local"].dt.strftime("%H:%M").to_list() == ["02:45", "03:00", "03:15", "03:30"]
        assert lost["fold"].to_list() == [1, 1, 1, 1]

    def test_stated_difference_a_shifted_time_on_a_real_one_comes_twice_only_at_an_exact_wake(self):
        # hour='2-4', minute=15 on New York's spring day: 02:15 shifted = 07:15Z = 03:15 EDT, also the real 03:15.
        # A scheduler asking at exactly that instant gets it twice; one whose clock moved on (any real one) once,
        # as calsim fires it.
        lo, hi = around("2026-03-08T07:00Z")
        trigger = aps_trigger(APS_RULES[16], "America/New_York")
        exact, later = crontrigger_due(trigger, lo, hi, wake="exact"), crontrigger_due(trigger, lo, hi)
        got, _ = expand_due(aps_schedule("15 2-4 * * *", "America/New_York"), lo, hi)
        assert exact.count(utc("2026-03-08T07:15Z")) == 2 and later.count(utc("2026-03-08T07:15Z")) == 1
        assert got == later == sorted(set(exact))
        assert any("asks at exactly that fire time" in n for n in presets.apscheduler().notes)


# ---------------------------------------------------------------- bad input

BAD = [
    (presets.kubernetes, {"concurrency_policy": "forbid"},
     "concurrency_policy: unknown value 'forbid' (allowed: 'Allow', 'Forbid' or 'Replace') (did you mean 'Forbid'?)"),
    (presets.kubernetes, {"too_many_missed": "doc"},
     "too_many_missed: unknown value 'doc' (allowed: 'code' or 'docs') (did you mean 'docs'?)"),
    (presets.kubernetes, {"starting_deadline_seconds": -1},
     "starting_deadline_seconds: invalid value -1 (allowed: an integer >= 0 or None)"),
    (presets.kubernetes, {"time_zone": "Europe/Berlinn"},
     "time_zone: invalid value 'Europe/Berlinn' (allowed: an IANA zone name such as 'Europe/Berlin', or None)"),
    (presets.kubernetes, {"suspend": "yes"}, "suspend: invalid value 'yes' (allowed: True or False)"),
    (presets.temporal, {"overlap": "Skip"},
     "overlap: unknown value 'Skip' (allowed: 'SKIP', 'BUFFER_ONE', 'BUFFER_ALL', 'CANCEL_OTHER', "
     "'TERMINATE_OTHER' or 'ALLOW_ALL') (did you mean 'SKIP'?)"),
    (presets.temporal, {"after_outage": "first"},
     "after_outage: unknown value 'first' (allowed: 'earliest' or 'latest')"),
    (presets.temporal, {"catchup_window": "1 year"},
     "catchup_window: invalid value '1 year' (allowed: a duration such as '30s', '1min', 'PT1H', "
     "a number of seconds)"),
    (presets.apscheduler, {"dst_gap": "doc"},
     "dst_gap: unknown value 'doc' (allowed: 'code' or 'docs') (did you mean 'docs'?)"),
    (presets.apscheduler, {"misfire_grace_time": 0},
     "misfire_grace_time: invalid value 0 (allowed: a number of seconds > 0 or None)"),
    (presets.apscheduler, {"max_instances": 0}, "max_instances: invalid value 0 (allowed: an integer >= 1)"),
    (presets.apscheduler, {"coalesce": 1}, "coalesce: invalid value 1 (allowed: True or False)"),
    (presets.quartz, {"misfire_instruction": "SMART"},
     "misfire_instruction: unknown value 'SMART' (allowed: 'SMART_POLICY', 'FIRE_ONCE_NOW', 'DO_NOTHING' or "
     "'IGNORE_MISFIRE_POLICY') (did you mean 'SMART_POLICY'?)"),
    (presets.quartz, {"misfire_threshold_ms": 1.5},
     "misfire_threshold_ms: invalid value 1.5 (allowed: an integer >= 0)"),
    (presets.systemd, {"accuracy_sec": "1 fortnight"},
     "accuracy_sec: invalid value '1 fortnight' (allowed: a duration such as '30s', '1min', 'PT1H', "
     "a number of seconds)"),
    (presets.systemd, {"persistent": "true"}, "persistent: invalid value 'true' (allowed: True or False)"),
    (presets.cronie, {"job_kind": "fixed-time"},
     "job_kind: unknown value 'fixed-time' (allowed: 'auto', 'fixed' or 'wildcard') (did you mean 'fixed'?)"),
    (presets.eventbridge, {"flexible_window_minutes": 0},
     "flexible_window_minutes: invalid value 0 (allowed: an integer 1..1440 or None)"),
    (presets.eventbridge, {"maximum_event_age_seconds": 86401},
     "maximum_event_age_seconds: invalid value 86401 (allowed: an integer 60..86400)"),
    (presets.eventbridge, {"maximum_retry_attempts": 186},
     "maximum_retry_attempts: invalid value 186 (allowed: an integer 0..185)"),
]


class TestValidation:
    @pytest.mark.parametrize("make, kwargs, message", BAD, ids=lambda v: v.__name__ if callable(v) else None)
    def test_a_bad_setting_raises_policy_error_naming_it(self, make, kwargs, message):
        with pytest.raises(calsim.PolicyError, match="^" + re.escape(message) + "$"):
            make(**kwargs)

    def test_policy_error_is_a_calsim_error(self):
        with pytest.raises(calsim.CalsimError):
            presets.systemd(randomized_delay_sec=-5)

    def test_a_handmade_preset_checks_its_gap(self):
        with pytest.raises(calsim.PolicyError, match=r"^gap: unknown policy 'later' \(allowed: 'skip', 'shift', "
                                                     r"'next_valid', 'shift_backward', 'reject' or 'scheduler'\)$"):
            presets.Preset("x", Policy(), "later", "first", "1min")  # type: ignore[arg-type]


# ---------------------------------------------------------------- signatures (issue 18: options keyword-only)


def _literal_values(hint: object) -> tuple[str, ...]:
    """The string values of a ``Literal`` hint, through ``Optional``/unions."""
    if typing.get_origin(hint) is typing.Literal:
        return tuple(v for v in typing.get_args(hint) if isinstance(v, str))
    return tuple(v for arg in typing.get_args(hint) for v in _literal_values(arg))


PRESET_FUNCTIONS = [getattr(presets, name) for name in presets.SCHEDULERS]


class TestSignatures:
    def test_schedulers_names_every_preset_function_of_the_package(self):
        exported = {n for n in presets.__all__ if inspect.isfunction(getattr(presets, n))} - {"differences"}
        assert set(presets.SCHEDULERS) == exported and len(presets.SCHEDULERS) == 11

    @pytest.mark.parametrize("make", PRESET_FUNCTIONS, ids=lambda f: f.__name__)
    def test_every_option_is_keyword_only(self, make):
        params = inspect.signature(make).parameters.values()
        assert params and all(p.kind is p.KEYWORD_ONLY for p in params), inspect.signature(make)

    def test_a_positional_option_is_a_type_error(self):
        with pytest.raises(TypeError):
            presets.kubernetes("Forbid", 100)  # type: ignore[misc]
        with pytest.raises(TypeError):
            presets.cronie("fixed")  # type: ignore[misc]

    @pytest.mark.parametrize("make", PRESET_FUNCTIONS, ids=lambda f: f.__name__)
    def test_docstring_names_every_option_its_default_and_each_allowed_value(self, make):
        doc = inspect.getdoc(make)
        hints = typing.get_type_hints(make)
        for p in inspect.signature(make).parameters.values():
            assert re.search(rf"^{p.name} : .*default {re.escape(repr(p.default).replace(chr(39), chr(34)))}", doc,
                             re.MULTILINE), f"{make.__name__}: {p.name} and its default are not in the docstring"
            missing = [v for v in _literal_values(hints.get(p.name)) if f'"{v}"' not in doc]
            assert not missing, f"{make.__name__}: allowed values of {p.name} missing from the docstring: {missing}"

    def test_vocabularies_are_read_so_the_docstring_test_can_fail(self):
        hints = typing.get_type_hints(presets.temporal)
        assert _literal_values(hints["overlap"]) == ("SKIP", "BUFFER_ONE", "BUFFER_ALL", "CANCEL_OTHER",
                                                     "TERMINATE_OTHER", "ALLOW_ALL")

    @pytest.mark.parametrize("make", PRESET_FUNCTIONS, ids=lambda f: f.__name__)
    def test_every_allowed_value_builds_a_preset_and_is_kept_in_its_settings(self, make):
        # The Literal is the one vocabulary: the check and the mapping to calsim policies must both accept it.
        hints = typing.get_type_hints(make)
        for name, hint in hints.items():
            for value in _literal_values(hint):
                assert dict(make(**{name: value}).settings)[name] == value
