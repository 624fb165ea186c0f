"""What the CLI prints or writes: a table, or csv/json/parquet to ``--output`` (whole or not at all) or stdout."""

from __future__ import annotations

import argparse
import sys

import polars as pl

from .cli_inputs import atomic_output
from .errors import InputError
from .text_table import durations_as_seconds, table

__all__ = ["emit", "output_options"]


def emit(frame: pl.DataFrame, args: argparse.Namespace, summary: str | None = None) -> None:
    """Print ``frame`` as a table (default) or write csv/json/parquet to ``--output`` or stdout.

    The one-line summary goes first on stdout with a table or a file, and to
    stderr when the data itself goes to stdout (so pipes get clean data).
    Spans of time: a table prints ``3d 12h``; csv and json carry float seconds
    in ``<name>_s`` (:func:`~calsim.text_table.durations_as_seconds`); parquet
    keeps polars Durations.
    """
    fmt = getattr(args, "format", "table")
    if fmt == "parquet":
        if not args.output:
            raise InputError("--output: required with --format parquet (a file path)")
        atomic_output(args.output, lambda p: frame.write_parquet(p))
    elif fmt in ("csv", "json"):
        data = durations_as_seconds(frame)
        flat = data.with_columns(pl.col(c).list.join(";") for c, t in data.schema.items() if t == pl.List(pl.String))
        writer = (lambda p: flat.write_csv(p)) if fmt == "csv" else (lambda p: data.write_json(p))
        if summary:
            print(summary, file=sys.stdout if args.output else sys.stderr)
        if args.output:
            atomic_output(args.output, writer)
        else:
            sys.stdout.write(flat.write_csv() if fmt == "csv" else data.write_json())
        return
    if summary:
        print(summary)
    if fmt == "table" and frame.height:
        print(table(frame.with_columns(pl.col(c).list.join(";") for c, t in frame.schema.items()
                                       if t == pl.List(pl.String))))


def output_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--format", default="table", choices=("table", "csv", "json", "parquet"))
    s.add_argument("--output", default=None, help="write csv/json/parquet to this file (atomically)")
