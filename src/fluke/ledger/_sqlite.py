"""The SQLite backend: a single file in WAL mode, zero setup.

A file this process cannot write (a read-only mount, another user's file) is opened
read-only: every verb that reads works, and an ingest says why it cannot.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from ._base import Ledger
from ._faults import sqlite_fault
from ._rows import row_run
from ._writer import RunWriter, SqliteRunWriter, connect_sqlite, connect_sqlite_readonly


class SqliteLedger(Ledger):
    """A ledger in one SQLite file (``./fluke.db`` by default)."""

    def _path(self) -> str:
        return self.url.removeprefix("sqlite:///").removeprefix("sqlite://")

    def _connect(self) -> Any:
        path = self._path()
        if path != ":memory:":
            parent = Path(path).expanduser().resolve().parent
            if not parent.is_dir():
                raise LedgerError(f"{path}: folder {parent} does not exist; create it or choose another --ledger")
            self.read_only = _read_only(Path(path).expanduser())
        try:
            if self.read_only:
                return connect_sqlite_readonly(str(Path(path).expanduser()))
            return connect_sqlite(path)
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{path}: not a fluke ledger ({exc}); choose another --ledger") from None

    def _fault(self, exc: Exception) -> LedgerError | None:
        if isinstance(exc, sqlite3.OperationalError) and "malformed JSON" in str(exc):
            # A query reading a field of every stored body met one that is not JSON: name it.
            try:
                bad = self._conn.execute("SELECT body FROM runs WHERE NOT json_valid(body) LIMIT 1").fetchone()
            except sqlite3.Error:
                bad = None
            if bad is not None:
                try:
                    row_run(bad[0], ledger=self.name)
                except LedgerError as error:
                    return error
        return sqlite_fault(self.name, exc)

    def _begin(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def _tables(self) -> set[str]:
        return {name for (name,) in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def _run_writer(self) -> RunWriter:
        return SqliteRunWriter(self._conn)

    def _json_field(self, *path: str, integer: bool = False) -> str:
        return f"json_extract(body, '$.{'.'.join(path)}')"


def _read_only(path: Path) -> bool:
    """Whether the ledger file exists but cannot be written here (nor its folder, where SQLite
    keeps the write-ahead log beside it)."""
    if not path.exists():
        return False
    return not (os.access(path, os.W_OK) and os.access(path.resolve().parent, os.W_OK))
