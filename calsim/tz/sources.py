"""Where a release's bytes come from: a tzdata wheel or a zoneinfo directory, read safely.

A :class:`Source` hands :class:`calsim.tz.release.Release` the raw bytes of
a zone, the zone names and the IANA version; :class:`WheelSource` reads a
``tzdata`` wheel (a zip), :class:`DirSource` a compiled zoneinfo directory.
Which wheel or directory a ``release=`` argument means is
:mod:`calsim.tz.locate`'s job.

A wheel or directory may be untrusted (a pull request's fixture, a cache
someone else wrote), so nothing is read blindly: a file's mode is checked
before it is opened (a FIFO, socket or device is refused, never opened for
reading), a symbolic link may not lead out of the directory, a zone file or
``tzdata.zi`` over 1 MiB, a wheel over 8 MiB and a member compressed more
than 50:1 are refused, metadata must be ASCII or UTF-8 as the format says,
and a directory walk stops after 20,000 entries. Each refusal is one
:class:`~calsim.CorruptReleaseError` naming the file.

>>> from calsim.tz.locate import shipped_dir
>>> src = WheelSource(shipped_dir() / "tzdata-2026.6-py2.py3-none-any.whl")
>>> src.version(), src.read("Europe/Paris")[:4]
('2026f', b'TZif')
>>> src.close()
"""

from __future__ import annotations

import io
import os
import re
import stat
import zipfile
from pathlib import Path

from ..errors import CorruptReleaseError, UnknownReleaseError
from .posix import cut
from .tzif import MAX_TZIF_BYTES

__all__ = [
    "Source", "WheelSource", "DirSource", "IANA_RE", "file_kind", "good_zone_name", "is_tzif", "resolved",
    "shown_path", "walk",
]

IANA_RE = re.compile(r"^\d{4}[a-z]{1,2}$")
_VERSION_LINE = re.compile(rb"^#\s*version\s+(\S+)")
_IANA_IN_INIT = re.compile(r"""IANA_VERSION\s*=\s*["']([^"']+)["']""")
# Directories of a compiled zoneinfo tree that are not zones of their own.
_SKIP_DIRS = frozenset({"posix", "right"})
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


def file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def good_zone_name(name: str) -> bool:
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
            raise CorruptReleaseError(f"{what} is {file_kind(st.st_mode)}, not a regular file")
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
        raise CorruptReleaseError(f"{what} changed into {file_kind(mode)} while being opened")
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


def shown_path(path: str | os.PathLike[str]) -> str:
    return cut(str(path), 120)


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
            f"release: {where} holds version {cut(raw)} (expected a tz version such as '2026a')"
        )
    return text


class Source:
    """Raw bytes of a release's files, from a zip (wheel) or a directory."""

    def __init__(self, path: Path):
        self.path = path

    def read(self, name: str) -> bytes | None:
        raise NotImplementedError

    def zone_names(self) -> list[str]:
        raise NotImplementedError

    def version(self) -> str | None:
        raise NotImplementedError


class WheelSource(Source):
    def __init__(self, path: Path):
        super().__init__(path)
        where = f"release: {shown_path(path)}"
        fh = _open_regular(path, where, _MAX_WHEEL_BYTES)
        if fh is None:
            raise UnknownReleaseError(f"{where} does not exist (expected a tzdata wheel or a zoneinfo directory)")
        try:
            self._zip = zipfile.ZipFile(fh)
        except Exception as exc:  # any parser error on a hostile zip (BadZipFile, EOFError, ...)
            fh.close()
            raise CorruptReleaseError(
                f"{where} is not a readable tzdata wheel ({cut(str(exc))}); "
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
        where = what or f"release: member {cut(member)} of {shown_path(self.path)}"
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
            raise CorruptReleaseError(f"{where} cannot be read ({type(exc).__name__}: {cut(str(exc))})") from None
        if len(data) > _MAX_FILE_BYTES:
            raise CorruptReleaseError(f"{where} is over {_MAX_FILE_BYTES} bytes")
        return data

    def _text(self, member: str) -> str:
        try:
            return self._member(member).decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptReleaseError(
                f"release: member {member!r} of {shown_path(self.path)} is not UTF-8 text"
            ) from None

    def read(self, name: str) -> bytes | None:
        member = f"tzdata/zoneinfo/{name}"
        if member not in self._names or member.endswith("/"):
            return None
        return self._member(member, f"tzif: {cut(name)} in {shown_path(self.path)}")

    def zone_names(self) -> list[str]:
        if "tzdata/zones" in self._names:
            listed = self._text("tzdata/zones").split()
            return [z for z in listed if good_zone_name(z) and f"tzdata/zoneinfo/{z}" in self._names]
        prefix = "tzdata/zoneinfo/"
        return [
            n[len(prefix) :]
            for n in self._names
            if n.startswith(prefix) and not n.endswith((".py", "/", ".zi", ".tab")) and "__" not in n
            and good_zone_name(n[len(prefix) :])
        ]

    def version(self) -> str | None:
        if "tzdata/__init__.py" in self._names:
            m = _IANA_IN_INIT.search(self._text("tzdata/__init__.py"))
            if m:
                return _checked_version(m[1], f"tzdata/__init__.py of {shown_path(self.path)}")
        if "tzdata/zoneinfo/tzdata.zi" not in self._names:
            return None
        data = self._member("tzdata/zoneinfo/tzdata.zi")
        return _version_from_zi(data, f"tzdata.zi of {shown_path(self.path)}")


class DirSource(Source):
    def __init__(self, path: Path):
        super().__init__(path)
        self._root = resolved(path)

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
                f"{what} is a symbolic link leading outside {shown_path(root or self.path)} (or in a loop)"
            )
        return _read_regular(p, what)

    def read(self, name: str) -> bytes | None:
        p = self.path / name
        # A directory ("America") is not a zone; names that climb out of the
        # directory ("../../etc/passwd") never reach here (_valid_key).
        if p.is_dir():
            return None
        return self._file(p, f"tzif: {cut(name)} at {shown_path(p)}")

    def zone_names(self) -> list[str]:
        names = []
        for rel, p in walk(self.path, self._root, skip_top=_SKIP_DIRS):
            if p.name in _SKIP_FILES or "." in p.name or p.name.startswith("+") or not good_zone_name(rel):
                continue
            if is_tzif(p):
                names.append(rel)
        return names

    def version(self) -> str | None:
        plus = self._file(self.path / "+VERSION", f"release: {shown_path(self.path / '+VERSION')}")
        if plus is not None:
            v = _checked_version(plus, f"+VERSION of {shown_path(self.path)}")
            if v:
                return v
        zi = self._file(self.path / "tzdata.zi", f"release: {shown_path(self.path / 'tzdata.zi')}")
        if zi is not None:
            v = _version_from_zi(zi[:200], f"tzdata.zi of {shown_path(self.path)}")
            if v:
                return v
        # An unpacked tzdata package: the version is in ../__init__.py.
        parent = self.path.parent
        init = self._file(parent / "__init__.py", f"release: {shown_path(parent / '__init__.py')}", resolved(parent))
        if init is not None:
            m = _IANA_IN_INIT.search(init.decode("utf-8", "replace"))
            if m:
                return _checked_version(m[1], f"__init__.py of {shown_path(parent)}")
        return None


def _version_from_zi(data: bytes, where: str) -> str | None:
    m = _VERSION_LINE.match(data)
    return _checked_version(m[1], where) if m else None


def resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise CorruptReleaseError(f"release: cannot resolve {shown_path(path)} ({cut(str(exc))})") from None


def walk(path: Path, root: Path, skip_top: frozenset[str] = frozenset()):
    """``(relative name, path)`` of every file under ``path``, bounded in depth and count.

    Symbolic links to directories are not followed (``os.walk``'s default);
    links to files are listed, then checked by :func:`is_tzif`.
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
                f"release: directory {shown_path(path)} holds more than {_MAX_ENTRIES} entries "
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


def is_tzif(p: Path) -> bool:
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
