"""``differences(preset)``: what a preset knows it does not reproduce, as a table a person can read.

Every preset states, in its ``notes``, where calsim and the scheduler part
ways; the notes that are :class:`~calsim.presets.Difference` records also
carry a topic, a minimal example and the scheduler version the difference
was measured against. This module lays them out, one row each.

>>> from calsim import presets
>>> t = presets.differences(presets.kubernetes())
>>> t.columns
['preset', 'topic', 'difference', 'example', 'measured_against']
"""

from __future__ import annotations

import polars as pl

from ..errors import InputError
from ._base import Preset

__all__ = ["differences"]


def differences(preset: Preset) -> pl.DataFrame:
    """One row per known difference of ``preset`` from its scheduler.

    Columns: ``preset``, ``topic``, ``difference`` (what each does),
    ``example`` (a minimal case; empty for a note without one),
    ``measured_against`` (the scheduler's code and version). Notes given as
    plain text (settings echoed, approximations of unmodelled parts) appear
    with an empty topic.
    """
    if not isinstance(preset, Preset):
        raise InputError(f"preset: expected a calsim.presets.Preset (e.g. presets.kubernetes()), got "
                         f"{type(preset).__name__}")
    records = {d.text: d for d in preset.differences}
    rows = []
    for note in preset.notes:
        d = records.get(note)
        rows.append({"preset": preset.name, "topic": d.topic if d else "", "difference": note,
                     "example": d.example if d else "",
                     "measured_against": (d.measured if d and d.measured else preset.measured)})
    schema = {"preset": pl.String, "topic": pl.String, "difference": pl.String, "example": pl.String,
              "measured_against": pl.String}
    return pl.DataFrame(rows, schema=schema)
