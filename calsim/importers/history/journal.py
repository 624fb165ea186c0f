"""systemd's journal (``journalctl -o json``, one object a line): the start and finish of each ``.service`` run.

A run gets its unit's name; with ``ids=`` (the schedule ids simulated) the
first id among the unit name, its stem, the stem unescaped as
``systemd-escape --unescape`` does, the stem + ``.timer``; with ``timers=``
the timer whose ``Unit=`` starts the service. The scheduled time is unknown.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable

import polars as pl

from ...errors import InputError
from .._history_input import Source, lines, too_many
from ._rows import EPOCH, Caps, HistoryReader, cut, frame

__all__ = ["READER"]

# systemd's catalog (catalog/systemd.catalog.in; MESSAGE_ID values of src/systemd/sd-messages.h).
_JOB_BEGUN = "7d4958e842da4a758f6c1cdc7b36dcc5"    # "Starting X..." (a start job began)
_JOB_DONE = "39f53479d3a045ac8e11786248231fbf"     # "Started X." / "Finished X." (oneshot: after it exited)
_JOB_FAILED = "be02cf6855d2428ba40df7e9d022f03d"   # "Failed to start X."
_UNIT_SUCCESS = "7ad2d189f7e94e70a38c781354912448"  # "X: Deactivated successfully."
_UNIT_FAILED = "d9b373ed55a64feb8242e02dbe79a49c"   # "X: Failed with result 'exit-code'."

def _ids(ids: object) -> set[str]:
    if ids is None:
        return set()
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise InputError(f"ids: expected a list of schedule ids, got {type(ids).__name__}")
    out = set()
    for v in ids:
        if not isinstance(v, str):
            raise InputError(f"ids: expected schedule ids (strings), got {cut(v)}")
        out.add(v)
    return out


def _timer_units(timers: object) -> dict[str, str]:
    """``{service unit: timer id}`` of the timers given (a schedule ``stem:k`` counts as ``stem``)."""
    from ..systemd import from_systemd

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
            raise InputError(f"{where}: not a JSON object "
                             "(expected `journalctl -o json` output, one entry a line)") from None
        if not isinstance(e, dict):
            raise InputError(f"{where}: expected a JSON object, got {cut(e)}")
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
                             f"at most 17 digits, got {cut(raw)}")
        at = EPOCH + dt.timedelta(microseconds=int(raw))
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


def _detect(head: bytes, text: str) -> bool:
    body = text.lstrip("\ufeff \t\r\n")
    if not body.startswith("{"):
        return False
    first, complete, _ = body.partition("\n")
    if first.strip() == "{":
        return False  # kubectl prints one key a line; journalctl one entry a line
    if '"__REALTIME_TIMESTAMP"' in first:
        return True
    try:
        obj = json.loads(first) if complete else None
    except (ValueError, RecursionError):
        obj = None
    return isinstance(obj, dict) and "__REALTIME_TIMESTAMP" in obj


def _read(src: Source, caps: Caps, ids: object = None, timers: object = None) -> pl.DataFrame:
    return frame(_journal(lines(src, caps.rows), src.label, _ids(ids), _timer_units(timers), caps.rows))


READER = HistoryReader("journal", _detect, _read, ("ids", "timers"))
