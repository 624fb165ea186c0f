"""``presets.eventbridge()``: what the AWS documentation states, pinned.

EventBridge Scheduler is a managed service: there is **no code oracle** (no
source to port, nothing to run here). These tests pin each documented fact the
preset maps, citing the pages ``calsim/presets.py`` names:

* ``EB_RETRY`` https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html:
  ``MaximumEventAgeInSeconds`` "The maximum amount of time, in seconds, to continue to make retry
  attempts", valid range 60..86400; ``MaximumRetryAttempts`` valid range 0..185
  -> ``max_lateness`` (an invocation later than the age is ``expired``); attempts kept in ``settings``.
* ``EB_WINDOW`` https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-flexible-time-windows.html:
  "EventBridge Scheduler invokes the target within the time window you set ... a 15 minute flexible
  time window for a schedule that runs every hour ... invokes the target within 15 minutes after the
  scheduled time"; ``EB_WINDOW_API``
  https://docs.aws.amazon.com/scheduler/latest/APIReference/API_FlexibleTimeWindow.html: ``Mode`` OFF |
  FLEXIBLE, ``MaximumWindowInMinutes`` 1..1440 -> ``jitter`` in ``[0, window)``.
* ``EB_DST`` https://repost.aws/knowledge-center/eventbridge-scheduler-adjust-dst: "When the time
  shifts forward in Spring, your schedule invocation gets skipped if the cron expression falls on a
  non-existent date and time. When the time shifts back in the Fall, your schedule runs only once and
  doesn't repeat its invocation"; "the minimum precision for a schedule is one minute"
  -> ``gap="skip"``, ``fold="first"`` (which pass is not documented: the preset takes the first),
  ``tick="1min"``.

No (scenario, occurrence) pairs are compared against an oracle; ``pytest -s`` prints how many
documented facts are pinned.
"""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

import calsim
from calsim import presets
from calsim.errors import PolicyError

RELEASE = "2026f"
US = 1_000_000
MIN = 60 * US
UTC = dt.timezone.utc
DOCS = (presets.EB_DST, presets.EB_WINDOW, presets.EB_RETRY, presets.EB_WINDOW_API)
FACTS = []   # the documented facts pinned below (printed by test_no_code_oracle_documented_facts_pinned)


def fact(text: str):
    def deco(fn):
        FACTS.append((fn.__name__, text))
        return fn
    return deco


def _ledger(preset, cron: str, zone: str, start: str, end: str, outages=()) -> pl.DataFrame:
    sched = preset.apply(calsim.Schedule("eb", zone, "2025-12-01T00:00", cron))
    sc = calsim.Scenario("eventbridge-docs", [sched], start, end, release=RELEASE, tick=preset.tick,
                         outages=list(outages))
    return calsim.simulate(sc, progress=False).frame


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


@fact("the preset cites the pages it follows (EB_DST, EB_WINDOW, EB_RETRY, EB_WINDOW_API)")
def test_the_preset_cites_the_documentation_it_follows():
    assert presets.eventbridge().sources == DOCS
    assert presets.EB_RETRY == "https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html"
    assert presets.EB_WINDOW == ("https://docs.aws.amazon.com/scheduler/latest/UserGuide/"
                                 "managing-schedule-flexible-time-windows.html")
    assert presets.EB_WINDOW_API == ("https://docs.aws.amazon.com/scheduler/latest/APIReference/"
                                     "API_FlexibleTimeWindow.html")
    assert presets.EB_DST == "https://repost.aws/knowledge-center/eventbridge-scheduler-adjust-dst"


# -- EB_RETRY: MaximumEventAgeInSeconds is max_lateness -------------------------------------------------------

@fact("EB_RETRY: MaximumEventAgeInSeconds (60..86400, default 86400) is max_lateness")
@pytest.mark.parametrize("age", [60, 3600, 86400])
def test_maximum_event_age_is_max_lateness(age):
    assert presets.eventbridge(maximum_event_age_seconds=age).policy.max_lateness_us == age * US
    assert presets.eventbridge().policy.max_lateness_us == 86400 * US


@fact("EB_RETRY: MaximumEventAgeInSeconds outside 60..86400 and MaximumRetryAttempts outside 0..185 are refused")
@pytest.mark.parametrize("kw", [dict(maximum_event_age_seconds=59), dict(maximum_event_age_seconds=86401),
                                dict(maximum_retry_attempts=-1), dict(maximum_retry_attempts=186)])
def test_retry_policy_values_outside_the_documented_ranges_are_refused(kw):
    with pytest.raises(PolicyError, match=next(iter(kw))):
        presets.eventbridge(**kw)


@fact("EB_RETRY: MaximumRetryAttempts (0..185) is kept in settings; retries are a scenario's Failures")
def test_maximum_retry_attempts_is_kept_in_settings():
    for n in (0, 185):
        assert dict(presets.eventbridge(maximum_retry_attempts=n).settings)["maximum_retry_attempts"] == n


@fact("EB_RETRY: an invocation the target cannot take is retried until the event age, then dropped (expired)")
def test_an_unreachable_target_gets_the_invocations_younger_than_the_event_age():
    """Target unreachable 09:30-12:30 (an outage): with a 1 h event age, 10:00 and 11:00 are older than
    the age at 12:30 and are dropped (expired/max_lateness); 12:00 is delivered at 12:30. With the default
    age (24 h) all three are delivered (catchup='all')."""
    outage = [calsim.Outage("2026-06-01T09:30Z", "2026-06-01T12:30Z")]
    short = _ledger(presets.eventbridge(maximum_event_age_seconds=3600), "0 * * * *", "UTC",
                    "2026-06-01T06:00Z", "2026-06-01T15:00Z", outage)
    rows = short.filter(pl.col("due_utc").is_between(_at("2026-06-01T10:00"), _at("2026-06-01T12:00")))
    assert rows["state"].cast(str).to_list() == ["expired", "expired", "done"]
    assert rows["reason"].cast(str).to_list()[:2] == ["max_lateness", "max_lateness"]
    assert rows["started_utc"].to_list()[2] == _at("2026-06-01T12:30")
    full = _ledger(presets.eventbridge(), "0 * * * *", "UTC", "2026-06-01T06:00Z", "2026-06-01T15:00Z", outage)
    rows = full.filter(pl.col("due_utc").is_between(_at("2026-06-01T10:00"), _at("2026-06-01T12:00")))
    assert rows["state"].cast(str).to_list() == ["done"] * 3
    assert set(rows["started_utc"].to_list()) == {_at("2026-06-01T12:30")}


# -- EB_WINDOW / EB_WINDOW_API: the flexible time window is jitter -------------------------------------------

@fact("EB_WINDOW_API: MaximumWindowInMinutes (1..1440) is jitter; Mode OFF (None) is no jitter")
@pytest.mark.parametrize("minutes", [1, 15, 1440])
def test_flexible_window_is_jitter(minutes):
    assert presets.eventbridge(flexible_window_minutes=minutes).policy.jitter_us == minutes * MIN
    assert presets.eventbridge().policy.jitter_us == 0


@fact("EB_WINDOW_API: MaximumWindowInMinutes outside 1..1440 is refused")
@pytest.mark.parametrize("minutes", [0, 1441])
def test_flexible_window_outside_the_documented_range_is_refused(minutes):
    with pytest.raises(PolicyError, match="flexible_window_minutes"):
        presets.eventbridge(flexible_window_minutes=minutes)


@fact("EB_WINDOW: a 15 min flexible window on an hourly schedule invokes within 15 minutes after each time")
def test_a_15_minute_window_invokes_within_15_minutes_after_each_hourly_time():
    """The user guide's own example: hourly schedule, 15 minute window."""
    f = _ledger(presets.eventbridge(flexible_window_minutes=15), "0 * * * *", "UTC", "2026-06-01T00:00Z",
                "2026-06-03T00:00Z")
    drawn = (f["eligible_utc"] - f["due_utc"]).dt.total_microseconds().to_list()
    late = (f["started_utc"] - f["due_utc"]).dt.total_microseconds().to_list()
    assert len(late) == 48 and all(0 <= x < 15 * MIN for x in drawn)
    assert all(0 <= x <= 15 * MIN for x in late)              # picked at the next 1 min tick: within 15 min
    assert len(set(late)) > 5                                 # dispersed, not all at the scheduled time
    off = _ledger(presets.eventbridge(), "0 * * * *", "UTC", "2026-06-01T00:00Z", "2026-06-03T00:00Z")
    assert (off["started_utc"] == off["due_utc"]).all()


@fact("notes: where in the window an invocation lands, and overlap, are undocumented")
def test_the_undocumented_choices_are_stated_in_the_notes():
    notes = presets.eventbridge().notes
    assert any("where in the flexible window an invocation lands is not documented" in n for n in notes)
    assert any("overlap is undocumented" in n for n in notes)


# -- EB_DST: a spring-forward time is skipped, a fall-back time runs once ------------------------------------

@fact("EB_DST: a cron time that does not exist on the spring-forward day is skipped")
@pytest.mark.parametrize("zone,day", [("America/New_York", "2026-03-08"), ("Europe/Berlin", "2026-03-29")])
def test_spring_forward_time_that_does_not_exist_is_skipped(zone, day):
    f = calsim.expand([presets.eventbridge().apply(calsim.Schedule("eb", zone, "2025-12-01T00:00", "30 2 * * *"))],
                      f"{day}T00:00Z", f"{day}T23:00Z", release=RELEASE)
    row = f.filter(pl.col("nominal_local") == dt.datetime.fromisoformat(f"{day}T02:30"))
    assert row.height == 1 and row["due_utc"][0] is None and "dst_gap_skip" in row["notes"][0][0]


@fact("EB_DST: a cron time repeated on the fall-back day runs only once (the first pass: the preset's choice)")
@pytest.mark.parametrize("zone,day,first_utc", [("America/New_York", "2026-11-01", "2026-11-01T05:30"),
                                                ("Europe/Berlin", "2026-10-25", "2026-10-25T00:30")])
def test_fall_back_time_that_repeats_runs_once(zone, day, first_utc):
    cron = "30 1 * * *" if zone == "America/New_York" else "30 2 * * *"
    preset = presets.eventbridge()
    f = _ledger(preset, cron, zone, f"{day}T00:00Z", f"{day}T12:00Z")
    started = f.filter(pl.col("started_utc").is_not_null())
    assert started.height == 1
    assert started["started_utc"][0] == _at(first_utc) and started["fold"][0] == 0
    assert (preset.gap, preset.fold) == ("skip", "first")


@fact("EB_DST: the minimum precision is one minute (tick '1min')")
def test_precision_is_one_minute():
    assert presets.eventbridge().tick == "1min"


def test_no_code_oracle_documented_facts_pinned(report):
    line = (f"eventbridge: no code oracle (managed service, no source); {len(FACTS)} documented facts pinned "
            f"from {len(DOCS)} AWS pages; 0 (scenario, occurrence) pairs compared")
    print("\n" + line)
    report.append(line)
    assert len(FACTS) >= 10
