"""Files written whole or not at all, and never over something that is not a file.

Used for every file the CLI, the reports, the demo and the store's exports
write. :func:`write_atomically` writes a temporary file beside the target and
renames it over the target (``os.replace`` is atomic on POSIX and Windows
within one directory), so a failure or a kill never leaves a half-written
output and the previous file stays whole until the new one is complete.

What may be replaced is a regular file, and nothing else: a device
(``/dev/null``), a FIFO, a socket or a directory is refused, since a rename
would put a file where the device or pipe was (and ``--output /dev/stdout``
would swap the terminal's name for a file). A symlink is never replaced: a
link to a regular file is followed and the file it names is replaced (the
link stays a link), any other link is refused. A file whose owner removed
every write bit is refused too (a rename would bypass that protection).
Every refusal and every OS failure (a directory that is not writable, a
read-only file system, a full disk, a name too long) is one
:class:`~calsim.errors.InputError` line naming the argument, the path and
the cause; the temporary file is always removed and the target untouched.
:func:`check_writable` makes the same checks without writing, so a command
can refuse a bad output before doing any work.

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
>>> write_atomically(p, lambda tmp: pathlib.Path(tmp).write_text("done"))
>>> p.read_text()
'done'
>>> try:
...     check_writable("/dev/null", "--output")
... except InputError as exc:
...     print(exc)
--output: '/dev/null' is a character device, not a regular file; give the path of a file to write
"""

from __future__ import annotations

import errno as _errno
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Callable

from .errors import InputError

__all__ = ["write_atomically", "check_writable", "show_path", "os_error_cause"]

SHOWN_PATH = 100  # characters of a path quoted in a message (the tail: it holds the file name)
_RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)")  # how Rust's io::Error (polars) shows an errno


def show_path(path: object) -> str:
    """``repr`` of a path for a message, cut to its last :data:`SHOWN_PATH` characters.

    >>> show_path("/tmp/" + "x" * 200)[:8]
    "'...xxxx"
    """
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    if len(text) > SHOWN_PATH:
        text = "..." + text[-(SHOWN_PATH - 3):]
    return repr(text)


def os_error_cause(exc: BaseException) -> str | None:
    """The OS's words for the errno behind ``exc`` (an ``OSError``, or a polars error that wraps one), else None.

    >>> os_error_cause(OSError(28, "whatever"))
    'No space left on device'
    >>> os_error_cause(RuntimeError("parquet: underlying IO error: No space left on device (os error 28)"))
    'No space left on device'
    """
    code = getattr(exc, "errno", None) if isinstance(exc, OSError) else None
    if code is None:
        found = _RUST_OS_ERROR.search(str(exc)[:2000])
        code = int(found.group(1)) if found else None
    if code is None:
        return str(exc).splitlines()[0][:200] if isinstance(exc, OSError) and str(exc) else None
    return os.strerror(code)


def _kind(mode: int) -> str:
    return ("a directory" if stat.S_ISDIR(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a symlink" if stat.S_ISLNK(mode)
            else "not a regular file")


def _text(path: object, field: str) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"{field}: expected a file path, got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str):
        raise InputError(f"{field}: expected a text file path, got {type(text).__name__}")
    if not text:
        raise InputError(f"{field}: expected a file path, got an empty string")
    if "\x00" in text:
        raise InputError(f"{field}: {show_path(text)} holds a NUL character, which no file name can")
    if text.endswith(("/", os.sep)):
        raise InputError(f"{field}: {show_path(text)} names a directory; give the path of a file to write")
    return text


def _failed(field: str, path: object, exc: BaseException, doing: str = "cannot write") -> InputError:
    return InputError(f"{field}: {doing} {show_path(path)}: {os_error_cause(exc) or type(exc).__name__}")


def check_writable(path: str | os.PathLike[str], field: str = "--output") -> Path:
    """Refuse ``path`` as an output file unless writing it is safe; return the file that would be written.

    That is ``path`` itself, or for a symlink to a regular file the file it
    names. Refused (:class:`InputError`, nothing is written): anything but a
    regular file, a symlink to anything but a regular file, a file without
    write bits, a missing directory or one this process cannot write to (a
    read-only file system included), a name the OS finds too long.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> check_writable(d, "--out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    calsim.errors.InputError: --out: '...' is a directory, not a regular file; give the path of a file to write
    """
    text = _text(path, field)
    target = Path(text)
    try:
        st: os.stat_result | None = os.lstat(target)
    except FileNotFoundError:
        st = None  # a new file: only its directory matters
    except OSError as exc:  # ENAMETOOLONG, ENOTDIR (a parent is a file), ELOOP, EACCES
        raise _failed(field, text, exc) from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        # Never replace the link itself: follow it to a regular file or refuse.
        try:
            real = Path(os.path.realpath(target, strict=True))
            st = os.stat(real)
        except OSError as exc:
            raise InputError(f"{field}: {show_path(text)} is a symlink to a missing or unreachable path "
                             f"({os_error_cause(exc)}); give the path of a file to write") from None
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{field}: {show_path(text)} is a symlink to {_kind(st.st_mode)}, not to a regular file; "
                             "give the path of a file to write")
        target = real
    elif st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(f"{field}: {show_path(text)} is {_kind(st.st_mode)}, not a regular file; "
                         "give the path of a file to write")
    if st is not None and not st.st_mode & 0o222:
        raise InputError(f"{field}: {show_path(text)} is read-only (mode {stat.S_IMODE(st.st_mode):04o}); "
                         "calsim does not replace a file its owner protected: make it writable or choose another path")
    parent = target.parent
    try:
        pst = os.stat(parent)
    except FileNotFoundError:
        raise InputError(f"{field}: directory {show_path(parent)} does not exist") from None
    except OSError as exc:
        raise _failed(field, parent, exc, "cannot use directory") from None
    if not stat.S_ISDIR(pst.st_mode):
        raise InputError(f"{field}: {show_path(parent)} is {_kind(pst.st_mode)}, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        try:
            readonly = bool(os.statvfs(parent).f_flag & os.ST_RDONLY)
        except (OSError, AttributeError):
            readonly = False
        cause = os.strerror(_errno.EROFS if readonly else _errno.EACCES)
        raise InputError(f"{field}: cannot write in directory {show_path(parent)}: {cause}")
    return target


def _about_tmp(exc: Exception, tmp: str) -> bool:
    """Whether ``exc`` is the OS failing to write ``tmp`` (not, say, a missing input file the writer read)."""
    if isinstance(exc, OSError):
        return exc.filename is None or os.fspath(exc.filename) == tmp
    return bool(_RUST_OS_ERROR.search(str(exc)[:2000]))  # polars: "... IO error: ... (os error 28)"


def _temp_name(target: Path) -> str:
    # ".<name>.<random>.tmp", the name cut so that the whole stays within the
    # usual 255-byte limit for a target whose own name is close to it.
    stem = os.fsencode(target.name)[:200].decode(errors="ignore")
    return f".{stem}.{secrets.token_hex(6)}.tmp"


def write_atomically(path: str | os.PathLike[str], write: Callable[[str], object], field: str = "--output") -> None:
    """Call ``write(tmp)`` for a new temporary file beside the target, then rename it over the target.

    The target is checked as by :func:`check_writable` (for a symlink to a
    regular file, the file it names is replaced and the link kept). A new file
    gets the mode ``>`` would give it (0666 less the umask); a replaced file
    keeps its permission bits. An ``OSError`` (or a polars error wrapping one)
    from ``write`` or the OS becomes an :class:`InputError` naming ``field``,
    the path and the cause; any other exception (``KeyboardInterrupt``
    included) is raised as it is. Either way the temporary file is removed
    and the target is as it was.
    """
    target = check_writable(path, field)
    tmp = str(target.parent / _temp_name(target))
    try:
        # O_EXCL|O_NOFOLLOW: a fresh file of ours, never one planted under that name;
        # mode 0666 lets the kernel apply the umask (no process-wide umask toggling).
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o666)
        os.close(fd)
    except OSError as exc:
        raise _failed(field, path, exc) from None
    try:
        try:
            write(tmp)
        except Exception as exc:
            if not _about_tmp(exc, tmp):
                raise  # not the file system failing this write: the caller's error, as it was
            raise _failed(field, path, exc) from None
        try:
            fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                os.fsync(fd)  # the data is on disk before the name points to it
            finally:
                os.close(fd)
            check_writable(path, field)  # still a regular file (or absent) just before the rename
            try:
                os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode) & 0o777)
            except FileNotFoundError:
                pass
            os.replace(tmp, target)
        except OSError as exc:
            raise _failed(field, path, exc) from None
        _sync_directory(target.parent)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        except OSError:  # pragma: no cover - e.g. the directory became read-only meanwhile
            pass


def _sync_directory(directory: Path) -> None:
    """Persist the rename itself (best effort: not every platform opens directories)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
