"""``simulate``: the public entry point, which hands a scenario to the local engine or to a registered one.

The engine itself (:mod:`.engine`) knows nothing of Dask; :mod:`calsim.distributed`
partitions a scenario and runs the local engine on each partition. It sits
above the simulation, so this module never imports it: ``calsim/__init__``
registers it (:func:`register_engine`) by the name of its entry point, which is
imported when a scenario is first sent there.
"""

from __future__ import annotations

import importlib

import calsim.limits as limits
from ..errors import InputError, choices, did_you_mean, shown
from .engine import SETTLE, run_local
from .ledger import Ledger
from .occurrences import check_scenario
from .scenario import Scenario

__all__ = ["simulate", "register_engine"]

ENGINES = ("local", "dask")
_ENTRY: dict[str, str] = {}  # engine -> "module:function" (simulate(scenario, client=, output=, max_occurrences=))
# engine -> "module:function" (sweep(scenario, combos, names, late_after=, client=) -> a measures dict per combo)
_SWEEP_ENTRY: dict[str, str] = {}


def register_engine(name: str, entry: str, sweep: str | None = None) -> None:
    """Send ``simulate(..., engine=name)`` to ``entry`` (``"package.module:function"``, imported on first use), and
    :func:`calsim.sweep` to ``sweep``.

    >>> register_engine("dask", "calsim.distributed.client:simulate", sweep="calsim.distributed.sweep_tasks:sweep")
    """
    if name not in ENGINES or name == "local":
        raise InputError(f"engine: {shown(name)} cannot be registered (allowed: {choices(ENGINES[1:])})")
    _ENTRY[name] = entry
    if sweep is not None:
        _SWEEP_ENTRY[name] = sweep


def engine_entry(name: str, kind: str = "simulate"):
    """The registered function of engine ``name`` for ``kind`` (``"simulate"`` or ``"sweep"``), imported now."""
    module, _, function = (_ENTRY if kind == "simulate" else _SWEEP_ENTRY)[name].partition(":")
    return getattr(importlib.import_module(module), function)


def simulate(scenario: Scenario, *, engine: str = "local", client: object = None, output: object = None,
             progress: bool | None = None, settle: str = "columns",
             max_occurrences: int | None = None, schedules: object = None) -> Ledger:
    """Simulate ``scenario`` and return its :class:`~calsim.Ledger`.

    ``scenario`` is the one positional argument; every option is keyword-only.
    An option the chosen engine would not honour is refused with an
    :class:`~calsim.InputError` rather than dropped: ``client`` and
    ``output`` with ``engine="local"``, ``progress=True`` or
    ``settle="events"`` with ``engine="dask"``.

    Parameters
    ----------
    scenario
        The fleet and its world (:class:`~calsim.Scenario`).
    engine : {"local", "dask"}
        ``"local"`` (default, this process) or ``"dask"``: partitions simulated
        on the workers of ``client``, written as Parquet under ``output``,
        returned as a :class:`calsim.distributed.LedgerDataset` (see
        :mod:`calsim.distributed`).
    client : distributed.Client, scheduler address or None
        ``engine="dask"`` only: a client, an address such as
        ``"tcp://host:8786"``, or None for the current default client.
    output : path, fsspec URL or None
        ``engine="dask"`` only (required there): the directory
        ``scenario=<name>/`` is written under (see
        :func:`calsim.distributed.simulate`).
    progress : {None, True, False}
        ``engine="local"``: show a tqdm progress bar: None (default) shows
        it only when interactive (a terminal or a notebook); False never.
        ``engine="dask"`` shows none (the Dask dashboard shows the tasks):
        None or False.
    settle : {"columns", "events"}
        ``"columns"`` (default): rows whose outcome needs no order, and
        budget-bound accounts of the common kind, are settled in columns;
        ``"events"``: every row that runs goes through the ordered event loop
        (slower; the reference the column paths are proven equal to). The
        ledger's ``settled`` attribute counts the runs each path settled.
        ``engine="dask"``'s workers settle in columns: ``"columns"`` only.
    max_occurrences : int >= 1 or None
        Refuse, before expanding, a scenario whose estimated occurrences
        (revisions and every release it uses included; an upper bound, see
        :mod:`calsim.limits`) exceed this. None: the ``CALSIM_MAX_OCCURRENCES``
        environment variable, else 100 million. With ``engine="dask"`` the
        whole fleet is checked before it is partitioned.
    schedules : path, "example:N[:SEED]" or None
        ``engine="dask"`` only: the fleet, read by the workers from a
        Parquet schedules table (:func:`calsim.write_schedules`) or built
        there (:func:`calsim.examples.fleet`), never held by this process;
        ``scenario`` is then the world alone (no schedules of its own).

    Examples
    --------
    >>> import calsim
    >>> s = calsim.Schedule("daily", "Asia/Shanghai", "2026-10-18T09:00", "FREQ=DAILY",
    ...                     policy=calsim.Policy(catchup="latest", max_lateness="2d"))
    >>> sc = calsim.Scenario("incident", [s], "2026-10-20T00:00Z", "2026-10-25T00:00Z", tick="10min",
    ...                      outages=[calsim.Outage("2026-10-20T01:01Z", "2026-10-24T12:00Z")])
    >>> (calsim.simulate(sc).frame.select("nominal_local", "state", "reason")
    ...  .to_dicts()[1:4])  # doctest: +NORMALIZE_WHITESPACE
    [{'nominal_local': datetime.datetime(2026, 10, 21, 9, 0), 'state': 'expired', 'reason': 'max_lateness'},
     {'nominal_local': datetime.datetime(2026, 10, 22, 9, 0), 'state': 'expired', 'reason': 'max_lateness'},
     {'nominal_local': datetime.datetime(2026, 10, 23, 9, 0), 'state': 'coalesced', 'reason': 'catchup'}]
    """
    if not isinstance(scenario, Scenario):
        raise InputError(f"scenario: expected a calsim.Scenario, got {type(scenario).__name__}")
    if engine not in ENGINES:
        raise InputError(f"engine: unknown engine {engine!r} (allowed: {choices(ENGINES)})"
                         f"{did_you_mean(engine, ENGINES) if isinstance(engine, str) else ''}")
    if settle not in SETTLE:
        raise InputError(f"settle: {settle!r} (allowed: {choices(SETTLE)})")
    if progress is not None and not isinstance(progress, bool):
        raise InputError(f"progress: {shown(progress)} (allowed: None, True or False)")
    _check_engine_options(engine, client=client, output=output, progress=progress, settle=settle,
                          schedules=schedules)
    cap = limits.max_occurrences(max_occurrences)
    if engine == "dask":
        # Partitions run on Dask workers and go to Parquet under ``output``;
        # the result is a calsim.distributed.LedgerDataset (not held in memory).
        on_dask = engine_entry(engine)
        return on_dask(scenario, client=client, output=output, max_occurrences=cap, schedules=schedules)
    check_scenario(scenario, cap)
    # The engine's own expansions (one per release) are checked against the same limit.
    with limits.scope(cap):
        return run_local(scenario, settle=settle, progress=progress)


def _check_engine_options(engine: str, *, client: object, output: object, progress: bool | None,
                          settle: str, schedules: object = None) -> None:
    """Refuse an option ``engine`` would not honour: a silently dropped option is a wrong answer nobody sees.

    >>> _check_engine_options("local", client=None, output="/tmp/x", progress=None, settle="columns")
    Traceback (most recent call last):
    calsim.errors.InputError: output: '/tmp/x' is not used by engine='local' (it simulates in this process and returns the ledger); client and output are for engine='dask'
    """  # noqa: E501  (a doctest output line)
    if engine == "local":
        for name, value in (("client", client), ("output", output)):
            if value is not None:
                raise InputError(f"{name}: {shown(value)} is not used by engine='local' (it simulates in this process "
                                 "and returns the ledger); client and output are for engine='dask'")
        if schedules is not None:
            raise InputError(f"schedules: {shown(schedules)} is read by the workers of engine='dask'; with "
                             "engine='local' give the scenario its schedules (calsim.load reads a schedules table)")
        return
    if progress:
        raise InputError("progress: True is not used by engine='dask' (it shows no progress bar; the Dask "
                         "dashboard shows the tasks); allowed with engine='dask': None or False")
    if settle != "columns":
        raise InputError(f"settle: {settle!r} is not used by engine='dask' (its workers settle in columns); "
                         "allowed with engine='dask': 'columns'")
