"""The public surface: every name of DESIGN.md §3, its signature, documented options, and a light import.

DESIGN §3 is copied below as stub signatures. A parameter before ``*`` is
positional-or-keyword, one after it keyword-only; a parameter the real
callable has beyond the stub must be keyword-only (polars' style: options
never slip into the positional slots). Where DESIGN shows no ``*``
(``Policy(catchup="all", ...)``), issue 18 decided: no option of ``Policy``
is a natural positional, so all are keyword-only.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import typing
import zoneinfo

import pytest

import calsim

# DESIGN.md §3, as stubs (defaults DESIGN leaves out are DESIGN §2's or the code's).
DESIGN = '''
def release(version=None): ...
def releases(): ...
def fetch_release(version): ...
def resolve(local_times, zone, release=None, gap="skip", fold="first"): ...
def Schedule(id, zone, start, rule, *, gap="skip", fold="first", invalid_day="omit", exclude=(),
             revision=1, effective_from=None, effective_to=None, policy=None): ...
def Every(period, anchor=None): ...
def Window(start, end, every, days=None): ...
def expand(schedules, start, end, release=None): ...
def preview(schedule, n=10, after=None, release=None): ...
def Policy(*, catchup="all", limit=None, max_lateness=None, misfire_grace=None, overlap="allow", jitter=None,
           duration=None, cost=0.0, account=None, on_budget="wait", priority=0,
           rate_limit=None, idempotent=False, covers=None): ...
def Scenario(name, schedules, start, end, *, release=None, tick="1min", outages=(), budgets=(), capacity=None,
             events=(), failures=None, seed=0, workers=None, rate_limits=(), breakers=(), schedulers=1,
             scheduler_skew=None, dedupe="key"): ...
def Outage(start, end): ...
def Budget(account, limit, period="day", zone="UTC"): ...
def simulate(scenario): ...
def LedgerStore(path=":memory:"): ...
def tzdiff(schedules, old, new, start, end): ...
def zone_changes(old, new, start, end): ...
def load(path): ...
def from_crontab(path_or_text): ...
def from_kubernetes(path_or_text): ...
def from_ical(path_or_text): ...
def from_systemd(path_or_text): ...
def from_eventbridge(path_or_text): ...
def from_github_actions(path_or_text): ...
def from_temporal(path_or_text): ...
def from_airflow(path_or_text): ...
def from_prefect(path_or_text): ...
def from_celery_beat(path_or_text): ...
def from_dagster(path_or_text): ...
def read_history(path_or_text, kind=None): ...
# Not spelled out in DESIGN; decided with issue 18: an event's instant and subject are positional.
def Pause(at, schedule_id=None): ...
def Resume(at, schedule_id=None): ...
def Trigger(at, schedule_id=""): ...
def Revise(at, schedule=None): ...
def TzUpgrade(at, to=None, *, horizon="0s", mode="keep"): ...
def Failures(probability=0.0, *, max_attempts=1, backoff="1min"): ...
def LogNormal(median, p95): ...
# DESIGN §3 "beyond the scheduler" (issue 19): what a thing is is positional, its options keyword-only;
# covers=None (no data window) is the default the DESIGN line leaves out.
def Workers(count, *, lease="1h", heartbeat=None, renew=True): ...
def WorkerCrash(at, *, workers=1, down_for="5min"): ...
def RateLimit(name, *, rate="1/s", burst=1): ...
def Breaker(scope, *, after=5, open_for="1min"): ...
'''
METHODS = '''
def Release_zone(self, name): ...
def Release_from_path(path): ...
def Ledger_summary(self): ...
def Ledger_gaps(self): ...
def Ledger_daily_cost(self): ...
def Ledger_to_pandas(self): ...
def Ledger_coverage(self): ...
def LedgerStore_write(self, ledger): ...
def LedgerStore_ledger(self, name): ...
def LedgerStore_scenarios(self): ...
def LedgerStore_compare(self, names): ...
def LedgerStore_sql(self, query, params=None): ...
def LedgerStore_reconcile(self, name, actual): ...
def examples_fleet(n, seed=0): ...
'''
PRESETS = ("kubernetes", "temporal", "apscheduler", "quartz", "systemd", "cronie", "eventbridge")
# §3's names without a signature of their own there (their attributes and methods are pinned below).
DESIGN_OTHERS = {"Release", "Ledger", "plots", "examples", "presets"}
# Public names beyond §3: DESIGN §8's suggestions, the rule and policy vocabularies, the errors, the version.
EXTRAS = {
    "__version__", "with_policy", "load_scenario", "tzdiff_summary", "GapPolicy", "FoldPolicy", "InvalidDayPolicy",
    "ByLocalHour",  # a gap/fold policy that depends on the local hour (Dagster's DST repair, issue 29)
    "RRule", "Cron", "Calendar", "distributed", "Backfill", "sweep",
    "write_schedules",  # a fleet as a Parquet table, read by calsim.load and by Dask workers (issue 31)
    "CalsimError", "InputError", "PolicyError", "ReleaseError", "UnknownReleaseError", "CorruptReleaseError",
    "UnknownZoneError", "ResolutionError", "NonexistentTimeError", "AmbiguousTimeError", "RuleError",
    "ScheduleError", "StoreError", "LedgerLockedError",
}
HEAVY = ("yaml", "icalendar", "duckdb", "matplotlib", "dask", "papermill", "nbconvert")
# The options whose values are a closed vocabulary, and the callables whose docstrings must list them.
DOCUMENTED = ("Policy", "Scenario", "Schedule", "expand", "simulate", "Failures", "Outage", "Budget", "TzUpgrade")


def _stubs(text: str) -> dict[str, inspect.Signature]:
    space: dict = {}
    exec(text, space)  # noqa: S102 - our own stub text
    return {k: inspect.signature(v) for k, v in space.items() if callable(v) and not k.startswith("__")}


SPEC = _stubs(DESIGN)


def _check_signature(name: str, real: inspect.Signature, spec: inspect.Signature) -> None:
    params = real.parameters
    for p in spec.parameters.values():
        assert p.name in params, f"{name}: DESIGN's parameter {p.name!r} is missing from {real}"
        got = params[p.name]
        assert got.kind == p.kind, f"{name}: {p.name} is {got.kind.description}, DESIGN: {p.kind.description}"
        assert got.default == p.default, f"{name}: {p.name} defaults to {got.default!r}, DESIGN: {p.default!r}"
    positional = [p.name for p in params.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert positional == [p.name for p in spec.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD], (
        f"{name}: positional parameters {positional} differ from DESIGN's {spec}")
    extra = [p for p in params.values() if p.name not in spec.parameters and p.kind is not p.VAR_KEYWORD]
    assert all(p.kind is p.KEYWORD_ONLY for p in extra), f"{name}: options beyond DESIGN must be keyword-only: {real}"


@pytest.mark.parametrize("name", sorted(SPEC))
def test_design_name_is_public_with_the_design_signature(name):
    assert name in calsim.__all__
    obj = getattr(calsim, name)
    assert callable(obj) and inspect.getdoc(obj), name
    _check_signature(name, inspect.signature(obj), SPEC[name])


@pytest.mark.parametrize("name", sorted(_stubs(METHODS)))
def test_design_method_has_the_design_signature(name):
    owner, _, method = name.partition("_")
    obj = getattr(getattr(calsim, owner), method)
    assert callable(obj) and inspect.getdoc(obj), name
    _check_signature(name.replace("_", ".", 1), inspect.signature(obj), _stubs(METHODS)[name])


def test_all_is_exactly_the_design_names_and_the_documented_extras():
    assert len(calsim.__all__) == len(set(calsim.__all__))
    assert set(calsim.__all__) == set(SPEC) | DESIGN_OTHERS | EXTRAS


def test_every_public_name_resolves_and_classes_and_functions_have_a_docstring():
    for name in calsim.__all__:
        obj = getattr(calsim, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), name


def test_release_attributes_ledger_frame_and_plots_are_as_design_says():
    r = calsim.release("2026f")
    assert r.version == "2026f" and "America/New_York" in r.zones
    assert isinstance(r.zone("UTC"), zoneinfo.ZoneInfo)
    assert isinstance(inspect.getattr_static(calsim.Ledger, "frame"), property)
    assert inspect.ismodule(calsim.examples) and inspect.ismodule(calsim.presets)
    assert callable(calsim.plots.timeline)  # DESIGN §8's first chart


@pytest.mark.parametrize("scheduler", PRESETS)
def test_each_scheduler_preset_builds_a_policy_with_its_defaults(scheduler):
    preset = getattr(calsim.presets, scheduler)()
    assert isinstance(preset.policy, calsim.Policy)


def test_beyond_the_scheduler_names_of_design():
    for name in ("Workers", "WorkerCrash", "RateLimit", "Breaker"):
        assert hasattr(calsim, name), name
    assert {"workers", "rate_limits", "breakers", "schedulers", "scheduler_skew", "dedupe"} <= set(
        inspect.signature(calsim.Scenario).parameters)
    assert {"rate_limit", "idempotent", "covers"} <= set(inspect.signature(calsim.Policy).parameters)


def test_options_are_keyword_only_so_a_positional_option_is_refused():
    s = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY")
    with pytest.raises(TypeError):
        calsim.Policy("latest")
    with pytest.raises(TypeError):
        calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY", "shift")
    with pytest.raises(TypeError):
        calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z", "2026f")
    with pytest.raises(TypeError):
        calsim.Failures(0.2, 3, "1min")
    with pytest.raises(TypeError):
        calsim.Outage("2026-01-01T00:00Z", "2026-01-01T01:00Z", "suspend")
    sc = calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z", release="2026f")
    with pytest.raises(TypeError):
        calsim.simulate(sc, "dask")


def _vocabulary(hint: object) -> tuple[str, ...]:
    """The string values of a Literal hint (through Optional/unions and aliases)."""
    if typing.get_origin(hint) is typing.Literal:
        return tuple(v for v in typing.get_args(hint) if isinstance(v, str))
    return tuple(v for arg in typing.get_args(hint) for v in _vocabulary(arg))


def _allowed(name: str) -> dict[str, tuple[str, ...]]:
    obj = getattr(calsim, name)
    hints = typing.get_type_hints(obj)
    out = {p: _vocabulary(hints.get(p)) for p in inspect.signature(obj).parameters}
    if name == "simulate":  # typed str; the vocabularies live beside the code that checks them
        from calsim.simulation.dispatch import ENGINES
        from calsim.simulation.engine import SETTLE

        out.update(engine=tuple(ENGINES), settle=tuple(SETTLE))
    return out


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_names_every_option_and_each_allowed_value(name):
    doc = inspect.getdoc(getattr(calsim, name))
    for option, values in _allowed(name).items():
        if option == "source":  # filled by the importers, not a user option
            continue
        assert option in doc, f"{name}: option {option!r} is not in the docstring"
        missing = [v for v in values if f'"{v}"' not in doc and f"'{v}'" not in doc]
        assert not missing, f"{name}: allowed values of {option} not listed in the docstring: {missing}"


def test_vocabularies_are_found_so_the_docstring_test_can_fail():
    assert _allowed("Policy")["catchup"] == ("all", "latest", "earliest", "skip", "bounded", "earliest_and_latest")
    assert _allowed("Schedule")["gap"] == ("skip", "shift", "next_valid", "shift_backward", "reject")
    assert set(_allowed("simulate")["settle"]) == {"columns", "events"}


# ----------------------------------------------------------------- the light front door


def _fresh(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout)


def test_import_calsim_loads_no_heavy_dependency_and_lazy_names_then_work():
    got = _fresh(f"""
import json, sys
import calsim
heavy = {HEAVY!r}
loaded = lambda: sorted(m for m in sys.modules if m.split('.')[0] in heavy)
before = loaded()
listed = sorted(set(calsim.__all__) - set(dir(calsim)))
ics = ("BEGIN:VCALENDAR\\nBEGIN:VEVENT\\nUID:u\\nDTSTART:20260101T090000Z\\nRRULE:FREQ=DAILY\\n"
       "END:VEVENT\\nEND:VCALENDAR\\n")
rule = calsim.from_ical(ics)[0].rule
print(json.dumps(dict(before=before, listed=listed, rule=rule, after=sorted({{m.split('.')[0] for m in loaded()}}))))
""")
    assert got["before"] == []
    assert got["listed"] == []  # dir(calsim) lists every public name, lazy ones included
    assert got["rule"] == "FREQ=DAILY"
    assert "icalendar" in got["after"]  # imported on first use, not before


def test_import_calsim_importers_loads_no_yaml_until_a_yaml_reader_runs():
    got = _fresh(f"""
import json, pathlib, sys
import calsim.importers
heavy = {HEAVY!r}
loaded = lambda: sorted({{m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy}})
before = loaded()
examples = pathlib.Path(calsim.__file__).parents[1] / "data" / "examples"
crontab = [s.id for s in calsim.importers.from_crontab(examples / "crontab")][:1]
after_crontab = loaded()
jobs = [s.id for s in calsim.importers.from_kubernetes(examples / "cronjobs.yaml")]
print(json.dumps(dict(before=before, crontab=crontab, after_crontab=after_crontab, jobs=jobs, after=loaded())))
""")
    assert got["before"] == [] and got["after_crontab"] == []
    assert got["crontab"] == ["crontab:6"] and got["jobs"] == ["billing/nightly-invoices", "ops/db-backup"]
    assert got["after"] == ["yaml"]  # imported by the first YAML reader, not before


def test_version_lives_in_a_leaf_module_and_matches_pyproject():
    import ast
    import tomllib
    from pathlib import Path

    import calsim._version

    root = Path(calsim.__file__).resolve().parents[1]
    assert calsim.__version__ == calsim._version.__version__
    assert calsim.__version__ == tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    # a leaf: the modules that record the version import it without depending on calsim/__init__
    tree = ast.parse((root / "calsim" / "_version.py").read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_lazy_names_are_the_importers_functions_and_are_cached():
    from calsim import from_crontab  # PEP 562: from-imports go through __getattr__ too
    import calsim.importers

    assert from_crontab is calsim.importers.from_crontab
    assert calsim.load is calsim.importers.load_any
    assert calsim.read_history is calsim.importers.read_history
    assert "from_crontab" in vars(calsim)  # later lookups skip __getattr__


def test_an_unknown_attribute_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="no attribute 'expnad'"):
        calsim.expnad  # noqa: B018


def test_public_functions_are_not_shadowed_by_submodules():
    # A module named like a public function (calsim/resolve.py) would replace
    # calsim.resolve with the module as soon as something imports it by path.
    import importlib
    import pkgutil

    for mod in pkgutil.walk_packages(calsim.__path__, "calsim."):
        importlib.import_module(mod.name)
    for name in ("release", "releases", "resolve", "expand", "preview", "fetch_release", "tzdiff", "zone_changes",
                 "simulate", "load", "read_history"):
        assert inspect.isfunction(getattr(calsim, name)), name
