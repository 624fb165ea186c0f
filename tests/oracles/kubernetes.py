"""Kubernetes CronJob controller, ported line by line: the oracle for ``tests/presets/test_kubernetes.py``.

What is ported (Go source read through the code index; every function below cites file and lines):

``V2U``  kubernetes/kubernetes ``pkg/controller/cronjob/utils.go``, the v1.28+ text (index id 390136215:
         ``mostRecentScheduleTime(..., includeStartingDeadlineSeconds bool)``, ``ptr.Deref``,
         ``CronJobsScheduledAnnotation``).
``V2C``  kubernetes/kubernetes ``pkg/controller/cronjob/cronjob_controllerv2.go``
         @ 67a06c20568db0f7b3a3b48ec564929b625e875a (``syncCronJob``, the workqueue wiring).
``V1U``  kubernetes/kubernetes ``pkg/controller/cronjob/utils.go`` @ 77dee9bb4e18d643fe3d1f04eb319c325307d57e
         (``getRecentUnmetScheduleTimes``; the same loop, ``> 100`` error and deadline clamp as v1.20's,
         which only lower-cased the message and used ``batchv1beta1``).
``V1C``  kubernetes/kubernetes ``pkg/controller/cronjob/cronjob_controller.go``
         @ 1bdbc35994c02b534e3e5c08ffa957ec31a58b1d (``Run``'s 10 s ``wait.Until``, ``syncOne``; v1.16-v1.20).
``ROBFIG`` robfig/cron ``spec.go`` @ 07cfef33b1936922cbe72131d09ddfe4a1b7f2a1 (``SpecSchedule.Next``).

The cron schedule itself is not re-implemented: :class:`RobfigSchedule` asks the real robfig/cron v3
``SpecSchedule.Next`` (``tests/oracles/robfig.py``, built from Debian's package), so the controller's loop
runs over the library it calls. :class:`CronSchedule` answers ``Next`` on a given list of UTC instants with
robfig's rounding (ROBFIG 59-61: "the next time this schedule is activated, greater than the given time";
84-85: start at the upcoming whole second), for the pinned cases that need no zone.

Times are integer microseconds since the Unix epoch (UTC), as in calsim; Go's ``time.Duration`` values
used here (100 ms, seconds) are whole microseconds.

Boundary facts established from the code (used by the tests):

* ``startingDeadlineSeconds`` = D: a time ``s`` is a candidate at ``now`` only if ``s > now - D``
  (V2U 108-117: ``earliestTime = now - D`` when later than the last schedule time, then
  ``t1 := schedule.Next(earliestTime)``, strictly after; V1U 133-145 the same). So a recovery exactly
  ``D`` seconds after ``s`` does **not** start ``s`` (lateness == D is late). The ``tooLate`` test
  (V2C 531-534 / V1C 282-285, ``s + D`` strictly before ``now``) can never fire after that clamp.
  ``D = 0`` never starts anything: v2 syncs 100 ms after the time (V2C 57, V2U 205), v1 at or after it.
* v2 requeues itself for ``Next(mostRecent or lastScheduleTime) + 100 ms`` (V2U 190-207, V2C 57, 172);
  a Job add/update/delete event requeues immediately (V2C 104-108, 268-351); the informer's initial list
  after a (re)start enqueues every CronJob (V2C 110-113). Nothing polls.
* v2 with > 100 missed times only records ``TooManyMissedTimes`` (V2U 171-173, 219-222) and still returns
  the most recent time; the count is the estimate ``(now - t1) / (t2 - t1) + 1`` (V2U 130-138).
* v2 finds "the most recent time" by stepping from ``potentialEarliest = t1 + (n - 2) * (t2 - t1)``
  (V2U 149-152): when the schedule's gaps are uneven (``30,45 1 * * *``, a daily time skipped by a DST
  gap) no time lies in ``(potentialEarliest, now]`` and the function returns nil although times were
  missed (V2U 179-180): that sync starts nothing and requeues for ``Next(now)`` (V2U 199-202).
* v1 lists every unmet time since ``lastScheduleTime`` (or creation), clamped by the deadline; more than
  100 is an error (V1U 145-167), ``syncOne`` returns without starting a Job and without moving
  ``lastScheduleTime`` (V1C 266-271), so every later sync sees at least as many: the CronJob is stuck.
* ``Forbid`` leaves the time unmet (V2C 558-571, V1C 298-310, ``lastScheduleTime`` not moved); the sync
  triggered when the running Job finishes (V2C 292-318) then starts the most recent unmet time if it is
  still within the deadline. ``Replace`` deletes the active Jobs, then creates the new one (V2C 573-586).
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field

US = 1_000_000
SECOND = US
NEXT_SCHEDULE_DELTA = 100_000  # V2C 57: nextScheduleDelta = 100 * time.Millisecond
V1_SYNC_PERIOD = 10 * SECOND  # V1C 96: go wait.Until(jm.syncAll, 10*time.Second, stopCh)

NONE_MISSED, FEW_MISSED, MANY_MISSED = 0, 1, 2  # V2U 39-45: missedSchedulesType


class CronSchedule:
    """``cron.Schedule`` over the UTC instants of one CronJob (calsim's expansion of its rule).

    ``next(t)`` is robfig's ``SpecSchedule.Next``: the first activation strictly after ``t``, after
    rounding ``t`` up to the next whole second (ROBFIG 59-61, 84-85: ``t = t.Add(1*time.Second -
    time.Duration(t.Nanosecond())*time.Nanosecond)``). The instants must cover every query: a query
    past the last instant raises instead of returning robfig's zero time.
    """

    def __init__(self, instants_us, *, valid_from_us: int | None = None):
        xs = sorted(set(int(x) for x in instants_us))
        if not xs:
            raise ValueError("CronSchedule needs at least one instant")
        self.instants = xs
        self.valid_from = xs[0] if valid_from_us is None else valid_from_us

    def next(self, t: int) -> int:
        start = (t // SECOND) * SECOND + SECOND  # ROBFIG 85: the upcoming second
        i = bisect.bisect_left(self.instants, start)
        if i >= len(self.instants):
            raise ValueError(f"CronSchedule.next({t}): past the last expanded instant; expand further")
        if i == 0 and t < self.valid_from:
            raise ValueError(f"CronSchedule.next({t}): before the expanded range; expand earlier")
        return self.instants[i]

    def between(self, lo: int, hi: int) -> list[int]:
        """Instants in ``(lo, hi]`` (for diagnostics only; the controller never calls this)."""
        return self.instants[bisect.bisect_right(self.instants, lo):bisect.bisect_right(self.instants, hi)]


class RobfigSchedule:
    """``cron.Schedule`` of one CronJob: the real robfig/cron v3 ``Next`` (a :class:`robfig.Robfig` process).

    ``next(t)`` rounds ``t`` to whole seconds as robfig does (ROBFIG 84-85) and asks the library; the
    chain from ``chain_from`` (a second before the horizon) is fetched in one request up front, so a
    query at one of its times (the controller's ``Next(lastScheduleTime)``) costs no round trip.
    """

    def __init__(self, oracle, spec: str, zone: str, *, chain_from_us: int, chain_until_us: int):
        self.oracle, self.spec, self.zone = oracle, spec, zone
        self.answers: dict[int, int | None] = {}
        t = chain_from_us // SECOND
        while t < chain_until_us // SECOND:
            chain = oracle.chains(spec, zone, [t], 400)[0]
            for a, b in zip([t] + chain, chain):
                self.answers[a] = b or None
            if not chain or chain[-1] == 0 or chain[-1] <= t:  # zero time, or Next stopped moving (a stall)
                break
            t = chain[-1]
        self.instants = sorted({v * SECOND for v in self.answers.values() if v})

    def next(self, t: int) -> int:
        s = t // SECOND  # ROBFIG 85: the upcoming second after t's whole second
        if s not in self.answers:
            self.answers[s] = self.oracle.chains(self.spec, self.zone, [s], 1)[0][0] or None
        got = self.answers[s]
        if got is None:
            raise ValueError(f"robfig Next({t}) is the zero time for {self.spec!r}")
        return got * SECOND

    def between(self, lo: int, hi: int) -> list[int]:
        """Times of the fetched chain in ``(lo, hi]`` (for diagnostics only; the controller never calls this)."""
        return self.instants[bisect.bisect_right(self.instants, lo):bisect.bisect_right(self.instants, hi)]


@dataclass
class Job:
    """A ``batch/v1`` Job the controller created: finished (``Complete``) at ``created + duration``."""

    name: str
    scheduled: int
    created: int
    duration: int
    deleted: int | None = None
    created_by: str = ""

    @property
    def ends(self) -> int:
        return self.created + self.duration if self.deleted is None else min(self.deleted, self.created + self.duration)

    def finished(self, now: int) -> bool:
        # V2U/V1U IsJobFinished: a Complete or Failed condition is True. The Job controller is assumed to
        # have recorded completion by the time of any sync at or after it (same process as this one).
        return self.deleted is None and self.created + self.duration <= now


@dataclass
class CronJob:
    """The parts of ``batch/v1`` CronJob the decision code reads."""

    name: str
    creation: int
    starting_deadline_seconds: int | None = None
    concurrency_policy: str = "Allow"  # Allow | Forbid | Replace
    suspend: bool = False
    last_schedule_time: int | None = None
    active: list[str] = field(default_factory=list)  # Status.Active: job names (our UIDs)


@dataclass
class Recorder:
    """``record.EventRecorder``: (time, reason, detail) tuples."""

    events: list[tuple[int, str, object]] = field(default_factory=list)

    def eventf(self, now: int, reason: str, detail: object = None) -> None:
        self.events.append((now, reason, detail))


# ---------------------------------------------------------------------------------------------------
# v2 controller (V2U, V2C)


def most_recent_schedule_time(cj: CronJob, now: int, schedule: CronSchedule,
                              include_starting_deadline_seconds: bool):
    """V2U 96-183 ``mostRecentScheduleTime``: (earliestTime, mostRecentTime or None, missed, error)."""
    earliest_time = cj.creation  # V2U 103
    missed_schedules = NONE_MISSED  # V2U 104
    if cj.last_schedule_time is not None:  # V2U 105-107
        earliest_time = cj.last_schedule_time
    if include_starting_deadline_seconds and cj.starting_deadline_seconds is not None:  # V2U 108
        scheduling_deadline = now - SECOND * cj.starting_deadline_seconds  # V2U 110
        if scheduling_deadline > earliest_time:  # V2U 112: schedulingDeadline.After(earliestTime)
            earliest_time = scheduling_deadline  # V2U 113

    t1 = schedule.next(earliest_time)  # V2U 117
    t2 = schedule.next(t1)  # V2U 118

    if now < t1:  # V2U 120: now.Before(t1)
        return earliest_time, None, missed_schedules, None
    if now < t2:  # V2U 123: now.Before(t2)
        return earliest_time, t1, missed_schedules, None

    # V2U 130: int64(t2.Sub(t1).Round(time.Second).Seconds()) -- Round: halves away from zero (d > 0)
    time_between_two_schedules = (t2 - t1 + SECOND // 2) // SECOND
    if time_between_two_schedules < 1:  # V2U 131-133
        return earliest_time, None, missed_schedules, "time difference between two schedules is less than 1 second"
    time_elapsed = (now - t1) // SECOND  # V2U 137: int64(now.Sub(t1).Seconds()), now >= t2 > t1
    number_of_missed_schedules = time_elapsed // time_between_two_schedules + 1  # V2U 138

    most_recent_time = None  # V2U 140: var mostRecentTime time.Time (zero)
    # V2U 149: potentialEarliest := t1.Add(time.Duration((n-1-1)*timeBetweenTwoSchedules) * time.Second)
    potential_earliest = t1 + (number_of_missed_schedules - 1 - 1) * time_between_two_schedules * SECOND
    t = schedule.next(potential_earliest)  # V2U 150-152
    while not t > now:
        most_recent_time = t
        t = schedule.next(t)

    if number_of_missed_schedules > 100:  # V2U 171-173
        missed_schedules = MANY_MISSED
    elif number_of_missed_schedules > 0:  # V2U 175-176
        missed_schedules = FEW_MISSED

    if most_recent_time is None:  # V2U 179-181: mostRecentTime.IsZero()
        return earliest_time, None, missed_schedules, None
    return earliest_time, most_recent_time, missed_schedules, None  # V2U 182


def next_schedule_time_duration(cj: CronJob, now: int, schedule: CronSchedule) -> int:
    """V2U 190-207 ``nextScheduleTimeDuration``: the requeue delay (µs)."""
    earliest_time, most_recent_time, missed_schedules, err = most_recent_schedule_time(cj, now, schedule, False)
    if err is not None:  # V2U 192-194
        most_recent_time = now
    elif most_recent_time is None:  # V2U 195-203
        if missed_schedules == NONE_MISSED:
            most_recent_time = earliest_time
        else:
            most_recent_time = now
    return schedule.next(most_recent_time) + NEXT_SCHEDULE_DELTA - now  # V2U 205


def next_schedule_time(cj: CronJob, now: int, schedule: CronSchedule, recorder: Recorder):
    """V2U 212-225 ``nextScheduleTime``: (scheduled time or None, error)."""
    _, most_recent_time, missed_schedules, err = most_recent_schedule_time(cj, now, schedule, True)  # V2U 213
    if most_recent_time is None or most_recent_time > now:  # V2U 215-217
        return None, err
    if missed_schedules == MANY_MISSED:  # V2U 219-222: a warning event, nothing else
        recorder.eventf(now, "TooManyMissedTimes", most_recent_time)
    return most_recent_time, err  # V2U 224


def get_job_name(cj: CronJob, scheduled_time: int) -> str:
    """V2C 661-663 ``getJobName`` with V2U ``getTimeHashInMinutes`` (Unix seconds / 60)."""
    return f"{cj.name}-{(scheduled_time // SECOND) // 60}"


def sync_cronjob(cj: CronJob, jobs: dict[str, Job], now: int, schedule: CronSchedule, recorder: Recorder):
    """V2C 415-659 ``syncCronJob``: returns (requeueAfter µs or None, created Job or None, deleted Jobs).

    ``jobs`` is every Job this CronJob owns (V2C ``getJobsToBeReconciled``); deleted Jobs are removed from
    it, created ones added (the API server's side of ``CreateJob``/``DeleteJob``).
    """
    deleted: list[Job] = []
    for j in list(jobs.values()):  # V2C 423-457
        found = j.name in cj.active
        if not found and not j.finished(now):
            # V2C 427-440: UnexpectedJob (an unfinished Job we did not record); never happens here
            recorder.eventf(now, "UnexpectedJob", j.name)
        elif found and j.finished(now):  # V2C 441-445
            cj.active.remove(j.name)
            recorder.eventf(now, "SawCompletedJob", j.name)
    for name in list(cj.active):  # V2C 458-481: active entries whose Job is gone
        if name not in jobs:
            recorder.eventf(now, "MissingJob", name)
            cj.active.remove(name)

    if cj.suspend:  # V2C 499-502
        return None, None, deleted

    scheduled_time, err = next_schedule_time(cj, now, schedule, recorder)  # V2C 513
    if err is not None:  # V2C 514-520: InvalidSchedule, no requeue
        recorder.eventf(now, "InvalidSchedule", err)
        return None, None, deleted
    if scheduled_time is None:  # V2C 521-529: "No unmet start times"
        return next_schedule_time_duration(cj, now, schedule), None, deleted

    too_late = False  # V2C 531-534
    if cj.starting_deadline_seconds is not None:
        too_late = scheduled_time + SECOND * cj.starting_deadline_seconds < now
    if too_late:  # V2C 535-548: MissSchedule, lastScheduleTime not moved
        recorder.eventf(now, "MissSchedule", scheduled_time)
        return next_schedule_time_duration(cj, now, schedule), None, deleted
    if get_job_name(cj, scheduled_time) in cj.active or cj.last_schedule_time == scheduled_time:  # V2C 549-557
        return next_schedule_time_duration(cj, now, schedule), None, deleted
    if cj.concurrency_policy == "Forbid" and len(cj.active) > 0:  # V2C 558-571
        recorder.eventf(now, "JobAlreadyActive", scheduled_time)
        return next_schedule_time_duration(cj, now, schedule), None, deleted
    if cj.concurrency_policy == "Replace":  # V2C 573-586
        for name in list(cj.active):
            job = jobs[name]
            job.deleted = now  # deleteJob: DeleteJob, then deleteFromActiveList
            del jobs[name]
            cj.active.remove(name)
            deleted.append(job)
            recorder.eventf(now, "SuccessfulDelete", name)

    name = get_job_name(cj, scheduled_time)  # V2C 588-594: getJobFromTemplate2, CreateJob
    if name in jobs:  # V2C 600-622: IsAlreadyExists
        if name in cj.active:
            return None, None, deleted
        job = jobs[name]
    else:
        job = Job(name, scheduled_time, now, 0)
        jobs[name] = job
        recorder.eventf(now, "SuccessfulCreate", name)
    cj.active.append(name)  # V2C 653
    cj.last_schedule_time = scheduled_time  # V2C 654
    return next_schedule_time_duration(cj, now, schedule), job, deleted  # V2C 657-658


# ---------------------------------------------------------------------------------------------------
# v1 controller (V1U, V1C)


class TooManyMissed(Exception):
    pass


def get_recent_unmet_schedule_times(cj: CronJob, now: int, schedule: CronSchedule) -> list[int]:
    """V1U 114-170 ``getRecentUnmetScheduleTimes`` (raises :class:`TooManyMissed` for V1U 164-167)."""
    starts: list[int] = []
    if cj.last_schedule_time is not None:  # V1U 122-132
        earliest_time = cj.last_schedule_time
    else:
        earliest_time = cj.creation
    if cj.starting_deadline_seconds is not None:  # V1U 133-140
        scheduling_deadline = now - SECOND * cj.starting_deadline_seconds
        if scheduling_deadline > earliest_time:
            earliest_time = scheduling_deadline
    if earliest_time > now:  # V1U 141-143
        return []
    t = schedule.next(earliest_time)  # V1U 145
    while not t > now:
        starts.append(t)  # V1U 146
        if len(starts) > 100:  # V1U 164-167
            raise TooManyMissed("Too many missed start time (> 100). Set or decrease "
                                ".spec.startingDeadlineSeconds or check clock skew.")
        t = schedule.next(t)
    return starts  # V1U 169


def sync_one(cj: CronJob, jobs: dict[str, Job], now: int, schedule: CronSchedule, recorder: Recorder):
    """V1C 212-362 ``syncOne``: returns (created Job or None, deleted Jobs)."""
    deleted: list[Job] = []
    for j in list(jobs.values()):  # V1C 215-236
        found = j.name in cj.active
        if not found and not j.finished(now):
            recorder.eventf(now, "UnexpectedJob", j.name)
        elif found and j.finished(now):
            cj.active.remove(j.name)
            recorder.eventf(now, "SawCompletedJob", j.name)
    for name in list(cj.active):  # V1C 241-246
        if name not in jobs:
            recorder.eventf(now, "MissingJob", name)
            cj.active.remove(name)
    if cj.suspend:  # V1C 261-264
        return None, deleted
    try:
        times = get_recent_unmet_schedule_times(cj, now, schedule)  # V1C 266
    except TooManyMissed as exc:  # V1C 267-271: FailedNeedsStart, return (no Job, no status change)
        recorder.eventf(now, "FailedNeedsStart", str(exc))
        return None, deleted
    if len(times) == 0:  # V1C 273-276
        return None, deleted
    scheduled_time = times[-1]  # V1C 281: only the most recent one
    too_late = False  # V1C 282-285
    if cj.starting_deadline_seconds is not None:
        too_late = scheduled_time + SECOND * cj.starting_deadline_seconds < now
    if too_late:  # V1C 286-297
        recorder.eventf(now, "MissSchedule", scheduled_time)
        return None, deleted
    if cj.concurrency_policy == "Forbid" and len(cj.active) > 0:  # V1C 298-310
        recorder.eventf(now, "JobAlreadyActive", scheduled_time)
        return None, deleted
    if cj.concurrency_policy == "Replace":  # V1C 311-324
        for name in list(cj.active):
            job = jobs[name]
            job.deleted = now
            del jobs[name]
            cj.active.remove(name)
            deleted.append(job)
    name = f"{cj.name}-{scheduled_time // SECOND}"  # V1U getJobFromTemplate / getTimeHash (Unix seconds)
    if name in jobs:  # CreateJob fails with AlreadyExists: V1C 331-335 returns
        recorder.eventf(now, "FailedCreate", name)
        return None, deleted
    job = Job(name, scheduled_time, now, 0)
    jobs[name] = job
    recorder.eventf(now, "SuccessfulCreate", name)
    cj.active.append(name)  # V1C 350-355
    cj.last_schedule_time = scheduled_time  # V1C 356
    return job, deleted


# ---------------------------------------------------------------------------------------------------
# Drivers: the controller-manager through a scenario


@dataclass
class Run:
    """What the controller did: per scheduled instant the Job created (if any), and its events."""

    jobs: dict[int, Job]  # scheduled instant -> Job (deleted ones included)
    events: list[tuple[int, str, object]]
    syncs: list[int]
    approx_misses: list[tuple[int, int]]  # (sync time, unmet instant v2's estimate did not find)

    def created(self, scheduled: int) -> int | None:
        job = self.jobs.get(scheduled)
        return None if job is None else job.created

    def ended(self, scheduled: int) -> int | None:
        job = self.jobs.get(scheduled)
        return None if job is None else job.ends


def _down(outages, t: int) -> bool:
    return any(a <= t < b for a, b in outages)


def _prune(cj: CronJob, jobs: dict[str, Job], now: int) -> None:
    """Forget finished Jobs no longer in ``Status.Active``: they only feed ``LastSuccessfulTime`` and the
    history limits (V2C ``cleanupFinishedJobs``), never a decision; keeps each sync O(active)."""
    for name in [n for n, j in jobs.items() if n not in cj.active and j.finished(now)]:
        del jobs[name]


def run_v2(schedule: CronSchedule, *, creation: int, until: int, outages=(), duration: int = 0,
           starting_deadline_seconds: int | None = None, concurrency_policy: str = "Allow",
           name: str = "cj") -> Run:
    """Run the v2 controller (kube-controller-manager >= 1.21) from ``creation`` to ``until``.

    Sync cadence, as the code wires it:

    * the CronJob informer's Add (at creation, and the initial list at every restart of the process:
      each outage ``[a, b)`` ends with a sync at ``b``) enqueues it now (V2C 110-113, 353-361);
    * every sync returns ``requeueAfter`` and ``processNextWorkItem`` calls ``queue.AddAfter`` (V2C
      158-175): a delaying queue keeps one waiting entry per key, the earliest (client-go
      ``delaying_queue`` insert), and a non-positive delay adds at once;
    * Job informer events enqueue at once: the Job this controller just created (``addJob``), a Job that
      finished (``updateJob``) or was deleted by Replace (``deleteJob``) (V2C 104-108, 268-351);
    * while the process is down nothing runs and the waiting entry is lost (the queue is in memory).

    Jobs run ``duration`` from their creation (the Job controller is assumed to record completion at
    once); a Job finishing during an outage is seen at the restart sync.
    """
    outages = tuple(sorted((int(a), int(b)) for a, b in outages))
    cj = CronJob(name, creation, starting_deadline_seconds, concurrency_policy)
    recorder = Recorder()
    jobs: dict[str, Job] = {}
    by_time: dict[int, Job] = {}
    syncs: list[int] = []
    approx: list[tuple[int, int]] = []
    heap: list[tuple[int, int, str]] = []
    seq = 0
    waiting: int | None = None

    def push(t: int, kind: str) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(heap, (t, seq, kind))

    push(creation, "add")  # the CronJob informer's Add
    for a, b in outages:
        push(a, "down")  # the process stops: its in-memory queue (and waiting entry) is gone
        push(b, "restart")  # the process starts: the informer's initial list enqueues the CronJob
    while heap:
        t, _, kind = heapq.heappop(heap)
        if t > until:
            break
        if kind == "down":
            waiting = None
            continue
        if kind == "waiting":
            if waiting != t:
                continue  # superseded by an earlier AddAfter, or lost in an outage
            waiting = None
        if _down(outages, t):
            continue  # no process, no informer, no queue
        syncs.append(t)
        requeue, created, deleted = sync_cronjob(cj, jobs, t, schedule, recorder)
        if created is None:
            # diagnostics only (pure; the status is unchanged when nothing was created): an unmet time a
            # full enumeration sees where v2's estimate (V2U 130-152) returned none
            earliest = cj.creation if cj.last_schedule_time is None else cj.last_schedule_time
            if cj.starting_deadline_seconds is not None:
                earliest = max(earliest, t - SECOND * cj.starting_deadline_seconds)
            unmet = schedule.between(earliest, t)
            if unmet and most_recent_schedule_time(cj, t, schedule, True)[1] is None:
                approx.append((t, unmet[-1]))
        if created is not None and created.scheduled not in by_time:
            created.duration = duration
            by_time[created.scheduled] = created
            push(t, "job_add")  # V2C addJob -> enqueueController
            push(created.created + duration, "job_update")  # V2C updateJob when the Job completes
        for _ in deleted:
            push(t, "job_delete")  # V2C deleteJob -> enqueueController
        _prune(cj, jobs, t)
        if requeue is not None:
            if requeue <= 0:  # client-go AddAfter: a non-positive delay is an Add
                push(t, "requeue")
            elif waiting is None or t + requeue < waiting:  # the waiting entry keeps the earliest time
                waiting = t + requeue
                push(waiting, "waiting")
    return Run(by_time, recorder.events, syncs, approx)


def run_v1(schedule: CronSchedule, *, creation: int, until: int, outages=(), duration: int = 0,
           starting_deadline_seconds: int | None = None, concurrency_policy: str = "Allow",
           name: str = "cj", exact: bool = False) -> Run:
    """Run the v1 controller (kube-controller-manager <= 1.20, ``CronJobControllerV2`` gate off).

    ``wait.Until(jm.syncAll, 10*time.Second, stopCh)`` (V1C 96): a sync when the process starts (the
    CronJob's creation, and the end of every outage ``[a, b)``) and every 10 s after it while up
    (``sliding``: the period starts when a sync returns; syncs are taken as instantaneous).

    ``exact=False`` skips polls that cannot change anything: after a sync that changed nothing, the next
    one that can differ is the first poll at or after the next schedule instant, the next completion of
    an active Job, or the moment the oldest time in the deadline window leaves it (these are the only
    inputs of ``syncOne``); ``exact=True`` runs every poll (used by a test to check the shortcut).
    """
    outages = tuple(sorted((int(a), int(b)) for a, b in outages))
    cj = CronJob(name, creation, starting_deadline_seconds, concurrency_policy)
    recorder = Recorder()
    jobs: dict[str, Job] = {}
    by_time: dict[int, Job] = {}
    syncs: list[int] = []
    starts = [creation] + [b for a, b in outages if b > creation]
    for k, p0 in enumerate(starts):
        stop = until
        for a, _b in outages:
            if a >= p0:
                stop = min(stop, a - 1)
                break
        if k + 1 < len(starts):
            stop = min(stop, starts[k + 1] - 1)
        p = p0
        while p <= stop:
            syncs.append(p)
            active_before = list(cj.active)
            created, deleted = sync_one(cj, jobs, p, schedule, recorder)
            if created is not None:
                created.duration = duration
                by_time[created.scheduled] = created
            changed = created is not None or deleted or cj.active != active_before
            _prune(cj, jobs, p)
            nxt = p + V1_SYNC_PERIOD
            if not exact and not changed:
                # The next unmet time after p: the chain from lastScheduleTime (what syncOne walks), not
                # Next(p): robfig's Next from an instant other than a fire can skip a time its chain fires
                # (after Lord Howe's change, Next(01:45) gives 02:30 for '30,45 1 * * *', Next(01:59:59) not).
                t = schedule.next(cj.creation if cj.last_schedule_time is None else cj.last_schedule_time)
                while t <= p:
                    t2 = schedule.next(t)
                    if t2 <= t:  # Next stopped moving: syncOne errors on > 100 unmet times from here on, forever
                        t = until + 1
                        break
                    t = t2
                cands = [t]
                cands += [e for e in (jobs[n].created + jobs[n].duration for n in cj.active) if e > p]
                if cj.starting_deadline_seconds is not None:
                    d = SECOND * cj.starting_deadline_seconds
                    earliest = cj.creation if cj.last_schedule_time is None else cj.last_schedule_time
                    window = schedule.between(max(earliest, p - d), p)
                    if window:
                        cands.append(window[0] + d)
                c = min(cands)
                if c > nxt:
                    nxt = p0 + -(-(c - p0) // V1_SYNC_PERIOD) * V1_SYNC_PERIOD
            p = nxt
    return Run(by_time, recorder.events, syncs, [])
