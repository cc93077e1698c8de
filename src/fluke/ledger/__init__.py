"""The ledger of runs, grades and documents: SQLite by default, PostgreSQL by URL.

>>> import tempfile, os
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "fluke.db"))
>>> ledger.migrations()[:2]
['0001_runs_versions_documents_grades', '0002_runs_keyed_by_hash_with_counts']
>>> ledger.migrations()[2:5]
['0003_counts_keep_unknowns', '0004_pending_ingests', '0005_steps_where_runs_die']
>>> ledger.migrations()[5:]
['0006_trial_outcomes_and_unit_cells', '0007_one_run_per_trial']

The package imports its parts on first use. Every failure of the storage underneath (a
full disk, a lost connection, a damaged or newer ledger, a stored run that no longer
reads) is a :class:`fluke.errors.LedgerError` naming the ledger and saying what to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._base import Ledger

__all__ = ["CountRow", "Document", "ExportResult", "IngestResult", "Ledger", "OutcomeSequences", "Places",
           "SourceOverlap", "StepRow", "StoredRun", "TrialOutcomes", "UnitCell", "VersionInfo", "export_runs",
           "open_ledger", "row_run", "utcnow"]

_LAZY = {
    "Ledger": "._base",
    "utcnow": "._ingest",
    "CountRow": "._types",
    "Document": "._types",
    "IngestResult": "._types",
    "StoredRun": "._types",
    "StepRow": "._types",
    "Places": "._types",
    "VersionInfo": "._types",
    "SourceOverlap": "._overlap",
    "TrialOutcomes": "._types",
    "OutcomeSequences": "._types",
    "UnitCell": "._types",
    "ExportResult": "._export",
    "export_runs": "._export",
    "row_run": "._rows",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_ledger(url: str = "fluke.db", *, create: bool = True) -> "Ledger":
    """Open (migrating as needed) the ledger at ``url``; ``create=False`` refuses to make one.

    A path or ``sqlite:///path`` opens SQLite; ``postgresql://…`` opens PostgreSQL;
    ``parquet:DIR`` (a dataset ``fluke export --format parquet`` wrote) or ``duckdb:FILE`` opens
    it read-only through DuckDB (:mod:`fluke.ledger._duckdb`, ``pip install 'fluke[lake]'``). A verb
    that only reads passes ``create=False``: a ledger that is not there (a missing file, a
    database without fluke's tables) raises :class:`fluke.errors.LedgerError` and nothing
    is created.

    >>> import tempfile, os
    >>> missing = os.path.join(tempfile.mkdtemp(), "none.db")
    >>> open_ledger(missing, create=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    fluke.errors.LedgerError: no ledger at ... (create one with: fluke ingest FILE)
    >>> os.path.exists(missing)
    False
    """
    if url.startswith(("parquet:", "duckdb:")):
        from ._duckdb import LakeLedger

        return LakeLedger(url, create=create)
    if url.startswith(("postgresql://", "postgres://")):
        from ._postgres import PostgresLedger

        return PostgresLedger(url, create=create)
    from ._sqlite import SqliteLedger

    return SqliteLedger(url, create=create)
