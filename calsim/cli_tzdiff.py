"""``calsim tzdiff``: which runs move between two tzdata releases, what matters first, and what to do.

What an SRE needs before (or after) an upgrade comes first:

* **The window** starts early enough to show changes already in effect: by
  default from the earliest instant within the past year at which the two
  releases differ for a zone of the fleet (else today), to a year from today.
* **The summary line** leads with the earliest change; one that began before
  now says "already in effect since DATE in ZONE": servers still on the old
  release have been running those jobs at the wrong instant since then. A
  change that began before an explicit ``--from`` is dated by looking back
  up to a year (:func:`calsim.tzgate.upgrade_check`). The line ends with
  what to do ("upgrade to 2026f now, ..." or "... before DATE in ZONE") and
  the gate's verdict. Dates are local dates in the zone named beside them.
* **One row per schedule** (:func:`calsim.tzdiff_summary`: the job's label,
  zone, first and last affected local dates, count, shifts, in effect since,
  the shifts in words) with ``--summary``, and by default in a terminal when
  the occurrence rows would not fit a screen (a hint says how to list them:
  ``--occurrences``). Occurrence rows carry ``local_shift_s`` and ``shift``
  (words: "1 h earlier in UTC, same local time") after ``shift_s``.
  ``--format`` writes whichever of the two is shown; ``--format json`` writes
  ``{"summary": {...}, "rows": [...]}`` (the summary is
  :meth:`UpgradeCheck.summary <calsim.tzgate.UpgradeCheck.summary>`), and
  ``--summary-json FILE`` writes the same summary beside any format (csv,
  parquet, a table).
* **The exit code gates CI** (``--fail-on``, default ``future``): 1 when a
  change of the chosen kind is found, else 0; 2 on bad input. ``future``: a
  schedule whose first affected run is at or after now (``CALSIM_NOW``, else
  the clock); ``in-effect``: one whose runs already differ; ``any``: either
  (``--fail-on-change`` is an alias of ``--fail-on any``, kept for existing
  CI); ``never``: exit 0. ``--within 30d`` counts a future change only when
  its first affected run is within 30 days of now (with ``future`` or
  ``any``; a change in effect is always within).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

import polars as pl

from .cli_inputs import atomic_output, check_db, fleet, instant, now as cli_now
from .text_table import table
from .errors import InputError
from .tz.release import release

__all__ = ["run", "SCREEN_ROWS"]

SCREEN_ROWS = 40  # more occurrence rows than this: the terminal gets one row per schedule and a hint


def _gate_options(args: argparse.Namespace) -> tuple[str, str | None]:
    """``--fail-on`` (default ``future``; ``--fail-on-change`` is ``any``) and ``--within``, checked before any work."""
    from .durations import duration_us
    from .errors import check_choice
    from .tzgate import FAIL_ON

    fail_on = getattr(args, "fail_on", None)
    if getattr(args, "fail_on_change", False):
        if fail_on not in (None, "any"):
            raise InputError(f"--fail-on-change: is --fail-on any, not with --fail-on {fail_on!r} "
                             "(give one of them)")
        fail_on = "any"
    fail_on = check_choice("--fail-on", fail_on or "future", FAIL_ON, error=InputError)
    within = getattr(args, "within", None)
    if within is not None:
        duration_us(within, "--within")
        if fail_on not in ("future", "any"):
            raise InputError(f"--within: {within!r} bounds changes still to come; with --fail-on {fail_on} it "
                             "would change nothing (allowed with --fail-on future or any)")
    return fail_on, within


def run(args: argparse.Namespace) -> int:
    from .tzchanges import tzdiff
    from .tzgate import upgrade_check

    check_db(args.db)
    fail_on, within = _gate_options(args)
    if args.format == "parquet" and not args.output:
        raise InputError("--output: required with --format parquet (a file path)")
    if args.summary and args.occurrences:
        raise InputError("--summary: not with --occurrences (one row per schedule, or one per occurrence)")
    sidecar = getattr(args, "summary_json", None)
    if sidecar:
        from .atomic import check_writable

        if args.output and sidecar == args.output:
            raise InputError(f"--summary-json: {sidecar!r} is also --output (give another file)")
        check_writable(sidecar, "--summary-json")
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
    check = upgrade_check(schedules, old, new, start, end, now=now, fail_on=fail_on, within=within, diff=diff)
    line = check.line
    name = args.name or f"tzdiff {old.version}->{new.version} {start}..{end}"
    if args.db:
        _refuse_other_diff(args.db, name, diff, args.replace)
        line += f"; written to {args.db} as {name!r}"
    per_schedule = args.summary or (not args.occurrences and args.format == "table" and diff.height > SCREEN_ROWS)
    shown = _summary_table(check.schedules) if per_schedule else check.diff
    flat = shown.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join("; " if c == "shifts" else ";")
                              for c, t in shown.schema.items() if isinstance(t, pl.List))
    summary = {**check.summary(), "row_kind": "schedules" if per_schedule else "occurrences"}
    if args.format == "parquet":
        atomic_output(args.output, lambda p: shown.write_parquet(p))
        print(line)
    elif args.format in ("csv", "json"):
        document = (flat.write_csv() if args.format == "csv"
                    else json.dumps({"summary": summary, "rows": json.loads(shown.write_json())}, indent=1) + "\n")
        print(line, file=sys.stderr if not args.output else sys.stdout)
        if args.output:
            atomic_output(args.output, lambda p: _write_text(p, document))
        else:
            sys.stdout.write(document)
    else:
        print(line)
        if shown.height:
            print(table(flat))
        if per_schedule and not args.summary:
            print(f"(one row per schedule; --occurrences lists all {diff.height:,} occurrences, "
                  "--format csv writes them)")
    if sidecar:
        from .atomic import write_atomically

        text = json.dumps(summary, indent=1) + "\n"
        write_atomically(sidecar, lambda p: _write_text(p, text), "--summary-json")
    if args.db:  # last: a refused or failed output leaves the store as it was
        from .store import LedgerStore

        with LedgerStore(args.db) as store:
            store.write_tzdiff(name, diff, replace=args.replace)
    return check.exit_code


def _write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


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


def _summary_table(rows: pl.DataFrame) -> pl.DataFrame:
    """The per-schedule rows as a reader wants them: local dates of the schedule's zone (one calendar), "already in
    effect" spelled out, the shifts as numbers (``shifts_s``) and in words (``shifts``)."""
    return rows.select(
        "schedule_id", "label", "zone",
        pl.col("first_affected").dt.date().alias("first_local_date"),
        pl.col("last_affected").dt.date().alias("last_local_date"),
        "occurrences", "shifts_s", "changes",
        pl.col("in_effect_since_local").dt.date().alias("already_in_effect_since"),
        "shifts",
    )
