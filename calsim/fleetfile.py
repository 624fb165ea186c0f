"""Fleet files: schedules written in TOML, one ``[[schedule]]`` table each.

```toml
[[schedule]]
id = "billing/nightly"
zone = "America/New_York"
start = "2026-03-01T02:30"        # naive: local wall time; with Z/offset: an instant
rrule = "FREQ=DAILY"              # or cron = "30 2 * * *", or rule = "..." (either form)
gap = "shift"                     # skip | shift | next_valid | shift_backward | reject
fold = "first"                    # first | second | both | reject
exclude = ["holidays:US"]

[[schedule]]
id = "etl/every-6h"
zone = "UTC"
start = "2026-01-01T00:00Z"
every = { period = "6h" }         # anchor = "..." optional

[[schedule]]
id = "support/business-hours"
zone = "Europe/Berlin"
start = "2026-01-01T00:00"
window = { start = "08:00", end = "20:00", every = "30min", days = "MO,TU,WE,TH,FR" }
```

Optional keys: ``invalid_day``, ``revision``, ``effective_from``,
``effective_to``, ``rdate``, ``exdate``, and how the scheduler runs it:
either ``policy = { catchup = "latest", overlap = "skip", cost = 1.0,
account = "tenant-a", duration = "5min" }`` (the fields of
:class:`calsim.Policy`; ``duration = { median = "5min", p95 = "20min" }`` is a
:class:`calsim.LogNormal`) or ``preset = { name = "kubernetes",
concurrency_policy = "Forbid" }`` (a :mod:`calsim.presets` function with its
own parameter names), or both (the preset's scheduler fields win, the
policy's workload fields ``duration``, ``cost``, ``account``... stay).

A *scenario file* (:func:`load_scenario`) adds the world to simulate::

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

Every error names the file, the line of the table, the entry and the key,
and an unknown key comes with a suggestion.

>>> import calsim, pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "fleet.toml"
>>> _ = p.write_text('[[schedule]]\\nid = "a"\\nzone = "UTC"\\nstart = "2026-01-01T09:00"\\ncron = "0 9 * * *"\\n')
>>> [s.kind for s in calsim.load(p)]
['cron']
>>> _ = p.write_text('[[schedule]]\\nid = "a"\\nzone = "UTC"\\nstart = "2026-01-01T09:00"\\ncorn = "0 9 * * *"\\n')
>>> calsim.load(p)
Traceback (most recent call last):
calsim.errors.ScheduleError: fleet.toml:1 schedule #1: unknown key 'corn' (did you mean 'cron'?; allowed: ...)
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import tomllib
from pathlib import Path
from typing import Any

from .input_files import read_file
from .errors import CalsimError, PolicyError, ScheduleError
from .rules.every import Every
from .rules.window import Window
from .schedule import Schedule

__all__ = ["load", "load_scenario"]

_RULE_KEYS = ("rule", "rrule", "cron", "every", "window")
_OPTIONAL = ("gap", "fold", "invalid_day", "exclude", "revision", "effective_from", "effective_to", "rdate", "exdate")
_KNOWN = {"id", "zone", "start", *_RULE_KEYS, *_OPTIONAL, "policy", "preset"}
_SCENARIO_KEYS = {"name", "fleet", "start", "end", "release", "tick", "seed", "capacity"}
_TOP_KEYS = {"scenario", "schedule", "outage", "budget", "event", "failures"}
_EVENT_TYPES = ("pause", "resume", "trigger", "tzupgrade")


def _unknown(where: str, given: object, known: set[str]) -> None:
    """Refuse unknown keys, suggesting the closest known one (typos are the usual cause)."""
    unknown = sorted(set(given) - known)  # type: ignore[arg-type]
    if unknown:
        near = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        hint = f"did you mean {near[0]!r}?; " if near else ""
        raise ScheduleError(f"{where}: unknown key {unknown[0]!r} ({hint}allowed: {', '.join(sorted(known))})")


def _read(path: str | Path, what: str) -> tuple[Path, dict, str]:
    p = Path(path)
    text = read_file(p, what)
    assert isinstance(text, str)
    try:
        return p, tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise ScheduleError(f"{what}: {str(path)!r} is not valid TOML ({exc})") from None
    except RecursionError:
        raise ScheduleError(f"{what}: {str(path)!r}: tables or arrays nested too deeply") from None
    except ValueError as exc:  # tomllib: an integer of more than 4,300 digits
        raise ScheduleError(f"{what}: {str(path)!r}: a value cannot be read ({str(exc).splitlines()[0][:100]})") from None


def _header_lines(text: str, table: str) -> list[int]:
    """Line numbers (1-based) of each ``[[table]]`` header, so errors can point at the entry.

    tomllib gives no positions; array-of-tables headers are simple enough to
    find with a line scan (a header inside a multi-line string would only
    shift the reported line, never the parsed data).
    """
    pat = re.compile(r"^\s*\[\[\s*" + re.escape(table) + r"\s*\]\]")
    return [i for i, line in enumerate(text.splitlines(), 1) if pat.match(line)]


def _where(path: Path, lines: list[int], table: str, n: int) -> str:
    line = f":{lines[n - 1]}" if n - 1 < len(lines) else ""
    return f"{path.name}{line} {table} #{n}"


def load(path: str | Path) -> list[Schedule]:
    """Read the schedules of a TOML fleet file (see the module docstring).

    A scenario file with ``fleet = "..."`` gives that fleet's schedules.
    """
    p, data, text = _read(path, "fleet")
    if "schedule" not in data and isinstance(data.get("scenario"), dict) and "fleet" in data["scenario"]:
        return load(p.parent / str(data["scenario"]["fleet"]))
    entries = data.get("schedule")
    if not isinstance(entries, list) or not entries:
        raise ScheduleError(f"fleet: {str(path)!r} has no [[schedule]] tables")
    from .importers._result import Source, attach

    lines = _header_lines(text, "schedule")
    return [
        attach(_schedule(_where(p, lines, "schedule", i), e),
               Source("fleet", str(path), line=lines[i - 1] if i - 1 < len(lines) else None, item=i))
        for i, e in enumerate(entries, 1)
    ]


def _schedule(where: str, entry: dict) -> Schedule:
    _unknown(where, entry, _KNOWN)
    missing = [k for k in ("id", "zone") if k not in entry]
    if missing:
        raise ScheduleError(f"{where}: missing key {missing[0]!r}")
    where = f"{where} ({entry['id']!r})"
    given = [k for k in _RULE_KEYS if k in entry]
    if len(given) != 1:
        raise ScheduleError(f"{where}: give exactly one of {', '.join(_RULE_KEYS)}, got {given or 'none'}")
    key = given[0]
    value = entry[key]
    try:
        if key == "every":
            rule: object = Every(**value) if isinstance(value, dict) else Every(value)
        elif key == "window":
            if not isinstance(value, dict):
                raise ScheduleError(f"window: must be a table with start, end, every (and days), got {value!r}")
            rule = Window(**value)
        else:
            rule = value
        kw: dict[str, Any] = {k: entry[k] for k in _OPTIONAL if k in entry}
        for k in ("rdate", "exdate"):
            if k in kw:
                if not isinstance(kw[k], list):
                    raise ScheduleError(f"{k}: expected a list of times, got {kw[k]!r}")
                kw[k] = tuple(kw[k])
        if "policy" in entry:
            kw["policy"] = _policy(entry["policy"])
        schedule = Schedule(entry["id"], entry["zone"], entry.get("start"), rule, **kw)
        if "preset" in entry:
            schedule = _preset(entry["preset"]).apply(schedule)
        return schedule
    except TypeError as exc:
        raise ScheduleError(f"{where}: {key}: {exc}") from None
    except CalsimError as exc:
        raise type(exc)(f"{where}: {exc}") from None


def _policy(value: object):
    from .simulation.policy import LogNormal, Policy

    if not isinstance(value, dict):
        raise PolicyError(f"policy: expected a table such as {{ catchup = \"latest\" }}, got {value!r}")
    fields = {f.name for f in dataclasses.fields(Policy) if f.init}
    _unknown("policy", value, fields)
    kw = dict(value)
    if isinstance(kw.get("duration"), dict):
        d = kw["duration"]
        _unknown("policy.duration", d, {"median", "p95"})
        kw["duration"] = LogNormal(d.get("median"), d.get("p95"))
    return Policy(**kw)


def _preset(value: object):
    import inspect

    from . import presets

    names = ("kubernetes", "temporal", "apscheduler", "quartz", "systemd", "cronie", "eventbridge")
    if not isinstance(value, dict) or "name" not in value:
        raise PolicyError(f"preset: expected a table with name (one of {', '.join(names)}), got {value!r}")
    name = value["name"]
    if name not in names:
        near = difflib.get_close_matches(str(name), names, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise PolicyError(f"preset.name: unknown scheduler {name!r}{hint} (allowed: {', '.join(names)})")
    fn = getattr(presets, name)
    params = {k: v for k, v in value.items() if k != "name"}
    _unknown(f"preset {name}", params, set(inspect.signature(fn).parameters))
    return fn(**params)


def load_scenario(path: str | Path, **overrides: object):
    """Read a scenario file (see the module docstring) into a :class:`calsim.Scenario`.

    ``overrides`` replace scenario fields (e.g. ``name=...``, ``schedules=...``).

    >>> import calsim
    >>> from calsim.demo import examples_dir
    >>> sc = calsim.load_scenario(examples_dir() / "incident.toml")
    >>> sc.name, len(sc.outages), [b.account for b in sc.budgets]
    ('incident', 1, ['tenant-a', 'tenant-b'])
    """
    from .simulation.policy import Failures
    from .simulation.scenario import Budget, Outage, Pause, Resume, Scenario, Trigger, TzUpgrade

    p, data, text = _read(path, "scenario")
    _unknown(p.name, data, _TOP_KEYS)
    head = data.get("scenario")
    if not isinstance(head, dict):
        raise ScheduleError(f"scenario: {str(path)!r} has no [scenario] table")
    _unknown(f"{p.name} [scenario]", head, _SCENARIO_KEYS)
    for key in ("name", "start", "end"):
        if key not in head and key not in overrides:
            raise ScheduleError(f"{p.name} [scenario]: missing key {key!r}")
    if "schedules" in overrides:
        schedules = overrides.pop("schedules")
    elif "fleet" in head:
        if "schedule" in data:
            raise ScheduleError(f"{p.name} [scenario]: give fleet = \"...\" or [[schedule]] tables, not both")
        schedules = load(p.parent / str(head["fleet"]))
    else:
        schedules = load(p)

    def build(table: str, cls: Any, entry: object, n: int, lines: list[int]) -> Any:
        where = _where(p, lines, table, n)
        if not isinstance(entry, dict):
            raise ScheduleError(f"{where}: expected a table, got {entry!r}")
        try:
            return cls(**entry)
        except TypeError as exc:
            raise ScheduleError(f"{where}: {_type_error(exc)}") from None
        except CalsimError as exc:
            raise type(exc)(f"{where}: {exc}") from None

    def many(table: str, cls: Any) -> list:
        entries = data.get(table, [])
        if not isinstance(entries, list):
            raise ScheduleError(f"{p.name}: {table} must be [[{table}]] tables")
        lines = _header_lines(text, table)
        return [build(table, cls, e, i, lines) for i, e in enumerate(entries, 1)]

    outages = many("outage", Outage)
    budgets = many("budget", Budget)
    events = []
    lines = _header_lines(text, "event")
    kinds = {"pause": Pause, "resume": Resume, "trigger": Trigger, "tzupgrade": TzUpgrade}
    for i, e in enumerate(data.get("event", []), 1):
        kind = e.get("type") if isinstance(e, dict) else None
        if kind not in kinds:
            raise ScheduleError(f"{_where(p, lines, 'event', i)}: type: {kind!r} (allowed: {', '.join(_EVENT_TYPES)}; "
                                "revisions are written as schedules with revision/effective_from)")
        events.append(build("event", kinds[kind], {k: v for k, v in e.items() if k != "type"}, i, lines))
    failures = None
    if "failures" in data:
        failures = build("failures", Failures, data["failures"], 1, [])
    kw = {k: head[k] for k in ("release", "tick", "seed", "capacity") if k in head}
    kw.update(overrides)
    try:
        return Scenario(kw.pop("name", head.get("name")), schedules, kw.pop("start", head.get("start")),
                        kw.pop("end", head.get("end")), outages=outages, budgets=budgets, events=events,
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
