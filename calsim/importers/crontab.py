"""Import a crontab: user crontabs, ``/etc/crontab`` and ``/etc/cron.d`` files.

Each job line becomes a cron :class:`~calsim.Schedule` with the
:func:`calsim.presets.cronie` preset applied (fixed-time jobs run right after
a DST gap and once in a fold, wildcard jobs follow the new time; no catch-up).

Lines, as crontab(5) describes them:

* blank lines and lines whose first non-blank character is ``#`` are ignored
  (a ``#`` later in a job line is part of the command, as in cron);
* ``NAME=value`` (spaces around ``=`` optional, value may be quoted) sets an
  environment variable for the following lines;
* a job: five time fields (or a macro ``@yearly``/``@annually``,
  ``@monthly``, ``@weekly``, ``@daily``/``@midnight``, ``@hourly``), then,
  in the system format only, the user name, then the command.

**Zones (cronie).** ``CRON_TZ=<zone>`` sets the zone in which the following
job lines' times are read, until the next ``CRON_TZ=`` line; an empty
``CRON_TZ=`` returns to ``zone=`` (the daemon's zone, default ``"UTC"``).
cronie keeps a copy of the environment with each entry and looks CRON_TZ up
in it (``find_jobs`` in ``src/cron.c``), so a ``CRON_TZ`` line affects only
the lines after it. ``TZ=`` only sets the command's environment: cronie
schedules by the daemon's zone and ``CRON_TZ``, so a ``TZ=`` line does not
change a schedule's zone; the schedules under it carry a note saying so.
An unknown zone in ``CRON_TZ`` is an error naming the line.

**Not schedules.** ``@reboot`` runs once at boot, not at times: the line is
listed in :attr:`Imported.skipped <calsim.importers.Imported.skipped>` with
the reason ``"runs at boot, not at a time"``.

**User or system format.** ``system=True`` reads the sixth field as the user
(``/etc/crontab``, ``/etc/cron.d/*``), ``False`` as the start of the command.
``system=None`` (default) decides by the path: ``/etc/crontab`` and files in a
directory named ``cron.d`` are system crontabs, anything else (and text) a
user crontab.

**Identity.** A schedule's id is ``"<name>:<line>"``: the file's name without
suffix (or ``source=``, default ``"crontab"`` for text) and the 1-based line
number, so ids are stable as long as the file's lines do not move. ``start``
(default ``"2000-01-01T00:00"``, local wall time) anchors every rule: cron
has no start, choose one before your horizon.

>>> from calsim.importers import from_crontab
>>> tab = from_crontab("CRON_TZ=Europe/Berlin\\n30 2 * * * /usr/bin/backup\\n@reboot /usr/bin/warmup\\n")
>>> [(s.id, s.zone, s.gap, s.fold) for s in tab]
[('crontab:2', 'Europe/Berlin', 'next_valid', 'first')]
>>> tab.sources["crontab:2"].command, tab.skipped[0].what
('/usr/bin/backup', '@reboot')
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import CalsimError, RuleError, ScheduleError
from ..presets import Preset, cronie
from ..rules.cron import MACROS, Cron
from ..schedule import Schedule
from ..tz.release import release
from ._result import Imported, Items, Skipped, Source, attach, read_input, reraise

__all__ = ["from_crontab", "DEFAULT_START"]

DEFAULT_START = "2000-01-01T00:00"
_ENV = re.compile(r"""^(?P<q>["']?)(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P=q)\s*=\s*(?P<value>.*)$""")
_CRONIE_TZ_NOTE = ("cronie: job-specific zones (CRON_TZ) are 'not perfect': jobs may be missed or run twice during "
                   "the DST change in the job's zone, and are held back during the daemon zone's own change "
                   "(src/cron.c find_jobs)")


def from_crontab(path_or_text: object, *, zone: str = "UTC", source: str | None = None,
                 system: bool | None = None, start: object = DEFAULT_START,
                 preset: Preset | None = None, strict: bool = False) -> Imported:
    """Read a crontab into schedules (see the module docstring).

    Parameters
    ----------
    path_or_text
        A path (``str`` without a line break, or ``pathlib.Path``), or the
        crontab's text (a ``str`` with a line break, or ``bytes``).
    zone
        The cron daemon's zone: used for lines before any ``CRON_TZ=``.
    source
        Name used in ids and messages instead of the file's (default
        ``"crontab"`` for text).
    system
        True: system format (user field after the times); False: user
        format; None: decided by the path (see the module docstring).
    start
        Anchor of every rule (local wall time in the schedule's zone).
    preset
        The scheduler preset applied (default :func:`calsim.presets.cronie`).
    strict
        False (default): a bad line is refused (listed in ``refused``) and
        the others are read, as cron does; True: the first bad line raises.
        A ``CRON_TZ=`` line naming no zone is refused, and so is every job
        line under it (until the next ``CRON_TZ=``): their zone is unknown.

    Returns
    -------
    Imported
        The schedules (a sequence), their sources (file, line, command, user),
        the skipped ``@reboot`` lines, the refused lines and the preset per id.

    Raises
    ------
    InputError
        The file cannot be read or is not UTF-8.
    RuleError
        A malformed job line (its message names file, line and field): with
        ``strict=True``, or when no line could be read.
    UnknownZoneError
        ``zone`` names no zone of the installed tzdata; ``CRON_TZ`` does
        (as RuleError above).
    """
    text, file, path = read_input(path_or_text, "crontab", source)
    label = source or (path.name if path is not None else file)
    stem = Path(source).stem if source else (path.stem if path is not None else "crontab")
    if system is None:
        system = _is_system_path(path)
    preset = preset or cronie()
    daemon_zone = _check_zone(zone, f"crontab: {label}: zone")

    items = Items(strict)
    schedules: list[Schedule] = []
    skipped: list[Skipped] = []
    presets: dict[str, Preset] = {}
    cron_tz: str | None = None
    bad_tz: tuple[int, CalsimError] | None = None  # a CRON_TZ= line naming no zone, and its error
    env_tz: str | None = None

    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"crontab: {label} line {n}"
        src = Source("crontab", file, line=n, text=line)
        env = _ENV.match(line)
        if env and not line.startswith("@"):
            name, value = env["name"], _unquote(env["value"].strip())
            if name == "CRON_TZ":
                bad_tz, cron_tz = None, None
                try:
                    cron_tz = _check_zone(value, f"{where}: CRON_TZ") if value else None
                except CalsimError as exc:
                    items.refuse(src, line, exc)
                    bad_tz = (n, exc)
            elif name == "TZ":
                env_tz = value or None
            continue
        if bad_tz is not None:
            # cronie would read these times in whatever zone tzset() falls back to: calsim cannot say which.
            items.refuse(src, line, type(bad_tz[1])(f"{where}: CRON_TZ on line {bad_tz[0]} names no zone, "
                                                    "so this line's zone is unknown"))
            continue
        out = items.run(src, line, _job, line, n, where, file, stem, system, cron_tz or daemon_zone, env_tz,
                        bool(cron_tz), start, preset)
        if out is None:
            continue
        if isinstance(out, Skipped):
            skipped.append(out)
            continue
        schedules.append(out)
        presets[out.id] = preset
    return items.done(schedules, skipped, presets)


def _job(line: str, n: int, where: str, file: str, stem: str, system: bool, job_zone: str, env_tz: str | None,
         cron_tz: bool, start: object, preset: Preset) -> Schedule | Skipped:
    """The schedule of one job line (or the Skipped ``@reboot``)."""
    expr, user, command = _split_job(line, system, where)
    src_notes: list[str] = []
    if cron_tz:
        src_notes.append(_CRONIE_TZ_NOTE)
    if env_tz and env_tz != job_zone:
        src_notes.append(f"TZ={env_tz} sets the command's environment only; cronie reads the times in "
                         f"{job_zone} ({'CRON_TZ' if cron_tz else 'the daemon zone'})")
    src = Source("crontab", file, line=n, text=line, command=command, user=user, notes=tuple(src_notes))
    if expr.lower() == "@reboot":
        return Skipped(src, "@reboot", "runs at boot, not at a time")
    sid = f"{stem}:{n}"
    try:
        Cron.parse(expr)  # its messages name the field; the schedule keeps the text as written
        sched = preset.apply(Schedule(sid, job_zone, start, expr))
    except CalsimError as exc:
        field = "schedule" if isinstance(exc, RuleError) else "line"
        raise reraise(exc, f"{where}: {field} {expr!r}") from None
    assert isinstance(sched, Schedule)
    return attach(sched, src)


def _is_system_path(path: Path | None) -> bool:
    if path is None:
        return False
    p = path.absolute()
    return p == Path("/etc/crontab") or p.parent.name == "cron.d"


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _check_zone(name: object, where: str) -> str:
    if not isinstance(name, str) or not name:
        raise ScheduleError(f"{where}: expected an IANA zone name, got {name!r}")
    try:
        release().table(name)
    except CalsimError as exc:
        msg = str(exc)
        msg = msg[len("zone: "):] if msg.startswith("zone: ") else msg
        raise type(exc)(f"{where}: {msg}") from None
    return name


def _split_job(line: str, system: bool, where: str) -> tuple[str, str | None, str]:
    """``(cron expression, user, command)`` of a job line."""
    need = "5 time fields, a user and a command" if system else "5 time fields and a command"
    if line.startswith("@"):
        parts = line.split(None, 1)
        expr, rest = parts[0], (parts[1] if len(parts) > 1 else "")
        if expr.lower() not in MACROS and expr.lower() != "@reboot":
            allowed = ", ".join([*MACROS, "@reboot"])
            raise RuleError(f"{where}: schedule {expr!r}: unknown macro (allowed {allowed})")
        need = need.replace("5 time fields", "a macro")
    else:
        parts = line.split(None, 5)
        if len(parts) == 5:
            raise RuleError(f"{where}: malformed job line {line!r}: expected {need}, the command is missing")
        if len(parts) < 6:
            raise RuleError(f"{where}: malformed job line {line!r}: expected {need}, got {len(parts)} fields")
        expr, rest = " ".join(parts[:5]), parts[5]
    user = None
    if system:
        bits = rest.split(None, 1)
        if len(bits) < 2:
            raise RuleError(f"{where}: malformed job line {line!r}: expected {need} (system crontab), "
                            "the user or the command is missing")
        user, rest = bits
    if not rest.strip():
        raise RuleError(f"{where}: malformed job line {line!r}: expected {need}, the command is missing")
    return expr, user, rest.strip()
