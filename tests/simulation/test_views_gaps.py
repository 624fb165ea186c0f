"""Observation gaps: spans between consecutive done runs, in the order things happened."""

import polars as pl
import pytest

import calsim


@pytest.mark.parametrize("catchup", ["earliest", "latest", "all", "skip"])
def test_an_outage_is_one_observation_gap_whatever_catch_up_runs(catchup):
    s = calsim.Schedule("hourly", "UTC", "2026-01-01T00:00", "FREQ=HOURLY",
                        policy=calsim.Policy(catchup=catchup, max_lateness="2h"))
    sc = calsim.Scenario(catchup, [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T05:30Z", "2026-01-01T15:30Z")])
    gaps = calsim.simulate(sc, progress=False).gaps()
    assert gaps.height == 1
    row = gaps.row(0, named=True)
    # Last run before: 05:00. First run after: the catch-up at 15:30 (or 16:00 with skip).
    assert row["from_utc"].hour == 5
    assert (row["to_utc"].hour, row["to_utc"].minute) == ((16, 0) if catchup == "skip" else (15, 30))
    # 06:00 .. 15:00 were due in it. Expired (past max_lateness): 06:00 .. 13:00. `all` runs 14:00 and
    # 15:00 at 15:30: 14:00 after 15:00 was due (late), 15:00 within its hour (on time). `earliest`
    # runs 14:00 (late) and coalesces 15:00; `latest` runs 15:00 (on time) and coalesces 14:00.
    assert (row["missed"], row["late"]) == {"all": (8, 1), "earliest": (9, 1), "latest": (9, 0),
                                            "skip": (10, 0)}[catchup]
    assert row["gap"] == row["to_utc"] - row["from_utc"]
    assert row["first_missed_utc"].hour == 6


def test_a_manual_run_records_the_release_in_force_at_its_trigger():
    # The trigger comes after a TzUpgrade: its row names the new release, whatever else the fleet holds.
    s = calsim.Schedule("a", "America/Havana", "2026-12-01T09:00", "FREQ=WEEKLY")
    sc = calsim.Scenario("m", [s], "2026-12-01T00:00Z", "2026-12-20T00:00Z", release="2026a",
                         events=[calsim.TzUpgrade("2026-12-05T00:00Z", to="2026f"),
                                 calsim.Trigger("2026-12-10T12:00Z", schedule_id="a")])
    f = calsim.simulate(sc, progress=False).frame
    manual = f.filter(pl.col("kind") == "manual").row(0, named=True)
    assert manual["tzdata"] == "2026f"
    # Havana keeps -04:00 in winter under 2026f (-05:00 under 2026a): the nominal time follows 2026f.
    assert manual["utc_offset_s"] == calsim.resolve([manual["nominal_local"]], "America/Havana",
                                                    "2026f")["utc_offset_s"][0]
    assert manual["utc_offset_s"] == -14400
