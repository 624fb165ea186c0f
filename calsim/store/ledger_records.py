"""What a ledger store records about each ledger: its scenario row, its schedule rows, its digest, its checks.

:class:`~calsim.store.LedgerStore` writes ledgers; this module says what goes
beside the occurrences: the ``scenarios`` row (horizon, releases, the
scenario's parameters as JSON, size, content digest), the ``schedules`` rows
(each revision's zone, account, rule and policy JSON), and the checks of a
name, a frame and its key before anything is published. The digest is the
identity of a ledger's content, so writing the same ledger twice changes
nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import cast

import numpy as np
import polars as pl

from ..errors import DuplicateKeyError, InputError, LedgerSchemaError
from ..simulation.scenario_records import parameters, schedule_rows
from ..simulation.scenario import Scenario
from ..times import MINUTE_US
from .migrations import SCHEMA_VERSION
from .schema import KEY, UTC

__all__ = ["SCENARIO_ROW", "SCHEDULE_ROW", "scenario_row", "schedules_frame", "digest", "digest_prefix", "comparable",
           "same_rows",
           "packed_keys", "repeats_a_key", "duplicate_error", "check_name", "check_scenario_name", "check_frame",
           "shown_name"]

MAX_NAME = 200

# Rows of the ``scenarios`` and ``schedules`` tables as polars frames (write and attach build them).
SCENARIO_ROW = pl.Schema({"name": pl.String(), "created": UTC, "horizon_start": UTC, "horizon_end": UTC,
                           "release": pl.String(), "parameters": pl.String(), "calsim_version": pl.String(),
                           "schema_version": pl.Int32(), "rows": pl.Int64(), "digest": pl.String()})
SCHEDULE_ROW = pl.Schema({"scenario": pl.String, "schedule_id": pl.String, "revision": pl.Int64, "zone": pl.String,
                           "account": pl.String, "rule": pl.String, "policy": pl.String})


def digest_prefix() -> str:
    """What a digest comparable with :func:`digest` starts with (row hashes are polars-version specific)."""
    return f"polars-{pl.__version__}/rows:"


#: The first layout whose ledgers have today's columns (version 5 added the worker-level ones).
COLUMNS_SINCE = 5


def comparable(stored: str, written_at: int) -> bool:
    """Whether a stored digest can be compared with :func:`digest` of a frame now.

    Not when another polars made it (row hashes differ between versions), nor
    when the ledger was written under a layout before :data:`COLUMNS_SINCE`
    (``written_at``: its ``scenarios.schema_version``): that digest covers
    fewer columns, so the same ledger read back now would look different.
    The writer then compares the rows themselves (:func:`same_rows`).

    >>> comparable(digest_prefix() + "00", 4), comparable(digest_prefix() + "00", COLUMNS_SINCE)
    (False, True)
    """
    return stored.startswith(digest_prefix()) and written_at >= COLUMNS_SINCE


def digest(frame: pl.DataFrame) -> str:
    """Content hash of a ledger frame: names, dtypes and its rows in any order.

    Row order is not content: a row is identified by its key, so the same rows
    written again in another order are the same ledger (DESIGN.md §6: "writing
    a ledger twice changes nothing"); the stored order stays the first write's.
    """
    h = hashlib.blake2b(digest_size=16)
    h.update(repr(list(frame.schema.items())).encode())
    h.update(np.sort(frame.hash_rows(seed=7).to_numpy()).tobytes())  # ~0.3 s for 10M rows
    return digest_prefix() + h.hexdigest()


def packed_keys(frame: pl.DataFrame) -> np.ndarray | None:
    """The key of each row (``scenario`` aside) packed into one int64, one-to-one with the key; None if it needs more.

    The fields, most significant first: schedule_id (its categorical code),
    revision, kind, fold and ``nominal_local``, each less its smallest value
    in the frame, in the bits its range takes. When that is over 63 bits,
    ``nominal_local`` is split into microseconds past the minute (0 for
    schedules on whole minutes) and minutes, as a ten-year horizon over
    100,000 schedules needs. A few vectorised passes: ~0.35 s of CPU for
    10.85M rows, half of it coding schedule_id (the sort adds 0.1 s).

    >>> import polars as pl
    >>> from calsim.simulation.ledger import LEDGER_SCHEMA
    >>> f = pl.DataFrame({"schedule_id": ["a", "b", "a"], "revision": [1, 1, 1],
    ...                   "nominal_local": [0, 0, 60_000_000], "fold": [0, 0, 0], "kind": ["scheduled"] * 3},
    ...                  schema={c: LEDGER_SCHEMA[c] for c in KEY[1:]})
    >>> k = packed_keys(f); len(set(k.tolist()))
    3
    """
    if frame.height == 0:
        return np.zeros(0, np.int64)
    codes = frame["schedule_id"].cast(pl.Categorical).to_physical()  # one code per distinct id
    fields = [codes, frame["revision"], frame["kind"].to_physical(), frame["fold"]]
    nominal = frame["nominal_local"].to_physical()
    # Integer columns, not empty: min and max are ints (polars types them as any literal).
    lo = [int(cast(int, f.min())) for f in fields]
    hi = [int(cast(int, f.max())) for f in fields]
    n_lo, n_hi = int(cast(int, nominal.min())), int(cast(int, nominal.max()))
    parts = [(f.to_numpy(), a, (b - a).bit_length()) for f, a, b in zip(fields, lo, hi)]
    width = sum(w for *_, w in parts)
    if width + (n_hi - n_lo).bit_length() <= 63:
        parts.append((nominal.to_numpy(), n_lo, (n_hi - n_lo).bit_length()))
    else:
        t0 = n_lo - n_lo % MINUTE_US  # the minute before the first time: past-minute parts are the wall clock's
        if t0 < -2**63 or n_hi - t0 >= 2**63:  # the microseconds since t0 would not fit an int64
            return None
        minute, past = np.divmod(nominal.to_numpy() - np.int64(t0), MINUTE_US)
        for values in (past, minute):
            a, b = int(values.min()), int(values.max())
            parts.append((values, a, (b - a).bit_length()))
    if sum(w for *_, w in parts) > 63:
        return None
    # In place, through one buffer: a fresh 80 MB temporary per step costs more than the arithmetic.
    key, buf = np.zeros(frame.height, np.uint64), np.empty(frame.height, np.uint64)
    shift = sum(w for *_, w in parts)
    for values, a, w in parts:
        shift -= w
        if w:  # the value less its minimum, modulo 2**64 (exact: it is below 2**w)
            np.copyto(buf, values, casting="unsafe")  # two's complement: a negative value wraps
            buf -= np.uint64(a % 2**64)
            buf <<= np.uint64(shift)
            key |= buf
    return key.view(np.int64)


def repeats_a_key(frame: pl.DataFrame) -> bool:
    """Whether two rows of a ledger frame share the key (the frame's ``scenario`` is one name, checked before).

    What the store checks before it publishes a ledger (see
    :mod:`.tables`): the packed keys sorted, neighbours compared;
    a frame whose key does not pack is hashed by polars (slower, same answer).

    >>> import calsim
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
    >>> f = calsim.simulate(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z"), progress=False).frame
    >>> repeats_a_key(f), repeats_a_key(pl.concat([f, f.tail(1)]))
    (False, True)
    """
    if frame.height < 2:
        return False
    key = packed_keys(frame)
    if key is None:
        return bool(frame.select(pl.struct(list(KEY[1:])).is_duplicated().any()).item())
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def same_rows(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    """Whether two ledger frames hold the same rows, in any order (for digests :func:`digest` cannot compare)."""
    key = list(KEY)
    return a.height == b.height and a.sort(key, maintain_order=True).equals(b.sort(key, maintain_order=True))


def scenario_row(name: str, frame: pl.DataFrame, scenario: object, content: str) -> pl.DataFrame:
    """The ``scenarios`` row of a ledger: horizon, releases, parameters, version, size and digest."""
    from .._version import __version__

    releases = sorted(frame["tzdata"].drop_nulls().unique().to_list())
    params = None if scenario is None else parameters(scenario)
    start, end = getattr(scenario, "start_us", None), getattr(scenario, "end_us", None)
    if start is None and frame.height:
        # As integers: a hostile frame's instants may lie past what a Python datetime holds.
        due = frame["due_utc"].dt.epoch("us")
        start, end = due.min(), due.max()
    horizon = pl.Series([start, end], dtype=pl.Int64).cast(UTC)
    return pl.DataFrame(
        {"name": [name], "created": [dt.datetime.now(dt.timezone.utc)], "horizon_start": horizon[:1],
         "horizon_end": horizon[1:], "release": [",".join(releases) or None],
         "parameters": [None if params is None else json.dumps(params, sort_keys=True)],
         "calsim_version": [__version__], "schema_version": [SCHEMA_VERSION], "rows": [frame.height],
         "digest": [content]},
        schema=SCENARIO_ROW,
    )


def schedules_frame(name: str, base: pl.DataFrame, ledger: object, scenario: object) -> pl.DataFrame:
    """The ``schedules`` rows of a written ledger, one per schedule revision.

    ``base`` holds the revisions the ledger's rows show (``schedule_id``,
    ``revision`` and the ``zone`` of its first row); a :class:`~calsim.Scenario`
    adds its own (``Revise`` events included, numbered as the engine numbers
    them) with their rule and policy, the rows a Dask dataset records
    (:func:`calsim.simulation.scenario_records.schedule_rows`). Without one, rule and
    policy are null. ``account`` is the ledger's ``accounts`` entry, else the
    scenario's.
    """
    rows = schedule_rows(scenario) if isinstance(scenario, Scenario) else []
    by_key = {(r["schedule_id"], r["revision"]): r for r in rows}
    accounts = {r["schedule_id"]: r["account"] for r in rows if r["account"]}
    accounts.update(getattr(ledger, "accounts", None) or {})  # the ledger's own record first
    base = base.select(pl.col("schedule_id").cast(pl.String), pl.col("revision").cast(pl.Int64),
                       pl.col("zone").cast(pl.String))
    given = pl.DataFrame([(r["schedule_id"], r["revision"], r["zone"]) for r in rows], schema=base.schema,
                         orient="row")
    base = pl.concat([base, given]).unique(["schedule_id", "revision"], keep="first").sort("schedule_id", "revision")
    ids, revs = base["schedule_id"].to_list(), base["revision"].to_list()
    found = [by_key.get(k, {}) for k in zip(ids, revs)]
    return pl.DataFrame(
        {"scenario": [name] * base.height, "schedule_id": ids, "revision": revs, "zone": base["zone"],
         "account": [accounts.get(i) for i in ids], "rule": [r.get("rule") for r in found],
         "policy": [r.get("policy") for r in found]},
        schema=SCHEDULE_ROW,
    )


def shown_name(name: object) -> str:
    """``repr`` of a name for a message, cut to 60 characters."""
    text = name if isinstance(name, str) else str(name)
    return repr(text[:60]) + ("..." if len(text) > 60 else "")


def check_name(name: object) -> None:
    """Refuse a scenario name that is empty, longer than 200 characters or holds a control character."""
    if not isinstance(name, str) or not name.strip():
        got = shown_name(name) if isinstance(name, str) else type(name).__name__
        raise InputError(f"name: expected a non-empty scenario name, got {got}")
    if len(name) > MAX_NAME:
        raise InputError(f"name: scenario name is {len(name)} characters long "
                         f"(allowed at most {MAX_NAME}): {name[:40]!r}...")
    if any(c < " " or c == "\x7f" for c in name):
        # Names are printed by `compare` and in CI logs: an escape sequence there rewrites the terminal.
        raise InputError(f"name: {shown_name(name)} holds a control character (allowed: printable text)")


check_scenario_name = check_name  # for a command that checks every name before it writes anything


def check_frame(frame: pl.DataFrame, schema: pl.Schema, what: str) -> None:
    """Refuse a frame (``what`` names it) whose columns or dtypes are not exactly ``schema``'s."""
    for col, dtype in schema.items():
        if col not in frame.columns:
            raise LedgerSchemaError(f"{what}: missing column {col!r} (expected {dtype})")
        if frame.schema[col] != dtype:
            raise LedgerSchemaError(f"{what}: column {col!r} has dtype {frame.schema[col]}, expected {dtype}")
    extra = [c for c in frame.columns if c not in schema]
    if extra:
        raise LedgerSchemaError(f"{what}: unexpected columns {extra} (allowed: {schema.names()})")


_PY_DATETIME_US = (-62_135_596_800_000_000, 253_402_300_799_999_999)  # datetime.min and .max in epoch microseconds


def duplicate_error(frame: pl.DataFrame, name: str) -> DuplicateKeyError:
    """The error for a ledger of ``name`` whose key repeats, naming the first repeated key of ``frame``."""
    dup = frame.filter(pl.struct(list(KEY)).is_duplicated())
    if dup.height:
        first = dup.head(1)
        us = first["nominal_local"].dt.epoch("us")[0]
        if not _PY_DATETIME_US[0] <= us <= _PY_DATETIME_US[1]:  # shown as a number: Python's datetime stops at 9999
            first = first.with_columns(pl.col("nominal_local").dt.epoch("us").cast(pl.String) + " us after 1970")
        row = first.row(0, named=True)
        key = ", ".join(f"{k}={row[k]!s}" for k in KEY[1:])
        return DuplicateKeyError(f"ledger: {dup.height} rows share a primary key in {name!r}, "
                                 f"e.g. ({key}); nothing written")
    return DuplicateKeyError(f"ledger: a row of {name!r} repeats a key already stored; nothing written")
