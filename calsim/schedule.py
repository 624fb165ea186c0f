"""``Schedule``: a user's rule for when to act, with its zone, time semantics and run policy.

A schedule is immutable; a changed schedule is a new *revision* with the same
``id``, valid over a half-open UTC interval ``[effective_from, effective_to)``.

The rule may be RRULE text (bare, ``RRULE:``-prefixed, or a full
``DTSTART;TZID=...`` + ``RRULE:`` block), a cron expression, ``Every`` or
``Window`` (or an already parsed ``RRule``/``Cron``). Strings are told apart
by their form: ``FREQ=`` makes an RRULE, five fields or an ``@macro`` a cron,
an ``OnCalendar=`` prefix a systemd calendar expression
(:mod:`calsim.rules.oncalendar`; its trailing zone name, if any, overrides
``zone``), a ``quartz:`` prefix a Quartz cron expression with seconds, ``?``
and an optional year (:mod:`calsim.rules.quartz`), a ``robfig:`` prefix a
robfig/cron v3 spec as a Kubernetes CronJob reads and fires it
(:mod:`calsim.rules.robfig`; its DST is robfig's, not ``gap``/``fold``).

``start`` anchors the rule (RRULE's DTSTART): naive means local wall time in
``zone``, with ``Z`` or an offset it is an instant (its local time in the zone
then anchors the rule). It is an occurrence only when it matches the rule,
as python-dateutil does (RFC 5545 would always count it).

>>> import calsim
>>> s = calsim.Schedule("report", "America/New_York", "2026-03-05T09:00", "FREQ=DAILY;COUNT=3")
>>> s.kind, s.gap, s.fold, s.invalid_day
('rrule', 'skip', 'first', 'omit')
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import KW_ONLY, dataclass, field
from typing import cast, get_args

from .calendars import Calendar, as_calendars
from .emulation import SCHEDULER, walks
from .errors import (CalsimError, RuleError, ScheduleError, UnknownReleaseError, check_choice,
                     refuse_unknown_keywords, shown)
from .resolution import ByLocalHour, FoldPolicy, GapPolicy, check_fold, check_gap
from .rules.apscheduler_cron import PREFIX as _APSCHEDULER, ApschedulerCron
from .rules.cron import Cron
from .rules.every import Every
from .rules.oncalendar import PREFIX as _ONCALENDAR, OnCalendar
from .rules.quartz import PREFIX as _QUARTZ, QuartzCron
from .rules.robfig import PREFIX as _ROBFIG, RobfigCron
from .rules.kind import RuleKind
from .rules.rrule import InvalidDay, RRule
from .rules.rrule_block import parse_block
from .times import instant_us, iso_local, local_us

__all__ = ["Schedule", "InvalidDayPolicy", "parse_rule", "check_revisions"]

MAX_ID_LENGTH = 1000
MAX_REVISION = 2**62

InvalidDayPolicy = InvalidDay  # "omit" | "backward" | "forward" (RFC 7529 SKIP names)
Rule = RuleKind  # (any rule kind: RRule, Cron, Every, Window, OnCalendar, QuartzCron, RobfigCron, ApschedulerCron)
_CRON_FIELD = re.compile(r"^[\w*/,\-#?]+$")


def parse_rule(rule: object) -> tuple[Rule, int | None, str | None]:
    """A rule object from text or an object; returns ``(rule, dtstart_wall_us, tzid)`` of a block."""
    if isinstance(rule, RuleKind):
        return rule, None, None
    if not isinstance(rule, str):
        raise RuleError(
            f"rule: expected RRULE text, a cron expression, OnCalendar=..., Every(...) or Window(...), "
            f"got {type(rule).__name__} {shown(rule)}"
        )
    text = rule.strip()
    if text.startswith(_ONCALENDAR):  # a systemd calendar expression, systemd.time(7)
        return OnCalendar.parse(text), None, None
    if text[: len(_QUARTZ)].lower() == _QUARTZ:  # an explicit dialect, so 5-field cron stays Vixie-strict
        return QuartzCron.parse(text), None, None
    if text[: len(_ROBFIG)].lower() == _ROBFIG:  # robfig/cron v3, as a Kubernetes CronJob reads and walks it
        return RobfigCron.parse(text), None, None
    if text[: len(_APSCHEDULER)].lower() == _APSCHEDULER:  # APScheduler 3.x CronTrigger fields, walked as it does
        return ApschedulerCron.parse(text), None, None
    upper = text.upper()
    if "FREQ=" in upper:
        if "DTSTART" in upper or "\n" in text:
            r, dtstart, tzid = parse_block(text)
            return r, dtstart, tzid
        return RRule.parse(text), None, None
    if text.startswith("@") or (len(text.split()) == 5 and all(_CRON_FIELD.match(f) for f in text.split())):
        return Cron.parse(text), None, None
    raise RuleError(
        f"rule: cannot tell the kind of {shown(rule)} (expected RRULE text with FREQ=..., "
        "a 5-field cron expression or @daily-style macro, 'OnCalendar=<systemd calendar expression>', "
        "'quartz:<Quartz cron expression>', 'robfig:<robfig/cron v3 spec>', "
        "'apscheduler:<CronTrigger fields>', "
        "Every(...) or Window(...))"
    )


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Schedule:
    """A schedule revision (see the module docstring).

    ``id``, ``zone``, ``start`` and ``rule`` are positional (DESIGN.md §3);
    every option after them is keyword-only.

    Parameters
    ----------
    id
        Identity shared by all revisions of the schedule.
    zone
        IANA zone in which the rule's wall times are read.
    start
        Anchor of the rule (DTSTART); may be None when ``rule`` is a
        ``DTSTART`` block.
    rule
        RRULE text, cron text, ``OnCalendar=...``, ``quartz:...``, ``Every``,
        ``Window``, or a parsed ``RRule``/``Cron``/``OnCalendar``/``QuartzCron``.
    gap : {"skip", "shift", "next_valid", "shift_backward", "reject", "scheduler"}
        A nominal time that does not exist (DESIGN.md §2); default ``"skip"``.
        ``"scheduler"`` (with ``fold="scheduler"``): as the rule's scheduler
        walks the calendar (robfig/cron for ``robfig:`` rules;
        :mod:`calsim.emulation`), quirks included. A
        :class:`calsim.ByLocalHour` of two policies picks one by the local hour
        of the time (Dagster repairs only hours 1-3).
    fold : {"first", "second", "both", "reject", "scheduler"}
        A nominal time that happens twice; default ``"first"``; or a
        :class:`calsim.ByLocalHour` of two of these.
    invalid_day : {"omit", "backward", "forward"}
        A day the month lacks (the 31st in April): no run (RFC 5545, default),
        the last day of the month, or the first day of the next (RFC 7529 SKIP).
    exclude
        Calendars, dates or calendar names such as ``"holidays:US"`` or
        ``"business:CN"`` (see :mod:`calsim.calendars`); default none.
    revision : int in 1..2**62
        This revision's number (default 1).
    effective_from, effective_to : instant or None
        This revision's half-open UTC validity interval (None: unbounded).
    policy : Policy or None
        The run policy (:class:`calsim.Policy`) used by the simulation (None: ``Policy()``).
    rdate, exdate : sequence of naive local times
        Extra nominal local times (RFC 5545 RDATE, not counted by COUNT) and
        removed ones (EXDATE, applied after COUNT).
    source
        Provenance (a :class:`calsim.importers.Source`), filled by importers.
    """

    id: str
    zone: str
    start: object
    rule: object
    _: KW_ONLY
    gap: GapPolicy | ByLocalHour = "skip"
    fold: FoldPolicy | ByLocalHour = "first"
    invalid_day: InvalidDayPolicy = "omit"
    exclude: object = ()
    revision: int = 1
    effective_from: object = None
    effective_to: object = None
    policy: object = None
    rdate: tuple = ()
    exdate: tuple = ()
    # Where the schedule came from (calsim.importers.Source: file, line, document,
    # UID), set by the importers and fleet files; not part of equality, so an
    # imported schedule equals the same schedule built in Python.
    source: object = field(default=None, compare=False, repr=False)
    # Parsed forms, derived once at construction.
    parsed_rule: Rule = field(init=False, repr=False, compare=False)
    calendars: tuple[Calendar, ...] = field(init=False, repr=False, compare=False)
    start_wall: int | None = field(init=False, repr=False, compare=False)
    start_utc: int | None = field(init=False, repr=False, compare=False)
    from_utc: int | None = field(init=False, repr=False, compare=False)
    to_utc: int | None = field(init=False, repr=False, compare=False)
    rdate_wall: tuple[int, ...] = field(init=False, repr=False, compare=False)
    exdate_wall: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sid = self.id
        if not isinstance(sid, str) or not sid.strip():
            raise ScheduleError(f"id: expected a non-empty string, got {shown(sid)}")
        if len(sid) > MAX_ID_LENGTH or any(c < " " or c == "\x7f" for c in sid):
            # Ids end up in DuckDB, CSV, terminals and file names: a NUL or an escape sequence there
            # is never what the user meant (and may be an attack on whoever reads the output).
            bad = "longer than 1,000 characters" if len(sid) > MAX_ID_LENGTH else "holds a control character"
            raise ScheduleError(f"id: {sid[:40]!r}{'...' if len(sid) > 40 else ''} {bad} "
                                "(allowed: printable text, at most 1,000 characters)")
        where = f"schedule {shown(sid)}: "
        try:
            self._validate(where)
        except ScheduleError:
            raise
        except CalsimError as exc:
            # Name the schedule in every message, keep the specific class.
            raise type(exc)(where + str(exc)) from None

    def _validate(self, where: str) -> None:
        from .tz.release import release

        set_ = object.__setattr__
        if not isinstance(self.zone, str):
            raise ScheduleError(f"{where}zone: expected an IANA zone name, got {shown(self.zone)}")
        try:
            release().table(self.zone)
        except UnknownReleaseError:  # pragma: no cover - tzdata is a dependency
            pass
        check_gap(self.gap, extra=(SCHEDULER,))
        check_fold(self.fold, extra=(SCHEDULER,))
        check_choice("invalid_day", self.invalid_day, get_args(InvalidDayPolicy), noun="policy")
        if (not isinstance(self.revision, int) or isinstance(self.revision, bool) or self.revision < 1
                or self.revision > MAX_REVISION):
            raise ScheduleError(f"{where}revision: expected a whole number from 1 to {MAX_REVISION:,} (it is stored "
                                f"as a 64-bit integer), got {shown(self.revision)}")

        rule, block_start, tzid = parse_rule(self.rule)
        block_utc = None
        if tzid == "UTC" and self.zone != "UTC":
            # DTSTART:...Z is an instant; its local time in the zone anchors the rule.
            block_start, block_utc, tzid = None, block_start, None
        if tzid is not None and tzid != self.zone:
            raise ScheduleError(
                f"{where}rule: its DTSTART says TZID={tzid} but the schedule's zone is {shown(self.zone)}; "
                "make them agree"
            )
        set_(self, "parsed_rule", rule)
        if SCHEDULER in (self.gap, self.fold):
            # "As the rule's scheduler walks it" decides gaps and folds together, from the walk (calsim.emulation).
            if (self.gap, self.fold) != (SCHEDULER, SCHEDULER):
                raise ScheduleError(f"{where}gap/fold: {self.gap!r}/{self.fold!r}: 'scheduler' decides both or "
                                    "neither (allowed: gap='scheduler' with fold='scheduler')")
            if walks(rule) is None:
                raise ScheduleError(f"{where}gap: 'scheduler' needs a rule whose scheduler calsim walks as it does "
                                    f"(robfig:..., quartz:..., OnCalendar=... with whole seconds), and calsim walks "
                                    f"no scheduler for this {rule.kind} rule {shown(self.rule)}")
        if rule.zone is not None and rule.zone != self.zone:
            # systemd.time(7): a trailing zone name makes the expression's times that
            # zone's, whatever the machine's: it overrides the schedule's zone.
            set_(self, "zone", rule.zone)
        start = self.start
        wall = utc = None
        if start is None:
            if block_start is None and block_utc is None and not rule.elapsed:
                raise ScheduleError(f"{where}start: required (the rule has no DTSTART), e.g. '2026-01-01T09:00'")
            wall, utc = block_start, block_utc
        elif _is_instant(start):
            utc = instant_us(start, "start")
        else:
            wall = int(local_us([start], "start")[0])
        if rule.elapsed and cast(Every, rule).anchor is None and wall is None and utc is None:  # (elapsed: Every)
            raise ScheduleError(f"{where}start: Every without an anchor needs a start")
        if rule.anchored:
            # The one place DTSTART's fraction of a second is dropped (RRule.anchor:
            # RFC 5545 DATE-TIME has whole seconds, dateutil does the same), so
            # expansion, preview and the UNTIL check below all see 09:00:00.
            wall = None if wall is None else RRule.anchor(wall)
            utc = None if utc is None else RRule.anchor(utc)
        set_(self, "start_wall", wall)
        set_(self, "start_utc", utc)
        if rule.until is not None and not rule.until_utc and wall is not None:
            if rule.until < wall:
                raise RuleError(
                    f"rrule: UNTIL {iso_local(rule.until)} is before the start {iso_local(wall)}; "
                    "the rule has no instance"
                )

        f = None if self.effective_from is None else instant_us(self.effective_from, "effective_from")
        t = None if self.effective_to is None else instant_us(self.effective_to, "effective_to")
        if f is not None and t is not None and t <= f:
            raise ScheduleError(
                f"{where}effective_to: {shown(self.effective_to)} is not after "
                f"effective_from {shown(self.effective_from)} "
                "(a revision is valid over the half-open interval [effective_from, effective_to))"
            )
        set_(self, "from_utc", f)
        set_(self, "to_utc", t)
        set_(self, "calendars", as_calendars(self.exclude))
        set_(self, "rdate_wall", tuple(int(x) for x in local_us(list(self.rdate), "rdate")) if self.rdate else ())
        set_(self, "exdate_wall", tuple(int(x) for x in local_us(list(self.exdate), "exdate")) if self.exdate else ())

    @property
    def kind(self) -> str:
        """The rule kind's name (``RuleKind.kind``): ``"rrule"``, ``"cron"``, ``"every"``, ``"window"``,
        ``"oncalendar"``, ``"quartz"``, ``"robfig"`` or ``"apscheduler"``."""
        return self.parsed_rule.kind

    def explain(self) -> str:
        """The rule in words."""
        return self.parsed_rule.explain()


def _is_instant(value: object) -> bool:
    if isinstance(value, dt.datetime):
        return value.tzinfo is not None
    if isinstance(value, str):
        t = value.strip()
        return t.endswith(("Z", "z")) or bool(re.search(r"T.*[+-]\d{2}(:?\d{2})?$", t))
    return False


def check_revisions(schedules: list[Schedule]) -> None:
    """Revisions of one id must have distinct numbers and non-overlapping validity intervals."""
    by_id: dict[str, list[Schedule]] = {}
    for s in schedules:
        by_id.setdefault(s.id, []).append(s)
    for sid, revs in by_id.items():
        if len(revs) < 2:
            continue
        numbers = [r.revision for r in revs]
        if len(set(numbers)) != len(numbers):
            raise ScheduleError(f"schedule {shown(sid)}: revision numbers repeat ({sorted(numbers)}); "
                                "each must be unique")
        lo = float("-inf")
        spans = sorted(
            ((r.from_utc if r.from_utc is not None else float("-inf"),
              r.to_utc if r.to_utc is not None else float("inf"), r.revision) for r in revs)
        )
        prev = None
        for a, b, n in spans:
            if a < lo:
                raise ScheduleError(
                    f"schedule {shown(sid)}: revision {n} starts before revision {prev} ends; revision windows "
                    "[effective_from, effective_to) must not overlap"
                )
            lo, prev = b, n
