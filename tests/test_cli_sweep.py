"""``calsim sweep``: the grid from the command line, the frame printed, the ledgers stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import calsim
from calsim.cli import main
from calsim.cli_sweep import grid_option

INCIDENT = Path(__file__).resolve().parents[1] / "data" / "examples" / "incident.toml"


def test_grid_values_are_read_as_their_types():
    assert grid_option("max_active=1,2") == ("max_active", [1, 2])
    assert grid_option("max_lateness=1h,none") == ("max_lateness", ["1h", None])
    assert grid_option("budget_limit=45.5,90") == ("budget_limit", [45.5, 90])


def test_sweep_prints_one_row_per_combination_as_json_and_stores_each_ledger(tmp_path, capsys):
    db = tmp_path / "sweep.duckdb"
    rc = main(["sweep", str(INCIDENT), "--grid", "catchup=all,skip", "--grid", "max_lateness=1h,none",
               "--format", "json", "--db", str(db), "--jobs", "1"])
    rows = json.loads(capsys.readouterr().out)
    assert rc == 0 and [r["combination"] for r in rows] == [
        "catchup=all, max_lateness=1h", "catchup=all, max_lateness=none", "catchup=skip, max_lateness=1h",
        "catchup=skip, max_lateness=none"]
    with calsim.LedgerStore(db, read_only=True) as store:
        assert sorted(store.scenarios()["name"].to_list()) == sorted(r["scenario"] for r in rows)


@pytest.mark.parametrize("argv,says", [
    (["--grid", "catchup"], "expected FIELD=V1,V2"),
    (["--grid", "catchp=all"], "unknown field 'catchp'"),
    (["--grid", "catchup=all", "--grid", "catchup=skip"], "'catchup' given twice"),
])
def test_a_bad_grid_is_one_line_and_exit_2(argv, says, capsys):
    rc = main(["sweep", str(INCIDENT), *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and says in err[0]
