"""APScheduler 3.x itself, driven on a fake clock: the oracle for ``calsim.presets.apscheduler``.

Nothing here re-implements APScheduler's decisions. The real classes of the
installed APScheduler (3.11.3) make every one of them:

* ``BaseScheduler._process_jobs`` (apscheduler/schedulers/base.py:1140-1266 in
  the 3.11.3 wheel): which jobs are due (``MemoryJobStore.get_due_jobs``,
  jobstores/memory.py:21-29: ``next_run_time <= now``), every run time up to
  now (``Job._get_run_times``, job.py:141-155: ``next_run_time <= now``,
  inclusive), ``coalesce`` (base.py:1191-1194: keep ``run_times[-1:]``), the
  submission to the executor and ``MaxInstancesReachedError`` (base.py:
  1195-1211: the whole batch is dropped, not queued), the next run time after
  the last submitted one (base.py:1226-1233, whether or not it was
  submitted) and how long to sleep (base.py:1248-1266);
* ``BaseExecutor.submit_job`` (executors/base.py:58-75: refused when
  ``_instances[job.id] >= max_instances``; one batch = one instance) and
  ``_run_job_success`` (executors/base.py:81-93: the instance is released
  when the whole batch is done; ``BasePoolExecutor`` calls it from the future's
  done-callback, executors/pool.py:15-30);
* ``run_job`` (executors/base.py:106-158): the batch's run times one after
  another, each checked when it is reached: ``difference = now - run_time``,
  missed iff ``difference > timedelta(seconds=misfire_grace_time)``
  (line 120: strictly greater; equal still runs; ``None`` = never missed);
* ``CronTrigger.get_next_fire_time`` (triggers/cron/__init__.py:212-262):
  every fire time, DST included.

What this module adds is only the world around them, on a fake clock:

* the zone: a ``zoneinfo.ZoneInfo`` built from calsim's tz release (``RELEASE``,
  ``calsim.release(...).zone``), so APScheduler reads exactly the zone data
  calsim expands with;
* ``datetime.now`` as seen by ``apscheduler.schedulers.base`` and
  ``apscheduler.executors.base`` is the fake clock (their module attribute
  ``datetime`` is swapped for a subclass while :func:`simulate` runs, and put
  back afterwards; nothing else, calsim included, is patched);
* the scheduler thread: it sleeps what ``_process_jobs`` returns and wakes then
  (rounded to the microsecond), as ``BlockingScheduler._main_loop`` does with
  ``Event.wait(wait_seconds)`` (schedulers/blocking.py:25-30);
* which fire times ``coalesce`` dropped (APScheduler emits no event for them):
  the real ``Job._get_run_times(now)`` (pure) is called just before
  ``_process_jobs`` and whatever it listed that was neither submitted nor
  refused for ``max_instances`` is ``"coalesced"``;
* the executor's worker: a job "runs" ``duration`` of fake time. ``run_job`` is
  called with one run time at a time (its loop body is independent per run
  time; only time passes between two), at the instant the worker reaches it;
  ``_run_job_success`` is called when the batch is done. At one instant, a
  worker finishing comes before the scheduler waking (real threads race there);
* outages (half-open ``[start, end)``):

  ``"suspend"``   the machine sleeps; the process and its ``MemoryJobStore``
                  survive. With ``wake="wall"`` (default) the scheduler wakes at
                  ``end`` if its wake-up fell in the outage (a wait on the wall
                  clock, ``CLOCK_REALTIME``: CPython before bpo-41710 or without
                  ``sem_clockwait``, and what calsim's ``Outage(kind="suspend")``
                  describes). With
                  ``wake="monotonic"`` the pending wait is *prolonged* by the
                  sleep (CPython >= 3.10 on glibc >= 2.30 waits on
                  ``CLOCK_MONOTONIC``, which stops during suspend:
                  python/cpython#28662, #28671; APScheduler's open issue
                  agronholm/apscheduler#794 "the scheduler should be woken up
                  immediately" on resume). A job running at ``start`` is frozen
                  too: it finishes ``end - start`` later (unless
                  ``simulate(freeze_runs=False)``, a counterfactual).
  ``"restart"``   the process dies at ``start`` and is started again at ``end``
                  with a fresh ``MemoryJobStore`` (the default store): the app
                  adds its jobs again, each gets its first fire time at or after
                  ``end`` (``_real_add_job``, base.py:1054-1070), so nothing from
                  the outage is ever seen (outcome ``"unseen"``). A job running at
                  ``start`` is killed (outcome ``"killed"``, no finish).
  ``"restart_persistent"``  the same, but the job store persists (e.g.
                  ``SQLAlchemyJobStore``) and the app does not re-add the job
                  (``replace_existing=True`` would recompute ``next_run_time`` as
                  ``"restart"`` does): the job comes back with the
                  ``next_run_time`` stored before the crash, so the next wake-up
                  (at ``end``) sees the backlog. Emulated by adding the job with
                  that ``next_run_time`` to a new scheduler.

Every fire time of a job in ``[start, end)`` gets one :class:`Fire` with its
outcome: ``"executed"`` (``started``/``finished``), ``"missed"``
(``EVENT_JOB_MISSED`` from ``run_job``), ``"coalesced"`` (dropped by
``coalesce``: APScheduler emits no event for it), ``"max_instances"``
(``EVENT_JOB_MAX_INSTANCES``), ``"unseen"`` (never computed: a restart) or
``"killed"`` (running when the process died).
"""

from __future__ import annotations

import heapq
import itertools
import logging
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from datetime import datetime, timedelta, timezone
from unittest import mock

import apscheduler.executors.base as _aps_executors_base
import apscheduler.schedulers.base as _aps_schedulers_base
from apscheduler.events import EVENT_JOB_EXECUTED, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED
from apscheduler.executors.base import BaseExecutor, run_job
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.triggers.cron import CronTrigger

import calsim

__all__ = ["JobSpec", "Outage", "Fire", "simulate", "fire_times", "zone", "APSCHEDULER_VERSION", "RELEASE"]

APSCHEDULER_VERSION = version("apscheduler")
RELEASE = "2026f"  # the tz release both sides read: zoneinfo gets calsim's own TZif data (Release.zone)
UTC = timezone.utc
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_UNSET = object()


def _us(t: datetime) -> int:
    d = t.astimezone(UTC) - _EPOCH
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def _dt(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def zone(name: str, release: str = RELEASE):
    """The ``zoneinfo.ZoneInfo`` of ``name`` built from calsim's tz ``release`` (one object per name: CronTriggers
    of one zone compare their datetimes by wall clock, as in an app that builds them from one ``ZoneInfo(name)``)."""
    return calsim.release(release).zone(name)


@dataclass(frozen=True)
class JobSpec:
    """One ``scheduler.add_job(func, CronTrigger(**cron, timezone=zone), id=id, ...)``.

    ``misfire_grace_time``, ``coalesce`` and ``max_instances`` left unset take
    the scheduler's job defaults (1, True, 1: schedulers/base.py:910-913 ``_job_defaults``).
    ``duration`` is how long each execution takes (a ``timedelta``).
    """

    id: str
    cron: dict
    zone: str
    misfire_grace_time: object = _UNSET
    coalesce: object = _UNSET
    max_instances: object = _UNSET
    duration: timedelta = timedelta(0)

    def trigger(self) -> CronTrigger:
        return CronTrigger(timezone=zone(self.zone), **self.cron)

    def add_kwargs(self) -> dict:
        kw = {}
        for name in ("misfire_grace_time", "coalesce", "max_instances"):
            value = getattr(self, name)
            if value is not _UNSET:
                kw[name] = value
        return kw


@dataclass(frozen=True)
class Outage:
    """``[start, end)``; ``kind`` is ``"suspend"``, ``"restart"`` or ``"restart_persistent"``."""

    start: datetime
    end: datetime
    kind: str = "suspend"

    def __post_init__(self) -> None:
        if self.kind not in ("suspend", "restart", "restart_persistent"):
            raise ValueError(f"outage kind {self.kind!r}")
        if not self.end > self.start:
            raise ValueError("outage end must be after its start")


@dataclass
class Fire:
    """What APScheduler did with one fire time (``fire_utc``) of one job."""

    job_id: str
    fire_utc: datetime
    outcome: str
    picked_utc: datetime | None = None  # the _process_jobs ``now`` that saw it
    started_utc: datetime | None = None
    finished_utc: datetime | None = None

    def key(self) -> tuple:
        return (self.outcome, self.started_utc, self.finished_utc)


class _Clock:
    """The fake wall clock (integer microseconds since the epoch, UTC)."""

    def __init__(self, us: int) -> None:
        self.us = us

    def now(self, tz=None) -> datetime:
        t = _dt(self.us)
        return t.astimezone(tz) if tz is not None else t.replace(tzinfo=None)


@contextmanager
def _fake_now(clock: _Clock):
    """``datetime.now`` of APScheduler's scheduler and executor modules reads ``clock`` (and only theirs)."""

    class FakeDatetime(datetime):
        @classmethod
        def now(cls, tz=None):
            return clock.now(tz)

    # APScheduler logs a warning per missed run and per max_instances refusal: quiet while it runs.
    logger = logging.getLogger("apscheduler")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with mock.patch.object(_aps_schedulers_base, "datetime", FakeDatetime), \
                mock.patch.object(_aps_executors_base, "datetime", FakeDatetime):
            yield
    finally:
        logger.setLevel(level)


def _work() -> None:
    """The job's function (its duration is fake time, added by the worker)."""


class _FakeClockScheduler(BaseScheduler):
    """A ``BaseScheduler`` whose thread is the driver below: ``wakeup()`` asks for a wake-up now."""

    def __init__(self, driver: "_Driver", **options) -> None:
        self._driver = driver
        super().__init__(**options)

    def shutdown(self, wait: bool = True) -> None:
        super().shutdown(wait)

    def wakeup(self) -> None:
        self._driver.wake_now()


class _FakeClockExecutor(BaseExecutor):
    """An executor whose worker runs on the fake clock (see :class:`_Batch`)."""

    def __init__(self, driver: "_Driver") -> None:
        super().__init__()
        self._driver = driver

    def _do_submit_job(self, job, run_times) -> None:
        self._driver.submitted(self, job, list(run_times))


@dataclass
class _Batch:
    """One ``run_job(job, ..., run_times)`` call in a worker thread."""

    executor: _FakeClockExecutor
    job: object
    run_times: list
    index: int = 0
    events: list = field(default_factory=list)
    running: Fire | None = None  # the execution in progress (between start and finish)
    alive: bool = True


class _Driver:
    def __init__(self, jobs: list[JobSpec], start: datetime, end: datetime, outages: list[Outage], wake: str,
                 freeze_runs: bool = True):
        if wake not in ("wall", "monotonic"):
            raise ValueError(f"wake {wake!r}")
        self.jobs = {j.id: j for j in jobs}
        self.start_us, self.end_us = _us(start), _us(end)
        self.outages = sorted(outages, key=lambda o: o.start)
        for a, b in zip(self.outages, self.outages[1:]):
            if b.start <= a.end:
                raise ValueError("outages overlap or touch (merge them)")
        self.wake_mode = wake
        self.freeze_runs = freeze_runs
        self.clock = _Clock(self.start_us)
        self.queue: list = []  # (time_us, priority, seq, kind, payload)
        self.seq = itertools.count()
        self.fires: dict[str, list[Fire]] = {j: [] for j in self.jobs}
        self.scheduler: _FakeClockScheduler | None = None
        self.batches: list[_Batch] = []
        self.pending_wake: list | None = None  # the queue entry of the scheduler's next wake-up
        self.down = False

    # -- the queue: at one instant, outages (0), workers (1), then the scheduler (2)
    def _push(self, t: int, prio: int, kind: str, payload=None) -> list:
        entry = [t, prio, next(self.seq), kind, payload, True]
        heapq.heappush(self.queue, entry)
        return entry

    def wake_now(self) -> None:
        if not self.down:
            self._set_wake(self.clock.us)

    def _set_wake(self, t: int) -> None:
        if self.pending_wake is not None:
            if self.pending_wake[0] <= t:
                return
            self.pending_wake[5] = False
        self.pending_wake = self._push(t, 2, "wake")

    # -- the process
    def _boot(self, persisted: dict | None) -> None:
        """A new process: scheduler, executor and MemoryJobStore; the app adds its jobs; start()."""
        sched = _FakeClockScheduler(self, timezone=UTC)
        sched.add_executor(_FakeClockExecutor(self), "default")
        sched.add_jobstore(MemoryJobStore(), "default")
        sched.add_listener(self._on_max_instances, EVENT_JOB_MAX_INSTANCES)
        self.scheduler = sched
        for spec in self.jobs.values():
            kw = spec.add_kwargs()
            if persisted is not None:
                nrt = persisted.get(spec.id)
                if nrt is None:
                    continue  # the job is gone from the store (its trigger ended)
                kw["next_run_time"] = nrt
            sched.add_job(_work, spec.trigger(), id=spec.id, **kw)
        sched.start()

    def _stored_next_run_times(self) -> dict:
        return {job.id: job.next_run_time for job in self.scheduler.get_jobs()}

    # -- the executor's side
    def submitted(self, executor: _FakeClockExecutor, job, run_times: list) -> None:
        batch = _Batch(executor, job, run_times)
        self.batches.append(batch)
        for rt in run_times:
            self._record(job.id, rt, "submitted", picked=self.clock.us)
        self._push(self.clock.us, 1, "step", batch)

    def _on_max_instances(self, event) -> None:
        for rt in event.scheduled_run_times:
            self._record(event.job_id, rt, "max_instances", picked=self.clock.us)

    def _record(self, job_id: str, run_time: datetime, outcome: str, picked: int | None = None) -> Fire:
        f = Fire(job_id, run_time.astimezone(UTC), outcome, picked_utc=None if picked is None else _dt(picked))
        self.fires[job_id].append(f)
        return f

    def _find(self, job_id: str, run_time: datetime) -> Fire:
        rt = run_time.astimezone(UTC)
        for f in reversed(self.fires[job_id]):
            if f.fire_utc == rt and f.outcome == "submitted":
                return f
        raise AssertionError(f"run time {rt} of {job_id} was never submitted")

    def _step(self, batch: _Batch) -> None:
        """The worker at the fake instant: finish the execution in progress, then go on through run_times."""
        if not batch.alive:
            return
        now = self.clock.us
        if batch.running is not None:
            batch.running.finished_utc = _dt(now)
            batch.running = None
        spec = self.jobs[batch.job.id]
        while batch.index < len(batch.run_times):
            rt = batch.run_times[batch.index]
            batch.index += 1
            fire = self._find(batch.job.id, rt)
            events = run_job(batch.job, "default", [rt], "apscheduler.executors.default")
            batch.events.extend(events)
            (event,) = events
            if event.code == EVENT_JOB_MISSED:
                fire.outcome = "missed"
                continue
            assert event.code == EVENT_JOB_EXECUTED, event
            fire.outcome, fire.started_utc = "executed", _dt(now)
            dur = spec.duration // timedelta(microseconds=1)
            if dur == 0:
                fire.finished_utc = _dt(now)
                continue
            batch.running = fire
            self._push(now + dur, 1, "step", batch)
            return
        # run_job returned: the executor's done-callback releases the instance
        batch.alive = False
        self.batches.remove(batch)
        batch.executor._run_job_success(batch.job.id, batch.events)

    # -- the scheduler thread
    def _wake(self) -> None:
        self.pending_wake = None
        # What _process_jobs will compute (the same real calls, which change nothing): the fire times
        # it drops with coalesce get no event in APScheduler, so they are recorded from the difference.
        now = self.clock.now(UTC)
        computed = {job.id: job._get_run_times(now)
                    for job in self.scheduler._lookup_jobstore("default").get_due_jobs(now)}
        before = {job_id: len(self.fires[job_id]) for job_id in computed}
        wait = self.scheduler._process_jobs()
        for job_id, run_times in computed.items():
            handled = [f.fire_utc for f in self.fires[job_id][before[job_id]:]]
            for rt in run_times:
                if rt.astimezone(UTC) in handled:
                    handled.remove(rt.astimezone(UTC))
                else:
                    self._record(job_id, rt, "coalesced", picked=self.clock.us)
        if wait is not None:
            self._set_wake(self.clock.us + round(wait * 1_000_000))

    # -- outages
    def _outage_start(self, o: Outage) -> None:
        s, e = _us(o.start), _us(o.end)
        if o.kind == "suspend":
            shift = e - s
            entries = [x for x in self.queue if x[5] and x[3] in ("wake", "step")]
            for x in entries:
                x[5] = False
            for x in entries:
                if x[3] == "wake":
                    t = max(x[0], e) if self.wake_mode == "wall" else x[0] + shift
                    self.pending_wake = None
                    self._set_wake(t)
                elif self.freeze_runs:  # a worker: frozen with the machine
                    self._push(x[0] + shift, 1, "step", x[4])
                else:  # counterfactual (freeze_runs=False): the execution keeps its wall-clock duration
                    self._push(x[0], 1, "step", x[4])
            return
        # the process dies: running executions are killed, their batch's other run times never reached
        persisted = self._stored_next_run_times() if o.kind == "restart_persistent" else None
        for batch in list(self.batches):
            if batch.running is not None:
                batch.running.outcome = "killed"
                batch.running = None
            for rt in batch.run_times[batch.index:]:
                self._find(batch.job.id, rt).outcome = "killed"
            batch.alive = False
        self.batches.clear()
        for x in self.queue:
            if x[3] in ("wake", "step"):
                x[5] = False
        self.pending_wake = None
        self.down = True
        self.scheduler = None
        self._push(e, 0, "outage_end", (o, persisted))

    def _outage_end(self, payload) -> None:
        o, persisted = payload
        self.down = False
        self._boot(persisted)

    def run(self) -> dict[str, list[Fire]]:
        with _fake_now(self.clock):
            self._boot(None)
            for o in self.outages:
                self._push(_us(o.start), 0, "outage_start", o)
            while self.queue:
                t, _prio, _seq, kind, payload, live = heapq.heappop(self.queue)
                if not live:
                    continue
                if kind == "wake" and t >= self.end_us:
                    continue  # the horizon ends: the scheduler is not followed further
                if kind == "outage_start" and t >= self.end_us:
                    continue
                assert t >= self.clock.us, (t, self.clock.us)
                self.clock.us = t
                if kind == "wake":
                    self._wake()
                elif kind == "step":
                    self._step(payload)
                elif kind == "outage_start":
                    self._outage_start(payload)
                elif kind == "outage_end":
                    self._outage_end(payload)
        return self.fires


def fire_times(spec: JobSpec, start: datetime, end: datetime) -> list[datetime]:
    """Every fire time of ``spec``'s CronTrigger in ``[start, end)``, iterated as this fake clock's scheduler does
    (UTC): it wakes exactly at each fire time, so ``now`` is the previous fire time (and a shifted gap time that is
    also a real one comes back twice, see ``presets.apscheduler``'s notes)."""
    trigger = spec.trigger()
    prev, now, out = None, start.astimezone(UTC), []
    while True:
        t = trigger.get_next_fire_time(prev, now)
        if t is None or t.astimezone(UTC) >= end:
            return out
        out.append(t.astimezone(UTC))
        prev = now = t


def simulate(jobs: list[JobSpec], start: datetime, end: datetime, outages: list[Outage] = (),
             wake: str = "wall", freeze_runs: bool = True) -> dict[str, list[Fire]]:
    """Run the real APScheduler 3.x over ``[start, end)`` on a fake clock.

    The jobs are added before ``scheduler.start()`` at ``start``. Returns, per
    job id, one :class:`Fire` per fire time in ``[start, end)`` (in UTC order;
    a fire time the trigger gives twice appears twice) with what APScheduler
    did with it. Executions submitted before ``end`` are followed to their
    finish; wake-ups at or after ``end`` are not.

    ``freeze_runs=False`` is a counterfactual, not APScheduler: an execution
    going when the machine suspends keeps its wall-clock duration (as calsim
    models it). The tests use it only to recognise the disagreements that the
    freezing explains.
    """
    driver = _Driver(list(jobs), start, end, list(outages), wake, freeze_runs)
    seen = driver.run()
    end_utc = end.astimezone(UTC)
    out: dict[str, list[Fire]] = {}
    for spec in jobs:
        got = [f for f in seen[spec.id] if f.fire_utc < end_utc]
        for f in got:
            assert f.outcome != "submitted", f  # every submitted run time was reached
        # Fire times the scheduler never computed (a restart): unseen. Multisets: a trigger may repeat a time.
        pool: dict[datetime, int] = {}
        for f in got:
            pool[f.fire_utc] = pool.get(f.fire_utc, 0) + 1
        for t in fire_times(spec, start, end):
            if pool.get(t, 0):
                pool[t] -= 1
            else:
                got.append(Fire(spec.id, t, "unseen"))
        got.sort(key=lambda f: f.fire_utc)
        out[spec.id] = got
    return out
