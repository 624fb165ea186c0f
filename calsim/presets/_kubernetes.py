"""The ``kubernetes`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

from typing import Literal, get_args

from ..simulation.policy import Overlap, Policy
from ..errors import CalsimError, check_choice
from ._base import _bad, _bool, _int, _settings, Difference, Preset

__all__ = ["kubernetes"]

ConcurrencyPolicy = Literal["Allow", "Forbid", "Replace"]
TooManyMissed = Literal["code", "docs"]
CronMode = Literal["robfig", "calendar"]

K8S_DOC = "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/"
K8S_CODE = "https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/cronjob/utils.go"
K8S_CTRL = "https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/cronjob/cronjob_controllerv2.go"
ROBFIG_PARSER = "https://github.com/robfig/cron/blob/v3.0.1/parser.go"
ROBFIG_SPEC = "https://github.com/robfig/cron/blob/v3.0.1/spec.go"


def kubernetes(*, concurrency_policy: ConcurrencyPolicy = "Allow", starting_deadline_seconds: int | None = None,
               time_zone: str | None = None, suspend: bool = False, too_many_missed: TooManyMissed = "code",
               cron: CronMode = "robfig") -> Preset:
    """Kubernetes CronJob (``batch/v1``; robfig/cron v3 semantics).

    ==============================  ===========================================  ==============
    CronJob setting                 calsim                                       source
    ==============================  ===========================================  ==============
    (after an outage)               ``catchup="latest"``: one Job, the most      K8S_CODE
                                    recent missed time
    ``startingDeadlineSeconds``     ``max_lateness`` (None: no deadline); a      K8S_DOC,
                                    time exactly that late is not started        K8S_CODE
                                    (``limit_edge="late"``)
    ``concurrencyPolicy``           ``Allow``/``Forbid``/``Replace`` ->          K8S_DOC,
                                    ``allow``/``buffer_latest``/``cancel_other`` K8S_CTRL
                                    (Forbid: the most recent unmet time starts
                                    when the running Job ends, if still within
                                    the deadline)
    ``timeZone``                    :meth:`Preset.apply` sets the zone           K8S_DOC
    ">100 missed"                   ``"code"``: no ``max_missed`` (only a        K8S_CODE,
                                    warning event); ``"docs"``: 100, and the     K8S_DOC
                                    CronJob is stuck (``skipped``/``stuck``)
    ``spec.schedule``               read as robfig/cron v3's ``ParseStandard``   ROBFIG_PARSER
                                    (``robfig:`` rules: day-of-week 0..6, so
                                    ``5/2`` is Fridays only; ``*/n`` clears the
                                    star bit, so ``*/2`` days OR weekdays)
    DST (``cron="robfig"``)         as robfig's ``Next()`` walks the calendar    ROBFIG_SPEC,
                                    (``gap``/``fold="scheduler"``): a gap time   #121594
                                    skipped, both passes of a repeated hour,
                                    and its quirks (see ``notes``)
    DST (``cron="calendar"``)       every matching wall time: ``gap="skip"``,
                                    ``fold="both"`` (what should happen)
    sync loop                       ``tick="10s"``                               K8S_DOC
    ==============================  ===========================================  ==============

    Parameters (keyword-only, the CronJob's own names in snake case)
    ----------------------------------------------------------------
    concurrency_policy : {"Allow", "Forbid", "Replace"}, default "Allow"
    starting_deadline_seconds : int >= 0 or None, default None (no deadline)
    time_zone : IANA zone name or None, default None (each schedule keeps its zone)
    suspend : bool, default False
    too_many_missed : {"code", "docs"}, default "code"
        Whether more than 100 missed times stick the CronJob (``"docs"``) or not (``"code"``).
    cron : {"robfig", "calendar"}, default "robfig"
        ``"robfig"``: fire times as a CronJob gets them from robfig's ``Next()``, DST quirks included;
        ``"calendar"``: the same rule (robfig's grammar) at every wall time it names, a gap time skipped
        and both passes of a fold, to set what *should* happen beside what *will*.

    Sources: https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ (K8S_DOC),
    https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/cronjob/utils.go (K8S_CODE),
    https://github.com/robfig/cron/blob/v3.0.1/parser.go (ROBFIG_PARSER), .../spec.go (ROBFIG_SPEC),
    https://github.com/kubernetes/kubernetes/issues/121594.

    >>> from calsim import presets
    >>> p = presets.kubernetes(concurrency_policy="Forbid", starting_deadline_seconds=200)
    >>> p.gap, p.fold, p.tick, p.policy.catchup, p.policy.overlap, p.policy.max_lateness_us // 10**6
    ('scheduler', 'scheduler', '10s', 'latest', 'buffer_latest', 200)
    >>> import calsim
    >>> job = p.apply(calsim.Schedule("report", "Europe/Berlin", "2026-01-01T00:00", "0 12 * * 5/2"))
    >>> job.rule, job.gap  # Kubernetes reads the spec as robfig/cron v3: Fridays only
    ('robfig:0 12 * * 5/2', 'scheduler')
    >>> presets.kubernetes(cron="calendar").apply(job).gap
    'skip'
    >>> presets.kubernetes(too_many_missed="docs").policy.max_missed
    100
    """
    overlap: dict[str, Overlap] = {"Allow": "allow", "Forbid": "buffer_latest", "Replace": "cancel_other"}
    check_choice("concurrency_policy", concurrency_policy, get_args(ConcurrencyPolicy))
    deadline = _int("starting_deadline_seconds", starting_deadline_seconds, 0, none=True)
    _bool("suspend", suspend)
    check_choice("too_many_missed", too_many_missed, get_args(TooManyMissed))
    check_choice("cron", cron, get_args(CronMode))
    if time_zone is not None:
        from ..tz.release import release

        try:
            release().table(time_zone)
        except (CalsimError, TypeError):
            raise _bad("time_zone", time_zone, "an IANA zone name such as 'Europe/Berlin', or None") from None
    notes: list = [
        Difference("Job creation is 'about once' per time (0 or 2 Jobs possible): not modelled", topic="runs",
                   measured="Kubernetes docs (CronJob limitations)"),
    ]
    if cron == "robfig":
        # Not differences: what a CronJob really does, reproduced (tests/rules/test_robfig.py pins each).
        notes += [
            Difference("reproduced: after Lord Howe's 30-minute change robfig's Next() adds whole hours and stays "
                       "on :30 for a day, so a daily time can be lost (dst_lost:robfig)", topic="DST (what a CronJob "
                       "does)", example="0 0 * * * in Australia/Lord_Howe: no run 2026-10-05 00:00"),
            Difference("reproduced: a day whose midnight is a DST gap (Beirut, Cairo, Santiago) is skipped by "
                       "Next()'s day loop, which steps back an hour to the day before", topic="DST (what a CronJob "
                       "does)", example="0 12 * * 0 in Asia/Beirut: no run 2026-03-29 12:00"),
            Difference("reproduced: Next()'s minute loop can stop on a matching minute in an hour the rule does not "
                       "name when a change moves the clock by a fraction of an hour (dst_extra:robfig)",
                       topic="DST (what a CronJob does)",
                       example="30,45 1 * * * in Australia/Lord_Howe: a run at 2026-10-04 02:30"),
            Difference("reproduced: Next() can stop moving (Next(t) == t); the v2 controller then errors on every "
                       "sync ('time difference between two schedules is less than 1 second') and v1 counts > 100 "
                       "unmet times: no Job ever again (dst_stuck:robfig, reason 'stuck')",
                       topic="DST (what a CronJob does)",
                       example="50 3 * * * in Pacific/Chatham: stuck from 2026-04-05"),
            Difference("cron extensions robfig/cron v3 cannot read (L, W, #, weekday 7, a 6th field) are refused as "
                       "the API server refuses the CronJob", topic="grammar", example="0 3 L * *: refused"),
        ]
    if cron == "calendar":
        notes.append(Difference(
            "cron='calendar': every wall time the rule names, a gap time skipped and both passes of a fold; a "
            "CronJob fires as robfig's Next() walks (cron='robfig'), which loses or adds times next to some DST "
            "changes", topic="DST", example="0 0 * * * in Australia/Lord_Howe: robfig loses 2026-10-05 00:00"))
    if too_many_missed == "code":
        notes.append("too_many_missed='code': no max_missed; with > 100 missed times the v2 controller only records "
                     "a TooManyMissedTimes warning event and still starts the most recent one (the docs describe "
                     "no start at all: too_many_missed='docs')")
    else:
        notes.append("too_many_missed='docs': > 100 missed times (counted within startingDeadlineSeconds when set) "
                     "start no Job and LastScheduleTime stays put, so the CronJob is stuck until it is changed "
                     "(skipped/stuck, a calsim.Revise unsticks it), as the docs and the v1 controller say; the current "
                     "controller still starts one")
    notes.append("the v2 controller estimates the most recent missed time from two schedule times (utils.go "
                 "mostRecentScheduleTime, PR #118724); for a schedule with uneven gaps (two times a day, a DST gap) "
                 "the estimate can find none and that sync starts nothing: calsim starts the most recent time")
    if too_many_missed == "docs" and concurrency_policy == "Forbid":
        notes.append("too_many_missed='docs' with Forbid: times blocked by a long-running Job count as missed in "
                     "the v1 controller and can leave the CronJob stuck without any outage; calsim counts only a "
                     "wake-up's backlog of missed times")
    if deadline == 0:
        notes.append("starting_deadline_seconds=0: Kubernetes never starts a Job (it syncs about 100 ms after each "
                     "time); calsim starts the runs it picks exactly on time")
    elif deadline is not None and deadline < 10:
        notes.append(f"starting_deadline_seconds={deadline} < 10: the v1 controller synced every 10 s and could miss "
                     "every time; the v2 controller requeues itself for each time + 100 ms, as calsim's tick models")
    if time_zone is None:
        notes.append("time_zone=None: Kubernetes uses kube-controller-manager's local zone; calsim keeps each "
                     "schedule's own zone")
    if suspend:
        notes.append("suspend=True: no Job starts; model it with calsim.Pause/Resume events. calsim skips paused "
                     "times, whereas on unsuspend Kubernetes starts the most recent missed time within the deadline")
    return Preset(
        name="kubernetes",
        policy=Policy(catchup="latest", max_lateness=deadline, overlap=overlap[concurrency_policy],
                      max_missed=100 if too_many_missed == "docs" else None, limit_edge="late"),
        gap="scheduler" if cron == "robfig" else "skip", fold="scheduler" if cron == "robfig" else "both",
        tick="10s", notes=tuple(notes), dialect="robfig",
        measured="robfig/cron v3.0.1 (Debian golang-github-robfig-cron-dev 3.0.1-1, Go 1.19) for schedules; "
                 "a line-by-line port of the v2 controller (kubernetes v1.28+) and v1 (v1.16-1.20) for runs",
        sources=(K8S_DOC, K8S_CODE, K8S_CTRL, ROBFIG_PARSER, ROBFIG_SPEC,
                 "https://github.com/kubernetes/kubernetes/issues/121594"),
        settings=_settings(concurrency_policy=concurrency_policy, starting_deadline_seconds=starting_deadline_seconds,
                           time_zone=time_zone, suspend=suspend, too_many_missed=too_many_missed, cron=cron),
        zone=time_zone, suspended=suspend,
    )
