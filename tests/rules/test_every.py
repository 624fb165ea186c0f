"""``calsim.Every`` (calsim.rules.every): elapsed time from a UTC anchor, never meeting a gap."""

from __future__ import annotations

import calsim

R = "2026f"


def expand(s, start, end):
    return calsim.expand([s], start, end, R)


def test_every_marks_the_second_pass_of_a_repeated_hour_with_fold_1():
    s = calsim.Schedule("e", "America/New_York", "2026-11-01T00:00", calsim.Every("30min"))
    f = expand(s, "2026-11-01T05:00Z", "2026-11-01T07:00Z")
    got = [(r["nominal_local"].strftime("%H:%M"), r["fold"]) for r in f.iter_rows(named=True)]
    assert got == [("01:00", 0), ("01:30", 0), ("01:00", 1), ("01:30", 1)]


def test_every_with_an_anchor_keeps_its_phase():
    s = calsim.Schedule("e", "UTC", "2026-01-01T00:00Z", calsim.Every("6h", anchor="2025-12-31T01:00Z"))
    f = expand(s, "2026-01-01T00:00Z", "2026-01-02T00:00Z")
    assert [d.hour for d in f["due_utc"]] == [1, 7, 13, 19]
