"""The public surface: the names DESIGN.md fixes, documented, and a light import."""

from __future__ import annotations

import inspect
import subprocess
import sys

import calsim

CONTRACT_SO_FAR = {
    "release", "releases", "fetch_release", "Release", "resolve",
    "CalsimError", "UnknownZoneError", "UnknownReleaseError", "NonexistentTimeError",
    "AmbiguousTimeError", "RuleError", "ScheduleError",
    "Schedule", "Every", "Window", "expand", "preview", "examples",
}


def test_all_lists_the_contract_names_and_each_exists():
    assert CONTRACT_SO_FAR <= set(calsim.__all__)
    for name in calsim.__all__:
        assert hasattr(calsim, name), name


def test_every_public_callable_and_class_has_a_docstring():
    for name in calsim.__all__:
        obj = getattr(calsim, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), name


def test_resolve_signature_matches_the_contract():
    params = list(inspect.signature(calsim.resolve).parameters.values())
    assert [(p.name, p.default) for p in params] == [
        ("local_times", inspect.Parameter.empty),
        ("zone", inspect.Parameter.empty),
        ("release", None),
        ("gap", "skip"),
        ("fold", "first"),
    ]


def test_expand_and_preview_signatures_match_the_contract():
    e = inspect.signature(calsim.expand).parameters
    assert list(e) == ["schedules", "start", "end", "release", "max_occurrences"]
    assert e["max_occurrences"].kind is inspect.Parameter.KEYWORD_ONLY  # the bound on work (issue: hostile input)
    p = inspect.signature(calsim.preview).parameters
    assert [(k, v.default) for k, v in p.items()][1:] == [("n", 10), ("after", None), ("release", None),
                                                          ("max_occurrences", None)]
    s = inspect.signature(calsim.Schedule).parameters
    assert list(s)[:4] == ["id", "zone", "start", "rule"]
    assert {k: s[k].default for k in ("gap", "fold", "invalid_day", "revision", "effective_from", "effective_to", "policy")} == {
        "gap": "skip", "fold": "first", "invalid_day": "omit", "revision": 1,
        "effective_from": None, "effective_to": None, "policy": None,
    }


def test_import_is_light():
    code = "import sys, calsim; print(sorted(m for m in ('duckdb', 'matplotlib', 'pandas', 'dask') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_public_functions_are_not_shadowed_by_submodules():
    # A module named like a public function (calsim/resolve.py) would replace
    # calsim.resolve with the module as soon as something imports it by path.
    import importlib
    import pkgutil

    for mod in pkgutil.walk_packages(calsim.__path__, "calsim."):
        importlib.import_module(mod.name)
    for name in ("release", "releases", "resolve", "expand", "preview", "fetch_release", "tzdiff", "zone_changes"):
        assert inspect.isfunction(getattr(calsim, name)), name
