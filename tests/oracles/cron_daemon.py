"""Debian's cron daemon as an oracle: the runs ``tools/capture_cron.py`` recorded, and calsim laid beside them.

The fixtures (``tests/fixtures/cron_daemon/<kind>.cron-<v>.faketime-<v>.tz-<release>.json``)
hold, per scenario, the zone, the horizon ``[start, end)``, the crontab's jobs,
the outages (``down``: the daemon killed and started again; ``suspend``: the
clock jumped while the daemon slept) and every instant each job ran at, read
from the fake clock inside the job. The daemon was started 30 s before
``start`` (the fixture's ``boot_lead_s``), so ``start``'s minute is its first.

:func:`compare` runs the same scenario through ``calsim.simulate`` (the
preset applied, ``tick="1min"``, the same ``calsim.Outage``\\ s) and pairs
each job's calsim rows with the daemon's runs:

1. every calsim run (``done``) takes the daemon run nearest to 1.5 s after
   its start, if one lies within ``[-1 s, +75 s]`` of it (nearest first; of
   rows calsim started together, the one of the wall time the daemon ran in,
   else the earliest due);
2. each daemon run left over takes the calsim row left over of the wall time
   it ran in, else the earliest one left over due at or before it (at most
   6 h before: a catch-up);
3. a pair *agrees* when calsim ran it and the daemon ran it ``0 < lag <=
   TOLERANCE`` after calsim's start (the daemon wakes at second 1 of a minute,
   ``cron.c`` ``cron_sleep``, plus its own drift and the job's fork/exec before
   ``date`` reads the clock, times the capture's rate), or neither ran it.

Every other pair (calsim ran it and the daemon did not, or later; the daemon
ran something calsim did not) is a :class:`Pair` disagreement, which the
tests must find stated (a predicate over the scenario matching it, tied to a
note of the preset).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

import calsim

FIXTURE_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "cron_daemon"
RELEASE = "2026f"
UTC = dt.timezone.utc
SEC, MIN, HOUR = dt.timedelta(seconds=1), dt.timedelta(minutes=1), dt.timedelta(hours=1)
# second 1 of the minute, the daemon's drift (it sleeps whole seconds) and the job's fork/exec times the rate:
# the recorded runs lie 1.2 to 4.2 s into their minute (99 % under 2.4 s)
TOLERANCE = 5 * SEC
MATCH_WINDOW = (-1 * SEC, 75 * SEC)
CATCH_UP_SPAN = 6 * HOUR


def _t(iso: str) -> dt.datetime:
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Case:
    """One recorded scenario (hashable: the comparisons are cached per case)."""

    id: str
    kind: str
    zone: str
    start: dt.datetime
    end: dt.datetime
    outages: tuple[tuple[dt.datetime, dt.datetime, str], ...]
    jobs: tuple[tuple[str, str], ...]
    runs: tuple[tuple[str, tuple[dt.datetime, ...]], ...]
    source: str

    def spec(self, job: str) -> str:
        return dict(self.jobs)[job]

    def runs_of(self, job: str) -> tuple[dt.datetime, ...]:
        return dict(self.runs)[job]

    @property
    def suspends(self) -> list[tuple[dt.datetime, dt.datetime]]:
        return [(a, b) for a, b, k in self.outages if k == "suspend"]

    @property
    def downs(self) -> list[tuple[dt.datetime, dt.datetime]]:
        return [(a, b) for a, b, k in self.outages if k == "down"]


@functools.cache
def fixtures() -> tuple[tuple[dict, ...], tuple[Case, ...]]:
    """(the fixture files' headers, every scenario), in file order."""
    heads, cases = [], []
    for path in sorted(FIXTURE_DIR.glob("*.json")):
        body = json.loads(path.read_text())
        heads.append({k: v for k, v in body.items() if k != "scenarios"} | {"file": path.name,
                                                                             "n": len(body["scenarios"])})
        for s in body["scenarios"]:
            cases.append(Case(
                s["id"], s["kind"], s["zone"], _t(s["start"]), _t(s["end"]),
                tuple((_t(a), _t(b), k) for a, b, k in s["outages"]), tuple(s["jobs"].items()),
                tuple((job, tuple(_t(x) for x in s["runs"][job])) for job in s["jobs"]), path.name))
    return tuple(heads), tuple(cases)


@functools.cache
def tz(zone: str):
    return calsim.release(RELEASE).zone(zone)


def wall(zone: str, t: dt.datetime) -> dt.datetime:
    """The wall clock (aware, PEP 495 fold) at ``t``."""
    return t.astimezone(tz(zone))


@functools.cache
def transitions(zone: str, lo: dt.datetime, hi: dt.datetime) -> tuple[tuple[dt.datetime, int], ...]:
    """The offset changes in ``[lo, hi]``: (UTC instant, change in seconds: > 0 spring, < 0 fall)."""
    table = calsim.release(RELEASE).table(zone)
    t0 = int(lo.timestamp()) // 60 * 60
    minutes = np.arange(t0, int(hi.timestamp()) + 60, 60, dtype=np.int64)
    off = np.asarray(table.offset_at_utc(minutes), dtype=np.int64)
    at = np.flatnonzero(np.diff(off)) + 1
    return tuple((dt.datetime.fromtimestamp(int(minutes[i]), UTC), int(off[i] - off[i - 1])) for i in at)


def is_wild(spec: str) -> bool:
    """cron's wildcard jobs: minute or hour field starting with '*' (entry.c MIN_STAR / HR_STAR), @hourly."""
    fields = spec.split()
    return spec.strip() == "@hourly" or (not spec.startswith("@") and (fields[0][0] == "*" or fields[1][0] == "*"))


@dataclass(frozen=True)
class Pair:
    """One disagreeing pair: calsim's row (``state`` None: no row paired) and the daemon's run (None: none)."""

    case: Case
    job: str
    nominal: dt.datetime | None
    fold: int | None
    state: str | None
    reason: str | None
    due: dt.datetime | None
    started: dt.datetime | None
    run: dt.datetime | None

    @property
    def spec(self) -> str:
        return self.case.spec(self.job)

    @property
    def wild(self) -> bool:
        return is_wild(self.spec)

    @property
    def calsim_ran(self) -> bool:
        return self.state == "done"

    @property
    def lag(self) -> dt.timedelta | None:
        return None if self.run is None or self.started is None else self.run - self.started

    def describe(self) -> str:
        z = self.case.zone
        row = ("calsim: no row" if self.state is None else
               f"calsim {self.nominal:%m-%d %H:%M} fold={self.fold} {self.state}"
               + (f" at {self.started:%H:%M:%S}Z" if self.calsim_ran else f"/{self.reason}"))
        cron = ("daemon did not run it" if self.run is None else
                f"daemon ran it at {self.run:%H:%M:%S.%f}"[:-3] + f"Z ({wall(z, self.run):%H:%M:%S%z})")
        return f"{self.case.id}: {self.job} ({self.spec}): {row}; {cron}"


def schedules(case: Case, **preset_kwargs) -> list:
    from calsim import presets

    scheds = [calsim.Schedule(name, case.zone, "2025-12-01T00:00", spec) for name, spec in case.jobs]
    return presets.cronie(**preset_kwargs).apply(scheds)


@functools.cache
def calsim_frame(case: Case, preset_kwargs: tuple = ()) -> pl.DataFrame:
    scenario = calsim.Scenario(case.id, schedules(case, **dict(preset_kwargs)), case.start, case.end,
                               release=RELEASE, tick="1min",
                               outages=[calsim.Outage(a, b, kind=k) for a, b, k in case.outages])
    return calsim.simulate(scenario).frame.filter(pl.col("kind") == "scheduled")


@functools.cache
def compare(case: Case, preset_kwargs: tuple = ()) -> tuple[int, tuple[Pair, ...]]:
    """(pairs compared, disagreeing pairs) of one scenario."""
    frame = calsim_frame(case, preset_kwargs)
    cols = ("schedule_id", "nominal_local", "fold", "state", "reason", "due_utc", "started_utc")
    by_job: dict[str, list[tuple]] = {}
    for row in frame.select(*cols).iter_rows():
        by_job.setdefault(row[0], []).append(row[1:])
    n, bad = 0, []
    for job, _ in case.jobs:
        rows = sorted(by_job.get(job, []), key=lambda r: (r[4] is None, r[4] or case.end))
        runs = [r for r in case.runs_of(job) if case.start <= r < case.end]
        labels = [wall(case.zone, r).replace(tzinfo=None, second=0, microsecond=0) for r in runs]
        taken_row, taken_run = {}, {}
        cand = []
        for i, (_, _, state, _, _, started) in enumerate(rows):
            if state != "done":
                continue
            for k, r in enumerate(runs):
                lag = r - started
                if MATCH_WINDOW[0] <= lag <= MATCH_WINDOW[1]:
                    # nearest to 1.5 s after calsim's start; of rows started together (a catch-up), the one of
                    # the wall time the daemon ran it in (its current minute), else the earliest due
                    other = rows[i][0] != labels[k]
                    cand.append((round(abs(lag - 1.5 * SEC) / SEC), other, rows[i][4], i, k))
        for *_, i, k in sorted(cand):
            if i not in taken_row and k not in taken_run:
                taken_row[i], taken_run[k] = k, i
        # daemon runs left over: the row left over of the wall time the daemon was in, else the earliest left
        # over that was due at or before the run (a catch-up)
        for k, r in enumerate(runs):
            if k in taken_run:
                continue
            label = labels[k]
            free = [i for i, (_, _, _, _, due, _) in enumerate(rows)
                    if i not in taken_row and due is not None and due <= r + SEC and r - due <= CATCH_UP_SPAN]
            same = [i for i in free if rows[i][0] == label]
            if same or free:
                i = (same or free)[0]
                taken_row[i], taken_run[k] = k, i
        for i, (nominal, fold, state, reason, due, started) in enumerate(rows):
            n += 1
            run = runs[taken_row[i]] if i in taken_row else None
            ok = (run is None and state != "done") or (
                run is not None and state == "done" and dt.timedelta(0) < run - started <= TOLERANCE)
            if not ok:
                bad.append(Pair(case, job, nominal, fold, state, reason, due, started, run))
        for k, r in enumerate(runs):
            if k not in taken_run:
                n += 1
                bad.append(Pair(case, job, None, None, None, None, None, None, r))
    return n, tuple(bad)
