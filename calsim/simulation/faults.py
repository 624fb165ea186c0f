"""Beyond the scheduler: workers with leases, worker crashes, rate limits and circuit breakers (DESIGN §3).

A fired run is a task: a worker leases it, may crash holding it, a source
limits how fast tasks may hit it, and a breaker stops the bleeding after a
string of failures. These are the scenario's *worker-level* parts; a scenario
that has any of them is settled by :mod:`.worker_loop` (one attempt at a time).
The rules and their sources are in ``docs/research/worker_faults.md``.

>>> from calsim.simulation.faults import RateLimit, Workers
>>> Workers(4, lease="90s", heartbeat="10s").lease_us, RateLimit("crm", rate="10/min", burst=5).interval_us
(90000000, 6000000.0)
"""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, dataclass, field

from ..durations import duration_us
from ..errors import CalsimError, InputError, refuse_unknown_keywords, shown
from ..times import instant_us

__all__ = ["Workers", "WorkerCrash", "RateLimit", "Breaker", "parse_rate"]

_RATE = re.compile(r"^\s*(\d{1,9})\s*/\s*(\S.*?)\s*$")
_RATE_ALLOWED = "'<count>/<period>' such as '10/min', '600/h', '2/day' or '5/30s' (a count of 1 to 1,000,000)"


def _duration(value: object, field_name: str, *, allow_zero: bool = False) -> int:
    try:
        return duration_us(value, field_name, allow_zero=allow_zero)
    except CalsimError as exc:
        raise InputError(str(exc)) from None


def parse_rate(value: object, field_name: str) -> tuple[int, int]:
    """``"10/min"`` -> ``(10, 60_000_000)``: a count per period (µs).

    >>> parse_rate("10/min", "rate"), parse_rate("3/2h", "rate")
    ((10, 60000000), (3, 7200000000))
    >>> parse_rate("fast", "ratelimit.rate")
    Traceback (most recent call last):
    calsim.errors.InputError: ratelimit.rate: 'fast' is not a rate (allowed: '<count>/<period>' such as '10/min', '600/h', '2/day' or '5/30s' (a count of 1 to 1,000,000))
    """  # noqa: E501  (a doctest output line)
    m = _RATE.match(value) if isinstance(value, str) else None
    if m is None or not 1 <= int(m[1]) <= 1_000_000:
        raise InputError(f"{field_name}: {shown(value)} is not a rate (allowed: {_RATE_ALLOWED})")
    period = m[2] if m[2][:1].isdigit() else f"1{m[2]}"
    return int(m[1]), _duration(period, f"{field_name} period")


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Workers:
    """``count`` workers take runs; each run's attempt is leased to one of them.

    A worker holds an attempt from its start until its acknowledgement
    (``Policy(ack_delay=...)`` after its end). With ``renew=True`` (default)
    the lease is a job queue's claim: claiming writes ``lease_until = start +
    lease``, each heartbeat (every ``heartbeat`` from the claim) extends it to
    ``heartbeat + lease``, and only an expired lease lets another worker claim
    the job (SQS ``ChangeMessageVisibility``, a claim row's ``lease_owner`` /
    ``lease_until``). So a run longer than its lease finishes while its worker
    heartbeats, and the attempt of a worker that crashed at ``c`` is claimable
    at its last heartbeat's ``lease_until``; without heartbeats nothing renews
    it, and an attempt longer than the lease times out at ``start + lease``.
    With ``renew=False`` the lease is Temporal's Start-To-Close timeout and
    ``heartbeat`` its heartbeat *timeout* (a live worker beats continuously): a
    crash at ``c`` is noticed at ``min(start + lease, c + heartbeat)``, and an
    attempt longer than the lease times out at ``start + lease``. Either way
    the job is requeued at that instant with reason ``lease_expired`` as
    attempt + 1, counted against ``Failures(max_attempts=...)`` (Temporal, SQS
    and Kubernetes count it; with no attempt left the run is
    ``failed``/``lease_expired``). No backoff is added (SQS makes the message
    visible at once; Temporal would add its 1 s retry interval); a timed-out
    worker is presumed cancelled (a zombie still writing is not modelled).
    Free workers are taken lowest number first; runs waiting for one are
    served by priority (ageing one level per hour waited), then in the order
    they became ready.

    Parameters
    ----------
    count : int, 1..100,000
        How many workers (replaces ``Scenario(capacity=...)``, which counts runs, not workers).
    lease : duration, keyword-only
        Per-attempt deadline (default ``"1h"``: Celery's Redis visibility timeout).
    heartbeat : duration or None, keyword-only
        Shorter than ``lease``: the heartbeat interval with ``renew=True``, the heartbeat timeout with
        ``renew=False`` (None, default: no heartbeats; a crash is noticed at the lease's end).
    renew : bool, keyword-only
        Whether each heartbeat extends the lease (True, default: a job queue's claim; False: Temporal's
        Start-To-Close timeout with a heartbeat timeout).
    crash_rate : rate or None, keyword-only
        Seeded random crashes per worker, e.g. ``"1/day"`` (a Poisson process drawn per worker from the
        scenario's seed); None (default): only :class:`WorkerCrash` events.
    down_for : duration, keyword-only
        How long a randomly crashed worker stays down (default ``"5min"``).

    >>> Workers(2, lease="90s").heartbeat_us is None
    True
    >>> Workers(2, lease="90s", heartbeat="2min")
    Traceback (most recent call last):
    calsim.errors.InputError: workers.heartbeat: '2min' is not shorter than the lease '90s' (allowed a duration below the lease, or None)
    """  # noqa: E501  (a doctest output line)

    count: int
    _: KW_ONLY
    lease: object = "1h"
    heartbeat: object = None
    renew: bool = True
    crash_rate: object = None
    down_for: object = "5min"
    lease_us: int = field(init=False, repr=False, compare=False)
    heartbeat_us: int | None = field(init=False, repr=False, compare=False)
    crash_per: tuple[int, int] | None = field(init=False, repr=False, compare=False)
    down_for_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.count, bool) or not isinstance(self.count, int) or not 1 <= self.count <= 100_000:
            raise InputError(f"workers.count: {shown(self.count)} (allowed an integer from 1 to 100,000)")
        set_ = object.__setattr__
        set_(self, "lease_us", _duration(self.lease, "workers.lease"))
        hb = None if self.heartbeat is None else _duration(self.heartbeat, "workers.heartbeat")
        if hb is not None and hb >= self.lease_us:
            raise InputError(f"workers.heartbeat: {shown(self.heartbeat)} is not shorter than the lease "
                             f"{shown(self.lease)} (allowed a duration below the lease, or None)")
        set_(self, "heartbeat_us", hb)
        if not isinstance(self.renew, bool):
            raise InputError(f"workers.renew: {shown(self.renew)} (allowed True: each heartbeat extends the lease, "
                             "or False: the lease is a Start-To-Close timeout)")
        set_(self, "crash_per", None if self.crash_rate is None else parse_rate(self.crash_rate, "workers.crash_rate"))
        set_(self, "down_for_us", _duration(self.down_for, "workers.down_for", allow_zero=True))


@refuse_unknown_keywords()
@dataclass(frozen=True)
class WorkerCrash:
    """At ``at``, workers crash and stay down for ``down_for``; the attempts they hold are lost.

    ``workers`` is how many (the lowest-numbered ones, which are the busiest:
    free workers are taken lowest first) or a sequence of worker numbers
    (0-based). A lost attempt whose effect point had passed but that was not
    yet acknowledged did its effect: the retry repeats it (a duplicate effect
    unless ``Policy(idempotent=True)``). Needs ``Scenario(workers=...)``.

    >>> WorkerCrash("2026-01-01T00:00:30Z", workers=[0], down_for="2min").ids(4)
    (0,)
    >>> WorkerCrash("2026-01-01T00:00:30Z", workers=3).ids(4)
    (0, 1, 2)
    """

    at: object
    _: KW_ONLY
    workers: int | list[int] | tuple[int, ...] = 1
    down_for: object = "5min"
    at_us: int = field(init=False, repr=False, compare=False)
    down_for_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "at_us", instant_us(self.at, "workercrash.at"))
        object.__setattr__(self, "down_for_us", _duration(self.down_for, "workercrash.down_for", allow_zero=True))
        w = self.workers
        if isinstance(w, bool) or not (isinstance(w, int) and w >= 1 or isinstance(w, (list, tuple)) and w
                                       and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in w)):
            raise InputError(f"workercrash.workers: {shown(w)} (allowed a count >= 1 or a non-empty list of worker "
                             "numbers >= 0)")
        if isinstance(w, list):
            object.__setattr__(self, "workers", tuple(w))

    def ids(self, count: int) -> tuple[int, ...]:
        """The worker numbers that crash, among ``count`` workers (refuses one that does not exist)."""
        ids = tuple(range(self.workers)) if isinstance(self.workers, int) else tuple(sorted(set(self.workers)))
        if ids[-1] >= count:
            what = f"{self.workers} workers" if isinstance(self.workers, int) else f"worker {ids[-1]}"
            raise InputError(f"workercrash.workers: {what} at {shown(self.at)}, but the scenario has "
                             f"{count} (allowed worker numbers 0..{count - 1})")
        return ids


@refuse_unknown_keywords()
@dataclass(frozen=True)
class RateLimit:
    """A token bucket named ``name``: at most ``burst`` attempts at once, refilled at ``rate``.

    Policies name it (``Policy(rate_limit="crm")``); every schedule naming it
    shares the bucket (a *source*). It follows golang.org/x/time/rate
    (``rate.NewLimiter``, client-go's token-bucket limiter): full at the
    scenario's start (and refilled while idle, so a catch-up burst first spends
    ``burst`` tokens), continuous refill, every attempt start takes one token
    (retries hit the source too), and waiters are served first come, first
    served. It is computed exactly, in integers, as the equivalent GCRA:
    emission interval ``T = period / count``, a run ready at ``t`` starts at
    ``max(t, TAT - (burst - 1) * T)``, then ``TAT = max(TAT, start) + T``.
    The token is waited for on the worker that will run the attempt (a
    client-side limiter's ``Wait`` runs inside the task: client-go, Celery's
    per-worker ``rate_limit``), after the queue for workers, so the source never
    sees more starts than the bucket allows. A run's wait is the ledger's
    ``rate_wait_s``. A run whose token would come after its ``max_lateness``
    does not take one: ``skipped``/``rate_limited``. The lease starts when the
    attempt starts, not while it waits for its token (Celery's runs from
    delivery, so a task waiting for a token there can be redelivered).

    Parameters
    ----------
    name : str
        What policies refer to (non-empty).
    rate : str, keyword-only
        ``"<count>/<period>"``: ``"10/min"``, ``"600/h"``, ``"5/30s"``.
    burst : int, 1..1,000,000, keyword-only
        The bucket's size (default 1).

    >>> RateLimit("crm", rate="10/min", burst=5).tolerance_us
    24000000.0
    """

    name: str
    _: KW_ONLY
    rate: str = "1/s"
    burst: int = 1
    per: tuple[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InputError(f"ratelimit.name: expected a non-empty string, got {shown(self.name)}")
        object.__setattr__(self, "per", parse_rate(self.rate, "ratelimit.rate"))
        if isinstance(self.burst, bool) or not isinstance(self.burst, int) or not 1 <= self.burst <= 1_000_000:
            raise InputError(f"ratelimit.burst: {shown(self.burst)} (allowed an integer from 1 to 1,000,000)")

    @property
    def interval_us(self) -> float:
        """One token's refill time."""
        return self.per[1] / self.per[0]

    @property
    def tolerance_us(self) -> float:
        """GCRA's tolerance: how far ahead of the refill a burst may run."""
        return (self.burst - 1) * self.interval_us


_SCOPES = ("account", "source", "schedule")


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Breaker:
    """A circuit breaker: ``after`` consecutive failed attempts in ``scope`` open it for ``open_for``.

    Polly's consecutive-count breaker (``ConsecutiveCountCircuitController``):
    failed attempts of every schedule in scope are counted in the order they
    end, a success resets the count, and the ``after``-th consecutive failure
    opens the breaker at its end. An attempt that would start while it is open
    is not started: ``skipped``/``breaker_open`` (a retry: ``failed``/``breaker_open``);
    no cost, no token, no worker. The first attempt after ``open_for`` is the
    single half-open trial (others meanwhile: ``breaker_open``): its success
    closes the breaker, its failure opens it again. Results of attempts that
    started before it opened do not extend it. An attempt given up by its lease
    counts as a failure.

    Parameters
    ----------
    scope : str
        ``"account:<name>"`` (schedules whose policy has that ``account``: a
        tenant), ``"source:<name>"`` (schedules whose policy names that
        :class:`RateLimit`: a source; the contract's "schedule tag", since
        schedules carry no tags) or ``"schedule:<id>"``.
    after : int, 1..1,000,000, keyword-only
        Consecutive failures that open it (default 5).
    open_for : duration, keyword-only
        How long it stays open (default ``"1min"``).

    >>> Breaker("source:crm", after=3, open_for="10min").open_for_us
    600000000
    """

    scope: str
    _: KW_ONLY
    after: int = 5
    open_for: object = "1min"
    kind: str = field(init=False, repr=False, compare=False)
    target: str = field(init=False, repr=False, compare=False)
    open_for_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kind, _, target = self.scope.partition(":") if isinstance(self.scope, str) else ("", "", "")
        if kind not in _SCOPES or not target:
            raise InputError(f"breaker.scope: {shown(self.scope)} (allowed 'account:<name>', 'source:<rate limit "
                             "name>' or 'schedule:<id>')")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "target", target)
        if isinstance(self.after, bool) or not isinstance(self.after, int) or not 1 <= self.after <= 1_000_000:
            raise InputError(f"breaker.after: {shown(self.after)} (allowed an integer from 1 to 1,000,000)")
        object.__setattr__(self, "open_for_us", _duration(self.open_for, "breaker.open_for"))

    def covers(self, schedule_id: str, policy) -> bool:
        """Whether a schedule with ``policy`` is in this breaker's scope."""
        if self.kind == "account":
            return policy.account == self.target
        if self.kind == "source":
            return policy.rate_limit == self.target
        return schedule_id == self.target
