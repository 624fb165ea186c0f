"""The ledger's views (calsim.simulation.views): Durations, gaps as silences, coverage, one definition."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import calsim
from calsim.simulation import views
from calsim.simulation.ledger import LEDGER_SCHEMA

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
DAY = dt.timedelta(days=1)


def daily_outage(catchup: str) -> calsim.Ledger:
    """A daily 00:00 UTC job; the scheduler down for three days, 2026-01-02 00:00 to 2026-01-05 00:00."""
    s = calsim.Schedule("daily", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=calsim.Policy(catchup=catchup))
    return calsim.simulate(calsim.Scenario(catchup, [s], "2026-01-01T00:00Z", "2026-01-10T00:00Z", release="2026f",
                                           outages=[calsim.Outage("2026-01-02T00:00Z", "2026-01-05T00:00Z")]),
                           progress=False)


def hand_ledger(*rows: tuple) -> pl.DataFrame:
    """A ledger frame from ``(schedule_id, due_h, started_h | None[, reason][, kind])``: hours after T0.

    A started row is done, a row without a start skipped; lateness is start - due.
    """
    out = []
    for sid, due, started, *rest in rows:
        reason = rest[0] if rest else None
        kind = rest[1] if len(rest) > 1 else "scheduled"
        at = None if due is None else T0 + dt.timedelta(hours=due)
        go = None if started is None else T0 + dt.timedelta(hours=started)
        out.append({"scenario": "h", "schedule_id": sid, "revision": 1,
                    "nominal_local": (T0 + dt.timedelta(hours=due if due is not None else 0)).replace(tzinfo=None),
                    "fold": 0, "zone": "UTC", "tzdata": "2026f", "due_utc": at, "utc_offset_s": 0, "notes": [],
                    "kind": kind, "eligible_utc": at, "started_utc": go, "finished_utc": go,
                    "lateness_s": None if go is None else (go - at).total_seconds(),
                    "state": "done" if go is not None else "skipped",
                    "reason": None if go is not None else (reason or "catchup"),
                    "attempts": int(go is not None), "cost": 1.0, "budget_wait_s": 0.0})
    return pl.DataFrame(out, schema=LEDGER_SCHEMA)


# ----------------------------------------------------------------------------- gaps: silences


def test_catch_up_all_after_a_three_day_outage_is_one_gap_of_late_runs():
    g = daily_outage("all").gaps()
    assert g.height == 1
    row = g.row(0, named=True)
    # Last run before: 01-01 00:00; the catch-up burst of 01-02, 01-03, 01-04 at 01-05 00:00.
    assert (row["from_utc"], row["to_utc"]) == (T0, T0 + 4 * DAY)
    assert (row["missed"], row["late"], row["gap"]) == (0, 3, 4 * DAY)
    assert row["catchup_lateness"] == 3 * DAY  # 01-02's run, three days after it was due
    assert (row["first_missed_local"], row["first_missed_utc"]) == (dt.datetime(2026, 1, 2), T0 + DAY)


def test_catch_up_latest_after_the_same_outage_misses_what_it_coalesced():
    row = daily_outage("latest").gaps().row(0, named=True)
    # 01-05 is picked at the wake-up that finds 01-02..01-04: it is the latest of that backlog
    # (DESIGN.md §5), runs on time and the three are coalesced into it.
    assert (row["missed"], row["late"], row["catchup_lateness"]) == (3, 0, None)
    assert row["to_utc"] == T0 + 4 * DAY


def test_an_occurrence_due_as_a_run_starts_lies_after_that_run():
    # b's catch-up of 0:00 starts at 5:00, when 5:00 is due and is skipped: 5:00 opens the next span.
    g = views.gaps(hand_ledger(("b", 0, 5), ("b", 5, None), ("b", 6, 6))).collect()
    assert g.select("from_utc", "to_utc", "missed", "late").rows() == [
        (None, T0 + dt.timedelta(hours=5), 0, 1),
        (T0 + dt.timedelta(hours=5), T0 + dt.timedelta(hours=6), 1, 0)]


def test_a_late_run_alone_is_a_gap_with_no_missed_occurrence():
    # Hourly; 02:00 ran at 03:30 (after 03:00 was due), 03:00 on time at 03:30 too.
    g = views.gaps(hand_ledger(*[("h", h, h) for h in (0, 1)], ("h", 2, 3.5), ("h", 3, 3.5), ("h", 4, 4))).collect()
    assert g.select("from_utc", "to_utc", "missed", "late", "catchup_lateness").rows() == [
        (T0 + dt.timedelta(hours=1), T0 + dt.timedelta(hours=3.5), 0, 1, dt.timedelta(hours=1.5))]


def test_spans_before_the_first_and_after_the_last_run_are_open():
    g = views.gaps(hand_ledger(("s", 0, None), ("s", 1, 1), ("s", 2, 2), ("s", 3, None), ("s", 4, None))).collect()
    assert g.select("from_utc", "to_utc", "gap", "missed").rows() == [
        (None, T0 + dt.timedelta(hours=1), None, 1), (T0 + dt.timedelta(hours=2), None, None, 2)]


def test_a_schedule_that_never_ran_is_one_gap_open_at_both_ends():
    g = views.gaps(hand_ledger(("n", 0, None), ("n", 1, None))).collect()
    assert g.select("from_utc", "to_utc", "missed", "late").rows() == [(None, None, 2, 0)]


def test_occurrences_never_meant_to_run_and_manual_runs_neither_open_nor_close_a_gap():
    f = hand_ledger(("d", 0, 0), ("d", None, None, "dst_gap"), ("d", 1, None, "calendar"), ("d", 2, 2),
                    ("d", 3, None), ("d", 3.5, 3.5, None, "manual"), ("d", 4, 4))
    assert views.gaps(f).collect().select("from_utc", "to_utc", "missed").rows() == [
        (T0 + dt.timedelta(hours=2), T0 + dt.timedelta(hours=4), 1)]
    cov = views.coverage(f).collect().row(0, named=True)
    assert (cov["occurrences"], cov["on_time"], cov["never"]) == (4, 3, 1)


def test_a_run_started_when_a_tied_due_instant_comes_up_is_judged_by_the_next_distinct_one():
    # Two rows due at 01:00 (two revisions); the one that ran started at 01:30, before 02:00 was due.
    f = hand_ledger(("t", 0, 0), ("t", 1, 1.5), ("t", 1, None, "revision"), ("t", 2, 2))
    c = views.classified(f).collect()
    assert c.filter(pl.col("started_utc").is_not_null())["status"].to_list() == ["on_time"] * 3


def test_a_run_late_within_its_own_period_is_on_time_unless_late_after_says_otherwise():
    # Daily 12:00; down from 01-02 11:00 to 01-03 06:00: 01-02's run starts 18 h late, before 01-03 12:00.
    s = calsim.Schedule("noon", "UTC", "2026-01-01T12:00", "FREQ=DAILY", policy=calsim.Policy(catchup="all"))
    led = calsim.simulate(calsim.Scenario("n", [s], "2026-01-01T00:00Z", "2026-01-05T00:00Z",
                                          outages=[calsim.Outage("2026-01-02T11:00Z", "2026-01-03T06:00Z")]),
                          progress=False)
    assert led.gaps().height == 0 and led.coverage()["late"].to_list() == [0]
    strict = led.gaps(late_after="1min").row(0, named=True)
    assert (strict["missed"], strict["late"], strict["catchup_lateness"]) == (0, 1, dt.timedelta(hours=18))
    assert led.coverage(late_after=dt.timedelta(hours=18))["late"].to_list() == [0]  # not beyond 18 h


def test_late_after_that_is_not_a_duration_is_refused_naming_the_option():
    with pytest.raises(calsim.InputError, match=r"^late_after: cannot parse 'soon'; expected an ISO 8601 duration"):
        views.gaps(hand_ledger(("a", 0, 0)), late_after="soon")


# ----------------------------------------------------------------------------- coverage


def test_coverage_counts_add_up_to_the_occurrences_meant_to_run():
    cov = daily_outage("latest").coverage().row(0, named=True)
    assert cov["occurrences"] == 9 == cov["on_time"] + cov["late"] + cov["never"]
    assert (cov["late"], cov["never"]) == (0, 3)
    assert (cov["first_never_local"], cov["first_never_utc"]) == (dt.datetime(2026, 1, 2), T0 + DAY)


def test_coverage_lists_a_schedule_none_of_whose_occurrences_was_meant_to_run():
    cov = views.coverage(hand_ledger(("a", 0, 0), ("z", None, None, "calendar"))).collect()
    assert cov.select("schedule_id", "occurrences", "on_time", "never").rows() == [("a", 1, 1, 0), ("z", 0, 0, 0)]


# ----------------------------------------------------------------------------- summary: Durations


def test_summary_spans_are_durations_named_without_seconds():
    s = daily_outage("all").summary(full=True)
    spans = ["lateness_p50", "lateness_p95", "lateness_max", "budget_wait_mean", "budget_wait_max"]
    assert {c: s.schema[c] for c in spans} == {c: pl.Duration("us") for c in spans}
    assert not [c for c in s.columns if c.endswith("_s")]
    assert s["lateness_max"][0] == 3 * DAY and s["budget_wait_mean"][0] is None


def test_gap_and_lateness_columns_are_durations():
    g = daily_outage("all").gaps()
    assert g.schema["gap"] == g.schema["catchup_lateness"] == pl.Duration("us")


def test_summary_of_an_empty_ledger_keeps_its_dtypes():
    s = views.summary(pl.DataFrame(schema=LEDGER_SCHEMA), "empty").collect()
    assert s.row(0, named=True)["done"] == 0 and s["lateness_p50"].dtype == pl.Duration("us")
    assert s["lateness_p50"][0] is None and s["cost"][0] == 0.0


def test_views_on_a_lazy_parquet_scan_equal_the_ledgers(tmp_path):
    led = daily_outage("latest")
    led.frame.write_parquet(tmp_path / "l.parquet")
    scan = pl.scan_parquet(tmp_path / "l.parquet")
    assert_frame_equal(views.summary(scan, led.name).collect(), led.summary(full=True))
    assert_frame_equal(views.gaps(scan).collect(), led.gaps())
    assert_frame_equal(views.coverage(scan).collect(), led.coverage())
    assert_frame_equal(views.daily_cost(scan).collect(), led.daily_cost())


def test_a_fresh_ledger_on_enum_codes_gives_the_views_of_its_string_frame():
    s = [calsim.Schedule(f"j{i}", "UTC", "2026-01-01T00:00", "FREQ=HOURLY;INTERVAL=5",
                         policy=calsim.Policy(catchup="latest")) for i in range(3)]
    sc = calsim.Scenario("codes", s, "2026-01-01T00:00Z", "2026-01-04T00:00Z",
                         outages=[calsim.Outage("2026-01-02T00:00Z", "2026-01-02T13:00Z")])
    fresh, read = calsim.simulate(sc, progress=False), calsim.simulate(sc, progress=False)
    read.frame  # noqa: B018  (strings from now on)
    assert_frame_equal(fresh.gaps(), read.gaps())
    assert_frame_equal(fresh.coverage(), read.coverage())


# ----------------------------------------------------------------------------- property


@st.composite
def scenarios(draw):
    rules = ["FREQ=HOURLY", "FREQ=MINUTELY;INTERVAL=40", "FREQ=DAILY;BYHOUR=2,9;BYMINUTE=30", "0 9 * * 1-5"]
    scheds = []
    for i in range(draw(st.integers(1, 3))):
        catchup = draw(st.sampled_from(["all", "latest", "earliest", "skip", "bounded"]))
        pol = calsim.Policy(catchup=catchup, limit=draw(st.integers(1, 3)) if catchup == "bounded" else None,
                            max_lateness=draw(st.sampled_from([None, "2h", "1d"])),
                            overlap=draw(st.sampled_from(["allow", "skip", "buffer_one"])),
                            duration=draw(st.sampled_from([None, "5min", "90min"])),
                            jitter=draw(st.sampled_from([None, "3min"])), cost=1.0,
                            account=draw(st.sampled_from([None, "a"])),
                            on_budget=draw(st.sampled_from(["wait", "skip"])))
        scheds.append(calsim.Schedule(f"s{i}", draw(st.sampled_from(["UTC", "America/New_York"])), "2026-03-06T00:00",
                                      draw(st.sampled_from(rules)), policy=pol))
    start = dt.datetime(2026, 3, 7, tzinfo=UTC)
    outages, t = [], start
    for _ in range(draw(st.integers(0, 2))):
        a = t + dt.timedelta(minutes=draw(st.integers(10, 1440)))
        b = a + dt.timedelta(minutes=draw(st.integers(1, 1440)))
        outages.append(calsim.Outage(a, b))
        t = b
    events = []
    if draw(st.booleans()):
        a = start + dt.timedelta(minutes=draw(st.integers(0, 3 * 1440)))
        events = [calsim.Pause(a, schedule_id="s0"), calsim.Resume(a + dt.timedelta(hours=5), schedule_id="s0")]
    return calsim.Scenario("prop", scheds, start, start + dt.timedelta(days=3), outages=outages, events=events,
                           budgets=[calsim.Budget("a", draw(st.integers(3, 30)), "day", "UTC")],
                           tick=draw(st.sampled_from(["1min", "5min"])), seed=draw(st.integers(0, 3)))


def _statuses(frame: pl.DataFrame, late_after: float | None) -> dict[str, list[tuple]]:
    """The rule of views' docstring, row by row in Python: schedule -> [(due, status, started)]."""
    out: dict[str, list[tuple]] = {}
    rows = frame.filter((pl.col("kind") == "scheduled") & pl.col("due_utc").is_not_null()
                        & ~pl.col("reason").cast(pl.String).is_in(["dst_gap", "merged", "calendar"]).fill_null(False))
    for sid, part in rows.group_by("schedule_id"):
        dues = sorted(set(part["due_utc"].to_list()))
        nxt = dict(zip(dues, dues[1:] + [None]))
        out[sid[0]] = [(due, "never" if state != "done" else
                        "late" if (nxt[due] is not None and started >= nxt[due])
                        or (late_after is not None and late > late_after) else "on_time", started)
                       for due, state, started, late in
                       part.select("due_utc", "state", "started_utc", "lateness_s").iter_rows()]
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from([None, None, 60.0, 7200.0]))
def test_gaps_are_silences_that_hold_every_occurrence_not_on_time_exactly_once(sc, late_after):
    led = calsim.simulate(sc, progress=False)
    gaps, cov = led.gaps(late_after=late_after), led.coverage(late_after=late_after)
    lo, hi = dt.datetime.min.replace(tzinfo=UTC), dt.datetime.max.replace(tzinfo=UTC)
    for sid, occ in _statuses(led.frame, late_after).items():
        spans = [(a or lo, b or hi, m, n) for a, b, m, n in
                 gaps.filter(pl.col("schedule_id") == sid).select("from_utc", "to_utc", "missed", "late").iter_rows()]
        assert all(a < b for a, b, _, _ in spans)
        assert all(p[1] <= q[0] for p, q in zip(spans, spans[1:]))  # sorted, never overlapping
        starts = [s for _, st_, s in occ if st_ != "never"]
        assert not [s for s in starts for a, b, _, _ in spans if a < s < b]  # silence: no run starts inside
        bad = [(due, st_) for due, st_, _ in occ if st_ != "on_time"]
        for due, _ in bad:
            assert sum(a <= due < b for a, b, _, _ in spans) == 1
        assert sum(m for *_, m, _ in spans) == sum(s == "never" for _, s in bad)
        assert sum(n for *_, n in spans) == sum(s == "late" for _, s in bad)
        assert all(any(a <= due < b for due, _ in bad) for a, b, _, _ in spans)
        row = cov.filter(pl.col("schedule_id") == sid).row(0, named=True)
        assert (row["on_time"], row["late"], row["never"]) == tuple(
            sum(s == k for _, s, _ in occ) for k in ("on_time", "late", "never"))
        assert row["occurrences"] == len(occ) == row["on_time"] + row["late"] + row["never"]


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.sampled_from([0.0, 0.0, 5e-324, 60.0])),
                       min_size=0, max_size=400),
       bins=st.integers(2, 16), small=st.integers(1, 64))
def test_streamed_quantiles_equal_polars_nearest_quantiles_exactly(values, bins, small):
    """The streaming passes (a dataset's summary) give polars' own nearest-rank quantile, bit for bit."""
    qs = (0.5, 0.95, 0.0, 1.0, 0.3)
    got = views.nearest_quantiles(pl.LazyFrame({"v": values}, schema={"v": pl.Float64}), qs, bins=bins, small=small)
    want = [pl.Series(values, dtype=pl.Float64).quantile(q) for q in qs]
    assert got == want


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=0, max_size=300),
       cuts=st.lists(st.integers(0, 300), max_size=4), small=st.integers(1, 64))
def test_quantile_passes_run_elsewhere_over_parts_give_polars_quantiles(values, cuts, small):
    """``each`` runs every pass over the parts itself (a Dask dataset's workers): the same exact quantiles."""
    bounds = [0, *sorted(c for c in cuts if c <= len(values)), len(values)]
    parts = [pl.LazyFrame({"v": values[a:b]}, schema={"v": pl.Float64}) for a, b in zip(bounds, bounds[1:])]
    qs = (0.5, 0.95)  # (no values given but through each: without it, no quantile could be found)
    got = views.nearest_quantiles([], qs, bins=4, small=small, each=lambda plan: [plan(p).collect() for p in parts])
    assert got == [pl.Series(values, dtype=pl.Float64).quantile(q) for q in qs]


def test_a_streamed_summary_equals_the_in_memory_summary():
    led = calsim.simulate(calsim.Scenario("s", calsim.with_policy(calsim.examples.fleet(40, seed=2), jitter="7min"),
                                          "2026-03-01T00:00Z", "2026-03-09T00:00Z",
                                          outages=[calsim.Outage("2026-03-03T00:00Z", "2026-03-04T12:00Z")]))
    streamed = views.summary(led.frame.lazy(), "s", streamed=True).collect(engine="streaming")
    assert streamed.equals(led.summary(full=True))
