"""Scale-out of :func:`calsim.simulate` on a Dask cluster; the ledger lands in Parquet, not in memory.

:func:`simulate` cuts a scenario into sub-scenarios that share nothing,
simulates each one with the local engine on a ``dask.distributed`` worker,
and has every worker write its part of the ledger straight to Parquet. The
client only receives a few numbers per partition, so it never holds the
ledger; the result is a :class:`LedgerDataset` over the files. The same
scenario gives the same ledger, row for row, whatever the number of
partitions or workers. Dask is imported only when a run starts.

Modules, one job each:

- :mod:`.partitioning`: which schedules are coupled (budgets, capacity) and the sub-scenarios;
- :mod:`.dataset_files`: the dataset's layout and file system (local paths through :mod:`calsim.atomic`, fsspec URLs);
- :mod:`.worker`: the task a worker runs (simulate one part, write ``part-<k>.parquet``);
- :mod:`.metadata`: what ``_scenario.json`` records (scenario, schedule revisions, files);
- :mod:`.client`: :func:`simulate`, the client side (checks, submission, clean-up, ``_scenario.json`` last);
- :mod:`.dataset`: :class:`LedgerDataset` (scan, scans, summary, gaps, coverage, frame in the local order).

``calsim.distributed.simulate`` and ``calsim.distributed.LedgerDataset`` are
documented paths, hence re-exported here with the module's other public names.
"""

from __future__ import annotations

from .client import simulate
from .dataset import LedgerDataset
from .dataset_files import METADATA_FILE, scenario_directory
from .metadata import FORMAT
from .partitioning import couplings, partition

__all__ = ["simulate", "LedgerDataset", "couplings", "partition", "scenario_directory", "METADATA_FILE", "FORMAT"]
