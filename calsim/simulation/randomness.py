"""Deterministic randomness: the same scenario and seed give the same draws on any machine.

Each schedule id is hashed once with blake2b (never Python's ``hash``, which
is salted per process); per-occurrence draws mix that key with the nominal
time, the fold, the seed and a purpose tag through splitmix64, vectorised in
numpy's wrapping uint64 arithmetic.

>>> import numpy as np
>>> from calsim.simulation.randomness import id_key, uniform
>>> k = np.array([id_key("job-a")], dtype=np.uint64)
>>> u = uniform(k, np.array([1_700_000_000_000_000]), np.array([0]), seed=0, tag=1)
>>> bool(0 <= u[0] < 1), np.array_equal(u, uniform(k, np.array([1_700_000_000_000_000]), np.array([0]), 0, 1))
(True, True)
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["id_key", "uniform", "JITTER", "DURATION", "FAILURE", "CLASS", "RETRY_JITTER", "CRASH"]

# Purpose tags: each kind of draw its own stream (CLASS: a failed attempt's error class; RETRY_JITTER: its
# backoff jitter; CRASH: a worker's random crash instants, keyed by the worker).
JITTER, DURATION, FAILURE, CLASS, RETRY_JITTER, CRASH = 1, 2, 3, 4, 5, 6
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def id_key(text: str) -> int:
    """A stable 64-bit key of a string (blake2b)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def _splitmix(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        x = x + _GOLDEN
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def uniform(key: np.ndarray, nominal_us: np.ndarray, fold: np.ndarray, seed: int, tag: int,
            attempt: np.ndarray | int = 0) -> np.ndarray:
    """Uniform draws in [0, 1), one per row, from (schedule key, nominal time, fold, seed, tag, attempt)."""
    with np.errstate(over="ignore"):
        x = key.astype(np.uint64)
        x = _splitmix(x ^ np.uint64(seed & 0xFFFFFFFFFFFFFFFF))
        x = _splitmix(x ^ nominal_us.astype(np.int64).view(np.uint64))
        x = _splitmix(x ^ (np.asarray(fold).astype(np.uint64) << np.uint64(8))
                      ^ np.uint64(tag) ^ (np.asarray(attempt).astype(np.uint64) << np.uint64(16)))
    return (x >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
