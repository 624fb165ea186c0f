"""Reading a user's file: only regular files, of a bounded size, text without NUL bytes.

Every file calsim reads on a user's behalf (fleet and scenario TOML, the
schedule formats, run histories, calendars, parameter files) comes through
:func:`read_file`, so the same guards hold everywhere:

* only a **regular file** is opened: a FIFO would block forever, a device
  (``/dev/zero``, ``/dev/urandom``) would never end, a directory is a
  mistake; each is refused after a ``stat``, before any ``open``;
* the **size** is checked before reading: schedule files are small (a
  20,000-line crontab is about 1 MB), so the default cap,
  :data:`DEFAULT_MAX_FILE_BYTES` (64 MiB), leaves room; run histories
  (``journalctl`` exports) may be larger and get :data:`DEFAULT_MAX_HISTORY_BYTES`
  (1 GiB). ``CALSIM_MAX_FILE_BYTES`` raises both caps (a whole number of bytes);
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

from .errors import InputError

__all__ = ["read_file", "check_text", "max_file_bytes", "DEFAULT_MAX_FILE_BYTES", "DEFAULT_MAX_HISTORY_BYTES"]

DEFAULT_MAX_FILE_BYTES = 64 << 20
DEFAULT_MAX_HISTORY_BYTES = 1 << 30
ENV = "CALSIM_MAX_FILE_BYTES"


def max_file_bytes(default: int = DEFAULT_MAX_FILE_BYTES) -> int:
    """The size cap: ``CALSIM_MAX_FILE_BYTES`` when set (a whole number > 0), else ``default``."""
    raw = os.environ.get(ENV)
    if raw is None or not raw.strip():
        return default
    if not raw.strip().isdigit() or int(raw) <= 0 or len(raw.strip()) > 18:
        raise InputError(f"{ENV}: {raw[:40]!r} is not a whole number of bytes greater than 0")
    return max(int(raw), default)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_file(path: str | os.PathLike[str], what: str, *, binary: bool = False,
              limit: int = DEFAULT_MAX_FILE_BYTES) -> str | bytes:
    """The content of the regular file ``path`` (``str``, or ``bytes`` with ``binary=True``).

    ``what`` starts every message (the format or the option: ``"crontab"``,
    ``"--crontab"``). Raises :class:`~calsim.errors.InputError` for a file
    that is missing, unreadable, not a regular file, larger than the cap
    (:func:`max_file_bytes` of ``limit``), not UTF-8 or holding a NUL byte.
    """
    shown = str(path) if len(str(path)) <= 120 else str(path)[:117] + "..."
    try:
        st = os.stat(path)  # follows a symlink: what matters is what it points to
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path itself
        reason = getattr(exc, "strerror", None) or ("the path holds a NUL byte" if isinstance(exc, ValueError)
                                                    else type(exc).__name__)
        raise InputError(f"{what}: cannot read {shown!r} ({reason})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what}: {shown!r} is {_kind(st.st_mode)}; expected a regular file")
    cap = max_file_bytes(limit)
    if st.st_size > cap:
        raise InputError(f"{what}: {shown!r} is {st.st_size:,} bytes, over the limit of {cap:,} "
                         f"(raise it with the {ENV} environment variable)")
    try:
        with open(path, "rb") as fh:
            data = fh.read(cap + 1)  # the file may have grown since the stat
    except OSError as exc:
        raise InputError(f"{what}: cannot read {shown!r} ({exc.strerror or type(exc).__name__})") from None
    if len(data) > cap:
        raise InputError(f"{what}: {shown!r} is over the limit of {cap:,} bytes "
                         f"(raise it with the {ENV} environment variable)")
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
