"""Run policies: what a scheduler does with an occurrence once it is due.

Every option of :class:`Policy` is keyword-only (there is no natural
positional one: ``Policy("latest")`` would not say what ``"latest"`` is), and
its docstring lists each option's allowed values. :class:`Failures` takes the
probability positionally and its options by keyword; :class:`LogNormal` takes
its two parameters positionally.

>>> from calsim.simulation.policy import Policy
>>> Policy(catchup="latest", max_lateness="2d").max_lateness_us
172800000000
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal, get_args

from ..durations import duration_us
from ..errors import CalsimError, PolicyError, check_choice, refuse_unknown_keywords, shown, unknown_keyword

__all__ = ["Policy", "LogNormal", "Failures", "Catchup", "Overlap", "OnBudget", "OnResume", "IntervalFrom",
           "with_policy"]

Catchup = Literal["all", "latest", "earliest", "skip", "bounded", "earliest_and_latest"]
Overlap = Literal["allow", "skip", "buffer_one", "buffer_all", "cancel_other", "buffer_latest"]
OnBudget = Literal["wait", "skip"]
LimitEdge = Literal["on_time", "late"]
Backlog = Literal["at_once", "in_turn"]
Covers = Literal["own_window", "since_last_success", "data_interval"]
OnResume = Literal["drop", "catch_up"]
IntervalFrom = Literal["schedule", "last_run", "restart"]
SuspendWake = Literal["resume", "sleep_end"]
Jitter = Literal["none", "full", "equal"]
ERROR_CLASSES = ("transient", "review", "permanent")


def _dur(value: object, field_name: str, allow_zero: bool = True) -> int | None:
    if value is None:
        return None
    try:
        return duration_us(value, field_name, allow_zero=allow_zero)
    except CalsimError as exc:
        raise PolicyError(str(exc)) from None


@refuse_unknown_keywords(policy=True)
@dataclass(frozen=True)
class LogNormal:
    """Run durations drawn from a lognormal with this median and 95th percentile (seeded per occurrence).

    Both are positive durations (``"10min"``, ``"PT30M"``, a ``timedelta`` or
    seconds), ``p95 >= median``; both positional, as a distribution's parameters.

    >>> d = LogNormal("10min", "30min")
    >>> round(d.sigma, 4)
    0.6679
    """

    median: object
    p95: object
    median_us: int = field(init=False, repr=False, compare=False)
    sigma: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("median", "p95"):  # both are required: a lognormal needs two points
            if getattr(self, name) is None:
                raise PolicyError(f"duration.{name}: missing (a lognormal duration needs both median and p95, "
                                  "e.g. { median = \"5min\", p95 = \"20min\" })")
        m = _dur(self.median, "duration.median", allow_zero=False)
        p = _dur(self.p95, "duration.p95", allow_zero=False)
        assert m is not None and p is not None  # checked above
        if p < m:
            raise PolicyError(f"duration.p95: {shown(self.p95)} is below the median {shown(self.median)} "
                              "(p95 >= median)")
        object.__setattr__(self, "median_us", m)
        # p95 = median * exp(1.6449 * sigma)
        object.__setattr__(self, "sigma", math.log(p / m) / 1.6448536269514722)


@refuse_unknown_keywords(policy=True)
@dataclass(frozen=True)
class Failures:
    """Each attempt fails with ``probability``; up to ``max_attempts``, waiting ``backoff * 2**(k-1)`` before retry k.

    Parameters
    ----------
    probability : float, 0..1
        Chance that one attempt fails (seeded per attempt). Positional.
    max_attempts : int, 1..10,000, keyword-only
        Attempts per run, the first included (default 1: no retry).
    backoff : duration, keyword-only
        Wait before the second attempt, doubled for each later one (default
        ``"1min"``; ``"0s"`` retries at once): ISO 8601 (``"PT1M"``), a short
        form (``"30s"``, ``"1min"``), a ``timedelta`` or seconds.
    classes : mapping of {"transient", "review", "permanent"} to shares, keyword-only
        What kind of error a failed attempt has (drawn per attempt from the
        seed; shares sum to 1). ``transient`` retries after the backoff (past
        ``max_attempts``: ``failed``/``retries_exhausted``); ``review`` stops and
        waits for manual handling (``failed``/``review``: Step Functions ``Catch``
        into a manual state); ``permanent`` is dead-lettered at once
        (``failed``/``permanent``: Temporal's non-retryable types, Celery
        ``Reject(requeue=False)``). Default None: every failure transient.
        Step Functions ``MaxAttempts=3`` and Celery ``max_retries=3`` are ``max_attempts=4``.
    max_backoff : duration or None, keyword-only
        Cap of the doubled backoff (Temporal's maximum interval; default None: no cap).
    jitter : {"none", "full", "equal"}, keyword-only
        Backoff jitter, seeded per run and attempt ("Exponential Backoff And
        Jitter", AWS 2015): none (default), ``full`` (``u * d``) or ``equal``
        (``d/2 + u * d/2``). Classes other than transient, a cap or jitter make
        the scenario worker-level (:mod:`.worker_loop`).

    >>> Failures(0.2, max_attempts=3, backoff="1min").backoff_us
    60000000
    >>> Failures(0.5, classes={"transient": 0.5, "review": 0.4})
    Traceback (most recent call last):
    calsim.errors.PolicyError: failures.classes: shares sum to 0.9 (allowed shares of 'transient', 'review' or 'permanent' that sum to 1)
    """  # noqa: E501  (a doctest output line)

    probability: float = 0.0
    _: KW_ONLY
    max_attempts: int = 1
    backoff: object = "1min"
    classes: object = None
    max_backoff: object = None
    jitter: Jitter = "none"
    backoff_us: int = field(init=False, repr=False, compare=False)
    max_backoff_us: int | None = field(init=False, repr=False, compare=False)
    shares: tuple[float, float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.probability, (int, float)) or not 0 <= self.probability <= 1:
            raise PolicyError(f"failures.probability: {shown(self.probability)} is not a probability (allowed 0..1)")
        if not isinstance(self.max_attempts, int) or not 1 <= self.max_attempts <= 10_000:
            raise PolicyError(f"failures.max_attempts: {shown(self.max_attempts)} "
                              "(allowed an integer from 1 to 10,000)")
        object.__setattr__(self, "backoff_us", _dur(self.backoff, "failures.backoff"))
        object.__setattr__(self, "max_backoff_us", _dur(self.max_backoff, "failures.max_backoff"))
        check_choice("failures.jitter", self.jitter, get_args(Jitter), noun="jitter")
        shares = (1.0, 0.0, 0.0)
        if self.classes is not None:
            allowed = "shares of 'transient', 'review' or 'permanent' that sum to 1"
            if not isinstance(self.classes, dict) or not self.classes:
                raise PolicyError(f"failures.classes: {shown(self.classes)} (allowed {allowed})")
            for k, v in self.classes.items():
                check_choice("failures.classes", k, ERROR_CLASSES, noun="error class")
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
                    raise PolicyError(f"failures.classes[{k!r}]: {shown(v)} (allowed a share from 0 to 1)")
            total = sum(self.classes.values())
            if abs(total - 1) > 1e-9:
                raise PolicyError(f"failures.classes: shares sum to {total:g} (allowed {allowed})")
            transient, review, permanent = (float(self.classes.get(k, 0.0)) for k in ERROR_CLASSES)
            shares = (transient, review, permanent)
        object.__setattr__(self, "shares", shares)

    @property
    def worker_level(self) -> bool:
        """Whether these failures need the attempt-by-attempt settling (:mod:`.worker_loop`)."""
        return self.shares != (1.0, 0.0, 0.0) or self.max_backoff_us is not None or self.jitter != "none"


@refuse_unknown_keywords(policy=True)
@dataclass(frozen=True, kw_only=True)
class Policy:
    """How a scheduler runs a schedule's occurrences. Every option is keyword-only.

    An unknown option is a :class:`~calsim.errors.UnknownPolicyKeywordError`
    (a :class:`~calsim.PolicyError` and a ``TypeError``) naming the closest
    one (``Policy(catch_up=...)``: did you mean ``catchup``); an unknown value
    names the closest allowed one (``catchup="lastest"``: ``'latest'``).

    Durations are ISO 8601 (``"PT10M"``), short forms (``"30s"``, ``"10min"``,
    ``"2d"``), a ``timedelta`` or seconds; None means "no limit" where it is allowed.

    Parameters
    ----------
    catchup : {"all", "latest", "earliest", "skip", "bounded", "earliest_and_latest"}
        After missed runs: run every one (default), the newest and coalesce
        the rest (Kubernetes, Airflow 3), the oldest and coalesce the rest
        (Temporal's default SKIP overlap after an outage), none, the newest
        ``limit``, or the oldest and the newest (the rest coalesced: Airflow
        with ``catchup=False`` when its scheduler acts on the next run it
        stored before the outage, ``DagModel.next_dagrun``, before the DAG
        is parsed again: that stale run, then the latest).
    limit : int >= 1 or None
        How many runs ``catchup="bounded"`` (or ``suspend_catchup="bounded"``)
        keeps; only allowed with ``"bounded"``.
    max_lateness : duration or None
        Missed runs older than this are ``expired`` before catch-up applies
        (Kubernetes ``startingDeadlineSeconds``, Temporal ``catchup_window``).
    misfire_grace : duration or None
        Lateness beyond this makes a run *missed* (None: one tick; APScheduler
        ``misfire_grace_time``, Quartz ``misfireThreshold``).
    overlap : {"allow", "skip", "buffer_one", "buffer_all", "cancel_other", "buffer_latest"}
        A run of the same schedule still going: Temporal's names, plus
        ``"buffer_latest"`` (one waits; a newer one takes its place, the older
        is ``skipped``/``overlap``: Kubernetes ``Forbid`` starts the most recent
        unmet time when the running Job ends, unless it is past
        ``max_lateness`` by then: ``expired``). Default ``"allow"``. The mode
        applies when ``max_active`` runs are going.
    max_active : int >= 1 or None
        At most this many runs of the schedule going at once; one more meets
        ``overlap`` (APScheduler ``max_instances``, Airflow ``max_active_runs``,
        a worker pool's slots per job). None (default): one for every mode but
        ``"allow"``, which starts any number; a limit needs a mode that says
        what happens at it, so ``max_active`` with ``"allow"`` is refused.
        ``cancel_other`` cancels the oldest run going.
    jitter : duration or None
        A deterministic delay in ``[0, jitter)``, never past the next occurrence.
    duration : duration, :class:`LogNormal` or None
        How long a run takes (a LogNormal is seeded per occurrence; None: 0).
    cost : float >= 0
        What a run costs (charged per attempt); default 0.
    account : str or None
        Which :class:`~calsim.Budget` pays.
    on_budget : {"wait", "skip"}
        With no budget left: wait for a period with room (default), or skip.
    priority : int in -2**31..2**31
        Order in the capacity queue (higher first, with ageing); default 0.
    max_missed : int >= 0 or None
        A backlog of more missed runs than this leaves the schedule *stuck*:
        that backlog and every later occurrence of the revision are
        ``skipped``/``stuck`` (the Kubernetes docs' and v1 controller's ">100
        missed" rule). None: never.
    limit_edge : {"on_time", "late"}
        What a lateness exactly equal to ``misfire_grace`` or ``max_lateness``
        is: within the limit (default; APScheduler ``difference > grace_time``,
        Temporal) or past it (Kubernetes ``startingDeadlineSeconds``, Quartz
        ``misfireThreshold``).
    backlog : {"at_once", "in_turn"}
        How a wake-up's caught-up backlog runs: each member meets ``overlap``
        at the wake-up (default), or one instance works through it in due
        order, each member expiring if later than ``max_lateness`` when its
        turn comes (APScheduler ``coalesce=False``, ``max_instances=1``).
    recovery_wake : bool
        Whether the scheduler looks at once when it comes back up (True,
        default: most schedulers) or only from its next tick after that
        instant (False: cron starts its clock at the current minute and first
        runs the next one).
    down_is_missed : bool
        An occurrence due while the scheduler was down
        (``Outage(kind="down")``) is missed however little late (True: systemd
        and Quartz's RAM store look only after the boot or restart instant;
        False, default: only ``misfire_grace`` decides).
    suspend_catchup : {"all", "latest", "earliest", "skip", "bounded"} or None
        The catch-up mode for a backlog left by an ``Outage(kind="suspend")``
        no longer than ``suspend_limit``; otherwise (and when None, the
        default) ``catchup`` applies (cron: fixed-time jobs run after a clock
        jump of less than 3 h).
    suspend_limit : duration or None
        The longest suspend ``suspend_catchup`` applies to (None: any).
    suspend_wake : {"resume", "sleep_end"}
        When a scheduler that slept through an ``Outage(kind="suspend")``
        looks again: at the resume instant (default: woken by the resume, or
        a timer that counts suspended time), or when the rest of the sleep the
        suspend interrupted has run out (``"sleep_end"``): a scheduler asleep
        until its next tick in a ``sleep()``, which Linux measures on
        CLOCK_MONOTONIC, stopped while the machine sleeps, so a suspend
        ``[a, b)`` wakes it at ``b`` plus the time from ``a`` to the next tick
        (cron: ``cron.c`` ``cron_sleep``; measured on Debian cron 3.0pl1).
    rate_limit : str or None
        The :class:`~calsim.RateLimit` (by name) each attempt takes a token from (None: none).
    idempotent : bool
        Whether the sink absorbs a repeated effect of the same run key
        (schedule, nominal instant): a crash after the effect but before the
        acknowledgement then causes no duplicate effect (default False).
    covers : {"own_window", "since_last_success", "data_interval"} or None
        The data window a run processes (ledger ``window_start_utc``,
        ``window_end_utc``): ``[previous nominal instant, this one)`` of the same
        schedule, or everything since the last successful run's window
        (Airflow's ``prev_data_interval_end_success``), or Airflow's data
        interval (``CronDataIntervalTimetable``, ``DeltaDataIntervalTimetable``):
        the own window, a run due at its interval's *end*, so the schedule's
        first time at or after its start opens the first interval and runs
        nothing (:mod:`.data_windows`); None (default): runs carry no window.
        A retry resends the same window.
    effect_at : float in (0, 1]
        Where in an attempt its side effect happens, as a fraction of its
        duration (default 1: at its end).
    ack_delay : duration or None
        How long after its end an attempt is acknowledged (default None: at
        once); the worker holds it until then, and a crash in between repeats
        the effect.
    on_resume : {"drop", "catch_up"}
        What a :class:`~calsim.Resume` does with the occurrences its pause
        held: none runs (``"drop"``, default: Temporal drops the paused span)
        or they are a backlog picked at the resume, under ``catchup``
        (``"catch_up"``: Airflow unpausing a DAG creates every interval since
        the last run with ``catchup=True``, the latest without).
    ahead_runs : int >= 0 or None
        A scheduler that *creates* runs ahead of time (Prefect's scheduler
        service keeps ``min_runs`` future runs): while it is down
        (``Outage``) only the runs it created before going down exist; the
        others due then are never created (``skipped``/``catchup``) and the
        created ones are a backlog at its return, under ``catchup``. It
        creates the next ``ahead_runs``, every one due within ``ahead`` of
        the instant it went down and the first after that. With 0, a
        schedule left with no created run in the future at the return is
        never topped up again: every later occurrence is ``skipped``
        (Prefect selects a deployment for more runs only while it has fewer
        than ``min_runs`` future runs or their last is within the look-ahead,
        ``server/services/scheduler.py:103-116``: with 0 and none left,
        neither holds). None (default): every missed run exists.
    ahead : duration or None
        With ``ahead_runs``: the look-ahead every run due within is created
        too (Prefect ``min_scheduled_time``, default ``"1h"`` there); None: 0.
    interval_from : {"schedule", "last_run", "restart"}
        Where an :class:`~calsim.Every` interval counts from: the schedule's
        anchor (default), the last run the scheduler sent (Celery beat's
        ``schedule.is_due``: ``last_run_at + run_every``, so after a
        catch-up at the return from an outage every later run moves with
        it), or also every return from an ``Outage(kind="down")`` (beat with
        a lost schedule file starts each entry's count at its restart);
        :func:`.occurrences.restarted_intervals`.
    pool : str or None
        The capacity pool whose slots its runs take, with
        ``Scenario(capacity={"etl": 4, "reports": 2})`` (a Kubernetes
        namespace's quota, an Airflow pool, a Celery queue's workers);
        None: no pool (with a number ``capacity``, the scenario's one pool).

    >>> Policy(catchup="bounded", limit=2, overlap="buffer_one").limit
    2
    >>> Policy(overlap="buffer_all", max_active=2).max_active  # Airflow max_active_runs=2: the third waits
    2
    """

    catchup: Catchup = "all"
    limit: int | None = None
    max_lateness: object = None
    misfire_grace: object = None
    overlap: Overlap = "allow"
    max_active: int | None = None
    jitter: object = None
    duration: object = None
    cost: float = 0.0
    account: str | None = None
    on_budget: OnBudget = "wait"
    priority: int = 0
    max_missed: int | None = None
    limit_edge: LimitEdge = "on_time"
    backlog: Backlog = "at_once"
    recovery_wake: bool = True
    down_is_missed: bool = False
    suspend_catchup: Catchup | None = None
    suspend_limit: object = None
    suspend_wake: SuspendWake = "resume"
    rate_limit: str | None = None
    idempotent: bool = False
    covers: Covers | None = None
    effect_at: float = 1.0
    ack_delay: object = None
    on_resume: OnResume = "drop"
    ahead_runs: int | None = None
    ahead: object = None
    interval_from: IntervalFrom = "schedule"
    pool: str | None = None
    max_lateness_us: int | None = field(init=False, repr=False, compare=False)
    misfire_grace_us: int | None = field(init=False, repr=False, compare=False)
    jitter_us: int = field(init=False, repr=False, compare=False)
    duration_us: int = field(init=False, repr=False, compare=False)
    suspend_limit_us: int | None = field(init=False, repr=False, compare=False)
    ack_delay_us: int = field(init=False, repr=False, compare=False)
    ahead_us: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_choice("catchup", self.catchup, get_args(Catchup), noun="policy")
        check_choice("overlap", self.overlap, get_args(Overlap), noun="policy")
        check_choice("on_budget", self.on_budget, get_args(OnBudget), noun="policy")
        check_choice("limit_edge", self.limit_edge, get_args(LimitEdge), noun="policy")
        check_choice("backlog", self.backlog, get_args(Backlog), noun="policy")
        if self.suspend_catchup is not None:
            check_choice("suspend_catchup", self.suspend_catchup, get_args(Catchup), noun="policy")
        check_choice("suspend_wake", self.suspend_wake, get_args(SuspendWake), noun="policy")
        check_choice("on_resume", self.on_resume, get_args(OnResume), noun="policy")
        check_choice("interval_from", self.interval_from, get_args(IntervalFrom), noun="policy")
        if self.ahead_runs is not None and (isinstance(self.ahead_runs, bool) or not isinstance(self.ahead_runs, int)
                                            or not 0 <= self.ahead_runs <= 2**31):
            raise PolicyError(f"ahead_runs: {shown(self.ahead_runs)} (allowed an integer from 0 to 2**31, or None)")
        if self.ahead is not None and self.ahead_runs is None:
            raise PolicyError(f"ahead: {shown(self.ahead)} is only used with ahead_runs (the runs a scheduler "
                              "creates ahead), got ahead_runs=None")
        if self.covers is not None:
            check_choice("covers", self.covers, get_args(Covers), noun="data window")
        for name in ("recovery_wake", "down_is_missed", "idempotent"):
            if not isinstance(getattr(self, name), bool):
                raise PolicyError(f"{name}: expected True or False, got {shown(getattr(self, name))}")
        if "bounded" in (self.catchup, self.suspend_catchup):
            if not isinstance(self.limit, int) or isinstance(self.limit, bool) or not 1 <= self.limit <= 2**31:
                raise PolicyError(f"limit: catchup='bounded' needs limit >= 1, got {shown(self.limit)}")
        elif self.limit is not None:
            raise PolicyError(f"limit: only used with catchup='bounded', got limit={shown(self.limit)} "
                              f"with catchup={shown(self.catchup)}")
        set_ = object.__setattr__
        set_(self, "max_lateness_us", _dur(self.max_lateness, "max_lateness"))
        set_(self, "misfire_grace_us", _dur(self.misfire_grace, "misfire_grace"))
        set_(self, "jitter_us", _dur(self.jitter, "jitter") or 0)
        set_(self, "suspend_limit_us", _dur(self.suspend_limit, "suspend_limit"))
        set_(self, "ack_delay_us", _dur(self.ack_delay, "ack_delay") or 0)
        set_(self, "ahead_us", _dur(self.ahead, "ahead") or 0)
        if self.rate_limit is not None and (not isinstance(self.rate_limit, str) or not self.rate_limit):
            raise PolicyError(f"rate_limit: expected the name of a RateLimit or None, got {shown(self.rate_limit)}")
        if self.pool is not None and (not isinstance(self.pool, str) or not self.pool):
            raise PolicyError(f"pool: expected the name of a capacity pool (a key of Scenario(capacity={{...}})) "
                              f"or None, got {shown(self.pool)}")
        if (isinstance(self.effect_at, bool) or not isinstance(self.effect_at, (int, float))
                or not 0 < self.effect_at <= 1):
            raise PolicyError(f"effect_at: {shown(self.effect_at)} (allowed a fraction of the duration in (0, 1])")
        if isinstance(self.duration, LogNormal):
            set_(self, "duration_us", self.duration.median_us)
        else:
            set_(self, "duration_us", _dur(self.duration, "duration") or 0)
        if (isinstance(self.cost, bool) or not isinstance(self.cost, (int, float)) or not 0 <= self.cost <= 1e15
                or math.isnan(self.cost)):  # bounded: costs are summed in float64 columns
            raise PolicyError(f"cost: {shown(self.cost)} (allowed a number >= 0)")
        if self.account is not None and not isinstance(self.account, str):
            raise PolicyError(f"account: expected a string or None, got {shown(self.account)}")
        # Bounded so they fit the engine's int64 columns (and a message never renders a 5,000-digit int).
        if isinstance(self.priority, bool) or not isinstance(self.priority, int) or abs(self.priority) > 2**31:
            raise PolicyError(f"priority: expected an integer in -2**31..2**31, got {shown(self.priority)}")
        if self.max_active is not None:
            if (isinstance(self.max_active, bool) or not isinstance(self.max_active, int)
                    or not 1 <= self.max_active <= 2**31):
                raise PolicyError(f"max_active: {shown(self.max_active)} (allowed an integer from 1 to 2**31, or None)")
            if self.overlap == "allow":
                raise PolicyError(f"max_active: {self.max_active} needs an overlap mode that says what happens when "
                                  f"{self.max_active} runs are going (allowed with overlap 'skip', 'buffer_one', "
                                  "'buffer_all', 'cancel_other' or 'buffer_latest'; 'allow' starts any number)")
        if self.max_missed is not None and (not isinstance(self.max_missed, int) or isinstance(self.max_missed, bool)
                                            or not 0 <= self.max_missed <= 2**62):
            raise PolicyError(f"max_missed: {shown(self.max_missed)} (allowed an integer from 0 to 2**62, or None)")


def with_policy(schedules, policy: Policy | None = None, **fields):
    """The schedules with ``policy`` (or their own policy with ``fields`` changed), for what-if runs.

    >>> import calsim
    >>> fleet = calsim.examples.fleet(3, seed=0)
    >>> [s.policy.catchup for s in calsim.with_policy(fleet, catchup="latest")]
    ['latest', 'latest', 'latest']
    >>> calsim.with_policy(fleet, catch_up="latest")
    Traceback (most recent call last):
    ...
    calsim.errors.UnknownPolicyKeywordError: with_policy: unexpected keyword argument 'catch_up' (did you mean 'catchup'?; allowed: catchup, limit, ...)
    """  # noqa: E501  (a doctest output line)
    from dataclasses import fields as fields_of, replace

    allowed = tuple(f.name for f in fields_of(Policy) if f.init)
    for name in fields:
        if name not in allowed:  # (a computed field such as max_lateness_us too: replace() would raise ValueError)
            raise unknown_keyword("with_policy", name, allowed, policy=True)
    out = []
    for s in schedules:
        base = policy if policy is not None else (s.policy if isinstance(s.policy, Policy) else Policy())
        new = replace(base, **fields) if fields else base
        out.append(replace(s, policy=new))
    return out
