"""Reading a user's file: only regular files, of a bounded size, text without NUL bytes.

Every file calsim reads on a user's behalf (fleet and scenario TOML, the
schedule formats, run histories, calendars, parameter files) comes through
:func:`open_regular` (:func:`read_file` for a whole file), so the same guards
hold everywhere:

* only a **regular file** is opened: a FIFO would block forever, a device
  (``/dev/zero``, ``/dev/urandom``) would never end, a directory is a
  mistake; each is refused after a ``stat``, before any ``open``, and the
  file opened (without blocking, ``O_NONBLOCK``) is checked again with
  ``fstat``, so a FIFO swapped in between is refused too. A symlink is
  followed: what matters is what it points to (a link to ``/dev/zero`` is a
  character device);
* the **size** is checked before reading: schedule files are small (a
  20,000-line crontab is about 1 MB), so the default cap,
  :data:`DEFAULT_MAX_FILE_BYTES` (64 MiB), leaves room; run histories
  (``journalctl`` exports) may be larger and get :data:`DEFAULT_MAX_HISTORY_BYTES`
  (1 GiB). ``CALSIM_MAX_FILE_BYTES`` raises both caps (a whole number of bytes);
* reading allocates what the file **holds**, never the cap: a 100-byte file
  costs a 101-byte read whatever the cap, a file that grows after the
  ``stat`` is read on in :data:`CHUNK_BYTES` pieces and refused past the cap,
  and :func:`iter_chunks` streams a file in pieces for readers that need no
  whole copy (run histories);
* text must be **UTF-8 without NUL bytes**: a NUL means a binary file (or an
  attack on whatever reads the value next: C strings, DuckDB, a terminal),
  so it is refused with its line number rather than passed on.

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "crontab"
>>> _ = p.write_text("0 3 * * * /bin/backup\\n")
>>> read_file(p, "crontab")
'0 3 * * * /bin/backup\\n'
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from .errors import InputError

__all__ = ["read_file", "open_regular", "read_all", "iter_chunks", "check_text", "max_file_bytes", "shown_path",
           "DEFAULT_MAX_FILE_BYTES", "DEFAULT_MAX_HISTORY_BYTES", "CHUNK_BYTES"]

DEFAULT_MAX_FILE_BYTES = 64 << 20
DEFAULT_MAX_HISTORY_BYTES = 1 << 30
CHUNK_BYTES = 1 << 20  # what one read asks for past the size the stat gave (a growing file, /proc)
_ONE_READ = 0x7FFFF000  # Linux returns at most this much from one read(2)
ENV = "CALSIM_MAX_FILE_BYTES"


def max_file_bytes(default: int = DEFAULT_MAX_FILE_BYTES) -> int:
    """The size cap: ``CALSIM_MAX_FILE_BYTES`` when set (a whole number > 0), else ``default``."""
    raw = os.environ.get(ENV)
    if raw is None or not raw.strip():
        return default
    if not raw.strip().isdigit() or int(raw) <= 0 or len(raw.strip()) > 18:
        raise InputError(f"{ENV}: {raw[:40]!r} is not a whole number of bytes greater than 0")
    return max(int(raw), default)


def shown_path(path: object) -> str:
    """A path as messages quote it: at most 120 characters."""
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    return text if len(text) <= 120 else text[:117] + "..."


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _cannot(what: str, shown: str, exc: BaseException) -> InputError:
    reason = getattr(exc, "strerror", None) or ("the path holds a NUL byte" if isinstance(exc, ValueError)
                                                else type(exc).__name__)
    return InputError(f"{what}: cannot read {shown!r} ({reason})")


def _over(what: str, shown: str, cap: int, size: int | None = None) -> InputError:
    have = (f"is {size:,} bytes, over the limit of {cap:,}" if size is not None
            else f"is over the limit of {cap:,} bytes")
    return InputError(f"{what}: {shown!r} {have} (raise it with the {ENV} environment variable)")


def open_regular(path: str | os.PathLike[str], what: str, limit: int | None = DEFAULT_MAX_FILE_BYTES,
                 ) -> tuple[int, int]:
    """``(fd, size)`` of the regular file ``path``, opened for reading; the caller closes ``fd``.

    Refused with an :class:`~calsim.errors.InputError` starting with
    ``what``, and nothing opened: a path that is missing or unreadable,
    anything but a regular file (after following symlinks), a file larger
    than :func:`max_file_bytes` of ``limit`` (None: no size check here; the
    caller checks its own caps). Never blocks: a FIFO is refused by its
    ``stat`` before any ``open``, and the open itself is non-blocking and
    checked again with ``fstat`` (the same file, still regular).

    >>> import os
    >>> try:
    ...     open_regular("/dev/zero", "history")
    ... except InputError as exc:
    ...     print(exc)
    history: '/dev/zero' is a character device; expected a regular file
    """
    shown = shown_path(path)
    try:
        st = os.stat(path)  # follows a symlink: what matters is what it points to
    except (OSError, ValueError, TypeError) as exc:  # ValueError: a NUL in the path itself
        raise _cannot(what, shown, exc) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what}: {shown!r} is {_kind(st.st_mode)}; expected a regular file")
    cap = max_file_bytes(limit) if limit is not None else None
    if cap is not None and st.st_size > cap:
        raise _over(what, shown, cap, st.st_size)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as exc:
        raise _cannot(what, shown, exc) from None
    try:
        now = os.fstat(fd)
    except OSError as exc:  # pragma: no cover - fstat of an open descriptor does not fail
        os.close(fd)
        raise _cannot(what, shown, exc) from None
    if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)  # replaced between the stat and the open (a FIFO swapped in): never read it
        if not stat.S_ISREG(now.st_mode):
            raise InputError(f"{what}: {shown!r} is {_kind(now.st_mode)}; expected a regular file")
        raise InputError(f"{what}: {shown!r} was replaced by another file while being opened; read it again")
    return fd, now.st_size


def read_all(fd: int, size: int, cap: int, what: str, shown: str) -> bytes:
    """The content of the open regular file ``fd`` from its current offset: at most ``cap`` bytes, else refused.

    One read of ``size + 1`` bytes (what the ``fstat`` said, not the cap: a
    100-byte file never reserves a gigabyte), then :data:`CHUNK_BYTES` at a
    time while the file keeps giving more (it grew, or ``/proc`` reports 0).
    """
    parts: list[bytes] = []
    total = 0
    want = min(size, cap) + 1
    while True:
        try:
            part = os.read(fd, min(want, _ONE_READ))
        except OSError as exc:
            raise _cannot(what, shown, exc) from None
        if not part:
            break
        total += len(part)
        if total > cap:
            raise _over(what, shown, cap)
        parts.append(part)
        want = max(want - len(part), CHUNK_BYTES)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def iter_chunks(fd: int, cap: int, what: str, shown: str, chunk: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The content of the open file ``fd`` in pieces of at most ``chunk`` bytes; refused past ``cap`` in all."""
    total = 0
    while True:
        try:
            part = os.read(fd, chunk)
        except OSError as exc:
            raise _cannot(what, shown, exc) from None
        if not part:
            return
        total += len(part)
        if total > cap:
            raise _over(what, shown, cap)
        yield part


def read_file(path: str | os.PathLike[str], what: str, *, binary: bool = False,
              limit: int = DEFAULT_MAX_FILE_BYTES) -> str | bytes:
    """The content of the regular file ``path`` (``str``, or ``bytes`` with ``binary=True``).

    ``what`` starts every message (the format or the option: ``"crontab"``,
    ``"--crontab"``). Raises :class:`~calsim.errors.InputError` for a file
    that is missing, unreadable, not a regular file (see
    :func:`open_regular`), larger than the cap (:func:`max_file_bytes` of
    ``limit``), not UTF-8 or holding a NUL byte.
    """
    shown = shown_path(path)
    fd, size = open_regular(path, what, limit)
    try:
        data = read_all(fd, size, max_file_bytes(limit), what, shown)
    finally:
        os.close(fd)
    return data if binary else check_text(data, what, shown)


def check_text(data: bytes, what: str, name: str) -> str:
    """``data`` as text: UTF-8 (a BOM dropped) without NUL bytes, else an InputError naming ``name``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what}: {name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    nul = text.find("\x00")
    if nul != -1:
        line = text.count("\n", 0, nul) + 1
        raise InputError(f"{what}: {name}: NUL byte at line {line} (a binary file? schedule files are text)")
    return text
