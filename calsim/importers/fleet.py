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

This is calsim's own format, one more schedule format beside the others of
:mod:`calsim.importers` (``calsim.load`` tells it by its ``[[schedule]]``
tables); a *scenario file* adds the world to simulate and is read by
:func:`calsim.scenario_file.load_scenario`, which reads its schedules here.
Every error names the file, the line of the table, the entry and the key,
and an unknown key comes with a suggestion.

**One bad table does not cost the others** (:func:`read`), as in every
reader of :mod:`calsim.importers`: a table that cannot be read is refused,
listed in ``Imported.refused`` (its message names the file, the table's line
and number, and the key), and the rest is imported; ``strict=True`` raises the
first error; a file where every table is refused raises the first refusal's
error. A file that is not TOML, or has no ``[[schedule]]`` table, is refused
whole.

**A scenario is read whole** (:func:`load`, what
:func:`~calsim.scenario_file.load_scenario` reads a scenario's schedules
with): a scenario is the thing simulated and compared, and a schedule
dropped from it would change every number it gives while still looking like
the scenario its file names, so there a bad table is an error (exit 2 in the
CLI), as a bad ``[[outage]]`` or ``[[budget]]`` is. The schedules of a
scenario file read as a *fleet* (``calsim preview incident.toml``,
``calsim.load``) are refused per table like any fleet's.

>>> import calsim, pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "fleet.toml"
>>> _ = p.write_text('[[schedule]]\\nid = "a"\\nzone = "UTC"\\nstart = "2026-01-01T09:00"\\ncron = "0 9 * * *"\\n')
>>> [s.kind for s in calsim.load(p)]
['cron']
>>> _ = p.write_text('[[schedule]]\\nid = "a"\\nzone = "UTC"\\nstart = "2026-01-01T09:00"\\ncorn = "0 9 * * *"\\n')
>>> calsim.load(p)
Traceback (most recent call last):
calsim.errors.ScheduleError: fleet.toml:1 schedule #1: unknown key 'corn' (did you mean 'cron'?; allowed: ...)
>>> from calsim.importers.fleet import read
>>> _ = p.write_text('[[schedule]]\\nid = "a"\\nzone = "UTC"\\nstart = "2026-01-01T09:00"\\ncron = "0 9 * * *"\\n\\n'
...                  '[[schedule]]\\nid = "b"\\nzone = "UTC"\\nstart = "2026-01-01T09:00"\\ncron = "0 25 * * *"\\n')
>>> fleet = read(p)
>>> [s.id for s in fleet], [(r.source.line, r.what) for r in fleet.refused]
(['a'], [(7, "schedule #2 'b'")])
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import calsim.presets as presets
from ..errors import CalsimError, PolicyError, ScheduleError, closest, shown
from ..input_files import read_file
from ..rules.every import Every
from ..rules.window import Window
from ..schedule import Schedule
from ..simulation.policy import LogNormal, Policy
from ._result import Imported, Items, Source, attach

__all__ = ["load", "read", "read_rows", "read_toml", "refuse_unknown", "header_lines", "header", "where"]

_RULE_KEYS = ("rule", "rrule", "cron", "every", "window")
_OPTIONAL = ("gap", "fold", "invalid_day", "exclude", "revision", "effective_from", "effective_to", "rdate", "exdate")
_KNOWN = {"id", "zone", "start", *_RULE_KEYS, *_OPTIONAL, "policy", "preset"}


def refuse_unknown(where: str, given: Iterable[str], known: set[str]) -> None:
    """Refuse unknown keys, suggesting the closest known one (typos are the usual cause)."""
    unknown = sorted(set(given) - known)
    if unknown:
        near = closest(unknown[0], sorted(known))
        hint = f"did you mean {near!r}?; " if near is not None else ""
        raise ScheduleError(f"{where}: unknown key {unknown[0]!r} ({hint}allowed: {', '.join(sorted(known))})")


def read_toml(path: str | Path, what: str) -> tuple[Path, dict, str]:
    """``(path, data, text)`` of a TOML file; ``what`` (``fleet``, ``scenario``) starts every message."""
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
        raise ScheduleError(f"{what}: {str(path)!r}: a value cannot be read "
                            f"({str(exc).splitlines()[0][:100]})") from None


def header_lines(text: str, table: str) -> list[int]:
    """Line numbers (1-based) of each ``[[table]]`` header, so errors can point at the entry.

    tomllib gives no positions; array-of-tables headers are simple enough to
    find with a line scan (a header inside a multi-line string would only
    shift the reported line, never the parsed data).

    >>> header_lines("[[schedule]]\\nid = 1\\n\\n[[schedule]]\\n", "schedule")
    [1, 4]
    """
    pat = header(table)
    return [i for i, line in enumerate(text.splitlines(), 1) if pat.match(line)]


def header(table: str) -> re.Pattern[str]:
    """The line of a ``[[table]]`` header (:func:`header_lines`; a Dask client counts a fleet's so)."""
    return re.compile(r"^\s*\[\[\s*" + re.escape(table) + r"\s*\]\]")


def where(path: Path, lines: list[int], table: str, n: int) -> str:
    """``fleet.toml:12 schedule #3``: the ``n``-th ``[[table]]`` of the file, for messages."""
    line = f":{lines[n - 1]}" if n - 1 < len(lines) else ""
    return f"{path.name}{line} {table} #{n}"


def load(path: str | Path) -> list[Schedule]:
    """Read the schedules of a TOML fleet file whole (see the module docstring), each with its :class:`Source`:
    the first bad table is an error (a scenario's schedules are read so). :func:`read` refuses per table.

    A scenario file with ``fleet = "..."`` gives that fleet's schedules.
    """
    return list(read(path, strict=True))


def read(path: str | Path, *, strict: bool = False) -> Imported:
    """Read the schedules of a TOML fleet file table by table (see the module docstring): an
    :class:`~calsim.importers.Imported`, a bad table refused (``Imported.refused``) unless ``strict``.

    A scenario file with ``fleet = "..."`` gives that fleet's schedules (a fleet file: one naming yet another
    file is refused).
    """
    return _read(path, strict, follow=True)


def read_rows(path: str | Path, rows: range, total: int) -> list[Schedule]:
    """The schedules of the ``[[schedule]]`` tables numbered ``rows`` (0-based) of a fleet file holding
    ``total`` of them, each checked as :func:`load` checks it (the first bad one is an error): what a Dask
    worker builds of its share of a fleet file (the file is parsed whole, only the share is built)."""
    p, data, text = read_toml(path, "fleet")
    entries = data.get("schedule")
    if not isinstance(entries, list) or len(entries) != total:
        raise ScheduleError(f"fleet: {str(path)!r} holds {len(entries) if isinstance(entries, list) else 0:,} "
                            f"[[schedule]] tables, not the {total:,} counted when the run was planned (was it "
                            "changed?)")
    lines = header_lines(text, "schedule")
    out = []
    for i in rows:
        source = Source("fleet", str(path), line=lines[i] if i < len(lines) else None, item=i + 1)
        out.append(attach(_schedule(where(p, lines, "schedule", i + 1), entries[i]), source))
    return out


def _read(path: str | Path, strict: bool, *, follow: bool) -> Imported:
    p, data, text = read_toml(path, "fleet")
    if "schedule" not in data and isinstance(data.get("scenario"), dict) and "fleet" in data["scenario"]:
        if not follow:
            raise ScheduleError(f"fleet: {str(path)!r} is a scenario file naming another fleet file "
                                f"({shown(data['scenario']['fleet'])}): a scenario's fleet must hold [[schedule]] "
                                "tables")
        return _read(p.parent / str(data["scenario"]["fleet"]), strict, follow=False)
    entries = data.get("schedule")
    if not isinstance(entries, list) or not entries:
        raise ScheduleError(f"fleet: {str(path)!r} has no [[schedule]] tables")
    lines = header_lines(text, "schedule")
    items = Items(strict)
    schedules: list[Schedule] = []
    for i, entry in enumerate(entries, 1):
        source = Source("fleet", str(path), line=lines[i - 1] if i - 1 < len(lines) else None, item=i)
        sid = entry.get("id") if isinstance(entry, dict) else None
        what = f"schedule #{i}" + (f" {shown(sid)}" if isinstance(sid, str) else "")
        schedule = items.run(source, what, _schedule, where(p, lines, "schedule", i), entry)
        if schedule is not None:
            schedules.append(attach(schedule, source))
    return items.done(schedules)


def _schedule(at: str, entry: object) -> Schedule:
    if not isinstance(entry, dict):
        raise ScheduleError(f"{at}: expected a table (id = ..., zone = ..., a rule), got {shown(entry)}")
    refuse_unknown(at, entry, _KNOWN)
    missing = [k for k in ("id", "zone") if k not in entry]
    if missing:
        raise ScheduleError(f"{at}: missing key {missing[0]!r}")
    at = f"{at} ({entry['id']!r})"
    given = [k for k in _RULE_KEYS if k in entry]
    if len(given) != 1:
        raise ScheduleError(f"{at}: give exactly one of {', '.join(_RULE_KEYS)}, got {given or 'none'}")
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
            applied = _preset(entry["preset"]).apply(schedule)
            assert isinstance(applied, Schedule)  # one schedule in, one out
            schedule = applied
        return schedule
    except TypeError as exc:
        raise ScheduleError(f"{at}: {key}: {exc}") from None
    except CalsimError as exc:
        raise type(exc)(f"{at}: {exc}") from None


def _policy(value: object) -> Policy:
    if not isinstance(value, dict):
        raise PolicyError(f"policy: expected a table such as {{ catchup = \"latest\" }}, got {value!r}")
    fields = {f.name for f in dataclasses.fields(Policy) if f.init}
    refuse_unknown("policy", value, fields)
    kw = dict(value)
    if isinstance(kw.get("duration"), dict):
        d = kw["duration"]
        refuse_unknown("policy.duration", d, {"median", "p95"})
        kw["duration"] = LogNormal(d.get("median"), d.get("p95"))
    return Policy(**kw)


def _preset(value: object) -> presets.Preset:
    names = presets.SCHEDULERS
    if not isinstance(value, dict) or "name" not in value:
        raise PolicyError(f"preset: expected a table with name (one of {', '.join(names)}), got {value!r}")
    name = value["name"]
    if name not in names:
        near = closest(str(name), names)
        hint = f" (did you mean {near!r}?)" if near is not None else ""
        raise PolicyError(f"preset.name: unknown scheduler {name!r}{hint} (allowed: {', '.join(names)})")
    fn = getattr(presets, name)
    params = {k: v for k, v in value.items() if k != "name"}
    refuse_unknown(f"preset {name}", params, set(inspect.signature(fn).parameters))
    return fn(**params)
