"""Helpers shared by the notebooks: where outputs go, and display settings.

Kept tiny on purpose: a notebook should read on its own. This module only
holds what would otherwise be copied into all four: the output directory
(a temporary directory, never the repository: `CALSIM_OUT` overrides it) and
polars display settings that make tables readable and stable under nbval.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import polars as pl


def setup() -> Path:
    """Display settings for readable, stable tables; returns the directory for PNGs and DuckDB files."""
    pl.Config.set_tbl_rows(40)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_fmt_str_lengths(110)
    pl.Config.set_tbl_width_chars(200)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    pl.Config.set_tbl_hide_column_data_types(True)
    out = Path(os.environ.get("CALSIM_OUT") or tempfile.gettempdir()) / "calsim-notebooks"
    out.mkdir(parents=True, exist_ok=True)
    return out


def fresh(path: Path) -> Path:
    """Remove an earlier run's DuckDB file so the notebook always starts from an empty store."""
    for p in (path, path.with_name(path.name + ".wal")):
        if p.exists():
            p.unlink()
    return path
