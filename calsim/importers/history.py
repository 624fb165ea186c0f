"""Run histories: what actually ran, read into the frame :meth:`calsim.LedgerStore.reconcile` takes.

============  ==============================================  ======================================
``kind``      input                                           scheduled time (what the run was for)
============  ==============================================  ======================================
kubernetes    ``kubectl get jobs -A -o json`` (a ``List`` or   the ``batch.kubernetes.io/cronjob-
              one ``Job``); Jobs owned by a CronJob            scheduled-timestamp`` annotation, else
                                                              the name's ``-<minutes>`` suffix
journal       ``journalctl -o json`` (one object a line):     unknown (null)
              systemd's start / finish messages per
              ``.service`` unit
syslog        cron's ``CRON[pid]: (user) CMD (command)``      unknown (null)
              lines (Debian cron, cronie ``CROND``), with the
              crontab that names the commands (``crontab=``)
csv/parquet   columns below                                   ``scheduled`` / ``scheduled_utc`` /
                                                              ``nominal_local``
============  ==============================================  ======================================

``kind=None`` tells them apart by content (the first MiB: Parquet by its
magic bytes). Every reader returns one row per run: ``schedule_id``
str, ``scheduled_utc`` Datetime UTC (null when the log does not say it),
``started_utc`` Datetime UTC, ``finished_utc`` Datetime UTC, ``status``
(``succeeded|failed|running`` or null) and ``origin`` (file and line, row or
item), plus ``nominal_local``/``fold`` when a CSV has them.

**Schedule ids.** A Job's id is ``namespace/cronjob`` as
:func:`~calsim.importers.from_kubernetes` names it. A syslog run is matched
to the crontab entry with the same command (the first such line when two
have it) and gets that entry's id (``crontab:11``); a command of no entry
gets ``command:<command>``. A journal run gets its unit's name; with
``ids=`` (the schedule ids you simulated) it gets the first id among: the
unit name, its stem, the stem unescaped as ``systemd-escape --unescape``
does (``billing-nightly`` -> ``billing/nightly``), the stem + ``.timer``.

**CSV / Parquet columns.** ``schedule_id`` (required); ``started_utc`` or
``started`` (required; naive means UTC); one of ``scheduled_utc`` (an
instant), ``nominal_local`` (naive wall time) or ``scheduled`` (aware: an
instant, naive: wall time), whose values may be empty (then matched by start);
optional ``fold``, ``finished_utc``, ``status``. Other columns are not read.

**Bounds.** A history is read from a regular file only (a FIFO, a device,
a directory, a link to one are refused before anything is read:
:func:`calsim.input_files.open_regular`), and never more than the caps:

* bytes: :data:`~calsim.input_files.DEFAULT_MAX_HISTORY_BYTES` (1 GiB) of
  file, and for Parquet of declared decompressed columns and of text once
  expanded; ``kubectl``'s output, parsed as one document, at most
  :data:`~calsim.input_files.DEFAULT_MAX_FILE_BYTES` (64 MiB);
  ``CALSIM_MAX_FILE_BYTES`` raises them, ``max_bytes=`` sets them;
* rows: :data:`DEFAULT_MAX_HISTORY_ROWS` (10 million) lines of a text
  history, rows of a CSV or Parquet file (Parquet: as its footer declares,
  before any page is read), Jobs of a ``kubectl`` list or runs;
  ``CALSIM_MAX_HISTORY_ROWS`` or ``max_rows=`` sets it;
* a line of a journal or syslog: :data:`MAX_LINE_BYTES` (16 MiB);

text histories are read in 1 MiB pieces (the journal and syslog a line at a
time, never whole), and a Parquet file's footer and page headers are checked
before any page is decompressed (:mod:`calsim.importers._parquet`). Every
parse failure is one :class:`~calsim.errors.InputError` naming the file,
the line, row or item, the field and what is allowed.

>>> import calsim.importers.history as h
>>> log = "2026-03-09T06:30:01.204518+00:00 db1 CRON[4121]: (ops) CMD (/usr/local/bin/backup --full)\\n"
>>> h.read_history(log, crontab="CRON_TZ=America/New_York\\n30 2 * * * /usr/local/bin/backup --full\\n").select(
...     "schedule_id", "started_utc").row(0)
('crontab:2', datetime.datetime(2026, 3, 9, 6, 30, 1, 204518, tzinfo=zoneinfo.ZoneInfo(key='UTC')))
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable

import polars as pl

from ..errors import InputError, shown
from ..input_files import DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_HISTORY_BYTES, max_file_bytes
from ._history_input import (
    DEFAULT_MAX_HISTORY_ROWS,
    HEAD_BYTES,
    MAX_LINE_BYTES,
    Source,
    lines,
    max_history_rows,
    too_many,
    whole_number,
    whole_text,
)
from ._history_table import HISTORY_SCHEMA, check_ids, load_table, read_actual, table

__all__ = ["read_history", "read_actual", "detect_history", "max_history_rows", "HISTORY_KINDS", "HISTORY_SCHEMA",
           "DEFAULT_MAX_HISTORY_ROWS", "MAX_LINE_BYTES"]

HISTORY_KINDS = ("kubernetes", "journal", "syslog", "csv", "parquet")
# kubernetes/pkg/controller/cronjob/utils.go getJobFromTemplate2: the annotation is
# scheduledTime.In(<spec.timeZone>).Format(time.RFC3339), an instant with its offset;
# getJobName names the Job "<cronjob>-<scheduledTime.Unix()/60>".
_K8S_SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
_K8S_MANUAL = "cronjob.kubernetes.io/instantiate"  # "manual": kubectl create job --from=cronjob/...
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_LAST_MINUTE = (dt.datetime(9999, 12, 31, 23, 59, tzinfo=dt.timezone.utc) - _EPOCH) // dt.timedelta(minutes=1)

# systemd's catalog (catalog/systemd.catalog.in; MESSAGE_ID values of src/systemd/sd-messages.h).
_JOB_BEGUN = "7d4958e842da4a758f6c1cdc7b36dcc5"    # "Starting X..." (a start job began)
_JOB_DONE = "39f53479d3a045ac8e11786248231fbf"     # "Started X." / "Finished X." (oneshot: after it exited)
_JOB_FAILED = "be02cf6855d2428ba40df7e9d022f03d"   # "Failed to start X."
_UNIT_SUCCESS = "7ad2d189f7e94e70a38c781354912448"  # "X: Deactivated successfully."
_UNIT_FAILED = "d9b373ed55a64feb8242e02dbe79a49c"   # "X: Failed with result 'exit-code'."

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


def detect_history(text: str) -> str:
    """The kind of a history given as text: ``kubernetes``, ``journal``, ``syslog`` or ``csv``.

    Only the first MiB is looked at.

    >>> detect_history('{"__REALTIME_TIMESTAMP": "1773038400000000", "UNIT": "a.service"}\\n')
    'journal'
    """
    return _detect(text[:HEAD_BYTES])


def _detect(head: str) -> str:
    body = head.lstrip("\ufeff \t\r\n")
    if body.startswith("{"):
        first, complete, _ = body.partition("\n")
        if first.strip() == "{":
            return "kubernetes"  # kubectl prints one key a line; journalctl one entry a line
        if '"__REALTIME_TIMESTAMP"' in first:
            return "journal"
        try:
            obj = json.loads(first) if complete else None
        except (ValueError, RecursionError):
            obj = None
        return "journal" if isinstance(obj, dict) and "__REALTIME_TIMESTAMP" in obj else "kubernetes"
    if _CRON_ANY.search(body):
        return "syslog"
    return "csv"


def read_history(path_or_text: object, kind: str | None = None, *, crontab: object = None,
                 ids: Iterable[str] | None = None, timers: object = None, zone: str = "UTC",
                 year: int | None = None, source: str | None = None, max_rows: int | None = None,
                 max_bytes: int | None = None) -> pl.DataFrame:
    """Read a run history (see the module docstring) into reconcile's frame.

    Parameters
    ----------
    path_or_text
        A path (``str`` without a line break, or ``pathlib.Path``) of a
        regular file, the content (``str`` with a line break, or ``bytes``),
        or for CSV/Parquet a polars DataFrame.
    kind
        ``"kubernetes"``, ``"journal"``, ``"syslog"``, ``"csv"``,
        ``"parquet"`` or None (told by content).
    crontab
        syslog only (required there): the crontab whose entries the commands
        are matched to (a path, its text, or :func:`~calsim.importers.from_crontab`'s result).
    ids
        journal only: the schedule ids to match unit names to (``backup.service``
        is ``backup`` when that id is known; a unit whose timer has several
        ``OnCalendar=`` lines, ids ``backup:1``, ``backup:2``..., is named
        ``backup`` and :func:`calsim.store.reconcile.reconcile` gives each run to the
        calendar that fired it).
    timers
        journal only: the ``.timer`` units the scenario came from (a path,
        its text, a list of them, or :func:`~calsim.importers.from_systemd`'s
        result): a service is matched to the timer whose ``Unit=`` starts
        it, also when the names differ (``nightly.timer`` with
        ``Unit=backup.service``).
    zone, year
        syslog only, for traditional ``Mar  9 10:15:01`` stamps (no zone,
        no year): the host's zone (as cron's ``zone=``, default UTC) and the
        year of the first line (1..9999). ISO stamps with an offset need neither.
    source
        The name used in ``origin`` and messages (default: the path).
    max_rows, max_bytes
        The caps (module docstring): None for the defaults
        (:func:`max_history_rows`; 1 GiB, 64 MiB for ``kubectl``'s output,
        or ``CALSIM_MAX_FILE_BYTES``).

    Returns
    -------
    pl.DataFrame
        One row per run, sorted by ``schedule_id`` then ``started_utc``.

    Raises
    ------
    InputError
        Unreadable input, input over a cap, or an item whose field is
        malformed (the message names the file, the line, row or item, the
        field and what is allowed).
    """
    if kind is not None and kind not in HISTORY_KINDS:
        raise InputError(f"history: kind {kind!r} is unknown (allowed: {', '.join(HISTORY_KINDS)})")
    rows_cap = max_history_rows(max_rows)
    bytes_cap = whole_number(max_bytes, "max_bytes") if max_bytes is not None else max_file_bytes(DEFAULT_MAX_HISTORY_BYTES)
    doc_cap = bytes_cap if max_bytes is not None else max_file_bytes(DEFAULT_MAX_FILE_BYTES)
    if isinstance(path_or_text, pl.DataFrame):
        if kind not in (None, "csv", "parquet"):
            raise InputError(f"history: a DataFrame is a csv or parquet history, not kind {kind!r}")
        label = source or "<frame>"
        if path_or_text.height > rows_cap:
            raise too_many(label, f"{path_or_text.height:,} rows", rows_cap)
        return table(path_or_text, label, "row").sort("schedule_id", "started_utc", maintain_order=True)
    src = Source.of(path_or_text, source, bytes_cap)
    try:
        head = src.head()
        if kind is None:
            kind = "parquet" if head[:4] == b"PAR1" else _detect(head.decode("utf-8", "replace"))
        if kind in ("csv", "parquet"):
            frame, place = load_table(src, kind, rows_cap, bytes_cap)
            out = table(frame, src.label, place)
        elif kind == "kubernetes":
            out = _frame(_kubernetes(whole_text(src, doc_cap), src.label, rows_cap))
        elif kind == "journal":
            known = _ids(ids)
            units = _timer_units(timers)
            out = _frame(_journal(lines(src, rows_cap), src.label, known, units, rows_cap))
        else:
            tab = _syslog_setup(crontab, zone, year, src.label)
            out = _frame(_syslog(lines(src, rows_cap), src.label, tab, zone, year, rows_cap))
    finally:
        src.close()
    return out.sort("schedule_id", "started_utc", maintain_order=True)


def _frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    if not rows:
        return pl.DataFrame(schema=HISTORY_SCHEMA)
    out = pl.DataFrame(rows, schema=HISTORY_SCHEMA, orient="row")
    check_ids(out["schedule_id"], lambda i: str(rows[i]["origin"]), "history: ")
    return out


def _cut(value: object) -> str:
    return shown(value)


def _instant(value: object, where: str) -> dt.datetime:
    """An RFC 3339 / ISO 8601 time with ``Z`` or an offset, as an aware UTC datetime."""
    allowed = "expected an RFC 3339 time such as '2026-03-09T06:30:00Z' (years 0001..9999)"
    if not isinstance(value, str) or len(value) > 64:
        raise InputError(f"{where}: {allowed}, got {_cut(value)}")
    try:
        t = dt.datetime.fromisoformat(value)
    except ValueError:
        raise InputError(f"{where}: {allowed}, got {_cut(value)}") from None
    if t.tzinfo is None:
        raise InputError(f"{where}: {_cut(value)} has no offset (an instant needs 'Z' or '+HH:MM')")
    try:
        return t.astimezone(dt.timezone.utc)
    except OverflowError:
        raise InputError(f"{where}: {_cut(value)} is out of range (allowed: 0001-01-01T00:00Z..9999-12-31T23:59Z)") \
            from None



# -- Kubernetes Jobs ----------------------------------------------------------------------------------------

def _kubernetes(text: str, label: str, max_rows: int) -> list[dict[str, object]]:
    from ._yaml import load_json, load_one

    where = f"kubernetes jobs: {label}"
    # kubectl get jobs -o yaml prints the same object as -o json
    doc = load_json(text, where) if text.lstrip()[:1] in ("{", "[") else load_one(text, where)
    if not isinstance(doc, dict):
        raise InputError(f"kubernetes jobs: {label}: expected the object `kubectl get jobs -o json` prints, "
                         f"got {type(doc).__name__}")
    if doc.get("kind") == "Job":
        items = [doc]
    else:
        items = doc.get("items")
        if not isinstance(items, list):
            raise InputError(f"kubernetes jobs: {label}: items: expected a list of Jobs, got {_cut(items)}")
    if len(items) > max_rows:
        raise too_many(label, f"{len(items):,} items", max_rows)
    rows = []
    for i, job in enumerate(items):
        row = _job(job, f"kubernetes jobs: {label} item {i}", f"{label} item {i}")
        if row is not None:
            rows.append(row)
    return rows


def _job(job: object, where: str, origin: str) -> dict[str, object] | None:
    """The run of one Job (None: not a scheduled run)."""
    if not isinstance(job, dict):
        raise InputError(f"{where}: expected a Job object, got {_cut(job)}")
    if job.get("kind", "Job") != "Job":
        return None
    meta, status = job.get("metadata") or {}, job.get("status") or {}
    if not isinstance(meta, dict) or not isinstance(status, dict):
        raise InputError(f"{where}: metadata and status must be objects")
    name = meta.get("name")
    where = f"{where} ({_cut(name)[1:-1] if len(name) <= 80 else _cut(name)})" if isinstance(name, str) else where
    owners = meta.get("ownerReferences") or []
    if not isinstance(owners, list):
        raise InputError(f"{where}: metadata.ownerReferences: expected a list, got {_cut(owners)}")
    cron = [o for o in owners if isinstance(o, dict) and o.get("kind") == "CronJob"]
    if not cron:
        return None  # a Job no CronJob created is not a scheduled run
    owner = cron[0].get("name")
    ns = meta.get("namespace", "default")
    if not isinstance(owner, str) or not owner or not isinstance(ns, str):
        raise InputError(f"{where}: metadata: expected a namespace and an owner CronJob name, got "
                         f"{_cut(ns)} and {_cut(owner)}")
    ann = meta.get("annotations") or {}
    if not isinstance(ann, dict):
        raise InputError(f"{where}: metadata.annotations: expected an object, got {_cut(ann)}")
    scheduled = None
    if _K8S_SCHEDULED in ann:
        scheduled = _instant(ann[_K8S_SCHEDULED], f"{where}: annotation {_K8S_SCHEDULED}")
    elif ann.get(_K8S_MANUAL) != "manual" and isinstance(name, str) and name.startswith(owner + "-"):
        suffix = name[len(owner) + 1:]
        if suffix.isascii() and suffix.isdigit():  # before Kubernetes 1.28 the name alone tells the minute
            if len(suffix) > 10 or int(suffix) > _LAST_MINUTE:
                what = f"of {len(suffix):,} digits" if len(suffix) > 20 else repr(suffix)
                raise InputError(f"{where}: metadata.name: the minute suffix {what} after {shown(owner + '-')} is "
                                 f"past 9999-12-31 (allowed: minutes since 1970, 0..{_LAST_MINUTE:,}, as the CronJob "
                                 "controller names its Jobs)")
            scheduled = _EPOCH + dt.timedelta(minutes=int(suffix))
    start = status.get("startTime", meta.get("creationTimestamp"))
    if start is None:
        return None  # created, never started (a suspended Job): not a run yet
    started = _instant(start, f"{where}: status.startTime")
    conds = status.get("conditions") or []
    if not isinstance(conds, list):
        raise InputError(f"{where}: status.conditions: expected a list, got {_cut(conds)}")
    true: dict[str, dict] = {}
    for k, c in enumerate(conds):
        if not isinstance(c, dict):
            continue
        kind = c.get("type")
        if not isinstance(kind, str):
            raise InputError(f"{where}: status.conditions[{k}].type: expected a condition type such as 'Complete' "
                             f"or 'Failed', got {_cut(kind)}")
        if c.get("status") == "True":
            true.setdefault(kind, c)
    state, finished = ("running" if status.get("active") else None), None
    if "Complete" in true or "SuccessCriteriaMet" in true:
        state = "succeeded"
    elif "Failed" in true or "FailureTarget" in true:
        state = "failed"
        last = (true.get("Failed") or true.get("FailureTarget") or {}).get("lastTransitionTime")
        if last is not None:
            finished = _instant(last, f"{where}: status.conditions[Failed].lastTransitionTime")
    if status.get("completionTime") is not None:
        finished = _instant(status["completionTime"], f"{where}: status.completionTime")
    return {"schedule_id": f"{ns}/{owner}", "scheduled_utc": scheduled, "started_utc": started,
            "finished_utc": finished, "status": state, "origin": origin}


# -- systemd journal --------------------------------------------------------------------------------------

def _ids(ids: object) -> set[str]:
    if ids is None:
        return set()
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise InputError(f"ids: expected a list of schedule ids, got {type(ids).__name__}")
    out = set()
    for v in ids:
        if not isinstance(v, str):
            raise InputError(f"ids: expected schedule ids (strings), got {_cut(v)}")
        out.add(v)
    return out


def _timer_units(timers: object) -> dict[str, str]:
    """``{service unit: timer id}`` of the timers given (a schedule ``stem:k`` counts as ``stem``)."""
    from .systemd import from_systemd

    if timers is None:
        return {}
    many = timers if isinstance(timers, (list, tuple)) else [timers]
    units: dict[str, str] = {}
    for t in many:
        imported = t if hasattr(t, "sources") else from_systemd(t)
        for sid, src in imported.sources.items():
            if src.command:
                units.setdefault(str(src.command), re.sub(r":\d+$", "", sid))
    return units


def _journal(lines: Iterable[tuple[int, str]], label: str, known: set[str], units: dict[str, str],
             max_rows: int) -> list[dict[str, object]]:
    known = known | set(units.values())
    # "stem" is a group when "stem:<anything>" is known: every prefix before a colon, once.
    groups = {k[:i] for k in known for i, c in enumerate(k) if c == ":"}
    names: dict[str, str] = {}
    open_runs: dict[str, dict[str, object]] = {}
    last_run: dict[str, dict[str, object]] = {}
    rows: list[dict[str, object]] = []
    for n, line in lines:
        if not line.strip():
            continue
        where = f"journal: {label} line {n}"
        try:
            e = json.loads(line)
        except (ValueError, RecursionError):
            raise InputError(f"{where}: not a JSON object (expected `journalctl -o json` output, one entry a line)") from None
        if not isinstance(e, dict):
            raise InputError(f"{where}: expected a JSON object, got {_cut(e)}")
        unit = e.get("UNIT", e.get("USER_UNIT"))
        if not isinstance(unit, str) or not unit.endswith(".service"):
            continue  # the services' own output, timers, other units
        if e.get("JOB_TYPE") not in (None, "start"):
            continue  # stop and reload jobs
        event = _event(e.get("MESSAGE_ID"), e.get("MESSAGE"))
        if event is None:
            continue
        raw = e.get("__REALTIME_TIMESTAMP")
        if not isinstance(raw, str) or not raw.isascii() or not raw.isdigit() or len(raw) > 17:
            raise InputError(f"{where}: __REALTIME_TIMESTAMP: expected microseconds since 1970 as a string of "
                             f"at most 17 digits, got {_cut(raw)}")
        at = _EPOCH + dt.timedelta(microseconds=int(raw))
        run = open_runs.get(unit)
        # A run opens at "Starting X..." (or "Started X." when the log lacks it). A oneshot
        # service logs "X: Deactivated successfully." before "Finished X.", and a failed one
        # "Failed with result" before "Failed to start X.": a late message amends the last run.
        if event == "begun" or (event == "started" and run is None):
            if run is not None:
                rows.append(run)
            if len(rows) + len(open_runs) >= max_rows:
                raise too_many(label, f"more than {max_rows:,} runs", max_rows)
            run = {"schedule_id": unit, "scheduled_utc": None, "started_utc": at, "finished_utc": None,
                   "status": "running", "origin": f"{label} line {n}"}
            open_runs[unit] = last_run[unit] = run
        elif run is None:
            prev = last_run.get(unit)
            if prev is not None and event == "failed":
                prev["status"] = "failed"
        elif event == "finished":
            run["finished_utc"], run["status"] = at, "succeeded"
        elif event in ("succeeded", "failed"):
            run["finished_utc"], run["status"] = at, event
            rows.append(open_runs.pop(unit))
    rows.extend(open_runs.values())
    for r in rows:
        unit = str(r["schedule_id"])
        if unit not in names:
            names[unit] = units.get(unit) or _unit_id(unit, known, groups)
        r["schedule_id"] = names[unit]
    return rows


def _event(message_id: object, message: object) -> str | None:
    """``begun``, ``started``, ``finished``, ``succeeded``, ``failed`` or None (not a run's event)."""
    text = message if isinstance(message, str) else ""
    if message_id == _JOB_BEGUN:
        return "begun"
    if message_id == _JOB_DONE:
        return "finished" if text.startswith("Finished ") else "started"
    if message_id in (_JOB_FAILED, _UNIT_FAILED):
        return "failed"
    if message_id == _UNIT_SUCCESS:
        return "succeeded"
    if message_id is not None:
        return None
    # Without MESSAGE_ID (a journal exported through syslog and back), the catalog's texts.
    if text.startswith("Starting "):
        return "begun"
    if text.startswith("Finished "):
        return "finished"
    if text.startswith("Started "):
        return "started"
    if text.startswith("Failed to start ") or "Failed with result" in text:
        return "failed"
    if "Deactivated successfully" in text:
        return "succeeded"
    return None


def _unit_id(unit: str, known: set[str], groups: set[str]) -> str:
    stem = unit[: -len(".service")]
    unescaped = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m[1], 16)), stem.replace("-", "/"))
    for cand in (unit, stem, unescaped, stem + ".timer"):
        if cand in known or cand in groups:
            return cand  # a group of calendars (`stem:1`, `stem:2`): reconcile picks the one that fired
    return unit


# -- cron syslog --------------------------------------------------------------------------------------------

def _syslog_setup(crontab: object, zone: str, year: object, label: str):  # type: ignore[no-untyped-def]
    """The crontab and the zone a syslog needs, checked before the log is read."""
    from ._result import Imported
    from .crontab import from_crontab

    if crontab is None:
        raise InputError(f"syslog: {label}: crontab= is required (the crontab whose commands the CMD lines name)")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int) or not 1 <= year <= 9999):
        raise InputError(f"syslog: year: {_cut(year)} is not a year (allowed: a whole number from 1 to 9999)")
    return crontab if isinstance(crontab, Imported) else from_crontab(crontab, zone=zone)


def _syslog(lines: Iterable[tuple[int, str]], label: str, tab, zone: str,  # type: ignore[no-untyped-def]
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
                                 f"'Mon DD HH:MM:SS': {_cut(line.strip())}")
            continue  # other programs, cron's own notices (session opened, MAIL, INFO)
        where = f"syslog: {label} line {n}"
        if m["iso"]:
            stamp = m["iso"] if re.search(r"(Z|[+-]\d\d:?\d\d)$", m["iso"]) else m["iso"] + "+00:00"
            at = _instant(stamp.replace(" ", "T", 1), f"{where}: time stamp")
        else:
            if year is None:
                raise InputError(f"{where}: time stamp {m['bsd']!r} has no year: pass year= (--year) and the "
                                 f"host's zone= (--zone)")
            if tz is None:
                from ..tz.release import release

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
