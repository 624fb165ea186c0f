"""Quartz 2.3.2 itself as an oracle: Debian's ``libquartz2-java`` jar, driven by ``java/QuartzFires.java``.

``java/QuartzFires.java`` (ours: a line protocol around the library, no
logic of its own) is compiled with the machine's ``javac`` against
``/usr/share/java/quartz2.jar`` into the oracle cache and run as one JVM per
test module. It answers ``new CronExpression(expr)`` (accepted, or Quartz's
``ParseException`` message), chains of ``getTimeAfter`` (what a
``CronTrigger`` walks: each fire time is the ``getTimeAfter`` of the one
before) in a ``TimeZone``, ``isSatisfiedBy``, the JDK's own wall-to-instant
rule (a lenient ``GregorianCalendar``), and ``RAMJobStore``'s misfire
handling on a clock faked by libfaketime (:class:`QuartzJar` with
``faked_clock=True``).

The JVM reads its own tz database (``lib/tzdb.dat``), not calsim's: tests
compare against the calsim release of the same version, which
:meth:`QuartzJar.version` reports (``"tzdb"``) and :data:`TZDB` pins.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from oracles.native import LineProcess, cache_dir, require, unavailable

SOURCE = Path(__file__).with_name("java") / "QuartzFires.java"
JAR = Path("/usr/share/java/quartz2.jar")
SLF4J = [Path("/usr/share/java/slf4j-api.jar"), Path("/usr/share/java/slf4j-nop.jar")]  # RAMJobStore logs
PACKAGE = "libquartz2-java"
INSTALL = "apt-get install openjdk-17-jdk-headless libquartz2-java libslf4j-java"
VERSION_RANGE = ("2.3.2", "2.3.2")  # the jar the expectations were measured against (Debian 12: 2.3.2-4)
TZDB = "2025a"  # Java 17.0.15's lib/tzdb.dat (Debian 12's openjdk-17 17.0.15+6-1~deb12u1): calsim's release "2025a"
TIMEOUT_MS = 3000  # a getTimeAfter call still running after this long never ends (a warm call takes microseconds)
FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")


def package_version() -> str:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", PACKAGE], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "?"


def javac_version() -> str:
    out = subprocess.run(["javac", "-version"], capture_output=True, text=True, check=True)
    return (out.stdout or out.stderr).strip()


def classpath(build: Path) -> str:
    return os.pathsep.join([str(JAR), *(str(p) for p in SLF4J if p.exists()), str(build)])


@functools.cache
def build() -> Path:
    """The compiled harness's directory (skips, or fails under CALSIM_REQUIRE_ORACLES=1, without Java or the jar)."""
    require("java", "javac", install=INSTALL)
    if not JAR.exists():
        unavailable(f"Quartz's jar ({JAR})", INSTALL)
    d = cache_dir("quartz", SOURCE.read_bytes(), JAR.read_bytes(), javac_version())
    done = d / "QuartzFires.class"
    if not done.exists():
        tmp = d / "tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        subprocess.run(["javac", "-Xlint:-removal", "-Xlint:-deprecation", "-encoding", "UTF-8",
                        "-cp", classpath(d), "-d", str(tmp), str(SOURCE)], check=True, capture_output=True)
        for f in sorted(tmp.iterdir(), key=lambda p: p.name == "QuartzFires.class"):  # the marker last
            os.replace(f, d / f.name)
        tmp.rmdir()
    return d


class QuartzJar:
    """One JVM running the harness; ``faked_clock=True`` runs it under libfaketime (for :meth:`misfire`)."""

    def __init__(self, *, faked_clock: bool = False):
        d = build()
        env = {"TZ": "UTC", "LC_ALL": "C"}
        if faked_clock:
            require("faketime", install="apt-get install faketime")
            if not FAKETIME.exists():
                unavailable(f"libfaketime ({FAKETIME})", "apt-get install libfaketime")
            stamp = d / f"clock-{os.getpid()}-{id(self)}.rc"
            stamp.write_text("2026-01-01 00:00:00.000\n")
            self.stamp = stamp
            # A frozen absolute time, re-read at every clock call (the harness writes it before each step);
            # the JVM's monotonic clock stays real (timers, the JIT).
            env.update(LD_PRELOAD=str(FAKETIME), FAKETIME_TIMESTAMP_FILE=str(stamp), FAKETIME_NO_CACHE="1",
                       FAKETIME_DONT_FAKE_MONOTONIC="1")
        self.process = LineProcess(["java", "-Xss4m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                                    "-cp", classpath(d), "QuartzFires"], env=env)
        self.calls = 0
        self.hangs = 0  # getTimeAfter calls stopped after timeout_ms

    @functools.cached_property
    def version(self) -> dict:
        """``{"quartz", "java", "tzdb", "max_year", "faked_clock"}`` as the running JVM reports them."""
        return self.ask({"op": "version"})

    def describe(self) -> str:
        v = self.version
        return (f"Quartz {v['quartz']} (Debian {PACKAGE} {package_version()}), Java {v['java']} tzdb {v['tzdb']}, "
                f"MAX_YEAR {v['max_year']}")

    def ask(self, request: dict) -> dict:
        ans = self.process.ask(request)
        if "error" in ans and "expr" not in request:
            raise RuntimeError(f"QuartzFires: {ans['error']} (request {request!r})")
        return ans

    def parse_error(self, expr: str) -> str | None:
        """Quartz's ``ParseException`` message for ``expr`` (None: it parses)."""
        ans = self.ask({"expr": expr})
        return None if ans.get("ok") else ans["error"]

    def chains(self, expr: str, zone: str, after: list[int], n: int, until: int | None = None,
               timeout_ms: int | None = TIMEOUT_MS) -> list[list[int]]:
        """For each start (UTC seconds), up to ``n`` chained ``getTimeAfter`` results before ``until``.

        A shorter chain ended at null (no fire time), at ``until``, or at a
        call still running after ``timeout_ms`` (Quartz 2.3.2's loop never
        ends for some inputs; :meth:`chains_timed` says which, and
        :attr:`hangs` counts them).
        """
        return self.chains_timed(expr, zone, after, n, until, timeout_ms)[0]

    def chains_timed(self, expr, zone, after, n, until=None,
                     timeout_ms=TIMEOUT_MS) -> tuple[list[list[int]], list[int]]:
        req = {"expr": expr, "zone": zone, "after": [int(a) for a in after], "n": n}
        if until is not None:
            req["until"] = int(until)
        if timeout_ms is not None:
            req["timeout_ms"] = timeout_ms
        ans = self.ask(req)
        if "error" in ans:
            raise ValueError(f"Quartz refuses {expr!r}: {ans['error']}")
        self.calls += sum(len(c) for c in ans["next"])
        self.hangs += len(ans.get("timeout", []))
        return ans["next"], ans.get("timeout", [])

    def fires(self, expr: str, zone: str, start: int, n: int, until: int | None = None) -> list[int]:
        """Quartz's first ``n`` fire times at or after ``start`` (before ``until``): a chain from ``start - 1``."""
        return self.chains(expr, zone, [start - 1], n, until)[0]

    def satisfied(self, expr: str, when: list[int], zone: str = "UTC") -> list[bool]:
        """``isSatisfiedBy`` of each instant (UTC seconds)."""
        return self.ask({"expr": expr, "zone": zone, "satisfied": [int(t) for t in when]})["satisfied"]

    def wall_to_utc(self, zone: str, walls: list[tuple[int, ...]]) -> list[int]:
        """A lenient ``GregorianCalendar(zone)`` given ``(y, month 1-based, d, h, mi, s)``: its instant."""
        return self.ask({"zone": zone, "walls": [list(w) for w in walls]})["utc"]

    def fields(self, zone: str, instants: list[int]) -> list[list[int]]:
        """``(y, month, d, h, mi, s, day-of-week 1 = Sunday)`` of instants in ``GregorianCalendar(zone)``."""
        return self.ask({"zone": zone, "fields": [int(t) for t in instants]})["fields"]

    def misfire(self, expr: str, zone: str, instruction: str, threshold_ms: int, steps: list[dict],
                disallow: bool = False) -> list[dict]:
        """A RAMJobStore driven through ``steps`` on the faked clock (see ``QuartzFires.java``)."""
        return self.ask({"op": "misfire", "expr": expr, "zone": zone, "instruction": instruction,
                         "threshold_ms": threshold_ms, "disallow": disallow, "steps": steps})["steps"]

    def close(self) -> None:
        self.process.close()
        stamp = getattr(self, "stamp", None)
        if stamp is not None:
            stamp.unlink(missing_ok=True)
