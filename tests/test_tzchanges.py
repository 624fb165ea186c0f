"""zone_changes and tzdiff against the source of truth (zoneinfo of each release, brute-force expansion)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from conftest import SHIPPED

import calsim
import calsim.tzgate  # (a submodule: calsim.tzgate.upgrade_check below needs it imported, whatever ran before)

UTC = dt.timezone.utc
LO, HI = 0, int(dt.datetime(2050, 1, 1, tzinfo=UTC).timestamp())


def oracle_first_difference(za, zb, instants):
    for t in instants:
        a = dt.datetime.fromtimestamp(t, za).utcoffset()
        b = dt.datetime.fromtimestamp(t, zb).utcoffset()
        if a != b:
            return t
    return None


def sample(ra, rb, zone):
    ta = ra.table(zone).covering(2051).utc
    tb = rb.table(zone).covering(2051).utc
    t = np.unique(np.concatenate([ta, tb]))
    t = t[(t >= LO) & (t < HI)]
    mids = (t[:-1] + t[1:]) // 2 if len(t) > 1 else np.zeros(0, np.int64)
    return np.unique(np.concatenate([[LO], t - 1, t, t + 1, mids, [HI - 1]]))


def check_pair(old, new, report):
    ra, rb = calsim.release(old), calsim.release(new)
    got = calsim.zone_changes(ra, rb, "1970-01-01T00:00Z", "2050-01-01T00:00Z")
    flagged = {
        z: int(f.timestamp())
        for z, k, f in got.filter(~pl.col("kind").is_in(["now_link", "zone_added", "zone_removed"]))
        .select("zone", "kind", "first_utc").iter_rows()
    }
    expected, checked = {}, 0
    for zone in sorted(set(ra.zones) & set(rb.zones)):
        if ra.tzif(zone) == rb.tzif(zone):
            continue  # the same bytes: the same offsets
        s = sample(ra, rb, zone)
        checked += len(s)
        first = oracle_first_difference(ra.zone(zone), rb.zone(zone), s[(s >= LO) & (s < HI)].tolist())
        if first is not None:
            expected[zone] = first
    added = set(rb.zones) - set(ra.zones)
    removed = set(ra.zones) - set(rb.zones)
    assert set(got.filter(pl.col("kind") == "zone_added")["zone"]) == added
    assert set(got.filter(pl.col("kind") == "zone_removed")["zone"]) == removed
    line = f"zone_changes vs zoneinfo, {old}->{new}: {checked} instants sampled, {len(expected)} zones differ"
    print(line)
    report.append(line)
    return flagged, expected


@pytest.mark.parametrize("old,new", list(zip(SHIPPED, SHIPPED[1:])))
def test_zone_changes_flags_exactly_the_zones_whose_offsets_differ_with_the_first_instant(old, new, report):
    flagged, expected = check_pair(old, new, report)
    assert flagged == expected


def test_zone_changes_between_the_machines_zoneinfo_and_the_installed_package(report):
    flagged, expected = check_pair("system", "installed", report)
    assert flagged == expected


def test_mexico_abolishing_dst_is_a_removed_transition_with_offsets_at_the_first_difference():
    z = calsim.zone_changes("2022e", "2022f", "2022-01-01T00:00Z", "2030-01-01T00:00Z")
    row = z.filter(pl.col("zone") == "America/Mexico_City").row(0, named=True)
    assert row["kind"] == "transition_removed"
    assert row["first_utc"] == dt.datetime(2023, 4, 2, 8, 0, tzinfo=UTC)
    assert (row["old_offset_s"], row["new_offset_s"]) == (-5 * 3600, -6 * 3600)
    assert row["last_utc"] == dt.datetime(2029, 10, 28, 7, 0, tzinfo=UTC)


def test_zones_that_became_links_are_reported():
    # 2022f merged America/Nipigon, Rainy_River and Thunder_Bay into Toronto and Winnipeg.
    z = calsim.zone_changes("2022e", "2022f", "2022-01-01T00:00Z", "2023-01-01T00:00Z")
    assert z.filter(pl.col("kind") == "now_link")["zone"].to_list() == [
        "America/Nipigon", "America/Rainy_River", "America/Thunder_Bay"
    ]


def test_identical_releases_have_no_changes():
    z = calsim.zone_changes("2026f", "2026f", "1970-01-01T00:00Z", "2050-01-01T00:00Z")
    assert z.height == 0 and z.columns == ["zone", "kind", "first_utc", "last_utc", "old_offset_s", "new_offset_s"]


def brute_force(fleet, old, new, start, end):
    # An elapsed Every run is identified by its instant, which no release moves (tzdiff's docstring).
    fleet = [s for s in fleet if not (s.kind == "every" and s.parsed_rule.clock == "elapsed")]
    key = ["schedule_id", "revision", "nominal_local", "fold"]
    # tzdiff's stated rule: listed when either instant is in the window (the other may be outside),
    # so both sides are expanded over a wider window first.
    lo, hi = (dt.datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (start, end))
    wide = [(lo - dt.timedelta(days=3)).isoformat(), (hi + dt.timedelta(days=3)).isoformat()]
    a = calsim.expand(fleet, *wide, old).select(key + ["due_utc", "notes"])
    b = calsim.expand(fleet, *wide, new).select(key + ["due_utc", "notes"])
    j = a.join(b, on=key, how="full", coalesce=True, suffix="_new", nulls_equal=True)
    differs = (pl.col("due_utc").eq_missing(pl.col("due_utc_new")).not_()) | (
        pl.col("notes").fill_null([]) != pl.col("notes_new").fill_null([])
    )
    inside = (pl.col("due_utc").is_between(lo, hi, closed="left").fill_null(False)
              | pl.col("due_utc_new").is_between(lo, hi, closed="left").fill_null(False))
    return j.filter(differs & inside).select(*key, pl.col("due_utc").alias("old_utc"),
                                             pl.col("due_utc_new").alias("new_utc")).sort(key)


def test_tzdiff_agrees_row_for_row_with_brute_force_re_expansion():
    fleet = calsim.examples.fleet(1500, seed=11)
    start, end = "2026-01-01T00:00Z", "2027-01-01T00:00Z"
    d = calsim.tzdiff(fleet, "2025b", "2026f", start, end)
    want = brute_force(fleet, "2025b", "2026f", start, end)
    assert d.height > 0
    assert d.select(want.columns).equals(want)
    assert set(d["change"]) <= {"moved", "now_gap", "no_longer_gap", "now_fold", "no_longer_fold", "merged", "unmerged"}


def test_what_if_override_moves_exactly_that_zones_occurrences_after_the_instant():
    base = calsim.release("2026f")
    at = dt.datetime(2026, 6, 1, tzinfo=UTC)
    what_if = base.with_override("America/New_York", at, "EST5")
    assert what_if.version == "2026f+override"
    fleet = [s for s in calsim.examples.fleet(400, seed=2)] + [
        calsim.Schedule("ny/daily", "America/New_York", "2026-01-01T09:00", "FREQ=DAILY"),
        calsim.Schedule("paris/daily", "Europe/Paris", "2026-01-01T09:00", "FREQ=DAILY"),
    ]
    d = calsim.tzdiff(fleet, base, what_if, "2026-01-01T00:00Z", "2027-01-01T00:00Z")
    assert set(d["zone"]) == {"America/New_York"}
    assert (d["old_utc"].drop_nulls() >= at).all() and (d["new_utc"].drop_nulls() >= at).all()
    ny = d.filter(pl.col("schedule_id") == "ny/daily")
    # 09:00 EDT (13:00Z) becomes 09:00 EST (14:00Z) from June 1 to the November change.
    assert ny["shift_s"].unique().to_list() == [3600]
    assert ny["nominal_local"].min() == dt.datetime(2026, 6, 1, 9) and ny.height == 153
    assert calsim.zone_changes(base, what_if, "2026-01-01T00:00Z", "2027-01-01T00:00Z")["zone"].to_list() == [
        "America/New_York"]


def test_what_if_dst_rule_from_an_instant_matches_zoneinfo_of_the_same_rule():
    what_if = calsim.release("2026f").with_override("Asia/Tokyo", "2027-01-01T00:00Z", "JST-9JDT,M3.2.0,M11.1.0")
    f = calsim.resolve(["2027-07-01T12:00", "2026-07-01T12:00"], "Asia/Tokyo", what_if)
    assert f["utc_offset_s"].to_list() == [10 * 3600, 9 * 3600]
    assert what_if.zone("Asia/Tokyo").utcoffset(dt.datetime(2027, 7, 1, 12)) == dt.timedelta(hours=10)


def test_bad_override_input_names_the_field():
    r = calsim.release("2026f")
    with pytest.raises(calsim.InputError, match=r"^posix_tz: cannot parse 'not a rule'"):
        r.with_override("Europe/Paris", "2027-01-01T00:00Z", "not a rule")
    with pytest.raises(calsim.UnknownZoneError):
        r.with_override("Europe/Pariss", "2027-01-01T00:00Z", "CET-1")
    with pytest.raises(calsim.InputError, match=r"^from_utc: cannot parse"):
        r.with_override("Europe/Paris", "someday", "CET-1")


def test_tzdiff_summary_per_schedule():
    s = calsim.Schedule("mx", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY")
    d = calsim.tzdiff([s], "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z")
    summary = calsim.tzdiff_summary(d, now="2023-01-01T00:00Z")
    assert summary.row(0) == ("mx", "mx", "America/Mexico_City", dt.datetime(2023, 4, 2, 9),
                              dt.datetime(2023, 10, 28, 9), 210, [3600], ["moved"], None, None,
                              dt.datetime(2023, 4, 2, 14, tzinfo=UTC), dt.datetime(2023, 4, 2, 9), None)


def test_tzdiff_summary_marks_a_change_already_in_effect_and_puts_it_first():
    fleet = [calsim.Schedule("mx", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY"),
             calsim.Schedule("future", "America/Mexico_City", "2023-06-01T09:00", "FREQ=DAILY")]
    d = calsim.tzdiff(fleet, "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z")
    summary = calsim.tzdiff_summary(d, now="2023-05-01T00:00Z")
    assert summary["schedule_id"].to_list() == ["mx", "future"]
    assert summary["in_effect_since"].to_list() == [dt.datetime(2023, 4, 2, 14, tzinfo=UTC), None]


def test_tzdiff_summary_labels_an_imported_job_by_its_command():
    tab = calsim.from_crontab("CRON_TZ=America/Mexico_City\n0 9 * * * /usr/local/bin/backup --all\n")
    d = calsim.tzdiff(list(tab), "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z")
    assert calsim.tzdiff_summary(d, list(tab))["label"].to_list() == ["/usr/local/bin/backup --all"]


def test_an_occurrence_moved_across_the_window_edge_is_a_shift_not_a_half_pair():
    # Mexico City 2022e -> 2022f: 09:00 on 2023-04-02 is 14:00Z (old) and 15:00Z (new); a window
    # ending at 14:30Z holds only the old instant, and the row still carries both and the shift.
    s = calsim.Schedule("mx", "America/Mexico_City", "2023-04-01T09:00", "FREQ=DAILY")
    d = calsim.tzdiff([s], "2022e", "2022f", "2023-04-02T00:00Z", "2023-04-02T14:30Z")
    assert d.select("old_utc", "new_utc", "shift_s", "change").rows() == [
        (dt.datetime(2023, 4, 2, 14, tzinfo=UTC), dt.datetime(2023, 4, 2, 15, tzinfo=UTC), 3600, "moved")]


def test_an_every_on_the_local_clock_moves_with_the_zone_as_a_calendar_rule_does():
    # Mexico ended DST in 2022f: 09:00 every local day is an hour later in UTC from April on.
    local = calsim.Schedule("l", "America/Mexico_City", "2023-01-01T09:00", calsim.Every("24h", clock="local"))
    daily = calsim.Schedule("d", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY")
    elapsed = calsim.Schedule("e", "America/Mexico_City", "2023-01-01T15:00Z", calsim.Every("24h"))
    diff = calsim.tzdiff([local, daily, elapsed], "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z")
    rows = {sid: diff.filter(pl.col("schedule_id") == sid).drop("schedule_id") for sid in ("l", "d", "e")}
    assert rows["l"].height == 210 and rows["l"].equals(rows["d"])  # (the same walls, the same moves)
    assert rows["e"].height == 0


def test_every_schedules_are_not_listed_because_their_instants_never_move():
    # Casablanca's offsets differ between 2026a and 2026f; an elapsed-time rule fires at the same instants.
    every = calsim.Schedule("e", "Africa/Casablanca", "2026-01-01T00:00Z", calsim.Every("6h"))
    daily = calsim.Schedule("d", "Africa/Casablanca", "2026-01-01T09:00", "FREQ=DAILY")
    window = ("2026-12-01T00:00Z", "2027-12-01T00:00Z")
    old = calsim.expand([every], *window, release="2026a")["due_utc"]
    new = calsim.expand([every], *window, release="2026f")["due_utc"]
    assert old.equals(new)
    diff = calsim.tzdiff([every, daily], "2026a", "2026f", *window)
    assert diff.height > 0 and set(diff["schedule_id"]) == {"d"}


def test_upgrade_check_in_python_is_what_the_cli_gates_on():
    # Mexico City 2022e -> 2022f: its DST is gone from 2023-04-02; on 2023-06-01 that change is in effect.
    s = calsim.Schedule("mx", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY")
    window = ("2023-01-01T00:00Z", "2024-01-01T00:00Z")
    live = calsim.tzgate.upgrade_check([s], "2022e", "2022f", *window, now="2023-06-01T00:00Z")
    ahead = calsim.tzgate.upgrade_check([s], "2022e", "2022f", *window, now="2023-01-15T00:00Z", fail_on="any",
                                           within="30d")
    assert (live.exit_code, live.schedules["status"].to_list()) == (0, ["in_effect"])
    assert (ahead.exit_code, ahead.schedules["status"].to_list()) == (0, ["future"])  # 2023-04-02 is 77 days away
    assert ahead.advice.startswith("upgrade to 2022f before 2023-04-02 in America/Mexico_City")
    assert live.summary()["zones"][0]["shifts"] == [
        {"shift_s": 3600, "local_shift_s": 0, "shift": "1 h later in UTC, same local time", "occurrences": 210}]
    with pytest.raises(calsim.InputError, match=r"^fail_on: unknown value 'futur' .* \(did you mean 'future'\?\)"):
        calsim.tzgate.upgrade_check([s], "2022e", "2022f", *window, fail_on="futur")


def test_describe_shifts_of_an_empty_diff_keeps_the_schema():
    d = calsim.tzdiff([calsim.Schedule("t", "Asia/Tokyo", "2026-01-01T09:00", "FREQ=DAILY")], "2026a", "2026f",
                      "2026-01-01T00:00Z", "2027-01-01T00:00Z")
    out = calsim.tzchanges.describe_shifts(d, "2026a", "2026f")
    assert out.height == 0 and out.columns[7:10] == ["shift_s", "local_shift_s", "shift"]
