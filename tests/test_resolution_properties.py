"""Invariants of resolution, checked with hypothesis over real zones and times."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import calsim

REL = calsim.release("2026f")
ZONES = [z for z in REL.zones if not z.startswith("Etc/")]
US = 1_000_000


@st.composite
def zone_and_walls(draw):
    zone = draw(st.sampled_from(ZONES))
    start = draw(st.integers(0, 80 * 365 * 86400)) * US  # 1970..2050
    step = draw(st.sampled_from([60, 900, 3600, 86400])) * US
    n = draw(st.integers(1, 2000))
    return zone, start + np.arange(n, dtype=np.int64) * step


@settings(max_examples=200, deadline=None)
@given(zone_and_walls(), st.sampled_from(["skip", "next_valid"]), st.sampled_from(["first", "second"]))
def test_instants_never_decrease_as_wall_time_increases(zw, gap, fold):
    # True for skip/next_valid; "shift" can move a gap time past the next
    # valid one (02:30 -> 03:30 while 03:00 stays 03:00), by design.
    zone, walls = zw
    f = calsim.resolve(walls.astype("datetime64[us]"), zone, REL, gap=gap, fold=fold)
    due = f["due_utc"].drop_nulls().dt.epoch("us").to_numpy()
    assert np.all(np.diff(due) >= 0)


@settings(max_examples=200, deadline=None)
@given(zone_and_walls(), st.sampled_from(["skip", "shift", "next_valid", "shift_backward"]),
       st.sampled_from(["first", "second", "both"]))
def test_offset_column_is_the_offset_in_force_at_the_instant(zw, gap, fold):
    zone, walls = zw
    f = calsim.resolve(walls.astype("datetime64[us]"), zone, REL, gap=gap, fold=fold).drop_nulls("due_utc")
    due = f["due_utc"].dt.epoch("us").to_numpy()
    table = REL.table(zone)
    assert np.array_equal(f["utc_offset_s"].to_numpy(), table.offset_at_utc(due // US))


@settings(max_examples=200, deadline=None)
@given(zone_and_walls(), st.sampled_from(["first", "second", "both"]))
def test_every_time_outside_a_gap_reads_back_as_itself(zw, fold):
    zone, walls = zw
    f = calsim.resolve(walls.astype("datetime64[us]"), zone, REL, fold=fold).drop_nulls("due_utc")
    due = f["due_utc"].dt.epoch("us").to_numpy()
    wall_back = due + f["utc_offset_s"].to_numpy().astype(np.int64) * US
    assert np.array_equal(wall_back, f["nominal_local"].dt.epoch("us").to_numpy())


@settings(max_examples=100, deadline=None)
@given(zone_and_walls())
def test_row_count_is_inputs_plus_one_per_fold_under_both(zw):
    zone, walls = zw
    f = calsim.resolve(walls.astype("datetime64[us]"), zone, REL, fold="both")
    folds = int((calsim.resolve(walls.astype("datetime64[us]"), zone, REL)["kind"] == "fold").sum())
    assert f.height == len(walls) + folds
    assert f.filter(f["kind"] != "ok")["notes"].list.len().min() in (None, 1)
