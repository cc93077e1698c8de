"""The SQLite backend: a single file in WAL mode, zero setup."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from ._base import Ledger


class SqliteLedger(Ledger):
    """A ledger in one SQLite file (``./fluke.db`` by default)."""

    def _connect(self) -> Any:
        path = self.url.removeprefix("sqlite:///").removeprefix("sqlite://")
        if path != ":memory:":
            parent = Path(path).expanduser().resolve().parent
            if not parent.is_dir():
                raise LedgerError(f"{path}: folder {parent} does not exist; create it or choose another --ledger")
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA cache_size=-262144")  # up to 256 MiB: keeps the hash index hot on big ingests
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{path}: not a fluke ledger ({exc}); choose another --ledger") from None
        return conn

    def _begin(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def _tables(self) -> set[str]:
        return {name for (name,) in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def _insert_runs(self, rows: list[tuple]) -> int:
        before = self._conn.total_changes
        self._conn.executemany(
            "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (hash) DO NOTHING", rows)
        return self._conn.total_changes - before
