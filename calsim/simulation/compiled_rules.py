"""The run rules of :mod:`.run_rules`, made callable from the compiled loops (numba), without a second copy.

Each rule in :data:`.run_rules.SCALAR_RULES` is written once, in the part of
Python numba compiles, so that one function serves both paths: the column
steps call it with numpy arrays, and the ordered loop (:mod:`.worker_kernel`,
:mod:`.worker_steps`) calls it with one run's numbers, compiled into it
through the compiled function of the same name here (``njit`` of the rule
itself: compiled and cached once, not again inside each kernel).
:func:`held_at_opening` also serves the budget-period columns, which call it
from Python.

numba's on-disk cache (``cache=True``) checks only the source file of the
function it compiled, not the rules a kernel calls: :func:`drop_stale_caches`
removes a kernel's cached code when a rule's module is newer than it, so a
rule changed next month is never shadowed by last month's compiled kernel.

This module imports numba (~0.5 s): only the loops import it, never
``import calsim``.
"""

from __future__ import annotations

import glob
import os

from numba import njit
from numba.extending import register_jitable

import calsim.simulation.randomness as randomness
import calsim.simulation.run_rules as rules

__all__ = ["drop_stale_caches", "up_one", "beyond", "deadline", "backlog_outcome", "held_outcome", "held_at_opening",
           "month_of_day", "period_of_day", "local_day", "uniform_one", "norm_ppf_one"]


def drop_stale_caches(kernel_file: str, *also: str) -> None:
    """Delete numba's cache of ``kernel_file``'s functions if :mod:`.run_rules` or :mod:`.randomness` (the rules
    its kernels call), or a file in ``also`` (other compiled functions it calls), changed after that cache was
    written (best effort: a read-only install keeps its cache, written by the same install as the rules)."""
    # (A module imported from its source always has a __file__.)
    deps = max(os.path.getmtime(f) for f in (rules.__file__, randomness.__file__, *also) if f is not None)
    folder = os.path.join(os.path.dirname(kernel_file), "__pycache__")
    stem = os.path.splitext(os.path.basename(kernel_file))[0]
    for index in glob.glob(os.path.join(folder, f"{glob.escape(stem)}.*.nbi")):
        try:
            if os.path.getmtime(index) < deps:
                for f in glob.glob(index[:-4] + "*.nb[ic]"):
                    os.remove(f)
        except OSError:
            pass


for _rule in rules.SCALAR_RULES + randomness.SCALAR_RULES:
    register_jitable(_rule)  # (a rule calling a rule, as held_at_opening calls beyond)

# Each rule also as a compiled function of its own, for the kernels to call: numba then compiles (and caches)
# it once, where a rule typed inside a kernel was compiled again with the kernel (its cold compile time
# grew by a third with held_at_opening typed in place).
up_one = njit(cache=True)(rules.up_one)
beyond = njit(cache=True)(rules.beyond)
deadline = njit(cache=True)(rules.deadline)
backlog_outcome = njit(cache=True)(rules.backlog_outcome)
held_outcome = njit(cache=True)(rules.held_outcome)
held_at_opening = njit(cache=True)(rules.held_at_opening)
month_of_day = njit(cache=True)(rules.month_of_day)
period_of_day = njit(cache=True)(rules.period_of_day)
local_day = njit(cache=True)(rules.local_day)
uniform_one = njit(cache=True)(randomness.uniform_one)
norm_ppf_one = njit(cache=True)(randomness.norm_ppf_one)
