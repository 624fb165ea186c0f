"""What ``_scenario.json`` records about a run: the scenario, its schedule revisions and the files written.

The client writes it last (:mod:`.client`), so its presence means the
dataset is complete; :meth:`~calsim.distributed.LedgerDataset.open` reads it
back, and :meth:`calsim.LedgerStore.attach` fills its ``scenarios`` and
``schedules`` tables from it. ``parameters`` and ``schedules`` are the
records a store keeps for a written ledger, made by the same functions
(:mod:`calsim.simulation.scenario_records`).

>>> import calsim
>>> old = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY")
>>> new = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
>>> sc = calsim.Scenario("s", [old], "2026-01-01T00:00Z", "2026-01-08T00:00Z",
...                      events=[calsim.Revise("2026-01-03T00:00Z", new)])
>>> meta = metadata(sc, [], "0", 0.0)
>>> [(r["schedule_id"], r["revision"], r["rule"]) for r in meta["schedules"]], meta["parameters"]["schedules"]
([('a', 1, 'FREQ=DAILY'), ('a', 2, 'FREQ=HOURLY')], 1)
"""

from __future__ import annotations

import datetime as dt

from ..simulation.ledger import LEDGER_SCHEMA, LEDGER_STATES
from ..simulation.scenario_records import parameters, schedule_rows
from ..simulation.scenario import Scenario

__all__ = ["FORMAT", "metadata"]

FORMAT = "calsim.ledger-dataset/1"


def _iso(us: int) -> str:
    # datetime's isoformat ("+00:00"), which datasets have always recorded; not times.iso_z's "Z" form.
    return (dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=us)).isoformat()


def metadata(scenario: Scenario, results: list[dict], version: str, seconds: float, *,
             schedule_files: list[str] | None = None) -> dict:
    """The ``_scenario.json`` of ``scenario`` simulated as the worker ``results`` say
    (:func:`.worker.run_partition`). ``schedule_files``: for a fleet the workers read, where they wrote its
    schedule records (``_schedules/``): then the scenario holds none, and the count is the results'."""
    states = {s: sum(r["states"].get(s, 0) for r in results) for s in LEDGER_STATES}
    out = {
        "format": FORMAT,
        "name": scenario.name,
        "horizon_start": _iso(scenario.start_us),
        "horizon_end": _iso(scenario.end_us),
        "release": ",".join(sorted({v for r in results for v in r["releases"]})) or None,
        "seed": scenario.seed,
        "tick": scenario.tick if isinstance(scenario.tick, str) else str(scenario.tick),
        "partitions": len(results),
        "rows": sum(r["rows"] for r in results),
        "files": [{"path": f["path"], "rows": f["rows"], "schedules": f["schedules"], "bytes": f["bytes"]}
                  for r in sorted(results, key=lambda r: r["partition"])
                  for f in r.get("files", [r])],
        "states": states,
        "calsim_version": version,
        "engine": "dask",
        "created": dt.datetime.now(dt.timezone.utc).isoformat(),
        "seconds": seconds,
        "ledger_schema": {k: str(v) for k, v in LEDGER_SCHEMA.items()},
        "parameters": parameters(scenario),
        "schedules": schedule_rows(scenario),
    }
    if schedule_files is not None:
        out["schedule_files"] = schedule_files
        out["parameters"]["schedules"] = sum(r["schedules"] for r in results)
    return out
