"""The command line: one line on stderr and exit 2 for every bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest

from calsim.cli import main


def run(*args):
    return subprocess.run([sys.executable, "-m", "calsim", *args], capture_output=True, text=True)


def test_releases_lists_shipped_installed_and_system():
    p = run("releases")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["version", "zones", "source"]
    assert any(line.startswith("2026f ") for line in lines)
    assert any(line.startswith("installed (") for line in lines)


def test_resolve_prints_a_table_with_notes(capsys):
    assert main(["resolve", "America/New_York", "2026-11-01T01:30", "--release", "2026f", "--fold", "both"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["2026-11-01T01:30:00", "0", "2026-11-01T05:30:00Z", "-14400", "fold", "dst_fold_both"]
    assert out[2].split() == ["2026-11-01T01:30:00", "1", "2026-11-01T06:30:00Z", "-18000", "fold", "dst_fold_both"]


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["resolve", "Mars/Olympus", "2026-01-01T00:00"], "calsim: error: zone: unknown zone 'Mars/Olympus'"),
        (["resolve", "UTC", "2026-01-01T00:00Z"], "calsim: error: local_times: '2026-01-01T00:00Z' carries an offset"),
        (["resolve", "UTC", "2026-01-01T00:00", "--release", "1999z"],
         "calsim: error: release: unknown release '1999z'"),
        (["resolve", "UTC", "yesterday"], "calsim: error: local_times: cannot parse 'yesterday'"),
        (["resolve", "America/New_York", "2026-03-08T02:30", "--release", "2026f", "--gap", "reject"],
         "calsim: error: gap: local time"),
        (["resolve", "UTC", "2026-01-01T00:00", "--gap", "sideways"],
         "calsim resolve: error: argument --gap: invalid choice"),
        (["resolve", "UTC", "2026-01-01T00:00", "--gap", "shfit"],
         "calsim resolve: error: argument --gap: invalid choice: 'shfit'"),
        (["simulat", "x"], "calsim: error: argument command: invalid choice: 'simulat'"),
    ],
)
def test_bad_input_prints_one_line_and_exits_2(args, start):
    p = run(*args)
    assert p.returncode == 2
    assert p.stderr.startswith(start) or p.stderr.splitlines()[0].startswith(start), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


class TestTzdiffGate:
    WINDOW = ["--from", "2026-01-01T00:00Z", "--to", "2027-01-01T00:00Z"]

    def test_exit_0_when_nothing_moves_even_with_fail_on_change(self):
        p = run("tzdiff", "example:50", "--old", "2026f", "--new", "2026f", *self.WINDOW, "--fail-on-change")
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith("0 of 50 schedules change between tzdata 2026f and 2026f")

    def test_exit_1_with_fail_on_change_when_something_moves_and_summary_first(self):
        p = run("tzdiff", "example:300", "--old", "2025b", "--new", "2026f", *self.WINDOW, "--fail-on-change")
        assert p.returncode == 1, p.stderr
        first = p.stdout.splitlines()[0]
        assert " of 300 schedules change between tzdata 2025b and 2026f" in first
        assert "first on" in first or "already in effect since" in first  # depends on today's date

    def test_what_if_override_from_the_command_line(self, tmp_path):
        out = tmp_path / "diff.parquet"
        p = run("tzdiff", "example:300", "--old", "2026f", "--new", "2026f", *self.WINDOW, "--format", "parquet",
                "--output", str(out), "--override", "America/New_York@2026-06-01T00:00Z=EST5")
        assert p.returncode == 0, p.stderr
        import polars as pl

        diff = pl.read_parquet(out)
        assert diff.height > 0 and set(diff["zone"]) == {"America/New_York"}

    def test_csv_goes_to_stdout_with_the_summary_on_stderr(self):
        p = run("tzdiff", "example:300", "--old", "2025b", "--new", "2026f", *self.WINDOW, "--format", "csv")
        assert p.returncode == 0
        assert p.stdout.splitlines()[0].startswith("schedule_id,revision,nominal_local,fold,zone,old_utc")
        assert " schedules change " in p.stderr

    @pytest.mark.parametrize(
        ("args", "start"),
        [
            (["--old", "1999x", "--new", "2026f"], "calsim: error: release: unknown release '1999x'"),
            (["--old", "/nonexistent/tzdata.whl", "--new", "2026f"],
             "calsim: error: release: path '/nonexistent/tzdata.whl' does not exist"),
            (["--old", "2026f", "--new", "2026f", "--override", "Europe/Paris@2027-01-01T00:00Z=nonsense"],
             "calsim: error: posix_tz: cannot parse 'nonsense'"),
            (["--old", "2026f", "--new", "2026f", "--from", "2027-01-01T00:00Z", "--to", "2026-01-01T00:00Z"],
             "calsim: error: --to: '2026-01-01T00:00Z' is not after --from '2027-01-01T00:00Z'"),
        ],
    )
    def test_bad_input_exits_2_with_one_line_and_writes_nothing(self, args, start, tmp_path):
        out = tmp_path / "diff.parquet"
        p = run("tzdiff", "example:20", *args, "--format", "parquet", "--output", str(out))
        assert p.returncode == 2
        assert p.stderr.startswith(start), p.stderr
        assert len(p.stderr.strip().splitlines()) == 1
        assert not out.exists() and list(tmp_path.iterdir()) == []

    def test_unreadable_fleet_file_exits_2(self, tmp_path):
        p = run("tzdiff", str(tmp_path / "missing.toml"), "--old", "2026f", "--new", "2026f")
        assert (p.returncode == 2 and p.stderr.startswith("calsim: error: load: cannot read")
                and "missing.toml" in p.stderr)


def test_tzdiff_writes_into_the_ledger_store_when_asked(tmp_path):
    db = tmp_path / "ledger.duckdb"
    args = ["tzdiff", "example:300", "--old", "2025b", "--new", "2026f", "--from", "2026-01-01T00:00Z",
            "--to", "2027-01-01T00:00Z", "--db", str(db), "--name", "upgrade-2026f"]
    p = run(*args)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].endswith(f"; written to {db} as 'upgrade-2026f'")
    import calsim

    with calsim.LedgerStore(str(db)) as store:
        stored = store.tzdiff("upgrade-2026f")
    diff = calsim.tzdiff(calsim.examples.fleet(300), "2025b", "2026f", "2026-01-01T00:00Z", "2027-01-01T00:00Z")
    assert stored.equals(diff)
    assert run(*args).returncode == 0  # writing the same diff again changes nothing
