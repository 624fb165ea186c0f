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
airflow       Airflow's DAG runs: ``GET /api/v2/dags/~/``      ``run_after`` (the cron time, or the
              ``dagRuns`` (``{"dag_runs": [...]}``), a list     data interval's end) of ``scheduled``
              of its runs, or ``airflow dags list-runs -o     and ``backfill`` runs; null for
              json``                                          manual and asset-triggered ones
prefect       Prefect's flow runs: ``prefect flow-run ls -o   ``expected_start_time`` of
              json`` / ``POST /api/flow_runs/filter`` (a      ``auto_scheduled`` runs; null for the
              list), or ``/paginate``'s ``{"results": ...}``  others
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
:func:`~calsim.importers.from_kubernetes` names it; a DAG run's, its
``dag_id``; a flow run's, its deployment's ``deployment_name`` when an
analyst added one, else its ``deployment_id`` (a flow run carries no
deployment name: :mod:`.prefect_runs` shows how to add it). A syslog run is matched
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
  expanded; ``kubectl``'s, Airflow's and Prefect's output, each parsed as
  one document, at most :data:`~calsim.input_files.DEFAULT_MAX_FILE_BYTES` (64 MiB);
  ``CALSIM_MAX_FILE_BYTES`` raises them, ``max_bytes=`` sets them;
* rows: :data:`DEFAULT_MAX_HISTORY_ROWS` (10 million) lines of a text
  history, rows of a CSV or Parquet file (Parquet: as its footer declares,
  before any page is read), Jobs of a ``kubectl`` list, DAG or flow runs
  of an Airflow or Prefect document, or runs;
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

from collections.abc import Iterable

import polars as pl

from ...errors import InputError, did_you_mean
from ...input_files import DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_HISTORY_BYTES, max_file_bytes
from .._history_input import (DEFAULT_MAX_HISTORY_ROWS, HEAD_BYTES, MAX_LINE_BYTES, Source, max_history_rows, too_many,
                              whole_number)
from .._history_table import HISTORY_SCHEMA, read_actual, table
from . import airflow_runs as _airflow_reader
from . import journal as _journal_reader
from . import kubernetes_jobs as _kubernetes_reader
from . import prefect_runs as _prefect_reader
from . import syslog as _syslog_reader
from . import tables as _tables
from ._rows import Caps, HistoryReader

__all__ = ["read_history", "read_actual", "detect_history", "max_history_rows", "HISTORY_KINDS", "HISTORY_SCHEMA",
           "DEFAULT_MAX_HISTORY_ROWS", "MAX_LINE_BYTES", "READERS", "HistoryReader"]

#: The history readers, one module each, in the order their formats are told apart by content (Parquet's
#: magic bytes, a journal's first object, Airflow's and Prefect's run documents -- a JSON object or list with
#: their keys --, kubectl's object (any other JSON object), cron's CMD lines, then CSV for the rest).
READERS: dict[str, HistoryReader] = {r.kind: r for r in (
    _tables.PARQUET, _journal_reader.READER, _airflow_reader.READER, _prefect_reader.READER,
    _kubernetes_reader.READER, _syslog_reader.READER, _tables.CSV)}
#: Their kinds, in the order the module docstring's table and the README list them.
HISTORY_KINDS = tuple(sorted(READERS, key=("kubernetes", "journal", "syslog", "airflow", "prefect", "csv",
                                           "parquet").index))


def detect_history(text: str) -> str:
    """The kind of a history given as text: ``kubernetes``, ``journal``, ``syslog``, ``airflow``, ``prefect``
    or ``csv``.

    Only the first MiB is looked at.

    >>> detect_history('{"__REALTIME_TIMESTAMP": "1773038400000000", "UNIT": "a.service"}\\n')
    'journal'
    """
    return _detect(b"", text[:HEAD_BYTES])  # (text has no magic bytes: never Parquet)


def _detect(head: bytes, text: str) -> str:
    """The first registered reader that says the head is its format (the last one takes the rest)."""
    return next(r.kind for r in READERS.values() if r.detect(head, text))


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
        ``"kubernetes"``, ``"journal"``, ``"syslog"``, ``"airflow"``,
        ``"prefect"``, ``"csv"``, ``"parquet"`` or None (told by content;
        an empty JSON list ``[]`` is neither Airflow's nor Prefect's until
        ``kind=`` says so).
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
        (:func:`max_history_rows`; 1 GiB, 64 MiB for ``kubectl``'s,
        Airflow's and Prefect's JSON, or ``CALSIM_MAX_FILE_BYTES``).

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
    if kind is not None and kind not in READERS:
        raise InputError(f"history: kind {kind!r} is unknown (allowed: {', '.join(HISTORY_KINDS)})"
                         f"{did_you_mean(kind, HISTORY_KINDS) if isinstance(kind, str) else ''}")
    rows_cap = max_history_rows(max_rows)
    bytes_cap = (whole_number(max_bytes, "max_bytes") if max_bytes is not None
                 else max_file_bytes(DEFAULT_MAX_HISTORY_BYTES))
    doc_cap = bytes_cap if max_bytes is not None else max_file_bytes(DEFAULT_MAX_FILE_BYTES)
    if isinstance(path_or_text, pl.DataFrame):
        if kind is not None and not READERS[kind].takes_frame:
            raise InputError(f"history: a DataFrame is a csv or parquet history, not kind {kind!r}")
        label = source or "<frame>"
        if path_or_text.height > rows_cap:
            raise too_many(label, f"{path_or_text.height:,} rows", rows_cap)
        return table(path_or_text, label, "row").sort("schedule_id", "started_utc", maintain_order=True)
    src = Source.of(path_or_text, source, bytes_cap)
    given = {"crontab": crontab, "ids": ids, "timers": timers, "zone": zone, "year": year}
    try:
        head = src.head()
        reader = READERS[kind if kind is not None else _detect(head, head.decode("utf-8", "replace"))]
        out = reader.read(src, Caps(rows_cap, bytes_cap, doc_cap), **{k: given[k] for k in reader.options})
    finally:
        src.close()
    return out.sort("schedule_id", "started_utc", maintain_order=True)
