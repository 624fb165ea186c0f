"""``calsim.Window`` (calsim.rules.window): a half-open local window of times, which may cross midnight."""

from __future__ import annotations

import calsim

R = "2026f"


def expand(s, start, end):
    return calsim.expand([s], start, end, R)


def local(frame):
    return [t.isoformat() for t in frame["nominal_local"]]


def test_window_through_the_gap_with_next_valid_merges_onto_the_jump():
    s = calsim.Schedule("w", "America/New_York", "2026-03-08T00:00", calsim.Window("01:30", "03:30", "30min"),
                        gap="next_valid")
    f = expand(s, "2026-03-08T06:00Z", "2026-03-08T08:00Z")
    got = [(r["nominal_local"].strftime("%H:%M"), r["due_utc"] and r["due_utc"].strftime("%H:%M"), r["notes"])
           for r in f.iter_rows(named=True)]
    assert got == [
        ("01:30", "06:30", []),
        ("02:00", "07:00", ["dst_gap_next_valid", "merged_with:2026-03-08T02:30:00",
                            "merged_with:2026-03-08T03:00:00"]),
        ("02:30", None, ["dst_gap_next_valid", "merged_into:2026-03-08T02:00:00"]),
        ("03:00", None, ["merged_into:2026-03-08T02:00:00"]),
    ]


def test_window_crossing_midnight_opens_on_the_listed_days():
    s = calsim.Schedule("w", "UTC", "2026-03-01T00:00", calsim.Window("23:00", "01:00", "1h", days="FR"))
    f = expand(s, "2026-03-01T00:00Z", "2026-03-15T00:00Z")
    assert local(f) == ["2026-03-06T23:00:00", "2026-03-07T00:00:00", "2026-03-13T23:00:00", "2026-03-14T00:00:00"]
