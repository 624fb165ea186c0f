"""cron's syslog lines (``CRON[pid]: (user) CMD (command)``: Debian cron, cronie ``CROND``), matched to a crontab.

A run gets the id of the crontab entry with the same command (the first such
line when two have it, ``crontab:11``), else ``command:<command>``. ISO time
stamps carry their offset; traditional ``Mar  9 10:15:01`` stamps need the
host's ``zone=`` and the ``year=`` of the first line. The scheduled time is
unknown.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import polars as pl

from ...errors import InputError
from .._history_input import Source, lines, too_many
from ._rows import Caps, HistoryReader, cut, frame, instant

if TYPE_CHECKING:
    from .._result import Imported

__all__ = ["READER"]

# Debian cron (do_command.c) and cronie log "(<user>) CMD (<command>)" as the job is forked.
_CRON_LINE = re.compile(
    r"^(?:(?P<iso>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
    r"|(?P<bsd>(?P<mon>[A-Z][a-z]{2})\s+(?P<day>\d{1,2})\s+(?P<hms>\d\d:\d\d:\d\d)))"
    r"\s+\S+\s+(?:CRON|CROND|crond|cron)\[\d+\]:\s+\((?P<user>[^)]*)\)\s+CMD\s+\((?P<cmd>.*)\)\s*$")
# Unanchored, so bounded: the user name is at most 256 characters (Linux allows 32), or a
# line of "CRON[1]: (CRON[1]: (..." would be scanned to its end from every occurrence.
_CRON_ANY = re.compile(r"\b(?:CRON|CROND|crond|cron)\[\d{1,20}\]:\s{1,64}\([^)\n]{0,256}\)\s{1,64}CMD\s{1,64}\(")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                       "Nov", "Dec"), 1)}


def _syslog_setup(crontab: object, zone: str, year: object, label: str) -> Imported:
    """The crontab and the zone a syslog needs, checked before the log is read."""
    from .._result import Imported
    from ..crontab import from_crontab

    if crontab is None:
        raise InputError(f"syslog: {label}: crontab= is required (the crontab whose commands the CMD lines name)")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int) or not 1 <= year <= 9999):
        raise InputError(f"syslog: year: {cut(year)} is not a year (allowed: a whole number from 1 to 9999)")
    return crontab if isinstance(crontab, Imported) else from_crontab(crontab, zone=zone)


def _syslog(lines: Iterable[tuple[int, str]], label: str, tab: Imported, zone: str,
            year: int | None, max_rows: int) -> list[dict[str, object]]:
    by_command: dict[str, str] = {}
    for s in tab:
        cmd = tab.sources[s.id].command
        if cmd is not None:
            by_command.setdefault(cmd.strip(), s.id)
    rows: list[dict[str, object]] = []
    last: dt.datetime | None = None
    last_month = 0
    tz = None
    for n, line in lines:
        m = _CRON_LINE.match(line.strip())
        if m is None:
            if _CRON_ANY.search(line):
                raise InputError(f"syslog: {label} line {n}: a CMD line whose time stamp is neither ISO 8601 nor "
                                 f"'Mon DD HH:MM:SS': {cut(line.strip())}")
            continue  # other programs, cron's own notices (session opened, MAIL, INFO)
        where = f"syslog: {label} line {n}"
        if m["iso"]:
            stamp = m["iso"] if re.search(r"(Z|[+-]\d\d:?\d\d)$", m["iso"]) else m["iso"] + "+00:00"
            at = instant(stamp.replace(" ", "T", 1), f"{where}: time stamp")
        else:
            if year is None:
                raise InputError(f"{where}: time stamp {m['bsd']!r} has no year: pass year= (--year) and the "
                                 f"host's zone= (--zone)")
            if tz is None:
                from ...tz.release import release

                tz = release().zone(zone)
            month = _MONTHS.get(m["mon"])
            if month is None:
                raise InputError(f"{where}: time stamp {m['bsd']!r}: unknown month {m['mon']!r} "
                                 "(allowed: Jan, Feb, ... Dec)")
            if month < last_month:  # the log crossed New Year
                year += 1
                if year > 9999:
                    raise InputError(f"{where}: time stamp {m['bsd']!r}: the log crosses into year 10000 "
                                     "(allowed: years 1..9999; check year=)")
            last_month = month
            try:
                h, mi, se = (int(x) for x in m["hms"].split(":"))
                wall = dt.datetime(year, month, int(m["day"]), h, mi, se, tzinfo=tz)
            except ValueError as exc:
                raise InputError(f"{where}: time stamp {m['bsd']!r} in year {year}: {exc}") from None
            try:
                at = wall.astimezone(dt.timezone.utc)
                # A repeated hour (clocks going back) prints the same wall times twice; lines are in
                # order, so a time before the previous line's is the second pass (PEP 495 fold=1).
                if last is not None and at < last:
                    at = wall.replace(fold=1).astimezone(dt.timezone.utc)
            except OverflowError:
                raise InputError(f"{where}: time stamp {m['bsd']!r} in year {year} (zone {zone}) is outside the "
                                 "instants a datetime holds (allowed: 0001-01-01T00:00Z..9999-12-31T23:59Z; check "
                                 "year=)") from None
            last = at
        cmd = m["cmd"].strip()
        if len(rows) >= max_rows:
            raise too_many(label, f"more than {max_rows:,} runs", max_rows)
        rows.append({"schedule_id": by_command.get(cmd, f"command:{cmd}"), "scheduled_utc": None,
                     "started_utc": at, "finished_utc": None, "status": None, "origin": f"{label} line {n}"})
    if not rows:
        raise InputError(f"syslog: {label}: no cron 'CMD (...)' line")
    return rows


def _detect(head: bytes, text: str) -> bool:
    return _CRON_ANY.search(text) is not None


def _read(src: Source, caps: Caps, crontab: object = None, zone: str = "UTC",
          year: int | None = None) -> pl.DataFrame:
    tab = _syslog_setup(crontab, zone, year, src.label)  # (checked before the log is read)
    return frame(_syslog(lines(src, caps.rows), src.label, tab, zone, year, caps.rows))


READER = HistoryReader("syslog", _detect, _read, ("crontab", "zone", "year"))
