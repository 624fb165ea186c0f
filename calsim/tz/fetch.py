"""Fetching a release: the PyPI ``tzdata`` wheel of an IANA version, downloaded with pip into the user cache.

Once fetched, a release is found offline like a shipped one
(:mod:`calsim.tz.locate` lists the cache). pip does the download, so a
mirror or an offline wheel folder works as it does for any package.

>>> pypi_version("2024b")
'2024.2'
"""

from __future__ import annotations

import subprocess
import sys

from ..errors import UnknownReleaseError
from .locate import cache_dir, offline_releases, wheel_versions
from .posix import cut
from .release import Release, release_at
from .sources import IANA_RE

__all__ = ["fetch_release", "pypi_version"]


def pypi_version(iana: str) -> str:
    """The PyPI ``tzdata`` version of an IANA version: ``2024b`` -> ``2024.2``.

    The tzdata package numbers releases ``YYYY.n`` with ``n`` the letter's
    position (a=1), as its ``__init__`` documents.
    """
    m = IANA_RE.match(iana) if isinstance(iana, str) else None
    if not m or len(iana) != 5:
        raise UnknownReleaseError(
            f"version: {cut(iana)} is not an IANA version of the form YYYYx (such as '2024b')"
        )
    return f"{iana[:4]}.{ord(iana[4]) - ord('a') + 1}"


def fetch_release(
    version: str, *, force: bool = False, index_url: str | None = None, find_links: str | None = None
) -> Release:
    """Download the ``tzdata`` wheel of an IANA version into the user cache with pip.

    A version already available offline is returned without any download
    (unless ``force``). Afterwards the release works offline: it is found by
    :func:`calsim.release` like a shipped one. ``index_url`` and ``find_links`` are
    passed to ``pip download`` (for mirrors and offline wheel folders).

    The cache is ``$CALSIM_CACHE`` if set, else the platform's user cache
    directory (``~/.cache/calsim/tzdata`` on Linux).
    """
    pypi_version(version)  # a version that is no IANA version (2024, None) is refused before anything is looked up
    if not force:
        path = offline_releases().get(version)
        if path is not None:
            return release_at(path)
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
    wheels = wheel_versions(target)
    if version not in wheels:
        raise UnknownReleaseError(
            f"release: pip downloaded tzdata=={pep440} but its data is not IANA {version} "
            f"(found {sorted(wheels)})"
        )
    return release_at(wheels[version])
