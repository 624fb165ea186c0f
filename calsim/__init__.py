"""calsim: when recurring schedules really fire, across time zones and tzdata releases.

>>> import calsim
>>> calsim.resolve(["2026-03-08T02:30"], "America/New_York", "2026f", gap="next_valid")["due_utc"][0]
datetime.datetime(2026, 3, 8, 7, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC'))

``import calsim`` loads numpy and polars but none of calsim's optional or
format-specific dependencies (yaml, icalendar, duckdb, matplotlib, dask,
papermill, nbconvert): the readers, charts and scale-out are imported on
first use (PEP 562), as in ``calsim.from_ical(...)`` or ``calsim.plots``.

>>> calsim.from_crontab("0 3 * * * backup\\n", zone="UTC")[0].rule
'0 3 * * *'
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
from .tz.fetch import fetch_release
from .tz.release import Release, release, releases
from .resolution import ByLocalHour, FoldPolicy, GapPolicy, resolve
from .calendars import Calendar
from .rules.cron import Cron
from .rules.every import Every
from .rules.rrule import RRule
from .rules.window import Window
from .schedule import InvalidDayPolicy, Schedule
from .expansion import expand
from .explain import preview
from .tzchanges import tzdiff, tzdiff_summary, zone_changes
from .simulation.policy import Failures, LogNormal, Policy, with_policy
from .simulation.scenario import Backfill, Budget, Outage, Pause, Resume, Revise, Scenario, Trigger, TzUpgrade
from .simulation.faults import Breaker, RateLimit, WorkerCrash, Workers
from .simulation.ledger import Ledger
from .simulation.dispatch import register_engine, simulate
from .simulation.sweep import sweep
from .store import LedgerStore
from . import examples, presets
from ._version import __version__

# Dask sits above the simulation: it is registered here (imported when first used), never imported from below.
register_engine("dask", "calsim.distributed.client:simulate", sweep="calsim.distributed.sweep_tasks:sweep")
del register_engine

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
    "ByLocalHour",
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
    "write_schedules",
    "load_scenario",
    "from_crontab",
    "from_kubernetes",
    "from_ical",
    "from_systemd",
    "from_eventbridge",
    "from_github_actions",
    "from_temporal",
    "from_airflow",
    "from_prefect",
    "from_celery_beat",
    "from_dagster",
    "read_history",
    # simulation
    "Policy",
    "with_policy",
    "LogNormal",
    "Failures",
    "Scenario",
    "Outage",
    "Workers",
    "WorkerCrash",
    "RateLimit",
    "Breaker",
    "Budget",
    "Pause",
    "Resume",
    "Trigger",
    "Backfill",
    "Revise",
    "TzUpgrade",
    "simulate",
    "sweep",
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


# Public names whose module pulls a heavy or format-specific dependency, or many modules
# (the readers: yaml and icalendar on first use): name -> (module, attribute; None for the module itself).
# They are imported on first access and then cached in the module's namespace.
_LAZY = {
    "load": (".importers", "load_any"),
    "write_schedules": (".importers.schedule_table", "write_schedules"),
    "from_crontab": (".importers", "from_crontab"),
    "from_kubernetes": (".importers", "from_kubernetes"),
    "from_ical": (".importers", "from_ical"),
    "from_systemd": (".importers", "from_systemd"),
    "from_eventbridge": (".importers", "from_eventbridge"),
    "from_github_actions": (".importers", "from_github_actions"),
    "from_temporal": (".importers", "from_temporal"),
    "from_airflow": (".importers", "from_airflow"),
    "from_prefect": (".importers", "from_prefect"),
    "from_celery_beat": (".importers", "from_celery_beat"),
    "from_dagster": (".importers", "from_dagster"),
    "read_history": (".importers", "read_history"),
    "load_scenario": (".scenario_file", "load_scenario"),  # reads its fleet with the importers
    "importers": (".importers", None),  # was bound by the eager import; kept reachable as calsim.importers
    "plots": (".plots", None),  # matplotlib
    "distributed": (".distributed", None),  # dask
}


def __getattr__(name: str):
    """A lazy public name (see ``_LAZY``), imported on first use so ``import calsim`` stays light."""
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'calsim' has no attribute {name!r}") from None
    import importlib

    value = importlib.import_module(module, __name__)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
