"""The ledger of runs, grades and documents: SQLite by default, PostgreSQL by URL.

>>> import tempfile, os
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "fluke.db"))
>>> ledger.migrations()
['0001_runs_versions_documents_grades', '0002_runs_keyed_by_hash_with_counts']

The package imports its parts on first use. Every failure of the storage underneath (a
full disk, a lost connection, a damaged or newer ledger, a stored run that no longer
reads) is a :class:`fluke.errors.LedgerError` naming the ledger and saying what to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._base import Ledger

__all__ = ["CountRow", "Document", "IngestResult", "Ledger", "SourceOverlap", "VersionInfo", "open_ledger",
           "utcnow"]

_LAZY = {"Ledger": "._base", "utcnow": "._ingest", "CountRow": "._types", "Document": "._types",
         "IngestResult": "._types", "VersionInfo": "._types", "SourceOverlap": "._overlap"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_ledger(url: str = "fluke.db") -> "Ledger":
    """Open (creating and migrating as needed) the ledger at ``url``.

    A path or ``sqlite:///path`` opens SQLite; ``postgresql://…`` opens PostgreSQL.
    """
    if url.startswith(("postgresql://", "postgres://")):
        from ._postgres import PostgresLedger

        return PostgresLedger(url)
    from ._sqlite import SqliteLedger

    return SqliteLedger(url)
