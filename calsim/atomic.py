"""Files written whole or not at all: a temporary file beside the target, then a rename.

Used for every file the CLI, the reports and the demo write, so a failure
(or a kill) never leaves a half-written output behind. ``os.replace`` is
atomic on POSIX and Windows when both names are in one directory.

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
>>> write_atomically(p, lambda tmp: pathlib.Path(tmp).write_text("done"))
>>> p.read_text()
'done'
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

from .errors import InputError

__all__ = ["write_atomically"]


def write_atomically(path: str | os.PathLike[str], write: Callable[[str], object], field: str = "--output") -> None:
    """Call ``write(tmp)`` for a temporary path beside ``path``, then rename it over ``path``.

    ``field`` names the argument in the error for a missing directory.
    """
    target = Path(path)
    if not target.parent.is_dir():
        raise InputError(f"{field}: directory {str(target.parent)!r} does not exist")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; the output is the user's, as `>` would make it
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
