"""What ``_scenario.json`` records about a run: the scenario, its schedule revisions and the files written.

The client writes it last (:mod:`.client`), so its presence means the
dataset is complete; :meth:`~calsim.distributed.LedgerDataset.open` reads it
back, and :meth:`calsim.LedgerStore.attach` fills its ``scenarios`` and
``schedules`` tables from it (``parameters`` and ``schedules`` hold what the
store keeps for a written ledger).

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

from ..simulation.ledger import LEDGER_SCHEMA, LEDGER_STATES
from ..simulation.occurrences import _revised
from ..simulation.scenario import Scenario
from .partitioning import account_of

__all__ = ["FORMAT", "metadata", "schedule_rows"]

FORMAT = "calsim.ledger-dataset/1"


def schedule_rows(scenario: Scenario) -> list[dict]:
    """Per schedule revision: what a ledger store keeps in its ``schedules`` table.

    ``rule`` is the rule text (a rule object's repr), ``policy`` the policy as
    JSON text (``json.dumps(..., sort_keys=True)``, None without one),
    ``account`` the schedule's account (its latest revision's, as a ledger's
    ``accounts``). Revisions made by ``Revise`` events are numbered by the
    engine's own rule (:mod:`calsim.simulation.occurrences`).
    """
    from ..store_records import _jsonable

    scheds, _ = _revised(scenario)
    revs = sorted(scheds, key=lambda s: (s.id, s.revision))  # stable: the fleet's first of a repeated key wins
    accounts = {s.id: account_of(s) for s in revs if account_of(s)}
    seen, rows = set(), []
    for s in revs:
        if (s.id, s.revision) in seen:
            continue
        seen.add((s.id, s.revision))
        rows.append({"schedule_id": s.id, "revision": s.revision, "zone": s.zone, "account": accounts.get(s.id),
                     "rule": s.rule if isinstance(s.rule, str) else repr(s.rule),
                     "policy": None if s.policy is None else json.dumps(_jsonable(s.policy), sort_keys=True)})
    return rows


def _iso(us: int) -> str:
    # datetime's isoformat ("+00:00"), which datasets have always recorded; not times.iso_z's "Z" form.
    return (dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=us)).isoformat()


def metadata(scenario: Scenario, results: list[dict], version: str, seconds: float) -> dict:
    """The ``_scenario.json`` of ``scenario`` simulated as the worker ``results`` say (:func:`.worker.run_partition`)."""
    from ..store_records import _jsonable

    # The ledger store's `parameters` (its _jsonable of the scenario, schedules as a count),
    # built without materialising every schedule's JSON form first.
    params = {f.name: (len(scenario.schedules) if f.name == "schedules" else _jsonable(getattr(scenario, f.name)))
              for f in dataclasses.fields(scenario) if f.init}
    states = {s: sum(r["states"].get(s, 0) for r in results) for s in LEDGER_STATES}
    return {
        "format": FORMAT,
        "name": scenario.name,
        "horizon_start": _iso(scenario.start_us),
        "horizon_end": _iso(scenario.end_us),
        "release": ",".join(sorted({v for r in results for v in r["releases"]})) or None,
        "seed": scenario.seed,
        "tick": scenario.tick if isinstance(scenario.tick, str) else str(scenario.tick),
        "partitions": len(results),
        "rows": sum(r["rows"] for r in results),
        "files": [{"path": r["path"], "rows": r["rows"], "schedules": r["schedules"], "bytes": r["bytes"]}
                  for r in sorted(results, key=lambda r: r["partition"])],
        "states": states,
        "calsim_version": version,
        "engine": "dask",
        "created": dt.datetime.now(dt.timezone.utc).isoformat(),
        "seconds": seconds,
        "ledger_schema": {k: str(v) for k, v in LEDGER_SCHEMA.items()},
        "parameters": params,
        "schedules": schedule_rows(scenario),
    }
