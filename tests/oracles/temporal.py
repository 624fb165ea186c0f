"""Temporal Schedules as an oracle: a port of the scheduler workflow's decisions.

Ported from repository temporalio/temporal:

* ``service/worker/scheduler/workflow.go`` at commit
  0061f49e59dc4a104ed343a4af30d5a95d25fb61 (main, LatestSchedulerWorkflowVersion =
  MigrationHandoffFixes, CurrentTweakablePolicies.Version = TriggerImmediatelyTimestamp):
  ``run()`` (main loop), ``processTimeRange``, ``getCatchupWindow``,
  ``resolveOverlapPolicy``, ``addStart``, ``processBuffer``, ``recordAction``.
* ``service/worker/scheduler/buffer.go`` at commit
  4f7435f99559c50c4682a854def2453e70685567: ``processBuffer`` (the overlap
  decision; workflow.go at 0061f49 calls the same function, now exported
  as ``ProcessBuffer``).

The index these were read from gives no line numbers; each ported statement
quotes the Go line it follows.

Boundary facts
--------------
* Catch-up window: ``if !manual && end.Sub(next.Next) > catchupWindow``
  -> missed (``processTimeRange``): strictly greater, so a time exactly
  ``catchupWindow`` old is still started ("on_time" edge). ``end`` is the
  workflow's ``now()`` at that wake-up and ``next.Next`` the (jittered)
  action time.
* Times are taken in instant order: ``for next = s.getNextTime(start);
  !(next.Next.IsZero() || next.Next.After(end)); next = s.getNextTime(next.Next)``
  (each next time strictly after the previous *instant*), so after a
  fall-back 01:45 EDT comes before 01:30 EST, and a time equal to ``end``
  is included.
* ``getCatchupWindow``: unset -> ``DefaultCatchupWindow: 365 * 24 *
  time.Hour``; below ``MinCatchupWindow: 10 * time.Second`` -> 10 s.
* After a wake-up the buffer is processed with ``isRunning :=
  len(s.Info.RunningWorkflows) > 0``; ALLOW_ALL starts are not tracked in
  RunningWorkflows (``canTrack := nonOverlapping ||
  !s.hasMinVersion(DontTrackOverlapping)``).
* ``processBuffer`` (buffer.go): nothing running -> the **first** buffered
  start runs ("If there's nothing running, we can start this one no matter
  what the policy is"); then SKIP counts the others as overlap-skipped,
  BUFFER_ONE keeps "one (the first one) in the buffer", BUFFER_ALL keeps
  all, CANCEL_OTHER/TERMINATE_OTHER with nothing running **replace** the
  one about to start ("it's not running yet ... replace it": the latest
  wins), with something running request cancel/terminate and keep the start
  buffered; ALLOW_ALL starts everything at once.
* A buffered start is not dropped later for being past its window: startWorkflow
  only derives the local activity's timeout from ``ActualTime +
  catchupWindow - now`` and raises it to ``StartToCloseTimeout`` (5 s) when
  smaller.
* ``addStart``: ``if s.tweakables.MaxBufferSize > 0 && len(s.State.BufferedStarts) >=
  s.tweakables.MaxBufferSize { ... s.Info.BufferDropped += 1; return }`` with ``MaxBufferSize:
  1000`` (``CurrentTweakablePolicies``): a time range with more than 1000 starts to buffer drops
  the rest (``processTimeRange`` still sets ``lastAction = next.Next`` for them).
* The scheduler is a durable workflow: an outage (server or worker down)
  delays its timers and watcher results to the moment it is back; it
  forgets nothing. ``LastProcessedTime`` becomes the last *added* action
  (``UseLastAction``).

The calendar itself (which wall times match) is not ported: :func:`spec_times`
matches minute and hour fields against the zone's wall clock minute by
minute (``message.proto`` on ``timezone_name``: a time that does not exist
on a day does not fire, a repeated one fires twice).
"""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

US = 1_000_000
SOURCE_WORKFLOW = "temporalio/temporal service/worker/scheduler/workflow.go @0061f49e59dc4a104ed343a4af30d5a95d25fb61"
SOURCE_BUFFER = "temporalio/temporal service/worker/scheduler/buffer.go @4f7435f99559c50c4682a854def2453e70685567"

SKIP, BUFFER_ONE, BUFFER_ALL, CANCEL_OTHER, TERMINATE_OTHER, ALLOW_ALL = (
    "SKIP", "BUFFER_ONE", "BUFFER_ALL", "CANCEL_OTHER", "TERMINATE_OTHER", "ALLOW_ALL")
DEFAULT_CATCHUP_WINDOW = 365 * 24 * 3600 * US      # CurrentTweakablePolicies.DefaultCatchupWindow
MIN_CATCHUP_WINDOW = 10 * US                        # CurrentTweakablePolicies.MinCatchupWindow
MAX_BUFFER_SIZE = 1000                              # CurrentTweakablePolicies.MaxBufferSize


def spec_times(minutes: set[int], hours: set[int], zone: str, start_us: int, end_us: int) -> list[int]:
    """UTC instants in ``(start_us, end_us)`` whose wall clock in ``zone`` has a matching minute and hour."""
    z = ZoneInfo(zone)
    out = []
    t = (start_us // (60 * US) + 1) * 60 * US
    while t < end_us:
        w = dt.datetime.fromtimestamp(t / US, dt.timezone.utc).astimezone(z)
        if w.minute in minutes and w.hour in hours and w.second == 0:
            out.append(t)
        t += 60 * US
    return out


def catchup_window(window_us: int | None) -> int:
    """``getCatchupWindow``: ``if cw == nil { return DefaultCatchupWindow } else if cw.AsDuration() <
    MinCatchupWindow { return MinCatchupWindow } else { return cw.AsDuration() }``."""
    if window_us is None:
        return DEFAULT_CATCHUP_WINDOW
    if window_us < MIN_CATCHUP_WINDOW:
        return MIN_CATCHUP_WINDOW
    return window_us


@dataclass
class Start:
    """``schedulespb.BufferedStart``: ``NominalTime``, ``ActualTime``, ``OverlapPolicy``."""

    nominal_us: int
    actual_us: int


@dataclass
class Result:
    started: dict = field(default_factory=dict)          # nominal_us -> start instant
    cancelled: dict = field(default_factory=dict)        # nominal_us -> when its cancel was requested
    missed_catchup_window: list = field(default_factory=list)
    overlap_skipped: list = field(default_factory=list)
    replaced: list = field(default_factory=list)         # CANCEL_OTHER/TERMINATE_OTHER: replaced before starting
    buffer_dropped: list = field(default_factory=list)   # (nominal, when): addStart's MaxBufferSize overrun


def process_buffer(buffer: list[Start], is_running: bool, policy: str):
    """buffer.go ``processBuffer`` for one overlap policy; returns (overlapping, non_overlapping, new_buffer,
    need_cancel, skipped, replaced)."""
    overlapping, non_overlapping, new_buffer, need_cancel = [], None, [], False
    skipped, replaced = [], []
    for start in buffer:
        if policy == ALLOW_ALL:                          # "For allow-all, just collect and start all at once"
            overlapping.append(start)
            continue
        if not is_running and non_overlapping is None:  # "If there's nothing running, we can start this one"
            non_overlapping = start
            continue
        if policy == SKIP:                               # "just skip"
            skipped.append(start)
        elif policy == BUFFER_ONE:                       # "allow one (the first one) in the buffer"
            if not new_buffer:
                new_buffer.append(start)
            else:
                skipped.append(start)
        elif policy == BUFFER_ALL:                       # "always add to buffer"
            new_buffer.append(start)
        elif policy in (CANCEL_OTHER, TERMINATE_OTHER):
            if is_running:                               # "an actual workflow is running, cancel it"
                need_cancel = True
                new_buffer.append(start)                 # "keep in buffer so it will get started once cancel completes"
            else:                                        # "it's not running yet ... replace it"
                replaced.append(non_overlapping)
                non_overlapping = start
        else:
            raise ValueError(policy)
    if need_cancel:                                      # "we shouldn't even bother starting them"
        overlapping = []
    return overlapping, non_overlapping, new_buffer, need_cancel, skipped, replaced


def run_schedule(times: list[int], start_us: int, end_us: int, policy: str, window_us: int | None,
                 duration_us: int, outages: list[tuple[int, int]] = ()) -> Result:
    """The scheduler workflow created at ``start_us``, for action times ``times`` (sorted UTC µs) before ``end_us``.

    Workflow tasks do not run during an outage ``[s, e)``: a timer or watcher due then is processed at ``e``.
    A started workflow closes ``duration_us`` after it started (a cancelled one when cancel is requested).
    """
    window = catchup_window(window_us)
    res = Result()
    times = sorted(t for t in times if t > start_us)
    outs = sorted(outages)
    last_processed = start_us                          # s.State.LastProcessedTime = s.now() at creation
    buffer: list[Start] = []
    running: list[tuple[int, int]] = []                # tracked RunningWorkflows: (nominal, closes at)
    watching: tuple[int, int] | None = None

    def up_at(t: int) -> int:
        for s, e in outs:
            if s <= t < e:
                return e
        return t

    def next_after(t: int) -> int | None:
        i = bisect.bisect_right(times, t)
        return times[i] if i < len(times) else None

    def iteration(now: int) -> None:
        nonlocal last_processed, buffer, running, watching
        # nextWakeup, lastAction := s.processTimeRange(t1, t2, UNSPECIFIED, false, nil)
        last_action = last_processed
        nxt = next_after(last_processed)
        while nxt is not None and not nxt > now:       # !(next.Next.IsZero() || next.Next.After(end))
            if now - nxt > window:                     # if !manual && end.Sub(next.Next) > catchupWindow
                res.missed_catchup_window.append(nxt)  # s.Info.MissedCatchupWindow++; continue
            else:
                if len(buffer) >= MAX_BUFFER_SIZE:     # addStart: "Buffer too large" -> BufferDropped++; return
                    res.buffer_dropped.append((nxt, now))
                else:
                    buffer.append(Start(nxt, nxt))     # s.addStart(next.Nominal, next.Next, overlapPolicy, manual)
                last_action = nxt                      # lastAction = next.Next
            nxt = next_after(nxt)
        last_processed = last_action                   # UseLastAction: LastProcessedTime = lastAction
        # for s.processBuffer() {}  (tryAgain only on start errors / pause: never here)
        running = [r for r in running if r[1] > now]   # refreshWorkflows: closed ones leave RunningWorkflows
        if watching is not None and watching[1] <= now:
            watching = None
        if not buffer:
            return
        is_running = len(running) > 0                  # isRunning := len(s.Info.RunningWorkflows) > 0
        overlapping, non_overlapping, new_buffer, need_cancel, skipped, replaced = process_buffer(
            buffer, is_running, policy)
        buffer = new_buffer
        res.overlap_skipped += [s.nominal_us for s in skipped]
        res.replaced += [s.nominal_us for s in replaced]
        all_starts = overlapping + ([non_overlapping] if non_overlapping is not None else [])
        for st in all_starts:
            res.started[st.nominal_us] = now
            closes = now + duration_us
            if st is non_overlapping:                  # recordAction: canTrack := nonOverlapping || ...
                running.append((st.nominal_us, closes))
        if need_cancel:                                # s.cancelWorkflow(ex) for ex in RunningWorkflows
            for nominal, _ in running:
                res.cancelled[nominal] = now
            running = [(nominal, now) for nominal, _ in running]   # closes once cancelled (at once here)
        if buffer and watching is None and running:    # startLongPollWatcher(RunningWorkflows[0])
            watching = running[0]

    now = up_at(start_us)
    iteration(now)
    while True:
        wake = []
        nxt = next_after(last_processed)
        if nxt is not None:
            # the timer is set for the next action time after what was processed
            t = nxt
            while t is not None and t <= now:
                t = next_after(t)
            wake.append(t if t is not None else None)
        if watching is not None:
            wake.append(max(watching[1], now))
        wake = [w for w in wake if w is not None]
        if not wake:
            break
        t = min(wake)
        if t >= end_us and not buffer and not (watching is not None and watching[1] < end_us):
            break
        now = up_at(t)
        if now > end_us + 30 * 86400 * US:
            break
        iteration(now)
        if now >= end_us and not buffer:
            break
    # actions at or after end_us are outside the compared horizon
    res.started = {k: v for k, v in res.started.items() if k < end_us}
    return res
