"""The queue for a slot (:func:`calsim.simulation.worker_steps.level_push` / ``level_pop``, the one ordered
loop's capacity queue) picks exactly the run a linear scan picks.

The reference scans every queued run at each pop: the highest aged priority
``priority + (t - queued_at) // AGEING_US``, then the first queued (the
kernel keeps one FIFO per priority level and compares only the levels'
heads). Runs queue in time order, as the loop's events come.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from calsim.simulation.run_rules import AGEING_US
from calsim.simulation.worker_steps import grown, level_pop, level_push

H = AGEING_US
MIN = 60 * 10**6


class LevelQueue:
    """The kernel's queue, driven from Python: jobs are numbered in push order."""

    def __init__(self, priorities) -> None:
        self.levels = np.array(sorted(set(priorities)), dtype=np.int64)
        self.nodes = tuple(np.zeros(2, dtype=np.int64) for _ in range(4))
        self.lv = np.full((2, len(self.levels)), -1, dtype=np.int64)
        self.queued = np.zeros(2, dtype=np.int64)
        self.seq = np.zeros(1, dtype=np.int64)
        self.items: list = []

    def __len__(self) -> int:
        return int(self.queued[0])

    def push(self, priority: int, t: int, item) -> None:
        if self.queued[1] == len(self.nodes[0]):
            self.nodes = grown(self.nodes)
        level = int(np.searchsorted(self.levels, priority))
        level_push(self.nodes, self.lv, self.queued, self.seq, level, t, len(self.items))
        self.items.append(item)

    def pop(self, t: int):
        return self.items[level_pop(self.nodes, self.lv, self.queued, self.levels, t)]


class LinearQueue:
    """Every queued run scanned at each pop."""

    def __init__(self) -> None:
        self.q: list[tuple] = []

    def __len__(self) -> int:
        return len(self.q)

    def push(self, priority: int, t: int, item) -> None:
        self.q.append((priority, t, item))

    def pop(self, t: int):
        q = self.q
        best = max(range(len(q)), key=lambda i: (q[i][0] + (t - q[i][1]) // AGEING_US, -q[i][1], -i))
        return q.pop(best)[2]


# Steps forward in time that meet the ageing buckets' edges, or any over a few hours.
steps = st.one_of(st.sampled_from([0, 0, 1, 30 * MIN, H - 1, H, H + 1, 2 * H]), st.integers(0, 3 * H))
ops = st.lists(st.tuples(st.sampled_from(["push", "push", "pop"]), st.integers(-2, 2), steps), max_size=80)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(ops)
def test_the_level_queue_pops_what_the_linear_scan_picks(ops):
    """Random pushes and pops, time going forward as the loop's events do, pick the same runs."""
    fast, slow = LevelQueue(range(-2, 3)), LinearQueue()
    t = 0
    for n, (op, priority, dt) in enumerate(ops):
        t += dt
        if op == "push":
            fast.push(priority, t, n)
            slow.push(priority, t, n)
        elif len(slow):
            assert fast.pop(t) == slow.pop(t)
        assert len(fast) == len(slow)
    while len(slow):  # drain at one late instant
        t += 5 * H
        assert fast.pop(t) == slow.pop(t)


def test_same_aged_priority_goes_first_queued_first():
    q = LevelQueue([0])
    q.push(0, 0, "older")
    q.push(0, 30 * MIN, "newer")
    assert q.pop(45 * MIN) == "older"


def test_low_priority_ages_past_high_priority():
    q = LevelQueue([0, 2])
    q.push(0, 0, "low")
    q.push(2, 90 * MIN, "high")
    assert q.pop(90 * MIN) == "high"  # levels 1 against 2
    q.push(2, 3 * H, "high again")
    assert q.pop(3 * H) == "low"  # levels 3 against 2


def test_equal_aged_levels_go_first_queued_first():
    q = LevelQueue([0, 2])
    q.push(0, 0, "first")
    q.push(2, 2 * H, "second")
    assert q.pop(2 * H) == "first"  # levels 2 and 2: queued at 0 before 2 h


def test_the_queue_grows_past_its_first_room():
    q = LevelQueue([0])
    for k in range(9):
        q.push(0, k, k)
    assert [q.pop(H) for _ in range(9)] == list(range(9))
