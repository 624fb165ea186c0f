"""The ledger store: many simulated ledgers side by side in one DuckDB file, and what can be asked of them.

``calsim.LedgerStore`` and ``calsim.store.LedgerStore`` are the public paths;
importing this package loads no DuckDB (it is imported when a store is opened).

Modules, one job each, lowest first:

- :mod:`.sql`: ``identifier`` and ``literal``, the one place a name or value becomes SQL text.
- :mod:`.store_paths`: where a store may live (local DuckDB files only), checked before DuckDB opens it.
- :mod:`.schema`: column types, the tables of a new store and the views' SQL (``observation_gaps``...).
- :mod:`.tables`: each scenario's own table, filled once and sealed; the ``occurrences`` view over them.
- :mod:`.migrations`: ``SCHEMA_VERSION`` and the steps from each older layout to the next.
- :mod:`.ledger_records`: what is stored beside a ledger's rows (scenario and schedule rows, digest) and the checks
  before a write (name, columns, key).
- :mod:`.catalog`: what a store file must hold before anything in it is read (no macro, no view calsim did not
  write, calsim's tables, columns and types for the layout it claims): a file from elsewhere runs nothing.
- :mod:`.connection`: one DuckDB connection to a store: checked, then opened and migrated; read-only, no other
  file reachable; a time bound per query; transactions; failures as ``StoreError``.
- :mod:`.writer`: writing a ledger, attaching a Parquet dataset, writing a tz diff.
- :mod:`.queries`: reading a ledger back, ``compare``, the rows ``reconcile`` needs, the Parquet export.
- :mod:`.reconcile`: an actual run history against a ledger's rows (a pure comparison of two frames).
- :mod:`.ledger_store`: ``LedgerStore``, whose methods hand the work to ``writer`` and ``queries``.

The store's errors are defined in :mod:`calsim.errors` (one hierarchy); the
ones it raises stay importable from here, as they were when the store was
one module (``from calsim.store import ScenarioExistsError``).

>>> import calsim
>>> calsim.LedgerStore is LedgerStore, SCHEMA_VERSION, RECONCILE_CLASSES[:2]
(True, 5, ('matched', 'missing'))
"""

from ..errors import (
    DuplicateKeyError,
    InputError,
    LedgerLockedError,
    LedgerSchemaError,
    ScenarioExistsError,
    SchemaVersionError,
    StoreError,
    UnknownScenarioError,
)
from .store_paths import check_store_path
from .ledger_store import LedgerStore
from .migrations import SCHEMA_VERSION
from .reconcile import RECONCILE_CLASSES
from .ledger_records import check_scenario_name

__all__ = ["LedgerStore", "SCHEMA_VERSION", "RECONCILE_CLASSES", "check_store_path", "check_scenario_name"]
# Importable here too, not exported by `*` (as before): the errors a store raises.
_ERRORS = (StoreError, LedgerLockedError, LedgerSchemaError, SchemaVersionError, ScenarioExistsError,
           DuplicateKeyError, UnknownScenarioError, InputError)
