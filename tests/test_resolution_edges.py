"""Resolution at the first and last microsecond of a gap and of a fold.

Each test pins one behaviour at an exact edge, against a real oracle (found unpinned by a hand-made mutation run).

* **resolution** at the first and last microsecond of a gap and of a fold
  (America/New_York, Europe/Berlin, Australia/Lord_Howe, 2026), alone (the
  single-period fast path of ``resolve_wall``) and in a batch (the per-row
  search), for every gap and fold policy; oracle: ``zoneinfo`` built from
  the same release's TZif bytes (``calsim.release("2026f").zone``), PEP 495.
"""

from __future__ import annotations

import datetime as dt
import io
import zoneinfo

import numpy as np
import polars as pl
import pytest
from oracles.instants import us_of
from oracles.pep495 import first_instant_after_gap
from tzif_writer import tzif_bytes

import calsim
from calsim.errors import AmbiguousTimeError, NonexistentTimeError
from calsim.resolution import resolve_wall
from calsim.tz.tzif import ZoneTable

UTC = dt.timezone.utc
REL = "2026f"
US = 1_000_000
MICRO = dt.timedelta(microseconds=1)


def _zone(name: str):
    return calsim.release(REL).zone(name)


# Resolution at the edges of gaps and folds

# (zone, first wall time of the anomaly, first wall time after it), 2026, release 2026f.
GAPS = [
    ("America/New_York", "2026-03-08T02:00", "2026-03-08T03:00"),
    ("Europe/Berlin", "2026-03-29T02:00", "2026-03-29T03:00"),
    ("Australia/Lord_Howe", "2026-10-04T02:00", "2026-10-04T02:30"),  # a 30-minute gap
]
FOLDS = [
    ("America/New_York", "2026-11-01T01:00", "2026-11-01T02:00"),
    ("Europe/Berlin", "2026-10-25T02:00", "2026-10-25T03:00"),
    ("Australia/Lord_Howe", "2026-04-05T01:30", "2026-04-05T02:00"),  # a 30-minute fold
]
GAP_POLICIES = ("skip", "shift", "next_valid", "shift_backward", "reject")
FOLD_POLICIES = ("first", "second", "both", "reject")


def _edges(lower: str, upper: str) -> list[dt.datetime]:
    """The last µs before, the first, second and last µs of, and the first µs after an anomaly."""
    lo, hi = dt.datetime.fromisoformat(lower), dt.datetime.fromisoformat(upper)
    return [lo - MICRO, lo, lo + MICRO, hi - MICRO, hi]


def _pep495(zone_name: str, wall: dt.datetime) -> tuple[str, dt.datetime, dt.datetime]:
    """zoneinfo's reading of a wall time: kind, fold=0 instant, fold=1 instant (PEP 495)."""
    z = _zone(zone_name)
    u0 = wall.replace(tzinfo=z, fold=0).astimezone(UTC)
    u1 = wall.replace(tzinfo=z, fold=1).astimezone(UTC)
    if u0.astimezone(z).replace(tzinfo=None) != wall:
        return "gap", u0, u1
    return ("fold" if u0 != u1 else "ok"), u0, u1


def _offset(zone_name: str, instant: dt.datetime) -> int:
    return int(instant.astimezone(_zone(zone_name)).utcoffset().total_seconds())


def _expected_gap_row(zone_name: str, wall: dt.datetime, gap: str) -> dict:
    """What DESIGN.md §2 says each gap policy gives, computed with zoneinfo."""
    kind, u0, u1 = _pep495(zone_name, wall)
    if kind != "gap":
        assert kind == "ok"
        return {"due_utc": u0, "utc_offset_s": _offset(zone_name, u0), "kind": "ok", "notes": []}
    if gap == "skip":
        return {"due_utc": None, "utc_offset_s": None, "kind": "gap", "notes": ["dst_gap_skipped"]}
    if gap == "shift":  # PEP 495 fold=0: the offset before the jump
        due = u0
    elif gap == "shift_backward":  # fold=1: the offset after it
        due = u1
    else:  # next_valid: the instant of the jump, the first whose wall clock is past the time
        due_us = first_instant_after_gap(_zone(zone_name), us_of(wall), us_of(u1), us_of(u0))
        due = dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=due_us)
    note = {"shift": "dst_gap_shifted", "next_valid": "dst_gap_next_valid",
            "shift_backward": "dst_gap_shifted_backward"}[gap]
    return {"due_utc": due, "utc_offset_s": _offset(zone_name, due), "kind": "gap", "notes": [note]}


def _rows(frame: pl.DataFrame) -> list[dict]:
    return frame.select("due_utc", "utc_offset_s", "kind", "notes").with_columns(
        pl.col("kind").cast(pl.String)).to_dicts()


@pytest.mark.parametrize("zone,lower,upper", GAPS, ids=[g[0] for g in GAPS])
def test_gap_edges_are_what_zoneinfo_says(zone, lower, upper):
    """The oracle's own view of the edges used below: ok, gap, gap, gap, ok."""
    kinds = [_pep495(zone, w)[0] for w in _edges(lower, upper)]
    assert kinds == ["ok", "gap", "gap", "gap", "ok"]


@pytest.mark.parametrize("gap", GAP_POLICIES)
@pytest.mark.parametrize("zone,lower,upper", GAPS, ids=[g[0] for g in GAPS])
def test_a_single_wall_time_at_each_gap_edge_resolves_as_zoneinfo(zone, lower, upper, gap):
    # One time per call: the single-period fast path of resolve_wall is tried for each.
    for wall in _edges(lower, upper):
        if gap == "reject" and _pep495(zone, wall)[0] == "gap":
            with pytest.raises(NonexistentTimeError, match="does not exist"):
                calsim.resolve([wall], zone, release=REL, gap=gap)
            continue
        expected = _expected_gap_row(zone, wall, "skip" if gap == "reject" else gap)
        got = _rows(calsim.resolve([wall], zone, release=REL, gap=gap))
        assert got == [expected], (zone, wall, gap)


@pytest.mark.parametrize("gap", GAP_POLICIES[:4])
@pytest.mark.parametrize("zone,lower,upper", GAPS, ids=[g[0] for g in GAPS])
def test_the_gap_edges_in_one_batch_resolve_as_zoneinfo(zone, lower, upper, gap):
    walls = _edges(lower, upper)
    got = _rows(calsim.resolve(walls, zone, release=REL, gap=gap))
    assert got == [_expected_gap_row(zone, w, gap) for w in walls]


@pytest.mark.parametrize("zone,lower,upper", GAPS, ids=[g[0] for g in GAPS])
def test_a_batch_ending_exactly_at_a_gap_start_keeps_its_last_time_a_gap(zone, lower, upper):
    # Every time but the last lies in one period, so the batch is one search away
    # from the fast path; the last one is the gap's first µs.
    lo = dt.datetime.fromisoformat(lower)
    walls = [lo - dt.timedelta(hours=h) for h in range(24, 0, -1)] + [lo]
    got = calsim.resolve(walls, zone, release=REL, gap="skip")
    assert got["kind"].cast(pl.String).to_list() == ["ok"] * 24 + ["gap"]
    assert got["due_utc"].to_list() == [_pep495(zone, w)[1] for w in walls[:-1]] + [None]


@pytest.mark.parametrize("zone,lower,upper", GAPS, ids=[g[0] for g in GAPS])
def test_a_batch_starting_exactly_at_a_gap_end_is_all_in_the_new_offset(zone, lower, upper):
    hi = dt.datetime.fromisoformat(upper)
    walls = [hi + dt.timedelta(hours=h) for h in range(0, 24 * 30, 7)]
    got = calsim.resolve(walls, zone, release=REL, gap="skip")
    assert set(got["kind"].cast(pl.String).to_list()) == {"ok"}
    assert got["due_utc"].to_list() == [_pep495(zone, w)[1] for w in walls]
    assert got["utc_offset_s"].to_list() == [_offset(zone, _pep495(zone, w)[1]) for w in walls]


@pytest.mark.parametrize("zone,lower,upper", FOLDS, ids=[f[0] for f in FOLDS])
def test_fold_edges_are_what_zoneinfo_says(zone, lower, upper):
    kinds = [_pep495(zone, w)[0] for w in _edges(lower, upper)]
    assert kinds == ["ok", "fold", "fold", "fold", "ok"]


@pytest.mark.parametrize("fold", FOLD_POLICIES)
@pytest.mark.parametrize("batch", [False, True], ids=["alone", "batch"])
@pytest.mark.parametrize("zone,lower,upper", FOLDS, ids=[f[0] for f in FOLDS])
def test_fold_edges_resolve_as_zoneinfo(zone, lower, upper, batch, fold):
    walls = _edges(lower, upper)
    expected: list[tuple] = []
    for w in walls:
        kind, u0, u1 = _pep495(zone, w)
        if kind == "ok":
            expected.append((w, 0, u0, _offset(zone, u0), "ok", []))
            continue
        note = {"first": "dst_fold_first", "second": "dst_fold_second", "both": "dst_fold_both"}.get(fold)
        if fold in ("first", "both"):
            expected.append((w, 0, u0, _offset(zone, u0), "fold", [note]))
        if fold in ("second", "both"):
            expected.append((w, 1, u1, _offset(zone, u1), "fold", [note]))
    calls = [walls] if batch else [[w] for w in walls]
    if fold == "reject":
        for call in calls:
            if any(_pep495(zone, w)[0] == "fold" for w in call):
                with pytest.raises(AmbiguousTimeError, match="happens twice"):
                    calsim.resolve(call, zone, release=REL, fold=fold)
        return
    got = []
    for call in calls:
        frame = calsim.resolve(call, zone, release=REL, fold=fold)
        got += [tuple(r.values()) for r in frame.select(
            "nominal_local", "fold", "due_utc", "utc_offset_s", pl.col("kind").cast(pl.String), "notes").to_dicts()]
    assert got == expected


# A synthetic zone whose anomalies overlap (transitions closer than their jumps), which
# resolve_wall handles by its definition (_crowded_indices): period k shows wall L iff
# L - offset_k lies in it; fold 0 is the earliest such instant, fold 1 the latest.
CROWDED_BASE = 1_700_000_000
CROWDED = [(CROWDED_BASE, 10800), (CROWDED_BASE + 3600, 0), (CROWDED_BASE + 5400, -7200),
           (CROWDED_BASE + 9000, 5400), (CROWDED_BASE + 9900, 0)]


def test_crowded_transitions_resolve_at_every_period_edge_as_zoneinfo_reads_instants():
    raw = tzif_bytes(CROWDED, 0)
    z = zoneinfo.ZoneInfo.from_file(io.BytesIO(raw), key="Test/Crowded")  # UTC -> local is always defined
    table = ZoneTable.from_bytes("Test/Crowded", raw)
    offsets = sorted({0, *(o for _, o in CROWDED)})
    edges = {t + o for t, _ in CROWDED for o in offsets}  # every wall time where some period starts or ends
    walls = sorted({(e * US + d) for e in edges for d in (-1, 0, 1)})
    want_kind, want_first, want_last = [], [], []

    def wall_at(u: int) -> int:
        # zoneinfo's UTC -> local step (fromutc) only: .utcoffset() of the result would
        # re-read the wall time with PEP 495's fold, which cannot tell 3 readings apart.
        utc = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=u)
        return us_of(z.fromutc(utc.replace(tzinfo=z)).replace(tzinfo=None))

    for w in walls:
        # The instants that show wall time w: w - o for each offset o, when zoneinfo agrees.
        shown = sorted({w - o * US for o in offsets if wall_at(w - o * US) == w})
        want_kind.append(0 if len(shown) == 1 else 1 if not shown else 2)
        want_first.append(shown[0] if shown else None)
        want_last.append(shown[-1] if shown else None)
    first = resolve_wall(np.array(walls, dtype=np.int64), table, gap="skip", fold="first")
    second = resolve_wall(np.array(walls, dtype=np.int64), table, gap="skip", fold="second")
    assert first.kind.tolist() == want_kind
    ok = [k != 1 for k in want_kind]
    assert [d for d, o in zip(first.due.tolist(), ok) if o] == [d for d in want_first if d is not None]
    assert [d for d, o in zip(second.due.tolist(), ok) if o] == [d for d in want_last if d is not None]
