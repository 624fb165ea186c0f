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
from .errors import CalsimError, InputError
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


def _fleet(spec: str):
    """``example:N[:SEED]`` (examples.fleet) or a TOML fleet file."""
    from .examples import fleet
    from .fleetfile import load

    if spec.startswith("example:"):
        parts = spec.split(":")
        try:
            n = int(parts[1])
            seed = int(parts[2]) if len(parts) > 2 else 0
        except (ValueError, IndexError):
            raise InputError(f"fleet: {spec!r} is not 'example:N' or 'example:N:SEED'") from None
        return fleet(n, seed)
    return load(spec)


def _window(args: argparse.Namespace) -> tuple[str, str]:
    """The --from/--to window; by default the next 365 days from today's UTC midnight (printed)."""
    import datetime as dt

    today = dt.datetime.now(dt.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    start = args.start or today.strftime("%Y-%m-%dT%H:%MZ")
    end = args.end or (instant(start) + dt.timedelta(days=365)).strftime("%Y-%m-%dT%H:%MZ")
    if instant(end) <= instant(start):
        raise InputError(f"--to: {end!r} is not after --from {start!r}")
    return start, end


def instant(text: str):
    import datetime as dt

    from .times import instant_us

    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=instant_us(text, "--from/--to"))


def _cmd_tzdiff(args: argparse.Namespace) -> int:
    from .tzchanges import tzdiff

    old, new = release(args.old), release(args.new)
    for spec in args.override or ():
        zone, sep, rest = spec.partition("@")
        at, sep2, posix = rest.partition("=")
        if not (sep and sep2 and zone and at and posix):
            raise InputError(f"--override: {spec!r} is not ZONE@INSTANT=POSIX_TZ (e.g. 'Europe/Paris@2027-03-28T01:00Z=CET-1')")
        new = new.with_override(zone, at, posix)
    schedules = _fleet(args.fleet)
    start, end = _window(args)
    diff = tzdiff(schedules, old, new, start, end)
    n_sched = diff["schedule_id"].n_unique()
    if diff.height:
        first = diff.sort("old_utc", nulls_last=True).row(0, named=True)
        when = (first["old_utc"] or first["new_utc"]).strftime("%Y-%m-%d")
        summary = (
            f"{n_sched:,} of {len(schedules):,} schedules change between tzdata {old.version} and {new.version} "
            f"in [{start}, {end}): {diff.height:,} occurrences, first on {when} in {first['zone']} "
            f"({first['change']}, {first['shift_s'] if first['shift_s'] is not None else 'n/a'} s)"
        )
    else:
        summary = (f"0 of {len(schedules):,} schedules change between tzdata {old.version} and {new.version} "
                   f"in [{start}, {end})")
    if args.db:
        from .store import LedgerStore

        name = args.name or f"tzdiff {old.version}->{new.version} {start}..{end}"
        with LedgerStore(args.db) as store:
            store.write_tzdiff(name, diff, replace=True)
        summary += f"; written to {args.db} as {name!r}"
    out = diff.with_columns(pl.col("old_notes", "new_notes").list.join(";"))
    if args.format == "parquet":
        if not args.output:
            raise InputError("--output: required with --format parquet (a file path)")
        _atomic_write(args.output, lambda p: diff.write_parquet(p))
        print(summary)
    elif args.format in ("csv", "json"):
        writer = (lambda p: out.write_csv(p)) if args.format == "csv" else (lambda p: diff.write_json(p))
        print(summary, file=sys.stderr if not args.output else sys.stdout)
        if args.output:
            _atomic_write(args.output, writer)
        else:
            sys.stdout.write(out.write_csv() if args.format == "csv" else diff.write_json())
    else:
        print(summary)
        if diff.height:
            print(_table(out))
    return 1 if (args.fail_on_change and diff.height) else 0


def _atomic_write(path: str, write) -> None:
    """Write to a temporary file beside ``path`` and rename: a failure leaves nothing half-written."""
    import os
    import tempfile
    from pathlib import Path

    target = Path(path)
    if not target.parent.is_dir():
        raise InputError(f"--output: directory {str(target.parent)!r} does not exist")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


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

    s = sub.add_parser(
        "tzdiff",
        help="which scheduled runs move between two tzdata releases (a CI gate with --fail-on-change)",
        description="Exit 0 when nothing moves, 1 with --fail-on-change when something does, 2 on bad input.",
    )
    s.add_argument("fleet", help="a TOML fleet file, or example:N[:SEED]")
    s.add_argument("--old", required=True, help="release: version (2025b), wheel, zoneinfo dir, installed, system")
    s.add_argument("--new", required=True, help="release, as --old")
    s.add_argument("--from", dest="start", default=None, help="window start (instant); default today 00:00Z")
    s.add_argument("--to", dest="end", default=None, help="window end (instant); default 365 days after --from")
    s.add_argument("--format", default="table", choices=("table", "csv", "json", "parquet"))
    s.add_argument("--output", default=None, help="write csv/json/parquet to this file (atomically)")
    s.add_argument("--fail-on-change", action="store_true", help="exit 1 when any occurrence moves")
    s.add_argument("--db", default=None, help="also store the diff in this ledger store (DuckDB file), table tz_diffs")
    s.add_argument("--name", default=None, help="the name to store the diff under (with --db)")
    s.add_argument("--override", action="append", metavar="ZONE@INSTANT=POSIX_TZ",
                   help="what-if: in --new, ZONE follows POSIX_TZ from INSTANT (repeatable)")
    s.set_defaults(func=_cmd_tzdiff)

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
    except BrokenPipeError:  # output piped into `head`: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def entry() -> None:  # pragma: no cover - console script
    sys.exit(main())
