"""The ledger of runs, grades and documents: SQLite by default, PostgreSQL by URL.

>>> import tempfile, os
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "fluke.db"))
>>> ledger.migrations()
['0001_runs_versions_documents_grades']
"""

from __future__ import annotations

from ._base import Ledger, utcnow
from ._types import CountRow, Document, IngestResult, VersionInfo

__all__ = ["CountRow", "Document", "IngestResult", "Ledger", "VersionInfo", "open_ledger", "utcnow"]


def open_ledger(url: str = "fluke.db") -> Ledger:
    """Open (creating and migrating as needed) the ledger at ``url``.

    A path or ``sqlite:///path`` opens SQLite; ``postgresql://…`` opens PostgreSQL.
    """
    if url.startswith(("postgresql://", "postgres://")):
        from ._postgres import PostgresLedger

        return PostgresLedger(url)
    from ._sqlite import SqliteLedger

    return SqliteLedger(url)
