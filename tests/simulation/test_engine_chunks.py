"""The streamed (chunked) per-schedule steps of the engine give the same ledger at any chunk size."""

from __future__ import annotations

import pytest

import calsim
from calsim.simulation import state


def fleet_scenario(durations, failures=None):
    fleet = calsim.examples.fleet(60, seed=4)
    modes = ["allow", "skip", "buffer_one", "buffer_all", "cancel_other"]
    fleet = [calsim.with_policy([s], overlap=modes[i % 5], duration=durations[i % len(durations)],
                                catchup=["all", "latest"][i % 2], jitter="2min" if i % 3 == 0 else None,
                                cost=1.0, account="solo" if i == 0 else s.id.split("/")[0])[0]
             for i, s in enumerate(fleet)]
    tenants = sorted({s.policy.account for s in fleet})
    return calsim.Scenario("chunks", fleet, "2026-03-01T00:00Z", "2026-03-15T00:00Z", tick="1min", failures=failures,
                           outages=[calsim.Outage("2026-03-05T01:01Z", "2026-03-06T07:00Z")],
                           # only one schedule's budget binds (its rows go through the event loop): the
                           # others are settled by columns, so their overlap detection is what is tested
                           budgets=[calsim.Budget(t, 3 if t == "solo" else 10_000, ["day", "week"][k % 2],
                                                  "Europe/Berlin")
                                    for k, t in enumerate(tenants)])


@pytest.mark.parametrize("scenario", [
    fleet_scenario(["1min", "20min", "2h"]),  # fixed durations: the previous start decides
    # running max
    fleet_scenario([calsim.LogNormal("5min", "3h"), "20min"], calsim.Failures(0.2, max_attempts=3, backoff="1min")),
], ids=["fixed", "lognormal-retries"])
def test_tiny_chunks_give_the_same_ledger_as_one_chunk(scenario, monkeypatch):
    whole = calsim.simulate(scenario).frame
    monkeypatch.setattr(state, "CHUNK_ROWS", 7)
    monkeypatch.setattr(state, "CHUNK_ROWS_PER_SCHEDULE", 0)
    chunked = calsim.simulate(scenario).frame
    assert chunked.equals(whole)
    # the scenario exercises what the chunks must carry across their boundaries
    assert set(whole["reason"].drop_nulls().to_list()) >= {"overlap", "superseded", "budget"}
