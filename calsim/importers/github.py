"""Import GitHub Actions scheduled workflows: each ``on.schedule`` cron entry becomes a schedule.

A workflow file (``.github/workflows/*.yml``), or that directory, is read as
GitHub documents the ``schedule`` event:

============================  ============================================================
workflow                      calsim
============================  ============================================================
``on.schedule[n].cron``       a cron rule (5-field POSIX cron: names, ranges, lists,
                              steps; the day-of-month/day-of-week OR rule); ``L``, ``W``,
                              ``#``, ``?`` and ``@daily`` macros are not POSIX and refused
``on.schedule[n].timezone``   the zone (IANA name; absent: UTC, as GitHub reads crons)
``concurrency``               ``overlap``: none ``"allow"``; a group ``"buffer_latest"``
(workflow level)              (one pending run, a newer one replaces it); with
                              ``cancel-in-progress: true`` ``"cancel_other"``
============================  ============================================================

**Identity.** ``<workflow name>:<n>`` (the workflow's ``name:``, else its
file name), ``n`` counting the entries of ``on.schedule`` from 1.

**Policy.** GitHub has no calsim preset; :data:`NOTES` (in every source's
and preset's ``notes``) state its documented behaviour: scheduled runs may
start late under load (the start of every hour is named as a busy time),
queued runs may be dropped under high load, the shortest interval is 5
minutes, and in a public repository scheduled workflows are disabled after
60 days without activity. The policy is ``catchup="skip"`` (a tick the
scheduler did not create a run for is not created later; undocumented, so
noted), gap ``next_valid`` (GitHub: a time the DST change skips runs right
after the change) and fold ``first`` (undocumented; noted).

>>> from calsim.importers.github import from_github_actions
>>> w = from_github_actions("name: Nightly\\non:\\n  schedule:\\n    - cron: '17 3 * * 1-5'\\njobs: {}\\n")
>>> s = w[0]
>>> s.id, s.zone, s.rule, s.policy.catchup, w.sources[s.id].line
('Nightly:1', 'UTC', '17 3 * * 1-5', 'skip', 4)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import CalsimError, InputError, RuleError
from ..presets import Preset
from ..rules.cron import Cron
from ..schedule import Schedule
from ..simulation.policy import Overlap, Policy
from ._yaml import child, documents
from ._result import Imported, Items, Skipped, Source, attach, read_input, reraise
from .crontab import DEFAULT_START, _check_zone

__all__ = ["from_github_actions", "NOTES", "SOURCES"]

DOCS_EVENT = "https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#schedule"
DOCS_SYNTAX = "https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onschedule"
DOCS_CONCURRENCY = "https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#concurrency"
SOURCES = (DOCS_EVENT, DOCS_SYNTAX, DOCS_CONCURRENCY)
NOTES = (
    "GitHub: the schedule event can be delayed during periods of high load (the start of every hour is one); "
    "calsim does not model the delay (add jitter or an Outage to study it)",
    "GitHub: if the load is high enough, some queued jobs may be dropped; calsim runs every scheduled time",
    "GitHub: the shortest interval is once every 5 minutes",
    "GitHub: in a public repository, scheduled workflows are disabled after 60 days without repository activity",
    "GitHub: scheduled workflows run on the latest commit of the default branch only",
    "catch-up after a GitHub outage is undocumented; calsim assumes a missed schedule event is not created "
    "later (catchup='skip')",
    "DST (with timezone:): GitHub documents that a time the change skips runs right after it (gap='next_valid'); "
    "a repeated time is undocumented, calsim runs it once (fold='first')",
)
_NOT_POSIX = re.compile(r"[LW#?]", re.IGNORECASE)
_NAMES = re.compile(r"\b(JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|SUN|MON|TUE|WED|THU|FRI|SAT)\b",
                    re.IGNORECASE)


def from_github_actions(path_or_text: object, *, source: str | None = None,
                        start: object = DEFAULT_START, strict: bool = False) -> Imported:
    """Read a GitHub Actions workflow file (or a directory of them) into schedules.

    Parameters
    ----------
    path_or_text
        A workflow file, a directory (every ``*.yml``/``*.yaml`` in it, by
        name), or the workflow's text (a ``str`` with a line break, or ``bytes``).
    source
        Name used in ids and messages instead of the file's.
    start
        Anchor of every rule (local wall time).
    strict
        False (default): a bad ``on.schedule`` entry (or, in a directory, a
        file that is not a workflow) is refused (``Imported.refused``) and
        the others imported; True: the first one raises.

    Returns
    -------
    Imported
        One schedule per ``on.schedule`` entry (source: file, line of the
        ``cron:`` value), and a GitHub preset per id whose ``notes`` are
        :data:`NOTES`; workflows without a schedule are in ``skipped``.

    Raises
    ------
    InputError
        Not YAML, not a workflow (no ``on:``), no ``on.schedule`` at all,
        an entry without ``cron``.
    RuleError
        A cron expression GitHub would refuse (named with file and line).
    UnknownZoneError
        A ``timezone:`` that names no zone.
    """
    if isinstance(path_or_text, (str, Path)) and not isinstance(path_or_text, bytes) \
            and "\n" not in str(path_or_text) and Path(path_or_text).is_dir():
        files = sorted(p for p in Path(path_or_text).iterdir() if p.suffix in (".yml", ".yaml") and p.is_file())
        schedules: list[Schedule] = []
        skipped: list[Skipped] = []
        presets: dict[str, Any] = {}
        items = Items(strict)
        for p in files:
            one = items.run(Source("github", str(p)), p.name, _read, p, None, start, Items(strict))
            if one is None:
                continue  # the whole workflow file is refused (not YAML, not a workflow)
            schedules += one.schedules
            skipped += one.skipped
            items.refused += one.refused
            presets.update(one.presets)
        if not schedules and not items.refused:
            raise InputError(f"github: {str(path_or_text)!r}: no workflow file with on.schedule "
                             f"({len(files)} .yml/.yaml files read)")
        return items.done(schedules, skipped, presets)
    imported = _read(path_or_text, source, start, Items(strict))
    if not imported.schedules:
        skip = imported.skipped[0]
        raise InputError(f"github: {skip.what}: {skip.reason}; nothing to import")
    return imported


def _read(path_or_text: object, source: str | None, start: object, collect: Items) -> Imported:
    text, file, path = read_input(path_or_text, "github", source)
    label = source or (path.name if path is not None else file)
    where = f"github: {label}"
    docs = documents(text, where)
    node, data = (docs[0][1], docs[0][2]) if docs else (None, None)
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a workflow (a mapping with 'on:' and 'jobs:'), got "
                         f"{type(data).__name__}")
    # YAML 1.1 (PyYAML) reads a bare `on` key as the boolean True.
    on_key = "on" if "on" in data else True if True in data else None
    if on_key is None:
        raise InputError(f"{where}: not a workflow: no 'on:' key (the events that trigger it)")
    on = data[on_key]
    name = data.get("name")
    wf = name.strip() if isinstance(name, str) and name.strip() else (Path(label).name if label else "workflow")
    schedule = on.get("schedule") if isinstance(on, dict) else None
    if schedule is None:
        what = on if isinstance(on, (str, list)) else sorted(map(str, on)) if isinstance(on, dict) else on
        return Imported((), (Skipped(Source("github", file, text=str(what)[:80]), wf,
                                     f"no on.schedule (events: {str(what)[:60]})"),))
    if not isinstance(schedule, list) or not schedule:
        raise InputError(f"{where}: on.schedule: expected a list of '- cron: ...' entries, got {schedule!r:.60}")
    overlap, conc_note = _concurrency(data.get("concurrency"), where)
    preset = Preset(name="github", policy=Policy(catchup="skip", overlap=overlap), gap="next_valid", fold="first",
                    tick="1min", notes=NOTES + ((conc_note,) if conc_note else ()), sources=SOURCES,
                    settings=(("concurrency", data.get("concurrency")),))
    on_node = child(node, "on", ignore_case=True) or child(node, "true", ignore_case=True)
    items = child(on_node, "schedule", ignore_case=True)
    schedules: list[Schedule] = []
    presets: dict[str, Preset] = {}
    for n, entry in enumerate(schedule, 1):
        item_node = items.value[n - 1] if items is not None and hasattr(items, "value") else None
        line = (item_node.start_mark.line + 1) if item_node is not None else None
        cron_node = child(item_node, "cron", ignore_case=True)
        if cron_node is not None:
            line = cron_node.start_mark.line + 1
        at = f"{where} line {line}" if line else f"{where} on.schedule[{n}]"
        src = Source("github", file, line=line, text=str(entry.get("cron", "")) if isinstance(entry, dict) else "")
        sched = collect.run(src, f"on.schedule[{n}]", _entry, entry, n, at, wf, file, line, start, preset)
        if sched is not None:
            schedules.append(sched)
            presets[sched.id] = preset
    return collect.done(schedules, (), presets)


def _entry(entry: Any, n: int, at: str, wf: str, file: str, line: int | None, start: object,
           preset: Preset) -> Schedule:
    """The schedule of one ``on.schedule`` entry."""
    if not isinstance(entry, dict) or "cron" not in entry:
        raise InputError(f"{at}: on.schedule entry {n}: expected '- cron: \"<5 fields>\"', got {entry!r:.60}")
    expr = entry["cron"]
    if not isinstance(expr, str):
        raise RuleError(f"{at}: cron: expected a quoted string of 5 fields, got {expr!r:.60}")
    zone = _check_zone(entry.get("timezone", "UTC"), f"{at}: timezone")
    rule = _posix(expr, at)
    sid = f"{wf}:{n}"
    notes = []
    if _minutes_apart(rule) < 5:
        notes.append(f"cron {expr!r} fires more often than every 5 minutes, GitHub's shortest interval; "
                     "calsim expands it as written")
    src = Source("github", file, line=line, text=expr, notes=tuple(notes) + preset.notes)
    try:
        sched = preset.apply(Schedule(sid, zone, start, rule))
    except CalsimError as exc:
        raise reraise(exc, f"{at}: cron={expr!r}") from None
    assert isinstance(sched, Schedule)
    return attach(sched, src)


def _posix(expr: str, at: str) -> str:
    """The cron text if it is the POSIX cron GitHub documents; :class:`RuleError` otherwise."""
    text = expr.strip()
    fields = text.split()
    if text.startswith("@"):
        raise RuleError(f"{at}: cron: {expr!r}: @-macros are not POSIX cron (GitHub takes 5 fields: minute hour "
                        "day-of-month month day-of-week)")
    if len(fields) != 5:
        raise RuleError(f"{at}: cron: {expr!r} has {len(fields)} fields (GitHub takes exactly 5: minute hour "
                        "day-of-month month day-of-week)")
    if any(_NOT_POSIX.search(_NAMES.sub("", f)) for f in fields):
        raise RuleError(f"{at}: cron: {expr!r}: L, W, # and ? are not POSIX cron (allowed * , - / and "
                        "JAN-DEC, SUN-SAT)")
    try:
        Cron.parse(" ".join(fields))
    except CalsimError as exc:
        msg = str(exc)
        raise RuleError(f"{at}: cron: {msg[len('cron: '):] if msg.startswith('cron: ') else msg}") from None
    return " ".join(fields)


def _minutes_apart(rule: str) -> int:
    """The shortest gap in minutes between two consecutive minutes the rule fires in (60 * 24 if once a day)."""
    c = Cron.parse(rule)
    minutes, hours = c.minutes, c.hours
    gaps = [b - a for a, b in zip(minutes, minutes[1:])]
    if len(hours) == 24 or any(b - a == 1 for a, b in zip(hours, hours[1:])):
        gaps.append(60 - minutes[-1] + minutes[0])  # from the last minute of one hour to the first of the next
    return min(gaps) if gaps else 60 * 24


def _concurrency(value: Any, where: str) -> tuple[Overlap, str | None]:
    """The overlap of a workflow-level ``concurrency`` (GitHub: at most one running and one pending run)."""
    if value is None:
        return "allow", None
    cancel: Any = False
    if isinstance(value, dict):
        if "group" not in value:
            raise InputError(f"{where}: concurrency: a mapping needs 'group', got {value!r:.60}")
        cancel = value.get("cancel-in-progress", False)
    elif not isinstance(value, str):
        raise InputError(f"{where}: concurrency: expected a group name or a mapping with 'group', got {value!r:.60}")
    note = None
    if isinstance(cancel, str):
        note = (f"concurrency.cancel-in-progress: {cancel!r} is an expression calsim does not evaluate; "
                "read as false")
        cancel = False
    if cancel is True:
        return "cancel_other", note
    return "buffer_latest", note or ("concurrency: a new run waits while one runs, replacing any run already "
                                     "waiting (overlap='buffer_latest')")
