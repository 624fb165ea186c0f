"""The ``calsim`` command line.

Every error a user can cause prints one line on stderr and exits 2.

A fleet file with bad items (a crontab line, a CronJob, a VEVENT...) is
read item by item: each refused item prints one ``calsim: warning:
refused: ...`` line on stderr (file, line or document, field, reason) and
the command goes on with the rest, exit 0; when nothing could be imported it
exits 2. ``--strict`` makes the first bad item an error (exit 2);
``--legacy-tz`` reads a Kubernetes ``TZ=`` prefix in ``spec.schedule`` as
the controller runs it (by default only for exported objects, see
:mod:`calsim.importers.kubernetes`).

>>> from calsim.cli import main
>>> main(["resolve", "America/New_York", "2026-03-08T02:30", "--release", "2026f", "--gap", "shift"])
nominal_local        fold  due_utc               utc_offset_s  kind  notes
2026-03-08T02:30:00  0     2026-03-08T07:30:00Z  -14400        gap   dst_gap_shifted
0
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, NoReturn, get_args

import polars as pl

from ._version import __version__
from .errors import CalsimError, InputError, check_choice, did_you_mean
from .cli_inputs import fleet, import_options, now, take_warnings, window
from .cli_ledgers import compare_command, reconcile_command, simulate_command, year
from .cli_sweep import grid_option, sweep_command
from .cli_output import emit, output_options
from .importers.history import HISTORY_KINDS  # (the registered history readers)
from .text_table import span, table
from .tz.fetch import fetch_release
from .tz.release import release, releases
from .resolution import FoldPolicy, GapPolicy, resolve

if TYPE_CHECKING:
    import datetime as dt

__all__ = ["main"]


def _cmd_releases(args: argparse.Namespace) -> int:
    if args.fetch:
        r = fetch_release(args.fetch)
        print(f"fetched {r.version}: {len(r.zones)} zones in {r.source}")
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
    print(table(pl.DataFrame(rows)))
    return 0


def _cmd_resolve(args: argparse.Namespace) -> int:
    frame = resolve(args.times, args.zone, args.release, gap=args.gap, fold=args.fold)
    print(table(frame))
    return 0


def _cmd_tzdiff(args: argparse.Namespace) -> int:
    from .cli_tzdiff import run

    return run(args)


def _whole_number(text: str) -> int:
    """argparse type: a whole number >= 1 (digits only; ``1_000_000`` and ``1e6`` accepted as Python reads them)."""
    raw = text.replace("_", "")
    try:
        value = int(raw) if raw.isdigit() else int(float(raw)) if raw[:1].isdigit() and len(raw) <= 30 else -1
    except (ValueError, OverflowError):
        value = -1
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text[:40]!r}")
    return value


def _catchup_modes(text: str) -> str:
    """argparse type of ``--catchup``: comma-separated catch-up modes, each checked (the closest one suggested)."""
    from .simulation.policy import Catchup

    try:
        for mode in (m for m in text.split(",") if m):
            check_choice("catchup", mode, get_args(Catchup), noun="mode")
    except CalsimError as exc:  # (argparse names the option: "argument --catchup: unknown mode ...")
        raise argparse.ArgumentTypeError(str(exc).removeprefix("catchup: ")) from None
    return text


def _limit_option(s: argparse.ArgumentParser) -> None:
    s.add_argument("--max-occurrences", default=None, metavar="N", type=_whole_number,
                   help="refuse work estimated above N occurrences (default: $CALSIM_MAX_OCCURRENCES, else 50 million)")


def _cmd_preview(args: argparse.Namespace) -> int:
    from .explain import preview

    schedules = fleet(args.fleet, args)
    if args.id:
        chosen = [s for s in schedules if s.id in args.id]
        unknown = sorted(set(args.id) - {s.id for s in chosen})
        if unknown:
            raise InputError(f"--id: unknown schedule {unknown[0]!r} (in {args.fleet}: "
                             f"{', '.join(s.id for s in schedules[:10])}{', ...' if len(schedules) > 10 else ''})"
                             f"{did_you_mean(unknown[0], (s.id for s in schedules))}")
        schedules = chosen
    # "The next runs" means from now unless --after says otherwise (imported
    # crontabs and manifests carry no start of their own).

    after = args.after or now().strftime("%Y-%m-%dT%H:%MZ")
    frames = [preview(s, n=args.n, after=after, release=args.release) for s in schedules]
    frame = pl.concat(frames) if frames else pl.DataFrame()
    # What each job runs, when its file says (a crontab line's command): an id such as crontab:6 says nothing.
    commands = {s.id: command for s in schedules if (command := _command(s)) is not None}
    if commands and frame.height:
        frame = frame.with_columns(pl.col("schedule_id").replace_strict(commands, default=None,
                                                                        return_dtype=pl.String).alias("command"))
    if args.format == "table" and frame.height:
        # As systemd-analyze calendar says it ("From now: 8h left"): how far each run is from now.
        at = now()
        frame = frame.with_columns(pl.col("due_utc").map_elements(
            lambda t: _from_now(t, at), return_dtype=pl.String).alias("from_now"))
        label = [_cut(pl.col("command"), _COMMAND_WIDTH)] if commands else []
        frame = frame.select("schedule_id", *label, "nominal_local", "fold", "due_utc", "from_now", "utc_offset_s",
                             "explain")
    emit(frame, args)
    return 0


_COMMAND_WIDTH = 40  # a preview table's command column (csv, json and parquet carry it whole)


def _command(schedule) -> str | None:
    """What the job runs, where its file says: a crontab line's command (:class:`calsim.importers.Source`)."""
    from .importers import Source

    return schedule.source.command if isinstance(schedule.source, Source) and schedule.source.command else None


def _cut(column: pl.Expr, width: int) -> pl.Expr:
    """``column`` (strings) cut to ``width`` characters, the cut marked with ``...``."""
    return (pl.when(column.str.len_chars() > width)
            .then(column.str.slice(0, width - 3) + pl.lit("...")).otherwise(column).alias(column.meta.output_name()))


def _from_now(t: dt.datetime | None, now: dt.datetime) -> str:
    """``"8h 5min left"`` / ``"3d 2h ago"``: the two largest units, as systemd-analyze prints them."""
    if t is None:
        return "-"
    secs = int((t - now).total_seconds())
    return f"{span(abs(secs))} {'left' if secs >= 0 else 'ago'}"


def _cmd_expand(args: argparse.Namespace) -> int:
    from .expansion import expand

    schedules = fleet(args.fleet, args)
    start, end = window(args)
    frame = expand(schedules, start, end, args.release)
    runs = frame["due_utc"].is_not_null().sum()
    summary = (f"{len(schedules):,} schedules in [{start}, {end}): {frame.height:,} occurrences, {runs:,} with an "
               f"instant, tzdata {frame['tzdata'][0] if frame.height else '-'}")
    emit(frame, args, summary)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    import time

    import calsim.demo as demo

    t0 = time.perf_counter()
    demo.run(args.out, echo=(lambda *a, **k: None) if args.quiet else print,
             progress=False if args.quiet else None)
    if not args.quiet:
        print(f"Done in {time.perf_counter() - t0:.1f} s.")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import parse_parameter, report

    params = dict(parse_parameter(p) for p in args.parameter or ())
    out = report(args.notebook, args.out, params, no_input=args.no_input,
                 progress=not args.quiet and sys.stderr.isatty())
    print(f"report written to {out}")
    return 0


def _cmd_fetch(args: argparse.Namespace) -> int:
    r = fetch_release(args.version, force=args.force)
    print(f"{r.version}: {len(r.zones)} zones in {r.source}")
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with calsim's error contract: one line on stderr, the closest option or choice suggested, exit 2.

    argparse prints a usage block of a dozen lines for a typo; the user needs
    the one flag they mistyped and where to look.
    """

    _calsim_argv: list[str]  # the command line, set by main() before parsing (read by _active)

    def error(self, message: str) -> NoReturn:
        hint = _suggest(self, message)
        where = _active(self).prog
        sys.stderr.write(f"{where}: error: {message}{hint} (see `{where} --help`)\n")
        raise SystemExit(2)


def _suggest(parser: argparse.ArgumentParser, message: str) -> str:
    """``" (did you mean --x?)"`` for an unknown option or choice, else ``""``."""
    import difflib
    import re

    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if m:  # (the same suggestion as the library's choices: calsim.errors.closest)
        choices = re.findall(r"'([^']*)'", m.group(2)) or [c.strip() for c in m.group(2).split(",")]
        return did_you_mean(m.group(1), choices)
    m = re.search(r"unrecognized arguments: (\S+)", message)
    if m and m.group(1).startswith("-"):
        flag = m.group(1).split("=", 1)[0]
        options = {o for a in _active(parser)._actions for o in a.option_strings}
        near = difflib.get_close_matches(flag, sorted(options), n=1, cutoff=0.7)
        return f" (did you mean {near[0]}?)" if near else ""
    return ""


def _active(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The subcommand's parser when the command line named one (unknown flags are reported by the top parser)."""
    argv = getattr(parser, "_calsim_argv", None) or []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for token in argv:
                if token in action.choices:
                    return action.choices[token]
    return parser


def _scenario_options(s: argparse.ArgumentParser, fleet_help: str) -> None:
    """The input and the scenario options ``simulate`` and ``sweep`` share (``cli_ledgers._scenario`` reads them)."""
    s.add_argument("input", help="a scenario TOML file, or a fleet (" + fleet_help + ")")
    import_options(s)
    s.add_argument("--from", dest="start", default=None, help="horizon start (instant)")
    s.add_argument("--to", dest="end", default=None, help="horizon end (instant)")
    s.add_argument("--release", default=None, help="version (2026f), latest, installed, system or a path")
    s.add_argument("--tick", default=None, help="scheduler wake-up period (default 1min)")
    s.add_argument("--seed", type=int, default=None, help="seed for jitter, durations and failures")
    s.add_argument("--outage", action="append", metavar="START/END",
                   help="scheduler down over [START, END) (repeatable)")
    s.add_argument("--budget", action="append", metavar="ACCOUNT:LIMIT:PERIOD:ZONE", help="a budget (repeatable)")


def _parser() -> _Parser:
    p = _Parser(prog="calsim", description="When recurring schedules really fire.")
    p.add_argument("--version", action="version", version=f"calsim {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("releases", help="list the tz database releases usable offline")
    s.add_argument("--fetch", metavar="VERSION", default=None, help="first download this release into the user cache")
    s.set_defaults(func=_cmd_releases)

    s = sub.add_parser("resolve", help="resolve local wall times in a zone to UTC")
    s.add_argument("zone", help="IANA zone, e.g. America/New_York")
    s.add_argument("times", nargs="+", help="naive ISO local times, e.g. 2026-03-08T02:30")
    s.add_argument("--release", default=None, help="version (2026f), latest, installed, system or a path")
    s.add_argument("--gap", default="skip", choices=get_args(GapPolicy))
    s.add_argument("--fold", default="first", choices=get_args(FoldPolicy))
    s.set_defaults(func=_cmd_resolve)

    fleet_help = ("a schedule file (fleet or scenario TOML, crontab, Kubernetes CronJobs, .ics, systemd .timer, "
                  "EventBridge JSON/CloudFormation/Terraform, GitHub workflow, Temporal JSON) or example:N[:SEED]")

    s = sub.add_parser(
        "tzdiff",
        help="which scheduled runs move between two tzdata releases, what to do (a CI gate with --fail-on)",
        description="Exit 1 when a change of the --fail-on kind is found (default: future, a change still to come; "
                    "a change already in effect does not block the upgrade that fixes it), else 0; 2 on bad input. "
                    "'Now' is CALSIM_NOW, else the clock.",
    )
    s.add_argument("fleet", help=fleet_help)
    import_options(s)
    _limit_option(s)
    s.add_argument("--old", required=True,
                   help="release: version (2025b), latest, wheel, zoneinfo dir, installed, system")
    s.add_argument("--new", required=True, help="release, as --old")
    s.add_argument("--from", dest="start", default=None,
                   help="window start (instant); default: the day the releases first differ for the fleet's zones "
                        "within the past year (changes already in effect), else today 00:00Z")
    s.add_argument("--to", dest="end", default=None, help="window end (instant); default 365 days from today")
    s.add_argument("--format", default="table", choices=("table", "csv", "json", "parquet"))
    s.add_argument("--output", default=None, help="write csv/json/parquet to this file (atomically)")
    s.add_argument("--fail-on", default=None, metavar="{future,any,in-effect,never}",
                   help="exit 1 on a change still to come (future, the default), on any change, on a change "
                        "already in effect, or never")
    s.add_argument("--fail-on-change", action="store_true", help="the same as --fail-on any")
    s.add_argument("--within", default=None, metavar="DURATION",
                   help="with --fail-on future|any: only a future change whose first affected run is within "
                        "DURATION of now (e.g. 30d) fails")
    s.add_argument("--summary-json", default=None, metavar="FILE",
                   help="also write the summary (changed schedules, first change, in effect since, per-zone "
                        "shifts, the gate) as JSON to FILE, for any --format")
    s.add_argument("--summary", action="store_true",
                   help="one row per schedule that moves (default in a terminal past a screenful of occurrences)")
    s.add_argument("--occurrences", action="store_true", help="one row per occurrence that moves, however many")
    s.add_argument("--db", default=None, help="also store the diff in this ledger store (DuckDB file), table tz_diffs")
    s.add_argument("--replace", action="store_true",
                   help="replace a different diff stored under the same name (default: refuse, exit 2)")
    s.add_argument("--name", default=None, help="the name to store the diff under (with --db)")
    s.add_argument("--override", action="append", metavar="ZONE@INSTANT=POSIX_TZ",
                   help="what-if: in --new, ZONE follows POSIX_TZ from INSTANT (repeatable)")
    s.set_defaults(func=_cmd_tzdiff)

    s = sub.add_parser("preview", help="the next runs of each schedule, with every DST surprise explained")
    s.add_argument("fleet", help=fleet_help)
    import_options(s)
    s.add_argument("--id", action="append", help="only this schedule id (repeatable)")
    s.add_argument("-n", type=int, default=5, help="runs per schedule (default 5)")
    s.add_argument("--after", default=None, help="first instant (default: now)")
    s.add_argument("--release", default=None, help="version (2026f), latest, installed, system or a path")
    output_options(s)
    _limit_option(s)
    s.set_defaults(func=_cmd_preview)

    s = sub.add_parser("expand", help="every occurrence of a fleet in a UTC window")
    s.add_argument("fleet", help=fleet_help)
    import_options(s)
    s.add_argument("--from", dest="start", default=None, help="window start (instant); default today 00:00Z")
    s.add_argument("--to", dest="end", default=None, help="window end (instant); default 365 days after --from")
    s.add_argument("--release", default=None, help="version (2026f), latest, installed, system or a path")
    output_options(s)
    _limit_option(s)
    s.set_defaults(func=_cmd_expand)

    s = sub.add_parser("simulate", help="run a fleet through outages, budgets and policies; print the summary")
    _scenario_options(s, fleet_help)
    s.add_argument("--catchup", default=None, metavar="MODE[,MODE...]", type=_catchup_modes,
                   help="override every schedule's catch-up (all, latest, earliest, skip, bounded, "
                        "earliest_and_latest); several compare")
    s.add_argument("--name", default=None, help="scenario name (default: the file's, or 'simulation')")
    s.add_argument("--db", default=None, help="write the ledger(s) to this DuckDB ledger store")
    s.add_argument("--replace", action="store_true",
                   help="replace a different ledger stored under the same scenario name (default: refuse, exit 2)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    output_options(s)
    _limit_option(s)
    s.set_defaults(func=simulate_command)

    s = sub.add_parser("sweep", help="a scenario under every combination of --grid values, measured side by side")
    _scenario_options(s, fleet_help)
    s.add_argument("--grid", action="append", required=True, metavar="FIELD=V1,V2,...", type=grid_option,
                   help="a Policy field, budget_limit or a Scenario field and its values (repeatable)")
    s.add_argument("--jobs", type=int, default=None, help="combinations settled at once (default: CPUs, at most 4)")
    s.add_argument("--name", default=None, help="scenario name (default: the file's, or 'simulation')")
    s.add_argument("--db", default=None, help="also write each combination's ledger to this DuckDB ledger store")
    output_options(s)
    _limit_option(s)
    s.set_defaults(func=sweep_command, catchup=None)

    s = sub.add_parser("compare", help="scenarios of a ledger store side by side")
    s.add_argument("db", help="a DuckDB ledger store file")
    s.add_argument("names", nargs="*", help="scenario names (default: all)")
    output_options(s)
    s.set_defaults(func=compare_command)

    s = sub.add_parser("reconcile", help="a run history (what actually ran) against a stored scenario, per schedule",
                       description="Counts per schedule: matched, late, wrong-instant, missing and extra "
                                   "(duplicate + unexpected) runs. History kinds: kubectl get jobs -o json, "
                                   "journalctl -o json, cron syslog lines (with --crontab), CSV or Parquet.")
    s.add_argument("scenario", help="a scenario name in --db (see `calsim compare FILE`)")
    s.add_argument("history", help="the history file")
    s.add_argument("--db", required=True, help="the DuckDB ledger store holding the scenario")
    s.add_argument("--kind", default=None, choices=HISTORY_KINDS,
                   help="the history's format (default: told by content)")
    s.add_argument("--crontab", default=None, help="syslog: the crontab whose commands the CMD lines name")
    s.add_argument("--timer", action="append", default=None, metavar="FILE",
                   help="journal: a .timer unit of the scenario, so its Unit= service maps to it (repeatable)")
    s.add_argument("--zone", default="UTC", help="syslog: the host's zone for 'Mar  9 10:15:01' stamps (default UTC)")
    s.add_argument("--year", type=year, default=None, help="syslog: the year of the first 'Mar  9 ...' stamp (1..9999)")
    s.add_argument("--map", action="append", metavar="NAME=SCHEDULE_ID",
                   help="rename a history id (unit, command:...) to a schedule id (repeatable)")
    s.add_argument("--id", action="append", help="only this schedule id (repeatable)")
    s.add_argument("--from", dest="start", default=None, help="window start (instant); default the scenario's")
    s.add_argument("--to", dest="end", default=None, help="window end (instant); default the scenario's")
    s.add_argument("--grace", default="5min", help="a run starting later than this after its time is late")
    s.add_argument("--max-shift", default="3h", help="how far a run's instant may be from its occurrence's")
    s.add_argument("--detail", action="store_true", help="also list every run or occurrence that is not matched")
    output_options(s)
    s.set_defaults(func=reconcile_command)

    s = sub.add_parser("demo", help="the example fleet through an outage under three catch-up policies")
    s.add_argument("--out", default=".", help="directory for calsim-demo.duckdb and calsim-demo.png (default .)")
    s.add_argument("--quiet", action="store_true", help="print nothing")
    s.set_defaults(func=_cmd_demo)

    s = sub.add_parser("report", help="execute a notebook with parameters and write a self-contained HTML report")
    s.add_argument("notebook",
                   help="a notebook with a cell tagged 'parameters', e.g. notebooks/04_tzdata_upgrade.ipynb")
    s.add_argument("-p", "--parameter", action="append", metavar="NAME=VALUE", help="a notebook parameter (repeatable)")
    s.add_argument("--out", required=True, help="the HTML file to write (self-contained: no remote scripts)")
    s.add_argument("--no-input", action="store_true", help="leave the code out: prose, tables and charts only")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=_cmd_report)

    s = sub.add_parser("fetch", help="download a tzdata release into the user cache (pip)")
    s.add_argument("version", help="IANA version, e.g. 2024b")
    s.add_argument("--force", action="store_true", help="download even if available offline")
    s.set_defaults(func=_cmd_fetch)
    return p



def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 bad input)."""
    parser = _parser()
    parser._calsim_argv = list(sys.argv[1:] if argv is None else argv)
    take_warnings()  # (none held from an earlier call in this process)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # _Parser printed its one-line error (or --help/--version their text)
        return int(exc.code or 0)
    try:
        _preflight(args)
        import calsim.limits as limits

        with limits.scope(getattr(args, "max_occurrences", None)):
            code = int(args.func(args))
        for line in take_warnings():  # what the input held that is not a schedule (@reboot, a Deployment...)
            print(line, file=sys.stderr)
        return code
    except CalsimError as exc:
        print(f"calsim: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head`: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a path too long, a permission, a read-only filesystem... met outside a reader
        name = f" {str(exc.filename)[:120]!r}:" if exc.filename else ""
        print(f"calsim: error:{name} {exc.strerror or type(exc).__name__}", file=sys.stderr)
        return 2


def _preflight(args: argparse.Namespace) -> None:
    """Refuse a bad output before any work: every file the command would write is checked first.

    ``--output`` and ``report --out`` must be writable regular files (or not
    exist yet, in a writable directory; see :func:`calsim.atomic.check_writable`),
    so a long simulation never ends in "cannot write" and a refused command
    leaves nothing half-done. The store (``--db``) is checked by each command
    before it simulates, and written last.
    """
    from .atomic import check_writable

    if getattr(args, "output", None):
        check_writable(args.output, "--output")
    if getattr(args, "command", None) == "report" and getattr(args, "out", None):
        check_writable(args.out, "--out")


def _one_line(text: str) -> str:
    """An error message on one line (a library message is one line; a wrapped one may not be)."""
    return " ".join(text.split("\n")) if "\n" in text else text


def entry() -> None:  # pragma: no cover - console script
    sys.exit(main())
