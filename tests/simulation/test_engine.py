"""Simulation semantics (DESIGN.md §5): outages, catch-up, overlap, budgets, properties, bad input."""

from __future__ import annotations

import dataclasses
import datetime as dt
import subprocess
import sys

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim

UTC = dt.timezone.utc


def states(ledger):
    return [(r["nominal_local"].strftime("%m-%d %H:%M"), r["state"], r["reason"])
            for r in ledger.frame.iter_rows(named=True)]


class TestOperatorOutage:
    """Daily 09:00 Asia/Shanghai, max_lateness 2 days, tick 10 min; down 2026-10-20T01:01Z..10-24T12:00Z."""

    @staticmethod
    def run(catchup):
        s = calsim.Schedule("report", "Asia/Shanghai", "2026-10-18T09:00", "FREQ=DAILY",
                            policy=calsim.Policy(catchup=catchup, max_lateness="2d"))
        sc = calsim.Scenario(catchup, [s], "2026-10-20T00:00Z", "2026-10-25T00:00Z", tick="10min",
                             outages=[calsim.Outage("2026-10-20T01:01Z", "2026-10-24T12:00Z")])
        return [r[1] for r in states(calsim.simulate(sc))]

    def test_catchup_all(self):
        assert self.run("all") == ["done", "expired", "expired", "done", "done"]

    def test_catchup_latest(self):
        assert self.run("latest") == ["done", "expired", "expired", "coalesced", "done"]

    def test_catchup_skip(self):
        assert self.run("skip") == ["done", "expired", "expired", "skipped", "skipped"]

    def test_catchup_earliest_runs_the_oldest_in_the_window(self):
        assert self.run("earliest") == ["done", "expired", "expired", "done", "coalesced"]

    def test_recovered_runs_start_at_the_come_back_instant(self):
        s = calsim.Schedule("report", "Asia/Shanghai", "2026-10-18T09:00", "FREQ=DAILY",
                            policy=calsim.Policy(catchup="all", max_lateness="2d"))
        sc = calsim.Scenario("x", [s], "2026-10-20T00:00Z", "2026-10-25T00:00Z", tick="10min",
                             outages=[calsim.Outage("2026-10-20T01:01Z", "2026-10-24T12:00Z")])
        done = calsim.simulate(sc).frame.filter(pl.col("state") == "done")
        assert done["started_utc"].to_list()[1:] == [dt.datetime(2026, 10, 24, 12, 0, tzinfo=UTC)] * 2


class TestOverlap:
    """Every 10 minutes, each run taking 25 minutes, over one hour."""

    @staticmethod
    def run(overlap):
        s = calsim.Schedule("w", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;INTERVAL=10",
                            policy=calsim.Policy(overlap=overlap, duration="25min", cost=1))
        sc = calsim.Scenario(overlap, [s], "2026-01-01T00:00Z", "2026-01-01T01:00Z")
        f = calsim.simulate(sc).frame
        return [(r["nominal_local"].minute, r["state"], r["reason"],
                 r["started_utc"] and (r["started_utc"].hour * 60 + r["started_utc"].minute))
                for r in f.iter_rows(named=True)], f

    def test_allow_starts_every_run_on_time(self):
        got, _ = self.run("allow")
        assert [(m, st, start) for m, st, _, start in got] == [(m, "done", m) for m in (0, 10, 20, 30, 40, 50)]

    def test_skip_drops_runs_while_one_is_going(self):
        got, _ = self.run("skip")
        assert got == [(0, "done", None, 0), (10, "skipped", "overlap", None), (20, "skipped", "overlap", None),
                       (30, "done", None, 30), (40, "skipped", "overlap", None), (50, "skipped", "overlap", None)]

    def test_buffer_one_waits_for_one_and_skips_the_rest(self):
        got, _ = self.run("buffer_one")
        assert got == [(0, "done", None, 0), (10, "done", None, 25), (20, "skipped", "overlap", None),
                       (30, "done", None, 50), (40, "skipped", "overlap", None), (50, "done", None, 75)]

    def test_buffer_all_runs_everything_back_to_back(self):
        got, _ = self.run("buffer_all")
        assert [(m, st, start) for m, st, _, start in got] == [(0, "done", 0), (10, "done", 25), (20, "done", 50),
                                                               (30, "done", 75), (40, "done", 100), (50, "done", 125)]

    def test_cancel_other_cancels_the_running_one_which_keeps_its_cost(self):
        got, f = self.run("cancel_other")
        assert [(m, st, r) for m, st, r, _ in got] == [(0, "cancelled", "superseded"), (10, "cancelled", "superseded"),
                                                      (20, "cancelled", "superseded"), (30, "cancelled", "superseded"),
                                                      (40, "cancelled", "superseded"), (50, "done", None)]
        assert f["cost"].to_list() == [1.0] * 6
        cancelled = f.filter(pl.col("state") == "cancelled")
        assert ((cancelled["finished_utc"] - cancelled["started_utc"]).dt.total_minutes() == 10).all()


class TestBudget:
    """3 cost units per local day in Asia/Shanghai, an hourly schedule costing 1."""

    @staticmethod
    def run(on_budget, catchup="all"):
        s = calsim.Schedule("h", "Asia/Shanghai", "2026-03-01T00:00", "FREQ=HOURLY",
                            policy=calsim.Policy(cost=1, account="tenant-a", on_budget=on_budget, catchup=catchup))
        sc = calsim.Scenario("b", [s], "2026-03-01T16:00Z", "2026-03-05T16:00Z",  # four Shanghai days
                             budgets=[calsim.Budget("tenant-a", 3, "day", "Asia/Shanghai")])
        return calsim.simulate(sc).frame

    def test_skip_runs_exactly_three_per_local_day(self):
        f = self.run("skip")
        done = f.filter(pl.col("state") == "done")
        per_day = done.group_by(pl.col("started_utc").dt.convert_time_zone("Asia/Shanghai").dt.date()).len()
        assert sorted(per_day["len"].to_list()) == [3, 3, 3, 3]
        assert set(f.filter(pl.col("state") != "done")["reason"].to_list()) == {"budget"}

    def test_wait_starts_right_after_local_midnight_and_follows_the_catchup_mode(self):
        f = self.run("wait", catchup="latest").with_columns(
            local_start=pl.col("started_utc").dt.convert_time_zone("Asia/Shanghai").dt.replace_time_zone(None))
        held = f.filter((pl.col("nominal_local") >= dt.datetime(2026, 3, 2, 3))
                        & (pl.col("nominal_local") < dt.datetime(2026, 3, 3)))
        # The newest held run starts at local midnight; the older ones are coalesced (catchup="latest").
        newest = held.filter(pl.col("nominal_local") == dt.datetime(2026, 3, 2, 23)).row(0, named=True)
        assert (newest["state"], newest["local_start"], newest["budget_wait_s"]) == (
            "done", dt.datetime(2026, 3, 3), 3600.0)
        older = held.filter(pl.col("nominal_local") < dt.datetime(2026, 3, 2, 23))
        assert set(older["state"]) == {"coalesced"} and older.height == 20
        assert older["budget_wait_s"].min() > 0

    def test_cost_started_per_local_day_never_exceeds_the_limit(self):
        for mode in ("skip", "wait"):
            f = self.run(mode)
            spent = (f.filter(pl.col("started_utc").is_not_null())
                     .group_by(pl.col("started_utc").dt.convert_time_zone("Asia/Shanghai").dt.date()).agg(pl.col("cost").sum()))
            assert spent["cost"].max() <= 3


class TestEvents:
    def test_pause_skips_what_falls_in_between_and_resume_restarts(self):
        s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
        sc = calsim.Scenario("p", [s], "2026-01-01T00:00Z", "2026-01-01T06:00Z",
                             events=[calsim.Pause("2026-01-01T01:30Z", "h"), calsim.Resume("2026-01-01T03:30Z", "h")])
        assert [st for _, st, _ in states(calsim.simulate(sc))] == [
            "done", "done", "skipped", "skipped", "done", "done"]

    def test_trigger_adds_a_manual_run_and_moves_nothing(self):
        s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
        sc = calsim.Scenario("t", [s], "2026-01-01T00:00Z", "2026-01-01T03:00Z",
                             events=[calsim.Trigger("2026-01-01T01:20:30Z", "h")])
        f = calsim.simulate(sc).frame
        assert f["kind"].to_list() == ["scheduled", "scheduled", "manual", "scheduled"]
        assert f.filter(pl.col("kind") == "manual")["started_utc"][0] == dt.datetime(2026, 1, 1, 1, 21, tzinfo=UTC)

    def test_revise_switches_revision_at_its_boundary(self):
        s = calsim.Schedule("d", "UTC", "2026-01-01T09:00", "FREQ=DAILY")
        new = calsim.Schedule("d", "UTC", "2026-01-01T10:00", "FREQ=DAILY", revision=2)
        sc = calsim.Scenario("r", [s], "2026-01-01T00:00Z", "2026-01-05T00:00Z",
                             events=[calsim.Revise("2026-01-03T00:00Z", new)])
        f = calsim.simulate(sc).frame
        assert list(zip(f["revision"], [t.hour for t in f["due_utc"]])) == [(1, 9), (1, 9), (2, 10), (2, 10)]

    def test_tz_upgrade_keeps_pre_materialised_instants_unless_replanned(self):
        s = calsim.Schedule("mx", "America/Mexico_City", "2023-03-25T09:00", "FREQ=DAILY")
        base = dict(start="2023-03-30T00:00Z", end="2023-04-10T00:00Z", release="2022e")
        keep = calsim.Scenario("keep", [s], events=[calsim.TzUpgrade("2023-03-31T00:00Z", "2022f", horizon="7d")],
                               **base)
        replan = calsim.Scenario("replan", [s],
                                 events=[calsim.TzUpgrade("2023-03-31T00:00Z", "2022f", horizon="7d", mode="replan")],
                                 **base)
        fk, fr = calsim.simulate(keep).frame, calsim.simulate(replan).frame
        # After 2022f Mexico City has no DST: 09:00 is 15:00Z; 2022e still said 14:00Z from April 2.
        april3 = lambda f: f.filter(pl.col("nominal_local") == dt.datetime(2023, 4, 3, 9))  # noqa: E731
        assert april3(fk)["due_utc"][0].hour == 14 and april3(fk)["tzdata"][0] == "2022e"
        assert april3(fr)["due_utc"][0].hour == 15 and april3(fr)["tzdata"][0] == "2022f"
        assert fk.height == fr.height == 11


def test_ledger_columns_and_dtypes():
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
    f = calsim.simulate(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-01T02:00Z")).frame
    assert f.columns == ["scenario", "schedule_id", "revision", "nominal_local", "fold", "zone", "tzdata", "due_utc",
                         "utc_offset_s", "notes", "kind", "eligible_utc", "started_utc", "finished_utc", "lateness_s",
                         "state", "reason", "attempts", "cost", "budget_wait_s",
                         # DESIGN §4's worker-level columns, null in a scenario without those features
                         "window_start_utc", "window_end_utc", "worker", "effects", "rate_wait_s"]
    assert f.schema["started_utc"] == pl.Datetime("us", "UTC") and f.schema["attempts"] == pl.Int32
    assert f.select("window_start_utc", "window_end_utc", "worker", "effects", "rate_wait_s").null_count().row(0) == (
        2, 2, 2, 2, 2)


def test_gap_skipped_merged_and_excluded_rows_keep_their_reason():
    s = calsim.Schedule("n", "America/New_York", "2026-03-07T02:30", "FREQ=DAILY", exclude=["2026-03-09"])
    f = calsim.simulate(calsim.Scenario("x", [s], "2026-03-07T00:00Z", "2026-03-10T00:00Z", release="2026f")).frame
    sc = calsim.Scenario("x", [s], "2026-03-07T00:00Z", "2026-03-10T00:00Z", release="2026f")
    assert [(st, r) for _, st, r in states(calsim.simulate(sc))] == [
        ("done", None), ("skipped", "dst_gap"), ("skipped", "calendar")]
    assert f.height == 3


def test_jitter_is_deterministic_within_range_and_before_the_next_occurrence():
    s = calsim.Schedule("j", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;INTERVAL=5",
                        policy=calsim.Policy(jitter="10min"))
    sc = calsim.Scenario("j", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z", seed=7)
    a, b = calsim.simulate(sc).frame, calsim.simulate(sc).frame
    assert a.equals(b)
    delay = (a["eligible_utc"] - a["due_utc"]).dt.total_microseconds()
    assert delay.min() >= 0 and delay.max() < 5 * 60 * 10**6  # capped before the next occurrence
    assert delay.n_unique() > 100
    other = calsim.simulate(dataclasses.replace(sc, seed=8)).frame
    assert not other["eligible_utc"].equals(a["eligible_utc"])


def test_failures_retry_with_backoff_and_exhaust():
    s = calsim.Schedule("f", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(duration="1min", cost=2))
    sc = calsim.Scenario("f", [s], "2026-01-01T00:00Z", "2026-01-08T00:00Z",
                         failures=calsim.Failures(probability=0.5, max_attempts=3, backoff="1min"))
    f = calsim.simulate(sc).frame
    assert set(f["attempts"].unique()) == {1, 2, 3}
    failed = f.filter(pl.col("state") == "failed")
    assert failed.height > 0 and (failed["attempts"] == 3).all() and set(failed["reason"]) == {"retries_exhausted"}
    # three 1-minute attempts with 1 and 2 minutes of backoff between them: 6 minutes
    assert ((failed["finished_utc"] - failed["started_utc"]).dt.total_minutes() == 6).all()
    assert (f["cost"] == f["attempts"] * 2.0).all()


def test_forty_retries_of_a_minute_saturate_instead_of_overflowing():
    # 2**39 minutes of backoff (a million years) passed int64 in backoff * 2**k; a run that never ends within
    # any horizon shows its last attempt ending at 9999-12-31T23:59:59, the last instant a datetime holds.
    s = calsim.Schedule("f", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(duration="1min"))
    sc = calsim.Scenario("f", [s], "2026-01-01T00:00Z", "2026-01-01T03:00Z",
                         failures=calsim.Failures(probability=1.0, max_attempts=40, backoff="1min"))
    f = calsim.simulate(sc, progress=False).frame
    assert set(f["state"]) == {"failed"} and set(f["attempts"]) == {40}
    assert set(f["finished_utc"].dt.year()) == {9999} and f["finished_utc"].to_list()  # each a Python datetime
    assert calsim.simulation.run_rules.retry_wait(60 * 10**6, 40) == calsim.simulation.run_rules.BIG


class TestBadInput:
    def test_policy_typo(self):
        with pytest.raises(calsim.PolicyError) as err:
            calsim.Policy(catchup="lastest")
        assert str(err.value) == ("catchup: unknown policy 'lastest' "
                                  "(allowed: 'all', 'latest', 'earliest', 'skip', 'bounded' or 'earliest_and_latest')"
                                  " (did you mean 'latest'?)")

    def test_negative_duration(self):
        with pytest.raises(calsim.PolicyError, match=r"^duration: cannot parse '-5min'"):
            calsim.Policy(duration="-5min")

    def test_outage_ending_before_it_starts(self):
        with pytest.raises(calsim.InputError, match=r"^outage.end: '2026-01-01T00:00Z' is not after outage.start"):
            calsim.Outage("2026-01-02T00:00Z", "2026-01-01T00:00Z")

    def test_overlapping_outages(self):
        s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
        with pytest.raises(calsim.InputError, match=r"^scenario.outages: .* starts before .* ends"):
            calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                            outages=[calsim.Outage("2026-01-01T01:00Z", "2026-01-01T03:00Z"),
                                     calsim.Outage("2026-01-01T02:00Z", "2026-01-01T04:00Z")])

    def test_budget_with_an_unknown_zone(self):
        with pytest.raises(calsim.UnknownZoneError, match=r"^budget.zone: zone: unknown zone 'Asia/Shanghi'"):
            calsim.Budget("a", 3, "day", "Asia/Shanghi")

    def test_event_for_an_unknown_schedule(self):
        s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
        with pytest.raises(calsim.ScheduleError, match=r"^pause.schedule_id: unknown schedule 'g' in scenario 'x'"):
            calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                            events=[calsim.Pause("2026-01-01T01:00Z", "g")])

    def test_bounded_needs_a_limit(self):
        with pytest.raises(calsim.PolicyError, match=r"^limit: catchup='bounded' needs limit >= 1, got None"):
            calsim.Policy(catchup="bounded")


# -- properties ---------------------------------------------------------------

RULES = ["FREQ=HOURLY", "FREQ=MINUTELY;INTERVAL=20", "FREQ=DAILY;BYHOUR=2,9;BYMINUTE=30", "*/15 * * * *", "0 9 * * 1-5"]
ZONES = ["UTC", "America/New_York", "Asia/Shanghai", "Australia/Lord_Howe"]


@st.composite
def scenarios(draw, max_active=True):
    n = draw(st.integers(1, 5))
    scheds = []
    for i in range(n):
        catchup = draw(st.sampled_from(["all", "latest", "earliest", "skip", "bounded"]))
        overlap = draw(st.sampled_from(["allow", "skip", "buffer_one", "buffer_all", "cancel_other", "buffer_latest"]))
        pol = calsim.Policy(
            catchup=catchup, limit=draw(st.integers(1, 3)) if catchup == "bounded" else None,
            max_lateness=draw(st.sampled_from([None, "2h", "1d"])),
            overlap=overlap,
            max_active=draw(st.sampled_from([None, None, 1, 2, 3])) if max_active and overlap != "allow" else None,
            duration=draw(st.sampled_from([None, "5min", "50min", calsim.LogNormal("10min", "2h")])),
            jitter=draw(st.sampled_from([None, "3min"])),
            cost=draw(st.sampled_from([1.0, 1.0, 0.5, 2.5])), account=draw(st.sampled_from([None, "a", "b"])),
            on_budget=draw(st.sampled_from(["wait", "skip"])),
            misfire_grace=draw(st.sampled_from([None, None, "5min"])),
            limit_edge=draw(st.sampled_from(["on_time", "late"])),
            backlog=draw(st.sampled_from(["at_once", "at_once", "in_turn"])),
            recovery_wake=draw(st.booleans()), down_is_missed=draw(st.booleans()),
            suspend_catchup=draw(st.sampled_from([None, "all", "latest", "skip"])),
            suspend_limit=draw(st.sampled_from([None, "2h"])),
            max_missed=draw(st.sampled_from([None, None, 3])),
        )
        scheds.append(calsim.Schedule(f"s{i}", draw(st.sampled_from(ZONES)), "2026-03-06T00:00",
                                      draw(st.sampled_from(RULES)), policy=pol))
    day = 86400
    start = dt.datetime(2026, 3, 7, tzinfo=UTC)
    outages = []
    t = start
    for _ in range(draw(st.integers(0, 2))):
        a = t + dt.timedelta(seconds=draw(st.integers(600, day)))
        b = a + dt.timedelta(seconds=draw(st.integers(60, day)))
        outages.append(calsim.Outage(a, b, kind=draw(st.sampled_from(["down", "suspend"]))))
        t = b
    budgets = [calsim.Budget(acct, draw(st.integers(2, 30)), "day", draw(st.sampled_from(ZONES)))
               for acct in ("a", "b")]
    # Pauses: of one schedule or of all (None), some never resumed; spans may overlap.
    events = []
    for _ in range(draw(st.integers(0, 2))):
        target = draw(st.sampled_from([None] + [s.id for s in scheds]))
        a = start + dt.timedelta(seconds=draw(st.integers(0, 3 * day)))
        events.append(calsim.Pause(a, target))
        if draw(st.booleans()):
            events.append(calsim.Resume(a + dt.timedelta(seconds=draw(st.integers(60, day))), target))
    return calsim.Scenario("prop", scheds, start, start + dt.timedelta(days=3), outages=outages, budgets=budgets,
                           tick=draw(st.sampled_from(["1min", "5min"])), seed=draw(st.integers(0, 5)),
                           capacity=draw(st.sampled_from([None, None, 3])), events=events,
                           failures=draw(st.sampled_from([None, None,
                                                          calsim.Failures(0.3, max_attempts=3, backoff="2min")])))


def peak_going(runs: pl.DataFrame) -> int:
    """The most runs going at once (``[started_utc, finished_utc)``; a finish frees its slot for a start then)."""
    events = sorted([(t, 1) for t in runs["started_utc"]] + [(t, -1) for t in runs["finished_utc"]],
                    key=lambda e: (e[0], e[1]))
    level = peak = 0
    for _, d in events:
        level += d
        peak = max(peak, level)
    return peak


def paused_spans(sc, schedule_id):
    """[pause, resume) spans of one schedule (a Resume ends the spans of its target open before it)."""
    open_, spans = {}, []
    for ev in sc.events:
        if isinstance(ev, calsim.Pause):
            open_.setdefault(ev.schedule_id, []).append(ev.at_us)
        elif isinstance(ev, calsim.Resume):
            for key in [ev.schedule_id] if ev.schedule_id is not None else list(open_):
                spans += [(a, ev.at_us, key) for a in open_.pop(key, []) if a <= ev.at_us]
    spans += [(a, None, key) for key, starts in open_.items() for a in starts]
    epoch = dt.datetime(1970, 1, 1, tzinfo=UTC)
    return [(epoch + dt.timedelta(microseconds=a), b and epoch + dt.timedelta(microseconds=b))
            for a, b, key in spans if key in (None, schedule_id)]


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_simulation_invariants(sc):
    ledger = calsim.simulate(sc)
    f = ledger.frame
    occ = calsim.expand(list(sc.schedules), sc.start, sc.end, sc.release)
    scheduled = f.filter(pl.col("kind") == "scheduled")
    # exactly one terminal row per occurrence of the horizon
    assert scheduled.height == occ.height
    assert scheduled.select("schedule_id", "revision", "nominal_local", "fold").is_duplicated().sum() == 0
    assert f["state"].null_count() == 0
    # no run starts while the scheduler is down
    starts = f["started_utc"].drop_nulls()
    for o in sc.outages:
        lo = dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=o.start_us)
        hi = dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=o.end_us)
        assert not ((starts >= lo) & (starts < hi)).any()
    # no run starts while its schedule is paused (held runs included: buffered, budget, capacity)
    for s in sc.schedules:
        mine = f.filter((pl.col("schedule_id") == s.id) & (pl.col("kind") == "scheduled"))["started_utc"].drop_nulls()
        for lo, hi in paused_spans(sc, s.id):
            assert not ((mine >= lo) & ((mine < hi) if hi is not None else True)).any(), (s.id, lo, hi)
    # a schedule that does not allow overlap never has more than max_active runs (default one) going at once
    for s in sc.schedules:
        if s.policy.overlap != "allow":
            runs = f.filter((pl.col("schedule_id") == s.id) & pl.col("started_utc").is_not_null())
            assert peak_going(runs) <= (s.policy.max_active or 1), s.id
    # lateness >= 0
    assert (f["lateness_s"].drop_nulls() >= 0).all()
    # per account and local day, the cost started never exceeds the limit
    for b in sc.budgets:
        ids = [s.id for s in sc.schedules if s.policy.account == b.account]
        spent = (f.filter(pl.col("schedule_id").is_in(ids) & pl.col("started_utc").is_not_null())
                 .group_by(pl.col("started_utc").dt.convert_time_zone(b.zone).dt.date()).agg(pl.col("cost").sum()))
        assert spent.height == 0 or spent["cost"].max() <= b.limit + 1e-9
    # capacity is respected
    if sc.capacity:
        assert peak_going(f.filter(pl.col("started_utc").is_not_null())) <= sc.capacity
    # with latest, at most one catch-up run per schedule per recovery
    for s in sc.schedules:
        if s.policy.catchup == "latest":
            late_runs = f.filter((pl.col("schedule_id") == s.id) & (pl.col("lateness_s") > sc.tick_us / 1e6))
            per_pick = late_runs.group_by("started_utc").len()
            assert per_pick.height == 0 or per_pick["len"].max() <= 1 or s.policy.overlap != "allow"
    # deterministic
    assert calsim.simulate(sc).frame.equals(f)
    # the column paths settle exactly as the ordered event loop does
    assert calsim.simulate(sc, settle="events").frame.equals(f)


def test_same_scenario_and_seed_give_the_same_ledger_across_processes(tmp_path):
    code = (
        "import calsim, hashlib\n"
        "fleet = calsim.examples.fleet(40, seed=3)\n"
        "fleet = [s.__class__(**{**{f: getattr(s, f) for f in"
        " ('id','zone','start','rule','gap','fold','invalid_day','exclude')},"
        " 'policy': calsim.Policy(jitter='5min', duration=calsim.LogNormal('2min', '20min'), overlap='skip')})"
        " for s in fleet]\n"
        "sc = calsim.Scenario('x', fleet, '2026-01-01T00:00Z', '2026-01-15T00:00Z', seed=11,"
        " failures=calsim.Failures(0.2, max_attempts=3, backoff='1min'),"
        " outages=[calsim.Outage('2026-01-03T00:00Z', '2026-01-04T05:00Z')])\n"
        "f = calsim.simulate(sc).frame\n"
        "print(hashlib.blake2b(f.write_ipc(None).getvalue()).hexdigest(), f.height)\n"
    )
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": "/usr/bin:/bin"}).stdout for seed in (1, 2)}
    assert len(outs) == 1, outs


def test_revise_cancels_the_old_revisions_backlog_not_yet_started():
    s = calsim.Schedule("d", "UTC", "2026-01-01T09:00", "FREQ=DAILY", policy=calsim.Policy(catchup="all"))
    new = calsim.Schedule("d", "UTC", "2026-01-01T10:00", "FREQ=DAILY", revision=2)
    sc = calsim.Scenario("r", [s], "2026-01-01T00:00Z", "2026-01-06T00:00Z",
                         outages=[calsim.Outage("2026-01-01T12:00Z", "2026-01-03T12:00Z")],
                         events=[calsim.Revise("2026-01-03T00:00Z", new)])
    got = [(r["revision"], r["due_utc"].day, r["state"], r["reason"])
           for r in calsim.simulate(sc).frame.iter_rows(named=True)]
    assert got == [(1, 1, "done", None), (1, 2, "cancelled", "revision"), (2, 3, "done", None),
                   (2, 4, "done", None), (2, 5, "done", None)]


def test_daily_cost_and_pandas_views():
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(cost=0.5, account="t"))
    ledger = calsim.simulate(calsim.Scenario("c", [s], "2026-01-01T00:00Z", "2026-01-03T00:00Z"))
    daily = ledger.daily_cost()
    assert daily.rows() == [(dt.date(2026, 1, 1), "t", 12.0, 24), (dt.date(2026, 1, 2), "t", 12.0, 24)]
    pdf = ledger.to_pandas()
    assert len(pdf) == 48 and str(pdf["started_utc"].dt.tz) == "UTC"


def test_a_manual_run_is_keyed_by_the_triggers_local_wall_time():
    s = calsim.Schedule("h", "Asia/Kolkata", "2026-01-01T00:00", "FREQ=DAILY")
    sc = calsim.Scenario("t", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                         events=[calsim.Trigger("2026-01-01T06:00Z", "h")])
    m = calsim.simulate(sc).frame.filter(pl.col("kind") == "manual").row(0, named=True)
    assert (m["nominal_local"], m["utc_offset_s"], m["notes"]) == (dt.datetime(2026, 1, 1, 11, 30), 19800, [])


class TestCapacity:
    @staticmethod
    def fleet(low_hours):
        hi = calsim.Schedule("hi", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;INTERVAL=30",
                             policy=calsim.Policy(priority=5, duration="30min"))
        lo = calsim.Schedule("lo", "UTC", "2026-01-01T00:00", "FREQ=DAILY",
                             policy=calsim.Policy(priority=0, duration="10min"))
        return calsim.Scenario("cap", [hi, lo], "2026-01-01T00:00Z", f"2026-01-01T{low_hours:02d}:00Z", capacity=1)

    def test_capacity_bounds_concurrency_and_queues_by_priority(self):
        f = calsim.simulate(self.fleet(3)).frame
        lo = f.filter(pl.col("schedule_id") == "lo").row(0, named=True)
        hi = f.filter(pl.col("schedule_id") == "hi")
        # At 00:00 both are due; the high-priority one runs first, the low one waits.
        assert hi["started_utc"][0] == dt.datetime(2026, 1, 1, 0, 0, tzinfo=UTC)
        assert lo["started_utc"] > dt.datetime(2026, 1, 1, 0, 0, tzinfo=UTC)

    def test_low_priority_ages_and_is_not_starved(self):
        # hi: every 10 min, 30 min each, on one slot: its queue only grows. Without
        # ageing lo would wait behind every hi run; ageing (one level per hour) lets
        # it pass hi runs that have been waiting for less time than it has.
        hi = calsim.Schedule("hi", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;INTERVAL=10",
                             policy=calsim.Policy(priority=5, duration="30min"))
        lo = calsim.Schedule("lo", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=calsim.Policy(duration="10min"))
        f = calsim.simulate(calsim.Scenario("cap", [hi, lo], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                                            capacity=1)).frame
        lo_start = f.filter(pl.col("schedule_id") == "lo")["started_utc"][0]
        assert lo_start < dt.datetime(2026, 1, 2, tzinfo=UTC)
        overtaken = f.filter((pl.col("schedule_id") == "hi") & (pl.col("eligible_utc") < lo_start)
                             & (pl.col("started_utc") > lo_start))
        assert overtaken.height > 0
        runs = f.filter(pl.col("started_utc").is_not_null()).sort("started_utc")
        assert (runs["started_utc"].shift(-1) >= runs["finished_utc"]).fill_null(True).all()  # one at a time

    def test_a_run_that_waited_for_capacity_applies_its_overlap_mode_when_it_starts(self):
        # Two 1-hour blockers hold both slots from 00:00; "w" (every 10 min from 00:05,
        # 15 min each, overlap="skip") queues meanwhile. At 01:00 both slots free at
        # once: w@00:05 starts, and w@00:15 (next in the queue) would start beside
        # it; it must meet w's overlap mode at its actual start and be skipped.
        blockers = [calsim.Schedule(f"b{i}", "UTC", "2026-01-01T00:00", "FREQ=DAILY",
                                    policy=calsim.Policy(duration="1h", priority=9)) for i in (1, 2)]
        w = calsim.Schedule("w", "UTC", "2026-01-01T00:05", "FREQ=MINUTELY;INTERVAL=10",
                            policy=calsim.Policy(duration="15min", overlap="skip"))
        sc = calsim.Scenario("cap", [*blockers, w], "2026-01-01T00:00Z", "2026-01-01T01:00Z", capacity=2)
        f = calsim.simulate(sc).frame.filter(pl.col("schedule_id") == "w")
        got = {r["nominal_local"].strftime("%H:%M"):
               (r["state"], r["reason"], r["started_utc"] and r["started_utc"].strftime("%H:%M"))
               for r in f.iter_rows(named=True)}
        assert got["00:05"] == ("done", None, "01:00")
        assert got["00:15"] == ("skipped", "overlap", None)
        runs = f.filter(pl.col("started_utc").is_not_null()).sort("started_utc")
        assert (runs["started_utc"].shift(-1) >= runs["finished_utc"]).fill_null(True).all()
