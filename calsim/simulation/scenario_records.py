"""What a scenario records about itself beside its ledger: its parameters as JSON and one row per schedule revision.

The ledger store (its ``scenarios`` and ``schedules`` tables) and a Dask
dataset (its ``_scenario.json``) keep the same records, made here once:

* :func:`parameters`: the scenario as JSON-able values, its schedules as their count;
* :func:`schedule_rows`: per schedule revision, ``Revise`` events included and
  numbered as the engine numbers them (:func:`.occurrences.revised`): zone,
  account, rule text and policy JSON;
* :func:`accounts`: each schedule's account, as a :class:`~calsim.Ledger`'s ``accounts``.

>>> import calsim
>>> old = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY")
>>> new = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
>>> sc = calsim.Scenario("s", [old], "2026-01-01T00:00Z", "2026-01-08T00:00Z",
...                      events=[calsim.Revise("2026-01-03T00:00Z", new)])
>>> [(r["schedule_id"], r["revision"], r["rule"]) for r in schedule_rows(sc)]
[('a', 1, 'FREQ=DAILY'), ('a', 2, 'FREQ=HOURLY')]
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable

from ..schedule import Schedule
from .occurrences import revised
from .policy import Policy
from .scenario import Scenario

__all__ = ["jsonable", "parameters", "accounts", "schedule_rows"]


def jsonable(value: object) -> object:
    """``value`` as JSON-able values: dataclasses as dicts of their init fields, instants as ISO text, else repr.

    >>> jsonable({"at": dt.date(2026, 1, 2), "n": (1, 2.5)})
    {'at': '2026-01-02', 'n': [1, 2.5]}
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    return repr(value)


def parameters(scenario: object) -> object:
    """The scenario as JSON-able parameters, its schedules as their count.

    Each schedule's rule and policy are in :func:`schedule_rows`, so the
    schedules are counted, never walked (a fleet's calendars alone are ~70k
    numpy values to print).

    >>> import calsim
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
    >>> p = parameters(calsim.Scenario("x", [s, s], "2026-01-01T00:00Z", "2026-01-02T00:00Z"))
    >>> p["schedules"], p["start"]
    (2, '2026-01-01T00:00Z')
    """
    if not dataclasses.is_dataclass(scenario) or isinstance(scenario, type):
        params = jsonable(scenario)
        if isinstance(params, dict) and isinstance(params.get("schedules"), list):
            params["schedules"] = len(params["schedules"])
        return params
    values = {f.name: getattr(scenario, f.name) for f in dataclasses.fields(scenario) if f.init}
    return {k: len(v) if k == "schedules" and isinstance(v, (list, tuple)) else jsonable(v) for k, v in values.items()}


def accounts(schedules: Iterable[Schedule], policies: Iterable[object] | None = None) -> dict[str, str]:
    """Schedule id -> the account its policy pays from: of its revisions, the highest one with an account.

    A :class:`~calsim.Ledger`'s ``accounts`` (the engine calls this) and the
    ``account`` of every revision's row in :func:`schedule_rows`. ``policies``: the schedules' policies, when
    they are not their own (a sweep's combination).
    """
    pairs = list(zip(schedules, policies)) if policies is not None else [(s, s.policy) for s in schedules]
    pairs.sort(key=lambda sp: (sp[0].id, sp[0].revision))  # stable: of a repeated key, the last one given
    return {s.id: p.account for s, p in pairs if isinstance(p, Policy) and p.account}


def _policy_json(policy: object, cache: dict[tuple[type, str], str]) -> str:
    """``policy`` as sorted JSON, once per distinct policy of a fleet (``cache`` is keyed by its repr).

    A repr tells apart what JSON does (``cost=0`` from ``cost=0.0``), where
    equality would not; a fleet usually shares a handful of policies.
    """
    key = (type(policy), repr(policy))
    text = cache.get(key)
    if text is None:
        text = cache[key] = json.dumps(jsonable(policy), sort_keys=True)
    return text


def schedule_rows(scenario: Scenario) -> list[dict]:
    """One row per schedule revision (``Revise`` events included), sorted by schedule id and revision.

    Keys: ``schedule_id``, ``revision``, ``zone``, ``account`` (the
    schedule's, as :func:`accounts` gives it, on every revision), ``rule``
    (the rule text, a rule object's repr), ``policy`` (JSON text with sorted
    keys, None without a policy). Of two schedules given with the same id and
    revision, the first one's row is kept.
    """
    scheds, _ = revised(scenario)
    acct = accounts(scheds)
    cache: dict[tuple[type, str], str] = {}
    seen, rows = set(), []
    for s in sorted(scheds, key=lambda s: (s.id, s.revision)):  # stable: the first of a repeated key wins
        if (s.id, s.revision) in seen:
            continue
        seen.add((s.id, s.revision))
        rows.append({"schedule_id": s.id, "revision": s.revision, "zone": s.zone, "account": acct.get(s.id),
                     "rule": s.rule if isinstance(s.rule, str) else repr(s.rule),
                     "policy": None if s.policy is None else _policy_json(s.policy, cache)})
    return rows
