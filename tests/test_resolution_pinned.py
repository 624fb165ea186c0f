"""Pinned cases from real DST edges (tzdata 2026f), paired spring with autumn.

America/New_York 2026: clocks jump 02:00 -> 03:00 on 2026-03-08 (EST -> EDT)
and fall back 02:00 -> 01:00 on 2026-11-01 (EDT -> EST).
Australia/Lord_Howe: a 30-minute DST, 02:00 -> 02:30 on 2026-10-04.
Pacific/Apia skipped the whole of 2011-12-30 moving across the date line.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

import calsim

UTC = dt.timezone.utc


def one(local, zone, **kw):
    frame = calsim.resolve([local], zone, "2026f", **kw)
    return frame


def due(local, zone, **kw):
    return one(local, zone, **kw)["due_utc"].to_list()


class TestNewYorkSpringGap:
    def test_0230_is_skipped_by_default_with_its_note(self):
        f = one("2026-03-08T02:30", "America/New_York")
        assert f.row(0, named=True) == {
            "nominal_local": dt.datetime(2026, 3, 8, 2, 30),
            "fold": 0,
            "due_utc": None,
            "utc_offset_s": None,
            "kind": "gap",
            "notes": ["dst_gap_skipped"],
        }

    def test_0230_shifts_to_0730z_with_the_offset_before_the_gap(self):
        f = one("2026-03-08T02:30", "America/New_York", gap="shift")
        assert f["due_utc"].to_list() == [dt.datetime(2026, 3, 8, 7, 30, tzinfo=UTC)]
        assert f["utc_offset_s"].to_list() == [-4 * 3600]  # in force at 07:30Z: EDT, so 03:30 local
        assert f["notes"].to_list() == [["dst_gap_shifted"]]

    def test_0230_next_valid_is_the_jump_itself_0700z(self):
        assert due("2026-03-08T02:30", "America/New_York", gap="next_valid") == [
            dt.datetime(2026, 3, 8, 7, 0, tzinfo=UTC)
        ]

    def test_0230_shift_backward_is_0630z_with_the_offset_after_the_gap(self):
        f = one("2026-03-08T02:30", "America/New_York", gap="shift_backward")
        assert f["due_utc"].to_list() == [dt.datetime(2026, 3, 8, 6, 30, tzinfo=UTC)]
        assert f["utc_offset_s"].to_list() == [-5 * 3600]  # 01:30 EST
        assert f["notes"].to_list() == [["dst_gap_shifted_backward"]]

    def test_0230_reject_names_the_time_zone_release_and_jump(self):
        with pytest.raises(calsim.NonexistentTimeError) as err:
            one("2026-03-08T02:30", "America/New_York", gap="reject")
        assert str(err.value) == (
            "gap: local time 2026-03-08T02:30:00 does not exist in America/New_York (tzdata 2026f): "
            "clocks jump from 02:00:00 to 03:00:00 (UTC-05:00 -> UTC-04:00); with gap='reject' this is "
            "an error, choose gap='skip', 'shift', 'next_valid' or 'shift_backward' to resolve it"
        )

    def test_times_next_to_the_gap_are_ordinary(self):
        f = calsim.resolve(["2026-03-08T01:59:59", "2026-03-08T03:00"], "America/New_York", "2026f")
        assert f["kind"].to_list() == ["ok", "ok"]
        assert f["due_utc"].to_list() == [
            dt.datetime(2026, 3, 8, 6, 59, 59, tzinfo=UTC),
            dt.datetime(2026, 3, 8, 7, 0, tzinfo=UTC),
        ]


class TestNewYorkAutumnFold:
    def test_0130_first_is_0530z(self):
        f = one("2026-11-01T01:30", "America/New_York", fold="first")
        assert f["due_utc"].to_list() == [dt.datetime(2026, 11, 1, 5, 30, tzinfo=UTC)]
        assert f["fold"].to_list() == [0]
        assert f["notes"].to_list() == [["dst_fold_first"]]

    def test_0130_second_is_0630z_with_fold_1(self):
        f = one("2026-11-01T01:30", "America/New_York", fold="second")
        assert f["due_utc"].to_list() == [dt.datetime(2026, 11, 1, 6, 30, tzinfo=UTC)]
        assert f["fold"].to_list() == [1]
        assert f["utc_offset_s"].to_list() == [-5 * 3600]

    def test_0130_both_gives_two_rows_fold_0_then_1(self):
        f = one("2026-11-01T01:30", "America/New_York", fold="both")
        assert f["due_utc"].to_list() == [
            dt.datetime(2026, 11, 1, 5, 30, tzinfo=UTC),
            dt.datetime(2026, 11, 1, 6, 30, tzinfo=UTC),
        ]
        assert f["fold"].to_list() == [0, 1]
        assert f["notes"].to_list() == [["dst_fold_both"], ["dst_fold_both"]]
        assert f["kind"].to_list() == ["fold", "fold"]

    def test_0130_reject_raises_ambiguous_time(self):
        with pytest.raises(calsim.AmbiguousTimeError, match=r"^fold: local time 2026-11-01T01:30:00 happens twice"):
            one("2026-11-01T01:30", "America/New_York", fold="reject")


def test_lord_howe_has_a_30_minute_gap_and_shift_lands_at_0245_local():
    f = one("2026-10-04T02:15", "Australia/Lord_Howe", gap="shift")
    assert f["kind"].to_list() == ["gap"]
    local = f["due_utc"][0] + dt.timedelta(seconds=f["utc_offset_s"][0])
    assert local.replace(tzinfo=None) == dt.datetime(2026, 10, 4, 2, 45)
    edges = calsim.resolve(["2026-10-04T01:59", "2026-10-04T02:00", "2026-10-04T02:29", "2026-10-04T02:30"],
                           "Australia/Lord_Howe", "2026f")
    assert edges["kind"].to_list() == ["ok", "gap", "gap", "ok"]


def test_apia_skipped_the_whole_of_2011_12_30():
    day = np.arange(np.datetime64("2011-12-30T00:00"), np.datetime64("2011-12-31T00:00"), np.timedelta64(1, "h"))
    f = calsim.resolve(day, "Pacific/Apia", "2026f")
    assert set(f["kind"].to_list()) == {"gap"}
    assert calsim.resolve(["2011-12-29T23:59", "2011-12-31T00:00"], "Pacific/Apia", "2026f")["kind"].to_list() == [
        "ok", "ok"]


def test_apia_0900_on_the_skipped_day_shifts_to_1900z():
    assert due("2011-12-30T09:00", "Pacific/Apia", gap="shift") == [dt.datetime(2011, 12, 30, 19, 0, tzinfo=UTC)]


def test_two_releases_side_by_side_disagree_where_tzdata_changed():
    # Mexico abolished DST in October 2022: tzdata 2022f has it, 2022e does not.
    t = ["2023-07-01T12:00"]
    old = calsim.resolve(t, "America/Mexico_City", "2022e")["utc_offset_s"].to_list()
    new = calsim.resolve(t, "America/Mexico_City", "2022f")["utc_offset_s"].to_list()
    assert (old, new) == ([-5 * 3600], [-6 * 3600])


def test_frame_dtypes_match_the_contract():
    f = calsim.resolve(["2026-07-01T12:00"], "Europe/Paris", "2026f")
    assert f.schema == pl.Schema(
        {
            "nominal_local": pl.Datetime("us"),
            "fold": pl.Int8,
            "due_utc": pl.Datetime("us", "UTC"),
            "utc_offset_s": pl.Int32,
            "kind": pl.Enum(["ok", "gap", "fold"]),
            "notes": pl.List(pl.String),
        }
    )


@pytest.mark.parametrize(
    "times",
    [
        ["2026-03-08T02:30", "2026-11-01T01:30"],
        [dt.datetime(2026, 3, 8, 2, 30), dt.datetime(2026, 11, 1, 1, 30)],
        np.array(["2026-03-08T02:30", "2026-11-01T01:30"], dtype="datetime64[m]"),
        pl.Series([dt.datetime(2026, 3, 8, 2, 30), dt.datetime(2026, 11, 1, 1, 30)]),
    ],
    ids=["iso", "datetime", "numpy", "polars"],
)
def test_every_input_form_gives_the_same_frame(times):
    want = calsim.resolve(["2026-03-08T02:30", "2026-11-01T01:30"], "America/New_York", "2026f", gap="shift")
    assert calsim.resolve(times, "America/New_York", "2026f", gap="shift").equals(want)


def test_input_order_is_kept_and_sub_second_times_survive():
    f = calsim.resolve(["2026-07-01T12:00:00.250000", "2026-01-01T00:00"], "Asia/Kathmandu", "2026f")
    assert f["nominal_local"].to_list() == [dt.datetime(2026, 7, 1, 12, 0, 0, 250000), dt.datetime(2026, 1, 1)]
    assert f["utc_offset_s"].to_list() == [5 * 3600 + 45 * 60] * 2


def test_empty_input_gives_an_empty_frame_with_the_schema():
    f = calsim.resolve([], "Europe/Paris", "2026f")
    assert f.height == 0 and f.columns == ["nominal_local", "fold", "due_utc", "utc_offset_s", "kind", "notes"]
