"""Releases: read from wheels and zoneinfo directories, versioned by their data, side by side."""

from __future__ import annotations

import shutil
import zipfile
import zoneinfo

import numpy as np
import pytest
from conftest import SHIPPED

import calsim
from calsim.tz.fetch import pypi_version
from calsim.tz.locate import cache_dir, shipped_dir


def test_the_seven_shipped_wheels_are_offline_releases_with_their_iana_versions():
    assert set(SHIPPED) <= set(calsim.releases())
    for v in SHIPPED:
        r = calsim.release(v)
        assert r.version == v and r.source.endswith(".whl")
        assert "Europe/Paris" in r.zones and len(r.zones) > 590


def test_version_comes_from_the_data_not_the_file_name(tmp_path):
    misleading = tmp_path / "tzdata-2031.9-py2.py3-none-any.whl"
    shutil.copy(shipped_dir() / "tzdata-2024.1-py2.py3-none-any.whl", misleading)
    assert calsim.Release.from_path(misleading).version == "2024a"


def test_wheel_without_init_reads_its_version_from_tzdata_zi(tmp_path):
    src = zipfile.ZipFile(shipped_dir() / "tzdata-2025.2-py2.py3-none-any.whl")
    dst = tmp_path / "stripped.whl"
    with zipfile.ZipFile(dst, "w") as out:
        for name in src.namelist():
            if name != "tzdata/__init__.py":
                out.writestr(name, src.read(name))
    assert calsim.Release.from_path(dst).version == "2025b"


def test_compiled_zoneinfo_directory_reads_version_from_plus_version(tmp_path):
    rel = calsim.release("2026a")
    for zone in ("Europe/Paris", "UTC"):
        p = tmp_path / zone
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(rel.tzif(zone))
    (tmp_path / "+VERSION").write_text("2026a\n")
    r = calsim.Release.from_path(tmp_path)
    assert r.version == "2026a"
    assert r.zones == ("Europe/Paris", "UTC")


def test_directory_without_any_version_marker_is_unknown_but_usable(tmp_path):
    (tmp_path / "UTC").write_bytes(calsim.release("2026f").tzif("UTC"))
    r = calsim.Release.from_path(tmp_path)
    assert r.version == "unknown"
    assert calsim.resolve(["2026-01-01T00:00"], "UTC", r)["utc_offset_s"].to_list() == [0]


def test_unpacked_tzdata_package_directory_is_a_release(tmp_path):
    with zipfile.ZipFile(shipped_dir() / "tzdata-2022.6-py2.py3-none-any.whl") as z:
        z.extractall(tmp_path)
    assert calsim.Release.from_path(tmp_path / "tzdata").version == "2022f"
    assert calsim.release(str(tmp_path / "tzdata" / "zoneinfo")).version == "2022f"


def test_none_and_installed_are_the_installed_tzdata_package():
    import tzdata

    assert calsim.release().version == tzdata.IANA_VERSION
    assert calsim.release("installed") is calsim.release(None)


def test_system_is_the_machines_zoneinfo_directory():
    r = calsim.release("system")
    assert any(str(r._source.path) == p for p in zoneinfo.TZPATH)
    assert "Europe/Paris" in r.zones and "posixrules" not in r.zones
    assert not any(z.startswith(("posix/", "right/")) for z in r.zones)


def test_system_zoneinfo_resolves_like_zoneinfo_of_the_same_files():
    r = calsim.release("system")
    walls = np.arange(np.datetime64("2026-01-01"), np.datetime64("2027-01-01"), np.timedelta64(30, "m"))
    f = calsim.resolve(walls, "Europe/Paris", r, gap="shift")
    z = r.zone("Europe/Paris")
    import datetime as dt

    for w, due in zip(walls[::97].tolist(), f["due_utc"].to_list()[::97]):
        assert due == w.replace(tzinfo=z).astimezone(dt.timezone.utc)


def test_releases_are_independent_objects_and_bypass_the_zoneinfo_cache():
    a, b = calsim.release("2022e"), calsim.release("2026f")
    assert a.zone("Europe/Paris") is not b.zone("Europe/Paris")
    assert a.zone("Europe/Paris") is not zoneinfo.ZoneInfo("Europe/Paris")
    assert a.zone("Europe/Paris") is a.zone("Europe/Paris")  # per-release, lazily loaded once


def test_zones_load_lazily():
    r = calsim.Release.from_path(shipped_dir() / "tzdata-2025.1-py2.py3-none-any.whl")
    assert r._tables == {}
    r.table("Asia/Tokyo")
    assert list(r._tables) == ["Asia/Tokyo"]


def test_pypi_version_maps_letters_to_numbers():
    assert [pypi_version(v) for v in ("2024a", "2024b", "2026f")] == ["2024.1", "2024.2", "2026.6"]


def test_cache_dir_honours_calsim_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("CALSIM_CACHE", str(tmp_path))
    assert cache_dir() == tmp_path
    monkeypatch.delenv("CALSIM_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "calsim" / "tzdata"


def test_fetch_release_downloads_with_pip_into_the_cache_then_works_offline(monkeypatch, tmp_path):
    # pip runs for real against a local wheel folder (no network here); a
    # copy renamed as another version proves the cache is read by content.
    links = tmp_path / "links"
    links.mkdir()
    shutil.copy(shipped_dir() / "tzdata-2022.5-py2.py3-none-any.whl", links)
    monkeypatch.setenv("CALSIM_CACHE", str(tmp_path / "cache"))
    r = calsim.fetch_release("2022e", force=True, find_links=str(links))
    assert r.version == "2022e"
    assert r.source.startswith(str(tmp_path / "cache"))
    assert (tmp_path / "cache" / "tzdata-2022.5-py2.py3-none-any.whl").is_file()


def test_fetch_release_of_an_unavailable_version_says_what_pip_said(monkeypatch, tmp_path):
    monkeypatch.setenv("CALSIM_CACHE", str(tmp_path / "cache"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(calsim.UnknownReleaseError,
                       match=r"^release: could not fetch tzdata 2019c \(PyPI tzdata==2019.3\) with pip"):
        calsim.fetch_release("2019c", find_links=str(tmp_path / "empty"))


def test_fetch_release_of_an_offline_version_downloads_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("CALSIM_CACHE", str(tmp_path / "cache"))
    assert calsim.fetch_release("2026f").version == "2026f"
    assert not (tmp_path / "cache").exists()
