"""Quartz 2.3.2 itself as an oracle: Debian's ``libquartz2-java`` jar, driven by ``java/QuartzFires.java``.

``java/QuartzFires.java`` (ours: a line protocol around the library, no
logic of its own) is compiled with the machine's ``javac`` against
``/usr/share/java/quartz2.jar`` into the oracle cache and run as one JVM per
test module. It answers ``new CronExpression(expr)`` (accepted, or Quartz's
``ParseException`` message), chains of ``getTimeAfter`` (what a
``CronTrigger`` walks: each fire time is the ``getTimeAfter`` of the one
before) in a ``TimeZone``, ``isSatisfiedBy``, the JDK's own wall-to-instant
rule (a lenient ``GregorianCalendar``), and a ``CronTriggerImpl`` in a real
``RAMJobStore`` on a faked clock (:meth:`QuartzJar.trigger`, with
``faked_clock=True``: a Java agent, ``QuartzFires$ClockAgent``, rewrites the
clock reads in Quartz's classes as they load, so every misfire decision is
the store's own, fire by fire).

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


def package_version() -> str:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", PACKAGE], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "?"


def javac_version() -> str:
    out = subprocess.run(["javac", "-version"], capture_output=True, text=True, check=True)
    return (out.stdout or out.stderr).strip()


def classpath(build: Path) -> str:
    return os.pathsep.join([str(JAR), *(str(p) for p in SLF4J if p.exists()), str(build)])


ASM = "--add-exports=java.base/jdk.internal.org.objectweb.asm=ALL-UNNAMED"  # the JDK's own ASM, for ClockAgent


@functools.cache
def build() -> Path:
    """The compiled harness's directory (skips, or fails under CALSIM_REQUIRE_ORACLES=1, without Java or the jar).

    It holds the classes and ``clock-agent.jar`` (``QuartzFires$ClockAgent`` as a ``Premain-Class``: the
    faked clock of :meth:`QuartzJar.trigger`).
    """
    require("java", "javac", "jar", install=INSTALL)
    if not JAR.exists():
        unavailable(f"Quartz's jar ({JAR})", INSTALL)
    d = cache_dir("quartz", SOURCE.read_bytes(), JAR.read_bytes(), javac_version())
    done = d / "clock-agent.jar"
    if not done.exists():
        tmp = d / "tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        subprocess.run(["javac", ASM, "-Xlint:-removal", "-Xlint:-deprecation", "-encoding", "UTF-8",
                        "-cp", classpath(d), "-d", str(tmp), str(SOURCE)], check=True, capture_output=True)
        (tmp / "manifest.txt").write_text("Premain-Class: QuartzFires$ClockAgent\n")
        agent = sorted(p.name for p in tmp.glob("QuartzFires$ClockAgent*.class"))
        subprocess.run(["jar", "--create", "--file", done.name, "--manifest", "manifest.txt", *agent], cwd=tmp,
                       check=True, capture_output=True)
        (tmp / "manifest.txt").unlink()
        for f in sorted(tmp.iterdir(), key=lambda p: p.name == done.name):  # the marker last
            os.replace(f, d / f.name)
        tmp.rmdir()
    return d


class QuartzJar:
    """One JVM running the harness; ``faked_clock=True`` gives Quartz's classes a faked clock (for :meth:`trigger`)."""

    def __init__(self, *, faked_clock: bool = False):
        d = build()
        flags = ["-Xss4m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
        if faked_clock:
            # Quartz's clock reads rewritten to read QuartzFires$FakeClock, which each timeline step sets.
            flags += [ASM, f"-javaagent:{d / 'clock-agent.jar'}"]
        self.process = LineProcess(["java", *flags, "-cp", classpath(d), "QuartzFires"],
                                   env={"TZ": "UTC", "LC_ALL": "C"})
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

    def trigger(self, expr: str, zone: str, instruction: str, threshold_ms: int, start_ms: int, end_ms: int,
                outages: list[tuple[int, int, str]] = (), duration_ms: int = 0,
                disallow: bool = False) -> tuple[list[tuple], list[tuple]]:
        """One CronTrigger in a real RAMJobStore on the faked clock (``QuartzFires.java``'s ``"trigger"``).

        Returns ``(fires, misfires)``: ``(scheduled_ms, at_ms, once_now, misfired_ms)`` per execution
        and ``(next_fire_ms, now_ms, cause)`` per misfire the store signalled.
        """
        ans = self.ask({"op": "trigger", "expr": expr, "zone": zone, "instruction": instruction,
                        "threshold_ms": threshold_ms, "disallow": disallow, "duration_ms": duration_ms,
                        "start_ms": start_ms, "end_ms": end_ms, "outages": [list(o) for o in outages]})
        return [tuple(f) for f in ans["fires"]], [tuple(m) for m in ans["misfires"]]

    def close(self) -> None:
        self.process.close()
