"""``calsim.ByLocalHour``: a gap or fold policy chosen by the local hour of the time that meets the change.

Dagster 1.13's cron iterator repairs a nonexistent or repeated time only when
its hour is in ``DAYLIGHT_SAVINGS_HOURS = {1, 2, 3}``
(``dagster/_utils/schedules.py`` 26, 100-129). Checked here against Dagster
1.13.29 itself (``tests/fixtures/dagster/dagster-1.13.29.json``: the
iterator through the eight 2026 changes of four zones, and 104 cases in zones
whose changes are at midnight or off the hour), with the settings given to
Schedules directly (no preset):

* a fixed time: ``gap=ByLocalHour((1, 2, 3), inside="next_valid", outside="shift")``,
  ``fold=ByLocalHour((1, 2, 3), inside="second", outside="first")``;
* a rule of every hour steps one real hour per tick: ``gap="skip"``, ``fold="both"``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import calsim
from calsim import ByLocalHour

R = "2026f"
Z = "%Y-%m-%dT%H:%M:%SZ"
DAGSTER = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "dagster" / "dagster-1.13.29.json")
                     .read_text())
GAP = ByLocalHour((1, 2, 3), inside="next_valid", outside="shift")
FOLD = ByLocalHour((1, 2, 3), inside="second", outside="first")
EVERY_HOUR = ("0 * * * *", "30 * * * *")


def _dagster_schedule(case: dict) -> calsim.Schedule:
    gap, fold = ("skip", "both") if case["rule"] in EVERY_HOUR else (GAP, FOLD)
    return calsim.Schedule("job", case["zone"], "2026-01-01T00:00", case["rule"], gap=gap, fold=fold)


def _fires(s: calsim.Schedule, window: list[str]) -> list[str]:
    f = calsim.expand([s], *window, release=DAGSTER["system_tzdata"])
    return [t.strftime(Z) for t in f.drop_nulls("due_utc")["due_utc"]]


# What still differs, and why (each a Dagster artefact calsim states rather than models):
STATED = {
    # apply_post_transition assumes a change on the hour (line 125-128): floor(hour) + the DST save. Chatham
    # jumps 02:45 -> 03:45, so 03:15 runs at 04:00 (not 03:45) and 02:45/02:50 go to 03:00, which does not exist
    # either and is read with fold=1: 02:00 +12:45, before the change.
    ("Pacific/Chatham", "spring_forward", "15 3 * * *"): "04:00 +13:45, calsim 03:45",
    ("Pacific/Chatham", "spring_forward", "45 2 * * *"): "02:00 +12:45, calsim 03:45",
    ("Pacific/Chatham", "spring_forward", "50 2 * * *"): "02:00 +12:45, calsim 03:45",
    # An every-hour rule steps one real hour from the previous tick (line 166): after a 30-minute change it
    # runs at :30 (or :00) local until the next change. That is an elapsed Every("1h") from the first tick,
    # which depends on when the daemon started iterating, not on a gap or fold rule.
    ("Australia/Lord_Howe", "fall_back", "0 * * * *"): "every real hour from the first tick",
    ("Australia/Lord_Howe", "fall_back", "30 * * * *"): "every real hour from the first tick",
    ("Australia/Lord_Howe", "spring_forward", "0 * * * *"): "every real hour from the first tick",
    ("Australia/Lord_Howe", "spring_forward", "30 * * * *"): "every real hour from the first tick",
}


def test_dagster_fire_times_in_the_four_main_zones_all_agree(report):
    cases = DAGSTER["fire_cases"]
    apart = [(c["zone"], c["rule"], c["window_utc"][0]) for c in cases
             if _fires(_dagster_schedule(c), c["window_utc"]) != c["fires_utc"]]
    report.append(f"dagster {DAGSTER['version']} fire times with ByLocalHour: {len(cases)} cases, "
                  f"{sum(len(c['fires_utc']) for c in cases):,} fires, {len(apart)} apart")
    assert len(cases) == 56 and not apart, apart


def test_dagster_fire_times_at_midnight_and_off_the_hour_agree_but_for_the_stated_artefacts(report):
    cases = DAGSTER["extra_fire_cases"]
    apart = {(c["zone"], c["change"], c["rule"]) for c in cases
             if _fires(_dagster_schedule(c), c["window_utc"]) != c["fires_utc"]}
    midnight = [c for c in cases if not c["change_in_fixup_hours"]]
    report.append(f"dagster {DAGSTER['version']} fire times outside its repair (midnight, 30-minute and 02:45 "
                  f"changes) with ByLocalHour: {len(cases)} cases, {len(cases) - len(apart)} agree, "
                  f"{len(apart)} stated (Chatham's change off the hour, Lord Howe's every-hour rules); "
                  f"midnight changes: {len(midnight)} cases, all agree")
    assert len(cases) == 104 and apart == set(STATED), sorted(apart ^ set(STATED))
    assert not {(c["zone"], c["change"], c["rule"]) for c in midnight} & apart


def test_the_midnight_cases_need_the_hour_rule_one_policy_at_every_hour_gets_them_wrong():
    """The four midnight cases the fixed next_valid/second setting missed (00:30 -> 01:30, 23:30 first pass)."""
    cases = [c for c in DAGSTER["extra_fire_cases"] if not c["change_in_fixup_hours"]]
    fixed = [c for c in cases if c["rule"] not in EVERY_HOUR
             and _fires(dataclasses.replace(_dagster_schedule(c), gap="next_valid", fold="second"),
                        c["window_utc"]) != c["fires_utc"]]
    assert sorted((c["zone"], c["rule"]) for c in fixed) == [
        ("America/Santiago", "30 0 * * *"), ("America/Santiago", "30 23 * * *"),
        ("Asia/Beirut", "30 0 * * *"), ("Asia/Beirut", "30 23 * * *")]
    assert all(_fires(_dagster_schedule(c), c["window_utc"]) == c["fires_utc"] for c in fixed)


def test_lord_howe_every_hour_is_an_elapsed_hour_from_the_first_tick():
    """The stated Lord Howe cases are Every("1h") from the iterator's first tick (for a preset that knows it)."""
    for c in DAGSTER["extra_fire_cases"]:
        if (c["zone"], c["change"], c["rule"]) in STATED and c["zone"] == "Australia/Lord_Howe":
            s = calsim.Schedule("job", c["zone"], None, calsim.Every("1h", anchor=c["fires_utc"][0]))
            assert _fires(s, c["window_utc"]) == c["fires_utc"], c["rule"]


# ----------------------------------------------------------------- resolution, row by row


def test_each_row_gets_the_policy_of_its_hour_and_its_note():
    f = calsim.resolve(["2026-09-06T00:30", "2026-04-04T23:30", "2026-04-05T12:00"], "America/Santiago", R,
                       gap=GAP, fold=FOLD)
    assert f["due_utc"].dt.strftime(Z).to_list() == ["2026-09-06T04:30:00Z", "2026-04-05T02:30:00Z",
                                                     "2026-04-05T16:00:00Z"]
    assert f["notes"].to_list() == [["dst_gap_shifted"], ["dst_fold_first"], []]
    assert f["kind"].cast(pl.String).to_list() == ["gap", "fold", "ok"]
    ny = calsim.resolve(["2026-03-08T02:30", "2026-11-01T01:30"], "America/New_York", R, gap=GAP, fold=FOLD)
    assert ny["due_utc"].dt.strftime(Z).to_list() == ["2026-03-08T07:00:00Z", "2026-11-01T06:30:00Z"]
    assert ny["notes"].to_list() == [["dst_gap_next_valid"], ["dst_fold_second"]] and ny["fold"].to_list() == [0, 1]


GAPS = ("skip", "shift", "next_valid", "shift_backward")
FOLDS = ("first", "second", "both")


@pytest.mark.parametrize("inside,outside", [(a, b) for a in GAPS for b in GAPS if a != b])
def test_a_gap_setting_equals_its_two_policies_on_their_hours(inside, outside):
    _same_as_each_policy("gap", (1, 2, 3), inside, outside, other="both")


@pytest.mark.parametrize("inside,outside", [(a, b) for a in FOLDS for b in FOLDS if a != b])
def test_a_fold_setting_equals_its_two_policies_on_their_hours(inside, outside):
    _same_as_each_policy("fold", (0, 1, 2, 3), inside, outside, other="shift")


ZONES = ("America/Santiago", "Asia/Beirut", "Europe/Berlin", "Pacific/Chatham", "Australia/Lord_Howe")


def _walls() -> np.ndarray:
    """Every quarter hour from 3 h before to 3 h after each 2000-2029 change of zones whose changes are at
    midnight, at 01:00-03:00 or off the hour: one column of distinct times, shuffled."""
    out = []
    for zone in ZONES:
        table = calsim.release(R).table(zone)
        keep = (table.utc > 946_684_800) & (table.utc < 1_893_456_000)
        local = (table.utc[keep].astype(np.int64) + table.offsets[1:][keep]) * 10**6
        out.append((local[:, None] + np.arange(-12, 12) * 900 * 10**6).ravel())
    walls = np.unique(np.concatenate(out))
    return np.random.default_rng(7).permutation(walls).astype("datetime64[us]")


def _same_as_each_policy(which: str, hours: tuple[int, ...], inside: str, outside: str, other: str) -> None:
    """resolve(which=ByLocalHour(hours, ...)) is, row for row, resolve(which=inside) on the times of those hours
    and resolve(which=outside) on the others (the other setting fixed), in input order."""
    walls = _walls()
    index = pl.DataFrame({"nominal_local": walls, "i": np.arange(len(walls))})
    is_in = pl.col("nominal_local").dt.hour().is_in(hours)
    for zone in ZONES:
        def resolve(setting, zone=zone):
            kw = {which: setting, ("fold" if which == "gap" else "gap"): other}
            return calsim.resolve(walls, zone, R, **kw)

        got = resolve(ByLocalHour(hours, inside=inside, outside=outside))
        want = pl.concat([resolve(inside).filter(is_in), resolve(outside).filter(~is_in)])
        want = want.join(index, on="nominal_local").sort("i", "fold").drop("i")
        assert got["kind"].value_counts().height > 1, zone  # (the walls meet changes)
        assert got.equals(want), (zone, which, inside, outside)


def test_a_reject_inside_raises_only_for_the_times_of_its_hours():
    gap = ByLocalHour((2,), inside="reject", outside="shift")
    assert calsim.resolve(["2026-09-06T00:30"], "America/Santiago", R, gap=gap)["notes"].to_list() == [
        ["dst_gap_shifted"]]
    with pytest.raises(calsim.NonexistentTimeError, match=r"local time 2026-03-08T02:30:00 does not exist"):
        calsim.resolve(["2026-09-06T00:30", "2026-03-08T02:30"], "America/New_York", R, gap=gap)
    s = calsim.Schedule("nightly", "America/New_York", "2026-03-01T02:30", "30 2 * * *", gap=gap)
    with pytest.raises(calsim.NonexistentTimeError, match=r"gap: schedule 'nightly': local time 2026-03-08T02:30"):
        calsim.expand([s], "2026-03-01T00:00Z", "2026-03-10T00:00Z", R)


def test_count_counts_what_the_hour_rule_runs():
    # Santiago skips 00:00-01:00 on 2026-09-06: outside the hours, skipped and not counted; inside, shifted.
    gap = ByLocalHour((0,), inside="shift", outside="skip")
    s = calsim.Schedule("c", "America/Santiago", "2026-09-04T00:30", "FREQ=DAILY;COUNT=4", gap=gap)
    f = calsim.expand([s], "2026-09-01T00:00Z", "2026-09-30T00:00Z", R)
    assert f.height == 4 and f["notes"].to_list()[2] == ["dst_gap_shifted"]
    skip = dataclasses.replace(s, gap=ByLocalHour((1,), inside="shift", outside="skip"))
    f = calsim.expand([skip], "2026-09-01T00:00Z", "2026-09-30T00:00Z", R)
    assert f.height == 5 and f["due_utc"].null_count() == 1  # the skipped one is not counted


def test_a_schedule_with_an_hour_rule_simulates_and_explains():
    s = calsim.Schedule("job", "Asia/Beirut", "2026-03-01T00:30", "30 0 * * *", gap=GAP, fold=FOLD)
    p = calsim.preview(s, n=1, after="2026-03-28T12:00Z", release=R)
    assert p["due_utc"].dt.strftime(Z).to_list() == ["2026-03-28T22:30:00Z"] and "shifted" in p["explain"][0]
    ledger = calsim.simulate(calsim.Scenario("x", [s], "2026-03-27T00:00Z", "2026-03-31T00:00Z", release=R),
                             progress=False)
    assert ledger.frame["state"].to_list() == ["done"] * 4


# ----------------------------------------------------------------- the setting itself


def test_the_setting_is_frozen_hashable_and_keeps_its_hours_sorted():
    a = ByLocalHour([3, 1, 2, 2], inside="next_valid", outside="shift")
    assert a.hours == (1, 2, 3) and a == GAP and hash(a) == hash(GAP)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.inside = "skip"
    with pytest.raises(TypeError):
        ByLocalHour((1, 2, 3), "next_valid", "shift")  # the policies are keyword-only


@pytest.mark.parametrize("kwargs,message", [
    (dict(hours=(1, 24), inside="shift", outside="skip"),
     r"^ByLocalHour.hours: 24 in \(1, 24\) is not an hour \(allowed: whole hours 0-23, e.g. \(1, 2, 3\)\)$"),
    (dict(hours=(True,), inside="shift", outside="skip"), r"^ByLocalHour.hours: True in \(True,\) is not an hour"),
    (dict(hours="123", inside="shift", outside="skip"), r"^ByLocalHour.hours: '123' is not a collection of hours"),
    (dict(hours=(), inside="shift", outside="skip"), r"^ByLocalHour.hours: \(\) names no hour \(allowed: one or more"),
    (dict(hours=(1,), inside="later", outside="skip"),
     r"^ByLocalHour.inside: unknown policy 'later' \(allowed: 'skip', 'shift', 'next_valid', 'shift_backward', "
     r"'first', 'second', 'both' or 'reject'\)$"),
    (dict(hours=(1,), inside="next_valid", outside="first"),
     r"^ByLocalHour: inside='next_valid' and outside='first' mix a gap and a fold policy \(allowed: two of 'skip'"),
])
def test_a_bad_setting_names_the_field_the_value_and_what_is_allowed(kwargs, message):
    with pytest.raises(calsim.PolicyError, match=message):
        ByLocalHour(kwargs.pop("hours"), **kwargs)


def test_a_setting_of_the_wrong_kind_is_refused_where_it_is_used():
    folds = ByLocalHour((1, 2, 3), inside="second", outside="first")
    with pytest.raises(calsim.PolicyError, match=r"^schedule 'a': gap: ByLocalHour.inside: unknown policy 'second' "
                                                 r"\(allowed: 'skip', 'shift', 'next_valid', 'shift_backward' or "
                                                 r"'reject'\)$"):
        calsim.Schedule("a", "UTC", "2026-01-01T00:00", "0 2 * * *", gap=folds)
    with pytest.raises(calsim.PolicyError, match=r"^fold: ByLocalHour.inside: unknown policy 'next_valid'"):
        calsim.resolve(["2026-01-01T00:00"], "UTC", R, fold=GAP)
    both = ByLocalHour((1,), inside="reject", outside="reject")  # reject is both a gap and a fold policy
    assert calsim.Schedule("a", "UTC", "2026-01-01T00:00", "0 2 * * *", gap=both, fold=both).gap == both
