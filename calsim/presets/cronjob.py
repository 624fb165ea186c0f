"""The ``kubernetes`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

from typing import Literal, get_args

from ..simulation.policy import Policy
from ..errors import CalsimError, check_choice
from ._base import _bad, _bool, _int, _settings, Preset

__all__ = ["kubernetes"]

ConcurrencyPolicy = Literal["Allow", "Forbid", "Replace"]
TooManyMissed = Literal["code", "docs"]

K8S_DOC = "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/"
K8S_CODE = "https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/cronjob/utils.go"
K8S_CTRL = "https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/cronjob/cronjob_controllerv2.go"
ROBFIG = "https://github.com/robfig/cron/blob/master/spec_test.go"


def kubernetes(*, concurrency_policy: ConcurrencyPolicy = "Allow", starting_deadline_seconds: int | None = None,
               time_zone: str | None = None, suspend: bool = False, too_many_missed: TooManyMissed = "code") -> Preset:
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
    DST                             ``gap="skip"``, ``fold="both"``              ROBFIG, #121594
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

    Sources: https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ (K8S_DOC),
    https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/cronjob/utils.go (K8S_CODE),
    https://github.com/robfig/cron/blob/master/spec_test.go (ROBFIG),
    https://github.com/kubernetes/kubernetes/issues/121594.

    >>> from calsim import presets
    >>> p = presets.kubernetes(concurrency_policy="Forbid", starting_deadline_seconds=200)
    >>> p.gap, p.fold, p.tick, p.policy.catchup, p.policy.overlap, p.policy.max_lateness_us // 10**6
    ('skip', 'both', '10s', 'latest', 'buffer_latest', 200)
    >>> presets.kubernetes(too_many_missed="docs").policy.max_missed
    100
    """
    overlap = {"Allow": "allow", "Forbid": "buffer_latest", "Replace": "cancel_other"}
    check_choice("concurrency_policy", concurrency_policy, get_args(ConcurrencyPolicy))
    deadline = _int("starting_deadline_seconds", starting_deadline_seconds, 0, none=True)
    _bool("suspend", suspend)
    check_choice("too_many_missed", too_many_missed, get_args(TooManyMissed))
    if time_zone is not None:
        from ..tz.release import release

        try:
            release().table(time_zone)  # type: ignore[arg-type]
        except (CalsimError, TypeError):
            raise _bad("time_zone", time_zone, "an IANA zone name such as 'Europe/Berlin', or None") from None
    notes = [
        "DST: robfig/cron v3 skips a wall time that does not exist and fires in both passes of a repeated one",
        "cron: robfig ORs day-of-month and day-of-week unless a field has the star bit, which '*/n' clears; "
        "calsim expands with the Vixie rule (a field starting with '*' is unrestricted), so '0 0 1 * */2' differs",
        "Job creation is 'about once' per time (0 or 2 Jobs possible): not modelled",
    ]
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
                 "mostRecentScheduleTime, PR #118724); for a schedule with uneven gaps (two times a day, a DST gap) the "
                 "estimate can find none and that sync starts nothing: calsim starts the most recent time")
    if too_many_missed == "docs" and concurrency_policy == "Forbid":
        notes.append("too_many_missed='docs' with Forbid: times blocked by a long-running Job count as missed in the v1 "
                     "controller and can leave the CronJob stuck without any outage; calsim counts only a wake-up's "
                     "backlog of missed times")
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
        policy=Policy(catchup="latest", max_lateness=deadline, overlap=overlap[concurrency_policy],  # type: ignore[arg-type]
                      max_missed=100 if too_many_missed == "docs" else None, limit_edge="late"),
        gap="skip", fold="both", tick="10s", notes=tuple(notes),
        sources=(K8S_DOC, K8S_CODE, K8S_CTRL, ROBFIG, "https://github.com/kubernetes/kubernetes/issues/121594"),
        settings=_settings(concurrency_policy=concurrency_policy, starting_deadline_seconds=starting_deadline_seconds,
                           time_zone=time_zone, suspend=suspend, too_many_missed=too_many_missed),
        zone=time_zone, suspended=suspend,
    )
