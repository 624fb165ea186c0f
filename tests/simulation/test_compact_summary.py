"""Issue 30's rough edges in the views: a compact summary, Durations rounded to what they mean, ids in natural
order, and daily cost in the budget's calendar."""

from __future__ import annotations

import dataclasses
import datetime as dt

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import calsim
from calsim.simulation import views
from calsim.simulation.views import SUMMARY_FEATURES

BASE = ["scenario", "occurrences", "done", "coalesced", "skipped", "expired", "cancelled", "failed",
        "lateness_p50", "lateness_p95", "lateness_max"]
BUDGET = ["budget_waits", "budget_wait_mean", "budget_wait_max"]
HOURLY = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
DAY = ("2026-01-01T00:00Z", "2026-01-02T00:00Z")


def _run(sc: calsim.Scenario) -> calsim.Ledger:
    return calsim.simulate(sc, progress=False)


# ----------------------------------------------------------------------------- compact summary


def test_a_plain_scenarios_summary_shows_only_what_it_can_fill():
    s = _run(calsim.Scenario("plain", [HOURLY], *DAY)).summary()
    assert s.columns == BASE
    full = _run(calsim.Scenario("plain", [HOURLY], *DAY)).summary(full=True)
    assert full.width == 25 and s.equals(full.select(BASE))


def test_budgets_add_cost_and_the_budget_waits_even_when_nothing_waited():
    fleet = calsim.with_policy([HOURLY], cost=1.0, account="a")
    roomy = _run(calsim.Scenario("roomy", fleet, *DAY, budgets=[calsim.Budget("a", 1000, "day", "UTC")]))
    tight = _run(calsim.Scenario("tight", fleet, *DAY, budgets=[calsim.Budget("a", 10, "day", "UTC")]))
    assert roomy.summary()["budget_waits"].item() == 0 < tight.summary()["budget_waits"].item()
    assert roomy.summary().columns == tight.summary().columns == [*BASE, "cost", *BUDGET]
    # Two policies of one fleet stack: the columns follow the scenario, not the outcome.
    assert pl.concat([roomy.summary(), tight.summary()]).height == 2


def test_a_cost_without_a_budget_adds_cost_only():
    led = _run(calsim.Scenario("costly", calsim.with_policy([HOURLY], cost=2.0), *DAY))
    assert led.summary().columns == [*BASE, "cost"] and led.summary()["cost"].item() == 48.0


def test_a_trigger_adds_the_manual_count():
    sc = calsim.Scenario("manual", [HOURLY], *DAY, events=[calsim.Trigger("2026-01-01T05:30Z", "h")])
    s = _run(sc).summary()
    assert "manual" in s.columns and s["manual"].item() == 1


def test_a_worker_level_scenario_shows_its_worker_counts():
    sc = calsim.Scenario("workers", calsim.with_policy([HOURLY], duration="1min"), *DAY, workers=calsim.Workers(2))
    s = _run(sc).summary()
    assert set(SUMMARY_FEATURES["worker"]) <= set(s.columns)
    assert s["duplicate_effects"].item() == 0  # shown although 0: the scenario is worker-level


def test_a_frame_without_its_scenario_shows_every_group_that_is_not_all_zero():
    led = _run(calsim.Scenario("x", calsim.with_policy([HOURLY], cost=1.0, account="a"), *DAY,
                               budgets=[calsim.Budget("a", 10, "day", "UTC")]))
    bare = calsim.Ledger("x", led.frame)  # as read back from a store: no scenario
    assert bare.summary().columns == [*BASE, "cost", *BUDGET]
    assert calsim.Ledger("x", led.frame.with_columns(cost=0.0, budget_wait_s=0.0)).summary().columns == BASE


def test_compact_never_hides_a_value_that_is_not_zero():
    row = views.summary(pl.DataFrame(schema=calsim.simulation.ledger.LEDGER_SCHEMA), "e").collect()
    row = row.with_columns(pl.lit(3, pl.Int64).alias("breaker_open"))
    assert "breaker_open" in views.compact_summary(row).columns
    assert "rate_wait_max" in views.compact_summary(row).columns  # the group comes whole


def test_the_store_and_a_full_summary_keep_every_column():
    led = _run(calsim.Scenario("plain", [HOURLY], *DAY))
    with calsim.LedgerStore() as store:
        store.write(led)
        cmp = store.compare(["plain"])
    assert led.summary(full=True).width == 25 and led.summary().width == len(BASE)
    # compare keeps its columns whatever the scenario: the compact form is Ledger.summary's alone.
    assert {"manual", "cost", "duplicate_effects", "rate_wait_max", *BASE[1:]} <= set(cmp.columns)


# ----------------------------------------------------------------------------- Durations rounded


@pytest.fixture(scope="module")
def jittered() -> calsim.Ledger:
    """Jitter makes lateness a number of microseconds: eligible is due + jitter, picked at the next minute."""
    fleet = calsim.with_policy([HOURLY], jitter="7min", cost=1.0, account="a")
    return _run(calsim.Scenario("jit", fleet, "2026-01-01T00:00Z", "2026-01-03T00:00Z",
                                outages=[calsim.Outage("2026-01-01T05:00Z", "2026-01-01T09:30Z")],
                                budgets=[calsim.Budget("a", 20, "day", "UTC")]))


def _whole_seconds(frame: pl.DataFrame) -> dict[str, bool]:
    return {c: all(v is None or v.microseconds == 0 for v in frame[c].to_list())
            for c, t in frame.schema.items() if isinstance(t, pl.Duration)}


def test_summary_and_gaps_spans_are_whole_seconds_while_the_frame_keeps_microseconds(jittered):
    lateness = jittered.frame["lateness_s"].drop_nulls()
    assert ((lateness * 1e6).round() % 1_000_000 != 0).any()  # the raw column is untouched: not whole seconds
    s = jittered.summary(full=True)
    assert all(_whole_seconds(s).values()) and s["lateness_max"].item() is not None
    assert s["budget_wait_mean"].item() is not None and all(_whole_seconds(jittered.gaps()).values())
    exact = views.summary(jittered.frame, "jit", resolution="1us").collect()
    assert (s["lateness_max"].item() - exact["lateness_max"].item()) <= dt.timedelta(milliseconds=500)


def test_rounding_is_half_away_from_zero_and_exact_in_integers():
    got = pl.select(views.seconds_to_duration(pl.lit(pl.Series([0.499999, 0.5, 1.5, 7473.913043, -0.5]))))
    assert got.to_series().to_list() == [dt.timedelta(0), dt.timedelta(seconds=1), dt.timedelta(seconds=2),
                                         dt.timedelta(seconds=7474), -dt.timedelta(seconds=1)]


def test_a_tick_shorter_than_a_second_is_the_resolution():
    sc = calsim.Scenario("fast", calsim.with_policy([HOURLY], jitter="1s"), *DAY, tick="250ms")
    s = _run(sc).summary()
    assert views.resolution_of(sc) == 250_000
    assert all(v is None or v.microseconds % 250_000 == 0 for c in ("lateness_p95", "lateness_max")
               for v in s[c].to_list())
    assert s["lateness_max"].item() > dt.timedelta(0)  # not rounded away to whole seconds


def test_compare_answers_the_summarys_rounded_spans(jittered):
    with calsim.LedgerStore() as store:
        store.write(jittered)
        row = store.compare(["jit"]).row(0, named=True)
    s = jittered.summary().row(0, named=True)
    assert [row[c] for c in ("lateness_p50", "lateness_p95", "lateness_max")] == \
        [s[c] for c in ("lateness_p50", "lateness_p95", "lateness_max")]


# ----------------------------------------------------------------------------- natural order of ids


def _crontab_ids() -> list[calsim.Schedule]:
    return [calsim.Schedule(f"crontab:{i}", "UTC", "2026-01-01T00:00", "FREQ=HOURLY",
                            policy=calsim.Policy(cost=1.0, account=f"tenant-{i}")) for i in (10, 6, 2, 1)]


def test_views_sort_schedule_ids_naturally():
    sc = calsim.Scenario("c", _crontab_ids(), *DAY, outages=[calsim.Outage("2026-01-01T03:30Z", "2026-01-01T05:30Z")])
    led = _run(sc)
    want = ["crontab:1", "crontab:2", "crontab:6", "crontab:10"]
    assert led.coverage()["schedule_id"].to_list() == want
    assert led.gaps()["schedule_id"].unique(maintain_order=True).to_list() == want
    assert views.daily_cost(led.frame, led.accounts).collect()["account"].to_list() == [
        "tenant-1", "tenant-2", "tenant-6", "tenant-10"]


def test_natural_sort_keys_agree_between_polars_and_python():
    ids = ["job-10", "job-9", "job-009", "a1b", "a10", "a1", "x", "", "2", "10", "job-0010"]
    by_polars = pl.DataFrame({"id": ids}).sort(views.natural_key(pl.col("id")), "id")["id"].to_list()
    assert by_polars == sorted(ids, key=views.natural_sort_key)
    assert by_polars.index("job-9") < by_polars.index("job-10") and by_polars.index("2") < by_polars.index("10")


# ----------------------------------------------------------------------------- daily cost in a budget's calendar


def test_daily_cost_counts_each_account_in_its_budgets_calendar():
    # 30 runs an hour apart from 10:00 UTC: Lord Howe (+11 in January) starts its day at 13:00 UTC.
    s = calsim.Schedule("lh", "UTC", "2026-01-01T10:00", "FREQ=HOURLY;COUNT=30",
                        policy=calsim.Policy(cost=1.0, account="b"))
    u = calsim.Schedule("u", "UTC", "2026-01-01T10:00", "FREQ=HOURLY;COUNT=30",
                        policy=calsim.Policy(cost=1.0, account="utc"))
    budgets = [calsim.Budget("b", 45, "day", "Australia/Lord_Howe")]
    led = _run(calsim.Scenario("x", [s, u], "2026-01-01T00:00Z", "2026-01-03T00:00Z", release="2026f",
                               budgets=budgets))
    local = views.daily_cost(led.frame, led.accounts, zones=budgets).collect()
    assert local.filter(pl.col("account") == "b").select("day", "zone", "runs").rows() == [
        (dt.date(2026, 1, 1), "Australia/Lord_Howe", 3), (dt.date(2026, 1, 2), "Australia/Lord_Howe", 24),
        (dt.date(2026, 1, 3), "Australia/Lord_Howe", 3)]
    assert local.filter(pl.col("account") == "utc").select("day", "zone", "runs").rows() == [
        (dt.date(2026, 1, 1), "UTC", 14), (dt.date(2026, 1, 2), "UTC", 16)]
    utc = views.daily_cost(led.frame, led.accounts).collect()
    assert utc.columns == ["day", "account", "cost", "runs"] and "zone" not in utc.columns
    assert_frame_equal(views.daily_cost(led.frame, led.accounts, zones={"b": "Australia/Lord_Howe"}).collect(), local)


def test_daily_cost_reads_local_days_from_the_given_release_not_polars():
    job = calsim.Schedule("late-job", "UTC", "2026-11-01T04:30", "FREQ=DAILY", policy=calsim.Policy(cost=1.0,
                                                                                                   account="ny"))
    what_if = calsim.release("2026f").with_override("America/New_York", "2026-11-01T06:00Z", "EDT4")
    budgets = [calsim.Budget("ny", 5, "day", "America/New_York")]
    sc = calsim.Scenario("w", [job], "2026-11-10T00:00Z", "2026-11-12T00:00Z", release="2026f", budgets=budgets)
    led = _run(sc)
    real = views.daily_cost(led.frame, led.accounts, zones=budgets, release="2026f").collect()["day"].to_list()
    moved = views.daily_cost(led.frame, led.accounts, zones=budgets, release=what_if).collect()["day"].to_list()
    assert real == [dt.date(2026, 11, 9), dt.date(2026, 11, 10)]  # 04:30Z is 23:30 EST the day before
    assert moved == [dt.date(2026, 11, 10), dt.date(2026, 11, 11)]  # and 00:30 in the what-if's EDT
    assert views.daily_cost(led.frame, led.accounts, zones=budgets).collect()["day"].to_list() == real  # tzdata


def test_daily_cost_refuses_zones_that_are_not_a_calendar():
    led = _run(calsim.Scenario("x", [HOURLY], *DAY))
    with pytest.raises(calsim.InputError, match="^zones: expected a mapping account -> zone"):
        views.daily_cost(led.frame, led.accounts, zones=3)


def test_summary_features_read_revisions_costs_too():
    sc = calsim.Scenario("r", [HOURLY], *DAY, events=[calsim.Revise(
        "2026-01-01T12:00Z", dataclasses.replace(HOURLY, revision=2, policy=calsim.Policy(cost=1.0)))])
    assert views.summary_features(None, sc) == {"cost"}
