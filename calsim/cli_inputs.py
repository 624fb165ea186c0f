"""The CLI's schedule inputs: a file of any supported format, ``example:N``, an inline rule, or ``-`` (stdin).

Items of a file that cannot be read are refused: each is printed as one
warning line on stderr and the rest is used; with ``--strict`` the first one
is an error. Nothing imported is an error (exit 2). A fleet TOML file is
refused table by table, as every other format (:func:`calsim.importers.fleet.read`).

Entries that are not schedules (a crontab's ``@reboot`` line, a Deployment
in a manifest, a VTODO, a monotonic systemd timer) are never dropped without
a word: each prints one ``calsim: warning: skipped: <where>: <what>: <why>``
line on stderr, up to :data:`MAX_SKIPPED_LINES`, then one line counting the
rest by kind. They are said when the command has done its work
(:func:`take_warnings`, called by :func:`calsim.cli.main`): a command that
fails prints its one error line and nothing else, and one that succeeds ends
with what it left out.

Also the checks every command shares on its file arguments: ``--db`` refused
before any work (:func:`check_db`), ``--output`` written whole or not at all
(:func:`atomic_output`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .errors import CalsimError, InputError

if TYPE_CHECKING:  # (imported where used: the CLI starts without them)
    import datetime as dt

    from .importers import Imported, Skipped
    from .schedule import Schedule

__all__ = ["fleet", "import_options", "now", "instant", "window", "check_db", "atomic_output", "take_warnings"]

def fleet(spec: str, args: argparse.Namespace | None = None) -> list[Schedule]:
    """``example:N[:SEED]`` (examples.fleet) or a file: fleet/scenario TOML, crontab, CronJob manifest, .ics...

    Items of the file that cannot be read are refused: each is printed as
    one warning line on stderr and the rest is used; with ``--strict`` the
    first one is an error. Nothing imported is an error (exit 2).
    """
    from .examples import fleet
    from .importers import import_any

    zone = getattr(args, "zone", None) or "UTC"
    if spec == "-":
        spec = sys.stdin.read()
        if "\n" in spec.strip() or not spec.strip():
            return _imported(_import_text(spec, zone, args), "<stdin>")
        spec = spec.strip()  # one line: an inline rule
    inline = _inline_rule(spec, zone)
    if inline is not None:
        return [inline]
    if spec.startswith("example:"):
        parts = spec.split(":")
        try:
            n = int(parts[1])
            seed = int(parts[2]) if len(parts) > 2 else 0
        except (ValueError, IndexError):
            raise InputError(f"fleet: {spec!r} is not 'example:N' or 'example:N:SEED'") from None
        return fleet(n, seed)
    strict = bool(getattr(args, "strict", False))
    tz_mode = "legacy" if getattr(args, "legacy_tz", False) else "auto"
    try:
        if _is_fleet_file(spec):  # calsim's TOML: refused table by table as the other formats are item by item
            from .importers.fleet import read

            imported = read(spec, strict=strict)
        else:
            imported = import_any(spec, zone=zone, strict=strict, tz_in_schedule=tz_mode)
    except CalsimError as exc:
        # Nothing imported: the first refusal is the error (exit 2), the others warnings.
        _warn_refused(getattr(exc, "refused", ())[1:])
        raise
    return _imported(imported, spec)


def _is_fleet_file(spec: str) -> bool:
    """Whether ``spec`` names a fleet or scenario TOML file (its content decides, as :func:`import_any`'s does)."""
    from .importers import detect_format

    try:
        return detect_format(spec) == "fleet"
    except CalsimError:
        return False  # the importer reports an unreadable file with its reason


def _imported(imported: Imported, spec: str) -> list[Schedule]:
    _warn_refused(imported.refused)
    if not len(imported):  # (the error names what was skipped: the one line of exit 2)
        why = "; ".join(f"{s.what}: {s.reason}" for s in imported.skipped[:3])
        more = len(imported.skipped) - 3
        why += f"; and {more:,} more entries that are not schedules" if more > 0 else ""
        raise InputError(f"fleet: nothing imported from {spec[:60]!r}" + (f" ({why})" if why else ""))
    _warn_skipped(imported.skipped)
    return list(imported)


_RULE_START = ("FREQ=", "RRULE:", "OnCalendar=", "quartz:", "@")


def _inline_rule(spec: str, zone: str) -> Schedule | None:
    """A schedule for a rule given on the command line (``"30 2 * * *"``, an RRULE, ``OnCalendar=...``), or None.

    A path that exists is always a file. The schedule starts today at 00:00
    local time in ``zone`` (cron and OnCalendar ignore it; an RRULE without
    BYHOUR takes its time of day from it, as RFC 5545's DTSTART does).
    """
    import os
    import re

    text = spec.strip()
    if os.path.exists(spec) or spec.startswith("example:"):
        return None
    # Not a file: text with a space or a rule's prefix is a rule (its parse error is the message),
    # anything else a file name that does not exist (the importer says so).
    if not (text.startswith(_RULE_START) or re.search(r"\s", text)):
        return None
    from .schedule import Schedule
    from .tz.release import release

    today = now().astimezone(release().zone(zone)).date()
    return Schedule("inline", zone, f"{today.isoformat()}T00:00", text)


def _import_text(text: str, zone: str, args: argparse.Namespace | None) -> Imported:
    """A schedule file read from standard input (``-``), its format told by content."""
    from .importers import detect_text, from_airflow, from_celery_beat, from_crontab, from_dagster, \
        from_eventbridge, from_github_actions, from_ical, from_kubernetes, from_prefect, from_systemd, from_temporal

    strict = bool(getattr(args, "strict", False))
    fmt = detect_text(text)
    readers = {"ical": lambda: from_ical(text, zone=zone, strict=strict, source="<stdin>"),
               "kubernetes": lambda: from_kubernetes(text, zone=zone, strict=strict, source="<stdin>"),
               "systemd": lambda: from_systemd(text, zone=zone, strict=strict, source="<stdin>"),
               "eventbridge": lambda: from_eventbridge(text, strict=strict, source="<stdin>"),
               "temporal": lambda: from_temporal(text, strict=strict, source="<stdin>"),
               "github": lambda: from_github_actions(text, strict=strict, source="<stdin>"),
               "airflow": lambda: from_airflow(text, zone=zone, strict=strict, source="<stdin>"),
               "prefect": lambda: from_prefect(text, strict=strict, source="<stdin>"),
               "celery_beat": lambda: from_celery_beat(text, zone=zone, strict=strict, source="<stdin>"),
               "dagster": lambda: from_dagster(text, zone=zone, strict=strict, source="<stdin>"),
               "crontab": lambda: from_crontab(text, zone=zone, strict=strict, source="<stdin>")}
    if fmt not in readers:
        raise InputError(f"fleet: a {fmt} file must be given as a path (it names other files), not on stdin")
    return readers[fmt]()


def _warn_refused(refused: Iterable[Skipped]) -> None:
    for r in refused:
        print(f"calsim: warning: refused: {r.reason}", file=sys.stderr)


#: Skipped entries printed one per line; past this many, one line counts the rest by kind.
MAX_SKIPPED_LINES = 10


_pending: list[str] = []  # warnings said when the command has succeeded (take_warnings)


def take_warnings() -> list[str]:
    """The warning lines held for the end of the command (entries skipped by the importers), and forget them:
    :func:`calsim.cli.main` prints them once the command has done its work, and drops them when it fails (its
    one error line is then all of stderr)."""
    lines = list(_pending)
    _pending.clear()
    return lines


def _warn_skipped(skipped: Iterable[Skipped]) -> None:
    """One warning line per entry that is not a schedule (``@reboot``, a Deployment...), as refusals are printed;
    past :data:`MAX_SKIPPED_LINES` the rest are counted by kind on one line (a ``kubectl get all`` export has
    hundreds of objects that are not CronJobs). Held for the end of the command (:func:`take_warnings`)."""
    from collections import Counter

    entries = list(skipped)
    shown = entries if len(entries) <= MAX_SKIPPED_LINES else entries[:MAX_SKIPPED_LINES - 1]
    for r in shown:
        _pending.append(f"calsim: warning: skipped: {r.source.where}: {r.what}: {r.reason}")
    rest = entries[len(shown):]
    if rest:
        kinds = Counter(r.what.partition(")")[0] + ")" if r.what.startswith("(") else (r.what.split() or ["?"])[0]
                        for r in rest)  # "Deployment web" -> Deployment, "(no kind)" as it is
        counted = ", ".join(f"{kind} {n:,}" for kind, n in kinds.most_common())
        _pending.append(f"calsim: warning: skipped {len(rest):,} more entries that are not schedules ({counted})")


def import_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--strict", action="store_true",
                   help="refuse the whole file on its first bad item (default: warn, skip it, use the rest)")
    s.add_argument("--zone", "--cron-tz", dest="zone", default=None, metavar="ZONE",
                   help="the zone of schedules that name none: crontab lines before any CRON_TZ= (the cron "
                        "daemon's zone), CronJobs without timeZone, floating iCalendar times, OnCalendar= without a "
                        "zone, a rule given inline (default UTC)")
    s.add_argument("--legacy-tz", action="store_true",
                   help="Kubernetes: read a TZ=/CRON_TZ= prefix in spec.schedule as the controller runs it, "
                        "for every CronJob (default: only for exported objects, those with metadata.uid/"
                        "creationTimestamp; other manifests get the API server's create-time refusal)")


def now() -> dt.datetime:
    """The CLI's "now": the clock, or ``CALSIM_NOW`` (an instant) for reproducible reports and tests.

    Every default that depends on the date (the windows of expand, simulate
    and tzdiff, preview's next runs and "from now", what is "already in
    effect") reads it here.
    """
    import datetime as dt
    import os

    raw = os.environ.get("CALSIM_NOW")
    if raw:
        return instant(raw, "CALSIM_NOW")
    return dt.datetime.now(dt.timezone.utc)


def instant(text: str, field: str = "--from/--to") -> dt.datetime:
    import datetime as dt

    from .times import instant_us

    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=instant_us(text, field))


def check_db(path: str | None) -> None:
    """Refuse a store path the store would refuse (remote prefix, not a store, unwritable) before any work."""
    from .errors import StoreError
    from .store import check_store_path

    if path:
        try:
            check_store_path(path)
        except StoreError as exc:
            raise type(exc)(f"--db: {str(exc).removeprefix('path: ')}") from None


def atomic_output(path: str, write) -> None:
    """Write an ``--output`` file whole or not at all (see :mod:`calsim.atomic`)."""
    from .atomic import write_atomically

    write_atomically(path, write, "--output")


def window(args: argparse.Namespace) -> tuple[str, str]:
    """The --from/--to window; by default the next 365 days from today's UTC midnight (printed)."""
    import datetime as dt

    today = now().replace(hour=0, minute=0, second=0, microsecond=0)
    start = args.start or today.strftime("%Y-%m-%dT%H:%MZ")
    if args.end:
        end = args.end
    else:  # a year on, or the last instant a date holds (--from 9999-06-01 has no year after it)
        last = dt.datetime(9999, 12, 31, 9, 59, tzinfo=dt.timezone.utc)  # expand's last end (UTC+14 in 9999)
        first = instant(start)
        end = (first + dt.timedelta(days=365) if first <= last - dt.timedelta(days=365) else last).strftime(
            "%Y-%m-%dT%H:%MZ")
    if instant(end) <= instant(start):
        raise InputError(f"--to: {end!r} is not after --from {start!r}")
    return start, end
