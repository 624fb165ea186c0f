"""A scenario with capacity pools, shared by the engine's tests and the Dask engine's (tests/ is on sys.path)."""

from __future__ import annotations

import dataclasses

import calsim

POOLS = {"etl": 2, "reports": 1, "ml": 3}


def pooled(name: str = "pools") -> calsim.Scenario:
    """Hourly and daily jobs lasting 45 min, a third of them in each pool, every tenth in none; after an
    eight-hour outage everything missed runs at once (catch-up all), so every pool queues."""
    out = []
    for i, s in enumerate(calsim.examples.fleet(90, seed=8)):
        pool = ("etl", "reports", "ml")[i % 3] if i % 10 else None
        out.append(dataclasses.replace(s, policy=calsim.Policy(
            catchup="all", duration="45min", account=f"t{i % 6}" if pool else None, pool=pool)))
    return calsim.Scenario(name, out, "2026-03-01T00:00Z", "2026-03-08T00:00Z", release="2026f", tick="1min",
                           capacity=POOLS, outages=[calsim.Outage("2026-03-03T01:01Z", "2026-03-03T09:01Z")],
                           budgets=[calsim.Budget(f"t{k}", 30.0, "day", "UTC") for k in range(6)])
