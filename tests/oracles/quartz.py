"""Quartz ``CronTrigger`` misfires as an oracle: a port of the job store's misfire decision.

Used for the JDBC job store, which needs a database: ``tests/presets/test_quartz.py``
compares the RAMJobStore scenarios with the real store instead (Debian's
Quartz 2.3.2 jar on a faked clock, ``oracles.quartz_jar.QuartzJar.trigger``,
whose scheduler-thread loop is this module's :func:`run_trigger`, in Java).

Source read: Quartz 2.3.2 (Debian 12 source package ``libquartz2-java_2.3.2.orig.tar.xz``,
identical to tag ``quartz-2.3.2`` of https://github.com/quartz-scheduler/quartz, where
these files are under ``quartz-core/src/main/java/org/quartz/``; on ``main`` they moved to
``quartz/src/main/java/org/quartz/``). Line numbers are of 2.3.2.

Ported
------
* ``simpl/RAMJobStore.java:1398-1432`` ``applyMisfire``::

      long misfireTime = System.currentTimeMillis();
      if (getMisfireThreshold() > 0) { misfireTime -= getMisfireThreshold(); }
      Date tnft = tw.trigger.getNextFireTime();
      if (tnft == null || tnft.getTime() > misfireTime
              || tw.trigger.getMisfireInstruction() == MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY) {
          return false; }
      ...  tw.trigger.updateAfterMisfire(cal);

  so a trigger is misfired when ``nextFireTime <= now - misfireThreshold``:
  a lateness **equal** to the threshold is a misfire ("late" edge).
* ``impl/triggers/CronTriggerImpl.java:610-630`` ``updateAfterMisfire``:
  ``IGNORE_MISFIRE_POLICY`` (-1) returns (never reaches it: applyMisfire
  returns false first, so every missed time fires, one after another, as
  ``triggered()`` at L717-725 advances ``nextFireTime`` by one fire time);
  ``SMART_POLICY`` (0) becomes ``FIRE_ONCE_NOW`` (1): ``setNextFireTime(new
  Date())`` -- one run now, then ``triggered()`` sets the next fire time
  strictly after now; ``DO_NOTHING`` (2): ``getFireTimeAfter(new Date())``
  (strictly after now): nothing runs for the missed times, nor for a time
  equal to now.
* ``simpl/RAMJobStore.java:1447-1535`` ``acquireNextTriggers`` (misfire check
  at acquisition, L1474), ``triggersFired`` L1540-1600 (``@DisallowConcurrentExecution``:
  the job's triggers become BLOCKED, L1579-1590) and ``triggeredJobComplete``
  L1612-1648 (BLOCKED -> WAITING, so a blocked trigger meets ``applyMisfire``
  when the job ends: fired then if less late than the threshold, else its
  misfire instruction applies).
* The threshold: ``RAMJobStore.misfireThreshold = 5000l`` (L111) when the
  property is absent from a user's properties file; the bundled default
  ``org/quartz/quartz.properties:16`` (used when no file is given) sets
  ``org.quartz.jobStore.misfireThreshold: 60000``; ``JobStoreSupport`` (JDBC)
  defaults to ``60000L`` (``impl/jdbcjobstore/JobStoreSupport.java:116``).
* JDBC job store, for comparison (``store="jdbc"``): misfired triggers are
  selected with ``NEXT_FIRE_TIME < ?`` (``impl/jdbcjobstore/StdJDBCConstants.java:62-69``)
  and the acquire query takes ``NEXT_FIRE_TIME >= ?`` for non-IGNORE triggers
  (L510-516), with ``? = now - misfireThreshold``: lateness equal to the
  threshold is **not** a misfire there ("on_time" edge). Its state survives
  a restart (recoverJobs -> ``recoverMisfiredJobs``, JobStoreSupport.java:871).
* A RAMJobStore forgets everything when the process stops: the application
  schedules the trigger again at start, and ``computeFirstFireTime``
  (CronTriggerImpl.java:783-792) takes the first fire time after
  ``startTime - 1000 ms``: nothing missed while down runs (``store="ram"``,
  outage kind ``"down"``) but a fire time in the last second before the
  restart, or exactly at it, which fires at the restart.

Simplification: the scheduler thread is taken to acquire a trigger at its
fire time; QuartzSchedulerThread acquires up to ``idleWaitTime`` (30 s,
QuartzSchedulerThread.java:74, 288) ahead, so a pause that starts less than
30 s before a fire time fires that (already acquired) trigger at resume
without the misfire check. The grids keep outages clear of that window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

US = 1_000_000
SOURCE = "Quartz 2.3.2 (Debian 12 libquartz2-java_2.3.2.orig.tar.xz = tag quartz-2.3.2)"
IGNORE_MISFIRE_POLICY, SMART_POLICY, FIRE_ONCE_NOW, DO_NOTHING = -1, 0, 1, 2
INSTRUCTIONS = {"IGNORE_MISFIRE_POLICY": IGNORE_MISFIRE_POLICY, "SMART_POLICY": SMART_POLICY,
                "FIRE_ONCE_NOW": FIRE_ONCE_NOW, "DO_NOTHING": DO_NOTHING}


class Fire(NamedTuple):
    """One job execution: the fire time it is for (None: a FIRE_ONCE_NOW "now"), when, and why.

    ``why``: ``"fire"`` (the trigger's next fire time came, or was met within the threshold),
    ``"fire_once_now"`` (``updateAfterMisfire`` set the next fire time to now); ``misfired``: the
    nextFireTime whose misfire this execution replaces (None: not after a misfire).
    """

    nominal: int | None
    at: int
    why: str
    misfired: int | None


class Misfire(NamedTuple):
    """An applied misfire: the trigger's nextFireTime, the instant, and what made the trigger look late:
    ``"blocked"`` (@DisallowConcurrentExecution: released when the job completed), ``"outage"`` (the JVM
    paused or a JDBC store restarted), ``"due"`` (neither)."""

    next_fire: int
    now: int
    cause: str


@dataclass
class Result:
    fired: list = field(default_factory=list)      # Fire records
    misfires: list = field(default_factory=list)   # Misfire records


def _after(times: list[int], t: int) -> int | None:
    """``getFireTimeAfter(t)``: the first fire time strictly after ``t``."""
    for x in times:
        if x > t:
            return x
    return None


def is_misfired(next_fire_us: int, now_us: int, threshold_us: int, store: str = "ram") -> bool:
    """RAMJobStore.java:1400-1408 (``tnft <= now - threshold``); JDBC: StdJDBCConstants.java:68 (``<``)."""
    misfire_time = now_us
    if threshold_us > 0:
        misfire_time -= threshold_us
    if store == "ram":
        return not (next_fire_us > misfire_time)
    return next_fire_us < misfire_time


def update_after_misfire(instruction: int, times: list[int], now_us: int) -> int | None:
    """CronTriggerImpl.java:610-630 (no Quartz Calendar)."""
    if instruction == IGNORE_MISFIRE_POLICY:
        raise AssertionError("applyMisfire returns before calling updateAfterMisfire for IGNORE")
    if instruction == SMART_POLICY:
        instruction = FIRE_ONCE_NOW
    if instruction == DO_NOTHING:
        return _after(times, now_us)                   # getFireTimeAfter(new Date())
    if instruction == FIRE_ONCE_NOW:
        return now_us                                  # setNextFireTime(new Date())
    raise ValueError(instruction)


def run_trigger(times: list[int], start_us: int, end_us: int, instruction: str, threshold_us: int,
                outages: list[tuple[int, int, str]] = (), duration_us: int = 0,
                disallow_concurrent: bool = False, store: str = "ram") -> Result:
    """One CronTrigger (fire times ``times``, sorted UTC µs) scheduled at ``start_us`` with ``startNow()``.

    ``outages``: ``(start, end, kind)``; ``"suspend"`` = the JVM does not run (memory kept), ``"down"`` =
    the process is stopped (a RAM store forgets the trigger, which the application schedules again at
    restart; a JDBC store keeps it).
    """
    instr = INSTRUCTIONS[instruction]
    res = Result()
    outs = sorted(outages)
    # computeFirstFireTime: getFireTimeAfter(startTime - 1000 ms) (CronTriggerImpl.java:783-792)
    nft = _after(times, start_us - 1000 * 1000)
    nominal = nft
    blocked_until = None          # @DisallowConcurrentExecution: BLOCKED until the job completes
    now = start_us
    misfired = None               # the nextFireTime a FIRE_ONCE_NOW "now" replaces

    def outage_at(t):
        for s, e, k in outs:
            if s <= t < e:
                return s, e, k
        return None

    while nft is not None:
        # the next moment the scheduler thread looks at this trigger
        t = max(now, nft)
        cause = "due"
        if blocked_until is not None and blocked_until > t:
            t = blocked_until
            cause = "blocked"
        o = outage_at(t)
        if o is not None:
            s, e, kind = o
            if kind == "down" and store == "ram":
                # the store is gone; at restart the trigger is scheduled anew with startNow()
                nft = _after(times, e - 1000 * 1000)
                nominal = nft
                blocked_until = None
                misfired = None
                now = e
                continue
            if blocked_until is not None and kind == "down":
                blocked_until = None   # a JDBC store recovers blocked triggers at start (JobStoreSupport.java:871 area)
            t = e
            cause = "outage"
        if nominal is not None and nominal >= end_us and nft >= end_us:
            break
        now = t
        blocked_until = None if blocked_until is not None and blocked_until <= now else blocked_until
        # acquireNextTriggers -> applyMisfire (RAMJobStore.java:1474)
        if instr != IGNORE_MISFIRE_POLICY and is_misfired(nft, now, threshold_us, store):
            res.misfires.append(Misfire(nft, now, cause))
            new = update_after_misfire(instr, times, now)
            if new is None:
                break
            if new != nft:
                misfired = nft if new == now else None
                nft = new
                nominal = None if new == now and new not in times else new
                continue
        if nft > now:
            continue   # not due yet: the thread waits for it
        # fire: triggersFired -> triggered(): previousFireTime = nextFireTime; next = getFireTimeAfter(nextFireTime)
        res.fired.append(Fire(nominal, now, "fire" if misfired is None else "fire_once_now", misfired))
        misfired = None
        fired_at = nft
        nft = _after(times, fired_at)
        nominal = nft
        if disallow_concurrent and duration_us > 0:
            blocked_until = now + duration_us          # triggersFired: BLOCKED (RAMJobStore.java:1579-1590)
    return res
