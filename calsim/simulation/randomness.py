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

__all__ = ["id_key", "uniform", "uniform_one", "norm_ppf", "norm_ppf_one", "mix", "draw", "SCALAR_RULES", "JITTER",
           "DURATION", "FAILURE", "CLASS", "RETRY_JITTER", "CRASH"]

# Purpose tags: each kind of draw its own stream (CLASS: a failed attempt's error class; RETRY_JITTER: its
# backoff jitter; CRASH: a worker's random crash instants, keyed by the worker).
JITTER, DURATION, FAILURE, CLASS, RETRY_JITTER, CRASH = 1, 2, 3, 4, 5, 6
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def id_key(text: str) -> int:
    """A stable 64-bit key of a string (blake2b)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def mix(x):
    """splitmix64's finaliser, in wrapping uint64 arithmetic (one value or an array; compiled for the loops)."""
    x = x + GOLDEN
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def draw(key, seed, nominal, fold, tag, attempt):
    """The draw in [0, 1) of (schedule key, seed, nominal instant, fold, tag, attempt), all as uint64: the one
    formula :func:`uniform` (arrays) and :func:`uniform_one` (one draw, in the compiled loops) compute."""
    x = mix(key ^ seed)
    x = mix(x ^ nominal)
    x = mix(x ^ (fold << np.uint64(8)) ^ tag ^ (attempt << np.uint64(16)))
    return (x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def uniform(key: np.ndarray, nominal_us: np.ndarray, fold: np.ndarray, seed: int, tag: int,
            attempt: np.ndarray | int = 0) -> np.ndarray:
    """Uniform draws in [0, 1), one per row, from (schedule key, nominal time, fold, seed, tag, attempt)."""
    with np.errstate(over="ignore"):
        return draw(key.astype(np.uint64), np.uint64(seed & 0xFFFFFFFFFFFFFFFF),
                    nominal_us.astype(np.int64).view(np.uint64), np.asarray(fold).astype(np.uint64), np.uint64(tag),
                    np.asarray(attempt).astype(np.uint64))


def uniform_one(key, nominal, fold, seed, tag, attempt):
    """:func:`uniform` for one draw, for the compiled loops (``seed`` as the int64 with its bits)."""
    return draw(np.uint64(key), np.uint64(seed), np.uint64(nominal), np.uint64(fold), np.uint64(tag),
                np.uint64(attempt))


# -- the inverse normal CDF (lognormal durations) -------------------------------------------------------------
# Acklam's rational approximation (|error| < 1.2e-9): one formula per region, shared by the array and the
# one-value forms.
_LO = 0.02425


def _ppf_mid(um):
    r = um * um
    return (((((-3.969683028665376e01 * r + 2.209460984245205e02) * r - 2.759285104469687e02) * r
              + 1.383577518672690e02) * r - 3.066479806614716e01) * r + 2.506628277459239e00) * um / \
        (((((-5.447609879822406e01 * r + 1.615858368580409e02) * r - 1.556989798598866e02) * r
           + 6.680131188771972e01) * r - 1.328068155288572e01) * r + 1)


def _ppf_tail(p):
    q = np.sqrt(-2 * np.log(np.maximum(p, 1e-300)))
    return (((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838e00) * q
              - 2.549732539343734e00) * q + 4.374664141464968e00) * q + 2.938163982698783e00) / \
        ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e00) * q
          + 3.754408661907416e00) * q + 1)


def norm_ppf_one(u):
    """The inverse standard normal CDF of one value in (0, 1) (for the compiled loops)."""
    if u < _LO:
        return _ppf_tail(u)
    if u > 1 - _LO:
        return -_ppf_tail(1 - u)
    return _ppf_mid(u - 0.5)


def norm_ppf(u: np.ndarray) -> np.ndarray:
    """:func:`norm_ppf_one` of each value (each region's formula only where it applies: the tails hold ~5%).

    >>> norm_ppf(np.array([0.01, 0.5, 0.975])).round(4).tolist()
    [-2.3263, 0.0, 1.96]
    """
    out = np.empty(len(u), dtype=np.float64)
    low, high = u < _LO, u > 1 - _LO
    mid = ~(low | high)
    out[mid] = _ppf_mid(u[mid] - 0.5)
    out[low] = _ppf_tail(u[low])
    out[high] = -_ppf_tail(1 - u[high])
    return out


#: The rules the compiled loops call (:mod:`.compiled_rules`).
SCALAR_RULES = (mix, draw, uniform_one, _ppf_mid, _ppf_tail, norm_ppf_one)
