"""The SQLite backend: a single file in WAL mode, zero setup."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..errors import LedgerError
from ._base import Ledger
from ._writer import PipedWriter, RunWriter, SqliteRunWriter, connect_sqlite


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
        try:
            return connect_sqlite(path)
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{path}: not a fluke ledger ({exc}); choose another --ledger") from None

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

    def _piped_writer(self) -> Any:
        path = self._path()
        if path == ":memory:":
            return None
        try:
            return PipedWriter(str(Path(path).expanduser().resolve()))
        except OSError:   # no interpreter to start (an embedded Python): write here instead
            return None

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
