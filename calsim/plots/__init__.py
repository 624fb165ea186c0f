"""Charts of calsim frames: each function takes ledgers or frames and returns a matplotlib ``Figure``.

Nothing here touches pyplot's global state: figures are built with
:class:`matplotlib.figure.Figure` and an Agg canvas, so they work headless,
never pop up a window and are not kept alive by pyplot. Save one with
``fig.savefig("out.png")``; in Jupyter a figure shows as a cell's value (it
has ``_repr_png_``, so no ``%matplotlib inline`` is needed). ``import calsim``
does not load this package (nor matplotlib): ``calsim.plots`` does, on first use.

=========================  ==============================================================
:func:`timeline`           per schedule a row: runs (late ones marked), missed and excluded occurrences,
                           outages, observation gaps; several policies as panels with the same rows
:func:`state_counts`       policies side by side, stacked by terminal state
:func:`lateness`           CDF of lateness of started runs per policy
:func:`cost_impact`        cost per budget period and policy against the budget limit
:func:`budget_waits`       how long runs waited for budget, per policy
:func:`local_vs_utc`       a schedule's local and UTC fire times of day across a year
:func:`tzdiff_map`         what a tzdata upgrade moves, by zone, schedule and date
:func:`rate_waits`         how long runs waited for a rate-limit token, over time and as a CDF, per policy
:func:`delivery_outcomes`  per policy: duplicate effects, data windows never / late / twice processed
:func:`tradeoff`           a sweep's combinations on two measures, the Pareto front joined and labelled
=========================  ==============================================================

Ledger arguments (``ledgers``) take a :class:`~calsim.Ledger`, a list or a
``{label: Ledger}`` dict of them, or a ledger frame (polars or pandas; split by
its ``scenario`` column). Colours come from one colour-blind-safe palette,
Okabe-Ito (:data:`OKABE_ITO`); states keep one colour and marker everywhere
(:data:`STATE_STYLE`); shifts use the diverging ColorBrewer ``PuOr`` map.
All instants are drawn in UTC unless an axis label says otherwise; local
calendar days are read from each ledger's own tz release (calsim's tables,
never polars' bundled tz database), so a what-if release moves them.
Aggregates come from the ledger's views (:mod:`calsim.simulation.views`)
wherever a view defines them; each module says what it computes itself.

Modules, one chart family each (drawing only), plus what they share:

- ``timelines``: :func:`timeline`.
- ``outcomes``: :func:`state_counts`, :func:`lateness` (the summary view).
- ``costs``: :func:`cost_impact`, :func:`budget_waits`.
- ``zones``: :func:`local_vs_utc`, :func:`tzdiff_map` (expansions and diffs, no ledger).
- ``delivery``: :func:`rate_waits`, :func:`delivery_outcomes` (worker-level ledgers: the summary and coverage views).
- ``tradeoffs``: :func:`tradeoff`, :func:`pareto_front` (a :func:`calsim.sweep`'s rows).
- ``style``: palette, state styles, the ``Figure`` returned, axis and label helpers.
- ``inputs``: ledgers and frames checked and normalised; the tz release a ledger was run with.

No module is named after its chart (``timelines``, not ``timeline``; ``delivery`` holds
``delivery_outcomes``): a submodule would shadow the function of the same name on this package.
"""

from .costs import budget_waits, cost_impact
from .delivery import delivery_outcomes, rate_waits
from .outcomes import lateness, state_counts
from .style import OKABE_ITO, SERIES_COLORS, STATE_STYLE, Figure  # noqa: F401  (Figure: what every chart returns)
from .timelines import timeline
from .tradeoffs import pareto_front, tradeoff
from .zones import local_vs_utc, tzdiff_map

__all__ = ["timeline", "state_counts", "cost_impact", "lateness", "budget_waits", "local_vs_utc", "tzdiff_map",
           "rate_waits", "delivery_outcomes", "tradeoff", "pareto_front", "OKABE_ITO", "SERIES_COLORS", "STATE_STYLE"]
