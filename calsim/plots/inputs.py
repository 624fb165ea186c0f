"""What the charts accept: ledgers and frames checked and normalised, and the tz release a ledger was run with.

A chart's ``ledgers`` argument takes a :class:`~calsim.Ledger`, a list or a
``{label: Ledger}`` dict of them, or a ledger frame (polars or pandas; split by
its ``scenario`` column). Every refusal is an :class:`~calsim.InputError`
naming the argument, what was given and what is allowed.

>>> import polars as pl
>>> frame = pl.DataFrame({"scenario": ["a", "b"], "schedule_id": ["x", "x"], "due_utc": [None, None],
...                       "started_utc": [None, None], "state": ["done", "skipped"], "kind": ["scheduled"] * 2})
>>> [led.name for led in ledgers(frame)]
['a', 'b']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeGuard

import numpy as np
import polars as pl

from ..errors import CalsimError, InputError, shown
from ..simulation.ledger import Ledger
from ..times import US
from ..tz.release import ReleaseLike, release as get_release

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["LEDGER_COLUMNS", "is_pandas", "frame", "ledgers", "int_arg", "seconds", "release_of", "wall_us"]

#: The columns every chart of ledgers needs (a frame may have more).
LEDGER_COLUMNS = ("schedule_id", "due_utc", "started_utc", "state", "kind")


def is_pandas(obj: object) -> TypeGuard[pd.DataFrame]:
    """Whether ``obj`` is a pandas frame (checked by module, so pandas is not imported to ask)."""
    return type(obj).__module__.split(".")[0] == "pandas" and hasattr(obj, "columns")


def frame(obj: object, arg: str, required: tuple[str, ...], what: str) -> pl.DataFrame:
    """``obj`` (a Ledger, a polars or pandas frame) as a polars frame holding ``required`` columns."""
    if isinstance(obj, Ledger):
        df = obj.frame
    elif isinstance(obj, pl.DataFrame):
        df = obj
    elif isinstance(obj, pl.LazyFrame):
        df = obj.collect()
    elif is_pandas(obj):
        df = pl.from_pandas(obj)
    else:
        raise InputError(f"{arg}: expected {what} (polars or pandas), got {type(obj).__name__} {shown(obj)}")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(f"{arg}: missing column(s) {', '.join(missing)} (a {what} needs {', '.join(required)}; "
                         f"got {', '.join(df.columns) or 'no columns'})")
    return df


def ledgers(obj: object, arg: str = "ledgers") -> list[Ledger]:
    """Normalise ``ledgers`` to labelled :class:`Ledger` objects (frames are wrapped; a dict's keys label them)."""
    what = "a Ledger, a list or dict of Ledgers, or a ledger frame"

    def one(item: object, label: str | None) -> list[Ledger]:
        if isinstance(item, Ledger):
            frame(item, arg, LEDGER_COLUMNS, "ledger frame")
            return [item] if label is None else [Ledger(label, item.frame, item.accounts, item.scenario)]
        if not (isinstance(item, (pl.DataFrame, pl.LazyFrame)) or is_pandas(item)):
            raise InputError(f"{arg}: expected {what}, got {type(item).__name__} {shown(item)}")
        df = frame(item, arg, LEDGER_COLUMNS, "ledger frame")
        if label is None and "scenario" in df.columns and df.height:
            return [Ledger(str(k[0]), part) for k, part in df.group_by("scenario", maintain_order=True)]
        return [Ledger(label or "ledger", df)]

    if isinstance(obj, Mapping):
        out = [led for k, v in obj.items() for led in one(v, str(k))]
    elif isinstance(obj, (list, tuple)):
        out = [led for v in obj for led in one(v, None)]
    else:
        out = one(obj, None)
    if not out:
        raise InputError(f"{arg}: expected at least one ledger ({what}), got an empty {type(obj).__name__}")
    seen: dict[str, int] = {}
    for i, led in enumerate(out):  # two ledgers of one name would share a legend entry
        n = seen[led.name] = seen.get(led.name, 0) + 1
        if n > 1:
            out[i] = Ledger(f"{led.name} ({n})", led.frame, led.accounts, led.scenario)
    return out


def int_arg(value: object, arg: str, low: int = 1) -> int:
    """``value`` if it is an integer of at least ``low`` (a bool is not), else an InputError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InputError(f"{arg}: {value!r} (allowed an integer >= {low})")
    return value


def seconds(s: pl.Series) -> np.ndarray:
    """Float seconds of a duration column, whether stored as seconds (``*_s``) or as a polars ``Duration``."""
    if isinstance(s.dtype, pl.Duration):
        s = s.dt.total_microseconds() / 1e6
    return s.cast(pl.Float64).to_numpy()


def release_of(led: Ledger, release: ReleaseLike = None):
    """The tz release ``led`` was simulated with: ``release`` if given, its scenario's, else the one its
    ``tzdata`` column names (the earliest occurrence's: a TzUpgrade changes later rows, not the budget's
    calendar). Local days are read from this release, never from polars' bundled tz database, so a
    what-if release moves the bins exactly as it moved the engine's budget periods.
    """
    if release is not None:
        return get_release(release)
    sc = led.scenario
    if sc is not None and hasattr(sc, "release") and hasattr(sc, "start_us"):
        return get_release(sc.release)
    f = led.frame
    names = f["tzdata"].drop_nulls() if "tzdata" in f.columns else pl.Series([], dtype=pl.String)
    if not len(names):
        raise InputError(f"release: ledger {led.name!r} is a frame without tzdata values or scenario; pass "
                         "release= (the tz release it was simulated with)")
    first = f["due_utc"].arg_min() if "due_utc" in f.columns else None
    version = f["tzdata"][first] if first is not None and f["tzdata"][first] is not None else names[0]
    try:
        return get_release(version)
    except CalsimError:
        raise InputError(f"release: ledger {led.name!r} was simulated with tzdata {shown(version)}, which is not "
                         "available offline (a what-if release lives in memory only); pass the Ledger returned by "
                         "calsim.simulate, or release=") from None


def wall_us(table, us: np.ndarray) -> np.ndarray:
    """Local wall-clock µs of UTC instants (µs) with a calsim zone table (the release's, not polars')."""
    us = np.asarray(us, dtype=np.int64)
    return us + table.offset_at_utc(us // US).astype(np.int64) * US
