"""Releases of the IANA tz database, read straight from a wheel or a zoneinfo directory.

A :class:`Release` is one version of the tz database with its zones. Several
releases live side by side in one process: zones are read from the release's
own files and never through ``zoneinfo.ZoneInfo(key)``, whose process-wide
cache would make a tzdata change invisible.

Where a release comes from (the ``release=`` convention of every function):

============================  ==================================================
``None`` or ``"installed"``   the installed Python ``tzdata`` package
``"system"``                  the machine's compiled zoneinfo directory
``"latest"``                  the newest release usable offline (see :func:`releases`)
``"2026f"``                   a shipped wheel (``data/tzdata/``), a fetched one
                              (user cache) or the installed package, if one of
                              them holds that IANA version
a path                        a ``tzdata`` wheel or a zoneinfo directory
a :class:`Release`            itself
============================  ==================================================

The version is always read from the data (``IANA_VERSION`` in a wheel,
``# version`` in ``tzdata.zi``, or ``+VERSION``), never from a file name.

A wheel or directory may be untrusted, so nothing is read blindly: see
:mod:`calsim.tz.sources` for the checks and caps. Where each form is looked
for is :mod:`calsim.tz.locate`; what-if zones are :mod:`calsim.tz.override`.

Examples
--------
>>> import calsim
>>> r = calsim.release("2026f")
>>> r.version, "Pacific/Apia" in r.zones
('2026f', True)
>>> r.zone("Europe/Paris").key
'Europe/Paris'
"""

from __future__ import annotations

import difflib
import io
import os
import stat
import zoneinfo
from pathlib import Path
from typing import Union

from ..errors import CorruptReleaseError, UnknownReleaseError, UnknownZoneError
from .locate import installed_dir, offline_releases, system_dir, version_key
from .override import OverrideSource, override_tzif
from .posix import cut
from .sources import (
    IANA_RE, DirSource, Source, WheelSource, file_kind, good_zone_name, is_tzif, resolved, shown_path, walk,
)
from .tzif import ZoneTable

__all__ = ["Release", "ReleaseLike", "release", "releases", "release_at"]

ReleaseLike = Union["Release", str, os.PathLike, None]


class Release:
    """One version of the tz database and its zones.

    Use :func:`calsim.release` to get one; build one directly with
    :meth:`from_path`. Zones are parsed lazily, once per release.

    Attributes
    ----------
    version : str
        The IANA version read from the data, e.g. ``"2026f"`` (``"unknown"``
        when a zoneinfo directory carries none).
    source : str
        The wheel or directory the release was read from.
    """

    def __init__(self, source: Source, label: str | None = None):
        self._source = source
        v = source.version()
        self.version: str = v if v else "unknown"
        self.source: str = label or str(source.path)
        self._zones: tuple[str, ...] | None = None
        self._tables: dict[str, ZoneTable] = {}
        self._zoneinfos: dict[str, zoneinfo.ZoneInfo] = {}

    @classmethod
    def from_path(cls, path: str | os.PathLike) -> Release:
        """Read a release from a ``tzdata`` wheel or a compiled zoneinfo directory.

        A directory may be a zoneinfo tree (``/usr/share/zoneinfo``) or an
        unpacked ``tzdata`` package (one with a ``zoneinfo/`` inside).
        """
        p = Path(path)
        try:
            mode = os.stat(p).st_mode
        except (OSError, ValueError):  # missing, too long a name, an embedded NUL
            raise UnknownReleaseError(
                f"release: path {shown_path(path)} does not exist (expected a tzdata wheel or a zoneinfo directory)"
            ) from None
        if stat.S_ISDIR(mode):
            if (p / "zoneinfo").is_dir() and not (p / "UTC").exists():
                p = p / "zoneinfo"
            src: Source = DirSource(p)
            if not any(True for _ in _iter_first_tzif(p)):
                raise CorruptReleaseError(
                    f"release: directory {shown_path(path)} holds no TZif files "
                    "(expected a compiled zoneinfo directory such as /usr/share/zoneinfo)"
                )
            return cls(src)
        if stat.S_ISREG(mode):
            return cls(WheelSource(p))
        raise CorruptReleaseError(
            f"release: {shown_path(path)} is {file_kind(mode)}, not a tzdata wheel or a zoneinfo directory"
        )

    @property
    def zones(self) -> tuple[str, ...]:
        """Sorted names of every zone (and link) in the release."""
        if self._zones is None:
            self._zones = tuple(sorted(set(self._source.zone_names())))
        return self._zones

    def tzif(self, name: str) -> bytes:
        """The raw TZif bytes of zone ``name`` (at most 1 MiB; a FIFO or device is refused)."""
        data = self._source.read(name) if _valid_key(name) else None
        if data is None:
            raise UnknownZoneError(self._unknown_zone_message(name))
        return data

    def table(self, name: str) -> ZoneTable:
        """The zone's transition table (parsed and checked once, kept with this release)."""
        t = self._tables.get(name) if _valid_key(name) else None
        if t is None:
            t = self._tables[name] = ZoneTable.from_bytes(name, self.tzif(name))
        return t

    def zone(self, name: str) -> zoneinfo.ZoneInfo:
        """A ``zoneinfo.ZoneInfo`` built from this release's file, outside the global cache."""
        z = self._zoneinfos.get(name) if _valid_key(name) else None
        if z is None:
            self.table(name)  # calsim's checks first: zoneinfo only ever sees a sane file
            data = self.tzif(name)
            try:
                z = zoneinfo.ZoneInfo.from_file(io.BytesIO(data), key=name)
            except Exception as exc:  # whatever CPython's parser raises on a file it dislikes
                raise CorruptReleaseError(
                    f"tzif: zone {cut(name)} of release {self.version} is not valid TZif ({cut(str(exc))})"
                ) from None
            self._zoneinfos[name] = z
        return z

    @property
    def links(self) -> dict[str, str]:
        """Link name -> target zone, from the release's ``tzdata.zi`` (empty if it has none)."""
        data = self._source.read("tzdata.zi") or b""
        out = {}
        for line in data.decode("utf-8", "replace").splitlines():
            if line.startswith("L "):
                parts = line.split()
                if len(parts) == 3 and good_zone_name(parts[1]) and good_zone_name(parts[2]):
                    out[parts[2]] = parts[1]
        return out

    def with_override(self, zone: str, from_utc: object, posix_tz: str) -> Release:
        """A derived, in-memory release in which ``zone`` follows ``posix_tz`` from ``from_utc`` on.

        For studying a change before IANA publishes it ("this country
        abolishes DST from 2027-03-01"): before ``from_utc`` the zone keeps
        this release's history; from it, the POSIX TZ rule governs (e.g.
        ``"<+03>-3"`` for a fixed UTC+3, ``"EST5EDT,M3.2.0,M11.1.0"``). The
        result's version is ``"<version>+override"`` and it works wherever a
        release does; other zones are untouched.

        >>> import calsim
        >>> r = calsim.release("2026f").with_override("America/New_York", "2027-01-01T00:00Z", "EST5")
        >>> r.version, calsim.resolve(["2027-07-01T12:00"], "America/New_York", r)["utc_offset_s"][0]
        ('2026f+override', -18000)
        """
        table = self.table(zone)  # UnknownZoneError for an unknown zone
        data = override_tzif(table, from_utc, posix_tz)
        version = self.version if self.version.endswith("+override") else f"{self.version}+override"
        return Release(OverrideSource.adding(self._source, zone, data, version), f"{self.source} + override {zone}")

    def _unknown_zone_message(self, name: object) -> str:
        text = name if isinstance(name, str) else repr(name)
        close = _closest(text, self.zones) if len(text) <= 255 else []
        if not close and len(text) <= 255:
            # Try matching the city alone ("Calcutta" for "Asia/Calcutta").
            tail = {z.rsplit("/", 1)[-1].lower(): z for z in self.zones}
            close = [tail[c] for c in difflib.get_close_matches(text.rsplit("/", 1)[-1].lower(), tail, n=3)]
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else (
            " (expected an IANA name such as 'Europe/Paris'; see Release.zones)"
        )
        return f"zone: unknown zone {cut(name)} in tzdata {self.version}{hint}"

    def __repr__(self) -> str:
        return f"Release({self.version!r}, source={self.source!r})"


def _closest(name: str, names: tuple[str, ...]) -> list[str]:
    """Up to three names nearly as close to ``name`` as the closest one."""
    scored = []
    for cand in names:
        m = difflib.SequenceMatcher(None, name.lower(), cand.lower())
        if m.real_quick_ratio() >= 0.6 and m.quick_ratio() >= 0.6:
            scored.append((m.ratio(), cand))
    scored = sorted((s for s in scored if s[0] >= 0.6), key=lambda s: -s[0])
    if not scored:
        return []
    best = scored[0][0]
    return [c for r, c in scored[:3] if r >= best - 0.08]


def _valid_key(name: object) -> bool:
    return (
        isinstance(name, str)
        and 0 < len(name.encode("utf-8", "surrogatepass")) <= 255  # bytes, as the OS counts a file name
        and not name.startswith(("/", "\\"))
        and ".." not in name.split("/")
        and "\x00" not in name
    )


def _iter_first_tzif(path: Path):
    """The name of the first TZif file under ``path`` (nothing if none), safely and boundedly."""
    for rel, p in walk(path, resolved(path)):
        if is_tzif(p):
            yield rel
            return


# One Release per resolved path and process: its zones are parsed once, and two
# spellings of one path (a symlink, "2026f" and its wheel's path) share them.
_BY_PATH: dict[str, Release] = {}
# A path as given -> its resolved form: resolving walks every component with lstat, and a simulation asks for
# its release (and each budget's zone) many times; a release's directory does not move while a process runs.
_RESOLVED: dict[str, str] = {}


def release_at(path: Path, label: str | None = None) -> Release:
    """The one :class:`Release` of ``path`` in this process (read on first use); ``label`` names calsim's
    own choices."""
    key = _RESOLVED.get(str(path))
    if key is None:
        key = _RESOLVED[str(path)] = str(resolved(path))
    r = _BY_PATH.get(key)
    if r is None:
        # A labelled directory is calsim's own choice (installed package, system
        # tree); any other path is checked as a user's wheel or directory.
        r = _BY_PATH[key] = Release(DirSource(path), label) if label and path.is_dir() else Release.from_path(path)
    return r


def releases() -> list[str]:
    """IANA versions usable offline: shipped wheels, fetched wheels and the installed package.

    >>> import calsim
    >>> "2026f" in calsim.releases()
    True
    """
    return sorted(offline_releases(), key=version_key)


def release(version: ReleaseLike = None) -> Release:
    """Get a release by version, alias or path (see the module docstring for the forms).

    Raises
    ------
    UnknownReleaseError
        When nothing offline holds that version; the message lists the
        offline versions and how to fetch another.

    >>> import calsim
    >>> calsim.release("2022e").version
    '2022e'
    """
    if isinstance(version, Release):
        return version
    if version is None or version == "installed":
        return release_at(installed_dir(), "installed tzdata package")
    if isinstance(version, os.PathLike):
        p = Path(version)
        if not os.path.lexists(p):
            raise UnknownReleaseError(
                f"release: path {cut(str(p), 120)} does not exist (expected a tzdata wheel or a zoneinfo directory)"
            )
        return release_at(p)
    if not isinstance(version, str):
        raise UnknownReleaseError(
            f"release: expected a version string, 'installed', 'system', a path or a Release, "
            f"got {type(version).__name__} {cut(version)}"
        )
    if version == "system":
        return release_at(system_dir(), "system zoneinfo")
    if version == "latest":  # the newest release usable offline: what an upgrade would move to today
        return release(releases()[-1])
    if IANA_RE.match(version):
        path = offline_releases().get(version)
        if path is not None:
            return release_at(path)
        raise UnknownReleaseError(_unknown_release_message(version))
    p = Path(version)
    try:
        exists = "\x00" not in version and p.exists()
    except OSError:  # a name too long for the file system
        exists = False
    if exists:
        return release_at(p)
    if "/" in version or os.sep in version or version.endswith(".whl"):
        raise UnknownReleaseError(
            f"release: path {cut(version, 120)} does not exist (expected a tzdata wheel or a zoneinfo directory)"
        )
    raise UnknownReleaseError(_unknown_release_message(version))


def _unknown_release_message(version: str) -> str:
    offline = ", ".join(releases())
    return (
        f"release: unknown release {cut(version)}; available offline: {offline}; "
        "also 'installed', 'system' or a path to a tzdata wheel or zoneinfo directory; "
        f"fetch another once with calsim.fetch_release('2024b') or 'calsim fetch 2024b'"
    )
