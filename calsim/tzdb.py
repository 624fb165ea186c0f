"""Releases of the IANA tz database, read straight from a wheel or a zoneinfo directory.

A :class:`Release` is one version of the tz database with its zones. Several
releases live side by side in one process: zones are read from the release's
own files and never through ``zoneinfo.ZoneInfo(key)``, whose process-wide
cache would make a tzdata change invisible.

Where a release comes from (the ``release=`` convention of every function):

============================  ==================================================
``None`` or ``"installed"``   the installed Python ``tzdata`` package
``"system"``                  the machine's compiled zoneinfo directory
``"2026f"``                   a shipped wheel (``data/tzdata/``), a fetched one
                              (user cache) or the installed package, if one of
                              them holds that IANA version
a path                        a ``tzdata`` wheel or a zoneinfo directory
a :class:`Release`            itself
============================  ==================================================

The version is always read from the data (``IANA_VERSION`` in a wheel,
``# version`` in ``tzdata.zi``, or ``+VERSION``), never from a file name.

A wheel or directory may be untrusted (a pull request's fixture, a cache
someone else wrote), so nothing is read blindly: a file's mode is checked
before it is opened (a FIFO, socket or device is refused, never opened for
reading), a symbolic link may not lead out of the directory, a zone file or
``tzdata.zi`` over 1 MiB, a wheel over 8 MiB and a member compressed more
than 50:1 are refused, metadata must be ASCII or UTF-8 as the format says,
and a directory walk stops after 20,000 entries. Each refusal is one
:class:`~calsim.CorruptReleaseError` naming the file.

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
import zipfile
import zoneinfo
from pathlib import Path

import numpy as np
from typing import Union

from .errors import CorruptReleaseError, InputError, UnknownReleaseError, UnknownZoneError
from .tzif import _END_TIME as _OVERRIDE_END
from .tzif import _FIRST_TIME as _OVERRIDE_FIRST
from .tzif import MAX_TZIF_BYTES, PosixTZ, ZoneTable, _cut, write_tzif

__all__ = ["Release", "release", "releases", "fetch_release", "ReleaseLike", "cache_dir", "shipped_dir"]

ReleaseLike = Union["Release", str, os.PathLike, None]

_IANA_RE = re.compile(r"^\d{4}[a-z]{1,2}$")
_VERSION_LINE = re.compile(rb"^#\s*version\s+(\S+)")
_IANA_IN_INIT = re.compile(r"""IANA_VERSION\s*=\s*["']([^"']+)["']""")
# Directories of a compiled zoneinfo tree that are not zones of their own.
_SKIP_DIRS = {"posix", "right"}
_SKIP_FILES = {"posixrules", "localtime"}

# A release may come from an untrusted wheel or directory: every file is
# capped (a TZif file is under 5 KB, tzdata.zi about 110 KB), a wheel too
# (about 350 KB), and a directory walk stops after this many entries (a
# zoneinfo tree holds about 2,000, with posix/ and right/ 4,000).
_MAX_FILE_BYTES = MAX_TZIF_BYTES
_MAX_WHEEL_BYTES = 8 << 20
_MAX_MEMBERS = 10_000
_MAX_RATIO = 50  # tzdata wheels compress at most 4.3:1 (tzdata.zi); a zip bomb at 1000:1
_MAX_ENTRIES = 20_000
_MAX_DEPTH = 4  # "America/Argentina/Buenos_Aires" is 3 deep
_ZONE_NAME = re.compile(r"^[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-.]+){0,5}$", re.ASCII)
_VERSION_OK = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._+\-]{0,39}$", re.ASCII)
# O_NONBLOCK: a FIFO swapped in after the stat check still cannot block the open.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def _good_name(name: str) -> bool:
    """A zone name as tzdata spells them: ASCII letters, digits, ``_+-``, at most 6 parts, 255 bytes."""
    return len(name) <= 255 and _ZONE_NAME.match(name) is not None


def _open_regular(path: Path, what: str, limit: int, min_size: int = 0) -> io.BufferedReader | None:
    """Open a regular file of ``min_size..limit`` bytes; ``None`` if it does not exist (or is smaller).

    ``what`` names the file in messages. The mode is checked with ``stat``
    before the file is opened (opening a device can have effects, opening a
    FIFO blocks) and again on the open descriptor, so that a file swapped
    after the check is refused too.
    """
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise CorruptReleaseError(f"{what} is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise CorruptReleaseError(f"{what} is {st.st_size} bytes (allowed up to {limit})")
        if st.st_size < min_size:
            return None
        fd = os.open(path, _OPEN_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise CorruptReleaseError(f"{what} cannot be read ({exc.strerror or exc})") from None
    fh = os.fdopen(fd, "rb")
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        fh.close()
        raise CorruptReleaseError(f"{what} changed into {_kind(mode)} while being opened")
    return fh


def _read_regular(path: Path, what: str, limit: int = _MAX_FILE_BYTES) -> bytes | None:
    """The bytes of a regular file (see :func:`_open_regular`), read no further than ``limit``."""
    fh = _open_regular(path, what, limit)
    if fh is None:
        return None
    with fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise CorruptReleaseError(f"{what} is over {limit} bytes")
    return data


def _at(path: Path) -> str:
    return _cut(str(path), 120)


def _checked_version(raw: bytes | str, where: str) -> str | None:
    """A version string from metadata: short, printable ASCII, else the release is refused."""
    try:
        text = (raw.decode("ascii") if isinstance(raw, bytes) else raw).strip()
    except UnicodeDecodeError:
        text = None
    if text == "":
        return None
    if text is None or not _VERSION_OK.match(text):
        raise CorruptReleaseError(
            f"release: {where} holds version {_cut(raw)} (expected a tz version such as '2026a')"
        )
    return text


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


class _Source:
    """Raw bytes of a release's files, from a zip (wheel) or a directory."""

    def __init__(self, path: Path):
        self.path = path

    def read(self, name: str) -> bytes | None:
        raise NotImplementedError

    def zone_names(self) -> list[str]:
        raise NotImplementedError

    def version(self) -> str | None:
        raise NotImplementedError


class _WheelSource(_Source):
    def __init__(self, path: Path):
        super().__init__(path)
        where = f"release: {_at(path)}"
        fh = _open_regular(path, where, _MAX_WHEEL_BYTES)
        if fh is None:
            raise UnknownReleaseError(f"{where} does not exist (expected a tzdata wheel or a zoneinfo directory)")
        try:
            self._zip = zipfile.ZipFile(fh)
        except Exception as exc:  # any parser error on a hostile zip (BadZipFile, EOFError, ...)
            fh.close()
            raise CorruptReleaseError(
                f"{where} is not a readable tzdata wheel ({_cut(str(exc))}); "
                "expected a .whl from 'pip download tzdata' or a zoneinfo directory"
            ) from None
        self._fh = fh
        infos = self._zip.infolist()
        if len(infos) > _MAX_MEMBERS:
            self.close()
            raise CorruptReleaseError(
                f"{where} has {len(infos)} members (allowed up to {_MAX_MEMBERS}; tzdata has ~650)"
            )
        names = {i.filename for i in infos}
        if "tzdata/zoneinfo/tzdata.zi" not in names and "tzdata/__init__.py" not in names:
            self.close()
            raise CorruptReleaseError(
                f"{where} is a zip file but not a tzdata wheel (no tzdata/zoneinfo/ inside)"
            )
        self._names = names

    def close(self) -> None:
        self._zip.close()
        self._fh.close()

    def _member(self, member: str, what: str | None = None) -> bytes:
        """A member's bytes, refused when large, compressed like a zip bomb, or unreadable.

        ``what`` names the member in messages (default: its path in the wheel).
        """
        info = self._zip.getinfo(member)
        where = what or f"release: member {_cut(member)} of {_at(self.path)}"
        if info.file_size > _MAX_FILE_BYTES:
            raise CorruptReleaseError(f"{where} is {info.file_size} bytes (allowed up to {_MAX_FILE_BYTES})")
        if info.file_size > 4096 and info.file_size > _MAX_RATIO * info.compress_size:
            raise CorruptReleaseError(
                f"{where} expands {info.compress_size} bytes to {info.file_size} "
                f"(more than {_MAX_RATIO}:1, a zip bomb; tzdata compresses about 4:1)"
            )
        try:
            # The declared size bounds what zipfile decompresses; read one byte
            # more than allowed anyway, in case the header lies.
            with self._zip.open(info) as fh:
                data = fh.read(_MAX_FILE_BYTES + 1)
        except Exception as exc:  # BadZipFile (CRC), zlib.error, encrypted, unknown method ...
            raise CorruptReleaseError(f"{where} cannot be read ({type(exc).__name__}: {_cut(str(exc))})") from None
        if len(data) > _MAX_FILE_BYTES:
            raise CorruptReleaseError(f"{where} is over {_MAX_FILE_BYTES} bytes")
        return data

    def _text(self, member: str) -> str:
        try:
            return self._member(member).decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptReleaseError(
                f"release: member {member!r} of {_at(self.path)} is not UTF-8 text"
            ) from None

    def read(self, name: str) -> bytes | None:
        member = f"tzdata/zoneinfo/{name}"
        if member not in self._names or member.endswith("/"):
            return None
        return self._member(member, f"tzif: {_cut(name)} in {_at(self.path)}")

    def zone_names(self) -> list[str]:
        if "tzdata/zones" in self._names:
            listed = self._text("tzdata/zones").split()
            return [z for z in listed if _good_name(z) and f"tzdata/zoneinfo/{z}" in self._names]
        prefix = "tzdata/zoneinfo/"
        return [
            n[len(prefix) :]
            for n in self._names
            if n.startswith(prefix) and not n.endswith((".py", "/", ".zi", ".tab")) and "__" not in n
            and _good_name(n[len(prefix) :])
        ]

    def version(self) -> str | None:
        if "tzdata/__init__.py" in self._names:
            m = _IANA_IN_INIT.search(self._text("tzdata/__init__.py"))
            if m:
                return _checked_version(m[1], f"tzdata/__init__.py of {_at(self.path)}")
        if "tzdata/zoneinfo/tzdata.zi" not in self._names:
            return None
        data = self._member("tzdata/zoneinfo/tzdata.zi")
        return _version_from_zi(data, f"tzdata.zi of {_at(self.path)}")


class _DirSource(_Source):
    def __init__(self, path: Path):
        super().__init__(path)
        self._root = _resolved(path)

    def _inside(self, p: Path, root: Path | None = None) -> bool:
        """Whether ``p``, symbolic links followed, stays inside the directory (or ``root``)."""
        try:
            p.resolve().relative_to(root or self._root)
        except (ValueError, OSError, RuntimeError):  # outside, or a symlink loop
            return False
        return True

    def _file(self, p: Path, what: str, root: Path | None = None) -> bytes | None:
        """A regular file inside the release (``None`` if missing); anything else is refused."""
        if not self._inside(p, root):
            raise CorruptReleaseError(
                f"{what} is a symbolic link leading outside {_at(root or self.path)} (or in a loop)"
            )
        return _read_regular(p, what)

    def read(self, name: str) -> bytes | None:
        p = self.path / name
        # A directory ("America") is not a zone; names that climb out of the
        # directory ("../../etc/passwd") never reach here (_valid_key).
        if p.is_dir():
            return None
        return self._file(p, f"tzif: {_cut(name)} at {_at(p)}")

    def zone_names(self) -> list[str]:
        names = []
        for rel, p in _walk(self.path, self._root, skip_top=_SKIP_DIRS):
            if p.name in _SKIP_FILES or "." in p.name or p.name.startswith("+") or not _good_name(rel):
                continue
            if _is_tzif(p):
                names.append(rel)
        return names

    def version(self) -> str | None:
        plus = self._file(self.path / "+VERSION", f"release: {_at(self.path / '+VERSION')}")
        if plus is not None:
            v = _checked_version(plus, f"+VERSION of {_at(self.path)}")
            if v:
                return v
        zi = self._file(self.path / "tzdata.zi", f"release: {_at(self.path / 'tzdata.zi')}")
        if zi is not None:
            v = _version_from_zi(zi[:200], f"tzdata.zi of {_at(self.path)}")
            if v:
                return v
        # An unpacked tzdata package: the version is in ../__init__.py.
        parent = self.path.parent
        init = self._file(parent / "__init__.py", f"release: {_at(parent / '__init__.py')}", _resolved(parent))
        if init is not None:
            m = _IANA_IN_INIT.search(init.decode("utf-8", "replace"))
            if m:
                return _checked_version(m[1], f"__init__.py of {_at(parent)}")
        return None


class _OverrideSource(_Source):
    """A release's files with some zones replaced by generated TZif bytes (what-if releases)."""

    def __init__(self, base: _Source, overrides: dict[str, bytes], version: str):
        super().__init__(base.path)
        self._base, self._overrides, self._version = base, overrides, version

    def read(self, name: str) -> bytes | None:
        return self._overrides.get(name) or self._base.read(name)

    def zone_names(self) -> list[str]:
        return self._base.zone_names()

    def version(self) -> str | None:
        return self._version


def _version_from_zi(data: bytes, where: str) -> str | None:
    m = _VERSION_LINE.match(data)
    return _checked_version(m[1], where) if m else None


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise CorruptReleaseError(f"release: cannot resolve {_at(path)} ({_cut(str(exc))})") from None


def _walk(path: Path, root: Path, skip_top: set[str] = set()):
    """``(relative name, path)`` of every file under ``path``, bounded in depth and count.

    Symbolic links to directories are not followed (``os.walk``'s default);
    links to files are listed, then checked by :func:`_is_tzif`.
    """
    seen = 0
    for top, dirs, files in os.walk(path):
        rel_top = Path(top).relative_to(path)
        depth = len(rel_top.parts)
        if depth == 0:
            dirs[:] = [d for d in dirs if d not in skip_top]
        if depth >= _MAX_DEPTH:
            dirs[:] = []
        dirs.sort()
        seen += len(dirs) + len(files)
        if seen > _MAX_ENTRIES:
            raise CorruptReleaseError(
                f"release: directory {_at(path)} holds more than {_MAX_ENTRIES} entries "
                "(a zoneinfo directory holds about 2,000)"
            )
        for f in sorted(files):
            p = Path(top) / f
            if stat.S_ISLNK(_lstat_mode(p)):
                try:
                    p.resolve().relative_to(root)
                except (ValueError, OSError, RuntimeError):
                    continue  # a link to outside the release, or a loop
            yield (rel_top / f).as_posix(), p


def _lstat_mode(p: Path) -> int:
    try:
        return os.lstat(p).st_mode
    except OSError:
        return 0


def _is_tzif(p: Path) -> bool:
    """Whether ``p`` is a regular file starting with ``TZif``; never opens a FIFO or a device."""
    try:
        # Empty files are never opened: /proc's, size 0, may block or have effects when read.
        fh = _open_regular(p, "tzif", _MAX_FILE_BYTES, min_size=4)
    except CorruptReleaseError:
        return False
    if fh is None:
        return False
    with fh:
        try:
            return fh.read(4) == b"TZif"
        except OSError:
            return False


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
