"""The ledger store's key and digest: row order changes nothing, one key column makes rows distinct.

Each test pins one behaviour at an exact edge, against a real oracle (found unpinned by a hand-made mutation run).

* **LedgerStore** idempotence and key: the same rows written again, in any
  order, change nothing; rows differing only in ``fold``, ``kind`` or
  ``revision`` are distinct keys; oracle: DuckDB itself (``SELECT DISTINCT``
  over the key).
"""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

import calsim
from calsim.store import DuplicateKeyError, LedgerStore, ScenarioExistsError

UTC = dt.timezone.utc
REL = "2026f"


# LedgerStore: idempotence under row order, and the key

NY = "America/New_York"
KEY = ["schedule_id", "revision", "nominal_local", "fold", "kind"]


@pytest.fixture(scope="module")
def ledger() -> calsim.Ledger:
    fleet = [
        calsim.Schedule("hourly", "UTC", "2026-01-01T00:00", "FREQ=HOURLY"),
        calsim.Schedule("ny-0230", NY, "2026-01-01T02:30", "FREQ=DAILY"),  # a gap-skipped row
        calsim.Schedule("ny-0130", NY, "2026-01-01T01:30", "FREQ=DAILY", fold="both"),  # two fold rows
    ]
    scen = calsim.Scenario("s", fleet, "2026-03-05T00:00Z", "2026-03-10T00:00Z", release=REL,
                           outages=[calsim.Outage("2026-03-07T10:00Z", "2026-03-07T13:30Z")])
    # Add a November fold to the same ledger: a second scenario window merged by hand.
    nov = calsim.Scenario("s", fleet, "2026-10-31T00:00Z", "2026-11-03T00:00Z", release=REL)
    a, b = calsim.simulate(scen, progress=False), calsim.simulate(nov, progress=False)
    frame = pl.concat([a.frame, b.frame])
    assert frame.filter(pl.col("fold") == 1).height >= 1
    assert frame.filter(pl.col("notes").list.contains("dst_gap_skipped")).height >= 1
    return frame


def _distinct_keys(store: LedgerStore, name: str) -> int:
    """DuckDB's own count of distinct keys among the scenario's rows."""
    cols = ", ".join(KEY)
    return store.sql(f"SELECT count(*) AS n FROM (SELECT DISTINCT {cols} FROM occurrences WHERE scenario = $1)",
                     [name])["n"][0]


def _orders(frame: pl.DataFrame) -> list[pl.DataFrame]:
    return [frame.reverse(), frame.sample(fraction=1.0, shuffle=True, seed=7),
            frame.sort(KEY, descending=True)]


def test_writing_the_same_rows_in_another_order_changes_nothing(ledger):
    with LedgerStore() as store:
        assert store.write(ledger, name="s") is True
        before = store.sql("SELECT * FROM scenarios")
        for other in _orders(ledger):
            assert store.write(other, name="s") is False
            assert store.write(other, name="s", replace=True) is False
        assert store.sql("SELECT * FROM scenarios").equals(before)
        assert store.ledger("s").equals(ledger)  # the first write's order, kept
        rows = store.sql("SELECT count(*) AS n FROM occurrences")["n"][0]
        assert rows == ledger.height == _distinct_keys(store, "s")


def test_writing_the_same_rows_in_another_order_after_reopening_changes_nothing(ledger, tmp_path):
    path = tmp_path / "l.duckdb"
    with LedgerStore(path) as store:
        store.write(ledger, name="s")
    with LedgerStore(path) as store:
        assert store.write(ledger.reverse(), name="s") is False
        assert store.ledger("s").equals(ledger)


def test_a_digest_from_another_polars_is_checked_against_the_rows_in_any_order(ledger):
    # A store written by another polars version: its digest cannot be compared,
    # so the stored rows are (as a set of keyed rows).
    with LedgerStore() as store:
        store.write(ledger, name="s")
        store._con.execute("UPDATE scenarios SET digest = 'polars-0.0.0:00' WHERE name = 's'")
        assert store.write(ledger.reverse(), name="s") is False
        changed = ledger.with_columns(pl.when(pl.int_range(pl.len()) == 3).then(pl.col("cost") + 1)
                                      .otherwise(pl.col("cost")).alias("cost"))
        with pytest.raises(ScenarioExistsError, match="a different ledger"):
            store.write(changed.reverse(), name="s")


def test_one_changed_value_in_another_order_is_a_different_ledger(ledger):
    changed = ledger.with_columns(pl.when(pl.int_range(pl.len()) == 5).then(pl.col("attempts") + 1)
                                  .otherwise(pl.col("attempts")).alias("attempts"))
    with LedgerStore() as store:
        store.write(ledger, name="s")
        with pytest.raises(ScenarioExistsError, match="a different ledger is already stored as 's'"):
            store.write(changed.reverse(), name="s")
        assert store.ledger("s").equals(ledger)


@pytest.mark.parametrize("column,value", [("fold", 1), ("kind", "manual"), ("revision", 2)])
def test_rows_differing_only_in_one_key_column_are_distinct(ledger, column, value):
    row = ledger.filter((pl.col("fold") == 0) & (pl.col("kind") == "scheduled") & (pl.col("revision") == 1)).head(1)
    twin = row.with_columns(pl.lit(value).cast(ledger.schema[column]).alias(column))
    assert ledger.join(twin, on=KEY, how="semi").height == 0  # a new key
    frame = pl.concat([ledger, twin])
    with LedgerStore() as store:
        assert store.write(frame, name="s") is True
        assert _distinct_keys(store, "s") == frame.height
        assert store.sql("SELECT count(*) AS n FROM occurrences")["n"][0] == frame.height


def test_a_repeated_key_is_refused_and_nothing_is_written(ledger):
    row = ledger.head(1).with_columns(pl.col("attempts") + 1)  # same key, other content
    with LedgerStore() as store:
        with pytest.raises(DuplicateKeyError, match="share a primary key"):
            store.write(pl.concat([ledger, row]), name="s")
        assert store.sql("SELECT count(*) AS n FROM scenarios")["n"][0] == 0
        assert store.sql("SELECT count(*) AS n FROM occurrences")["n"][0] == 0
