"""A recorded scheduler outage replayed through calsim: what starts from the restart on.

The fixtures of ``tools/capture_<system>.py`` record, for a scheduler that was
down from ``down`` to ``up``, what it ran from ``up`` on; the preset tests
simulate the same schedule under the same outage and compare with this.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

import calsim


def utc(text: str) -> dt.datetime:
    """A fixture's ``...Z`` instant as an aware datetime."""
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def started_from_restart(schedule: calsim.Schedule, start: str, down: str, up: str, until: dt.datetime,
                         release: str) -> pl.DataFrame:
    """The rows calsim starts at or after ``up``, from ``start`` to ``until`` (exclusive), with the
    scheduler down over ``[down, up)``: ``due_utc`` and ``started_utc``, in the order they start."""
    scen = calsim.Scenario("outage", [schedule], start, until, release=release,
                           outages=[calsim.Outage(down, up)])
    frame = calsim.simulate(scen, progress=False).frame
    return (frame.filter(pl.col("started_utc") >= utc(up)).sort(["started_utc", "due_utc"])
            .select("due_utc", "started_utc"))
