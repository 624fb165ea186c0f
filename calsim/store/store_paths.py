"""Where a ledger store may live (plain local DuckDB files only, checked before DuckDB opens them) and DuckDB's
failures to open one, in one line.

DuckDB reads more than local files: ``md:`` goes to MotherDuck, ``s3://``
and ``https://`` to its file systems, and it may install and load extensions
to do so. A store path comes from a user (``--db``, a notebook parameter), so
:func:`check_store_path` refuses anything but a plain local path or
``":memory:"``, and anything at that path that is not a DuckDB file (a
directory, a device, a FIFO, a text, Parquet or SQLite file, an empty file,
a write-ahead log that is not a regular file), before any connection is
made. :data:`CONFIG` turns DuckDB's automatic extension install and load off.
The errors are one-line :class:`~calsim.errors.StoreError` s naming the path.

>>> check_store_path(":memory:")
>>> try:
...     check_store_path("md:calsim")
... except StoreError as exc:
...     print(str(exc)[:80])
path: 'md:calsim' would be read by DuckDB as an extension prefix ('md:'), not a
"""

from __future__ import annotations

import os
import re
import stat

from ..atomic import show_path
from ..errors import LedgerLockedError, StoreError

__all__ = ["CONFIG", "check_store_path", "store_path", "check_store_file", "cause", "lock_error"]

# Never install or load an extension behind the caller's back (DuckDB would
# download httpfs for an s3:// path, sqlite_scanner for a SQLite file, ...).
CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
           "allow_community_extensions": False}
# What DuckDB reads as "not a local file" (ExtensionHelper::ExtractExtensionPrefixFromPath in
# duckdb/duckdb src/main/extension/extension_load.cpp: two or more alphanumeric characters and a
# colon; a "scheme://" goes to a registered file system instead). A superset of both; one letter
# and a colon stays a Windows drive.
_PREFIX = re.compile(r"([A-Za-z][A-Za-z0-9_+.\-]+):")
_MAGIC = b"DUCK"  # at offset 8 of every DuckDB database file (after the header checksum)


def store_path(path: object) -> str:
    """The text of a store path, if DuckDB will read it as a plain local file (or ``":memory:"``)."""
    if not isinstance(path, (str, os.PathLike)) or not isinstance(os.fspath(path), str):
        raise StoreError(f"path: expected a file path or ':memory:', got {type(path).__name__}")
    text = os.fspath(path)
    if text == ":memory:":
        return text
    if not text.strip():
        raise StoreError("path: expected a file path or ':memory:', got an empty string")
    if "\x00" in text:
        raise StoreError(f"path: {show_path(text)} holds a NUL character, which no file name can")
    found = _PREFIX.match(text)
    if found or text.startswith(":memory:"):
        if isinstance(path, os.PathLike):
            return os.path.join(os.curdir, text)  # a Path object names a file, never a URL
        remote = found is not None and text[found.end():].startswith("//")
        what = ("a remote location" if remote else "an extension prefix") if found else "a named in-memory database"
        scheme = found.group(0) if found else ":memory:"
        hint = "" if remote else f" (for a local file of that name, write './{text[:40]}')"
        raise StoreError(f"path: {show_path(text)} would be read by DuckDB as {what} ({scheme!r}), not a local file; "
                         f"the store opens local files or ':memory:' only{hint}")
    return text


def check_store_path(path: object, *, read_only: bool = False) -> None:
    """Refuse a store path as :class:`LedgerStore` would, without opening (or creating) anything.

    For a command that checks every output before it does any work.
    """
    text = store_path(path)
    if text != ":memory:":
        check_store_file(text, read_only)


def _refuse(shown: str, why: str) -> StoreError:
    return StoreError(f"path: cannot open {shown} as a DuckDB database: {why}")


def _file_kind(head: bytes) -> str:
    if head.startswith(b"SQLite format 3\x00"):
        return "a SQLite database"
    if head.startswith(b"PAR1"):
        return "a Parquet file"
    if head.startswith((b"\x1f\x8b", b"PK\x03\x04", b"\x28\xb5\x2f\xfd")):
        return "a compressed archive"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "binary data"
    return "a text file"


def check_store_file(text: str, read_only: bool) -> str:
    """Refuse what cannot be a store (see :mod:`.ledger_store`, "Decisions"); return the file DuckDB should open."""
    shown = show_path(text)
    try:
        st = os.lstat(text)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _refuse(shown, f"{os.strerror(exc.errno or 0)}") from None
    file = text
    if st is not None and stat.S_ISLNK(st.st_mode):
        try:
            file = os.path.realpath(text, strict=True)
            st = os.stat(file)
        except OSError as exc:
            raise _refuse(shown, "it is a symlink to a missing or unreachable path "
                                 f"({os.strerror(exc.errno or 0)})") from None
    if st is None:
        if read_only:
            raise _refuse(shown, "it does not exist (a store is created by opening it without read_only)")
        _check_directory(text, shown)
        return file
    if stat.S_ISDIR(st.st_mode):
        raise _refuse(shown, "it is a directory")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a character device" if stat.S_ISCHR(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode)
                else "a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                else "not a regular file")
        raise _refuse(shown, f"it is {kind}")
    if st.st_size == 0:
        raise _refuse(shown, "it is an empty file (calsim does not take over an existing file; "
                             "remove it to create a new store there)")
    try:
        with open(file, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise _refuse(shown, f"{os.strerror(exc.errno or 0)}") from None
    if head[8:12] != _MAGIC:
        raise _refuse(shown, f"it is {_file_kind(head)} (no DuckDB header)")
    wal = file + ".wal"
    if os.path.lexists(wal):
        wst = os.lstat(wal)
        if not stat.S_ISREG(wst.st_mode):
            # DuckDB replays and appends to it: a FIFO would block, a link would write elsewhere.
            raise _refuse(shown, f"its write-ahead log {show_path(wal)} is not a regular file; "
                                 "calsim will not read or write through it")
    if not read_only:
        if not st.st_mode & 0o222:
            raise _refuse(shown, f"it is read-only (mode {stat.S_IMODE(st.st_mode):04o}); open it with read_only=True "
                                 "to read it")
        _check_directory(file, shown)
    return file


def _check_directory(file: str, shown: str) -> None:
    """Writing a store needs its directory: DuckDB creates the file and ``<file>.wal`` there."""
    parent = os.path.dirname(os.path.abspath(file))
    if not os.path.isdir(parent):
        raise _refuse(shown, f"its directory does not exist ({show_path(parent)})")
    if not os.access(parent, os.W_OK | os.X_OK):
        try:
            readonly = bool(os.statvfs(parent).f_flag & os.ST_RDONLY)
        except (OSError, AttributeError):
            readonly = False
        cause = "a read-only file system" if readonly else "permission denied"
        raise _refuse(shown, f"its directory {show_path(parent)} is not writable ({cause}); "
                             "DuckDB writes the store and its .wal log there (read_only=True only reads)")


def cause(exc: BaseException) -> str:
    """DuckDB's reason in one short line (the original one when it invalidated the database)."""
    msg = str(exc)
    original = re.search(r'Original error: "(.*)"', msg, re.S)
    if original:
        msg = original.group(1)
    line = next((ln.strip() for ln in msg.splitlines() if ln.strip()), type(exc).__name__)
    while True:
        shorter = re.sub(r"^(?:[A-Za-z]+ ){0,3}?[A-Za-z]+ Error: |^Failed to commit: ", "", line)
        if shorter == line:
            break
        line = shorter
    return line[:240] + ("..." if len(line) > 240 else "")


def lock_error(shown: str, exc: BaseException) -> LedgerLockedError:
    """Who holds the file, in DuckDB's words: it adds "you would be able to open this database in
    read-only mode" when only readers hold it (LocalFileSystem::OpenFile, duckdb/duckdb
    src/common/local_file_system.cpp, tries a read lock after the write lock fails)."""
    msg = str(exc)
    pid = re.search(r"\(PID (\d+)\)|PID (\d+)", msg)
    who = f"another process (PID {pid.group(1) or pid.group(2)})" if pid else "another process"
    if "read-only mode" in msg:
        return LedgerLockedError(
            f"path: {shown} is open read-only in {who}; it can be read meanwhile with "
            "LedgerStore(path, read_only=True), and written once every reader has closed it")
    return LedgerLockedError(
        f"path: {shown} is open for writing in {who}; close that store or wait for it to finish, "
        "or open read-only with LedgerStore(path, read_only=True) once no process is writing")
