"""Scenario files: a fleet and the world to simulate it in, in TOML.

The schedules are ``[[schedule]]`` tables or a fleet file named by
``fleet = "..."`` (both read by :mod:`calsim.importers.fleet`, where their
keys are listed); the ``[scenario]`` table and the tables below it give the
rest of a :class:`calsim.Scenario`::

    [scenario]
    name = "incident"
    fleet = "fleet.toml"              # relative to this file; or [[schedule]] tables here
    start = "2026-10-01T00:00Z"
    end = "2026-11-01T00:00Z"
    release = "2026f"                 # optional; tick, seed, capacity too
    tick = "1min"

    [[outage]]
    start = "2026-10-20T01:01Z"
    end = "2026-10-24T12:00Z"

    [[budget]]
    account = "tenant-a"
    limit = 300
    period = "day"
    zone = "Asia/Shanghai"

    [[event]]                          # pause | resume | trigger | tzupgrade
    type = "pause"
    at = "2026-10-05T00:00Z"
    schedule_id = "billing/nightly"

    [failures]
    probability = 0.05
    max_attempts = 3
    classes = { transient = 0.8, review = 0.2 }   # optional, as Failures(...)

Worker-level parts (:mod:`calsim.simulation.faults`), each optional::

    [workers]                          # Workers(count, lease=..., heartbeat=..., renew=..., ...)
    count = 8
    lease = "90s"
    heartbeat = "10s"                  # optional, as renew, crash_rate and down_for
    renew = false                      # heartbeat a timeout (Temporal); default true: each beat renews

    [[rate_limit]]                     # RateLimit(name, rate=..., burst=...); policies name it
    name = "crm"
    rate = "10/min"
    burst = 5

    [[breaker]]                        # Breaker(scope, after=..., open_for=...)
    scope = "source:crm"
    after = 5

    [[event]]
    type = "workercrash"               # WorkerCrash(at, workers=..., down_for=...)
    at = "2026-10-23T01:03Z"
    workers = 2

and ``schedulers``, ``scheduler_skew`` and ``dedupe`` in ``[scenario]``.

Every error names the file, the line of the table, the entry and the key,
and an unknown key comes with a suggestion.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

from .errors import CalsimError, ScheduleError, did_you_mean
from .importers.fleet import header_lines, load, read_toml, refuse_unknown, where
from .simulation.faults import Breaker, RateLimit, WorkerCrash, Workers
from .simulation.policy import Failures
from .simulation.scenario import Backfill, Budget, Outage, Pause, Resume, Scenario, Trigger, TzUpgrade

__all__ = ["load_scenario"]

_OPTIONS = ("release", "tick", "seed", "capacity", "schedulers", "scheduler_skew", "dedupe")
_SCENARIO_KEYS = {"name", "fleet", "start", "end", *_OPTIONS}
_TOP_KEYS = {"scenario", "schedule", "outage", "budget", "event", "failures", "workers", "rate_limit", "breaker"}
_EVENT_TYPES = ("pause", "resume", "trigger", "backfill", "tzupgrade", "workercrash")


def load_scenario(path: str | Path, **overrides: object):
    """Read a scenario file (see the module docstring) into a :class:`calsim.Scenario`.

    ``overrides`` replace scenario fields (e.g. ``name=...``, ``schedules=...``).

    >>> import calsim
    >>> from calsim.demo import examples_dir
    >>> sc = calsim.load_scenario(examples_dir() / "incident.toml")
    >>> sc.name, len(sc.outages), [b.account for b in sc.budgets]
    ('incident', 1, ['tenant-a', 'tenant-b'])
    """
    p, data, text = read_toml(path, "scenario")
    refuse_unknown(p.name, data, _TOP_KEYS)
    head = data.get("scenario")
    if not isinstance(head, dict):
        raise ScheduleError(f"scenario: {str(path)!r} has no [scenario] table")
    refuse_unknown(f"{p.name} [scenario]", head, _SCENARIO_KEYS)
    for key in ("name", "start", "end"):
        if key not in head and key not in overrides:
            raise ScheduleError(f"{p.name} [scenario]: missing key {key!r}")
    schedules: object  # Scenario checks it (one Schedule or an iterable of them) and keeps a tuple
    if "schedules" in overrides:
        schedules = overrides.pop("schedules")
    elif "fleet" in head:
        if "schedule" in data:
            raise ScheduleError(f"{p.name} [scenario]: give fleet = \"...\" or [[schedule]] tables, not both")
        schedules = load(p.parent / str(head["fleet"]))
    else:
        schedules = load(p)

    def build(table: str, cls: Any, entry: object, n: int, lines: list[int]) -> Any:
        at = where(p, lines, table, n)
        if not isinstance(entry, dict):
            raise ScheduleError(f"{at}: expected a table, got {entry!r}")
        try:
            return cls(**entry)
        except TypeError as exc:
            raise ScheduleError(f"{at}: {_type_error(exc)}") from None
        except CalsimError as exc:
            raise type(exc)(f"{at}: {exc}") from None

    def many(table: str, cls: Any) -> tuple:
        entries = data.get(table, [])
        if not isinstance(entries, list):
            raise ScheduleError(f"{p.name}: {table} must be [[{table}]] tables")
        lines = header_lines(text, table)
        return tuple(build(table, cls, e, i, lines) for i, e in enumerate(entries, 1))

    outages = many("outage", Outage)
    budgets = many("budget", Budget)
    events = []
    lines = header_lines(text, "event")
    kinds = {"pause": Pause, "resume": Resume, "trigger": Trigger, "backfill": Backfill, "tzupgrade": TzUpgrade,
             "workercrash": WorkerCrash}
    for i, e in enumerate(data.get("event", []), 1):
        kind = e.get("type") if isinstance(e, dict) else None
        if kind not in kinds:
            raise ScheduleError(f"{where(p, lines, 'event', i)}: type: {kind!r} (allowed: {', '.join(_EVENT_TYPES)}; "
                                "revisions are written as schedules with revision/effective_from)"
                                f"{did_you_mean(kind, _EVENT_TYPES) if isinstance(kind, str) else ''}")
        events.append(build("event", kinds[kind], {k: v for k, v in e.items() if k != "type"}, i, lines))
    failures = None
    if "failures" in data:
        failures = build("failures", Failures, data["failures"], 1, [])
    kw = {k: head[k] for k in _OPTIONS if k in head}
    if "workers" in data:
        kw["workers"] = build("workers", Workers, data["workers"], 1, [])
    kw["rate_limits"] = many("rate_limit", RateLimit)
    kw["breakers"] = many("breaker", Breaker)
    kw.update(overrides)
    try:
        return Scenario(kw.pop("name", head.get("name")), cast(tuple, schedules), kw.pop("start", head.get("start")),
                        kw.pop("end", head.get("end")), outages=outages, budgets=budgets, events=tuple(events),
                        failures=failures, **kw)
    except CalsimError as exc:
        raise type(exc)(f"{p.name}: {exc}") from None


def _type_error(exc: TypeError) -> str:
    """``__init__() got an unexpected keyword argument 'x'`` -> ``unknown key 'x'``."""
    m = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
    if m:
        return f"unknown key {m.group(1)!r}"
    m = re.search(r"missing \d+ required positional argument[s]?: (.+)", str(exc))
    if m:
        return f"missing key(s) {m.group(1)}"
    return str(exc)
