"""Bad input gets a CalsimError whose message names the field, the value and what is allowed."""

from __future__ import annotations

import datetime as dt
import zipfile

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from messages import assert_clear

import calsim
from calsim.errors import CalsimError


def test_every_error_is_a_value_error_under_calsim_error():
    for cls in (
        calsim.UnknownZoneError,
        calsim.UnknownReleaseError,
        calsim.NonexistentTimeError,
        calsim.AmbiguousTimeError,
        calsim.RuleError,
        calsim.ScheduleError,
        calsim.InputError,
        calsim.PolicyError,
        calsim.CorruptReleaseError,
    ):
        assert issubclass(cls, calsim.CalsimError) and issubclass(cls, ValueError)
    assert issubclass(calsim.UnknownZoneError, KeyError)  # as zoneinfo's callers expect


def test_aware_datetime_is_refused_where_a_local_time_is_required():
    with pytest.raises(calsim.InputError) as err:
        calsim.resolve([dt.datetime(2026, 3, 8, 2, 30, tzinfo=dt.timezone.utc)], "America/New_York", "2026f")
    assert str(err.value) == (
        "local_times: 2026-03-08 02:30:00+00:00 is aware (tzinfo=UTC), but a naive local wall time is "
        "required here (use .replace(tzinfo=None) if it already is wall time in the zone)"
    )


def test_iso_string_with_offset_is_refused_where_a_local_time_is_required():
    with pytest.raises(calsim.InputError, match=r"^local_times: '2026-03-08T02:30\+01:00' carries an offset"):
        calsim.resolve(["2026-03-08T02:30+01:00"], "Europe/Paris", "2026f")


def test_aware_polars_series_is_refused():
    s = pl.Series([dt.datetime(2026, 1, 1)]).dt.replace_time_zone("UTC")
    with pytest.raises(calsim.InputError, match=r"^local_times: the series has time zone 'UTC'"):
        calsim.resolve(s, "Europe/Paris", "2026f")


def test_unparseable_time_and_nat_are_refused():
    with pytest.raises(calsim.InputError, match=r"^local_times: cannot parse '2026-13-01' as an ISO 8601"):
        calsim.resolve(["2026-13-01"], "Europe/Paris", "2026f")
    with pytest.raises(calsim.InputError, match="NaT"):
        calsim.resolve(np.array(["NaT"], dtype="datetime64[us]"), "Europe/Paris", "2026f")
    with pytest.raises(calsim.InputError, match=r"^local_times: item 0 is int 5"):
        calsim.resolve([5], "Europe/Paris", "2026f")


def test_unknown_zone_suggests_the_closest_names():
    with pytest.raises(calsim.UnknownZoneError) as err:
        calsim.resolve(["2026-01-01T00:00"], "Europe/Pari", "2026f")
    assert str(err.value) == "zone: unknown zone 'Europe/Pari' in tzdata 2026f (did you mean 'Europe/Paris'?)"


def test_unknown_zone_with_no_close_name_says_what_is_expected():
    with pytest.raises(calsim.UnknownZoneError) as err:
        calsim.release("2026f").zone("Qqqqq/Zzzzzzz")
    assert str(err.value) == (
        "zone: unknown zone 'Qqqqq/Zzzzzzz' in tzdata 2026f "
        "(expected an IANA name such as 'Europe/Paris'; see Release.zones)"
    )


def test_zone_names_cannot_escape_the_release_directory():
    with pytest.raises(calsim.UnknownZoneError):
        calsim.release("system").table("../../etc/passwd")


def test_unknown_release_lists_offline_versions_and_how_to_fetch():
    with pytest.raises(calsim.UnknownReleaseError) as err:
        calsim.release("2019c")
    msg = str(err.value)
    assert msg.startswith("release: unknown release '2019c'; available offline: 2022e, 2022f, 2024a")
    assert "calsim.fetch_release('2024b')" in msg and "'installed', 'system'" in msg


def test_release_of_a_wrong_type_is_refused():
    with pytest.raises(calsim.UnknownReleaseError, match=r"got int 2026"):
        calsim.release(2026)


def test_missing_release_path_is_named():
    with pytest.raises(calsim.UnknownReleaseError, match=r"^release: path '/nonexistent/tzdata.whl' does not exist"):
        calsim.release("/nonexistent/tzdata.whl")


def test_corrupt_tzif_file_is_a_corrupt_release_error(tmp_path):
    (tmp_path / "UTC").write_bytes(b"TZif2" + b"\x00" * 10)  # truncated header
    (tmp_path / "Bad").write_bytes(b"NOTTZIF" * 20)
    r = calsim.Release.from_path(tmp_path)
    with pytest.raises(calsim.CorruptReleaseError, match=r"^tzif: 'UTC' is truncated at byte 0"):
        r.table("UTC")
    with pytest.raises(calsim.CorruptReleaseError, match=r"^tzif: 'Bad' is not a TZif file \(starts with b'NOTT'"):
        r.table("Bad")


def test_truncated_data_block_is_reported_with_sizes(tmp_path):
    from tzif_writer import tzif_bytes

    good = tzif_bytes([(10**9 + 86400 * i, 3600 * (i % 2)) for i in range(10)], 0)
    (tmp_path / "UTC").write_bytes(good[:60])
    with pytest.raises(calsim.CorruptReleaseError,
                       match=r"^tzif: 'UTC' is truncated: its header announces \d+ data bytes"):
        calsim.Release.from_path(tmp_path).table("UTC")


def test_directory_without_tzif_files_is_not_a_release(tmp_path):
    (tmp_path / "readme.txt").write_text("hello")
    with pytest.raises(calsim.CorruptReleaseError, match="holds no TZif files"):
        calsim.Release.from_path(tmp_path)


def test_file_that_is_not_a_wheel_is_not_a_release(tmp_path):
    p = tmp_path / "tzdata-2099.1-py2.py3-none-any.whl"
    p.write_text("not a zip")
    with pytest.raises(calsim.CorruptReleaseError, match=r"is not a readable tzdata wheel"):
        calsim.Release.from_path(p)
    q = tmp_path / "other.whl"
    with zipfile.ZipFile(q, "w") as z:
        z.writestr("other/__init__.py", "")
    with pytest.raises(calsim.CorruptReleaseError, match=r"is a zip file but not a tzdata wheel"):
        calsim.Release.from_path(q)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"gap": "later"},
         "gap: unknown policy 'later' (allowed: 'skip', 'shift', 'next_valid', 'shift_backward' or 'reject')"),
        ({"fold": "last"}, "fold: unknown policy 'last' (allowed: 'first', 'second', 'both' or 'reject')"),
        ({"gap": None},
         "gap: unknown policy None (allowed: 'skip', 'shift', 'next_valid', 'shift_backward' or 'reject')"),
    ],
)
def test_unknown_policy_names_field_value_and_choices(kw, message):
    with pytest.raises(calsim.PolicyError) as err:
        calsim.resolve(["2026-01-01T00:00"], "Europe/Paris", "2026f", **kw)
    assert str(err.value) == message


junk = st.one_of(
    st.none(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=30),
    st.lists(st.one_of(st.text(max_size=25), st.integers(),
                       st.datetimes(timezones=st.none() | st.just(dt.timezone.utc))), max_size=4),
    st.datetimes(timezones=st.just(dt.timezone.utc)),
)


@settings(max_examples=300, deadline=None)
@given(times=junk, zone=st.one_of(st.text(max_size=20), st.sampled_from(["Europe/Paris", "UTC"]), st.integers()),
       release=st.one_of(st.none(), st.text(max_size=10), st.sampled_from(["2026f", "system"])),
       gap=st.one_of(st.text(max_size=8), st.sampled_from(["skip", "shift"])))
def test_no_exception_but_calsim_error_escapes_resolve(times, zone, release, gap):
    try:
        calsim.resolve(times, zone, release, gap=gap)
    except CalsimError as exc:
        assert_clear(exc)


def test_preview_of_something_that_is_not_a_schedule_names_the_argument():
    import calsim

    with pytest.raises(calsim.InputError, match=r"^schedule: expected a calsim.Schedule, got int"):
        calsim.preview(123, after="2026-01-01T00:00Z")
