"""calsim.resolve equals the PEP 495 fold round trip through zoneinfo, zone by zone.

For every zone of two shipped releases the sample is: every transition from
1970 to 2050, ±2 h around both its wall-clock edges in 15-minute steps, plus
random times from 1970 to 2050 and from 2050 to 2400 (the far future exercises
the POSIX footer rule of slim TZif files). The oracle is ``zoneinfo.ZoneInfo``
built from the same TZif bytes; the comparison covers the kind (ok/gap/fold),
the instants of all five gap and four fold policies, and the offset in force.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles.pep495 import US, classify, first_instant_after_gap, offset_at

import calsim
from calsim.resolution import resolve_wall

LO = np.datetime64("1970-01-01", "us").astype(np.int64)
HI = np.datetime64("2050-01-01", "us").astype(np.int64)
FAR = np.datetime64("2400-01-01", "us").astype(np.int64)
STEPS = np.arange(-8, 9, dtype=np.int64) * 15 * 60 * US
KINDS = np.array(["ok", "gap", "fold"])


def sample(table, rng) -> np.ndarray:
    table.covering(2401)
    offs = table.offsets.astype(np.int64) * US
    utc = table.utc * US
    edges = np.concatenate([utc + offs[:-1], utc + offs[1:]])
    walls = (edges[:, None] + STEPS[None, :]).ravel()
    walls = walls[(walls >= LO) & (walls < HI)]
    return np.unique(np.concatenate([walls, rng.integers(LO, HI, 200), rng.integers(HI, FAR, 100)]))


@pytest.mark.parametrize("version", ["2022e", "2026f"])
def test_resolution_equals_zoneinfo_fold_round_trip_for_every_zone(version, report):
    rel = calsim.release(version)
    rng = np.random.default_rng(int(version[:4]))
    checked = {"zones": 0, "times": 0, "gap": 0, "fold": 0, "policy_rows": 0}
    mismatches: list[str] = []
    for name in rel.zones:
        table = rel.table(name)
        zone = rel.zone(name)
        walls = sample(table, rng)
        kind, u0, u1 = classify(zone, walls)
        checked["zones"] += 1
        checked["times"] += len(walls)
        checked["gap"] += int((kind == "gap").sum())
        checked["fold"] += int((kind == "fold").sum())
        is_gap, is_fold = kind == "gap", kind == "fold"

        expected = {
            ("shift", "first"): u0,
            ("shift_backward", "second"): np.where(is_gap | is_fold, u1, u0),
        }
        nv = u0.copy()
        for i in np.flatnonzero(is_gap):
            nv[i] = first_instant_after_gap(zone, int(walls[i]), int(u1[i]), int(u0[i]))
        expected[("next_valid", "first")] = nv
        for (gap, fold), want in expected.items():
            r = resolve_wall(walls, table, gap=gap, fold=fold, version=rel.version)
            got_kind = KINDS[r.kind]
            bad = (got_kind != kind) | (r.due != want)
            checked["policy_rows"] += len(walls)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                mismatches.append(
                    f"{name} {gap}/{fold} {np.datetime64(int(walls[i]), 'us')}: "
                    f"kind {got_kind[i]} vs {kind[i]}, due {r.due[i]} vs {want[i]} ({int(bad.sum())} rows)"
                )

        # skip: gap rows have no instant, others as "first".
        r = resolve_wall(walls, table, gap="skip", fold="first")
        assert r.has_due is None or np.array_equal(r.has_due, ~is_gap), name
        assert np.array_equal(r.due[~is_gap], u0[~is_gap]), name
        # both: fold rows doubled, fold 0 (u0) then fold 1 (u1).
        r = resolve_wall(walls, table, gap="skip", fold="both")
        reps = np.where(is_fold, 2, 1)
        assert np.array_equal(r.wall, np.repeat(walls, reps)), name
        want_due = np.repeat(u0, reps)
        want_due[np.flatnonzero(r.fold == 1)] = u1[is_fold]
        keep = np.repeat(~is_gap, reps)
        assert np.array_equal(r.due[keep], want_due[keep]), name
        # reject: raises exactly when the sample holds a gap / a fold.
        for field, error, present in (
            ("gap", calsim.NonexistentTimeError, is_gap.any()),
            ("fold", calsim.AmbiguousTimeError, is_fold.any()),
        ):
            if present:
                with pytest.raises(error):
                    resolve_wall(walls, table, **{field: "reject"})
            clean = walls[~(is_gap if field == "gap" else is_fold)]
            resolve_wall(clean, table, **{field: "reject"})  # must not raise

        # The offset column is the offset zoneinfo gives at the chosen instant:
        # every anomalous row, and a sample of ordinary ones.
        r = resolve_wall(walls, table, gap="shift", fold="second")
        pick = np.flatnonzero(is_gap | is_fold)
        pick = np.concatenate([pick, rng.choice(len(walls), size=min(20, len(walls)), replace=False)])
        for i in pick:
            assert r.offset[i] == offset_at(zone, int(r.due[i])), (name, walls[i])
    line = f"resolve vs zoneinfo, tzdata {version}: checked {checked}; mismatches {len(mismatches)}"
    print(line)
    report.append(line)
    assert not mismatches, "\n".join(mismatches[:20])
    assert checked["gap"] > 1000 and checked["fold"] > 1000
