"""calsim: when recurring schedules really fire, across time zones and tzdata releases.

>>> import calsim
>>> calsim.resolve(["2026-03-08T02:30"], "America/New_York", "2026f", gap="next_valid")["due_utc"][0]
datetime.datetime(2026, 3, 8, 7, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC'))
"""

from .errors import (
    AmbiguousTimeError,
    CalsimError,
    CorruptReleaseError,
    InputError,
    NonexistentTimeError,
    PolicyError,
    ReleaseError,
    ResolutionError,
    RuleError,
    ScheduleError,
    StoreError,
    LedgerLockedError,
    UnknownReleaseError,
    UnknownZoneError,
)
from .tzdb import Release, fetch_release, release, releases
from .resolution import FoldPolicy, GapPolicy, resolve
from .calendars import Calendar
from .rules.cron import Cron
from .rules.every import Every
from .rules.rrule import RRule
from .rules.window import Window
from .schedule import InvalidDayPolicy, Schedule
from .expansion import expand
from .explain import preview
from .tzchanges import tzdiff, tzdiff_summary, zone_changes
from .fleetfile import load_scenario
from .importers import (from_crontab, from_eventbridge, from_github_actions, from_ical, from_kubernetes, from_systemd,
                        from_temporal, load_any as load, read_history)
from .simulation.policy import Failures, LogNormal, Policy, with_policy
from .simulation.scenario import Budget, Outage, Pause, Resume, Revise, Scenario, Trigger, TzUpgrade
from .simulation.ledger import Ledger
from .simulation.dispatch import simulate
from .store import LedgerStore
from . import examples, presets

__version__ = "0.1.0"

__all__ = [
    "__version__",
    # releases
    "Release",
    "release",
    "releases",
    "fetch_release",
    # resolution
    "resolve",
    "GapPolicy",
    "FoldPolicy",
    # schedules and expansion
    "Schedule",
    "InvalidDayPolicy",
    "RRule",
    "Cron",
    "Every",
    "Window",
    "Calendar",
    "expand",
    "preview",
    "examples",
    "presets",
    "load",
    "load_scenario",
    "from_crontab",
    "from_kubernetes",
    "from_ical",
    "from_systemd",
    "from_eventbridge",
    "from_github_actions",
    "from_temporal",
    "read_history",
    # simulation
    "Policy",
    "with_policy",
    "LogNormal",
    "Failures",
    "Scenario",
    "Outage",
    "Budget",
    "Pause",
    "Resume",
    "Trigger",
    "Revise",
    "TzUpgrade",
    "simulate",
    "Ledger",
    "LedgerStore",
    # tzdata upgrades
    "zone_changes",
    "tzdiff",
    "tzdiff_summary",
    # errors
    "CalsimError",
    "InputError",
    "PolicyError",
    "ReleaseError",
    "UnknownReleaseError",
    "CorruptReleaseError",
    "UnknownZoneError",
    "ResolutionError",
    "NonexistentTimeError",
    "AmbiguousTimeError",
    "RuleError",
    "ScheduleError",
    "StoreError",
    "LedgerLockedError",
    # imported on first use: charts need matplotlib, scale-out needs dask
    "plots",
    "distributed",
]


def __getattr__(name: str):
    """``calsim.plots`` and ``calsim.distributed`` are imported on first use, so ``import calsim`` stays light."""
    if name in ("plots", "distributed"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'calsim' has no attribute {name!r}")
