"""The store's ``observation_gaps`` SQL (calsim.store.schema.gaps_sql) against the polars view it mirrors.

The SQL looks for what decides a gap only near the occurrences not on time
(2 days, then 35, then anywhere): these tests reach each of those steps —
hand-made ledgers with runs days to months away, early and tied starts, and
simulated fleets through outages — and compare row for row with
:func:`calsim.simulation.views.gaps` (Durations as seconds, as csv/json carry them).
"""

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
from calsim.store import LedgerStore
from calsim.text_table import durations_as_seconds

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
HOUR_US = 3_600_000_000


def hand_ledger(rows: list[tuple], name: str = "h") -> pl.DataFrame:
    """A ledger frame from ``(schedule_id, due_us | None, started_us | None[, reason][, kind])``, µs after T0.

    A row with a start is done, one without skipped; each row has its own
    nominal time (so the key holds whatever the due instants).
    """
    out = []
    for i, (sid, due, started, *rest) in enumerate(rows):
        reason = rest[0] if rest else None
        kind = rest[1] if len(rest) > 1 else "scheduled"
        at = None if due is None else T0 + dt.timedelta(microseconds=due)
        go = None if started is None else T0 + dt.timedelta(microseconds=started)
        out.append({"scenario": name, "schedule_id": sid, "revision": 1,
                    "nominal_local": (T0 + dt.timedelta(minutes=i)).replace(tzinfo=None), "fold": 0, "zone": "UTC",
                    "tzdata": "2026f", "due_utc": at, "utc_offset_s": 0, "notes": [], "kind": kind,
                    "eligible_utc": at, "started_utc": go, "finished_utc": go,
                    "lateness_s": None if go is None or at is None else (started - due) / 1e6,
                    "state": "done" if go is not None else "skipped",
                    "reason": None if go is not None else (reason or "catchup"),
                    "attempts": int(go is not None), "cost": 1.0, "budget_wait_s": 0.0})
    return pl.DataFrame(out, schema=LEDGER_SCHEMA)


@pytest.fixture(scope="module")
def store():
    with LedgerStore() as s:
        yield s


def assert_view_equals_polars(store: LedgerStore, frame: pl.DataFrame, name: str) -> pl.DataFrame:
    store.write(frame, name=name, replace=True)
    # The SQL keeps exact spans: the view at a microsecond's resolution (its default rounds to seconds).
    want = durations_as_seconds(views.gaps(frame, resolution="1us").collect())
    got = store.sql("SELECT * EXCLUDE (scenario) FROM observation_gaps WHERE scenario = $1 "
                    "ORDER BY schedule_id, from_utc NULLS FIRST", [name])
    assert got.columns == want.columns
    assert_frame_equal(got.select(pl.col(c).cast(want.schema[c]) for c in want.columns), want, check_exact=True)
    return want


def h(x: float) -> int:
    return int(x * HOUR_US)


@pytest.mark.parametrize("rows, gaps", [
    # daily; 4 missed; the runs around them 1 day away (found within 2 days)
    ([("d", h(24 * i), h(24 * i)) for i in range(5)] + [("d", h(24 * i), None) for i in range(5, 9)]
     + [("d", h(24 * i), h(24 * i)) for i in range(9, 12)], 1),
    # monthly; one missed; the runs around it 30 days away (found within 35 days)
    ([("m", h(720 * i), h(720 * i)) for i in (0, 1)] + [("m", h(1440), None)] + [("m", h(2160), h(2160))], 1),
    # the last run 80 days before the missed ones, the next 90 days after (found anywhere)
    ([("q", h(0), h(0)), ("q", h(1920), None), ("q", h(1944), None), ("q", h(4104), h(4104))], 1),
    # never ran before, and never after: open at both ends
    ([("n", h(0), None), ("n", h(1000), None)], 1),
    # a catch-up 60 days late: late, and its start closes the gap
    ([("c", h(0), h(0)), ("c", h(24), h(24 * 61)), ("c", h(48), h(24 * 61)), ("c", h(24 * 62), h(24 * 62))], 1),
    # an early start (before its due instant) and a run started as the next is due
    ([("e", h(0), h(-1)), ("e", h(1), h(2)), ("e", h(2), None), ("e", h(3), h(3))], 2),
    # two rows due at once (the next distinct instant decides; the one not done is missed), by-design and
    # manual rows ignored
    ([("t", h(0), h(0)), ("t", h(1), h(1.5)), ("t", h(1), None, "revision"), ("t", None, None, "dst_gap"),
      ("t", h(2), h(2)), ("t", h(2.5), h(2.5), None, "manual"), ("t", h(3), None), ("t", h(4), h(4))], 2),
    # nothing wrong: no gap
    ([("ok", h(i), h(i)) for i in range(10)], 0),
])
def test_observation_gaps_equal_the_polars_view_wherever_the_bounding_runs_are(store, rows, gaps):
    assert assert_view_equals_polars(store, hand_ledger(rows), "h").height == gaps


def test_compare_reports_the_longest_gap_and_the_most_missed_and_late_of_one_gap(store):
    rows = ([("c", h(0), h(0)), ("c", h(24), h(24 * 61)), ("c", h(48), h(24 * 61)), ("c", h(24 * 62), h(24 * 62))]
            + [("d", h(24 * i), h(24 * i)) for i in range(3)] + [("d", h(24 * i), None) for i in range(3, 6)]
            + [("d", h(144), h(144))])
    frame = hand_ledger(rows, "cmp")
    gaps = assert_view_equals_polars(store, frame, "cmp")
    row = store.compare("cmp").row(0, named=True)
    assert row["longest_gap"] == dt.timedelta(days=61) == dt.timedelta(seconds=gaps["gap_s"].max())
    assert (row["most_missed"], row["most_late"]) == (3, 1)  # 01-03 ran late on day 61, 01-02 only before 03-03


@st.composite
def hand_ledgers(draw):
    """One to three schedules: due instants minutes to two months apart (some tied), runs early, on time, or
    up to 70 days late, or never; by-design and manual rows now and then."""
    rows = []
    for sid in ("a", "b", "c")[:draw(st.integers(1, 3))]:
        due = draw(st.integers(-h(24 * 30), h(24 * 30)))
        for _ in range(draw(st.integers(1, 14))):
            due += draw(st.sampled_from([0, h(0.25), h(1), h(24), h(24 * 7), h(24 * 31), h(24 * 60)]))
            kind = draw(st.sampled_from(["run", "run", "run", "never", "late", "early", "design", "manual"]))
            if kind == "design":
                rows.append((sid, None, None, "dst_gap"))
            elif kind == "never":
                rows.append((sid, due, None))
            else:
                lag = {"run": 0, "late": draw(st.integers(1, h(24 * 70))), "early": -draw(st.integers(1, h(2))),
                       "manual": draw(st.integers(0, h(3)))}[kind]
                rows.append((sid, due, due + lag) + ((None, "manual") if kind == "manual" else ()))
    return hand_ledger(rows)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hand_ledgers())
def test_observation_gaps_equal_the_polars_view_on_random_hand_made_ledgers(store, frame):
    assert_view_equals_polars(store, frame, "h")


@st.composite
def outage_scenarios(draw):
    """Daily, weekly and monthly schedules over four months, outages of an hour to seven weeks (one may start
    with the horizon or end with it), every catch-up mode."""
    rules = ["FREQ=HOURLY;INTERVAL=5", "FREQ=DAILY;BYHOUR=2,14", "FREQ=WEEKLY;BYDAY=MO", "FREQ=MONTHLY;BYMONTHDAY=3",
             "0 9 * * 1-5"]
    start, end = dt.datetime(2026, 1, 1, tzinfo=UTC), dt.datetime(2026, 5, 1, tzinfo=UTC)
    scheds = [calsim.Schedule(f"s{i}", draw(st.sampled_from(["UTC", "America/New_York"])), "2026-01-01T00:00",
                              rule, policy=calsim.Policy(catchup=draw(st.sampled_from(["all", "latest", "skip"])),
                                                         max_lateness=draw(st.sampled_from([None, "3d"]))))
              for i, rule in enumerate(draw(st.lists(st.sampled_from(rules), min_size=1, max_size=4, unique=True)))]
    outages, t = [], start + dt.timedelta(hours=draw(st.sampled_from([0, 1, 24 * 20])))
    for _ in range(draw(st.integers(1, 2))):
        b = min(t + dt.timedelta(hours=draw(st.sampled_from([1, 30, 24 * 9, 24 * 50]))), end)
        outages.append(calsim.Outage(t, b))
        t = b + dt.timedelta(days=draw(st.integers(1, 30)))
        if t >= end:
            break
    return calsim.Scenario("o", scheds, start, end, outages=outages, tick="5min")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(outage_scenarios())
def test_observation_gaps_equal_the_polars_view_after_long_outages(store, sc):
    assert_view_equals_polars(store, calsim.simulate(sc, progress=False).frame, "o")


def test_a_fleet_through_an_outage_under_each_catch_up_mode(store):
    for mode in ("all", "latest", "earliest", "skip"):
        fleet = calsim.with_policy(calsim.examples.fleet(60, seed=0), catchup=mode, max_lateness="2d",
                                   overlap="skip", duration="1min", cost=1.0, account="tenant-a")
        led = calsim.simulate(calsim.Scenario(mode, fleet, "2026-10-01T00:00Z", "2026-11-01T00:00Z", release="2026f",
                                              outages=[calsim.Outage("2026-10-20T01:01Z", "2026-10-24T12:00Z")],
                                              budgets=[calsim.Budget("tenant-a", 400, "day", "Asia/Shanghai")]),
                              progress=False)
        assert assert_view_equals_polars(store, led.frame, mode).height
