"""Shortcuts in ``expand`` agree with zoneinfo and with the general path.

``Every`` rows find their fold from the zone's transitions (only instants
just after a transition that sets clocks back are resolved again), and the
frame is ordered with one combined (placement, schedule) key when the window
allows it, by a block permutation otherwise.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

import calsim
from calsim.occurrence_rows import _order

R = "2026f"
UTC = dt.timezone.utc


@pytest.mark.parametrize("zone", ["America/New_York", "Australia/Lord_Howe", "Europe/Dublin", "Pacific/Apia",
                                  "America/Santiago", "Africa/Casablanca", "Europe/Moscow", "Asia/Kolkata"])
def test_every_fold_nominal_and_offset_equal_zoneinfo(zone):
    s = calsim.Schedule("e", zone, "1990-01-01T00:00Z", calsim.Every("30min"))
    f = calsim.expand(s, "1990-01-01T00:00Z", "2040-01-01T00:00Z", R)
    z = calsim.release(R).zone(zone)
    # Every row around a transition (and a sample of the rest) against zoneinfo's fromutc.
    near = f.filter(pl.col("utc_offset_s").diff().fill_null(0) != 0)["due_utc"].to_list()
    check = set()
    for t in near:
        for k in range(-8, 9):
            check.add(t + dt.timedelta(minutes=30 * k))
    rows = f.filter(pl.col("due_utc").is_in(sorted(check)) | (pl.int_range(pl.len()) % 997 == 0))
    assert rows.height > 100
    for r in rows.iter_rows(named=True):
        local = r["due_utc"].astimezone(z)
        assert (r["nominal_local"], r["fold"], r["utc_offset_s"]) == (
            local.replace(tzinfo=None), local.fold, int(local.utcoffset().total_seconds())), r
    assert f["fold"].sum() > 0 or zone in ("Asia/Kolkata",)


def test_every_far_after_the_table_uses_the_rule_of_the_footer():
    s = calsim.Schedule("e", "America/Santiago", "2101-01-01T00:00Z", calsim.Every("6h"))
    f = calsim.expand(s, "2101-01-01T00:00Z", "2102-01-01T00:00Z", R)
    z = calsim.release(R).zone("America/Santiago")
    for r in f.iter_rows(named=True):
        local = r["due_utc"].astimezone(z)
        assert (r["nominal_local"], r["fold"], r["utc_offset_s"]) == (
            local.replace(tzinfo=None), local.fold, int(local.utcoffset().total_seconds()))


@pytest.mark.parametrize("seed", range(5))
def test_combined_key_order_equals_the_block_permutation(seed):
    # Rows come as one block per schedule (blocks in any order), each sorted by
    # placement with ties (merged rows); both orderings must agree exactly.
    rng = np.random.default_rng(seed)
    n_sched = 50
    blocks = []
    for s in rng.permutation(n_sched):
        place = np.sort(rng.integers(0, 1000, size=rng.integers(0, 40))) * 60_000_000 + 1_767_225_600_000_000
        blocks.append((np.full(len(place), s, np.int32), place))
    sched = np.concatenate([b[0] for b in blocks])
    place = np.concatenate([b[1] for b in blocks])
    perm, p_out, s_out = _order(place, sched, n_sched)
    # n_sched = 2**40 leaves too few bits for the combined key: the fallback path.
    perm2, p2, s2 = _order(place, sched, 2**40)
    assert perm.tolist() == perm2.tolist()
    assert p_out.tolist() == p2.tolist() == place[perm].tolist()
    assert s_out.tolist() == s2.tolist() == sched[perm].tolist()
    expect = sorted(range(len(place)), key=lambda i: (place[i], sched[i], i))
    assert perm.tolist() == expect


@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia"])
@pytest.mark.parametrize("gap,fold", [("skip", "first"), ("shift", "both"), ("next_valid", "second")])
def test_resolve_without_a_transition_in_range_equals_the_per_row_search(zone, gap, fold):
    from calsim.resolution import resolve_wall

    table = calsim.release(R).table(zone)
    rng = np.random.default_rng(0)
    for start in ("2026-01-10", "2026-03-08", "2026-06-01", "2026-11-01", "2011-12-29"):
        base = int(np.datetime64(start, "us").astype(np.int64))
        walls = np.sort(base + rng.integers(0, 6 * 3_600_000_000, size=50))
        # A far wall forces the per-row search; its row is dropped from the comparison.
        far = np.append(walls, base + 400 * 86_400_000_000)
        fast = resolve_wall(walls, table, gap=gap, fold=fold)
        slow = resolve_wall(far, table, gap=gap, fold=fold)
        k = len(fast.wall)
        assert fast.wall.tolist() == slow.wall[:k].tolist()
        assert fast.due[:k].tolist() == slow.due[:k].tolist()
        assert fast.offset.tolist() == slow.offset[:k].tolist()
        assert fast.kind.tolist() == slow.kind[:k].tolist()
        def norm(r, n):
            fold_ = np.zeros(n, np.int8) if r.fold is None else r.fold[:n]
            has_due = np.ones(n, bool) if r.has_due is None else r.has_due[:n]
            return fold_.tolist(), has_due.tolist()

        assert norm(fast, k) == norm(slow, k)
