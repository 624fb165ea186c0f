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
:mod:`calsim.tzdata_sources` for the checks and caps.

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
import re
import stat
import subprocess
import sys
import zoneinfo
from pathlib import Path

import numpy as np
from typing import Union

from .errors import CorruptReleaseError, InputError, UnknownReleaseError, UnknownZoneError
from .tzif import _END_TIME as _OVERRIDE_END
from .tzif import _FIRST_TIME as _OVERRIDE_FIRST
from .tzif import PosixTZ, ZoneTable, _cut, write_tzif
from .tzdata_sources import (  # where a release's files come from, read safely
    _IANA_RE,
    _DirSource,
    _OverrideSource,
    _Source,
    _WheelSource,
    _at,
    _good_name,
    _is_tzif,
    _kind,
    _resolved,
    _walk,
)

__all__ = ["Release", "release", "releases", "fetch_release", "ReleaseLike", "cache_dir", "shipped_dir"]

ReleaseLike = Union["Release", str, os.PathLike, None]

def shipped_dir() -> Path:
    """Where the wheels shipped with calsim live (``data/tzdata`` of the source tree).

    A non-editable install puts them under ``<prefix>/share/calsim/tzdata``.
    """
    here = Path(__file__).resolve().parent.parent / "data" / "tzdata"
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


def _version_key(version: str) -> tuple[int, int, str]:
    m = re.match(r"^(\d{4})([a-z]*)", version)
    if not m:
        return (0, 0, version)
    return (int(m[1]), len(m[2]), m[2])


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

    def __init__(self, source: _Source, label: str | None = None):
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
                f"release: path {_at(path)} does not exist (expected a tzdata wheel or a zoneinfo directory)"
            ) from None
        if stat.S_ISDIR(mode):
            if (p / "zoneinfo").is_dir() and not (p / "UTC").exists():
                p = p / "zoneinfo"
            src: _Source = _DirSource(p)
            if not any(True for _ in _iter_first_tzif(p)):
                raise CorruptReleaseError(
                    f"release: directory {_at(path)} holds no TZif files "
                    "(expected a compiled zoneinfo directory such as /usr/share/zoneinfo)"
                )
            return cls(src)
        if stat.S_ISREG(mode):
            return cls(_WheelSource(p))
        raise CorruptReleaseError(
            f"release: {_at(path)} is {_kind(mode)}, not a tzdata wheel or a zoneinfo directory"
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
                    f"tzif: zone {_cut(name)} of release {self.version} is not valid TZif ({_cut(str(exc))})"
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
                if len(parts) == 3 and _good_name(parts[1]) and _good_name(parts[2]):
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
        from .times import instant_us

        table = self.table(zone)  # UnknownZoneError for an unknown zone
        at_us = instant_us(from_utc, "from_utc")
        if not isinstance(posix_tz, str):
            raise InputError(
                f"posix_tz: expected a POSIX TZ string such as 'EST5EDT,M3.2.0,M11.1.0', got {_cut(posix_tz)}"
            )
        try:
            rule = PosixTZ.parse(posix_tz, "posix_tz")
        except CorruptReleaseError as exc:
            raise InputError(str(exc)) from None  # the same message, as the caller's mistake
        at = -(-at_us // 1_000_000)  # TZif has whole seconds: the first second at or after from_utc
        if not _OVERRIDE_FIRST <= at < _OVERRIDE_END:
            # The derived file must pass calsim's own TZif checks (transitions in 1800..2500).
            raise InputError(
                f"from_utc: {_cut(str(from_utc))} is outside the years a TZif transition may have (allowed 1800..2500)"
            )
        year = int(np.datetime64(at, "s").astype("datetime64[Y]").astype(int)) + 1970
        table.covering(year + 1)
        keep = table.utc < at
        utc = list(table.utc[keep])
        offsets = list(table.offsets[: int(keep.sum()) + 1])
        new_off = rule.std_offset  # the rule's offset in force at the instant
        if rule.has_dst:
            marks = sorted(t for y in (year - 1, year, year + 1) for t in rule.transitions(y))
            before = [off for t, off in marks if t <= at]
            new_off = before[-1] if before else rule.std_offset
        # Always an explicit transition at the instant, even when the offset
        # does not change: the footer rule governs only after the last one.
        utc.append(at)
        offsets.append(new_off)
        data = write_tzif(np.array(utc, dtype=np.int64), np.array(offsets, dtype=np.int64), posix_tz)
        base = self._source
        overrides = dict(base._overrides) if isinstance(base, _OverrideSource) else {}
        overrides[zone] = data
        root = base._base if isinstance(base, _OverrideSource) else base
        version = self.version if self.version.endswith("+override") else f"{self.version}+override"
        derived = Release(_OverrideSource(root, overrides, version), f"{self.source} + override {zone}")
        return derived

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
        return f"zone: unknown zone {_cut(name)} in tzdata {self.version}{hint}"

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
        and 0 < len(name) <= 255
        and not name.startswith(("/", "\\"))
        and ".." not in name.split("/")
        and "\x00" not in name
    )


def _iter_first_tzif(path: Path):
    """The name of the first TZif file under ``path`` (nothing if none), safely and boundedly."""
    for rel, p in _walk(path, _resolved(path)):
        if _is_tzif(p):
            yield rel
            return


# ---------------------------------------------------------------------------
# Finding releases
# ---------------------------------------------------------------------------

_BY_PATH: dict[str, Release] = {}


def _open(path: Path, label: str | None = None) -> Release:
    key = str(_resolved(path))
    r = _BY_PATH.get(key)
    if r is None:
        # A labelled directory is calsim's own choice (installed package, system
        # tree); any other path is checked as a user's wheel or directory.
        r = _BY_PATH[key] = Release(_DirSource(path), label) if label and path.is_dir() else Release.from_path(path)
    return r


def _installed_dir() -> Path:
    try:
        import tzdata  # the PyPI package, a declared dependency
    except ImportError:  # pragma: no cover - tzdata is a dependency
        raise UnknownReleaseError(
            "release: the Python 'tzdata' package is not installed; install it with 'pip install tzdata' "
            "or pass release='system'"
        ) from None
    return Path(tzdata.__file__).parent / "zoneinfo"


def _system_dir() -> Path:
    for d in zoneinfo.TZPATH:
        p = Path(d)
        if (p / "UTC").is_file() or (p / "Etc" / "UTC").is_file():
            return p
    raise UnknownReleaseError(
        f"release: 'system' asked for, but no zoneinfo directory was found on TZPATH {list(zoneinfo.TZPATH)} "
        "(use release=None for the installed tzdata package, or a path)"
    )


_WHEELS_SEEN: dict[tuple[str, int], dict[str, Path]] = {}


def _wheel_versions(directory: Path) -> dict[str, Path]:
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
            src = _WheelSource(whl)
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


def _offline() -> dict[str, Path]:
    """IANA version -> wheel or directory, for everything usable without a network."""
    found = {}
    found.update(_wheel_versions(cache_dir()))
    found.update(_wheel_versions(shipped_dir()))
    try:
        inst = _installed_dir()
        v = _DirSource(inst).version()
        if v:
            found.setdefault(v, inst)
    except (UnknownReleaseError, CorruptReleaseError):  # pragma: no cover
        pass
    return found


def releases() -> list[str]:
    """IANA versions usable offline: shipped wheels, fetched wheels and the installed package.

    >>> import calsim
    >>> "2026f" in calsim.releases()
    True
    """
    return sorted(_offline(), key=_version_key)


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
        return _open(_installed_dir(), "installed tzdata package")
    if isinstance(version, os.PathLike):
        p = Path(version)
        if not os.path.lexists(p):
            raise UnknownReleaseError(
                f"release: path {_cut(str(p), 120)} does not exist (expected a tzdata wheel or a zoneinfo directory)"
            )
        return _open(p)
    if not isinstance(version, str):
        raise UnknownReleaseError(
            f"release: expected a version string, 'installed', 'system', a path or a Release, "
            f"got {type(version).__name__} {_cut(version)}"
        )
    if version == "system":
        return _open(_system_dir(), "system zoneinfo")
    if version == "latest":  # the newest release usable offline: what an upgrade would move to today
        return release(releases()[-1])
    if _IANA_RE.match(version):
        path = _offline().get(version)
        if path is not None:
            return _open(path)
        raise UnknownReleaseError(_unknown_release_message(version))
    p = Path(version)
    try:
        exists = "\x00" not in version and p.exists()
    except OSError:  # a name too long for the file system
        exists = False
    if exists:
        return _open(p)
    if "/" in version or os.sep in version or version.endswith(".whl"):
        raise UnknownReleaseError(
            f"release: path {_cut(version, 120)} does not exist (expected a tzdata wheel or a zoneinfo directory)"
        )
    raise UnknownReleaseError(_unknown_release_message(version))


def _unknown_release_message(version: str) -> str:
    offline = ", ".join(releases())
    return (
        f"release: unknown release {_cut(version)}; available offline: {offline}; "
        "also 'installed', 'system' or a path to a tzdata wheel or zoneinfo directory; "
        f"fetch another once with calsim.fetch_release('2024b') or 'calsim fetch 2024b'"
    )


def pypi_version(iana: str) -> str:
    """The PyPI ``tzdata`` version of an IANA version: ``2024b`` -> ``2024.2``.

    The tzdata package numbers releases ``YYYY.n`` with ``n`` the letter's
    position (a=1), as its ``__init__`` documents.
    """
    m = _IANA_RE.match(iana)
    if not m or len(iana) != 5:
        raise UnknownReleaseError(
            f"version: {_cut(iana)} is not an IANA version of the form YYYYx (such as '2024b')"
        )
    return f"{iana[:4]}.{ord(iana[4]) - ord('a') + 1}"


def fetch_release(
    version: str, *, force: bool = False, index_url: str | None = None, find_links: str | None = None
) -> Release:
    """Download the ``tzdata`` wheel of an IANA version into the user cache with pip.

    A version already available offline is returned without any download
    (unless ``force``). Afterwards the release works offline: it is found by
    :func:`release` like a shipped one. ``index_url`` and ``find_links`` are
    passed to ``pip download`` (for mirrors and offline wheel folders).

    The cache is ``$CALSIM_CACHE`` if set, else the platform's user cache
    directory (``~/.cache/calsim/tzdata`` on Linux).
    """
    if not force:
        path = _offline().get(version)
        if path is not None:
            return _open(path)
    pep440 = pypi_version(version)
    target = cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(target)]
    if index_url:
        cmd += ["--index-url", index_url]
    if find_links:
        cmd += ["--no-index", "--find-links", str(find_links)]
    cmd.append(f"tzdata=={pep440}")
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise UnknownReleaseError(
            f"release: could not fetch tzdata {version} (PyPI tzdata=={pep440}) with pip: {last}"
        )
    wheels = _wheel_versions(target)
    if version not in wheels:
        raise UnknownReleaseError(
            f"release: pip downloaded tzdata=={pep440} but its data is not IANA {version} "
            f"(found {sorted(wheels)})"
        )
    return _open(wheels[version])
