"""``calsim tzdiff``: which runs move between two tzdata releases, what matters first.

What an SRE needs before (or after) an upgrade comes first:

* **The window** starts early enough to show changes already in effect: by
  default from the earliest instant within the past year at which the two
  releases differ for a zone of the fleet (else today), to a year from today.
* **The summary line** leads with the earliest change; one that began before
  now says "already in effect since DATE": servers still on the old release
  have been running those jobs at the wrong instant since then.
* **One row per schedule** (:func:`calsim.tzdiff_summary`: the job's label,
  zone, first and last affected local dates, count, shifts, in effect since)
  with ``--summary``, and by default in a terminal when the occurrence rows
  would not fit a screen (a hint says how to list them: ``--occurrences``).
  ``--format`` writes whichever of the two is shown.
* The exit code gates CI: 1 with ``--fail-on-change`` when anything moves.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys

import polars as pl

from .cli_inputs import atomic_output, check_db, fleet, instant, now as cli_now
from .text_table import table
from .errors import InputError
from .tz.release import release

__all__ = ["run", "SCREEN_ROWS"]

SCREEN_ROWS = 40  # more occurrence rows than this: the terminal gets one row per schedule and a hint


def run(args: argparse.Namespace) -> int:
    from .tzchanges import tzdiff, tzdiff_summary

    check_db(args.db)
    if args.format == "parquet" and not args.output:
        raise InputError("--output: required with --format parquet (a file path)")
    if args.summary and args.occurrences:
        raise InputError("--summary: not with --occurrences (one row per schedule, or one per occurrence)")
    old, new = release(args.old), release(args.new)
    for spec in args.override or ():
        zone, sep, rest = spec.partition("@")
        at, sep2, posix = rest.partition("=")
        if not (sep and sep2 and zone and at and posix):
            raise InputError(f"--override: {spec!r} is not ZONE@INSTANT=POSIX_TZ "
                             "(e.g. 'Europe/Paris@2027-03-28T01:00Z=CET-1')")
        new = new.with_override(zone, at, posix)
    schedules = fleet(args.fleet, args)
    now = cli_now()
    start, end = _window(args, schedules, old, new, now)
    diff = tzdiff(schedules, old, new, start, end)
    summary_rows = tzdiff_summary(diff, schedules, now=now)
    line = _summary_line(diff, summary_rows, len(schedules), old.version, new.version, start, end)
    name = args.name or f"tzdiff {old.version}->{new.version} {start}..{end}"
    if args.db:
        _refuse_other_diff(args.db, name, diff, args.replace)
        line += f"; written to {args.db} as {name!r}"
    per_schedule = args.summary or (not args.occurrences and args.format == "table" and diff.height > SCREEN_ROWS)
    shown = _summary_table(summary_rows) if per_schedule else diff
    flat = shown.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join(";")
                              for c, t in shown.schema.items() if isinstance(t, pl.List))
    if args.format == "parquet":
        atomic_output(args.output, lambda p: shown.write_parquet(p))
        print(line)
    elif args.format in ("csv", "json"):
        writer = (lambda p: flat.write_csv(p)) if args.format == "csv" else (lambda p: shown.write_json(p))
        print(line, file=sys.stderr if not args.output else sys.stdout)
        if args.output:
            atomic_output(args.output, writer)
        else:
            sys.stdout.write(flat.write_csv() if args.format == "csv" else shown.write_json())
    else:
        print(line)
        if shown.height:
            print(table(flat))
        if per_schedule and not args.summary:
            print(f"(one row per schedule; --occurrences lists all {diff.height:,} occurrences, "
                  "--format csv writes them)")
    if args.db:  # last: a refused or failed output leaves the store as it was
        from .store import LedgerStore

        with LedgerStore(args.db) as store:
            store.write_tzdiff(name, diff, replace=args.replace)
    return 1 if (args.fail_on_change and diff.height) else 0


def _refuse_other_diff(db: str, name: str, diff: pl.DataFrame, replace: bool) -> None:
    """Refuse (read-only, before any output) when a different diff is stored under ``name``, unless ``--replace``."""
    import os

    from .errors import ScenarioExistsError
    from .store import LedgerStore

    if replace or db == ":memory:" or not os.path.exists(db):
        return
    with LedgerStore(db, read_only=True) as store:
        if name in store.sql("SELECT DISTINCT name FROM tz_diffs")["name"].to_list():
            old = store.tzdiff(name)
            cols = [c for c in diff.columns if c in old.columns]
            if not old.select(cols).equals(diff.select(cols)):
                raise ScenarioExistsError(f"--db: a different tz diff is already stored as {name!r} in {db}; "
                                          "pass --replace to replace it, or --name for another name")


def _window(args: argparse.Namespace, schedules: list, old, new, now: dt.datetime) -> tuple[str, str]:
    """``--from``/``--to``, by default from the earliest difference in the past year (else today) to a year ahead."""
    from .tzchanges import zone_changes

    fmt = "%Y-%m-%dT%H:%MZ"
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    start = args.start
    if start is None:
        start = today.strftime(fmt)
        zones = {s.zone for s in schedules}
        year_ago = today - dt.timedelta(days=365)
        changed = zone_changes(old, new, year_ago.strftime(fmt), today.strftime(fmt))
        changed = changed.filter(pl.col("zone").is_in(sorted(zones)) & (pl.col("kind") != "now_link"))
        if changed.height:
            first = changed["first_utc"].min()
            assert isinstance(first, dt.datetime)  # a Datetime column with rows
            start = first.replace(hour=0, minute=0, second=0, microsecond=0).strftime(fmt)
    end = args.end or (max(instant(start), today) + dt.timedelta(days=365)).strftime(fmt)
    if instant(end) <= instant(start):
        raise InputError(f"--to: {end!r} is not after --from {start!r}")
    return start, end


def _summary_line(diff: pl.DataFrame, rows: pl.DataFrame, n: int, old: str, new: str, start: str, end: str) -> str:
    head = f"between tzdata {old} and {new} in [{start}, {end})"
    if not diff.height:
        return f"0 of {n:,} schedules change {head}"
    first = rows.row(0, named=True)  # sorted by first affected instant
    mine = diff.filter(pl.col("schedule_id") == first["schedule_id"])
    # Say what most of its runs do (a 0 s fold change on the first day says little): the commonest shift.
    moves = mine.filter(pl.col("shift_s").fill_null(0) != 0)
    typical = (moves if moves.height else mine).group_by("change", "shift_s").len().sort(
        "len", "shift_s", descending=[True, False]).row(0, named=True)
    what = f"{typical['change']}, {typical['shift_s'] if typical['shift_s'] is not None else 'n/a'} s"
    since = first["in_effect_since"]
    when = mine.select(pl.min_horizontal("old_utc", "new_utc").min()).item()
    lead = (f"already in effect since {since:%Y-%m-%d} in {first['zone']} ({what}): servers on tzdata {old} have "
            "run these jobs at the wrong instant since then" if since is not None else
            f"first on {when:%Y-%m-%d} in {first['zone']} ({what})")
    in_effect = rows["in_effect_since"].is_not_null().sum()
    also = f"; {in_effect:,} schedule(s) already affected" if in_effect > 1 else ""
    return f"{rows.height:,} of {n:,} schedules change {head}: {diff.height:,} occurrences, {lead}{also}"


def _summary_table(rows: pl.DataFrame) -> pl.DataFrame:
    """The per-schedule rows as a reader wants them: dates, not timestamps; "already in effect" spelled out."""
    return rows.select(
        "schedule_id", "label", "zone",
        pl.col("first_affected").dt.date().alias("first_local_date"),
        pl.col("last_affected").dt.date().alias("last_local_date"),
        "occurrences", "shifts_s", "changes",
        pl.col("in_effect_since").dt.date().alias("already_in_effect_since"),
    )
