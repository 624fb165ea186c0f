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
        (["resolve", "UTC", "2026-01-01T00:00", "--release", "1999z"], "calsim: error: release: unknown release '1999z'"),
        (["resolve", "UTC", "yesterday"], "calsim: error: local_times: cannot parse 'yesterday'"),
        (["resolve", "America/New_York", "2026-03-08T02:30", "--release", "2026f", "--gap", "reject"], "calsim: error: gap: local time"),
        (["resolve", "UTC", "2026-01-01T00:00", "--gap", "sideways"], "usage: calsim resolve"),
    ],
)
def test_bad_input_prints_one_line_and_exits_2(args, start):
    p = run(*args)
    assert p.returncode == 2
    assert p.stderr.startswith(start) or p.stderr.splitlines()[0].startswith(start), p.stderr
    if not start.startswith("usage"):
        assert len(p.stderr.strip().splitlines()) == 1
