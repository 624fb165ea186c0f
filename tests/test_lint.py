"""The linter's verdict is part of the test command: ``ruff check`` (configured in ``pyproject.toml``) passes.

Run it alone with ``.venv/bin/ruff check`` (``--fix`` repairs the safe ones).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing_in_the_package_tests_tools_and_benchmarks():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is not installed: it comes with the test extras (pip install -e '.[test]')"
    out = subprocess.run([ruff, "check", "--no-cache", "--output-format", "concise", "calsim", "tests", "tools",
                          "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_mutant_still_applies_to_the_code_it_names():
    """A mutant whose snippet no longer occurs once (code moved or reworded) pins nothing: ``tools/mutants.py``
    and ``tools/mutants_sim.py`` follow the code they mutate."""
    import runpy

    tool = runpy.run_path(str(ROOT / "tools" / "mutants.py"))
    mutants = tool["MUTANTS"] + runpy.run_path(str(ROOT / "tools" / "mutants_sim.py"))["MUTANTS"]
    stale = {m["id"]: why for m in mutants if (why := tool["check"](ROOT, m))}
    assert not stale, stale
