"""Schedulers' real code as test oracles: build once into a cache, pin the tz release, talk over a pipe.

The oracle modules that drive a real scheduler (``robfig.py``: robfig/cron v3
in Go; ``quartz_jar.py``: Quartz's jar in Java; ``systemd.py``:
``systemd-analyze``) share what is here:

* :func:`cache_dir`: where a small program is built once per source and
  toolchain (``$CALSIM_ORACLE_CACHE``, else ``~/.cache/calsim/oracles``);
* :func:`zoneinfo_dir`: a compiled zoneinfo directory of one of calsim's
  releases, so the real code reads exactly the zone data calsim is given
  (Go's ``ZONEINFO``, glibc's ``TZ=:<file>``);
* :func:`unavailable`: a missing toolchain or package skips with the allowed
  ``not applicable here:`` reason, except under ``CALSIM_REQUIRE_ORACLES=1``
  (``.ci/run`` sets it after installing them), where it fails;
* :class:`LineProcess`: one long-lived process answering a JSON line per
  JSON line, so a grid of thousands of questions costs one start-up.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import subprocess
from pathlib import Path

import pytest

REQUIRE_ENV = "CALSIM_REQUIRE_ORACLES"


def cache_dir(name: str, *key_parts: str | bytes) -> Path:
    """A directory for one build of oracle ``name``, keyed by everything that goes into it."""
    h = hashlib.blake2b(digest_size=10)
    for part in key_parts:
        h.update(part if isinstance(part, bytes) else part.encode())
        h.update(b"\0")
    root = Path(os.environ.get("CALSIM_ORACLE_CACHE") or Path.home() / ".cache" / "calsim" / "oracles")
    d = root / f"{name}-{h.hexdigest()}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def unavailable(what: str, install: str) -> None:
    """Skip (or, under ``CALSIM_REQUIRE_ORACLES=1``, fail) because ``what`` is not on this machine."""
    message = f"not applicable here: {what} is not installed ({install})"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(message.replace("not applicable here: ", "") + f"; {REQUIRE_ENV}=1 requires it")
    pytest.skip(message)


def require(*commands: str, install: str) -> None:
    """:func:`unavailable` unless every command is on the PATH."""
    missing = [c for c in commands if shutil.which(c) is None]
    if missing:
        unavailable(" and ".join(missing), install)


def zoneinfo_dir(version: str) -> Path:
    """calsim's release ``version`` as a compiled zoneinfo directory (TZif files and ``tzdata.zi``'s version)."""
    import calsim

    rel = calsim.release(version)
    d = cache_dir("zoneinfo", rel.version)
    done = d / ".complete"
    if not done.exists():
        for zone in rel.zones:
            path = d / zone
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(rel.tzif(zone))
        (d / "+VERSION").write_text(rel.version + "\n")
        done.write_text(rel.version)
    return d


class Hung(RuntimeError):
    """The real code gave no answer: its walk loops (see :meth:`LineProcess.ask`)."""


class LineProcess:
    """A child answering one JSON line per JSON request line (see the oracles' own protocols)."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None):
        self.argv, self.env = argv, env
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                                     env={**os.environ, **(env or {})})

    def ask(self, request: dict, hang_after: float = 300.0) -> dict:
        """The answer to ``request``; :class:`Hung` if none comes within ``hang_after`` seconds.

        Only a hang guard (a real scheduler's walk can loop for ever: robfig's ``Next`` near some DST
        changes), never a speed check: the child is killed and restarted on the next request.
        """
        if self.proc.poll() is not None:
            self.__init__(self.argv, self.env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], hang_after)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            raise Hung(f"{self.argv[0]} gave no answer to {json.dumps(request)[:200]} in {hang_after:g} s")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.argv[0]} ended without answering {request!r}")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
