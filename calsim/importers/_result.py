"""What every importer returns: schedules, where each came from, and what was skipped.

:class:`Imported` behaves as the list of imported schedules (iterate it,
index it, pass it to :func:`calsim.expand`) and carries provenance beside
them: ``sources`` maps each schedule id to a :class:`Source` (file, line,
manifest document, UID), ``skipped`` lists the entries that are not schedules
(``@reboot`` lines, a Deployment in a manifest, a VTODO) with the reason,
``refused`` lists the entries that are schedules but could not be read (a bad
cron line, a CronJob with an unknown zone) with the error's message, and
``presets`` maps each id to the scheduler :class:`~calsim.presets.Preset`
that was applied (its ``notes`` and ``tick`` stay at hand).

**Refusals.** One bad item does not cost the rest of the file: every
importer reads item by item (a crontab line, a manifest object, a VEVENT, an
``OnCalendar=`` line, a workflow's cron entry, an EventBridge schedule, a
Temporal calendar or interval) through :class:`Items`, which turns the
item's :class:`~calsim.CalsimError` into a refusal and goes on: an SRE
loading a server's files wants to see what the good items do and get a list
of what to fix, not fix one line per run. (Schedulers differ here, so this
is calsim's choice: the Kubernetes API server refuses one object of a
``kubectl apply`` and applies the others.) ``strict=True`` raises the
first error instead. A file where every schedule is refused raises the first refusal's
error (an empty import would hide the problem); a file that cannot be parsed
at all (not YAML, not JSON) raises as before.

>>> from calsim.importers import from_crontab
>>> tab = from_crontab("0 3 * * * /bin/backup\\n61 * * * * /bin/bad\\n")
>>> [s.id for s in tab], [(r.source.line, r.what) for r in tab.refused]
(['crontab:1'], [(2, '61 * * * * /bin/bad')])

Each schedule carries its own :class:`Source` in ``schedule.source``
(:func:`attach`); ``Imported.sources`` is derived from them.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Literal, Mapping, ParamSpec, Sequence, TypeVar, cast, overload

from ..errors import CalsimError, InputError
from ..input_files import check_text, read_file
from ..schedule import Schedule

__all__ = ["Source", "Skipped", "Imported", "Items", "attach", "read_input"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

Format = Literal["crontab", "kubernetes", "ical", "fleet", "systemd", "eventbridge", "github", "temporal", "airflow",
                 "prefect", "celery_beat", "dagster"]


@dataclass(frozen=True)
class Source:
    """Where an imported schedule (or a skipped entry) came from.

    Attributes
    ----------
    format : {"crontab", "kubernetes", "ical", "fleet"}
    file : str
        The path as given, or the ``source=`` label of text input.
    line : int or None
        1-based line: the crontab line, the manifest's ``spec.schedule``
        line, the ``BEGIN:VEVENT`` line.
    document : int or None
        1-based YAML document of a manifest (``---`` separated).
    item : int or None
        1-based entry of a ``kind: List`` document (``kubectl get -o yaml``),
        or of a fleet file's ``[[schedule]]`` tables.
    uid : str or None
        The iCalendar UID.
    text : str
        The schedule as written: the crontab line, the CronJob's ``schedule``,
        the RRULE.
    command, user : str or None
        A crontab line's command and (system crontab) user.
    notes : tuple of str
        What the importer decided or could not carry over.
    """

    format: Format
    file: str
    line: int | None = None
    document: int | None = None
    item: int | None = None
    uid: str | None = None
    text: str = ""
    command: str | None = None
    user: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """``"crontab line 7"``, ``"cronjobs.yaml document 2 (line 14)"``, ``"calendar.ics VEVENT 'x' (line 9)"``."""
        name = Path(self.file).name if self.file else "<text>"
        parts = [name]
        if self.document is not None:
            parts.append(f"document {self.document}")
        if self.item is not None:
            parts.append(f"item {self.item}")
        if self.uid is not None:
            parts.append(f"VEVENT {self.uid!r}")
        if self.line is not None:
            if len(parts) > 1:
                parts.append(f"(line {self.line})")
            else:
                parts.append(f"line {self.line}")
        return " ".join(parts)

    def __str__(self) -> str:
        return f"{self.format}: {self.where}"


@dataclass(frozen=True)
class Skipped:
    """An entry that is not imported as a schedule, and why (``@reboot``, another ``kind``, a VTODO...).

    In :attr:`Imported.refused` it is a schedule that could not be read:
    ``reason`` is the error's one-line message (it names file, line or
    document and field) and ``error`` the :class:`~calsim.CalsimError` itself.
    """

    source: Source
    what: str
    reason: str
    error: CalsimError | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.source}: {self.what}: {self.reason}"


@dataclass(frozen=True)
class Imported:
    """Schedules read from one file, with their provenance (see the module docstring).

    It is a sequence of :class:`~calsim.Schedule`: ``list(imported)``,
    ``imported[0]``, ``len(imported)`` and ``calsim.expand(imported, ...)``
    work as with a list.

    Attributes
    ----------
    schedules : tuple of Schedule
    sources : Mapping[str, Source]
        Schedule id -> where it came from.
    skipped : tuple of Skipped
        Entries that are not schedules, with the reason.
    refused : tuple of Skipped
        Schedules that could not be read, each with its error (see
        "Refusals" in the module docstring); empty with ``strict=True``.
    presets : Mapping[str, Preset]
        Schedule id -> the scheduler preset applied (``cronie``, ``kubernetes``);
        empty for iCalendar and fleet files.
    """

    schedules: tuple[Schedule, ...]
    skipped: tuple[Skipped, ...] = ()
    presets: Mapping[str, object] = field(default_factory=dict)
    refused: tuple[Skipped, ...] = ()

    @property
    def sources(self) -> Mapping[str, Source]:
        """Schedule id -> where it came from (each schedule's ``source``)."""
        return {s.id: cast(Source, s.source) for s in self.schedules}  # attach() gave each one

    def __iter__(self) -> Iterator[Schedule]:
        return iter(self.schedules)

    def __len__(self) -> int:
        return len(self.schedules)

    @overload
    def __getitem__(self, index: int) -> Schedule: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Schedule, ...]: ...

    def __getitem__(self, index: int | slice) -> Schedule | tuple[Schedule, ...]:
        return self.schedules[index]

    def source(self, schedule: Schedule | str) -> Source:
        """Where a schedule (or a schedule id) came from."""
        sid = schedule.id if isinstance(schedule, Schedule) else schedule
        return cast(Source, self.by_id(sid).source)

    def by_id(self, sid: str) -> Schedule:
        """The imported schedule with this id."""
        for s in self.schedules:
            if s.id == sid:
                return s
        raise KeyError(sid)


class Items:
    """Reads a file's items one by one: a :class:`~calsim.CalsimError` refuses that item, or raises if ``strict``.

    ``run(source, what, fn, *args)`` returns ``fn(*args)``, or None when it
    raised a CalsimError (recorded in ``refused``); ``done(...)`` builds the
    :class:`Imported`, raising the first refusal when nothing was imported.

    >>> from calsim.errors import RuleError
    >>> items = Items(strict=False)
    >>> def bad(): raise RuleError("crontab: t line 2: schedule '61 * * * *': minute 61 out of range")
    >>> items.run(Source("crontab", "t", line=2), "61 * * * *", bad) is None, items.refused[0].source.line
    (True, 2)
    """

    def __init__(self, strict: bool = False) -> None:
        if not isinstance(strict, bool):
            raise InputError(f"strict: expected True or False, got {strict!r}")
        self.strict = strict
        self.refused: list[Skipped] = []

    def refuse(self, source: Source, what: str, exc: CalsimError) -> None:
        """Record ``exc`` as the refusal of one item (or raise it when strict)."""
        if self.strict:
            raise exc
        self.refused.append(Skipped(source, what, str(exc), error=exc))

    def run(self, source: Source, what: str, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T | None:
        """``fn(*args, **kwargs)``, or None when it raised a CalsimError (then refused)."""
        try:
            return fn(*args, **kwargs)
        except CalsimError as exc:
            self.refuse(source, what, exc)
            return None

    def done(self, schedules: Sequence[Schedule], skipped: Iterable[Skipped] = (),
             presets: Mapping[str, Any] | None = None) -> Imported:
        """The :class:`Imported`; the first refusal's error if nothing was imported but something refused."""
        if not schedules and self.refused:
            self.refused = self._in_file_order()
            first = self.refused[0].error
            assert first is not None
            if len(self.refused) > 1:
                first = type(first)(f"{first} (and {len(self.refused) - 1} more item(s) refused; nothing imported)")
            first.refused = tuple(self.refused)  # the CLI prints each one
            raise first
        return Imported(tuple(schedules), tuple(skipped), dict(presets or {}), tuple(self._in_file_order()))

    def _in_file_order(self) -> list[Skipped]:
        # Some importers check an item in two passes (an iCalendar UID, then the event): report by position.
        return sorted(self.refused, key=lambda r: (r.source.file, r.source.document or 0, r.source.item or 0,
                                                   r.source.line or 0))


def attach(schedule: Schedule, source: Source) -> Schedule:
    """The schedule with its provenance in ``Schedule.source``."""
    return dataclasses.replace(schedule, source=source)


def read_input(path_or_text: object, fmt: str, label: str | None) -> tuple[str, str, Path | None]:
    """``(text, file, path)`` of an importer's input.

    A ``pathlib.Path`` (any ``os.PathLike``) is a file; a ``str`` with a line
    break is the content itself, a ``str`` without one a file name; ``bytes``
    are UTF-8 content. ``file`` is the label used in ids and messages: the
    path as given, or ``label`` (default ``"<text>"``... the caller's choice).
    """
    if isinstance(path_or_text, bytes):
        return check_text(path_or_text, fmt, label or f"<{fmt} text>"), label or f"<{fmt} text>", None
    if isinstance(path_or_text, str) and ("\n" in path_or_text or "\r" in path_or_text):
        name = label or f"<{fmt} text>"
        return check_text(path_or_text.encode("utf-8", "surrogatepass"), fmt, name), name, None
    if isinstance(path_or_text, (str, os.PathLike)):
        p = Path(path_or_text)
        name = label or str(path_or_text)
        if isinstance(path_or_text, str) and not p.exists() and len(path_or_text) > 0 and not os.path.lexists(p):
            shown = path_or_text if len(path_or_text) <= 120 else path_or_text[:117] + "..."
            raise InputError(f"{fmt}: cannot read {shown!r} (No such file or directory) "
                             "(to pass the content itself, give a str with a line break)")
        text = read_file(p, fmt)
        assert isinstance(text, str)
        return text, name, p
    shown = repr(path_or_text)
    raise InputError(f"{fmt}: expected a path or the file's text, got {type(path_or_text).__name__} "
                     f"{shown if len(shown) <= 60 else shown[:57] + '...'}")


def reraise(exc: CalsimError, prefix: str) -> CalsimError:
    """The same error class with ``prefix`` in front (the schedule's own prefix dropped: the prefix names it)."""
    msg = str(exc)
    if msg.startswith("schedule '"):
        # Schedule.__post_init__ writes "schedule 'id': ..."; the import location is more useful.
        end = msg.find("': ")
        if end != -1:
            msg = msg[end + 3:]
    new = type(exc)(f"{prefix}: {msg}")
    return new
