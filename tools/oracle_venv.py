"""What the ``tools/capture_<system>.py`` scripts share: a pinned venv of the scheduler's own, the fixture
writer, and the 2026 DST changes they capture around.

Standard library only: the capture scripts import it both outside and (Celery, Prefect) inside the oracle
venv, where it is found beside them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

CACHE = Path.home() / ".cache" / "calsim-oracles"  # one venv per system and version, reused between runs


def installed(python: Path, names: list[str]) -> dict[str, str | None]:
    """The versions ``python`` has of the distributions ``names`` (None: not installed)."""
    code = ("import json, importlib.metadata as m\n"
            f"names = {sorted(names)!r}\n"
            "out = {}\n"
            "for n in names:\n"
            "    try: out[n] = m.version(n)\n"
            "    except m.PackageNotFoundError: out[n] = None\n"
            "print(json.dumps(out))\n")
    # cwd=/: never import a local directory named like a package (Prefect has a "types" module)
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True, cwd="/")
    return json.loads(done.stdout)


def ensure_venv(venv: Path, pins: dict[str, str], interpreter: str | None = None) -> Path:
    """Create (or reuse) ``venv`` with exactly the ``pins``; return its python. ``interpreter`` builds it
    (default: this python)."""
    python = venv / "bin" / "python"
    if not python.exists():
        venv.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([interpreter or sys.executable, "-m", "venv", str(venv)], check=True)
    if installed(python, list(pins)) != pins:
        wanted = [f"{name}=={version}" for name, version in pins.items()]
        print(f"installing {' '.join(wanted)} into {venv}", file=sys.stderr)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *wanted], check=True)
        got = installed(python, list(pins))
        if got != pins:
            raise SystemExit(f"{venv}: wanted {pins}, have {got}")
    return python


def write_fixture(fixture: dict, f) -> None:
    """JSON with one case (or window) a line: diffable, and a third of the indented size."""
    f.write("{\n")
    items = list(fixture.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, list) and value and isinstance(value[0], dict):
            f.write(f" {json.dumps(key)}: [\n")
            for j, case in enumerate(value):
                f.write("  " + json.dumps(case, separators=(",", ":")) + ("," if j < len(value) - 1 else "") + "\n")
            f.write(f" ]{comma}\n")
        else:
            f.write(f" {json.dumps(key)}: {json.dumps(value)}{comma}\n")
    f.write("}\n")


def transitions(zone: str, year: int) -> list[datetime]:
    """UTC instants where the zone's UTC offset changes in ``year`` (an hourly scan, then bisection)."""
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(zone)
    out = []
    t = datetime(year, 1, 1, tzinfo=timezone.utc)
    end = datetime(year + 1, 1, 1, tzinfo=timezone.utc)
    while t < end:
        n = t + timedelta(hours=1)
        if t.astimezone(tz).utcoffset() != n.astimezone(tz).utcoffset():
            lo, hi = t, n
            while hi - lo > timedelta(seconds=1):
                mid = lo + (hi - lo) / 2
                if mid.astimezone(tz).utcoffset() == t.astimezone(tz).utcoffset():
                    lo = mid
                else:
                    hi = mid
            out.append(hi.replace(microsecond=0))
        t = n
    return out
