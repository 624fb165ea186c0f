"""How the ledger's views present values: spans rounded to what they mean, ids in natural order.

Defined here, below :mod:`.views` (which re-exports every public name), and
used by the views, the ledger store's ``compare`` and the charts alike, so a
table, a comparison and a chart legend round and sort the same way.

* Spans (lateness, waits, gaps) become ``pl.Duration("us")`` rounded to a
  *resolution*: whole seconds, or a scenario's tick when that is shorter
  (:func:`resolution_of`), half away from zero, exact in integers. The
  ledger frame's float seconds (``lateness_s``...) are never rounded.
* Ids sort *naturally* (:func:`natural_key`): digit runs compare as numbers,
  so ``crontab:6`` comes before ``crontab:10``.
"""

from __future__ import annotations

import polars as pl

from ..durations import duration_us

__all__ = ["seconds_to_duration", "round_duration", "resolution_of", "natural_key", "natural_sort_key", "US",
           "SECOND_US"]

US = pl.Duration("us")
SECOND_US = 1_000_000
#: Digits a run of digits is padded to in a natural sort key (int64's 19, and one more).
_NATURAL_WIDTH = 20


def resolution_us(resolution: object) -> int:
    return SECOND_US if resolution is None else duration_us(resolution, "resolution")


def round_us(us: pl.Expr, step_us: int) -> pl.Expr:
    """Integer microseconds rounded to a multiple of ``step_us``, half away from zero (exact in integers)."""
    if step_us <= 1:
        return us
    half = step_us // 2
    return (pl.when(us >= 0).then((us + half) // step_us)
            .otherwise(-((-us + half) // step_us)) * step_us)


def seconds_to_duration(expr: pl.Expr, resolution: object = "1s") -> pl.Expr:
    """Float seconds as ``Duration("us")``, rounded to ``resolution`` (default whole seconds; half away from zero).

    Exact in integers: the seconds become whole microseconds first
    (``lateness_s`` is an integral number of microseconds divided by 1e6, so
    that gives the integer back exactly), then the nearest multiple of
    ``resolution`` (a duration: ``"1s"``, ``"250ms"``, a ``timedelta``;
    ``"1us"`` keeps every microsecond). The ledger store's ``compare`` uses
    it too, so its spans equal :meth:`Ledger.summary <calsim.Ledger.summary>`'s.

    >>> pl.select(seconds_to_duration(pl.lit(1.5))).item(), pl.select(seconds_to_duration(pl.lit(7473.913043))).item()
    (datetime.timedelta(seconds=2), datetime.timedelta(seconds=7474))
    >>> pl.select(seconds_to_duration(pl.lit(1.5), "1us")).item()
    datetime.timedelta(seconds=1, microseconds=500000)
    """
    return to_duration(expr, resolution_us(resolution))


def to_duration(seconds: pl.Expr, step_us: int) -> pl.Expr:
    return round_us((seconds * 1_000_000).round().cast(pl.Int64), step_us).cast(US)


def round_duration(expr: pl.Expr, resolution: object = "1s") -> pl.Expr:
    """A ``Duration`` expression rounded to ``resolution`` as :func:`seconds_to_duration` rounds seconds."""
    return round_us(expr.dt.total_microseconds(), resolution_us(resolution)).cast(US)


def resolution_of(scenario: object) -> int:
    """What a scenario's spans are rounded to, in µs: a second, or its tick when that is shorter.

    A run starts on a tick, so a span finer than the tick says nothing; a
    tick of a minute or an hour still keeps the seconds (a jittered run is
    eligible at any second, and its lateness is not a whole number of ticks).
    None (no scenario: a frame read back from a store or a dataset): a second.
    """
    tick = getattr(scenario, "tick_us", None)
    return min(SECOND_US, tick) if isinstance(tick, int) and tick > 0 else SECOND_US


def natural_key(expr: pl.Expr) -> pl.Expr:
    """A string sort key in which runs of digits compare as numbers: ``crontab:6`` before ``crontab:10``.

    Each run of digits is left-padded with zeros to 20 characters, so it
    compares as a number with another one and as a digit with anything else
    (as in the plain order). Sort by the key, then by the value itself, for
    a total order (``job-7`` and ``job-007`` share a key).

    >>> df = pl.DataFrame({"id": ["crontab:10", "crontab:6", "crontab:6b", "a", "crontab:100"]})
    >>> df.sort(natural_key(pl.col("id")), "id")["id"].to_list()
    ['a', 'crontab:6', 'crontab:6b', 'crontab:10', 'crontab:100']
    """
    digits = pl.element().str.contains(r"^\d")
    return (expr.cast(pl.String).str.extract_all(r"\d+|\D+")
            .list.eval(pl.when(digits).then(pl.element().str.zfill(_NATURAL_WIDTH)).otherwise(pl.element()))
            .list.join(""))


def natural_sort_key(value: object) -> tuple[str, str]:
    """:func:`natural_key` for one Python value (``sorted(ids, key=natural_sort_key)``).

    >>> sorted(["crontab:10", "crontab:6", "crontab:9"], key=natural_sort_key)
    ['crontab:6', 'crontab:9', 'crontab:10']
    """
    import re

    text = str(value)
    return re.sub(r"\d+", lambda m: m.group().zfill(_NATURAL_WIDTH), text), text
