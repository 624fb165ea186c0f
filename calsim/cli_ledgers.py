"""The CLI's ledger commands: ``simulate`` (scenarios to ledgers, and to ``--db``), ``compare`` (stored
scenarios side by side) and ``reconcile`` (a scheduler's history against a stored scenario)."""

from __future__ import annotations

import argparse

import polars as pl

from .cli_inputs import check_db, fleet, window
from .cli_output import emit
from .errors import CalsimError, InputError
from .text_table import table

__all__ = ["simulate_command", "compare_command", "reconcile_command", "year"]


def _scenario(args: argparse.Namespace):
    """A Scenario from a scenario file, or from a fleet plus --from/--to/--outage/--budget options."""
    import dataclasses

    from .scenario_file import load_scenario
    from .simulation.policy import with_policy
    from .simulation.scenario import Budget, Outage, Scenario

    text = _sniff(args.input)
    if text is not None and "[scenario]" in text:
        sc = load_scenario(args.input)
        if args.start or args.end:
            sc = dataclasses.replace(sc, start=args.start or sc.start, end=args.end or sc.end)
    else:
        start, end = window(args)
        sc = Scenario("simulation", tuple(fleet(args.input, args)), start, end, release=args.release,
                      tick=args.tick or "1min")
    outages = list(sc.outages)
    for spec in args.outage or ():
        a, sep, b = spec.partition("/")
        if not sep:
            raise InputError(f"--outage: {spec!r} is not START/END (e.g. 2026-10-20T01:00Z/2026-10-23T12:00Z)")
        outages.append(Outage(a, b))
    budgets = list(sc.budgets)
    for spec in args.budget or ():
        parts = spec.split(":")
        if len(parts) != 4:
            raise InputError(f"--budget: {spec!r} is not ACCOUNT:LIMIT:PERIOD:ZONE (e.g. tenant-a:300:day:UTC)")
        try:
            limit = float(parts[1])
        except ValueError:
            raise InputError(f"--budget: limit {parts[1]!r} in {spec!r} is not a number") from None
        budgets.append(Budget(parts[0], limit, parts[2], parts[3]))
    changes: dict[str, object] = {"outages": tuple(outages), "budgets": tuple(budgets)}
    if args.name:
        changes["name"] = args.name
    if args.release and text is not None and "[scenario]" in text:
        changes["release"] = args.release
    if args.tick and text is not None and "[scenario]" in text:
        changes["tick"] = args.tick
    if args.seed is not None:
        changes["seed"] = args.seed
    sc = dataclasses.replace(sc, **changes)
    modes = [m for m in (args.catchup or "").split(",") if m]
    if not modes:
        return [sc]
    return [dataclasses.replace(sc, name=f"{sc.name}-{m}", schedules=with_policy(sc.schedules, catchup=m))
            for m in modes]


def _sniff(path: str) -> str | None:
    if path.startswith("example:"):
        return None
    from .input_files import read_file

    try:
        text = read_file(path, "fleet")  # never opens a FIFO or a device: it would block or never end
    except CalsimError:
        return None  # fleet() reports the unreadable file with its reason
    return str(text)[:65536]


def simulate_command(args: argparse.Namespace) -> int:
    from .simulation.dispatch import simulate

    check_db(args.db)
    scenarios = _scenario(args)
    progress = False if args.quiet else None
    ledgers = [simulate(sc, progress=progress) for sc in scenarios]
    summary = pl.concat([ledger.summary() for ledger in ledgers], how="diagonal_relaxed")
    note = None
    if args.db:
        _refuse_overwrite(args.db, ledgers, args.replace)
        note = f"{len(ledgers)} ledger(s) written to {args.db}: {', '.join(repr(ledger.name) for ledger in ledgers)}"
    # The store is written last: a refused or failed output leaves it as it was.
    if args.format == "table":
        print(table(summary))
        if note:
            print(note)
    else:
        frame = pl.concat([ledger.frame for ledger in ledgers])
        emit(frame, args, note or f"{frame.height:,} ledger rows of {len(ledgers)} scenario(s)")
    if args.db:
        from .store import LedgerStore

        with LedgerStore(args.db) as store:
            for ledger in ledgers:
                store.write(ledger, replace=args.replace)
    return 0


def _refuse_overwrite(db: str, ledgers: list, replace: bool) -> None:
    """Refuse (before anything is written) when a different ledger is stored under one of the names.

    Opened read-only: a refused command must leave the file byte-identical,
    and opening DuckDB for writing may checkpoint it. The same ledger again
    is fine (writing it is a no-op), so re-running a command is idempotent.
    """
    import os

    from .errors import ScenarioExistsError
    from .store import LedgerStore, check_scenario_name

    for ledger in ledgers:
        try:
            check_scenario_name(ledger.name)
        except CalsimError as exc:
            raise type(exc)(f"--name: {str(exc).removeprefix('name: ')}") from None
    if replace or db == ":memory:" or not os.path.exists(db):
        return
    with LedgerStore(db, read_only=True) as store:
        for ledger in ledgers:
            if store.stored(ledger) == "different":
                raise ScenarioExistsError(f"--db: a different ledger is already stored as {ledger.name!r} in {db}; "
                                          "pass --replace to replace it, or --name for another name")


def compare_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .store import LedgerStore

    if not Path(args.db).is_file():
        raise InputError(f"db: {args.db!r} does not exist (write ledgers with `calsim simulate ... --db FILE`)")
    with LedgerStore(args.db, read_only=True) as store:
        names = args.names or store.scenarios()["name"].to_list()
        if not names:
            raise InputError(f"db: {args.db!r} holds no scenarios yet")
        frame = store.compare(names)
    if args.format == "table":
        # Long enough already: a reason no scenario has is a column of zeros that says nothing.
        frame = frame.select(c for c in frame.columns
                             if not c.startswith("reason_") or frame[c].fill_null(0).sum() != 0)
    emit(frame, args)
    return 0


def year(text: str) -> int:
    """argparse type of ``reconcile --year``: a year a datetime holds (1..9999), digits only."""
    raw = text.strip()
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 4 and 1 <= int(raw) <= 9999):
        raise argparse.ArgumentTypeError(f"expected a year from 1 to 9999, got {text[:40]!r}"
                                         + (f" ({len(text):,} characters)" if len(text) > 40 else ""))
    return int(raw)


def reconcile_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .importers.history import read_history
    from .store import RECONCILE_CLASSES, LedgerStore

    if not Path(args.db).is_file():
        raise InputError(f"--db: {args.db!r} does not exist (write ledgers with `calsim simulate ... --db FILE`)")
    with LedgerStore(args.db, read_only=True) as store:
        store._known([args.scenario])
        info = store.sql("SELECT horizon_start, horizon_end FROM scenarios WHERE name = $1", [args.scenario]).row(0)
        ids = store.sql("SELECT DISTINCT schedule_id FROM occurrences WHERE scenario = $1",
                        [args.scenario])["schedule_id"].to_list()
        # Path(): the argument is always a file (a name with a line break is no history's text)
        history = read_history(Path(args.history), args.kind, crontab=args.crontab, ids=ids, timers=args.timer,
                               zone=args.zone, year=args.year)
        renames = {}
        for spec in args.map or ():
            name, sep, sid = spec.partition("=")
            if not (sep and name and sid):
                raise InputError(f"--map: {spec!r} is not NAME=SCHEDULE_ID (e.g. 'backup.service=ops/backup')")
            renames[name] = sid
        if renames:
            history = history.with_columns(pl.col("schedule_id").replace(renames))
        # Compare the overlap only: by default the scenario's horizon, so a week of logs
        # against a month of simulation does not report three weeks as missing.
        start = args.start or info[0]
        end = args.end or info[1]
        out = store.reconcile(args.scenario, history.drop("origin"), grace=args.grace, max_shift=args.max_shift,
                              start=start, end=end)
    if args.id:
        unknown = sorted(set(args.id) - set(out["schedule_id"].unique().to_list()))
        if unknown:
            raise InputError(f"--id: schedule {unknown[0]!r} is neither in scenario {args.scenario!r} "
                             "nor in the history")
        out = out.filter(pl.col("schedule_id").is_in(args.id))
    counts = (out.group_by("schedule_id", "class").len()
              .pivot("class", index="schedule_id", values="len").fill_null(0))
    for c in RECONCILE_CLASSES:
        if c not in counts.columns:
            counts = counts.with_columns(pl.lit(0, pl.UInt32).alias(c))
    per_schedule = counts.select(
        "schedule_id", "matched", "late", "wrong_instant", "missing",
        (pl.col("duplicate") + pl.col("unexpected")).alias("extra"),
        "duplicate", "unexpected").sort("schedule_id")
    total = per_schedule.select(pl.exclude("schedule_id").sum()).row(0, named=True)
    window = [v.strftime("%Y-%m-%dT%H:%MZ") if hasattr(v, "strftime") else str(v) for v in (start, end)]
    summary = (f"{history.height:,} runs in {args.history} against scenario {args.scenario!r} in "
               f"[{window[0]}, {window[1]}): " + ", ".join(f"{total[c]:,} {c.replace('_', '-')}"
                                                     for c in ("matched", "late", "wrong_instant", "missing", "extra")))
    if args.format == "table":
        print(summary)
        if per_schedule.height:
            print(table(per_schedule))
        if args.detail:
            odd = out.filter(pl.col("class") != "matched").select(
                "schedule_id", "class", "nominal_local", "due_utc", "scheduled_utc", "started_utc", "lateness_s",
                "detail")
            if odd.height:
                print(table(odd))
    else:
        emit(out, args, summary)
    return 0
