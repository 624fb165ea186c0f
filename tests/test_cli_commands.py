"""The CLI's working commands: preview, expand, simulate, compare, demo, report; and their bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

import calsim
from calsim.cli import main

ROOT = Path(__file__).resolve().parent.parent
FLEET = ROOT / "data" / "examples" / "fleet.toml"
INCIDENT = ROOT / "data" / "examples" / "incident.toml"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "calsim", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_help_lists_every_command():
    p = run("--help")
    assert p.returncode == 0
    for command in ("preview", "expand", "simulate", "compare", "tzdiff", "releases", "report", "demo"):
        assert command in p.stdout


def test_preview_explains_the_new_york_gap(capsys):
    assert main(["preview", str(FLEET), "--id", "billing/nightly", "-n", "3", "--after", "2026-03-06T00:00Z",
                 "--release", "2026f"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["schedule_id", "nominal_local"]
    assert "02:30 does not exist in America/New_York (tzdata 2026f)" in lines[3]


def test_expand_csv_equals_the_python_expansion(tmp_path):
    out = tmp_path / "occ.csv"
    assert main(["expand", str(FLEET), "--from", "2026-03-01T00:00Z", "--to", "2026-04-01T00:00Z",
                 "--release", "2026f", "--format", "csv", "--output", str(out)]) == 0
    got = pl.read_csv(out)
    want = calsim.expand(calsim.load(FLEET), "2026-03-01T00:00Z", "2026-04-01T00:00Z", "2026f")
    assert got.height == want.height
    assert got["schedule_id"].to_list() == want["schedule_id"].to_list()


def test_simulate_a_scenario_file_under_two_modes_into_a_store_then_compare(tmp_path):
    db = tmp_path / "ledger.duckdb"
    p = run("simulate", INCIDENT, "--catchup", "all,latest", "--db", db, "--quiet")
    assert p.returncode == 0, p.stderr
    assert "2 ledger(s) written" in p.stdout
    p = run("compare", db, "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert [r["scenario"] for r in rows] == ["incident-all", "incident-latest"]
    sc = calsim.load_scenario(INCIDENT)
    latest = calsim.simulate(calsim.Scenario("x", calsim.with_policy(sc.schedules, catchup="latest"), sc.start, sc.end,
                                             release=sc.release, outages=sc.outages, budgets=sc.budgets,
                                             seed=sc.seed), progress=False)
    assert rows[1]["coalesced"] == latest.frame.filter(pl.col("state") == "coalesced").height > 0


def test_simulate_a_fleet_with_outage_and_budget_options(capsys):
    assert main(["simulate", "example:20", "--from", "2026-10-01T00:00Z", "--to", "2026-10-08T00:00Z",
                 "--outage", "2026-10-03T00:00Z/2026-10-04T00:00Z", "--catchup", "skip", "--quiet",
                 "--release", "2026f"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[0] == "simulation-skip"


def test_scenario_file_reads_outages_budgets_and_the_fleet_it_names():
    sc = calsim.load_scenario(INCIDENT)
    assert [s.id for s in sc.schedules] == [s.id for s in calsim.load(FLEET)]
    assert sc.outages[0].start == "2026-10-20T01:01Z"
    assert {b.account: b.limit for b in sc.budgets} == {"tenant-a": 40, "tenant-b": 45}
    assert sc.release == "2026f" and sc.seed == 7


def test_fleet_file_policy_and_preset_tables_reach_the_schedule():
    etl = {s.id: s for s in calsim.load(FLEET)}["etl/every-6h"]
    assert etl.policy.account == "tenant-b" and etl.policy.cost == 3.0  # workload from policy =
    assert etl.policy.overlap == "buffer_latest" and etl.policy.catchup == "latest"  # scheduler fields from the preset
    assert etl.policy.max_lateness == 86400


BAD_FLEET = '[[schedule]]\nid = "a"\nzone = "UTC"\nstart = "2026-01-01T09:00"\n'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (BAD_FLEET + 'corn = "0 9 * * *"\n', "bad.toml:1 schedule #1: unknown key 'corn' (did you mean 'cron'?"),
        (BAD_FLEET + 'cron = "0 9 * * *"\npolicy = { catchup = 3 }\n',
         "bad.toml:1 schedule #1 ('a'): catchup: unknown policy 3"),
        (BAD_FLEET + 'cron = "0 9 * * *"\npolicy = { catchpu = "all" }\n',
         "policy: unknown key 'catchpu' (did you mean 'catchup'?"),
        (BAD_FLEET.replace("UTC", "Mars/Olympus") + 'cron = "0 9 * * *"\n', "zone: unknown zone 'Mars/Olympus'"),
        (BAD_FLEET + 'cron = "0 25 * * *"\n', "hour"),
        (BAD_FLEET + 'rrule = "FREQ=DAILY;BYHOUR=99"\n', "BYHOUR"),
        (BAD_FLEET + 'cron = "0 9 * * *"\npreset = { name = "kubernetis" }\n',
         "preset.name: unknown scheduler 'kubernetis' (did you mean 'kubernetes'?)"),
        ('[[schedule]]\nid = "a"\n', "missing key 'zone'"),
    ],
)
def test_bad_fleet_file_gives_one_line_naming_file_entry_and_field_and_exit_2(tmp_path, body, message):
    p = tmp_path / "bad.toml"
    p.write_text(body)
    r = run("preview", p, "--release", "2026f")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert message in r.stderr, r.stderr
    assert "bad.toml" in r.stderr


def test_bad_scenario_file_names_the_outage_table_line(tmp_path):
    p = tmp_path / "sc.toml"
    p.write_text(f'[scenario]\nname = "x"\nfleet = "{FLEET}"\nstart = "2026-10-01T00:00Z"\n'
                 'end = "2026-10-02T00:00Z"\n\n'
                 '[[outage]]\nstart = "2026-10-01T05:00Z"\nend = "2026-10-01T04:00Z"\n')
    r = run("simulate", p, "--quiet")
    assert r.returncode == 2
    assert r.stderr.strip() == ("calsim: error: sc.toml:7 outage #1: outage.end: '2026-10-01T04:00Z' is not after "
                                "outage.start '2026-10-01T05:00Z'")


def test_unreadable_input_and_store_in_missing_directory_exit_2_and_write_nothing(tmp_path):
    r = run("expand", tmp_path / "nope.toml")
    assert r.returncode == 2 and "cannot read" in r.stderr and "nope.toml" in r.stderr
    r = run("simulate", INCIDENT, "--db", tmp_path / "missing" / "x.duckdb", "--quiet")
    assert r.returncode == 2
    assert r.stderr.strip() == (f"calsim: error: --db: cannot open {str(tmp_path / 'missing' / 'x.duckdb')!r} as a "
                                f"DuckDB database: its directory does not exist ({str(tmp_path / 'missing')!r})")
    assert not (tmp_path / "missing").exists()


def test_compare_of_a_missing_store_is_one_line(tmp_path):
    r = run("compare", tmp_path / "none.duckdb")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_report_refuses_an_unknown_parameter_before_running(tmp_path):
    out = tmp_path / "r.html"
    r = run("report", ROOT / "notebooks" / "04_tzdata_upgrade.ipynb", "-p", "olde=2026a", "--out", out)
    assert r.returncode == 2
    assert r.stderr.startswith("calsim: error: -p: unknown parameter 'olde' for 04_tzdata_upgrade.ipynb (allowed: ")
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()


def test_report_refuses_a_missing_notebook(tmp_path):
    r = run("report", tmp_path / "nope.ipynb", "--out", tmp_path / "r.html")
    assert r.returncode == 2
    assert "notebook: " in r.stderr and "does not exist" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_report_renders_notebook_04_with_parameters_and_embedded_figures(tmp_path, report):
    out = tmp_path / "report.html"
    t0 = time.perf_counter()
    r = run("report", ROOT / "notebooks" / "04_tzdata_upgrade.ipynb", "-p", "old=2026a", "-p", "new=2026f",
            "-p", "fleet_spec=example:300", "--out", out)
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    assert html.count("data:image/png;base64,") >= 1
    assert "tzdata 2026a -&gt; 2026f" in html or "tzdata 2026a -> 2026f" in html
    report.append(f"calsim report notebooks/04 (300 schedules) -> {out.stat().st_size:,} bytes HTML in "
           f"{time.perf_counter() - t0:.1f} s")


def test_demo_writes_store_and_png_and_prints_the_comparison(tmp_path, report):
    t0 = time.perf_counter()
    r = run("demo", cwd=tmp_path)
    elapsed = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "calsim-demo.duckdb").is_file() and (tmp_path / "calsim-demo.png").is_file()
    assert "demo-all" in r.stdout and "demo-latest" in r.stdout and "demo-skip" in r.stdout
    assert "notebooks/02_outages_and_catchup.ipynb" in r.stdout
    with calsim.LedgerStore(tmp_path / "calsim-demo.duckdb", read_only=True) as store:
        assert store.scenarios()["name"].to_list() == ["demo-all", "demo-latest", "demo-skip"]
    report.append(f"calsim demo: {elapsed:.1f} s (speed is benchmarks/simulate_benchmark.py's to judge, not a test's)")


@pytest.mark.parametrize("name", ["crontab", "cronjobs.yaml", "calendar.ics", "fleet.toml"])
def test_every_input_format_is_detected_by_content(tmp_path, name):
    # The file is copied under a neutral name: the content, not the suffix, decides.
    src = ROOT / "data" / "examples" / name
    dst = tmp_path / "input"
    dst.write_bytes(src.read_bytes())
    r = run("expand", dst, "--from", "2026-03-01T00:00Z", "--to", "2026-04-01T00:00Z", "--release", "2026f")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == str(len(calsim.load(src)))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", "no CronJob"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:x\nRRULE:FREQ=DAILY\nEND:VEVENT\nEND:VCALENDAR\n", "DTSTART"),
        ("0 25 * * * /bin/true\n", "line 1"),
    ],
)
def test_bad_imported_file_gives_one_line_and_exit_2(tmp_path, body, message):
    p = tmp_path / "in"
    p.write_text(body)
    r = run("preview", p)
    assert r.returncode == 2, r.stdout
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr and str(p.name) in r.stderr, r.stderr


def test_expand_from_the_last_day_of_year_9999_stops_where_every_local_time_is_still_in_9999():
    r = run("expand", "example:3", "--from", "9999-12-31T00:00Z")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() and "10000-" not in r.stdout
    r = run("expand", "example:3", "--from", "9999-12-31T00:00Z", "--to", "9999-12-31T10:00:01Z")
    assert r.returncode == 2 and "end:" in r.stderr and "9999-12-31T09:59:59Z" in r.stderr
