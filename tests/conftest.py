"""Shared fixtures, and the rule that no test may be skipped without a printed, allowed reason."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # for the oracle helpers

# A skip is allowed only when its reason says why it cannot run on this
# machine, prefixed so; any other skip fails the session (CI must not go
# green with tests quietly not running).
ALLOWED_SKIP_PREFIX = "not applicable here:"

_unexpected_skips: list[str] = []


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if ALLOWED_SKIP_PREFIX not in reason:
            _unexpected_skips.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session, exitstatus):
    # Under pytest-xdist a worker hands its "checked" lines to the controller, which prints them.
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["checked"] = list(session.config.stash.get(_REPORT_KEY, []))
    if _unexpected_skips and exitstatus == 0:
        session.exitstatus = 1


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist, on the controller: a worker's "checked" lines join the run's summary."""
    node.config.stash.setdefault(_REPORT_KEY, []).extend(getattr(node, "workeroutput", {}).get("checked", []))


_REPORT_KEY = pytest.StashKey[list]()


@pytest.fixture
def report(pytestconfig):
    """A list: lines appended to it are shown in the run's summary (how much an oracle test checked)."""
    return pytestconfig.stash.setdefault(_REPORT_KEY, [])


def pytest_terminal_summary(terminalreporter):
    lines = terminalreporter.config.stash.get(_REPORT_KEY, [])
    if lines:
        terminalreporter.write_sep("-", "checked")
        for line in lines:
            terminalreporter.write_line(line)
    if _unexpected_skips:
        terminalreporter.write_sep("=", "unexpected skips (fail the run)", red=True)
        for line in _unexpected_skips:
            terminalreporter.write_line(line)


SHIPPED = ("2022e", "2022f", "2024a", "2025a", "2025b", "2026a", "2026f")


@pytest.fixture(scope="session")
def r2026f():
    import calsim

    return calsim.release("2026f")
