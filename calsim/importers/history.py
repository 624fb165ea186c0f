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

``kind=None`` tells them apart by content (Parquet by its magic bytes, a
``.parquet`` path too). Every reader returns one row per run: ``schedule_id``
str, ``scheduled_utc`` Datetime UTC (null when the log does not say it),
``started_utc`` Datetime UTC, ``finished_utc`` Datetime UTC, ``status``
(``succeeded|failed|running`` or null) and ``origin`` (file and line or
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
optional ``fold``, ``finished_utc``, ``status``.

>>> import calsim.importers.history as h
>>> log = "2026-03-09T06:30:01.204518+00:00 db1 CRON[4121]: (ops) CMD (/usr/local/bin/backup --full)\\n"
>>> h.read_history(log, crontab="CRON_TZ=America/New_York\\n30 2 * * * /usr/local/bin/backup --full\\n").select(
...     "schedule_id", "started_utc").row(0)
('crontab:2', datetime.datetime(2026, 3, 9, 6, 30, 1, 204518, tzinfo=zoneinfo.ZoneInfo(key='UTC')))
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from ..input_files import DEFAULT_MAX_HISTORY_BYTES, read_file
from ..errors import CalsimError, InputError, LedgerSchemaError

__all__ = ["read_history", "read_actual", "detect_history", "HISTORY_KINDS", "HISTORY_SCHEMA"]

HISTORY_KINDS = ("kubernetes", "journal", "syslog", "csv", "parquet")
UTC = pl.Datetime("us", "UTC")
HISTORY_SCHEMA = {"schedule_id": pl.String, "scheduled_utc": UTC, "started_utc": UTC, "finished_utc": UTC,
                  "status": pl.String, "origin": pl.String}

# kubernetes/pkg/controller/cronjob/utils.go getJobFromTemplate2: the annotation is
# scheduledTime.In(<spec.timeZone>).Format(time.RFC3339), an instant with its offset;
# getJobName names the Job "<cronjob>-<scheduledTime.Unix()/60>".
_K8S_SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
_K8S_MANUAL = "cronjob.kubernetes.io/instantiate"  # "manual": kubectl create job --from=cronjob/...

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
_CRON_ANY = re.compile(r"\b(?:CRON|CROND|crond|cron)\[\d+\]:\s+\([^)]*\)\s+CMD\s+\(")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                       "Nov", "Dec"), 1)}


def detect_history(text: str) -> str:
    """The kind of a history given as text: ``kubernetes``, ``journal``, ``syslog`` or ``csv``.

    >>> detect_history('{"__REALTIME_TIMESTAMP": "1773038400000000", "UNIT": "a.service"}\\n')
    'journal'
    """
    body = text.lstrip("\ufeff \t\r\n")
    if body.startswith("{"):
        first = body.split("\n", 1)[0]
        try:
            obj = json.loads(first)
        except ValueError:
            return "kubernetes"  # a pretty-printed object: kubectl's output
        return "journal" if isinstance(obj, dict) and "__REALTIME_TIMESTAMP" in obj else "kubernetes"
    if _CRON_ANY.search(body):
        return "syslog"
    return "csv"


def read_history(path_or_text: object, kind: str | None = None, *, crontab: object = None,
                 ids: Iterable[str] | None = None, timers: object = None, zone: str = "UTC",
                 year: int | None = None, source: str | None = None) -> pl.DataFrame:
    """Read a run history (see the module docstring) into reconcile's frame.

    Parameters
    ----------
    path_or_text
        A path (``str`` without a line break, or ``pathlib.Path``), the
        content (``str`` with a line break, or ``bytes``), or for CSV/Parquet
        a polars DataFrame.
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
        year of the first line. ISO stamps with an offset need neither.
    source
        The name used in ``origin`` and messages (default: the path).

    Returns
    -------
    pl.DataFrame
        One row per run, sorted by ``schedule_id`` then ``started_utc``.

    Raises
    ------
    InputError
        Unreadable input, or an item whose field is malformed (the message
        names the file, the line or item, and the field).
    """
    if kind is not None and kind not in HISTORY_KINDS:
        raise InputError(f"history: kind {kind!r} is unknown (allowed: {', '.join(HISTORY_KINDS)})")
    if isinstance(path_or_text, pl.DataFrame):
        return _table(path_or_text, source or "<frame>")
    data, label = _read(path_or_text, source)
    if kind is None:
        if data[:4] == b"PAR1":
            kind = "parquet"
        else:
            kind = detect_history(_text(data, label))
    if kind == "parquet":
        try:
            frame = pl.read_parquet(io.BytesIO(data))
        except Exception as exc:  # polars raises its own and OSError-like errors for a broken file
            raise InputError(f"history: {label}: not a readable Parquet file ({_first(exc)})") from None
        out = _table(frame, label)
    elif kind == "csv":
        try:
            frame = pl.read_csv(io.BytesIO(data), try_parse_dates=True, infer_schema_length=10000)
        except Exception as exc:
            raise InputError(f"history: {label}: not a readable CSV file ({_first(exc)})") from None
        out = _table(frame, label)
    elif kind == "kubernetes":
        out = _frame(_kubernetes(_text(data, label), label))
    elif kind == "journal":
        out = _frame(_journal(_text(data, label), label, ids, _timer_units(timers)))
    else:
        out = _frame(_syslog(_text(data, label), label, crontab, zone, year))
    return out.sort("schedule_id", "started_utc", maintain_order=True)


# -- input ------------------------------------------------------------------------------------------------

def _read(path_or_text: object, source: str | None) -> tuple[bytes, str]:
    if isinstance(path_or_text, bytes):
        return path_or_text, source or "<history>"
    if isinstance(path_or_text, str) and ("\n" in path_or_text or "\r" in path_or_text):
        return path_or_text.encode("utf-8", "surrogatepass"), source or "<history>"
    if isinstance(path_or_text, (str, os.PathLike)):
        data = read_file(path_or_text, "history", binary=True, limit=DEFAULT_MAX_HISTORY_BYTES)
        assert isinstance(data, bytes)
        return data, source or str(path_or_text)
    raise InputError(f"history: expected a path, the file's text or a DataFrame, got {type(path_or_text).__name__}")


def _text(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"history: {label}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0][:160] if text else type(exc).__name__)


def _cut(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=HISTORY_SCHEMA, orient="row") if rows else pl.DataFrame(schema=HISTORY_SCHEMA)


def _instant(value: object, where: str) -> dt.datetime:
    """An RFC 3339 / ISO 8601 time with ``Z`` or an offset, as an aware UTC datetime."""
    if not isinstance(value, str):
        raise InputError(f"{where}: expected an RFC 3339 time such as '2026-03-09T06:30:00Z', got {_cut(value)}")
    try:
        t = dt.datetime.fromisoformat(value)
    except ValueError:
        raise InputError(f"{where}: expected an RFC 3339 time such as '2026-03-09T06:30:00Z', got {_cut(value)}") from None
    if t.tzinfo is None:
        raise InputError(f"{where}: {_cut(value)} has no offset (an instant needs 'Z' or '+HH:MM')")
    try:
        return t.astimezone(dt.timezone.utc)
    except OverflowError:
        raise InputError(f"{where}: {_cut(value)} is out of range") from None


# -- CSV / Parquet --------------------------------------------------------------------------------------

def read_actual(actual: object) -> pl.DataFrame:
    """A run history given as a frame or a CSV / Parquet path, in the columns reconcile compares.

    ``schedule_id`` and ``started_utc`` (or ``started``; naive is UTC) are
    required, with ``nominal_local`` (naive wall time), ``scheduled_utc``
    (an instant) or ``scheduled`` (aware: an instant, naive: wall time);
    ``fold`` and ``status`` are kept. Times come out as ``Datetime("us",
    "UTC")`` (``nominal_local`` naive). Errors start with ``actual:``.

    >>> import polars as pl
    >>> read_actual(pl.DataFrame({"schedule_id": ["a"], "scheduled": ["2026-03-09T02:30"],
    ...                           "started": ["2026-03-09T06:30:02Z"]})).columns
    ['schedule_id', 'started_utc', 'nominal_local', 'status']
    """
    if isinstance(actual, (str, os.PathLike)):
        p = Path(actual)
        if not p.exists():
            raise InputError(f"actual: no file {str(p)!r}")
        if p.suffix.lower() == ".parquet":
            frame = pl.read_parquet(p)
        elif p.suffix.lower() == ".csv":
            frame = pl.read_csv(p, try_parse_dates=True)
        else:
            raise InputError(f"actual: {str(p)!r} is neither .csv nor .parquet")
    elif isinstance(actual, pl.DataFrame):
        frame = actual
    else:
        raise InputError(f"actual: expected a polars DataFrame or a CSV/Parquet path, got {type(actual).__name__}")
    frame = frame.rename({c: "started_utc" for c in ("started",) if c in frame.columns and "started_utc" not in frame.columns})
    if "scheduled" in frame.columns:
        t = frame.schema["scheduled"]
        target = "scheduled_utc" if isinstance(t, pl.Datetime) and t.time_zone else "nominal_local"
        if target not in frame.columns:
            frame = frame.rename({"scheduled": target})
    for need in ("schedule_id", "started_utc"):
        if need not in frame.columns:
            raise LedgerSchemaError(f"actual: missing column {need!r} (have {frame.columns})")
    if "nominal_local" not in frame.columns and "scheduled_utc" not in frame.columns:
        raise LedgerSchemaError(f"actual: needs 'nominal_local', 'scheduled_utc' or 'scheduled' (have {frame.columns})")

    def instant(c: str) -> pl.Expr:
        t = frame.schema[c]
        if t == pl.String:  # ISO text, with or without an offset: one zone for the whole column
            e = pl.col(c).str.to_datetime(time_unit="us", time_zone="UTC")
            return e.cast(UTC).alias(c)
        e = pl.col(c)
        if not isinstance(t, pl.Datetime) or not t.time_zone:
            e = e.cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
        return e.dt.convert_time_zone("UTC").cast(UTC).alias(c)

    exprs = [pl.col("schedule_id").cast(pl.String), instant("started_utc")]
    if "scheduled_utc" in frame.columns:
        exprs.append(instant("scheduled_utc"))
    if "nominal_local" in frame.columns:
        t = frame.schema["nominal_local"]
        if isinstance(t, pl.Datetime) and t.time_zone:
            raise InputError("actual: 'nominal_local' must be naive wall time, got an aware column")
        e = pl.col("nominal_local").str.to_datetime(time_unit="us") if t == pl.String else pl.col("nominal_local")
        exprs.append(e.cast(pl.Datetime("us")))
    if "fold" in frame.columns:
        exprs.append(pl.col("fold").cast(pl.Int8))
    exprs.append(pl.col("status").cast(pl.String) if "status" in frame.columns else pl.lit(None, pl.String).alias("status"))
    try:
        return frame.select(exprs)
    except (pl.exceptions.PolarsError, ValueError) as exc:  # text that is no time, mixed naive and aware values
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise InputError(f"actual: a time column holds a value that is not an ISO 8601 time ({first})") from None


def _table(frame: pl.DataFrame, label: str) -> pl.DataFrame:
    try:
        out = read_actual(frame)
        finished = frame["finished_utc"] if "finished_utc" in frame.columns else None
        if finished is not None:
            f = pl.DataFrame({"finished_utc": finished})
            out = out.with_columns(read_actual(f.with_columns(
                pl.lit("x").alias("schedule_id"), pl.col("finished_utc").alias("started_utc"),
                pl.lit(None, UTC).alias("scheduled_utc")))["started_utc"].alias("finished_utc"))
    except CalsimError as exc:
        msg = str(exc)
        raise type(exc)(f"history: {label}: {msg[len('actual: '):] if msg.startswith('actual: ') else msg}") from None
    if "scheduled_utc" not in out.columns and "nominal_local" not in out.columns:  # pragma: no cover - read_actual
        raise InputError(f"history: {label}: no scheduled time column")
    for c, t in HISTORY_SCHEMA.items():
        if c not in out.columns and not (c == "scheduled_utc" and "nominal_local" in out.columns):
            out = out.with_columns(pl.lit(None, t).alias(c))
    n = pl.int_range(2, pl.len() + 2).cast(pl.String)
    return out.with_columns((pl.lit(f"{label} line ") + n).alias("origin"))


# -- Kubernetes Jobs ----------------------------------------------------------------------------------------

def _kubernetes(text: str, label: str) -> list[dict[str, object]]:
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
    rows = []
    for i, job in enumerate(items):
        where = f"kubernetes jobs: {label} item {i}"
        if not isinstance(job, dict):
            raise InputError(f"{where}: expected a Job object, got {_cut(job)}")
        if job.get("kind", "Job") != "Job":
            continue
        meta, status = job.get("metadata") or {}, job.get("status") or {}
        if not isinstance(meta, dict) or not isinstance(status, dict):
            raise InputError(f"{where}: metadata and status must be objects")
        name = meta.get("name")
        where = f"{where} ({name})" if isinstance(name, str) else where
        owners = meta.get("ownerReferences") or []
        if not isinstance(owners, list):
            raise InputError(f"{where}: metadata.ownerReferences: expected a list, got {_cut(owners)}")
        cron = [o for o in owners if isinstance(o, dict) and o.get("kind") == "CronJob"]
        if not cron:
            continue  # a Job no CronJob created is not a scheduled run
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
        elif ann.get(_K8S_MANUAL) != "manual" and isinstance(name, str):
            m = re.fullmatch(re.escape(owner) + r"-(\d{1,12})", name)
            if m:  # before Kubernetes 1.28 the name alone tells the scheduled minute
                scheduled = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=int(m[1]))
        start = status.get("startTime", meta.get("creationTimestamp"))
        if start is None:
            continue  # created, never started (a suspended Job): not a run yet
        started = _instant(start, f"{where}: status.startTime")
        conds = status.get("conditions") or []
        if not isinstance(conds, list):
            raise InputError(f"{where}: status.conditions: expected a list, got {_cut(conds)}")
        true = {c.get("type"): c for c in conds if isinstance(c, dict) and c.get("status") == "True"}
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
        rows.append({"schedule_id": f"{ns}/{owner}", "scheduled_utc": scheduled, "started_utc": started,
                     "finished_utc": finished, "status": state, "origin": f"{label} item {i}"})
    return rows


# -- systemd journal --------------------------------------------------------------------------------------

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


def _journal(text: str, label: str, ids: Iterable[str] | None, units: dict[str, str]) -> list[dict[str, object]]:
    known = set(ids) if ids is not None else set()
    known |= set(units.values())
    open_runs: dict[str, dict[str, object]] = {}
    last_run: dict[str, dict[str, object]] = {}
    rows: list[dict[str, object]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"journal: {label} line {n}"
        try:
            e = json.loads(line)
        except ValueError:
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
        if not isinstance(raw, str) or not raw.isdigit() or len(raw) > 17:
            raise InputError(f"{where}: __REALTIME_TIMESTAMP: expected microseconds since 1970 as a string of "
                             f"digits, got {_cut(raw)}")
        at = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=int(raw))
        run = open_runs.get(unit)
        # A run opens at "Starting X..." (or "Started X." when the log lacks it). A oneshot
        # service logs "X: Deactivated successfully." before "Finished X.", and a failed one
        # "Failed with result" before "Failed to start X.": a late message amends the last run.
        if event == "begun" or (event == "started" and run is None):
            if run is not None:
                rows.append(run)
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
        r["schedule_id"] = units.get(unit) or _unit_id(unit, known)
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


def _unit_id(unit: str, known: set[str]) -> str:
    stem = unit[: -len(".service")]
    unescaped = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m[1], 16)), stem.replace("-", "/"))
    for cand in (unit, stem, unescaped, stem + ".timer"):
        if cand in known or any(k.startswith(cand + ":") for k in known):
            return cand  # a group of calendars (`stem:1`, `stem:2`): reconcile picks the one that fired
    return unit


# -- cron syslog --------------------------------------------------------------------------------------------

def _syslog(text: str, label: str, crontab: object, zone: str, year: int | None) -> list[dict[str, object]]:
    from .crontab import from_crontab
    from ._result import Imported

    if crontab is None:
        raise InputError(f"syslog: {label}: crontab= is required (the crontab whose commands the CMD lines name)")
    tab = crontab if isinstance(crontab, Imported) else from_crontab(crontab, zone=zone)
    by_command: dict[str, str] = {}
    for s in tab:
        cmd = tab.sources[s.id].command
        if cmd is not None:
            by_command.setdefault(cmd.strip(), s.id)
    tz = None
    rows: list[dict[str, object]] = []
    last: dt.datetime | None = None
    last_month = 0
    for n, line in enumerate(text.splitlines(), 1):
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
                raise InputError(f"{where}: time stamp {m['bsd']!r}: unknown month {m['mon']!r}")
            if month < last_month:  # the log crossed New Year
                year += 1
            last_month = month
            try:
                h, mi, se = (int(x) for x in m["hms"].split(":"))
                wall = dt.datetime(year, month, int(m["day"]), h, mi, se, tzinfo=tz)
            except ValueError as exc:
                raise InputError(f"{where}: time stamp {m['bsd']!r}: {exc}") from None
            at = wall.astimezone(dt.timezone.utc)
            # A repeated hour (clocks going back) prints the same wall times twice; lines are in
            # order, so a time before the previous line's is the second pass (PEP 495 fold=1).
            if last is not None and at < last:
                at = wall.replace(fold=1).astimezone(dt.timezone.utc)
            last = at
        cmd = m["cmd"].strip()
        rows.append({"schedule_id": by_command.get(cmd, f"command:{cmd}"), "scheduled_utc": None,
                     "started_utc": at, "finished_utc": None, "status": None, "origin": f"{label} line {n}"})
    if not rows:
        raise InputError(f"syslog: {label}: no cron 'CMD (...)' line")
    return rows
