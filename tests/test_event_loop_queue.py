"""The capacity queue (:class:`calsim.simulation.event_loop.CapacityQueue`) picks exactly the run a linear scan picks.

The reference is the scan the event loop used before the queue: the highest
aged priority ``priority + (t - queued_at) // AGEING_US``, then the earliest
``eligible``, then the first queued.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calsim
from calsim.simulation import event_loop
from calsim.simulation.event_loop import AGEING_US, CapacityQueue

H = AGEING_US
MIN = 60 * 10**6


class LinearQueue:
    """The event loop's former queue: a list scanned at every pop."""

    def __init__(self) -> None:
        self.q: list[tuple] = []
        self.entries = self.q

    def __len__(self) -> int:
        return len(self.q)

    def items(self) -> list:
        return [e[3] for e in self.q]

    def push(self, priority, eligible, queued_at, item) -> None:
        self.q.append((priority, eligible, queued_at, item))

    def pop(self, t):
        q = self.q
        best = max(range(len(q)), key=lambda i: (q[i][0] + (t - q[i][2]) // AGEING_US, -q[i][1], -i))
        return q.pop(best)[3]


# Instants that meet the ageing buckets' edges, and any instant over a few hours.
instants = st.one_of(st.sampled_from([0, 1, 30 * MIN, H - 1, H, H + 1, 90 * MIN, 2 * H, 3 * H - 1, 5 * H]),
                     st.integers(-H, 6 * H))
pushes = st.tuples(st.just("push"), st.integers(-2, 2), st.sampled_from([0, 5, 7, 30 * MIN, 2 * H]), instants)
pops = st.tuples(st.just("pop"), instants)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.one_of(pushes, pushes, pops), max_size=60), st.booleans())
def test_queue_pops_what_the_linear_scan_picks(ops, forward):
    """Random pushes and pops (time mostly forward, or anywhere: the loop can go back) pick the same runs."""
    fast, slow = CapacityQueue(), LinearQueue()
    now = -H
    for n, op in enumerate(ops):
        if op[0] == "push":
            _, p, e, q = op
            fast.push(p, e, q, n)
            slow.push(p, e, q, n)
        elif len(slow):
            t = op[1]
            if forward:
                now = t = max(now, t)
            assert fast.pop(t) == slow.pop(t)
        assert len(fast) == len(slow)
    assert sorted(fast.items()) == sorted(slow.items())
    while len(slow):  # drain at one late instant
        assert fast.pop(7 * H) == slow.pop(7 * H)


def test_same_level_and_ageing_bucket_earlier_eligible_wins_over_older():
    q = CapacityQueue()
    q.push(0, 10, 0, "older")
    q.push(0, 5, 30 * MIN, "eligible first")
    assert q.pop(45 * MIN) == "eligible first"


def test_an_older_run_overtakes_once_it_has_waited_a_bucket_more():
    q = CapacityQueue()
    q.push(0, 10, 0, "older")
    q.push(0, 5, 30 * MIN, "eligible first")
    assert q.pop(40 * MIN) is not None  # the clock at 40 min: both at level 0
    q.push(0, 5, 30 * MIN, "eligible first again")
    assert q.pop(65 * MIN) == "older"  # 65 min: the older one is at level 1


def test_low_priority_ages_past_high_priority():
    q = CapacityQueue()
    q.push(0, 0, 0, "low")
    q.push(2, 0, 90 * MIN, "high")
    assert q.pop(90 * MIN) == "high"  # levels 1 against 2
    q.push(2, 0, 3 * H, "high")
    assert q.pop(3 * H) == "low"  # levels 3 against 2


def test_equal_levels_and_eligibility_go_first_queued_first():
    q = CapacityQueue()
    q.push(0, 0, 0, "first")
    q.push(2, 0, 2 * H, "second")
    assert q.pop(2 * H) == "first"  # levels 2 and 2, both eligible at 0


def test_a_pop_before_the_queue_clock_rekeys_every_run():
    q = CapacityQueue()
    q.push(0, 0, 0, "old")
    q.push(1, 1, 0, "high")
    q.push(0, 2, 0, "filler")
    assert q.pop(5 * H) == "high"  # level 6 against 5
    q.push(1, 1, 0, "high")
    assert q.pop(0) == "high"  # back at 0: level 1 against 0
    assert q.pop(2 * H) == "old"


def test_a_run_queued_in_the_future_has_a_lower_level_until_then():
    q = CapacityQueue()
    q.push(0, 5, H + 10, "queued later")  # (queued at the outage's end, say)
    q.push(0, 9, 0, "queued now")
    assert q.pop(H) == "queued now"  # levels 1 against -1


def fleet_with_capacity(capacity: int) -> calsim.Scenario:
    fleet = calsim.examples.fleet(60, seed=2)
    fleet = [calsim.with_policy([s], catchup="all", overlap=("skip", "buffer_one", "allow", "cancel_other")[i % 4],
                                duration=calsim.LogNormal("20min", "2h"), priority=i % 3, cost=1.0,
                                account=s.id.split("/")[0])[0]
             for i, s in enumerate(fleet)]
    return calsim.Scenario("capacity", fleet, "2026-10-18T00:00Z", "2026-10-26T00:00Z", release="2026f",
                           outages=[calsim.Outage("2026-10-20T01:01Z", "2026-10-21T01:01Z")],
                           budgets=[calsim.Budget(a, 30, "day", "Europe/Berlin")
                                    for a in sorted({s.policy.account for s in fleet})],
                           capacity=capacity, failures=calsim.Failures(0.2, max_attempts=3, backoff="5min"))


@pytest.mark.parametrize("capacity", [1, 3, 12])
def test_capacity_ledgers_equal_those_of_the_linear_scan(monkeypatch, capacity):
    """Runs that wait for hours (ageing), buffer, cancel and wait for budget: the same ledger either way."""
    sc = fleet_with_capacity(capacity)
    frame = calsim.simulate(sc, progress=False, settle="events").frame
    monkeypatch.setattr(event_loop, "CapacityQueue", LinearQueue)
    assert frame.equals(calsim.simulate(sc, progress=False, settle="events").frame)
