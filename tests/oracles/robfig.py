"""robfig/cron v3 itself as an oracle: ``ParseStandard`` and ``SpecSchedule.Next``, built here from Debian's source.

``robfig/main.go`` (ours: a line protocol around the library, no logic of its
own) is built with Debian's Go against Debian's ``golang-github-robfig-cron-dev``
(the library's ``go.mod`` says ``github.com/robfig/cron/v3``; Debian 12 ships
v3.0.1, the version Kubernetes vendors), offline, into the oracle cache. It
parses each spec as the CronJob controller does (``"TZ=<zone> " + spec``,
``pkg/controller/cronjob/utils.go`` ``formatSchedule``) and answers chains of
``Next()`` calls, reading zones from a calsim release's zoneinfo directory
(``ZONEINFO``), so both sides use the same tz data.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from oracles.native import LineProcess, cache_dir, require, unavailable, zoneinfo_dir

SOURCE = Path(__file__).with_name("robfig") / "main.go"
ROBFIG_SRC = Path("/usr/share/gocode/src/github.com/robfig/cron")
PACKAGE = "golang-github-robfig-cron-dev"
VERSION_RANGE = ("3.0.1", "3.0.1")  # the library the expectations were measured against (Kubernetes vendors v3.0.1)


def package_version() -> str:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", PACKAGE], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "?"


def go_version() -> str:
    return subprocess.run(["go", "version"], capture_output=True, text=True, check=True).stdout.strip()


@functools.cache
def binary() -> Path:
    """The built oracle (skips, or fails under CALSIM_REQUIRE_ORACLES=1, without Go or the library)."""
    require("go", install="apt-get install golang-go " + PACKAGE)
    if not (ROBFIG_SRC / "spec.go").exists():
        unavailable(f"robfig/cron v3 source ({ROBFIG_SRC})", "apt-get install " + PACKAGE)
    lib = b"".join((ROBFIG_SRC / name).read_bytes() for name in ("go.mod", "spec.go", "parser.go"))
    d = cache_dir("robfig", SOURCE.read_bytes(), lib, go_version())
    exe = d / "robfig_next"
    if not exe.exists():
        (d / "main.go").write_bytes(SOURCE.read_bytes())
        (d / "go.mod").write_text("module calsim.test/robfig_next\n\ngo 1.19\n\n"
                                  "require github.com/robfig/cron/v3 v3.0.1\n\n"
                                  f"replace github.com/robfig/cron/v3 => {ROBFIG_SRC}\n")
        env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOCACHE": str(d / "gocache"),
               "GOPATH": str(d / "gopath"), "GO111MODULE": "on"}
        subprocess.run(["go", "build", "-o", str(exe) + ".tmp", "."], cwd=d, env=env, check=True,
                       capture_output=True)
        os.replace(str(exe) + ".tmp", exe)
    return exe


class Robfig:
    """One running oracle process over calsim release ``version``'s zones."""

    def __init__(self, version: str):
        self.version = version
        self.process = LineProcess([str(binary())], env={"ZONEINFO": str(zoneinfo_dir(version))})
        self.calls = 0

    def parse_error(self, spec: str, zone: str = "UTC") -> str | None:
        """robfig's error for ``spec`` (None: it parses)."""
        ans = self.process.ask({"spec": spec, "zone": zone})
        return None if ans.get("ok") else ans["error"]

    def chains(self, spec: str, zone: str, after: list[int], n: int) -> list[list[int]]:
        """For each start (UTC seconds), ``n`` chained ``Next()`` results (a 0 ends a chain: robfig's zero time)."""
        ans = self.process.ask({"spec": spec, "zone": zone, "after": after, "n": n})
        if "error" in ans:
            raise ValueError(ans["error"])
        self.calls += sum(len(c) for c in ans["next"])
        return ans["next"]

    def close(self) -> None:
        self.process.close()
