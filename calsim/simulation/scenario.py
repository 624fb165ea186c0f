"""Scenarios: a fleet plus a world (outages, budgets, capacity, events) over a UTC horizon.

All times are instants (``Z`` or an offset; naive means UTC). Intervals are
half-open: an outage ``[start, end)`` means the scheduler is up, and ticks,
at ``end``.

Arguments follow DESIGN.md §3: what a thing *is* is positional
(``Scenario(name, schedules, start, end)``, ``Outage(start, end)``,
``Budget(account, limit, period, zone)``, an event's ``at`` and its subject),
every option after that is keyword-only. An unknown keyword is an
:class:`~calsim.errors.UnknownKeywordError` (an :class:`~calsim.InputError`
and a ``TypeError``) naming the closest one and every allowed one.

>>> import calsim
>>> s = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
>>> sc = calsim.Scenario("demo", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
...                      outages=[calsim.Outage("2026-01-01T05:10Z", "2026-01-01T08:00Z")])
>>> sc.tick_us, len(sc.outages)
(60000000, 1)
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from collections.abc import Mapping
from typing import Literal, get_args

from ..durations import duration_us
from ..errors import CalsimError, InputError, ScheduleError, check_choice, refuse_unknown_keywords, shown
from ..schedule import Schedule
from ..times import instant_us
from ..tz.release import Release, ReleaseLike  # noqa: F401 (Release: ReleaseLike's forward reference)
from .faults import Breaker, RateLimit, WorkerCrash, Workers
from .policy import Failures, Policy

__all__ = ["Scenario", "Outage", "Budget", "Pause", "Resume", "Trigger", "Backfill", "Revise", "TzUpgrade", "Period",
           "revisions"]

Period = Literal["day", "week", "month"]
OutageKind = Literal["down", "suspend"]
Dedupe = Literal["key", "none"]


def _instant(value: object, field_name: str) -> int:
    return instant_us(value, field_name)


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Outage:
    """The scheduler is down over ``[start, end)``.

    ``kind`` (keyword-only) says how: ``"down"`` (default; the scheduler process is not
    running: a crash, a restart, the machine off; on return it knows only what
    it persisted) or ``"suspend"`` (the machine sleeps; the process keeps its
    memory and, on resume, sees the wall clock jump). Schedulers treat the two
    differently (cron catches fixed-time jobs up after a jump of less than three
    hours, systemd fires a missed elapse once after a suspend whatever
    ``Persistent=`` says): see ``Policy(suspend_catchup=..., suspend_limit=...)``.

    >>> Outage("2026-01-01T00:00Z", "2026-01-01T01:00Z", kind="suspend").kind
    'suspend'
    """

    start: object
    end: object
    _: KW_ONLY
    kind: OutageKind = "down"
    start_us: int = field(init=False, repr=False, compare=False)
    end_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        s, e = _instant(self.start, "outage.start"), _instant(self.end, "outage.end")
        check_choice("outage.kind", self.kind, get_args(OutageKind), noun="kind", error=InputError)
        if e <= s:
            raise InputError(f"outage.end: {shown(self.end)} is not after outage.start {shown(self.start)}")
        object.__setattr__(self, "start_us", s)
        object.__setattr__(self, "end_us", e)


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Budget:
    """At most ``limit`` cost units started per ``period`` (local calendar day/week/month in ``zone``).

    Parameters
    ----------
    account : str
        The :class:`~calsim.Policy` ``account`` this budget pays for (non-empty).
    limit : float, 0..1e15
        Cost units that may start per period (a run charges cost × attempts).
    period : {"day", "week", "month"}
        The local calendar period (weeks start on Monday); default ``"day"``.
    zone : str
        IANA zone whose midnights bound the periods; default ``"UTC"``.

    >>> Budget("tenant-a", 300, "day", "Asia/Shanghai").period
    'day'
    """

    account: str
    limit: float
    period: Period = "day"
    zone: str = "UTC"

    def __post_init__(self) -> None:
        if not isinstance(self.account, str) or not self.account:
            raise InputError(f"budget.account: expected a non-empty string, got {shown(self.account)}")
        if isinstance(self.limit, bool) or not isinstance(self.limit, (int, float)) or not 0 <= self.limit <= 1e15:
            raise InputError(f"budget.limit: {shown(self.limit)} (allowed a number from 0 to 1e15)")
        check_choice("budget.period", self.period, get_args(Period), noun="period")
        from ..tz.release import release

        try:
            release().table(self.zone)
        except CalsimError as exc:
            raise type(exc)(f"budget.zone: {exc}") from None


@dataclass(frozen=True)
class _Event:
    at: object
    at_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "at_us", _instant(self.at, f"{type(self).__name__.lower()}.at"))


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Pause(_Event):
    """From ``at``, occurrences of ``schedule_id`` (None: every schedule) are not run (``skipped``/``paused``).

    ``Pause(at, schedule_id=None)``: ``at`` an instant, ``schedule_id`` a schedule of the scenario or None.
    """

    schedule_id: str | None = None


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Resume(_Event):
    """Ends a :class:`Pause` of the same ``schedule_id``; what fell in between stays skipped (Temporal).

    ``Resume(at, schedule_id=None)``: ``at`` an instant, ``schedule_id`` a schedule of the scenario or None.
    """

    schedule_id: str | None = None


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Trigger(_Event):
    """A manual run of ``schedule_id`` at ``at`` (ledger ``kind="manual"``); it moves no scheduled run.

    ``Trigger(at, schedule_id)``: ``at`` an instant, ``schedule_id`` (required) a schedule of the scenario.
    """

    schedule_id: str = ""


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Backfill:
    """Runs of ``schedule_id``'s occurrences in ``[start, end)``, requested at ``at`` (ledger ``kind="backfill"``).

    ``Backfill(schedule_id, start, end, reverse=False, *, at=None)``: ``start``
    and ``end`` instants (the logical dates' range, half-open), ``at`` the
    instant the backfill is asked for (None: the scenario's start). As
    ``airflow backfill create --from-date --to-date [--run-backwards]`` does
    (Airflow 3 ``models/backfill.py`` ``_create_backfill``): one run per
    occurrence the scenario does not already hold (the horizon's own rows are
    its runs; Airflow's default ``reprocess_behavior="none"`` skips dates that
    have a run), oldest first (``reverse``: newest first), each due one
    microsecond after the one before it, the last at ``at``, so that the
    wake-up at ``at`` picks them in that order and the schedule's
    ``max_active`` and ``overlap`` bound them (``buffer_all`` runs them in
    that order, ``max_active`` at a time). A run keeps its occurrence's
    ``nominal_local`` and data window; ``due_utc`` is its arrival. The range
    is of logical dates: for ``covers="data_interval"`` the intervals that
    start in it. Occurrences before the schedule's start are not backfilled.

    >>> Backfill("etl", "2026-01-01T00:00Z", "2026-01-08T00:00Z").reverse
    False
    """

    schedule_id: str
    start: object
    end: object
    reverse: bool = False
    _: KW_ONLY
    at: object = None
    start_us: int = field(init=False, repr=False, compare=False)
    end_us: int = field(init=False, repr=False, compare=False)
    at_us: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.schedule_id, str) or not self.schedule_id:
            raise ScheduleError(f"backfill.schedule_id: expected a schedule's id, got {shown(self.schedule_id)}")
        lo, hi = _instant(self.start, "backfill.start"), _instant(self.end, "backfill.end")
        if hi <= lo:
            raise InputError(f"backfill.end: {shown(self.end)} is not after start {shown(self.start)} "
                             "(the logical dates [start, end) would be empty)")
        if not isinstance(self.reverse, bool):
            raise InputError(f"backfill.reverse: expected True or False, got {shown(self.reverse)}")
        object.__setattr__(self, "start_us", lo)
        object.__setattr__(self, "end_us", hi)
        object.__setattr__(self, "at_us", None if self.at is None else _instant(self.at, "backfill.at"))


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Revise(_Event):
    """From ``at``, ``schedule`` (a new revision, same id) replaces the current one.

    Occurrences of the old revision due from ``at`` on are not produced;
    those due before it but not yet started at ``at`` are ``cancelled``/``revision``.
    ``Revise(at, schedule)``: ``at`` an instant, ``schedule`` a :class:`~calsim.Schedule`
    whose ``id`` is in the scenario.
    """

    schedule: Schedule | None = None


@refuse_unknown_keywords()
@dataclass(frozen=True)
class TzUpgrade(_Event):
    """At ``at`` the scheduler switches to release ``to``.

    Occurrences it had materialised before ``at`` — those due within
    ``horizon`` after ``at`` — keep the instant computed with the old release
    (their ``tzdata`` column says so), unless ``mode="replan"``, which
    recomputes them (Kubernetes computes each next time afresh: replan;
    systems that store next fire times ahead: keep).

    Parameters
    ----------
    at
        The instant of the switch.
    to
        The new release (a version such as ``"2026f"``, a path or a
        :class:`~calsim.Release`).
    horizon : duration, keyword-only
        How far ahead of ``at`` occurrences were materialised (default ``"0s"``).
    mode : {"keep", "replan"}, keyword-only
        Whether materialised occurrences keep their old instant (default) or
        are recomputed with ``to``.

    >>> TzUpgrade("2026-10-01T00:00Z", "2026f", horizon="7d", mode="replan").horizon_us
    604800000000
    """

    to: ReleaseLike = None
    _: KW_ONLY
    horizon: object = "0s"
    mode: Literal["keep", "replan"] = "keep"
    horizon_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("tzupgrade.mode", self.mode, ("keep", "replan"), noun="policy")
        try:
            object.__setattr__(self, "horizon_us", duration_us(self.horizon, "tzupgrade.horizon", allow_zero=True))
        except CalsimError as exc:
            raise InputError(str(exc)) from None


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Scenario:
    """A fleet and a world to simulate over the UTC horizon ``[start, end)``.

    ``name``, ``schedules``, ``start`` and ``end`` are positional; every other
    option is keyword-only.

    Parameters
    ----------
    name
        Identifies the scenario in ledgers and the ledger store.
    schedules
        The fleet (each schedule's ``policy`` applies; None is ``Policy()``).
    start, end
        The horizon (instants).
    release : str, path, Release or None
        tz database release (see :func:`calsim.release`); None: the installed
        ``tzdata``.
    tick : duration
        The scheduler wakes every ``tick`` (on multiples of it from the Unix
        epoch) while up, and once more at the instant it comes back up
        (default ``"1min"``; ISO 8601 or a short form such as ``"10min"``).
    outages : sequence of Outage
        Non-overlapping :class:`Outage` spans (default none).
    budgets : sequence of Budget
        One :class:`Budget` per account (default none).
    capacity : int in 1..2**31, mapping of pool name -> int, or None
        Most runs going at once across the fleet (None: unbounded), or per
        capacity pool (``{"etl": 4, "reports": 2}``: a run takes a slot of its
        policy's ``pool``, a run of no pool none). Pools whose schedules share
        nothing else are settled apart, so they also cut a fleet for the
        Dask engine (:func:`.couplings.pools_of`).
    events : sequence of Pause, Resume, Trigger, Backfill, Revise, TzUpgrade
        Scenario events (default none).
    failures : Failures or None
        :class:`~calsim.simulation.policy.Failures` applying to every run
        (None: runs never fail).
    seed : int in -2**63..2**64-1
        Seeds jitter, durations and failures (with a stable hash); default 0.
    workers : Workers or None
        :class:`~calsim.Workers` that take the runs, with leases (None: as many
        as needed). :class:`~calsim.WorkerCrash` events crash them.
    rate_limits : sequence of RateLimit
        Token buckets policies name (``Policy(rate_limit=...)``).
    breakers : sequence of Breaker
        Circuit breakers (:class:`~calsim.Breaker`).
    schedulers : int, 1..64
        Scheduler instances scanning the same store (default 1). Instance ``i``
        picks every occurrence ``i * scheduler_skew`` after instance 0 (same
        ticks and outages): with ``dedupe="key"`` the first claim of a run key
        (schedule revision, nominal UTC instant: the seeds' unique constraint,
        Kubernetes' Job name) runs and the others are refused; with ``"none"``
        every instance runs it (APScheduler 3's shared job store), each
        execution with its own attempts, cost, tokens and worker, and its
        effect counted (``effects``) unless the policy is idempotent.
    scheduler_skew : duration or None
        How far apart the instances wake (None: ``"0s"``).
    dedupe : {"key", "none"}
        Whether a unique run key stops the other instances (default ``"key"``).

    Workers, crashes, rate limits, breakers, more than one scheduler or
    :class:`~calsim.Failures` with error classes, a cap or jitter make a
    scenario *worker-level*: it is settled one attempt at a time
    (:mod:`calsim.simulation.worker_loop`), with the scheduler's rules
    (budgets, overlap, ``max_active``, backlogs in turn, pauses); ``capacity``
    with ``workers`` is refused (the workers are the capacity). On
    ``engine="dask"`` it is cut by what its schedules share
    (:func:`calsim.distributed.couplings`).
    """

    name: str
    schedules: tuple
    start: object
    end: object
    _: KW_ONLY
    release: ReleaseLike = None
    tick: object = "1min"
    outages: tuple = ()
    budgets: tuple = ()
    capacity: int | Mapping[str, int] | None = None
    events: tuple = ()
    failures: Failures | None = None
    seed: int = 0
    workers: Workers | None = None
    rate_limits: tuple = ()
    breakers: tuple = ()
    schedulers: int = 1
    scheduler_skew: object = None
    dedupe: Dedupe = "key"
    start_us: int = field(init=False, repr=False, compare=False)
    end_us: int = field(init=False, repr=False, compare=False)
    tick_us: int = field(init=False, repr=False, compare=False)
    skew_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.name, str) or not self.name:
            raise InputError(f"scenario.name: expected a non-empty string, got {shown(self.name)}")
        scheds = tuple(self.schedules) if not isinstance(self.schedules, Schedule) else (self.schedules,)
        for i, s in enumerate(scheds):
            if not isinstance(s, Schedule):
                raise InputError(f"scenario.schedules: item {i} is {type(s).__name__}, not a Schedule")
        set_(self, "schedules", scheds)
        s_us, e_us = _instant(self.start, "scenario.start"), _instant(self.end, "scenario.end")
        if e_us <= s_us:
            raise InputError(f"scenario.end: {shown(self.end)} is not after scenario.start {shown(self.start)}")
        set_(self, "start_us", s_us)
        set_(self, "end_us", e_us)
        try:
            set_(self, "tick_us", duration_us(self.tick, "scenario.tick"))
        except CalsimError as exc:
            raise InputError(str(exc)) from None
        outages = tuple(sorted(self.outages, key=lambda o: o.start_us))
        for o in outages:
            if not isinstance(o, Outage):
                raise InputError(f"scenario.outages: expected Outage(...), got {shown(o)}")
        for a, b in zip(outages, outages[1:]):
            if b.start_us < a.end_us:
                raise InputError(
                    f"scenario.outages: {shown(b)} starts before {shown(a)} ends (outages must not overlap; merge them)"
                )
        set_(self, "outages", outages)
        accounts = [b.account for b in self.budgets]
        if len(set(accounts)) != len(accounts):
            raise InputError(f"scenario.budgets: account repeated in {accounts} (one budget per account)")
        set_(self, "budgets", tuple(self.budgets))
        self._check_capacity(scheds)
        ids = {s.id for s in scheds}
        for ev in self.events:
            if isinstance(ev, WorkerCrash):
                if self.workers is None:
                    raise InputError(f"scenario.events: {shown(ev)} needs workers=Workers(...) to crash")
                if not isinstance(self.workers, Workers):
                    break  # refused below, with the workers' own message
                ev.ids(self.workers.count)
                continue
            if not isinstance(ev, (Pause, Resume, Trigger, Backfill, Revise, TzUpgrade)):
                raise InputError(f"scenario.events: {shown(ev)} is not Pause, Resume, Trigger, Backfill, Revise, "
                                 "TzUpgrade or WorkerCrash")
            sid = getattr(ev, "schedule_id", None)
            if isinstance(ev, Revise):
                if not isinstance(ev.schedule, Schedule):
                    raise InputError("revise.schedule: expected the new revision, a Schedule")
                sid = ev.schedule.id
            if isinstance(ev, Trigger) and not sid:
                raise ScheduleError("trigger.schedule_id: required (the schedule to run)")
            if sid is not None and sid not in ids:
                raise ScheduleError(
                    f"{type(ev).__name__.lower()}.schedule_id: unknown schedule {shown(sid)} "
                    f"in scenario {shown(self.name)}"
                )
        # (a Backfill without `at` is asked for at the scenario's start)
        set_(self, "events", tuple(sorted(self.events, key=lambda e: self.start_us if e.at_us is None else e.at_us)))
        if self.failures is not None and not isinstance(self.failures, Failures):
            raise InputError(f"scenario.failures: expected Failures(...), got {shown(self.failures)}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not -2**63 <= self.seed < 2**64:
            raise InputError(f"scenario.seed: expected an integer in -2**63..2**64-1, got {shown(self.seed)}")
        self._check_worker_level(scheds)

    def _check_capacity(self, scheds: tuple) -> None:
        """``capacity``: None, a number of slots for every run, or slots per pool (``{"etl": 4}``: a run takes a
        slot of its policy's ``pool``; a run of no pool takes none)."""
        cap = self.capacity
        allowed = "allowed an integer from 1 to 2**31, a mapping of pool name -> such an integer, or None"
        if isinstance(cap, Mapping):
            pools = dict(sorted(cap.items(), key=lambda kv: str(kv[0])))
            for name, n in pools.items():
                if not isinstance(name, str) or not name:
                    raise InputError(f"scenario.capacity: pool name {shown(name)} ({allowed})")
                if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 2**31:
                    raise InputError(f"scenario.capacity: pool {name!r}: {shown(n)} ({allowed})")
            if not pools:
                raise InputError(f"scenario.capacity: an empty mapping ({allowed})")
            object.__setattr__(self, "capacity", pools)
        elif cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= 2**31):
            raise InputError(f"scenario.capacity: {shown(cap)} ({allowed})")
        if not isinstance(self.capacity, dict):
            return  # (a pool name means nothing without pools: a number is every run's one pool)
        pools = self.capacity
        for s in scheds:
            pool = s.policy.pool if isinstance(s.policy, Policy) else None
            if pool is not None and pool not in pools:
                raise InputError(f"policy.pool: schedule {shown(s.id)} names pool {shown(pool)}, which is not in "
                                 f"scenario.capacity (allowed: {', '.join(pools)})")

    def _check_worker_level(self, scheds: tuple) -> None:
        """Validate the worker-level options (:mod:`.faults`) and what they do not combine with."""
        set_ = object.__setattr__
        if self.workers is not None and not isinstance(self.workers, Workers):
            raise InputError(f"scenario.workers: expected Workers(...) or None, got {shown(self.workers)}")
        limits = tuple(self.rate_limits)
        for r in limits:
            if not isinstance(r, RateLimit):
                raise InputError(f"scenario.rate_limits: expected RateLimit(...), got {shown(r)}")
        names = [r.name for r in limits]
        if len(set(names)) != len(names):
            raise InputError(f"scenario.rate_limits: name repeated in {names} (one bucket per name)")
        set_(self, "rate_limits", limits)
        breakers = tuple(self.breakers)
        for b in breakers:
            if not isinstance(b, Breaker):
                raise InputError(f"scenario.breakers: expected Breaker(...), got {shown(b)}")
        set_(self, "breakers", breakers)
        if isinstance(self.schedulers, bool) or not isinstance(self.schedulers, int) or not 1 <= self.schedulers <= 64:
            raise InputError(f"scenario.schedulers: {shown(self.schedulers)} (allowed an integer from 1 to 64)")
        try:
            set_(self, "skew_us", 0 if self.scheduler_skew is None else
                 duration_us(self.scheduler_skew, "scenario.scheduler_skew", allow_zero=True))
        except CalsimError as exc:
            raise InputError(str(exc)) from None
        check_choice("scenario.dedupe", self.dedupe, get_args(Dedupe), noun="dedupe", error=InputError)
        pols = [(s.id, s.policy if isinstance(s.policy, Policy) else Policy()) for s in scheds]
        for sid, p in pols:
            if p.rate_limit is not None and p.rate_limit not in names:
                raise InputError(f"policy.rate_limit: schedule {shown(sid)} names {shown(p.rate_limit)}, which is "
                                 f"not in scenario.rate_limits (allowed: {names or 'none defined'})")
        for b in breakers:
            # (A scenario without schedules is a world whose fleet is read elsewhere, a schedules table on Dask:
            # its breakers cover the schedules read there.)
            if pols and not any(b.covers(sid, p) for sid, p in pols):
                raise InputError(f"breaker.scope: {shown(b.scope)} covers no schedule of scenario {shown(self.name)}")
        if not self.worker_level:
            return
        if self.capacity is not None and self.workers is not None:
            raise InputError(f"scenario.capacity: {self.capacity} with workers=Workers({self.workers.count}): the "
                             "workers are the capacity (allowed one of them: capacity counts runs, workers count "
                             "workers)")

    @property
    def slots(self) -> int | None:
        """The capacity as one number of slots (None: unbounded). A scenario with pools is settled pool by pool,
        each with its pool's number (:func:`.engine.run_local`), so the settling steps never see a mapping."""
        assert not isinstance(self.capacity, Mapping), "capacity pools are settled apart (engine.run_local)"
        return self.capacity

    @property
    def worker_level(self) -> bool:
        """Whether the scenario needs the attempt-by-attempt settling (:mod:`.worker_loop`)."""
        return (self.workers is not None or bool(self.rate_limits) or bool(self.breakers) or self.schedulers > 1
                or any(isinstance(e, WorkerCrash) for e in self.events)
                or (self.failures is not None and self.failures.worker_level))


def revisions(scenario: Scenario) -> list:
    """Every schedule revision a run can meet: the fleet's, then the ``Revise`` events'."""
    return list(scenario.schedules) + [e.schedule for e in scenario.events
                                       if isinstance(e, Revise) and e.schedule is not None]
