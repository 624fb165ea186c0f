"""Fast paths of the rule kinds agree with the general code they shortcut.

``RRule.candidates`` answers FREQ=DAILY without BYxxx parts arithmetically,
and ``Window.wall_times`` selects weekdays with a lookup table; both must
give what the general expansion gives (and dateutil, for DAILY).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
from dateutil.rrule import rrulestr
from hypothesis import given, settings
from hypothesis import strategies as st

from calsim.rules import _rrule_expand as _x
from calsim.rules.rrule import RRule
from calsim.rules.window import Window

US = 1_000_000
DAY_US = 86_400 * US
EPOCH = dt.datetime(1970, 1, 1)


@settings(max_examples=300, deadline=None)
@given(
    interval=st.one_of(st.integers(1, 10), st.integers(11, 5_000_000)),
    dtstart=st.integers(-200 * 365 * DAY_US, 300 * 365 * DAY_US),
    lo_after=st.integers(-50 * DAY_US, 2_000 * DAY_US),
    length=st.integers(0, 400 * DAY_US),
    invalid_day=st.sampled_from(["omit", "backward", "forward"]),
)
def test_plain_daily_equals_the_general_expansion(interval, dtstart, lo_after, length, invalid_day):
    rule = RRule.parse(f"FREQ=DAILY;INTERVAL={interval}")
    lo = dtstart + lo_after
    hi = lo + length
    wall, note = rule.candidates(dtstart, lo, hi, invalid_day)
    dtstart_s = dtstart // US
    start, end = max(lo, dtstart_s * US), min(hi, 253402300800 * US)
    ref_wall, ref_note = _x.expand(rule._plan(dtstart_s, invalid_day), start, end)
    assert wall.dtype == np.int64 and note.dtype == np.int8
    assert wall.tolist() == ref_wall.tolist()
    assert note.tolist() == ref_note.tolist()


def test_plain_daily_equals_dateutil():
    start = dt.datetime(2026, 3, 6, 2, 30, 15)
    end = start + dt.timedelta(days=40)
    s_us = (start - EPOCH) // dt.timedelta(microseconds=1)
    for text in ("FREQ=DAILY", "FREQ=DAILY;INTERVAL=3"):
        wall, _ = RRule.parse(text).candidates(s_us, s_us, s_us + 40 * DAY_US)
        got = [EPOCH + dt.timedelta(microseconds=int(w)) for w in wall]
        expect = [t for t in rrulestr(text, dtstart=start).between(start, end, inc=True) if t < end]
        assert got == expect and len(got) in (40, 14)


def test_daily_with_a_by_part_takes_the_general_path():
    rule = RRule.parse("FREQ=DAILY;BYHOUR=9,17")
    s = 20_000 * DAY_US
    wall, _ = rule.candidates(s, s, s + 2 * DAY_US)
    assert [(w - s) // 3_600_000_000 for w in wall] == [9, 17, 33, 41]


@settings(max_examples=200, deadline=None)
@given(
    start=st.sampled_from(["00:00", "08:00", "22:00", "23:30", "12:15"]),
    end=st.sampled_from(["00:00", "03:00", "20:00", "24:00", "12:15"]),
    every=st.sampled_from(["15min", "30min", "1h", "7h"]),
    days=st.one_of(st.none(), st.lists(st.integers(0, 6), min_size=1, max_size=7, unique=True)),
    lo=st.integers(0, 30_000 * DAY_US),
    length=st.integers(0, 20 * DAY_US),
)
def test_window_equals_a_per_day_loop(start, end, every, days, lo, length):
    w = Window(start, end, every, days=days)
    hi = lo + length
    got = w.wall_times(lo, hi).tolist()
    expect = []
    for day in range(lo // DAY_US - 1, hi // DAY_US + 1):
        if (day + 3) % 7 not in w._days:
            continue
        t = day * DAY_US + w._start_us
        while t < day * DAY_US + w._start_us + w._length_us:
            if lo <= t < hi:
                expect.append(t)
            t += w._step_us
    assert got == sorted(expect) == expect
