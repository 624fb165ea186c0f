"""The analyst's first screen (issue "The analyst's and the CI owner's day", items 1 and 2).

``CALSIM_NOW`` fixes the CLI's clock, so what is "already in effect" and the
default windows are the same on any day the tests run. tzdata 2026a -> 2026f:
America/Vancouver stays on UTC-7 from 2026-11-01 (no return to PST), so a
09:00 job runs an hour earlier in UTC than servers on 2026a think.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-12-01T12:00Z"
FLEET = """\
[[schedule]]
id = "vancouver/payroll"
zone = "America/Vancouver"
start = "2026-01-01T09:00"
rule = "FREQ=DAILY"

[[schedule]]
id = "berlin/report"
zone = "Europe/Berlin"
start = "2026-01-01T06:00"
rule = "FREQ=DAILY"
"""


def run(*args: str, stdin: str | None = None, now: str = NOW) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CALSIM_NOW": now}
    return subprocess.run([sys.executable, "-m", "calsim", *map(str, args)], capture_output=True, text=True,
                          env=env, input=stdin, timeout=300)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    p = tmp_path_factory.mktemp("analyst") / "fleet.toml"
    p.write_text(FLEET)
    return p


class TestTzdiffLeadsWithWhatMatters:
    def test_default_window_starts_where_the_releases_first_differ_in_the_past_year(self, fleet):
        p = run("tzdiff", fleet, "--old", "2026a", "--new", "2026f")
        assert p.returncode == 0, p.stderr
        assert "in [2026-11-01T00:00Z, 2027-12-01T00:00Z)" in p.stdout.splitlines()[0]

    def test_summary_line_leads_with_the_change_already_in_effect(self, fleet):
        first = run("tzdiff", fleet, "--old", "2026a", "--new", "2026f").stdout.splitlines()[0]
        assert ("already in effect since 2026-11-01 in America/Vancouver (moved, -3600 s): servers on tzdata 2026a "
                "have run these jobs at the wrong instant since then") in first
        assert "first on" not in first

    def test_a_change_still_to_come_is_not_in_effect(self, fleet):
        first = run("tzdiff", fleet, "--old", "2026a", "--new", "2026f", now="2026-06-01T00:00Z").stdout.splitlines()[0]
        assert "already in effect" not in first and "first on 2026-11-01 in America/Vancouver" in first

    def test_window_given_explicitly_is_kept(self, fleet):
        p = run("tzdiff", fleet, "--old", "2026a", "--new", "2026f", "--from", "2027-01-01T00:00Z", "--to",
                "2027-02-01T00:00Z", "--occurrences", "--format", "csv")
        assert "in [2027-01-01T00:00Z, 2027-02-01T00:00Z)" in p.stderr
        assert p.stdout.count("\n") == 1 + 31  # header + one moved run a day in January

    def test_more_than_a_screenful_prints_one_row_per_schedule_and_a_hint(self, fleet):
        out = run("tzdiff", fleet, "--old", "2026a", "--new", "2026f").stdout.splitlines()
        assert out[1].split() == ["schedule_id", "label", "zone", "first_local_date", "last_local_date", "occurrences",
                                  "shifts_s", "changes", "already_in_effect_since", "shifts"]
        assert out[2].split()[:9] == ["vancouver/payroll", "vancouver/payroll", "America/Vancouver", "2026-11-01",
                                      "2027-11-30", "157", "-3600", "moved", "2026-11-01"]
        assert out[2].endswith("1 h earlier in UTC, same local time")  # the shift in words (issue 30)
        assert out[3].startswith("(one row per schedule; --occurrences lists all 157 occurrences")

    def test_occurrences_flag_lists_every_row(self, fleet):
        out = run("tzdiff", fleet, "--old", "2026a", "--new", "2026f", "--occurrences").stdout.splitlines()
        assert len(out) == 2 + 157 and out[1].split()[0] == "schedule_id" and "old_utc" in out[1]

    def test_format_applies_to_the_summary(self, fleet):
        p = run("tzdiff", fleet, "--old", "2026a", "--new", "2026f", "--summary", "--format", "csv")
        assert p.stdout.splitlines()[0].startswith("schedule_id,label,zone,first_local_date")
        assert p.stdout.splitlines()[1].startswith("vancouver/payroll,vancouver/payroll,America/Vancouver,2026-11-01")

    def test_summary_labels_crontab_jobs_by_command_and_cron_tz_sets_the_daemon_zone(self, tmp_path):
        tab = tmp_path / "crontab"
        tab.write_text("0 9 * * * /opt/payroll/run --all\n")
        p = run("tzdiff", tab, "--old", "2026a", "--new", "2026f", "--cron-tz", "America/Vancouver", "--summary")
        row = p.stdout.splitlines()[2]
        assert "/opt/payroll/run --all" in row and "America/Vancouver" in row

    def test_latest_is_the_newest_offline_release(self, fleet):
        import calsim

        p = run("tzdiff", fleet, "--old", "2026a", "--new", "latest")
        assert f"and {calsim.releases()[-1]} in" in p.stdout.splitlines()[0]


class TestInlineRules:
    def test_cron_rule_inline_with_zone(self):
        p = run("preview", "30 2 * * *", "--zone", "America/New_York", "-n", "3", "--after", "2027-03-13T00:00Z",
                "--release", "2026f")
        assert p.returncode == 0, p.stderr
        rows = p.stdout.splitlines()[1:]
        assert [r.split()[1] for r in rows] == ["2027-03-13T02:30:00", "2027-03-14T02:30:00", "2027-03-15T02:30:00"]
        assert "does not exist in America/New_York" in rows[1]

    def test_rrule_and_oncalendar_inline(self):
        rr = run("preview", "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0", "--zone", "Asia/Tokyo", "-n", "1")
        oc = run("preview", "OnCalendar=Mon 09:00", "--zone", "Asia/Tokyo", "-n", "1")
        assert rr.stdout.splitlines()[1].split()[1] == oc.stdout.splitlines()[1].split()[1] == "2026-12-07T09:00:00"

    def test_from_now_is_a_relative_time_as_systemd_analyze_prints_it(self):
        row = run("preview", "0 18 * * *", "-n", "1").stdout.splitlines()[1]
        assert "6h left" in row  # 12:00Z now, 18:00 UTC next

    def test_stdin_takes_a_rule_or_a_whole_file(self):
        one = run("preview", "-", "-n", "1", stdin="0 18 * * *\n")
        assert one.stdout.splitlines()[1].split()[0] == "inline"
        tab = run("preview", "-", "-n", "1", stdin="0 18 * * * /bin/a\n0 19 * * * /bin/b\n")
        assert [r.split()[0] for r in tab.stdout.splitlines()[1:]] == ["<stdin>:1", "<stdin>:2"]

    @pytest.mark.parametrize("name,first_id", [("prefect.yaml", "nightly-report:1"),
                                               ("dagster-1.13.29-defs.json", None),
                                               ("airflow-3.3.2-dags.json", None),
                                               ("celery-dumpdata.json", None)])
    def test_stdin_takes_each_schedulers_export_as_a_path_would(self, name, first_id):
        text = (ROOT / "tests" / "fixtures" / "readers" / name).read_text()
        p = run("preview", "-", "-n", "1", stdin=text)
        assert p.returncode == 0, p.stderr
        ids = [r.split()[0] for r in p.stdout.splitlines()[1:]]
        assert ids and (first_id is None or ids[0] == first_id)

    def test_a_rule_that_does_not_parse_says_why_in_one_line(self):
        p = run("preview", "30 2 * *")
        assert p.returncode == 2 and "5-field cron expression" in p.stderr and len(p.stderr.splitlines()) == 1


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = tmp_path_factory.mktemp("units") / "c.duckdb"
    p = run("simulate", ROOT / "data" / "examples" / "incident.toml", "--catchup", "all,latest", "--db", db, "--quiet")
    assert p.returncode == 0, p.stderr
    return db


class TestLedgerAnswersInTheUsersUnits:
    def test_spans_print_as_days_and_hours_not_seconds(self, store):
        out = run("compare", store).stdout.splitlines()
        head = out[0].split()
        row = dict(zip(head, _columns(out[0], out[1])))
        assert row["lateness_p95"] == "2d 13h" and row["lateness_max"] == "3d 11h"
        assert "lateness_p95_s" not in head and not any(re.fullmatch(r"\d+\.\d+", v) for v in row.values()
                                                        if v not in (row["cost"],))

    def test_compare_table_leaves_out_reasons_no_scenario_has(self, store):
        head = run("compare", store).stdout.splitlines()[0].split()
        assert "reason_catchup" in head and "reason_dst_gap" not in head and "reason_budget" not in head

    def test_csv_keeps_every_column_in_seconds(self, store):
        head = run("compare", store, "--format", "csv").stdout.splitlines()[0].split(",")
        assert "reason_dst_gap" in head and "lateness_p95_s" in head

    def test_simulate_prints_the_summarys_durations_as_days_and_hours(self):
        p = run("simulate", ROOT / "data" / "examples" / "incident.toml", "--catchup", "all", "--quiet")
        out = p.stdout.splitlines()
        row = dict(zip(out[0].split(), _columns(out[0], out[1])))
        assert row["lateness_p95"] == "2d 13h" and row["lateness_max"] == "3d 11h"
        assert row["budget_wait_mean"] == "8h 28min" and row["lateness_p50"] == "0s"

    def test_csv_and_json_carry_durations_as_seconds_named_with_s(self, capsys):
        import argparse
        import datetime as dt
        import json

        import polars as pl

        from calsim.cli_output import emit as _emit

        frame = pl.DataFrame({"schedule_id": ["a"], "gap": [dt.timedelta(days=3, hours=12)]})
        _emit(frame, argparse.Namespace(format="csv", output=None))
        assert capsys.readouterr().out.splitlines() == ["schedule_id,gap_s", "a,302400.0"]
        _emit(frame, argparse.Namespace(format="json", output=None))
        assert json.loads(capsys.readouterr().out) == [{"schedule_id": "a", "gap_s": 302400.0}]

    def test_seconds_written_for_a_duration_are_the_ledgers_own_float_seconds_bit_for_bit(self):
        import polars as pl

        from calsim.text_table import durations_as_seconds

        us = list(range(151_138_612_000, 151_138_613_000)) + [None]  # lateness_s is µs / 1e6, correctly rounded
        got = durations_as_seconds(pl.DataFrame({"x": pl.Series(us).cast(pl.Duration("us"))}))["x_s"].to_list()
        assert got == [None if v is None else v / 1e6 for v in us]


def _columns(header: str, line: str) -> list[str]:
    """Cells of a fixed-width table row, cut where the header's columns start."""
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    return [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
