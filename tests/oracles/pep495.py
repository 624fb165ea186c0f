"""The reference: PEP 495 fold round trip through zoneinfo built from the same TZif bytes.

Used by the equality tests; it is deliberately a plain Python loop, the
thing calsim's vectorised kernel must agree with.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1)
US = 1_000_000


def us_to_naive(us: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=int(us))


def naive_to_us(value: dt.datetime) -> int:
    d = value - EPOCH
    return (d.days * 86400 + d.seconds) * US + d.microseconds


def classify(zone, wall_us: np.ndarray):
    """Per wall time: kind ('ok'|'gap'|'fold'), u0, u1 (UTC µs of fold=0 and fold=1)."""
    kinds, u0s, u1s = [], [], []
    for w in wall_us.tolist():
        t = us_to_naive(w)
        a0 = t.replace(tzinfo=zone, fold=0)
        a1 = t.replace(tzinfo=zone, fold=1)
        u0 = a0.astimezone(UTC)
        u1 = a1.astimezone(UTC)
        back = u0.astimezone(zone).replace(tzinfo=None)
        if back != t:
            kind = "gap"
        elif u0 != u1:
            kind = "fold"
        else:
            kind = "ok"
        kinds.append(kind)
        u0s.append(naive_to_us(u0.replace(tzinfo=None)))
        u1s.append(naive_to_us(u1.replace(tzinfo=None)))
    return np.array(kinds), np.array(u0s, dtype=np.int64), np.array(u1s, dtype=np.int64)


def first_instant_after_gap(zone, wall: int, lo: int, hi: int) -> int:
    """Smallest UTC µs in (lo, hi] whose wall time (by zoneinfo) is past ``wall``: bisect on seconds."""
    lo_s, hi_s = lo // US, hi // US
    while hi_s - lo_s > 1:
        mid = (lo_s + hi_s) // 2
        w = naive_to_us(dt.datetime.fromtimestamp(mid, zone).replace(tzinfo=None))
        if w > wall:
            hi_s = mid
        else:
            lo_s = mid
    return hi_s * US


def offset_at(zone, utc_us: int) -> int:
    return int(dt.datetime.fromtimestamp(utc_us // US, zone).utcoffset().total_seconds())
