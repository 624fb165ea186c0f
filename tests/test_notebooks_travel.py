"""Notebooks and reports that travel (issue 17, item 4).

A notebook runs from a copy in another directory with the parameters it is
given (its helpers are in the package); notebook 04's tables follow its
window, zone and releases, the zones that matter first, and its conclusion
counts behaviour changes only; ``calsim report`` writes one self-contained
HTML file with a real title, optionally without code, and prints no kernel
warning; the demo's "Next:" line says how to get what it tells you to open.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import polars as pl
import pytest

import calsim
from calsim.demo import next_steps
from calsim.notebook import behaviour_changes, freeze_clocks, zones_by_impact
from calsim.report import notebook_parameters

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NB04 = ROOT / "notebooks" / "04_tzdata_upgrade.ipynb"


def _text(cell) -> str:
    """Every text output of a code cell, stream or text/plain, joined."""
    parts = []
    for out in cell.get("outputs", ()):
        if out.get("output_type") == "stream":
            parts.append(out["text"])
        elif "data" in out:
            parts.append(out["data"].get("text/plain", ""))
    return "\n".join(parts)


def _cell(nb, needle: str):
    hits = [c for c in nb.cells if c.cell_type == "code" and needle in c.source]
    assert len(hits) == 1, f"{needle!r} is in {len(hits)} code cells"
    return hits[0]


def _table_rows(text: str) -> list[list[str]]:
    """The body rows of a polars table printed as text (cells split on the column separator)."""
    return [[v.strip() for v in line.strip("│ ").split("┆")] for line in text.splitlines()
            if line.startswith("│") and "┆" in line][1:]


# -- helpers live in the package ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_imports_only_installed_modules(path):
    # A module beside the notebooks (the old _nb.py) is not on sys.path of a copy or of papermill run elsewhere.
    import importlib.util

    nb = nbformat.read(path, as_version=4)
    tree = ast.parse("\n".join(c.source for c in nb.cells if c.cell_type == "code" and not c.source.startswith("%")))
    names = {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    names |= {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert names and all(importlib.util.find_spec(name) is not None for name in names), names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_parameter_defaults_are_not_paths_into_the_repository(path):
    defaults = notebook_parameters(path)
    assert defaults
    assert not [v for v in defaults.values() if isinstance(v, str) and ("../" in v or "data/" in v)], defaults


# -- notebook 04 from a copy, with non-default parameters ---------------------------------------------------------


@pytest.fixture(scope="module")
def nb04_elsewhere(tmp_path_factory):
    """Notebook 04 copied into a temporary directory, run by papermill from a third one with other parameters."""
    base = tmp_path_factory.mktemp("travel")
    (base / "copy").mkdir()
    (base / "cwd").mkdir()
    copy = base / "copy" / "tz_upgrade.ipynb"
    shutil.copy(NB04, copy)
    out = base / "out.ipynb"
    # 2022e -> 2024a: Mexico abolished DST (its schedules move from April 2027), five names became links.
    params = {"old": "2022e", "new": "2024a", "fleet_spec": "example:300", "window_start": "2027-01-01T00:00Z",
              "window_end": "2027-07-01T00:00Z", "what_if_zone": "America/New_York", "materialised_days": 3}
    args = [a for k, v in params.items() for a in ("-p", k, str(v))]
    env = {**os.environ, "CALSIM_OUT": str(base / "calsim-out")}
    r = subprocess.run([sys.executable, "-m", "papermill", str(copy), str(out), *args, "--no-progress-bar"],
                       cwd=base / "cwd", capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return nbformat.read(out, as_version=4)


def test_notebook_04_copied_elsewhere_runs_with_its_window_and_releases(nb04_elsewhere):
    text = _text(_cell(nb04_elsewhere, "out_dir = setup()"))
    assert "tzdata 2022e -> 2024a; window 2027-01-01 00:00 .. 2027-07-01 00:00 UTC" in text


def test_notebook_04_outputs_stay_inside_the_window(nb04_elsewhere):
    outputs = "\n".join(_text(c) for c in nb04_elsewhere.cells if c.cell_type == "code"
                        and "NBVAL_IGNORE_OUTPUT" not in c.source)
    dates = set(re.findall(r"\b20\d\d-\d\d-\d\d\b", outputs))
    # The one date allowed before the window: when a change already in effect at its start began (issue 30;
    # Mexico's abolished DST, which servers on 2022e got wrong in the summer of 2026).
    since = set(re.findall(r"already in effect since\s+(20\d\d-\d\d-\d\d)\b", outputs))
    assert since == {"2026-04-05"}, since
    # Nothing of the defaults' window (December 2026 on); the window's end shows as an exclusive bound.
    dates -= since
    assert dates and min(dates) >= "2027-01-01" and max(dates) <= "2027-07-01", sorted(dates)


def test_notebook_04_what_if_follows_the_zone_parameter(nb04_elsewhere):
    what_if = _text(_cell(nb04_elsewhere, "freeze_clocks("))
    # New York's first clock change of 2027: 14 March, 02:00 EST = 07:00 UTC.
    assert re.match(r"America/New_York keeps its clocks from 2027-03-14 07:00 UTC: [1-7] of its 7 schedules move",
                    what_if), what_if
    assert not any("Berlin" in _text(c) for c in nb04_elsewhere.cells if c.cell_type == "code")


def test_notebook_04_lists_the_zones_with_affected_schedules_first(nb04_elsewhere):
    rows = _table_rows(_text(_cell(nb04_elsewhere, "clock_zones = ")))
    zones = [r[0] for r in rows]
    assert zones[0] == "America/Mexico_City"  # 12 schedules of the fleet move there; alphabetically it is 8th
    assert sorted(set(zones)).index("America/Mexico_City") == 7
    affected = [int(r[2]) for r in rows]
    assert affected == sorted(affected, reverse=True) and affected[0] > 0


def test_notebook_04_conclusion_counts_no_link_as_a_clock_change(nb04_elsewhere):
    conclusion = dict(r[:2] for r in _table_rows(_text(_cell(nb04_elsewhere, "conclusion = pl.DataFrame("))))
    z = calsim.zone_changes("2022e", "2024a", "2027-01-01T00:00Z", "2027-07-01T00:00Z")
    links = z.filter(pl.col("kind") == "now_link")["zone"].n_unique()
    assert links == 5  # Nipigon, Pangnirtung, Rainy_River, Thunder_Bay, Yellowknife: links, no clock change
    assert conclusion["zones whose clocks change in the window"] == str(z["zone"].n_unique() - links)
    assert conclusion["... of them under schedules of this fleet"] == "1"


def test_notebook_04_upgrade_defaults_to_the_first_move_and_its_materialisation_parameter(nb04_elsewhere):
    conclusion = dict(r[:2] for r in _table_rows(_text(_cell(nb04_elsewhere, "conclusion = pl.DataFrame("))))
    stale = {q: a for q, a in conclusion.items() if q.startswith("runs at a stale instant after upgrading at")}
    # Mexico City's old release still had DST from 4 April 2027, 02:00 CST (08:00 UTC): the first run that moves
    # is the first one after it.
    assert len(stale) == 1 and re.fullmatch(
        r"runs at a stale instant after upgrading at 2027-04-04 08:\d\d UTC \(3-day materialisation\)",
        next(iter(stale)))
    assert int(next(iter(stale.values()))) > 0


# -- the helpers notebook 04 uses ---------------------------------------------------------------------------------


def _diff_rows(rows):
    schema = {"schedule_id": pl.String, "zone": pl.String, "shift_s": pl.Int64, "change": pl.String,
              "old_utc": pl.Datetime("us", "UTC"), "new_utc": pl.Datetime("us", "UTC")}
    return pl.DataFrame([(*r, None, None) for r in rows], schema=schema, orient="row")


def test_behaviour_changes_drop_links_and_notes_only_rows_and_keep_runs_that_appear_or_vanish():
    d = _diff_rows([("a", "X/Y", 3600, "moved"), ("b", "X/Y", 0, "no_longer_gap"), ("c", "X/Y", None, "now_gap"),
                    ("d", "X/Z", 0, "now_link"), ("e", "X/Z", None, "now_link")])
    assert behaviour_changes(d)["schedule_id"].to_list() == ["a", "c"]


def test_behaviour_changes_refuse_a_frame_that_is_neither_a_diff_nor_zone_changes():
    with pytest.raises(calsim.CalsimError, match="expected a calsim.zone_changes or calsim.tzdiff frame"):
        behaviour_changes(pl.DataFrame({"zone": ["UTC"]}))


def test_zones_by_impact_sorts_by_affected_schedules_not_by_name_or_occurrences():
    havana = [calsim.Schedule(f"h{i}", "America/Havana", "2026-12-01T09:00", "FREQ=DAILY") for i in range(3)]
    casablanca = [calsim.Schedule("c", "Africa/Casablanca", "2026-12-01T00:00", "FREQ=HOURLY")]
    d = calsim.tzdiff(casablanca + havana, "2026a", "2026f", "2026-12-01T00:00Z", "2027-06-01T00:00Z")
    z = zones_by_impact(d, casablanca + havana)
    assert z["zone"].to_list() == ["America/Havana", "Africa/Casablanca"]
    assert z["affected"].to_list() == [3, 1] and z["occurrences"][1] > z["occurrences"][0]


def test_freeze_clocks_keeps_the_offset_in_force_before_the_zones_next_change():
    what_if, at = freeze_clocks("2026f", "America/New_York", "2026-12-01T00:00Z", "2027-12-01T00:00Z")
    assert str(at) == "2027-03-14 07:00:00+00:00"
    offsets = calsim.resolve(["2027-03-13T12:00", "2027-07-01T12:00", "2027-12-01T12:00"], "America/New_York",
                             what_if)["utc_offset_s"].to_list()
    assert offsets == [-18000, -18000, -18000]  # EST all year from then on


# -- calsim report ------------------------------------------------------------------------------------------------

TINY = {
    "cells": [
        {"id": "prose", "cell_type": "markdown", "metadata": {},
         "source": "# Tiny *report*: parameters `travel`\n\nProse."},
        {"id": "params", "cell_type": "code", "metadata": {"tags": ["parameters"]}, "execution_count": None,
         "outputs": [], "source": 'source_file = "absent.txt"   # read from the directory the report runs in'},
        {"id": "work", "cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\n"
                   "print('CONTENT:', open(source_file).read().strip())\n"
                   "fig, ax = plt.subplots(figsize=(2, 1))\nax.plot([0, 1], [1, 0])\nfig"},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The tiny notebook (in one directory) reported from another, with and without --no-input, by the CLI."""
    base = tmp_path_factory.mktemp("report")
    (base / "nb").mkdir()
    (base / "caller").mkdir()
    notebook = base / "nb" / "tiny.ipynb"
    notebook.write_text(json.dumps(TINY))
    (base / "caller" / "mine.txt").write_text("read from the caller directory\n")
    out = {}
    for name, extra in (("full", []), ("no_input", ["--no-input"])):
        r = subprocess.run([sys.executable, "-m", "calsim", "report", str(notebook), "-p", "source_file=mine.txt",
                            "--out", str(base / f"{name}.html"), *extra],
                           cwd=base / "caller", capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        out[name] = ((base / f"{name}.html").read_text(encoding="utf-8"), r.stdout + r.stderr)
    return out


def _without_data_uris(html: str) -> str:
    # Base64 images and icons may hold any three letters ("cdn"): only the rest of the file is searched.
    return re.sub(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+", "data:", html)


def test_report_loads_nothing_from_the_network(reports):
    for html, _ in reports.values():
        rest = _without_data_uris(html)
        assert not re.search(r"<script[^>]*\bsrc\s*=", rest)
        assert not re.search(r"""(?i)\b(src|href)\s*=\s*["']?(https?:)?//""", rest)
        assert not re.search(r"(?i)@import|url\(\s*[\"']?(https?:)?//", rest)
        for word in ("cdn", "mathjax", "require.js", "requirejs"):
            assert word not in rest.lower(), word


def test_report_embeds_its_chart(reports):
    assert reports["full"][0].count("data:image/png;base64,") == 1


def test_report_title_is_the_first_heading_with_the_parameters(reports):
    assert "<title>Tiny report: parameters travel (source_file=mine.txt)</title>" in reports["full"][0]


def test_report_reads_relative_parameters_from_the_callers_directory(reports):
    assert "CONTENT: read from the caller directory" in reports["full"][0]


def test_report_no_input_leaves_the_code_out_and_keeps_prose_and_outputs(reports):
    full, bare = reports["full"][0], reports["no_input"][0]
    code = 'class="highlight hl-ipython3"'  # nbconvert's highlighted input of a code cell
    assert full.count(code) == 3 and code not in bare  # the two cells and papermill's injected parameters
    assert "Prose." in bare and "CONTENT: read from the caller" in bare and "data:image/png;base64," in bare


def test_report_prints_no_kernel_or_debugger_warning(reports):
    for _, terminal in reports.values():
        # "Kernel is running over TCP without encryption" (ipykernel 7), debugpy's frozen-modules warning: none.
        assert len(terminal.strip().splitlines()) == 1, terminal
        assert terminal.startswith("report written to "), terminal


# -- what the demo says to open -----------------------------------------------------------------------------------


def test_demo_next_line_says_how_to_install_and_open_jupyterlab():
    lines = next_steps(ROOT / "calsim-demo.duckdb", cwd=ROOT)
    text = "\n".join(lines)
    bin_dir = Path(sys.executable).parent  # .venv/bin for the README's commands: shown relative to the checkout
    shown = bin_dir.relative_to(ROOT) if bin_dir.resolve().is_relative_to(ROOT) else bin_dir
    assert lines[0].startswith("Next:    ")
    assert f'{shown / "pip"} install -e ".[lab]"' in text
    assert f'{shown / "jupyter"} lab notebooks/02_outages_and_catchup.ipynb' in text
    assert "`calsim compare calsim-demo.duckdb`" in text


def test_lab_extra_installs_jupyterlab():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(req.startswith("jupyterlab") for req in extras["lab"])


def test_jupyter_lab_command_the_demo_names_runs_here():
    # The test environment has the lab requirement (it is in [test] too): the named command must start.
    jupyter = Path(sys.executable).parent / "jupyter"
    r = subprocess.run([str(jupyter), "lab", "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip()[0].isdigit(), r.stderr
