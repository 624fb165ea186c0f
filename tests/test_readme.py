"""README = truth: every example in it runs, its quoted outputs are what the code prints, its help texts are whole.

Python blocks run in order in one namespace (as a reader pastes them), in a
temporary directory; a line that needs what this machine does not have (a
Dask cluster at an address, the network, a wheel the reader downloaded) is
replaced by its local equivalent, each listed in ``SUBSTITUTES`` with why.
Every ``calsim ...`` line of a bash block is parsed by the real argument
parser, and the quick ones are run. Comments that quote an output
(``# 2026-03-08: not run, ...``) are compared with what the code prints.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import calsim
from calsim.cli import _parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def blocks(lang: str) -> list[tuple[int, str]]:
    """``(line, code)`` of every fenced block of ``lang``."""
    out, lines = [], README.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == f"```{lang}":
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            out.append((start + 1, "\n".join(body)))
        i += 1
    return out


WHEEL = next((ROOT / "data" / "tzdata").glob("tzdata-*.whl"))
# README text -> what runs here instead, and why.
SUBSTITUTES = {
    'Client("tcp://scheduler.internal:8786")': ("Client(processes=False, n_workers=1, threads_per_worker=1)",
                                               "no cluster at that address here: a local one"),
    'output="/shared/ledgers"': ('output="ledgers"', "a local directory instead of a shared one"),
    'ledgers = "/shared/ledgers"': ('ledgers = "ledgers"', "the same local directory"),
    'LedgerDataset.open("/shared/ledgers", "incident-latest")': ('LedgerDataset.open("ledgers", "incident-latest")',
                                                                "the same local directory"),
    'store.compare([ds.name, "incident-all"])': ("store.compare([ds.name])",
                                                 "'incident-all' is the reader's own second scenario"),
    'calsim.Release.from_path("tzdata-2024.2-py2.py3-none-any.whl")': (
        f"calsim.Release.from_path({str(WHEEL)!r})", "a wheel this checkout ships instead of one downloaded"),
    'calsim.fetch_release("2024b")': ("calsim.release(calsim.releases()[0])", "no network in tests"),
    'store.reconcile("incident-latest", "history.csv")': (
        'store.reconcile("incident-latest", ledger.frame.filter(pl.col("started_utc").is_not_null())'
        '.select("schedule_id", "nominal_local", "started_utc"))', "the history is the ledger's own runs"),
}


def _python_program() -> str:
    code = "import polars as pl\n" + "\n".join(body for _, body in blocks("python"))
    for text, (instead, _why) in SUBSTITUTES.items():
        assert text in code, f"README no longer has {text!r}: update SUBSTITUTES"
        code = code.replace(text, instead)
    return code


def test_every_python_block_runs_in_order(tmp_path):
    program = tmp_path / "readme_blocks.py"
    program.write_text(_python_program())
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    p = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, cwd=tmp_path, env=env,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]


def test_quoted_preview_output_is_what_preview_prints():
    block = next(body for _, body in blocks("python") if "calsim.preview(nightly" in body)
    quoted = [line[2:] for line in block.splitlines() if line.startswith("# 2026-")]
    nightly = calsim.Schedule("billing/nightly", "America/New_York", "2026-03-06T02:30", "FREQ=DAILY;COUNT=4",
                              gap="skip")
    assert calsim.preview(nightly, n=4, release="2026f")["explain"].to_list() == quoted


def test_quoted_releases_are_offline():
    quoted = re.search(r"calsim\.releases\(\)\s+# \[(.*?), \.\.\.\]", README).group(1)
    assert [v.strip(" '") for v in quoted.split(",")] == calsim.releases()[: len(quoted.split(","))]


def _cli_lines() -> list[list[str]]:
    out = []
    for _, body in blocks("bash"):
        for line in body.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("calsim "):
                out.append(shlex.split(line)[1:])
    return out


CLI = _cli_lines()


@pytest.mark.parametrize("argv", CLI, ids=[" ".join(a)[:60] for a in CLI])
def test_every_cli_line_parses(argv):
    argv = [a for a in argv if a not in ("[--fetch", "2024b]")]  # "[--fetch 2024b]": an optional part
    args = _parser().parse_args(argv)
    assert callable(args.func)


QUICK = [a for a in CLI if a[0] in ("preview", "tzdiff", "expand") and "--output" not in a]


@pytest.mark.parametrize("argv", QUICK, ids=[" ".join(a)[:60] for a in QUICK])
def test_quick_cli_lines_run(argv, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CALSIM_NOW": "2026-12-01T00:00Z"}
    if "crontab" in argv:  # the reader's own crontab: the shipped example instead
        argv = [str(ROOT / "data" / "examples" / "crontab") if a == "crontab" else a for a in argv]
    p = subprocess.run([sys.executable, "-m", "calsim", *argv], capture_output=True, text=True, cwd=ROOT, env=env,
                       timeout=300)
    assert p.returncode in (0, 1), p.stderr  # 1: tzdiff --fail-on-change found a change, as documented


def test_fleet_help_names_every_format_calsim_detects():
    help_text = " ".join(_parser()._subparsers._group_actions[0].choices["preview"].format_help().split())
    for kind in ("TOML", "crontab", "Kubernetes", ".ics", "systemd .timer", "EventBridge", "CloudFormation",
                 "Terraform", "GitHub workflow", "Temporal", "example:N"):
        assert kind in help_text, kind


def test_formats_table_lists_every_importer():
    for name in calsim.importers.__all__:
        if name.startswith("from_"):
            assert f"calsim.{name}" in README, name


def test_sections_the_readme_refers_to_exist():
    headings = {h.strip() for h in re.findall(r"^#+ (.+)$", README, re.M)}
    cited = re.findall(r'see "([^"]+)"|the "([^"]+)" section', README)
    for pair in cited:
        name = pair[0] or pair[1]
        assert name in headings, name
