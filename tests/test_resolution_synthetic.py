"""Resolution on synthetic zones (hand-made TZif files), against zoneinfo built from the same bytes.

Real zones never have overlapping anomalies; synthetic ones can, and they
exercise both search paths of the kernel and the POSIX footer parser.
"""

from __future__ import annotations

import io
import zoneinfo

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles.pep495 import US, classify
from tzif_writer import tzif_bytes

from calsim.resolution import _searchsorted_right, resolve_wall
from calsim.tz.tzif import ZoneTable

KINDS = np.array(["ok", "gap", "fold"])
BASE = 1_700_000_000  # 2023-11-14


@st.composite
def zones(draw, min_spacing=2 * 86400):
    n = draw(st.integers(0, 6))
    gaps = draw(st.lists(st.integers(min_spacing, 86400 * 5), min_size=n, max_size=n))
    offs = draw(st.lists(st.integers(-14, 14).map(lambda h: h * 1800), min_size=n + 1, max_size=n + 1))
    t, trans = BASE, []
    for g, off in zip(gaps, offs[1:]):
        t += g
        trans.append((t, off))
    return trans, offs[0]


@settings(max_examples=150, deadline=None)
@given(zones())
def test_synthetic_zone_resolves_like_zoneinfo(zone_spec):
    # Transitions at least two days apart (tzdata's never come closer than
    # their offset change), including ones that change no offset.
    trans, initial = zone_spec
    raw = tzif_bytes(trans, initial, footer="")
    oracle = zoneinfo.ZoneInfo.from_file(io.BytesIO(raw), key="Test/Zone")
    table = ZoneTable.from_bytes("Test/Zone", raw)
    walls = (BASE - 86400 + np.arange(0, 86400 * 24, 450, dtype=np.int64)) * US
    kind, u0, u1 = classify(oracle, walls)
    r = resolve_wall(walls, table, gap="shift", fold="first")
    assert list(KINDS[r.kind]) == list(kind)
    assert np.array_equal(r.due, u0)
    r = resolve_wall(walls, table, gap="shift_backward", fold="second")
    assert np.array_equal(r.due, np.where(kind != "ok", u1, u0))


@settings(max_examples=150, deadline=None)
@given(zones(min_spacing=60))
def test_every_resolved_instant_reads_back_as_its_wall_time_even_with_crowded_transitions(zone_spec):
    # With transitions closer together than their offset changes, anomalies
    # overlap; zoneinfo's bisection is then ill-defined, but an instant that
    # calsim gives for a time outside a gap must still show that wall time.
    trans, initial = zone_spec
    table = ZoneTable.from_bytes("Test/Crowded", tzif_bytes(trans, initial))
    walls = (BASE - 86400 + np.arange(0, 86400 * 34, 300, dtype=np.int64)) * US
    for fold in ("first", "second"):
        r = resolve_wall(walls, table, gap="skip", fold=fold)
        ok = r.kind != 1
        back = r.due[ok] + table.offset_at_utc(r.due[ok] // US).astype(np.int64) * US
        assert np.array_equal(back, walls[ok])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-(10**15), 10**15), max_size=40).map(sorted),
    st.lists(st.integers(-(10**15), 10**15), min_size=1, max_size=200),
)
def test_day_bucket_search_equals_numpy_searchsorted(edges, queries):
    e = np.array(edges, dtype=np.int64)
    q = np.array(queries, dtype=np.int64)
    (got,) = _searchsorted_right((e,), q)
    assert np.array_equal(got, np.searchsorted(e, q, side="right"))


def test_footer_rule_governs_after_the_last_explicit_transition():
    # A slim file: one transition in 2000, then only the POSIX rule.
    raw = tzif_bytes([(946684800, -18000)], -18000, footer="EST5EDT,M3.2.0,M11.1.0")
    table = ZoneTable.from_bytes("Test/Slim", raw).covering(2300)
    oracle = zoneinfo.ZoneInfo.from_file(io.BytesIO(raw), key="Test/Slim")
    walls = np.datetime64("2299-01-01", "us").astype(np.int64) + np.arange(0, 365 * 96) * 900 * US
    kind, u0, _ = classify(oracle, walls)
    r = resolve_wall(walls, table, gap="shift")
    assert list(KINDS[r.kind]) == list(kind) and "gap" in kind and "fold" in kind
    assert np.array_equal(r.due, u0)


def test_southern_hemisphere_footer_with_negative_and_large_rule_times():
    # Rules read in local time before the change; 24:00-style and negative times
    # are RFC 8536 §3.3.1 extensions.
    for footer in ("<-03>3<-02>,M9.1.6/24,M4.1.6/24", "<-02>2<-01>,M3.5.0/-1,M10.5.0/0", "IST-2IDT,M3.4.4/26,M10.5.0"):
        raw = tzif_bytes([(946684800, -10800)], -10800, footer=footer)
        table = ZoneTable.from_bytes("Test/South", raw)
        oracle = zoneinfo.ZoneInfo.from_file(io.BytesIO(raw), key="Test/South")
        walls = np.arange(
            np.datetime64("2030-01-01", "us").astype(np.int64),
            np.datetime64("2031-01-01", "us").astype(np.int64),
            900 * US,
            dtype=np.int64,
        )
        kind, u0, _ = classify(oracle, walls)
        r = resolve_wall(walls, table, gap="shift")
        assert list(KINDS[r.kind]) == list(kind), footer
        assert np.array_equal(r.due, u0), footer
