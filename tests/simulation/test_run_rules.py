"""The run rules table (``calsim/simulation/run_rules.py``, ADR 0002): each rule once, the same compiled and on arrays.

Each rule of :data:`calsim.simulation.run_rules.SCALAR_RULES` (and
:data:`calsim.simulation.randomness.SCALAR_RULES`) is one Python function
that the column paths call with arrays and the compiled loops call with one
run's numbers. These tests prove the two uses agree (a function compiled by
numba is not the interpreter: integer division, boolean arithmetic and
overflow are where they could part), that no kernel writes a rule again, and
that ADR 0002's table is the code's.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from calsim.simulation import compiled_rules, randomness  # noqa: F401  (compiled_rules registers them)
from calsim.simulation import run_rules as rules

ROOT = Path(__file__).resolve().parents[2]
KERNELS = [ROOT / "calsim/simulation/worker_kernel.py", ROOT / "calsim/simulation/worker_steps.py"]  # the one loop
ADR = ROOT / "docs/adr/0002-run-semantics.md"
TABLE = rules.SCALAR_RULES + getattr(randomness, "SCALAR_RULES", ())

# What a copy of each rule would have to write again (a constant or a formula only that rule has).
FINGERPRINTS = {
    "month_of_day": ["719468", "146097"],
    "backlog_outcome": ["from_end"],
    "beyond": ["lateness == limit", "== limit and"],
    "period_of_day": ["+ 3) // 7"],
    "local_day": ["// DAY_US"],
    "uniform": ["0x9E3779B97F4A7C15", "9007199254740992"],
    "norm_ppf": ["2.506628277459239", "7.784894002430293e-03"],
}


def _defined(path: Path) -> set[str]:
    return {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}


def _bare(name: str) -> str:
    return re.sub(r"_one$", "", name.strip("_"))


def test_no_kernel_defines_a_rule_the_table_lists():
    names = {_bare(f.__name__) for f in TABLE} | {"backlog_runs", "period", "up"}
    for kernel in KERNELS:
        text = kernel.read_text()
        again = sorted(d for d in _defined(kernel) if _bare(d) in names)
        assert again == [], f"{kernel.name} defines {again}: call the rule from rules.py instead"
        copied = sorted(rule for rule, marks in FINGERPRINTS.items() for mark in marks if mark in text)
        assert copied == [], f"{kernel.name} writes {copied} again"


def test_every_rule_the_kernels_call_is_in_the_table():
    for kernel in KERNELS:
        tree = ast.parse(kernel.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("rules", "randomness", "compiled_rules"):
                module = {"rules": rules, "randomness": randomness, "compiled_rules": compiled_rules}[node.module]
                for alias in node.names:
                    obj = getattr(module, alias.name)
                    obj = getattr(obj, "py_func", obj)  # (compiled_rules: the rule, compiled on its own)
                    assert not callable(obj) or obj in TABLE, f"{kernel.name} calls {alias.name}, not in the table"


def test_adr_0002_lists_exactly_the_rules_of_the_code():
    text = ADR.read_text()
    table = text[text.index("## Where each rule is defined"):]
    table = table[:table.index("\n## ", 5)]
    listed = set(re.findall(r"`(\w+)`", table))
    for f in TABLE:
        assert f.__name__ in listed, f"ADR 0002's table does not list {f.__name__}"
    named = {n for n in listed if hasattr(rules, n) or hasattr(randomness, n)}
    for n in listed - named:
        assert re.fullmatch(r"[a-z_]+\.py|[A-Z_]+|[a-z_]+", n), n
    for n in named:
        assert callable(getattr(rules, n, None) or getattr(randomness, n)) or n.isupper(), n


# -- compiled == on arrays ------------------------------------------------------------------------


@njit
def _beyond_each(lat, lim, edge):
    out = np.empty(len(lat), dtype=np.bool_)
    for k in range(len(lat)):
        out[k] = rules.beyond(lat[k], lim[k], edge[k])
    return out


@njit
def _deadline_each(e, lim, edge):
    out = np.empty(len(e), dtype=np.int64)
    for k in range(len(e)):
        out[k] = rules.deadline(e[k], lim[k], edge[k])
    return out


@njit
def _backlog_each(mode, lim, pos, size, held):
    out = np.empty((2, len(mode)), dtype=np.bool_)
    for k in range(len(mode)):
        if held:
            r, c = rules.held_outcome(mode[k], lim[k], pos[k], size[k])
        else:
            r, c = rules.backlog_outcome(mode[k], lim[k], pos[k], size[k])
        out[0, k] = r
        out[1, k] = c
    return out


@njit
def _period_each(t, utc, off, kind):
    out = np.empty(len(t), dtype=np.int64)
    for k in range(len(t)):
        out[k] = rules.period_of_day(rules.local_day(t[k], utc, off), kind)
    return out


@njit
def _up_each(t, lo, hi):
    out = np.empty(len(t), dtype=np.int64)
    for k in range(len(t)):
        out[k] = rules.up_one(t[k], lo, hi)
    return out


ints = st.lists(st.integers(-10, 10), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(ints, ints, ints)
def test_beyond_and_deadline_compiled_equal_them_on_arrays_and_each_other(a, b, c):
    n = min(len(a), len(b), len(c))
    lat, lim, edge = np.array(a[:n]), np.abs(np.array(b[:n])), np.array(c[:n]) % 2
    np.testing.assert_array_equal(_beyond_each(lat, lim, edge), rules.beyond(lat, lim, edge))
    elig = np.arange(n, dtype=np.int64) * 100
    dl = rules.deadline(elig, lim, edge)
    np.testing.assert_array_equal(_deadline_each(elig, lim, edge), dl)
    # deadline is beyond as an instant: a start after it is exactly a start past the limit
    start = elig + lat
    np.testing.assert_array_equal(start > dl, rules.beyond(lat, lim, edge))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(1, 6), st.integers(0, 5)),
                min_size=1, max_size=50), st.booleans())
def test_backlog_and_held_outcome_compiled_equal_them_on_arrays(cases, held):
    mode, lim, size, pos = (np.array(x, dtype=np.int64) for x in zip(*cases))
    pos = pos % size
    want = (rules.held_outcome if held else rules.backlog_outcome)(mode, lim, pos, size)
    got = _backlog_each(mode, lim, pos, size, held)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_month_of_day_is_numpys_calendar_month_over_five_thousand_years():
    day = np.arange(-800_000, 1_100_000, 7, dtype=np.int64)
    np.testing.assert_array_equal(rules.month_of_day(day),
                                  day.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64))


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["Australia/Lord_Howe", "America/New_York", "Asia/Kathmandu", "Pacific/Apia"]),
       st.sampled_from(["day", "week", "month"]), st.integers(0, 2**31), st.integers(1, 200))
def test_the_period_of_an_instant_compiled_equals_period_index(zone, period, t0, n):
    import calsim

    table = calsim.release("2026f").table(zone)
    t = (np.int64(t0) * 1_000_000 + np.arange(n, dtype=np.int64) * 3_600_000_007)
    want = rules.period_index(table, period, t)
    got = _period_each(t, table.utc.astype(np.int64) * 1_000_000, table.offsets.astype(np.int64) * 1_000_000,
                       rules.PERIOD_KINDS[period])
    np.testing.assert_array_equal(got, want)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 500), min_size=0, max_size=8), st.lists(st.integers(-10, 600), min_size=1, max_size=30))
def test_up_compiled_equals_up_on_arrays_and_on_ints(cuts, ts):
    cuts = sorted(set(cuts))
    outages = tuple((cuts[k], cuts[k + 1]) for k in range(0, len(cuts) - 1, 2))
    lo = np.array([a for a, _ in outages], dtype=np.int64)
    hi = np.array([b for _, b in outages], dtype=np.int64)
    t = np.array(ts, dtype=np.int64)
    want = rules.up(t, outages)
    np.testing.assert_array_equal(_up_each(t, lo, hi), want)
    assert [rules.up(int(x), outages) for x in t] == want.tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 20), st.integers(0, 30), st.integers(0, 40),
                          st.integers(0, 1), st.integers(0, 4), st.integers(0, 2)), min_size=1, max_size=25),
       st.integers(0, 60))
def test_held_at_opening_compiled_equals_it_in_python(held, t):
    rank, due, elig, maxlate, edge, mode, limit = (np.array(x, dtype=np.int64) for x in zip(*held))
    rank = np.unique(rank, return_inverse=True)[1].astype(np.int64)
    want = rules.held_at_opening(t, rank, due, elig, maxlate, edge, mode, limit + 1)
    got = compiled_rules.held_at_opening(t, rank, due, elig, maxlate, edge, mode, limit + 1)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
