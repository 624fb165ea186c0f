"""crond's minute loop, ported line by line from cronie: the stand-in for the daemon where it cannot run.

The real oracle is Debian's cron daemon itself (``tests/oracles/cron_daemon.py``:
runs recorded by ``tools/capture_cron.py``). This port reproduces every run
of those recordings (``tests/presets/test_cronie.py``), and is kept for what
they cannot hold: the grammar's job kinds over any spec, and dense sweeps of
suspends (``CALSIM_LONG=1``) that would take the daemon hours.

Upstream files (repository https://github.com/cronie-crond/cronie); every line
number below refers to these exact versions:

=========  ============  ==========================================
name       file          commit
=========  ============  ==========================================
CRON_C     src/cron.c    2f759ba2728011e2d8d070de46102867106a149f
ENTRY_C    src/entry.c   2f759ba2728011e2d8d070de46102867106a149f
JOB_C      src/job.c     043670b1a57fa624bd4683ea1bb94b2b768be94a
MACROS_H   src/macros.h  05246ced03a7ad7302780f8052d8a01f33d46ec1
=========  ============  ==========================================

What the port keeps: the three clocks of ``main`` (``clockTime``,
``timeRunning``, ``virtualTime``, in *local wall-clock minutes* since the
epoch), ``set_time`` (``GMToff`` recomputed only when ``tm_isdst`` flips),
``cron_sleep`` (sleep to second 1 of the next minute), the ``timeDiff``
classification and its four branches, ``find_jobs`` with ``doWild`` /
``doNonWild`` and the ``MIN_STAR``/``HR_STAR`` flags, the ``CRON_TZ`` branch,
``job_add``'s de-duplication and ``job_runqueue``'s ``sleep(10)``. The crontab
parser is ported for the numeric 5-field form (``get_list``/``get_range``/
``get_number``/``set_element``) and the ``@`` macros.

What the port leaves out (no effect on which job runs at which minute):
inotify/database reloads, mail, fork/exec (``do_command`` takes no time here),
``@reboot`` jobs, ``RANDOM_DELAY`` (``e->delay`` is 0: the variable is unset),
signals, clustering.

The world (not cronie's code, the system it runs on):

* the daemon's ``TZ`` is the zone of the scenario; ``localtime`` comes from
  zoneinfo (calsim's shipped release ``2026f`` by default); ``tm_gmtoff`` is
  ``utcoffset()``, ``tm_isdst`` is ``dst() != 0``;
* ``sleep(n)`` measures ``CLOCK_MONOTONIC`` (Linux ``nanosleep``; see
  nanosleep(2), "Linux measures the time using the CLOCK_MONOTONIC clock"),
  which stops while the machine is suspended: after a resume crond first sleeps
  what was left of its sleep. ``sleep_clock="boottime"`` instead wakes it at the
  resume instant if the sleep would have ended meanwhile;
* a job runs for ``job_seconds`` (default 0): the ``sleep(10)`` after each
  catch-up minute that started one (CRON_C:412-413, 441-442) is cut short
  when the first of them ends, since its exit (SIGCHLD, which crond handles)
  interrupts ``sleep`` (signal(7): ``nanosleep`` is never restarted after a
  handler). So with quick jobs a backlog runs within moments, as Debian's
  cron does under libfaketime (tests/presets/test_cronie_daemon.py), not 10 s apart;
* a ``down`` outage ``[a, b)`` kills crond at ``a`` (nothing that would run at or
  after ``a`` runs) and starts a fresh crond at ``b`` (``main`` from the top,
  with no memory); a ``suspend`` outage ``[a, b)`` freezes the whole machine:
  the process keeps its memory and sees the wall clock jump at ``b``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1)

# MACROS_H:98 SECONDS_PER_MINUTE 60; :101-103 FIRST_MINUTE 0, LAST_MINUTE 59, MINUTE_COUNT 60;
# :105-119 the other field bounds (hour 0-23, dom 1-31, month 1-12, dow 0-7 with 0 and 7 = Sunday).
SECONDS_PER_MINUTE = 60
FIRST_MINUTE, LAST_MINUTE = 0, 59
MINUTE_COUNT = LAST_MINUTE - FIRST_MINUTE + 1
FIRST_HOUR, LAST_HOUR = 0, 23
FIRST_DOM, LAST_DOM = 1, 31
FIRST_MONTH, LAST_MONTH = 1, 12
FIRST_DOW, LAST_DOW = 0, 7

# structs.h entry flags (only the ones find_jobs reads)
MIN_STAR, HR_STAR, DOM_STAR, DOW_STAR = 0x01, 0x02, 0x04, 0x08

# globals.h MonthNames / DowNames (get_number compares case-insensitively, ENTRY_C:596)
MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
DOW_NAMES = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

BRANCHES = ("normal", "small", "medium_wild", "medium_fixed", "negative", "large")


class CrontabError(ValueError):
    """load_entry returned NULL (ENTRY_C:416-427): the line is rejected."""


# ---------------------------------------------------------------------------------------------
# ENTRY_C: the crontab line parser (numeric fields and @macros)


@dataclass
class Entry:
    """``struct _entry``: bit sets as Python sets of 0-based indices, flags, name, CRON_TZ."""

    name: str
    minute: set = field(default_factory=set)
    hour: set = field(default_factory=set)
    dom: set = field(default_factory=set)
    month: set = field(default_factory=set)
    dow: set = field(default_factory=set)
    flags: int = 0
    delay: int = 0  # ENTRY_C:307-319 RANDOM_DELAY; unset -> 0
    cron_tz: str | None = None  # env_get("CRON_TZ", e->envp), CRON_C:570

    @property
    def wildcard(self) -> bool:
        """CRON_C:588-590: a job is 'wildcard' iff MIN_STAR or HR_STAR is set."""
        return bool(self.flags & (MIN_STAR | HR_STAR))


class _Chars:
    """get_char / unget_char over one line (EOF = None)."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0

    def get(self):
        if self.i >= len(self.text):
            self.i += 1
            return None
        ch = self.text[self.i]
        self.i += 1
        return ch

    def unget(self) -> None:
        self.i -= 1


def _set_element(bits: set, low: int, high: int, number: int) -> bool:
    """ENTRY_C:609-616 set_element: False is EOF (out of range)."""
    if number < low or number > high:  # ENTRY_C:612
        return False
    bits.add(number - low)  # ENTRY_C:615
    return True


def _get_number(low: int, names, ch, f: _Chars, terms: str):
    """ENTRY_C:558-607 get_number -> (ch, number) or (None, None) for EOF."""
    temp = ""
    while ch is not None and ch.isdigit():  # ENTRY_C:568-573
        temp += ch
        ch = f.get()
    if temp:  # ENTRY_C:575-581
        if ch is None or ch not in terms:
            return None, None
        return ch, int(temp)
    if names:  # ENTRY_C:584-602
        while ch is not None and ch.isalpha():
            temp += ch
            ch = f.get()
        if temp and ch is not None and ch in terms:
            for i, name in enumerate(names):
                if name.lower() == temp.lower():  # ENTRY_C:596 strcasecmp
                    return ch, i + low
    return None, None  # ENTRY_C:604-606 bad:


def _get_range(bits: set, low: int, high: int, names, ch, f: _Chars):
    """ENTRY_C:472-556 get_range: number | number "-" number ["/" number] | "*" ["/" number]."""
    if ch == "*":  # ENTRY_C:482-490
        num1, num2 = low, high
        ch = f.get()
        if ch is None:
            return None
    else:
        ch, num1 = _get_number(low, names, ch, f, ",- \t\n")  # ENTRY_C:492
        if ch is None:
            return None
        if ch != "-":  # ENTRY_C:496-504: a single number
            if not _set_element(bits, low, high, num1):
                return None
            return ch
        ch = f.get()  # ENTRY_C:508: eat the dash
        if ch is None:
            return None
        ch, num2 = _get_number(low, names, ch, f, "/, \t\n")  # ENTRY_C:514
        if ch is None or num1 > num2:  # ENTRY_C:515
            return None
    if ch == "/":  # ENTRY_C:522-536
        ch = f.get()
        if ch is None:
            return None
        ch, num3 = _get_number(0, None, ch, f, ", \t\n")
        if ch is None or num3 == 0:  # ENTRY_C:535
            return None
    else:
        num3 = 1  # ENTRY_C:540
    for i in range(num1, num2 + 1, num3):  # ENTRY_C:549-553
        if not _set_element(bits, low, high, i):
            return None
    return ch


def _get_list(bits: set, low: int, high: int, names, ch, f: _Chars):
    """ENTRY_C:430-469 get_list: range {"," range}, then skip to the next field."""
    bits.clear()  # ENTRY_C:446
    while True:  # ENTRY_C:450-458
        ch = _get_range(bits, low, high, names, ch, f)
        if ch is None:
            return None
        if ch == ",":
            ch = f.get()
        else:
            break
    while ch is not None and ch not in "\t \n":  # ENTRY_C:463 Skip_Nonblanks
        ch = f.get()
    while ch is not None and ch in "\t ":  # ENTRY_C:464 Skip_Blanks
        ch = f.get()
    return ch


def load_entry(name: str, line: str, *, cron_tz: str | None = None) -> Entry:
    """ENTRY_C:80-428 load_entry, time part: ``line`` is the five fields (a command is appended).

    >>> e = load_entry("j", "*/5 2 * * *"); e.wildcard, sorted(e.minute)[:3], sorted(e.hour)
    (True, [0, 5, 10], [2])
    >>> load_entry("j", "0-59 3 * * *").wildcard   # a full range is not a star: fixed-time
    False
    >>> load_entry("j", "@hourly").wildcard, load_entry("j", "@daily").wildcard
    (True, False)
    """
    e = Entry(name=name, cron_tz=cron_tz)
    f = _Chars(line.strip() + " cmd\n")
    ch = f.get()
    if ch == "@":  # ENTRY_C:138-206
        word = ""
        ch = f.get()
        while ch is not None and ch not in " \t\n":
            word += ch
            ch = f.get()
        allh = set(range(0, 24))
        alld, allmo, alldw = set(range(0, 31)), set(range(0, 12)), set(range(0, 8))
        if word in ("yearly", "annually"):  # ENTRY_C:155-162
            e.minute, e.hour, e.dom, e.month, e.dow, e.flags = {0}, {0}, {0}, {0}, alldw, DOW_STAR
        elif word == "monthly":  # ENTRY_C:163-170
            e.minute, e.hour, e.dom, e.month, e.dow, e.flags = {0}, {0}, {0}, allmo, alldw, DOW_STAR
        elif word == "weekly":  # ENTRY_C:171-178
            e.minute, e.hour, e.dom, e.month, e.dow, e.flags = {0}, {0}, alld, allmo, {0}, DOW_STAR
        elif word in ("daily", "midnight"):  # ENTRY_C:179-185
            e.minute, e.hour, e.dom, e.month, e.dow = {0}, {0}, alld, allmo, alldw
        elif word == "hourly":  # ENTRY_C:186-193
            e.minute, e.hour, e.dom, e.month, e.dow, e.flags = {0}, allh, alld, allmo, alldw, HR_STAR
        else:
            raise CrontabError(f"bad time specifier: {line!r}")  # ENTRY_C:194-197 (and @reboot: not modelled)
    else:
        if ch == "*":  # ENTRY_C:210-211
            e.flags |= MIN_STAR
        ch = _get_list(e.minute, FIRST_MINUTE, LAST_MINUTE, None, ch, f)  # ENTRY_C:212
        if ch is None:
            raise CrontabError(f"bad minute: {line!r}")
        if ch == "*":  # ENTRY_C:221-222
            e.flags |= HR_STAR
        ch = _get_list(e.hour, FIRST_HOUR, LAST_HOUR, None, ch, f)  # ENTRY_C:223
        if ch is None:
            raise CrontabError(f"bad hour: {line!r}")
        if ch == "*":  # ENTRY_C:232-233
            e.flags |= DOM_STAR
        ch = _get_list(e.dom, FIRST_DOM, LAST_DOM, None, ch, f)  # ENTRY_C:234
        if ch is None:
            raise CrontabError(f"bad day-of-month: {line!r}")
        ch = _get_list(e.month, FIRST_MONTH, LAST_MONTH, MONTH_NAMES, ch, f)  # ENTRY_C:243
        if ch is None:
            raise CrontabError(f"bad month: {line!r}")
        if ch == "*":  # ENTRY_C:252-253
            e.flags |= DOW_STAR
        ch = _get_list(e.dow, FIRST_DOW, LAST_DOW, DOW_NAMES, ch, f)  # ENTRY_C:254
        if ch is None:
            raise CrontabError(f"bad day-of-week: {line!r}")
    if 0 in e.dow or 7 in e.dow:  # ENTRY_C:261-265 make sundays equivalent
        e.dow |= {0, 7}
    if ch is None or ch in "\n*":  # ENTRY_C:268-271
        raise CrontabError(f"bad command: {line!r}")
    return e


# ---------------------------------------------------------------------------------------------
# The world crond runs in


class World:
    """The machine: one zone (the daemon's TZ), suspends, and how ``sleep`` measures time."""

    def __init__(self, zone, suspends: Sequence[tuple[float, float]] = (), sleep_clock: str = "monotonic",
                 zones: Mapping[str, object] | None = None) -> None:
        if sleep_clock not in ("monotonic", "boottime"):
            raise ValueError(f"sleep_clock: {sleep_clock!r} (allowed: 'monotonic', 'boottime')")
        self.zone = zone
        self.suspends = sorted(suspends)
        self.sleep_clock = sleep_clock
        self.zones = dict(zones or {})

    def localtime(self, t: int, zone=None) -> dt.datetime:
        return dt.datetime.fromtimestamp(t, zone or self.zone)

    def suspended_at(self, t: float) -> tuple[float, float] | None:
        for a, b in self.suspends:
            if a <= t < b:
                return a, b
        return None

    def sleep_end(self, now: float, seconds: float) -> float:
        """When a ``sleep(seconds)`` begun at ``now`` returns (real time)."""
        end = now + seconds
        if self.sleep_clock == "boottime":
            span = self.suspended_at(end)
            return span[1] if span else end
        for a, b in self.suspends:  # CLOCK_MONOTONIC does not count suspended time
            if a >= end:
                break
            if b > now and a >= now:
                end += b - a
        return end


class _Stopped(Exception):
    """The process was killed (a ``down`` outage began) while it slept."""


@dataclass(frozen=True)
class Run:
    """One command crond started.

    ``nominal_local`` is the wall minute ``find_jobs`` matched (naive, in the
    job's zone), ``fold`` PEP 495's fold of that wall time as crond read it
    (``vtime`` minus the ``vGMToff`` it was called with), ``at_utc`` when
    ``job_runqueue`` started it and ``branch`` the ``timeDiff`` case that queued it.
    """

    job: str
    nominal_local: dt.datetime
    fold: int
    at_utc: dt.datetime
    branch: str


@dataclass(frozen=True)
class Jump:
    """One wake-up whose ``timeDiff`` (CRON_C:371) was not 1: the wall-clock jump crond saw.

    ``at_utc`` is when crond woke, ``time_diff`` the jump in wall minutes and
    ``kind`` its class (CRON_C:393-400): ``small``, ``medium``, ``negative`` or ``large``.
    """

    at_utc: dt.datetime
    time_diff: int
    kind: str


class Crond:
    """One life of the daemon: ``main`` from ``start`` until it is killed at ``stop``."""

    def __init__(self, entries: Sequence[Entry], world: World, start: float, stop: float, log: list[Run],
                 jumps: list[Jump] | None = None, job_seconds: float = 0.0) -> None:
        self.entries, self.world, self.now, self.stop, self.log = list(entries), world, float(start), stop, log
        self.job_seconds = job_seconds
        self.jumps = jumps if jumps is not None else []
        self.queue: list[tuple[Entry, int, int, str]] = []
        self.isdst = 0  # CRON_C:608 static int isdst
        self.GMToff = 0  # CRON_C:76
        self.clockTime = self.timeRunning = self.virtualTime = 0  # CRON_C:75

    # -- libc --
    def time(self) -> int:
        return math.floor(self.now)

    def sleep(self, seconds: float) -> None:
        end = self.world.sleep_end(self.now, seconds)
        if end >= self.stop:
            raise _Stopped
        self.now = end

    # -- CRON_C:606-620 set_time
    def set_time(self, initialize: bool) -> None:
        StartTime = self.time()  # CRON_C:610
        tm = self.world.localtime(StartTime)  # CRON_C:613
        tm_isdst = 1 if tm.dst() else 0
        if initialize or tm_isdst != self.isdst:  # CRON_C:614
            self.isdst = tm_isdst  # CRON_C:615
            self.GMToff = int(tm.utcoffset().total_seconds())  # CRON_C:616, MACROS_H:94-96 tm_gmtoff
        self.clockTime = (StartTime + self.GMToff) // SECONDS_PER_MINUTE  # CRON_C:619

    # -- CRON_C:625-652 cron_sleep
    def cron_sleep(self, target: int) -> bool:
        t1 = self.time() + self.GMToff  # CRON_C:629
        seconds_to_wait = target * SECONDS_PER_MINUTE - t1 + 1  # CRON_C:630
        slept = False
        while 0 < seconds_to_wait < 65:  # CRON_C:635
            self.sleep(seconds_to_wait)  # CRON_C:636
            slept = True
            t2 = self.time() + self.GMToff  # CRON_C:648
            seconds_to_wait -= t2 - t1  # CRON_C:649
            t1 = t2
        return slept

    # -- JOB_C:37-58 job_add, JOB_C:60-72 job_runqueue
    def job_add(self, e: Entry, vtime: int, vGMToff: int, branch: str) -> None:
        for q in self.queue:  # JOB_C:41-43: already on queue -> keep going
            if q[0] is e:
                return
        self.queue.append((e, vtime, vGMToff, branch))  # JOB_C:53-57

    def job_runqueue(self) -> int:
        run = 0
        for e, vtime, vGMToff, branch in self.queue:  # JOB_C:64-69
            self.log.append(_run_record(self.world, e, vtime, vGMToff, branch, self.now))  # do_command
            run += 1
        self.queue = []  # JOB_C:70
        return run

    # -- CRON_C:526-599 find_jobs
    def find_jobs(self, vtime: int, doWild: bool, doNonWild: bool, vGMToff: int, branch: str) -> None:
        for e in self.entries:  # CRON_C:566-567
            virtualSecond = (vtime - e.delay) * SECONDS_PER_MINUTE  # CRON_C:568
            virtualGMTSecond = virtualSecond - vGMToff  # CRON_C:569
            job_tz = e.cron_tz  # CRON_C:570
            if job_tz:  # CRON_C:542-544 maketime: localtime in the job's TZ
                tm = self.world.localtime(virtualGMTSecond, self.world.zones[job_tz])
            else:  # CRON_C:545-549: gmtime of the wall-clock seconds
                tm = EPOCH + dt.timedelta(seconds=virtualSecond)
            minute = tm.minute - FIRST_MINUTE  # CRON_C:551-555
            hour = tm.hour - FIRST_HOUR
            dom = tm.day - FIRST_DOM
            month = tm.month - FIRST_MONTH
            dow = (tm.weekday() + 1) % 7 - FIRST_DOW
            if (minute in e.minute and hour in e.hour and month in e.month  # CRON_C:574-581
                    and ((dow in e.dow and dom in e.dom) if (e.flags & DOM_STAR or e.flags & DOW_STAR)
                         else (dow in e.dow or dom in e.dom))):
                if job_tz is not None and vGMToff != self.GMToff:  # CRON_C:582-586
                    continue
                if (doNonWild and not e.flags & (MIN_STAR | HR_STAR)) or \
                        (doWild and e.flags & (MIN_STAR | HR_STAR)):  # CRON_C:588-590
                    self.job_add(e, vtime, vGMToff, branch)  # CRON_C:591

    # -- CRON_C:209-492 main, from set_time(TRUE) on
    def main(self) -> None:
        try:
            self._main()
        except _Stopped:
            pass

    def _main(self) -> None:
        self.set_time(True)  # CRON_C:339
        # CRON_C:340 run_reboot_jobs: @reboot entries are not modelled
        self.timeRunning = self.virtualTime = self.clockTime  # CRON_C:341: the start minute counts as done
        oldGMToff = self.GMToff  # CRON_C:342
        while True:  # CRON_C:354 while (!got_sigintterm)
            while True:  # CRON_C:359-362 wait for the minute to change
                slept = self.cron_sleep(self.timeRunning + 1)
                self.set_time(False)
                if self.clockTime != self.timeRunning:
                    break
                if not slept:  # the loop spins in real life: let time pass (never reached in the grid)
                    self.now = math.floor(self.now) + 1
                    if self.now >= self.stop:
                        raise _Stopped
            self.timeRunning = self.clockTime  # CRON_C:365
            timeDiff = self.timeRunning - self.virtualTime  # CRON_C:371
            if timeDiff == 1:  # CRON_C:387-391 the common case
                self.virtualTime = self.timeRunning
                oldGMToff = self.GMToff
                self.find_jobs(self.virtualTime, True, True, oldGMToff, "normal")
            else:
                if timeDiff > 3 * MINUTE_COUNT or timeDiff < -(3 * MINUTE_COUNT):  # CRON_C:393
                    wakeupKind = "large"
                elif timeDiff > 5:  # CRON_C:395
                    wakeupKind = "medium"
                elif timeDiff > 0:  # CRON_C:397
                    wakeupKind = "small"
                else:
                    wakeupKind = "negative"  # CRON_C:399-400
                self.jumps.append(Jump(dt.datetime.fromtimestamp(self.now, UTC), timeDiff, wakeupKind))
                if wakeupKind == "small":  # CRON_C:403-420 run every virtual minute, all jobs
                    while True:
                        if self.job_runqueue():  # CRON_C:412-413 (cut short by the first job's SIGCHLD)
                            self.sleep(min(10.0, self.job_seconds))
                        self.virtualTime += 1  # CRON_C:414
                        if self.virtualTime >= self.timeRunning:  # CRON_C:415-417
                            oldGMToff = self.GMToff
                        self.find_jobs(self.virtualTime, True, True, oldGMToff, "small")  # CRON_C:418
                        if not self.virtualTime < self.timeRunning:  # CRON_C:419
                            break
                elif wakeupKind == "medium":  # CRON_C:422-450
                    # CRON_C:437: wildcard jobs for the current minute only
                    self.find_jobs(self.timeRunning, True, False, self.GMToff, "medium_wild")
                    while True:  # CRON_C:440-449: fixed-time jobs for each minute missed
                        if self.job_runqueue():  # CRON_C:441-442 (cut short by the first job's SIGCHLD)
                            self.sleep(min(10.0, self.job_seconds))
                        self.virtualTime += 1  # CRON_C:443
                        if self.virtualTime >= self.timeRunning:  # CRON_C:444-446
                            oldGMToff = self.GMToff
                        self.find_jobs(self.virtualTime, False, True, oldGMToff, "medium_fixed")  # CRON_C:447
                        self.set_time(False)  # CRON_C:448
                        if not (self.virtualTime < self.timeRunning and self.clockTime == self.timeRunning):
                            break  # CRON_C:449
                elif wakeupKind == "negative":  # CRON_C:452-464: wildcard jobs only, virtualTime kept
                    self.find_jobs(self.timeRunning, True, False, self.GMToff, "negative")  # CRON_C:463
                else:  # CRON_C:465-474: jump virtual time, run everything for now
                    self.virtualTime = self.timeRunning
                    oldGMToff = self.GMToff
                    self.find_jobs(self.timeRunning, True, True, self.GMToff, "large")
            self.job_runqueue()  # CRON_C:478


def _run_record(world: World, e: Entry, vtime: int, vGMToff: int, branch: str, now: float) -> Run:
    virtualSecond = (vtime - e.delay) * SECONDS_PER_MINUTE
    instant = virtualSecond - vGMToff
    if e.cron_tz:
        local = world.localtime(instant, world.zones[e.cron_tz])
        nominal, fold = local.replace(tzinfo=None), local.fold
    else:
        nominal = EPOCH + dt.timedelta(seconds=virtualSecond)
        fold = 0
        a0 = nominal.replace(tzinfo=world.zone, fold=0).timestamp()
        a1 = nominal.replace(tzinfo=world.zone, fold=1).timestamp()
        if a0 != a1 and world.localtime(int(a1)).replace(tzinfo=None) == nominal:
            # an ambiguous wall time: the second pass iff crond read it with the later offset
            fold = 1 if instant == int(max(a0, a1)) else 0
    at = dt.datetime.fromtimestamp(now, UTC)
    return Run(e.name, nominal, fold, at, branch)


# ---------------------------------------------------------------------------------------------
# The driver


def _instant(value: object) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.timestamp()
    raise TypeError(f"not an instant: {value!r}")


def _outage_parts(o: object) -> tuple[float, float, str]:
    if isinstance(o, tuple):
        start, end, kind = o if len(o) == 3 else (*o, "down")
    else:
        start, end, kind = o.start, o.end, getattr(o, "kind", "down")
    if kind not in ("down", "suspend"):
        raise ValueError(f"outage kind {kind!r} (allowed: 'down', 'suspend')")
    a, b = _instant(start), _instant(end)
    if b <= a:
        raise ValueError(f"outage end {end!r} is not after its start {start!r}")
    return a, b, kind


def _zone(name: str, release: object):
    if release is None:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    import calsim

    return calsim.release(release).zone(name)


def simulate(jobs: Mapping[str, str] | Iterable[tuple[str, str]], zone: str, start: object, end: object, *,
             outages: Sequence[object] = (), release: object = "2026f", boot: object = None,
             sleep_clock: str = "monotonic", cron_tz: Mapping[str, str] | None = None,
             jumps: list[Jump] | None = None, job_seconds: float = 0.0) -> list[Run]:
    """Run crond over ``[boot, end)`` and return every command it started, in order.

    ``jobs`` maps a name to the five time fields (or an ``@`` macro);
    ``zone`` is the daemon's ``TZ``; ``outages`` are ``calsim.Outage``-like
    objects or ``(start, end[, kind])`` tuples, kind ``"down"`` (default) or
    ``"suspend"``; ``boot`` (default: one hour before ``start``) is when crond
    is first started; ``cron_tz`` maps job names to a ``CRON_TZ`` zone;
    ``jumps``, if given, receives every wake-up whose ``timeDiff`` was not 1;
    ``job_seconds`` is how long each job runs (it only bounds the catch-up
    ``sleep(10)``, see the module docstring).

    >>> runs = simulate({"j": "30 2 * * *"}, "America/New_York", "2026-03-08T00:00Z", "2026-03-09T00:00Z")
    >>> [(r.nominal_local.isoformat(), r.at_utc.isoformat(), r.branch) for r in runs]
    [('2026-03-08T02:30:00', '2026-03-08T07:00:01+00:00', 'medium_fixed')]
    """
    items = list(jobs.items()) if isinstance(jobs, Mapping) else list(jobs)
    cron_tz = dict(cron_tz or {})
    entries = [load_entry(name, spec, cron_tz=cron_tz.get(name)) for name, spec in items]
    s, e_ = _instant(start), _instant(end)
    t0 = s - 3600.0 if boot is None else _instant(boot)
    parts = sorted(_outage_parts(o) for o in outages)
    for (_a1, b1, _), (a2, _b2, _) in zip(parts, parts[1:]):
        if a2 < b1:
            raise ValueError("outages overlap")
    suspends = [(a, b) for a, b, k in parts if k == "suspend"]
    world = World(_zone(zone, release), suspends, sleep_clock,
                  zones={z: _zone(z, release) for z in set(cron_tz.values())})
    log: list[Run] = []
    lives, alive_from = [], t0
    for a, b, kind in parts:
        if kind == "down":
            if a > alive_from:
                lives.append((alive_from, a))
            alive_from = max(alive_from, b)
    if alive_from < e_:
        lives.append((alive_from, e_))
    for begin, stop in lives:
        if world.suspended_at(begin):
            raise ValueError("crond cannot start during a suspend")
        Crond(entries, world, begin, stop, log, jumps, job_seconds).main()
    return log


def runs_by_key(runs: Iterable[Run]) -> dict[tuple[str, dt.datetime, int], list[Run]]:
    """``(job, nominal_local, fold) -> runs``: more than one run means cron ran that occurrence twice."""
    out: dict[tuple[str, dt.datetime, int], list[Run]] = {}
    for r in runs:
        out.setdefault((r.job, r.nominal_local, r.fold), []).append(r)
    return out
