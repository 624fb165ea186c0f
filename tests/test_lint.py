"""The linter's and the type checker's verdicts are part of the test command (so ``.ci/run`` fails on either):
``ruff check`` and ``mypy`` (both configured in ``pyproject.toml``) pass.

Run them alone with ``.venv/bin/ruff check`` (``--fix`` repairs the safe ones) and ``.venv/bin/mypy``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Issue 28 found 47 ``# type: ignore`` comments before a type checker ran (78 when it started); one is left,
# justified on its line, and mypy's warn_unused_ignores fails on one that silences nothing. The bound only falls.
MAX_TYPE_IGNORES = 1


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is not installed: it comes with the test extras (pip install -e '.[test]')"
    return found


def type_ignores() -> list[str]:
    """Every ``# type: ignore`` comment in the package, as ``path:line``."""
    found = []
    for path in sorted((ROOT / "calsim").rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"#\s*type:\s*ignore", line):
                found.append(f"{path.relative_to(ROOT)}:{n}")
    return found


def test_ruff_finds_nothing_in_the_package_tests_tools_and_benchmarks():
    out = subprocess.run([_tool("ruff"), "check", "--no-cache", "--output-format", "concise",
                          "calsim", "tests", "tools", "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_finds_no_type_error_in_the_package():
    out = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True)  # [tool.mypy] says what
    assert out.returncode == 0, out.stdout[-8000:] + out.stderr


def test_fewer_type_ignores_than_before_the_type_checker_ran():
    found = type_ignores()
    assert len(found) <= MAX_TYPE_IGNORES, f"{len(found)} '# type: ignore' (at most {MAX_TYPE_IGNORES}): {found}"


def test_every_mutant_still_applies_to_the_code_it_names():
    """A mutant whose snippet no longer occurs once (code moved or reworded) pins nothing: ``tools/mutants.py``
    and ``tools/mutants_sim.py`` follow the code they mutate."""
    import runpy

    tool = runpy.run_path(str(ROOT / "tools" / "mutants.py"))
    mutants = tool["MUTANTS"] + runpy.run_path(str(ROOT / "tools" / "mutants_sim.py"))["MUTANTS"]
    stale = {m["id"]: why for m in mutants if (why := tool["check"](ROOT, m))}
    assert not stale, stale
