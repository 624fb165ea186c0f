"""``calsim sweep``: a scenario under every combination of ``--grid`` values, one row of measures each.

``calsim sweep scenario.toml --grid catchup=all,latest,skip --grid max_lateness=1h,6h,1d --db sweep.duckdb``
prints :func:`calsim.sweep`'s frame (``--format`` table, csv or json) and, with ``--db``, stores each
combination's ledger under the row's ``scenario`` name.
"""

from __future__ import annotations

import argparse

from .errors import InputError, shown

__all__ = ["sweep_command", "grid_option"]


def grid_option(text: str) -> tuple[str, list[object]]:
    """argparse type of ``--grid FIELD=V1,V2,...``: the field and its values (``none`` is None; whole numbers
    are ints, other numbers floats, ``true``/``false`` booleans; the rest, durations included, as written)."""
    field, sep, values = text.partition("=")
    field = field.strip()
    if not sep or not field or not values.strip():
        raise argparse.ArgumentTypeError(f"expected FIELD=V1,V2,... (e.g. catchup=all,latest), got {shown(text)}")
    return field, [_value(v.strip()) for v in values.split(",") if v.strip()]


def _value(text: str) -> object:
    low = text.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def sweep_command(args: argparse.Namespace) -> int:
    import polars as pl

    from .cli_ledgers import _scenario, check_db
    from .cli_output import emit, table
    from .simulation.sweep import sweep

    check_db(args.db)
    grid: dict[str, list[object]] = {}
    for field, values in args.grid:
        if field in grid:
            raise InputError(f"--grid: {field!r} given twice (give all its values once: {field}=a,b,c)")
        grid[field] = values
    (scenario,) = _scenario(args)
    result = sweep(scenario, grid, jobs=args.jobs, store=args.db)
    if args.format == "table":
        with pl.Config(fmt_str_lengths=60):
            print(table(result))
        if args.db:
            print(f"{result.height} ledger(s) written to {args.db}")
    else:
        emit(result, args, f"{result.height} combination(s)")
    return 0
