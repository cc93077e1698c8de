"""The PostgreSQL backend, for a ledger a team shares (psycopg 3, loaded lazily)."""

from __future__ import annotations

from typing import Any

from ..errors import LedgerError, require
from ._base import _RUN_COLUMNS, Ledger


class PostgresLedger(Ledger):
    """A ledger in a PostgreSQL database named by a ``postgresql://`` URL."""

    placeholder = "%s"

    def _connect(self) -> Any:
        psycopg = require("psycopg", package="psycopg", extra="postgres", purpose="A PostgreSQL ledger")
        try:
            return psycopg.connect(self.url, autocommit=False)
        except psycopg.OperationalError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise LedgerError(f"cannot connect to the PostgreSQL ledger: {first}") from None

    def _begin(self) -> None:
        # psycopg opens a transaction implicitly; end any read-only one left open.
        self._conn.commit()

    def _tables(self) -> set[str]:
        rows = self.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        return {name for (name,) in rows}

    def _insert_runs(self, rows: list[tuple]) -> int:
        cur = self._conn.cursor()
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS runs_in (LIKE runs) ON COMMIT DELETE ROWS")
        cur.execute("TRUNCATE runs_in")
        with cur.copy(f"COPY runs_in ({', '.join(_RUN_COLUMNS)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cur.execute("INSERT INTO runs SELECT * FROM runs_in ON CONFLICT (hash) DO NOTHING")
        return cur.rowcount
