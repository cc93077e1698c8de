"""The SQLite backend: a single file in WAL mode, zero setup.

A file this process cannot write (a read-only mount, another user's file) is opened
read-only: every verb that reads works, and an ingest says why it cannot.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..errors import LedgerError
from ._base import Ledger
from ._faults import sqlite_fault
from ._rows import row_run
from ._writer import RunWriter, SqliteRunWriter, connect_sqlite, connect_sqlite_readonly


class SqliteLedger(Ledger):
    """A ledger in one SQLite file (``./fluke.db`` by default)."""

    #: The page cache (KiB) while a read streams. A scan reads each page once, so the large
    #: cache the connection keeps for ingests would only grow with the ledger, up to its
    #: cap, without making the scan faster.
    STREAM_CACHE_KIB = 16384
    _streams = 0
    _cache_size = 0

    def _path(self) -> str:
        return self.url.removeprefix("sqlite:///").removeprefix("sqlite://")

    def _exists(self) -> bool | None:
        path = self._path()
        if path == ":memory:":
            return True
        file = Path(path).expanduser()
        return file.is_file() and file.stat().st_size > 0   # SQLite would make an empty file a database

    def _missing(self) -> str:
        return f"no ledger at {self._path()} (create one with: fluke ingest FILE)"

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

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple]:
        if not self._streams:
            self._cache_size = self._conn.execute("PRAGMA cache_size").fetchone()[0]
            self._conn.execute(f"PRAGMA cache_size=-{self.STREAM_CACHE_KIB}")
        self._streams += 1
        try:
            yield from super().stream(sql, params)
        finally:
            self._streams -= 1
            if not self._streams:
                self._conn.execute(f"PRAGMA cache_size={int(self._cache_size)}")

    def _begin(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def _tables(self) -> set[str]:
        return {name for (name,) in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def _run_writer(self) -> RunWriter:
        return SqliteRunWriter(self._conn)

    def _ordered_runs(self, where: str, limit: int | None) -> str:
        # Sort the row ids, then fetch each body by id: sorting the bodies themselves would
        # hold them all in SQLite's sorter (in this process, up to the 256 MiB page cache),
        # so memory would grow with the ledger. The LIMIT keeps the sorted subquery from
        # being flattened into the join; CROSS JOIN keeps it the outer loop, whose order the
        # rows come out in.
        return (f"SELECT r.body, r.source FROM (SELECT rowid AS id FROM runs{where} "
                f"ORDER BY ingest, scenario, {self._json_field('trial', integer=True)}, k "
                f"LIMIT {-1 if limit is None else int(limit)}) o CROSS JOIN runs r ON r.rowid = o.id")

    def _json_field(self, *path: str, integer: bool = False) -> str:
        return f"json_extract(body, '$.{'.'.join(path)}')"


def _read_only(path: Path) -> bool:
    """Whether the ledger file exists but cannot be written here (nor its folder, where SQLite
    keeps the write-ahead log beside it)."""
    if not path.exists():
        return False
    return not (os.access(path, os.W_OK) and os.access(path.resolve().parent, os.W_OK))
