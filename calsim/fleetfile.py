"""Fleet files: schedules written in TOML, one ``[[schedule]]`` table each.

```toml
[[schedule]]
id = "billing/nightly"
zone = "America/New_York"
start = "2026-03-01T02:30"        # naive: local wall time; with Z/offset: an instant
rrule = "FREQ=DAILY"              # or cron = "30 2 * * *", or rule = "..." (either form)
gap = "shift"                     # skip | shift | next_valid | shift_backward | reject
fold = "first"                    # first | second | both | reject
exclude = ["holidays:US"]

[[schedule]]
id = "etl/every-6h"
zone = "UTC"
start = "2026-01-01T00:00Z"
every = { period = "6h" }         # anchor = "..." optional

[[schedule]]
id = "support/business-hours"
zone = "Europe/Berlin"
start = "2026-01-01T00:00"
window = { start = "08:00", end = "20:00", every = "30min", days = "MO,TU,WE,TH,FR" }
```

Optional keys: ``invalid_day``, ``revision``, ``effective_from``,
``effective_to``, ``rdate``, ``exdate``. Every error names the file, the
entry and the key.

>>> import calsim, pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "fleet.toml"
>>> _ = p.write_text('[[schedule]]\\nid = "a"\\nzone = "UTC"\\nstart = "2026-01-01T09:00"\\ncron = "0 9 * * *"\\n')
>>> [s.kind for s in calsim.load(p)]
['cron']
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from .errors import CalsimError, ScheduleError
from .rules.every import Every
from .rules.window import Window
from .schedule import Schedule

__all__ = ["load"]

_RULE_KEYS = ("rule", "rrule", "cron", "every", "window")
_OPTIONAL = ("gap", "fold", "invalid_day", "exclude", "revision", "effective_from", "effective_to", "rdate", "exdate")
_KNOWN = {"id", "zone", "start", *_RULE_KEYS, *_OPTIONAL}


def load(path: str | Path) -> list[Schedule]:
    """Read the schedules of a TOML fleet file (see the module docstring)."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except OSError as exc:
        raise ScheduleError(f"fleet: cannot read {str(path)!r} ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScheduleError(f"fleet: {str(path)!r} is not valid TOML ({exc})") from None
    entries = data.get("schedule")
    if not isinstance(entries, list) or not entries:
        raise ScheduleError(f"fleet: {str(path)!r} has no [[schedule]] tables")
    return [_schedule(p, i, e) for i, e in enumerate(entries, 1)]


def _schedule(path: Path, n: int, entry: dict) -> Schedule:
    where = f"fleet: {path.name} schedule #{n}"
    unknown = sorted(set(entry) - _KNOWN)
    if unknown:
        raise ScheduleError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(_KNOWN))})")
    missing = [k for k in ("id", "zone") if k not in entry]
    if missing:
        raise ScheduleError(f"{where}: missing key {missing[0]!r}")
    given = [k for k in _RULE_KEYS if k in entry]
    if len(given) != 1:
        raise ScheduleError(f"{where} ({entry['id']!r}): give exactly one of {', '.join(_RULE_KEYS)}, got {given or 'none'}")
    key = given[0]
    value = entry[key]
    try:
        if key == "every":
            rule: object = Every(**value) if isinstance(value, dict) else Every(value)
        elif key == "window":
            if not isinstance(value, dict):
                raise ScheduleError(f"{where}: window must be a table with start, end, every (and days)")
            rule = Window(**value)
        else:
            rule = value
        kw = {k: entry[k] for k in _OPTIONAL if k in entry}
        for k in ("rdate", "exdate"):
            if k in kw:
                kw[k] = tuple(kw[k])
        return Schedule(entry["id"], entry["zone"], entry.get("start"), rule, **kw)
    except TypeError as exc:
        raise ScheduleError(f"{where} ({entry['id']!r}): {key}: {exc}") from None
    except CalsimError as exc:
        raise type(exc)(f"{where}: {exc}") from None
