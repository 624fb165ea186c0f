"""Which version of each oracle the tests' expectations were measured with, and that it is the one here.

A test against a real scheduler encodes that scheduler's behaviour at one
version (cronsim 2.9 reads ``a-a/n`` as Debian cron, 2.8 did not). Each
oracle below names the range its expectations hold for and where they are;
the installed version must be inside it (``pyproject.toml`` pins the PyPI
ones to the same ranges, ``.ci/run`` installs the Debian ones). Every
version is printed, so a run's log says what it ran against.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from oracles.native import unavailable

ROOT = Path(__file__).resolve().parents[1]


def _pypi(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _dpkg(name: str) -> str | None:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Status} ${Version}", name], capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.startswith("install ok installed"):
        return None
    return out.stdout.split()[-1]


def _java_tzdb() -> str | None:
    for path in Path("/usr/lib/jvm").glob("*/lib/tzdb.dat"):
        data = path.read_bytes()[:64]
        m = re.search(rb"TZDB\x00\x01\x00\x05(\d{4}[a-z])", data)
        if m:
            return m.group(1).decode()
    return None


@dataclass(frozen=True)
class Oracle:
    name: str
    version: object  # () -> str | None
    low: str  # inclusive
    high: str  # exclusive: the next version, whose behaviour nobody measured
    expectations: str  # which tests encode its behaviour
    install: str

    def installed(self) -> str | None:
        return self.version()


ORACLES = (
    Oracle("cronsim", lambda: _pypi("cronsim"), "2.9", "2.10",
           "tests/rules/test_cron.py, tests/presets/test_presets.py, "
           "tests/test_expansion.py (a-a/n is {a} from 2.9 on)", "pip install -e '.[test]'"),
    Oracle("APScheduler", lambda: _pypi("apscheduler"), "3.11", "3.12", "tests/presets/test_apscheduler.py "
           "(3.11.3's zoneinfo DST and misfire code)", "pip install -e '.[test]'"),
    Oracle("python-dateutil", lambda: _pypi("python-dateutil"), "2.9", "2.10", "tests/rules/test_rrule.py "
           "(RRULE in a zone without DST)", "pip install -e '.[test]'"),
    Oracle("robfig/cron (golang-github-robfig-cron-dev)", lambda: _dpkg("golang-github-robfig-cron-dev"), "3.0.1",
           "3.0.2", "tests/rules/test_robfig.py, tests/presets/test_kubernetes.py (v3.0.1, what Kubernetes vendors)",
           "apt-get install golang-go golang-github-robfig-cron-dev"),
    Oracle("Go (golang-go)", lambda: _dpkg("golang-go"), "2:1.19", "2:1.20", "tests/rules/test_robfig.py (time.Date)",
           "apt-get install golang-go"),
    Oracle("Quartz (libquartz2-java)", lambda: _dpkg("libquartz2-java"), "2.3.2", "2.3.3",
           "tests/rules/test_quartz_jar.py, tests/presets/test_quartz.py", "apt-get install libquartz2-java"),
    Oracle("Java tz database (tzdb.dat)", _java_tzdb, "2025a", "2025b", "tests/rules/test_quartz_jar.py (compared "
           "with calsim's 2025a)", "apt-get install openjdk-17-jre-headless"),
    Oracle("systemd (systemd-analyze)", lambda: _dpkg("systemd"), "252", "253",
           "tests/rules/test_calendarspec.py, tests/presets/test_systemd.py", "apt-get install systemd"),
    Oracle("glibc (libc6)", lambda: _dpkg("libc6"), "2.36", "2.37", "tests/rules/test_calendarspec.py (mktime, "
           "ported in calsim/tz/glibc.py)", "apt-get install libc6-dev gcc"),
)


def _key(version: str) -> tuple:
    """A Debian/PEP 440-ish version as a comparable tuple: epoch, then numbers and words in order."""
    epoch, _, rest = version.rpartition(":")
    parts = re.findall(r"\d+|[a-z]+", rest.lower())
    return (int(epoch or 0), *[(0, int(p)) if p.isdigit() else (-1, p) for p in parts])


@pytest.mark.parametrize("oracle", ORACLES, ids=[o.name for o in ORACLES])
def test_each_oracle_is_the_version_its_expectations_were_measured_with(oracle, report):
    version = oracle.installed()
    if version is None:
        unavailable(oracle.name, oracle.install)
    report.append(f"oracle {oracle.name} {version} (expectations measured on [{oracle.low}, {oracle.high}): "
                  f"{oracle.expectations})")
    assert _key(oracle.low) <= _key(version) < _key(oracle.high), (
        f"{oracle.name} {version} is outside [{oracle.low}, {oracle.high}), the versions {oracle.expectations} "
        "were measured with: re-measure and move the range, or install a version inside it")


def test_the_recorded_daemon_fixtures_name_the_versions_they_were_captured_with():
    names = sorted(p.name for p in (ROOT / "tests" / "fixtures" / "cron_daemon").glob("*.json"))
    assert names and all(".cron-3.0pl1-162." in n and ".faketime-0.9.10" in n for n in names), names


def test_the_pypi_oracles_are_pinned_to_these_ranges_in_pyproject():
    text = (ROOT / "pyproject.toml").read_text()
    for dist, o in (("cronsim", ORACLES[0]), ("apscheduler", ORACLES[1]), ("python-dateutil", ORACLES[2])):
        assert f'"{dist}>={o.low},<{o.high}"' in text, dist


def test_version_keys_order_debian_and_python_versions():
    assert _key("2.9") < _key("2.9.post0") < _key("2.10") and _key("3.0pl1-162") > _key("3.0")
    assert _key("2:1.19~1") < _key("2:1.20") and _key("1:9") > _key("5.0") and _key("2025a") < _key("2025b")
