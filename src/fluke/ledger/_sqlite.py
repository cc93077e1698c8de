"""The SQLite backend: a single file in WAL mode, zero setup."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from ._base import Ledger
from ._writer import PipedWriter, RunWriter, SqliteRunWriter, connect_sqlite


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
        try:
            return connect_sqlite(path)
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{path}: not a fluke ledger ({exc}); choose another --ledger") from None

    def _begin(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def _tables(self) -> set[str]:
        return {name for (name,) in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def _run_writer(self) -> RunWriter:
        return SqliteRunWriter(self._conn)

    def _piped_writer(self) -> Any:
        path = self._path()
        if path == ":memory:" or os.environ.get("FLUKE_LEDGER_WRITER") == "0":   # bench/ledger.py's switch
            return None
        try:
            return PipedWriter(str(Path(path).expanduser().resolve()))
        except OSError:   # no interpreter to start (an embedded Python): write here instead
            return None

    def _json_field(self, *path: str, integer: bool = False) -> str:
        return f"json_extract(body, '$.{'.'.join(path)}')"
