"""Import django-celery-beat periodic tasks from ``python manage.py dumpdata`` JSON.

The input is the JSON list ``dumpdata`` prints (``dumpdata django_celery_beat``
or a whole database): ``{"model": "django_celery_beat.periodictask", "pk": ...,
"fields": {...}}`` objects beside the ``crontabschedule``, ``intervalschedule``,
``solarschedule`` and ``clockedschedule`` objects their foreign keys name
(field names of django-celery-beat 2.9.0's ``models.py``: ``IntervalSchedule``
141-168, ``CrontabSchedule`` 247-308, ``PeriodicTask`` 432-582). Every
enabled or disabled task becomes a schedule with
:func:`calsim.presets.celery_beat`:

======================================  ================================================================
django-celery-beat                      calsim
======================================  ================================================================
``periodictask.name``                   the schedule id (the model's unique name)
``crontab`` -> ``crontabschedule``      the cron rule, each field read as Celery's ``crontab_parser``
(``minute``, ``hour``, ``day_of_week``, reads it (``celery/schedules.py:227-351``, Celery 5.7.0: ranges
``day_of_month``, ``month_of_year``)    wrap round, ``mon``/``jan`` names, ``day_of_week`` 0-6 with
                                        Sunday 0); the three day fields must *all* match
                                        (``schedules.py:627-631``), so when day-of-month and
                                        day-of-week are both restricted the rule is the RRULE that ANDs
                                        them (Vixie cron would OR them)
``crontabschedule.timezone``            the zone (``TzAwareCrontab``, ``DJANGO_CELERY_BEAT_TZ_AWARE``
                                        default True); absent: ``zone=``
``interval`` -> ``intervalschedule``    ``calsim.Every(timedelta(**{period: every}))`` (Celery's
(``every``, ``period``)                 ``schedule``, elapsed time), anchored at the first of
                                        ``start_time`` (when later than the last run),
                                        ``last_run_at``, ``date_changed``
``start_time`` / ``expires``            ``effective_from`` / ``effective_to`` (``ModelEntry.is_due``,
                                        ``schedulers.py``: no run before ``start_time``, none from
                                        ``expires`` on)
``enabled: false``                      ``Imported.presets[id].suspended`` and a note
``task``                                ``Source.command``
======================================  ================================================================

**Refused per task** (``Imported.refused``; ``strict=True`` raises the
first): ``solar`` (sunrise/sunset at a place) and ``clocked`` (one run at a
time) schedules; ``one_off`` tasks (run once, then beat disables them); no
schedule or more than one; a foreign key to an object not in the file; a
crontab Celery cannot build, with Celery's reason: ``day_of_week`` 7 is one
(``crontab_parser(7)`` ends at 6: "Invalid end range: 7 > 6."), though
django-celery-beat's own validator and its help text ("Sunday is 0 or 7")
let it be saved, and ``DatabaseScheduler.all_as_schedule`` then drops the task
without a word (``schedulers.py:264-268``): calsim says so instead.

``dumpdata`` of django-celery-beat's admin-only model ``periodictasks`` (the
change tracker) and of other apps' models are counted in ``Imported.skipped``,
one entry per model.

>>> from calsim.importers.celery_beat import from_celery_beat
>>> t = from_celery_beat('''[
... {"model": "django_celery_beat.crontabschedule", "pk": 1, "fields": {"minute": "30", "hour": "2",
...  "day_of_week": "mon-fri", "day_of_month": "*", "month_of_year": "*", "timezone": "Europe/Berlin"}},
... {"model": "django_celery_beat.periodictask", "pk": 1, "fields": {"name": "nightly report",
...  "task": "reports.tasks.nightly", "crontab": 1, "interval": null, "enabled": true}}]''')
>>> s = t[0]
>>> s.id, s.zone, s.rule, t.presets[s.id].name
('nightly report', 'Europe/Berlin', '30 2 * * 1,2,3,4,5', 'celery_beat')
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ..errors import CalsimError, InputError, RuleError, ScheduleError
from ..presets import Preset, celery_beat
from ..rules.every import Every
from ..schedule import Schedule
from ..times import US
from ._fields import applied, cron, day_and_rule, flag, instant, iso, obj, show, suspended, text, whole
from ._fields import zone as check_zone
from ._result import Format, Imported, Items, Skipped, Source, read_input, reraise
from ._yaml import load_json
from .crontab import DEFAULT_START

__all__ = ["from_celery_beat"]

FORMAT: Format = "celery_beat"
APP = "django_celery_beat."
PERIODS = {"days": 86400 * US, "hours": 3600 * US, "minutes": 60 * US, "seconds": US, "microseconds": 1}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_DAYS_IN_MONTH = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # celery/schedules.py CRON_DAYS_IN_MONTH
_RANGE_STEPS = re.compile(r"(\w+?)-(\w+)/(\w+)?")  # crontab_parser's patterns, tried with re.match in this order
_RANGE = re.compile(r"(\w+?)-(\w+)")
_STAR_STEPS = re.compile(r"\*/(\w+)?")
_STAR = re.compile(r"^\*$")
_FIELDS = (("minute", 60, 0), ("hour", 24, 0), ("day_of_month", 31, 1), ("month_of_year", 12, 1),
           ("day_of_week", 7, 0))  # (field, max_, min_) as crontab.__init__ expands them


def from_celery_beat(path_or_text: object, *, zone: str = "UTC", source: str | None = None,
                     start: object = DEFAULT_START, version: Any = "5.7", strict: bool = False) -> Imported:
    """Read the periodic tasks of a django-celery-beat ``dumpdata`` (see the module docstring).

    Parameters
    ----------
    path_or_text
        A path, or the JSON itself (a ``str`` starting with ``[``/``{`` or
        holding a line break, or ``bytes``).
    zone
        Celery's ``timezone`` setting: the zone of a crontab without one.
    source
        Name used in messages instead of the file's.
    start
        Anchor of the rules of tasks without ``start_time`` (local wall time).
    version : {"5.7", "5.4"}
        The Celery that runs beat (:func:`calsim.presets.celery_beat`).
    strict
        False (default): a task that cannot be read is refused
        (``Imported.refused``) and the others imported; True: the first raises.

    Raises
    ------
    InputError
        Not JSON, not a ``dumpdata`` list, no periodic task in it; with
        ``strict=True`` (or when every task is refused) a task's error.
    RuleError, ScheduleError, UnknownZoneError
        A task's crontab or interval, schedule kind or zone (only with
        ``strict=True`` or when every task is refused).
    """
    if isinstance(path_or_text, str) and path_or_text.lstrip()[:1] in ("{", "["):
        path_or_text = path_or_text + "\n"  # a one-line JSON document is content, not a file name
    text_, file, path = read_input(path_or_text, "celery_beat", source)
    label = source or (path.name if path is not None else file)
    where = f"celery_beat: {label}"
    default_zone = check_zone(zone, f"{where}: zone")
    try:
        base = celery_beat(version=version)
    except CalsimError as exc:
        raise reraise(exc, where) from None
    doc = load_json(text_, where)
    if not isinstance(doc, list):
        raise InputError(f"{where}: expected the JSON list `manage.py dumpdata` prints, got {show(doc)}")
    related: dict[str, dict[str, Any]] = {"crontabschedule": {}, "intervalschedule": {}, "solarschedule": {},
                                          "clockedschedule": {}}
    tasks: list[tuple[int, Any]] = []
    others: dict[str, int] = {}
    items = Items(strict)
    for n, o in enumerate(doc, 1):
        model = o.get("model") if isinstance(o, dict) else None
        if not isinstance(model, str):
            items.refuse(Source(FORMAT, file, item=n), f"object {n}", InputError(
                f"{where} object {n}: expected a dumpdata object with 'model', 'pk' and 'fields', got {show(o)}"))
            continue
        short = model[len(APP):] if model.startswith(APP) else None
        if short == "periodictask":
            tasks.append((n, o))
        elif short in related and isinstance(o.get("pk"), (int, str)):
            related[short][str(o["pk"])] = o.get("fields")
        else:
            others[model] = others.get(model, 0) + 1
    skipped = [Skipped(Source(FORMAT, file, text=m), m, f"{c} object(s): not a periodic task or its schedule")
               for m, c in others.items()]
    if not tasks and not items.refused:
        raise InputError(f"{where}: no django_celery_beat.periodictask object (found: "
                         f"{', '.join(sorted(others)) or 'none'}); dump them with `manage.py dumpdata "
                         "django_celery_beat`")
    schedules: list[Schedule] = []
    presets: dict[str, Preset] = {}
    seen: dict[str, int] = {}
    for n, o in tasks:
        fields = o.get("fields")
        name = fields.get("name") if isinstance(fields, dict) else None
        task = fields.get("task") if isinstance(fields, dict) else None
        src = Source(FORMAT, file, item=n, command=task if isinstance(task, str) else None)
        what = f"periodic task {name}" if isinstance(name, str) else f"object {n}"
        out = items.run(src, what, _task, o, f"{where} object {n}", related, default_zone, start, base, src)
        if out is None:
            continue
        sched, preset = out
        if sched.id in seen:
            items.refuse(src, what, ScheduleError(f"{where} object {n}: name: {sched.id!r} is given twice (first "
                                                  f"object {seen[sched.id]}); a periodic task's name is unique"))
            continue
        seen[sched.id] = n
        schedules.append(sched)
        presets[sched.id] = preset
    return items.done(schedules, skipped, presets)


def _task(o: dict, at: str, related: dict[str, dict[str, Any]], default_zone: str, start: object, base: Preset,
          src: Source) -> tuple[Schedule, Preset]:
    """The schedule of one ``periodictask`` object."""
    fields = obj(o.get("fields"), f"{at}: fields", "the task's fields (an object)")
    name = text(fields.get("name"), f"{at}: fields.name", required=True)
    where = f"{at} {name!r}"
    task = text(fields.get("task"), f"{where}: task")
    kinds = [k for k in ("crontab", "interval", "solar", "clocked") if fields.get(k) is not None]
    if not kinds:
        raise ScheduleError(f"{where}: no schedule: one of crontab, interval, solar or clocked must be set "
                            "(PeriodicTask.validate_unique)")
    if len(kinds) > 1:
        raise ScheduleError(f"{where}: {' and '.join(kinds)} are all set: only one of clocked, interval, crontab "
                            "or solar may be (PeriodicTask.validate_unique)")
    kind = kinds[0]
    if kind == "solar":
        raise ScheduleError(f"{where}: solar: a solar schedule (sunrise, sunset... at a latitude and longitude) is "
                            "not modelled (allowed: crontab or interval)")
    if kind == "clocked":
        raise ScheduleError(f"{where}: clocked: a clocked schedule runs once at clocked_time, not a recurring "
                            "schedule (allowed: crontab or interval)")
    if flag(fields.get("one_off"), f"{where}: one_off", False):
        raise ScheduleError(f"{where}: one_off: true: beat runs the task once and then disables it, not a "
                            "recurring schedule (allowed: one_off false)")
    pk = fields[kind]
    if isinstance(pk, bool) or not isinstance(pk, (int, str)):
        raise InputError(f"{where}: {kind}: expected the primary key of a {kind} schedule, got {show(pk)}")
    target = related[f"{kind}schedule"].get(str(pk))
    if target is None:
        raise ScheduleError(f"{where}: {kind}: {kind}schedule {pk!r} is not in the file (dump the whole app: "
                            "`manage.py dumpdata django_celery_beat`)")
    target = obj(target, f"{where}: {kind}schedule {pk!r}: fields", "an object")
    notes: list[str] = ["django-celery-beat's DatabaseScheduler keeps last_run_at in the database, as beat's "
                        "schedule file does (schedule_file='kept')"]
    begin = instant(fields.get("start_time"), f"{where}: start_time", naive="UTC")
    end = instant(fields.get("expires"), f"{where}: expires", naive="UTC")
    if fields.get("expire_seconds") is not None:
        whole(fields["expire_seconds"], f"{where}: expire_seconds", 0, 2**31)
        notes.append("expire_seconds: how long a sent message stays valid (the task's expires option); not modelled")
    if kind == "crontab":
        zone = default_zone if target.get("timezone") in (None, "") else \
            check_zone(target["timezone"], f"{where}: crontabschedule {pk!r}: timezone")
        rule: object = _crontab(target, f"{where}: crontabschedule {pk!r}", notes)
        first: object = iso(begin) if begin is not None else start
        text_ = str(rule)
    else:
        zone = default_zone
        period, every = target.get("period"), target.get("every")
        if not isinstance(period, str) or period not in PERIODS:
            raise InputError(f"{where}: intervalschedule {pk!r}: period: {show(period)} is not one of "
                             f"{', '.join(PERIODS)}")
        n = whole(every, f"{where}: intervalschedule {pk!r}: every", 1, 10**12)
        if n * PERIODS[period] > 365_000 * 86400 * US:
            raise RuleError(f"{where}: intervalschedule {pk!r}: every {n} {period} is longer than 1,000 years")
        anchor = _anchor(fields, begin, where, notes)
        rule = Every(dt.timedelta(microseconds=n * PERIODS[period]), anchor=None if anchor is None else iso(anchor))
        first = iso(anchor) if anchor is not None else start
        text_ = f"every {n} {period}"
    preset = base
    if not flag(fields.get("enabled"), f"{where}: enabled", True):
        preset = suspended(preset, notes, "enabled: false")
    out = Source(src.format, src.file, item=src.item, text=text_, command=task or None, notes=tuple(notes))
    sched = Schedule(name, zone, first, rule, effective_from=None if begin is None else iso(begin),
                     effective_to=None if end is None else iso(end))
    return applied(preset, sched, f"{where}: {kind}", out), preset


def _anchor(fields: dict, begin: dt.datetime | None, where: str, notes: list[str]) -> dt.datetime | None:
    """Where an interval counts from: beat's next run is the last run plus the interval (``schedule.is_due``)."""
    last = instant(fields.get("last_run_at"), f"{where}: last_run_at", naive="UTC")
    changed = instant(fields.get("date_changed"), f"{where}: date_changed", naive="UTC")
    if begin is not None and (last is None or begin > last):
        notes.append("interval anchored at start_time (beat runs it first then)")
        return begin
    if last is not None:
        notes.append("interval anchored at last_run_at (beat's next run is the last plus the interval)")
        return last
    if changed is not None:
        notes.append("interval anchored at date_changed (beat's last_run_at when the task never ran)")
        return changed
    notes.append("no start_time, last_run_at or date_changed: the interval is anchored at the start")
    return None


def _crontab(fields: dict, where: str, notes: list[str]) -> str:
    """The rule of a ``crontabschedule``: cron text, or an RRULE when both day fields restrict."""
    sets: dict[str, set[int]] = {}
    for name, max_, min_ in _FIELDS:
        raw = fields.get(name, "*")
        if isinstance(raw, bool) or not isinstance(raw, (str, int)):
            raise InputError(f"{where}: {name}: expected a crontab field such as '*/15', got {show(raw)}")
        try:
            sets[name] = _expand(raw, max_, min_)
        except (ValueError, IndexError, OverflowError) as exc:
            hint = " (Sunday is 0: Celery reads 0-6, and beat drops the task silently)" \
                if name == "day_of_week" and "7 > 6" in str(exc) else ""
            raise RuleError(f"{where}: {name}: {show(raw)}: Celery refuses it ({str(exc)[:80]}){hint}") from None
    if not any(d <= _DAYS_IN_MONTH[m] for m in sets["month_of_year"] for d in sets["day_of_month"]):
        raise RuleError(f"{where}: day_of_month {show(fields.get('day_of_month'))} never occurs in month_of_year "
                        f"{show(fields.get('month_of_year'))} (Celery refuses it)")

    def field(name: str, full: int) -> str:
        values = sorted(sets[name])
        return "*" if len(values) == full else ",".join(map(str, values))

    text_ = " ".join([field("minute", 60), field("hour", 24), field("day_of_month", 31), field("month_of_year", 12),
                      field("day_of_week", 7)])
    c = cron(text_, where)
    anded = day_and_rule(c)
    if anded is None:
        return c.text
    notes.append(f"crontab: Celery requires day_of_month and day_of_week both to match; read as {anded}")
    return anded


def _expand(spec: str | int, max_: int, min_: int) -> set[int]:
    """``crontab._expand_cronspec`` of one field (``celery/schedules.py:475-519``, ``crontab_parser`` 227-351)."""
    if isinstance(spec, int):
        result = {spec}
    else:
        if len(spec) > 1000:
            raise ValueError(f"a field of {len(spec):,} characters")
        result = set()
        for part in spec.split(","):
            if not part:
                raise ValueError("empty part")
            result |= set(_part(part, max_, min_))
    for number in result:
        if number >= max_ + min_ or number < min_:
            raise ValueError(f"Invalid crontab pattern. Valid range is {min_}-{max_ - 1 + min_}. '{number}' was found.")
    return result


def _part(part: str, max_: int, min_: int) -> list[int]:
    m = _RANGE_STEPS.match(part)
    if m is not None:
        if not m.group(3):
            raise ValueError("empty filter")
        return _range((m.group(1), m.group(2)), max_, min_)[::_step(m.group(3))]
    m = _RANGE.match(part)
    if m is not None:
        return _range((m.group(1), m.group(2)), max_, min_)
    m = _STAR_STEPS.match(part)
    if m is not None:
        if not m.group(1):
            raise ValueError("empty filter")
        return list(range(min_, max_ + min_))[::_step(m.group(1))]
    if _STAR.match(part):
        return list(range(min_, max_ + min_))
    return _range((part,), max_, min_)


def _step(text_: str) -> int:
    step = int(text_)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    return step


def _range(toks: tuple[str, ...], max_: int, min_: int) -> list[int]:
    fr = _number(toks[0], max_, min_)
    if len(toks) > 1:
        to = _number(toks[1], max_, min_)
        if to < fr:  # wraps round max_, as Celery's _expand_range does
            return list(range(fr, min_ + max_)) + list(range(min_, to + 1))
        return list(range(fr, to + 1))
    return [fr]


def _number(s: str, max_: int, min_: int) -> int:
    if s[:1] == "-":
        raise ValueError("negative numbers not supported")
    if len(s) > 20:
        raise ValueError(f"Invalid weekday literal {s[:20]!r}...")
    try:
        i = int(s)
    except ValueError:
        abbreviation = s[0:3].lower()
        if abbreviation in _MONTHS:  # yearmonth() is tried before weekday(), in every field
            i = _MONTHS.index(abbreviation) + 1
        elif abbreviation in _DAYS:
            i = _DAYS.index(abbreviation)
        else:
            raise ValueError(f"Invalid weekday literal {s!r}.") from None
    if i > min_ + max_ - 1:
        raise ValueError(f"Invalid end range: {i} > {min_ + max_ - 1}.")
    if i < min_:
        raise ValueError(f"Invalid beginning range: {i} < {min_}.")
    return i
