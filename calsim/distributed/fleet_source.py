"""Where a Dask run reads its schedules when the client does not hold them: a table, a fleet file, ``example:N``.

A fleet of a million schedules is a few gigabytes as Python objects; the
machine that submits a run should hold the plan, not the fleet. A
:class:`FleetSource` is that plan's input side: which file (or synthetic
fleet) and how it is cut into **chunks** a worker reads on its own (row
groups of a Parquet schedules table, :mod:`calsim.importers.schedule_table`;
ranges of a TOML fleet file's ``[[schedule]]`` tables; row ranges of
:func:`calsim.examples.fleet`). The client reads a table's footer, or counts
a fleet file's table headers line by line, and nothing else.

A schedule goes to the partition of its **coupling key**: the budgeted
account it pays from, else the capacity pool it takes slots of, else the
rate-limit bucket it names, else its id; keys that one schedule joins (an
account and a bucket, say) are one key
(:func:`joined`, a union-find the client runs over the few pairs the workers
report), and a key's partition is a stable hash of it (blake2b), so every
worker sends a schedule to the same partition without asking anyone.

>>> src = fleet_source("example:1000:7", chunk_rows=400)
>>> src.chunks, src.rows
(((0, 400), (400, 800), (800, 1000)), 1000)
>>> [s.id for s in read_chunk(src, 2)][:2]
['tenant-004/job-00800', 'tenant-002/job-00801']
>>> partition_of(("account", "tenant-a"), 8) == partition_of(("account", "tenant-a"), 8)
True
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass

from ..errors import InputError, shown
from ..simulation.couplings import coupling_keys, joined  # noqa: F401 (the partition rule's parts, here too)

__all__ = ["FleetSource", "fleet_source", "read_chunk", "coupling_keys", "joined", "partition_of", "CHUNK_ROWS"]

#: Schedules a chunk holds (about: a table's chunk is whole row groups): what one worker builds at a time.
CHUNK_ROWS = 50_000


@dataclass(frozen=True)
class FleetSource:
    """A fleet the workers read: ``kind`` ``"table"`` (``path``, chunks of row groups), ``"fleet"`` (a fleet
    file at ``path``, chunks of its tables ``(lo, hi)``) or ``"example"`` (``n``, ``seed``, chunks of row ranges
    ``(lo, hi)``); ``rows`` schedules in all."""

    kind: str
    path: str | None
    n: int
    seed: int
    chunks: tuple[tuple[int, ...], ...]
    rows: int

    def __str__(self) -> str:
        return f"example:{self.n}:{self.seed}" if self.kind == "example" else str(self.path)


def fleet_source(spec: object, *, chunk_rows: int = CHUNK_ROWS) -> FleetSource:
    """The :class:`FleetSource` of ``spec``: ``"example:N[:SEED]"``, the path of a Parquet schedules table
    (:func:`calsim.write_schedules`; only its footer is read) or of a TOML fleet file (its ``[[schedule]]``
    headers counted line by line; each worker parses it and builds its share). Errors name ``schedules``."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str) or not spec:
        raise InputError(f"schedules: expected the path of a schedules table (Parquet) or 'example:N[:SEED]', "
                         f"got {shown(spec)}")
    if spec.startswith("example:"):
        from ..examples import MAX_FLEET

        parts = spec.split(":")[1:]
        try:
            n, seed = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
            if len(parts) > 2 or not 0 <= n <= MAX_FLEET or seed < 0:
                raise ValueError
        except ValueError:
            raise InputError(f"schedules: {spec!r} is not 'example:N' or 'example:N:SEED' (N from 0 to "
                             f"{MAX_FLEET:,})") from None
        cuts = tuple((lo, min(n, lo + chunk_rows)) for lo in range(0, n, chunk_rows))
        return FleetSource("example", None, n, seed, cuts, n)
    from ..importers.schedule_table import is_table, row_groups

    path = os.path.abspath(spec)  # (the workers' working directory is not ours)
    if not is_table(path):
        tables = _fleet_tables(path)
        if tables is None:
            raise InputError(f"schedules: {spec!r} is neither a Parquet schedules table (calsim.write_schedules "
                             "writes one) nor a fleet file of [[schedule]] tables")
        cuts = tuple((lo, min(tables, lo + chunk_rows)) for lo in range(0, tables, chunk_rows))
        return FleetSource("fleet", path, tables, 0, cuts, tables)
    sizes = row_groups(path)
    chunks: list[tuple[int, ...]] = []
    current: list[int] = []
    held = 0
    for g, rows in enumerate(sizes):
        current.append(g)
        held += rows
        if held >= chunk_rows:
            chunks.append(tuple(current))
            current, held = [], 0
    if current:
        chunks.append(tuple(current))
    return FleetSource("table", path, 0, 0, tuple(chunks), sum(sizes))




def _fleet_tables(path: str) -> int | None:
    """How many ``[[schedule]]`` tables the fleet file at ``path`` holds, counted line by line (the client never
    parses it: a worker parses it and checks the count); None when it is no fleet file."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # (a FIFO would block the open for ever)
            raise InputError(f"schedules: {path!r} is not a regular file (a schedules table or a fleet file)")
        from ..importers.fleet import header

        pattern = header("schedule")
        with open(path, encoding="utf-8", errors="replace") as f:
            n = sum(1 for line in f if pattern.match(line))
    except OSError as exc:
        raise InputError(f"schedules: cannot read {path!r} ({exc.strerror or type(exc).__name__})") from None
    return n or None


def read_chunk(source: FleetSource, c: int) -> list:
    """The schedules of chunk ``c`` (on a worker), in the fleet's order; a bad row is an error naming it."""
    if source.kind == "example":
        from ..examples import fleet

        lo, hi = source.chunks[c]
        return fleet(source.n, source.seed, rows=range(lo, hi))
    if source.kind == "fleet":
        from ..importers.fleet import read_rows

        assert source.path is not None
        lo, hi = source.chunks[c]
        return read_rows(source.path, range(lo, hi), source.rows)
    from ..importers.schedule_table import read

    assert source.path is not None
    return list(read(source.path, groups=list(source.chunks[c]), strict=True))


def partition_of(key: tuple[str, str], partitions: int) -> int:
    """The partition of a coupling key (or ``("id", schedule id)``): a stable hash, the same on every machine."""
    h = hashlib.blake2b(f"{key[0]}\0{key[1]}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") % partitions
