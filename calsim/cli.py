"""The ``calsim`` command line.

Every error a user can cause prints one line on stderr and exits 2.

>>> from calsim.cli import main
>>> main(["resolve", "America/New_York", "2026-03-08T02:30", "--release", "2026f", "--gap", "shift"])
nominal_local        fold  due_utc               utc_offset_s  kind  notes
2026-03-08T02:30:00  0     2026-03-08T07:30:00Z  -14400        gap   dst_gap_shifted
0
"""

from __future__ import annotations

import argparse
import sys
from typing import get_args

import polars as pl

from . import __version__
from .errors import CalsimError
from .tzdb import fetch_release, release, releases
from .resolution import FoldPolicy, GapPolicy, resolve

__all__ = ["main"]


def _table(frame: pl.DataFrame) -> str:
    """A plain fixed-width table (no box drawing), readable in a terminal and in CI logs."""
    cols = frame.columns
    rows = [[_cell(v) for v in row] for row in frame.iter_rows()]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def _cell(v: object) -> str:
    import datetime as dt

    if v is None:
        return "-"
    if isinstance(v, dt.datetime):
        s = v.replace(tzinfo=None).isoformat(timespec="seconds")
        return s + "Z" if v.tzinfo is not None else s
    if isinstance(v, list):
        return ",".join(str(x) for x in v) or "-"
    return str(v)


def _cmd_releases(args: argparse.Namespace) -> int:
    rows = []
    for v in releases():
        r = release(v)
        rows.append({"version": v, "zones": len(r.zones), "source": r.source})
    for alias in ("installed", "system"):
        try:
            r = release(alias)
        except CalsimError:
            continue
        rows.append({"version": f"{alias} ({r.version})", "zones": len(r.zones), "source": r.source})
    print(_table(pl.DataFrame(rows)))
    return 0


def _cmd_resolve(args: argparse.Namespace) -> int:
    frame = resolve(args.times, args.zone, args.release, gap=args.gap, fold=args.fold)
    print(_table(frame))
    return 0


def _cmd_fetch(args: argparse.Namespace) -> int:
    r = fetch_release(args.version, force=args.force)
    print(f"{r.version}: {len(r.zones)} zones in {r.source}")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="calsim", description="When recurring schedules really fire.")
    p.add_argument("--version", action="version", version=f"calsim {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("releases", help="list the tz database releases usable offline")
    s.set_defaults(func=_cmd_releases)

    s = sub.add_parser("resolve", help="resolve local wall times in a zone to UTC")
    s.add_argument("zone", help="IANA zone, e.g. America/New_York")
    s.add_argument("times", nargs="+", help="naive ISO local times, e.g. 2026-03-08T02:30")
    s.add_argument("--release", default=None, help="version (2026f), installed, system or a path")
    s.add_argument("--gap", default="skip", choices=get_args(GapPolicy))
    s.add_argument("--fold", default="first", choices=get_args(FoldPolicy))
    s.set_defaults(func=_cmd_resolve)

    s = sub.add_parser("fetch", help="download a tzdata release into the user cache (pip)")
    s.add_argument("version", help="IANA version, e.g. 2024b")
    s.add_argument("--force", action="store_true", help="download even if available offline")
    s.set_defaults(func=_cmd_fetch)
    return p



def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 bad input)."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its one-line usage error
        return int(exc.code or 0)
    try:
        return int(args.func(args))
    except CalsimError as exc:
        print(f"calsim: error: {exc}", file=sys.stderr)
        return 2


def entry() -> None:  # pragma: no cover - console script
    sys.exit(main())
