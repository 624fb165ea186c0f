"""Import Amazon EventBridge Scheduler schedules: ``aws scheduler get-schedule`` JSON or CloudFormation.

Accepted input (JSON or YAML): the object ``aws scheduler get-schedule``
prints (``Name``, ``GroupName``, ``ScheduleExpression``...), a list of them
or ``{"Schedules": [...]}`` of full objects, a CloudFormation template
(``Resources`` of ``Type: AWS::Scheduler::Schedule``; other resources are
listed in ``skipped``) or one such resource, or its bare ``Properties``,
or Terraform's ``aws_scheduler_schedule`` resources (HCL, ``.tf.json`` or
``terraform show -json``; :mod:`calsim.importers.terraform` renames their
arguments to the API's fields, so messages name the API field:
``ScheduleExpression`` for ``schedule_expression``). An item that is not an
object is refused alone.
Every schedule maps onto :func:`calsim.presets.eventbridge`:

===============================================  ====================================================
EventBridge Scheduler (API ``GetSchedule``)      calsim
===============================================  ====================================================
``cron(min hour dom month dow year)``            rule ``quartz:0 min hour dom month dow year``
                                                 (:mod:`calsim.rules.quartz`, EventBridge's cron
                                                 reference: Quartz's ``?``, ``L``, ``W``, ``#``)
``rate(n minute|minutes|hour|hours|day|days)``   ``calsim.Every`` (elapsed time: a day is 24 h, so
                                                 the local hour drifts across DST) from ``StartDate``,
                                                 else ``CreationDate``, else ``start``
``at(yyyy-mm-ddThh:mm:ss)``                      one nominal time: ``FREQ=DAILY;UNTIL=`` itself
``ScheduleExpressionTimezone``                   the zone (absent: UTC, the API default)
``StartDate`` / ``EndDate``                      ``effective_from`` / ``effective_to`` (UTC; a naive
                                                 time is UTC, as the API documents); ignored for
                                                 ``at()``, as EventBridge ignores them
``FlexibleTimeWindow``                           ``eventbridge(flexible_window_minutes=...)`` when
``{Mode, MaximumWindowInMinutes}``               ``Mode`` is ``FLEXIBLE``; ``OFF``: none
``Target.RetryPolicy``                           ``maximum_event_age_seconds``,
``{MaximumEventAgeInSeconds,                     ``maximum_retry_attempts``
MaximumRetryAttempts}``
``State: DISABLED``                              ``Imported.presets[id].suspended`` and a note
``Target.Arn``                                   ``Source.command``
===============================================  ====================================================

**Identity.** ``<GroupName>/<Name>`` (group ``default`` when absent, as
the API does); a CloudFormation resource without ``Name`` uses its logical
id, a bare object without one the file name.

>>> from calsim.importers.eventbridge import from_eventbridge
>>> t = from_eventbridge('{"Name": "nightly", "ScheduleExpression": "cron(30 2 ? * MON-FRI *)",\\n'
...                      ' "ScheduleExpressionTimezone": "Europe/Berlin",\\n'
...                      ' "FlexibleTimeWindow": {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 15}}')
>>> s = t[0]
>>> s.id, s.zone, s.rule, s.gap, s.fold, s.policy.jitter_us // 60_000_000
('default/nightly', 'Europe/Berlin', 'quartz:0 30 2 ? * MON-FRI *', 'skip', 'first', 15)
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import re
from pathlib import Path
from typing import Any

from ..errors import CalsimError, InputError, RuleError
from ..presets import Preset, eventbridge
from ..rules.every import Every
from ..rules.quartz import QuartzCron
from ..schedule import Schedule
import calsim.importers.terraform as terraform
from ._yaml import load_json, load_one
from ._result import Imported, Items, Skipped, Source, attach, read_input, reraise
from .crontab import DEFAULT_START, _check_zone

__all__ = ["from_eventbridge", "RESOURCE_TYPE"]

RESOURCE_TYPE = "AWS::Scheduler::Schedule"
_RATE = re.compile(r"^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$")
_AT = re.compile(r"^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$")
_UNITS = {"minute": "min", "hour": "h", "day": "d"}


class _Intrinsic:
    """A CloudFormation short-form function (``!Ref``, ``!Sub``...): not a value calsim can read."""

    def __init__(self, tag: str) -> None:
        self.tag = tag


@functools.cache
def _loader() -> type:
    """A SafeLoader that reads CloudFormation's ``!Ref``-style tags as :class:`_Intrinsic`.

    Built on first use, so that importing the importers does not import PyYAML.
    """
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: _Intrinsic("!" + suffix))
    return Loader


def from_eventbridge(path_or_text: object, *, source: str | None = None, start: object = DEFAULT_START,
                     strict: bool = False) -> Imported:
    """Read EventBridge Scheduler schedules (see the module docstring).

    Parameters
    ----------
    path_or_text
        A path (``str`` without a line break, or ``pathlib.Path``), or the
        content (a ``str`` with a line break or starting with ``{``/``[``,
        or ``bytes``).
    source
        Name used in ids and messages instead of the file's.
    start
        Anchor of cron rules without ``StartDate`` (local wall time), and of
        ``rate()`` rules without ``StartDate`` or ``CreationDate``.
    strict
        False (default): a bad schedule (of several in the file) is refused
        (``Imported.refused``) and the others imported; True: the first bad
        schedule raises.

    Returns
    -------
    Imported
        Schedules with their sources (``item``: 1-based schedule in the file;
        ``text``: the ``ScheduleExpression``; ``command``: ``Target.Arn``),
        the other CloudFormation resources skipped, the preset per id.

    Raises
    ------
    InputError
        Unreadable file, not JSON/YAML, no schedule in it, a field of the
        wrong type or value (the schedule and field named).
    RuleError
        A ``ScheduleExpression`` EventBridge would refuse.
    """
    if isinstance(path_or_text, str) and path_or_text.lstrip()[:1] in ("{", "["):
        path_or_text = path_or_text + "\n"  # a one-line JSON document is content, not a file name
    text, file, path = read_input(path_or_text, "eventbridge", source)
    label = source or (path.name if path is not None else file)
    where = f"eventbridge: {label}"
    stem = Path(label).name.split(".")[0] or "schedule"
    if terraform.is_terraform(text):
        found, skipped = _terraform(text, "hcl", where, file)
    else:
        data = _load(text, where)
        found, skipped = (_terraform(data, "json", where, file) if terraform.looks_like(data)
                          else _schedules(data, where, file))
    if not found:
        raise InputError(f"{where}: no schedule found (expected get-schedule JSON with ScheduleExpression, a "
                         f"CloudFormation template with Type: {RESOURCE_TYPE}, or Terraform "
                         f"{terraform.RESOURCE} resources)")
    schedules: list[Schedule] = []
    presets: dict[str, Preset] = {}
    items = Items(strict)
    for k, (props, logical) in enumerate(found, 1):
        expr = props.get("ScheduleExpression", "") if isinstance(props, dict) else ""
        src = Source("eventbridge", file, item=k, text=_show(expr) if not isinstance(expr, str) else expr[:200])
        name = props.get("Name") if isinstance(props, dict) else None
        what = f"schedule {name if isinstance(name, str) and name else logical or k}"
        out = items.run(src, what, _schedule, props, logical or stem, f"{where} schedule {k}", file, k, start)
        if out is None:
            continue
        sched, preset = out
        if any(s.id == sched.id for s in schedules):
            items.refuse(src, what, InputError(f"{where} schedule {k}: id {sched.id!r} repeats "
                                               "(GroupName/Name must be unique)"))
            continue
        schedules.append(sched)
        presets[sched.id] = preset
    return items.done(schedules, skipped, presets)


def _load(text: str, where: str) -> Any:
    if text.lstrip()[:1] in ("{", "["):
        return load_json(text, where)
    return load_one(text, where, _loader())


def _terraform(data: Any, shape: str, where: str, file: str) -> tuple[list[tuple[dict, str | None]], list[Skipped]]:
    """Schedules of a Terraform document (:mod:`calsim.importers.terraform`), other resources skipped."""
    found, others = terraform.resources(data, shape, where)
    skipped = [Skipped(Source("eventbridge", file, item=k, text=addr), f"resource {addr}",
                       f"type is not {terraform.RESOURCE}") for k, addr in enumerate(others, 1)]
    return list(found), skipped


def _schedules(data: Any, where: str, file: str) -> tuple[list[tuple[dict, str | None]], list[Skipped]]:
    """``(Properties, logical id)`` of every schedule in the document, and the resources skipped."""
    found: list[tuple[dict, str | None]] = []
    skipped: list[Skipped] = []
    if isinstance(data, list):
        for item in data:
            found.append((item, None))  # a non-object item is refused on its own (_schedule)
        return found, skipped
    data = _obj(data, where)
    if isinstance(data.get("Resources"), dict):
        for k, (logical, res) in enumerate(data["Resources"].items(), 1):
            kind = res.get("Type") if isinstance(res, dict) else None
            if kind != RESOURCE_TYPE:
                skipped.append(Skipped(Source("eventbridge", file, item=k, text=str(logical)),
                                       f"resource {logical!r}", f"Type {_show(kind)} is not {RESOURCE_TYPE}"))
                continue
            found.append((res.get("Properties"), str(logical)))
        return found, skipped
    if data.get("Type") == RESOURCE_TYPE:
        return [(_obj(data.get("Properties"), f"{where}: Properties"), None)], skipped
    if isinstance(data.get("Schedules"), list) and "ScheduleExpression" not in data:
        items = data["Schedules"]
        if items and all(isinstance(i, dict) and "ScheduleExpression" not in i for i in items):
            raise InputError(f"{where}: Schedules has no ScheduleExpression (list-schedules output is a summary; "
                             "read each with aws scheduler get-schedule)")
        return [(i, None) for i in items], skipped
    if "ScheduleExpression" in data:
        return [(data, None)], skipped
    return found, skipped


def _schedule(props: Any, fallback: str, where: str, file: str, item: int, start: object) -> tuple[Schedule, Preset]:
    props = _obj(props, f"{where} ({fallback})" if fallback else where)
    name = _str(props.get("Name", fallback), f"{where}: Name")
    group = _str(props.get("GroupName", "default"), f"{where}: GroupName") or "default"
    where = f"{where} {name!r}"
    sid = f"{group}/{name}"
    expr = _str(props.get("ScheduleExpression"), f"{where}: ScheduleExpression", required=True).strip()
    zone = _check_zone(_str(props.get("ScheduleExpressionTimezone", "UTC"), f"{where}: ScheduleExpressionTimezone")
                       or "UTC", f"{where}: ScheduleExpressionTimezone")
    notes: list[str] = []
    settings: dict[str, Any] = {}
    window = props.get("FlexibleTimeWindow")
    if window is None:
        notes.append("no FlexibleTimeWindow (the API requires one): read as Mode OFF")
    else:
        window = _obj(window, f"{where}: FlexibleTimeWindow")
        mode = _str(window.get("Mode"), f"{where}: FlexibleTimeWindow.Mode", required=True)
        if mode == "FLEXIBLE":
            settings["flexible_window_minutes"] = _int(window.get("MaximumWindowInMinutes"),
                                                       f"{where}: FlexibleTimeWindow.MaximumWindowInMinutes")
        elif mode != "OFF":
            raise InputError(f"{where}: FlexibleTimeWindow.Mode: {mode!r} is not OFF or FLEXIBLE")
    target = props.get("Target")
    arn = None
    if target is not None:
        target = _obj(target, f"{where}: Target")
        arn = target.get("Arn")
        arn = arn if isinstance(arn, str) else None
        retry = target.get("RetryPolicy")
        if retry is not None:
            retry = _obj(retry, f"{where}: Target.RetryPolicy")
            for key, arg in (("MaximumEventAgeInSeconds", "maximum_event_age_seconds"),
                             ("MaximumRetryAttempts", "maximum_retry_attempts")):
                if retry.get(key) is not None:
                    settings[arg] = _int(retry[key], f"{where}: Target.RetryPolicy.{key}")
    try:
        preset = eventbridge(**settings)
    except CalsimError as exc:
        raise reraise(exc, where) from None
    state = _str(props.get("State", "ENABLED"), f"{where}: State")
    if state == "DISABLED":
        preset = dataclasses.replace(preset, suspended=True)
        notes.append("State DISABLED: EventBridge invokes nothing; expanded as if enabled "
                     "(Imported.presets[id].suspended)")
    elif state != "ENABLED":
        raise InputError(f"{where}: State: {state!r} is not ENABLED or DISABLED")
    if props.get("ActionAfterCompletion") == "DELETE":
        notes.append("ActionAfterCompletion DELETE: the schedule is deleted after its last invocation")
    begin = _instant(props.get("StartDate"), f"{where}: StartDate")
    end = _instant(props.get("EndDate"), f"{where}: EndDate")
    rule, anchor = _rule(expr, where, begin, _instant(props.get("CreationDate"), f"{where}: CreationDate"), notes)
    if expr.startswith("at(") and (begin is not None or end is not None):
        # GetScheduleOutput.EndDate: "EventBridge Scheduler ignores EndDate for one-time schedules".
        notes.append("at(): StartDate and EndDate are ignored for a one-time schedule")
        begin = end = None
    if anchor is None:
        anchor = begin if begin is not None else start
    src = Source("eventbridge", file, item=item, text=expr, command=arn, notes=tuple(notes))
    try:
        sched = Schedule(sid, zone, anchor, rule, effective_from=begin, effective_to=end)
        applied = preset.apply(sched)
    except CalsimError as exc:
        field = "ScheduleExpression" if isinstance(exc, RuleError) else "schedule"
        raise reraise(exc, f"{where}: {field}={expr!r}") from None
    assert isinstance(applied, Schedule)
    return attach(applied, src), preset


def _rule(expr: str, where: str, begin: str | None, created: str | None, notes: list[str]) -> tuple[object, object]:
    """``(rule, anchor or None)`` of a ``ScheduleExpression``."""
    if expr.startswith("cron("):
        try:
            return QuartzCron.parse(expr, dialect="eventbridge").quartz_text(), None
        except RuleError as exc:
            raise RuleError(f"{where}: ScheduleExpression: {exc}") from None
    m = _RATE.match(expr)
    if m is not None:
        n = int(m.group(1)) if len(m.group(1)) <= 12 else 10**12  # Every() refuses past 1,000 years
        if n < 1:
            raise InputError(f"{where}: ScheduleExpression: {expr!r} has value 0 (allowed a whole number >= 1)")
        anchor = begin or created
        if anchor is None:
            notes.append("rate(): no StartDate or CreationDate; the first invocation is taken at the start")
        else:
            notes.append("rate(): the first invocation is taken at StartDate (else CreationDate); "
                         "EventBridge does not document it")
        return Every(f"{n}{_UNITS[m.group(2).rstrip('s')]}", anchor=anchor), (begin or created)
    m = _AT.match(expr)
    if m is not None:
        try:
            dt.datetime.fromisoformat(m.group(1))
        except ValueError:
            raise InputError(f"{where}: ScheduleExpression: {expr!r} is not a real date and time") from None
        # UNTIL = the start, not COUNT=1: COUNT skips a time in a DST gap and would move on to the next
        # day (RFC 5545 §3.3.10); a one-time schedule has one nominal time, whatever the gap policy does.
        notes.append("at(): EventBridge does not document a time in a DST gap or fold; the preset's gap/fold apply")
        return f"FREQ=DAILY;UNTIL={m.group(1).replace('-', '').replace(':', '')}", m.group(1)
    shown = expr if len(expr) <= 60 else expr[:57] + "..."
    raise RuleError(f"{where}: ScheduleExpression: {shown!r} is not cron(...), rate(n unit) or "
                    "at(yyyy-mm-ddThh:mm:ss) (units: minute, minutes, hour, hours, day, days)")


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, _Intrinsic) else value.tag
    return text if len(text) <= 60 else text[:57] + "..."


def _obj(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        kind = f"a CloudFormation {value.tag}" if isinstance(value, _Intrinsic) else type(value).__name__
        raise InputError(f"{where}: expected an object (mapping), got {kind}")
    return value


def _str(value: Any, where: str, *, required: bool = False) -> str:
    if value is None and not required:
        return ""
    if isinstance(value, _Intrinsic) or (isinstance(value, dict) and len(value) == 1 and
                                         any(str(k) == "Ref" or str(k).startswith("Fn::") for k in value)):
        raise InputError(f"{where}: {_show(value)} is a CloudFormation function; calsim needs the literal value")
    if isinstance(value, terraform.Expression):
        raise InputError(f"{where}: {_show(value)} is a Terraform expression; calsim needs the literal value "
                         "(read the output of terraform show -json instead)")
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a string, got {_show(value)}")
    return value


def _int(value: Any, where: str) -> int:
    if isinstance(value, terraform.Expression):
        _str(value, where)
    if isinstance(value, str) and value.strip().isdigit():  # CloudFormation YAML may quote numbers
        if len(value.strip()) > 18:
            raise InputError(f"{where}: a number of {len(value.strip()):,} digits is out of range")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}: expected a whole number, got {_show(value)}")
    return value


def _instant(value: Any, where: str) -> str | None:
    """An ISO instant (``Z`` added to a naive time: the API's dates are UTC), or None."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):  # YAML reads an unquoted timestamp itself
        value = value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)
        return value.isoformat()
    text = _str(value, where)
    try:
        t = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InputError(f"{where}: {_show(value)} is not an ISO 8601 date and time "
                         "(e.g. 2026-03-01T00:00:00Z)") from None
    return (t if t.tzinfo is not None else t.replace(tzinfo=dt.timezone.utc)).isoformat()
