"""Import Kubernetes CronJobs (``apiVersion: batch/v1``, ``kind: CronJob``) from YAML manifests.

A manifest may hold several documents (``---``) and ``kind: List`` documents
(``kubectl get cronjobs -o yaml``). Every CronJob becomes a cron
:class:`~calsim.Schedule` with the :func:`calsim.presets.kubernetes` preset
built from its own settings:

=============================  =================================================
CronJob field                  calsim
=============================  =================================================
``metadata.namespace/name``    the schedule id (namespace ``default`` if unset)
``spec.schedule``              the cron rule (robfig/cron v3 syntax, see below)
``spec.timeZone``              the zone; unset: ``zone=`` (the controller's
                               local zone, default ``"UTC"``)
``spec.startingDeadlineSeconds``  ``max_lateness``
``spec.concurrencyPolicy``     ``Allow``/``Forbid``/``Replace`` -> overlap
                               ``allow``/``buffer_latest``/``cancel_other``
``spec.suspend``               ``Imported.presets[id].suspended`` and a note:
                               model it with ``calsim.Pause``/``Resume``
=============================  =================================================

Other kinds (Deployment, ConfigMap...) are listed in ``Imported.skipped``
and not imported; a file with no CronJob at all is an error.

**Schedule syntax, as the API server validates it** (``cron.ParseStandard``
of robfig/cron v3, :mod:`calsim.rules.robfig`): five fields or a macro
(``@yearly``, ``@annually``, ``@monthly``, ``@weekly``, ``@daily``,
``@midnight``, ``@hourly``); ``?`` means ``*``; ``L``, ``W`` and ``#`` are
rejected, and so is day-of-week ``7`` (robfig's range is 0..6). The rule is a
``robfig:`` rule, fired as robfig's ``Next()`` walks the calendar (the
preset's ``cron="robfig"``). ``@every <duration>`` (Go syntax, ``1h30m``) is
accepted as robfig does and becomes ``calsim.Every`` anchored at ``start``
(Kubernetes counts from the CronJob's creation or last run, which a manifest
does not say).

**``TZ=``/``CRON_TZ=`` inside ``schedule``.** The API server rejects a
schedule containing ``TZ`` on create since Kubernetes 1.29 ("cannot use TZ or
CRON_TZ in schedule, use timeZone field instead"), and always together with
``spec.timeZone`` ("cannot use both timeZone field and TZ or CRON_TZ in
schedule"). Objects created before still run: the controller passes the
prefix to robfig, which reads the times in that zone, and records an
``UnsupportedSchedule`` warning. ``tz_in_schedule="reject"`` mirrors the
create-time validation; ``"legacy"`` imports such schedules as the
controller runs them, with a note (still an error together with
``timeZone``). ``"auto"`` (default) reads an object as ``"legacy"`` when it
is an export of an existing object (``kubectl get cronjobs -o yaml``: its
``metadata`` carries a server-set ``creationTimestamp``, ``uid`` or
``resourceVersion``): it exists, so the controller runs it, and that is
what an SRE loading an export wants simulated. A manifest written to be
applied has none of them and gets the create-time error (a refusal unless
``strict=True``). The CLI's ``--legacy-tz`` forces ``"legacy"``.

**One bad object** (unknown zone, bad schedule, a CronJob defined twice) is
refused, listed in ``Imported.refused``; the other objects are imported.
``strict=True`` raises the first error instead.

>>> from calsim.importers import from_kubernetes
>>> m = from_kubernetes('''
... apiVersion: batch/v1
... kind: CronJob
... metadata: {name: report, namespace: billing}
... spec:
...   schedule: "30 2 * * *"
...   timeZone: Europe/Berlin
...   concurrencyPolicy: Forbid
...   jobTemplate: {}
... ''')
>>> s = m[0]
>>> s.id, s.zone, s.gap, s.fold, s.policy.overlap, m.sources[s.id].line
('billing/report', 'Europe/Berlin', 'scheduler', 'scheduler', 'buffer_latest', 6)
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ..durations import MAX_DAYS, MAX_US
from ..errors import CalsimError, InputError, RuleError, ScheduleError, check_choice
from ..times import US
from ..presets import Preset, kubernetes
from ..rules.every import Every
from ..rules.robfig import RobfigCron
from ..schedule import Schedule
from ._yaml import child, documents
from ._result import Imported, Items, Skipped, Source, attach, read_input, reraise
from .crontab import DEFAULT_START, _check_zone

__all__ = ["from_kubernetes"]

_GO_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
_KNOWN_VERSIONS = ("batch/v1",)


def from_kubernetes(path_or_text: object, *, zone: str = "UTC", source: str | None = None,
                    start: object = DEFAULT_START, tz_in_schedule: str = "auto",
                    strict: bool = False) -> Imported:
    """Read the CronJobs of a (multi-document) YAML manifest (see the module docstring).

    Parameters
    ----------
    path_or_text
        A path (``str`` without a line break, or ``pathlib.Path``), or the
        manifest's text (a ``str`` with a line break, or ``bytes``).
    zone
        kube-controller-manager's zone, used when ``spec.timeZone`` is unset.
    source
        Name used in messages instead of the file's.
    start
        Anchor of every rule (local wall time in the schedule's zone).
    tz_in_schedule : {"auto", "reject", "legacy"}
        A ``TZ=``/``CRON_TZ=`` prefix in ``spec.schedule``: an error as on
        create since 1.29, or read as the controller runs old objects;
        ``"auto"``: legacy for exported objects, reject otherwise (see the
        module docstring).
    strict
        False (default): a bad object is refused (``Imported.refused``) and
        the others imported; True: the first bad object raises.

    Returns
    -------
    Imported
        The schedules (a sequence; id ``namespace/name``), their sources
        (file, document, item, line of ``spec.schedule``), the skipped
        objects of other kinds, the refused objects, and the
        :class:`~calsim.presets.Preset` per id.

    Raises
    ------
    InputError
        Unreadable file, invalid YAML, no CronJob at all; with
        ``strict=True`` (or when every CronJob is refused) also the errors
        of one object below: a document that is not an object, a CronJob of
        another apiVersion.
    ScheduleError
        A missing or mistyped field (``metadata.name``, ``spec.schedule``...),
        a CronJob defined twice, ``timeZone`` together with a ``TZ=`` prefix.
    RuleError
        A schedule robfig/cron would not parse.
    UnknownZoneError
        ``spec.timeZone`` (or the prefix) names no zone.
    PolicyError
        A bad ``concurrencyPolicy`` or ``startingDeadlineSeconds``.
    """
    check_choice("tz_in_schedule", tz_in_schedule, ("auto", "reject", "legacy"), error=InputError)
    items = Items(strict)
    text, file, path = read_input(path_or_text, "kubernetes", source)
    label = source or (path.name if path is not None else file)
    default_zone = _check_zone(zone, f"kubernetes: {label}: zone")

    schedules: list[Schedule] = []
    skipped: list[Skipped] = []
    presets: dict[str, Preset] = {}
    seen: dict[str, str] = {}
    kinds: list[str] = []

    for doc_no, node, data in _documents(text, label):
        if data is None:
            continue
        doc_where = f"kubernetes: {label} document {doc_no} (line {node.start_mark.line + 1})"
        if not isinstance(data, dict):
            items.refuse(Source("kubernetes", file, line=node.start_mark.line + 1, document=doc_no),
                         f"document {doc_no}", InputError(
                             f"{doc_where}: expected a Kubernetes object (a mapping with apiVersion and kind), "
                             f"got a {_yaml_type(data)}"))
            continue
        objects: list[tuple[int | None, Any, Any]] = [(None, data, node)]
        if data.get("kind") == "List" and isinstance(data.get("items"), list):
            items_node = child(node, "items")
            objects = [(i, item, items_node.value[i - 1] if items_node is not None else node)
                       for i, item in enumerate(data["items"], 1)]
        for item_no, obj, obj_node in objects:
            where = doc_where if item_no is None else f"kubernetes: {label} document {doc_no} item {item_no} " \
                                                      f"(line {obj_node.start_mark.line + 1})"
            base = Source("kubernetes", file, line=obj_node.start_mark.line + 1, document=doc_no, item=item_no)
            if not isinstance(obj, dict):
                items.refuse(base, f"item {item_no}", InputError(
                    f"{where}: expected a Kubernetes object (a mapping), got a {_yaml_type(obj)}"))
                continue
            kind = obj.get("kind")
            name = _meta_name(obj)
            if kind != "CronJob":
                what = f"{kind or '(no kind)'} {name}" if name else str(kind or "(no kind)")
                kinds.append(str(kind or "(no kind)"))
                reason = "not a CronJob" if kind else "no 'kind' field: not a Kubernetes object"
                skipped.append(Skipped(base, what, reason))
                continue
            what = f"CronJob {name}" if name else "CronJob"
            out = items.run(base, what, _cronjob, obj, obj_node, base, where, default_zone, start, tz_in_schedule)
            if out is None:
                continue
            sched, src, preset = out
            if sched.id in seen:
                items.refuse(base, what, ScheduleError(f"{where}: metadata: CronJob {sched.id!r} is defined twice "
                                                       f"(first at {seen[sched.id]})"))
                continue
            seen[sched.id] = src.where
            schedules.append(attach(sched, src))
            presets[sched.id] = preset
    if not schedules and not items.refused:
        found = ", ".join(sorted(set(kinds))) if kinds else "no objects"
        raise InputError(f"kubernetes: {label}: no CronJob (apiVersion batch/v1, kind CronJob) in the manifest "
                         f"(found: {found})")
    return items.done(schedules, skipped, presets)


def _documents(text: str, label: str):
    """``(number, node, data)`` of each YAML document, with the node for line numbers."""
    return documents(text, f"kubernetes: {label}")


def _yaml_type(value: object) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__)


def _line(node: Any, *keys: str) -> int | None:
    for key in keys:
        node = child(node, key)
        if node is None:
            return None
    return node.start_mark.line + 1


def _meta_name(obj: dict) -> str | None:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("name"), str):
        ns = meta.get("namespace")
        return f"{ns}/{meta['name']}" if isinstance(ns, str) and ns else meta["name"]
    return None


def _cronjob(obj: dict, node: Any, base: Source, where: str, default_zone: str, start: object,
             tz_in_schedule: str) -> tuple[Schedule, Source, Preset]:
    api = obj.get("apiVersion")
    if api not in _KNOWN_VERSIONS:
        hint = " (batch/v1beta1 is not served since Kubernetes 1.25)" if api == "batch/v1beta1" else ""
        raise InputError(f"{where}: apiVersion: CronJob with apiVersion {api!r} is not supported; "
                         f"expected 'batch/v1'{hint}")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise ScheduleError(f"{where}: metadata: missing (a CronJob needs metadata.name)")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ScheduleError(f"{where}: metadata.name: missing or not a string ({name!r})")
    ns = meta.get("namespace", "default")
    if not isinstance(ns, str) or not ns:
        raise ScheduleError(f"{where}: metadata.namespace: expected a string, got {ns!r}")
    sid = f"{ns}/{name}"
    where = f"{where} CronJob {sid!r}"
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        raise ScheduleError(f"{where}: spec: missing (a CronJob needs spec.schedule)")
    line = _line(node, "spec", "schedule") or base.line
    expr = spec.get("schedule")
    if not isinstance(expr, str) or not expr.strip():
        raise ScheduleError(f"{where}: spec.schedule: missing or not a string ({expr!r})")
    where_s = f"{where}: spec.schedule {expr!r}"

    tz = spec.get("timeZone")
    if tz is not None:
        if not isinstance(tz, str) or not tz:
            raise ScheduleError(f"{where}: spec.timeZone: timeZone must be nil or a non-empty string, got {tz!r}")
        if tz.lower() == "local":
            raise ScheduleError(f"{where}: spec.timeZone: {tz!r}: timeZone must be an explicit IANA time zone")
        _check_zone(tz, f"{where}: spec.timeZone")
    notes: list[str] = []
    body = expr.strip()
    prefix_zone = None
    if "TZ" in expr:
        if tz is not None:
            raise ScheduleError(f"{where_s}: cannot use both timeZone field and TZ or CRON_TZ in schedule "
                                "(rejected by the API server)")
        if tz_in_schedule == "auto":
            tz_in_schedule = "legacy" if _exported(meta) else "reject"
        if tz_in_schedule == "reject":
            raise ScheduleError(f"{where_s}: cannot use TZ or CRON_TZ in schedule, use timeZone field instead "
                                "(rejected on create since Kubernetes 1.29; tz_in_schedule='legacy' or the CLI's "
                                "--legacy-tz reads it as the controller runs older objects)")
        m = re.match(r"^(?:CRON_)?TZ=(\S*)\s+(.*)$", body)
        if m is None:
            raise RuleError(f"{where_s}: 'TZ' is only understood as a leading TZ=<zone> or CRON_TZ=<zone> prefix")
        prefix_zone = _check_zone(m[1], f"{where_s}: TZ prefix")
        body = m[2].strip()
        notes.append(f"TZ/CRON_TZ in schedule: read in {prefix_zone} as the controller runs it (it records an "
                     "UnsupportedSchedule warning); the API server rejects it on create since 1.29: move the zone "
                     "to spec.timeZone")
    sched_zone = tz or prefix_zone or default_zone
    if tz is None and prefix_zone is None:
        notes.append(f"spec.timeZone unset: Kubernetes uses kube-controller-manager's zone; read in {sched_zone}")
    rule = _rule(body, where_s)

    settings = {
        "concurrency_policy": spec.get("concurrencyPolicy", "Allow"),
        "starting_deadline_seconds": spec.get("startingDeadlineSeconds"),
        "suspend": spec.get("suspend", False),
    }
    field_names = {"concurrency_policy": "concurrencyPolicy", "starting_deadline_seconds": "startingDeadlineSeconds",
                   "suspend": "suspend"}
    for key, value in settings.items():
        if value is None and key != "starting_deadline_seconds":
            settings[key] = {"concurrency_policy": "Allow", "suspend": False}[key]
    try:
        preset = kubernetes(**settings)
    except CalsimError as exc:
        msg = str(exc)
        for py, k8s in field_names.items():
            if msg.startswith(py + ":"):
                msg = f"spec.{k8s}:" + msg[len(py) + 1:]
        raise type(exc)(f"{where}: {msg}") from None
    if preset.suspended:
        notes.append("spec.suspend: true: no Job starts; model it with calsim.Pause/Resume "
                     "(Imported.presets[id].suspended)")
    try:
        sched = preset.apply(Schedule(sid, sched_zone, start, rule))
    except CalsimError as exc:
        raise reraise(exc, where_s) from None
    assert isinstance(sched, Schedule)
    src = Source("kubernetes", base.file, line=line, document=base.document, item=base.item, text=expr,
                 notes=tuple(notes))
    return sched, src, preset


def _exported(meta: dict) -> bool:
    """True for an object read back from a cluster: the API server sets these fields, a manifest has none."""
    return any(meta.get(k) for k in ("creationTimestamp", "uid", "resourceVersion"))


def _rule(body: str, where: str) -> str | Every:
    """The rule of a robfig/cron v3 standard spec, read by the one robfig parser (:mod:`calsim.rules.robfig`).

    ``@every <duration>`` is an elapsed interval (:class:`calsim.Every`); anything
    else is a ``robfig:`` rule, refused as ``cron.ParseStandard`` refuses it.
    """
    if body.startswith("@every"):
        return Every(dt.timedelta(seconds=_go_duration(body[len("@every"):].strip(), where)))
    try:
        return RobfigCron.parse(body).rule_text()
    except CalsimError as exc:
        msg = str(exc)
        msg = msg[len("robfig: "):] if msg.startswith("robfig: ") else msg
        msg = msg.rsplit(" in '", 1)[0]  # the spec is quoted by ``where`` already
        raise RuleError(f"{where}: {msg} (the API server refuses it: robfig/cron v3 syntax)") from None


def _go_duration(text: str, where: str) -> float:
    pos, total = 0, 0.0
    if not text:
        raise RuleError(f"{where}: @every needs a duration such as '1h30m'")
    for m in _GO_DURATION.finditer(text):
        if m.start() != pos:
            break
        total += float(m[1]) * _GO_UNITS[m[2]]
        pos = m.end()
    if pos != len(text) or total <= 0:
        raise RuleError(f"{where}: @every: {text!r} is not a Go duration such as '90s', '1h30m'")
    if total > MAX_US / US:  # checked here, before a timedelta of it overflows
        raise RuleError(f"{where}: @every: {text[:40]!r} is longer than {MAX_DAYS:,} days, the longest duration "
                        "calsim takes (Go's time.Duration ends at about 292 years)")
    return max(total, 1.0)  # robfig rounds a delay below one second up to one second
