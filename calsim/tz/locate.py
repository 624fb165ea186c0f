"""Where releases are found offline: shipped wheels, the user cache, the installed package, the system tree.

Each function returns paths, never a :class:`~calsim.Release`: turning a
``release=`` argument into one is :func:`calsim.release`'s job
(:mod:`calsim.tz.release`), downloading into the cache
:func:`calsim.fetch_release`'s (:mod:`calsim.tz.fetch`).

============================  ==================================================
shipped wheels                ``data/tzdata/`` of the source tree, or
                              ``<prefix>/share/calsim/tzdata`` once installed
the user cache                ``$CALSIM_CACHE``, else the platform's cache dir
the installed package         the Python ``tzdata`` package (the default release)
the system tree               the first directory of ``zoneinfo.TZPATH`` with a
                              ``UTC`` zone (only for ``release="system"``)
============================  ==================================================

A version is always read from the data (``IANA_VERSION`` in a wheel), never
from a file name: a wheel renamed ``tzdata-2026.6-...`` still holds what it
holds.

>>> "2026f" in offline_releases()
True
>>> sorted(["2024b", "2024aa", "2025a", "2024a"], key=version_key)
['2024a', '2024b', '2024aa', '2025a']
"""

from __future__ import annotations

import os
import re
import sys
import zoneinfo
from pathlib import Path

from ..errors import CorruptReleaseError, UnknownReleaseError
from .sources import DirSource, WheelSource

__all__ = ["shipped_dir", "cache_dir", "installed_dir", "system_dir", "wheel_versions", "offline_releases",
           "version_key"]

# calsim/tz/locate.py -> the source tree's root is three levels up. (Resolved once: every ``release("2026f")``
# looks through the offline releases, and resolving a path is most of that.)
_SOURCE_TREE = Path(__file__).resolve().parents[2]


def shipped_dir() -> Path:
    """Where the wheels shipped with calsim live (``data/tzdata`` of the source tree).

    A non-editable install puts them under ``<prefix>/share/calsim/tzdata``.
    """
    here = _SOURCE_TREE / "data" / "tzdata"
    if here.is_dir():
        return here
    return Path(sys.prefix) / "share" / "calsim" / "tzdata"


def cache_dir() -> Path:
    """The user cache for fetched releases: ``$CALSIM_CACHE``, else the platform's cache dir."""
    env = os.environ.get("CALSIM_CACHE")
    if env:
        return Path(env)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
        return base / "calsim" / "Cache" / "tzdata"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "calsim" / "tzdata"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "calsim" / "tzdata"


def version_key(version: str) -> tuple[int, int, str]:
    """Sort key of an IANA version: year, then letters by length (``z`` before ``aa``), then letters."""
    m = re.match(r"^(\d{4})([a-z]*)", version)
    if not m:
        return (0, 0, version)
    return (int(m[1]), len(m[2]), m[2])


def installed_dir() -> Path:
    """The ``zoneinfo`` directory of the installed Python ``tzdata`` package."""
    try:
        import tzdata  # the PyPI package, a declared dependency
    except ImportError:  # pragma: no cover - tzdata is a dependency
        raise UnknownReleaseError(
            "release: the Python 'tzdata' package is not installed; install it with 'pip install tzdata' "
            "or pass release='system'"
        ) from None
    return Path(tzdata.__file__).parent / "zoneinfo"


def system_dir() -> Path:
    """The machine's compiled zoneinfo directory: the first of ``zoneinfo.TZPATH`` holding a UTC zone."""
    for d in zoneinfo.TZPATH:
        p = Path(d)
        if (p / "UTC").is_file() or (p / "Etc" / "UTC").is_file():
            return p
    raise UnknownReleaseError(
        f"release: 'system' asked for, but no zoneinfo directory was found on TZPATH {list(zoneinfo.TZPATH)} "
        "(use release=None for the installed tzdata package, or a path)"
    )


_WHEELS_SEEN: dict[tuple[str, int], dict[str, Path]] = {}


def wheel_versions(directory: Path) -> dict[str, Path]:
    """IANA version -> wheel in ``directory``; re-read only when the directory changes (its mtime)."""
    if not directory.is_dir():
        return {}
    key = (str(directory), directory.stat().st_mtime_ns)
    hit = _WHEELS_SEEN.get(key)
    if hit is None:
        hit = _WHEELS_SEEN[key] = _read_wheel_versions(directory)
    return dict(hit)


def _read_wheel_versions(directory: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for whl in sorted(directory.glob("tzdata-*.whl")):
        try:
            src = WheelSource(whl)
        except (CorruptReleaseError, UnknownReleaseError):
            continue  # a broken or odd file in the cache is skipped, not fatal
        try:
            v = src.version()
        except CorruptReleaseError:
            continue
        finally:
            src.close()
        if v:
            found.setdefault(v, whl)
    return found


def offline_releases() -> dict[str, Path]:
    """IANA version -> wheel or directory, for everything usable without a network.

    A shipped wheel wins over a fetched one of the same version, and either
    over the installed package.
    """
    found = {}
    found.update(wheel_versions(cache_dir()))
    found.update(wheel_versions(shipped_dir()))
    try:
        inst = installed_dir()
        v = _installed_version(inst)
        if v:
            found.setdefault(v, inst)
    except (UnknownReleaseError, CorruptReleaseError):  # pragma: no cover
        pass
    return found


_INSTALLED_SEEN: dict[tuple[str, int, int], str | None] = {}


def _installed_version(inst: Path) -> str | None:
    """The installed package's version, read again only when its directory or the package's (where
    ``__init__.py`` names the version) changes, as :func:`wheel_versions` does: a release named by version is
    looked up on every call of ``release``."""
    key = (str(inst), inst.stat().st_mtime_ns, inst.parent.stat().st_mtime_ns)
    if key not in _INSTALLED_SEEN:
        _INSTALLED_SEEN[key] = DirSource(inst).version()
    return _INSTALLED_SEEN[key]
