"""The PostgreSQL backend, for a ledger a team shares (psycopg 3, loaded lazily)."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any, Iterable, Iterator, Sequence

from ..errors import LedgerError, require
from ._base import Ledger
from ._faults import postgres_fault
from ._rows import STORED
from ._writer import RunWriter


_CURSORS = itertools.count()


class PostgresLedger(Ledger):
    """A ledger in a PostgreSQL database named by a ``postgresql://`` URL."""

    placeholder = "%s"
    dialect = "postgresql"

    def _connect(self) -> Any:
        psycopg = require("psycopg", package="psycopg", extra="postgres", purpose="A PostgreSQL ledger")
        try:
            return psycopg.connect(self.url, autocommit=False)
        except psycopg.OperationalError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise LedgerError(f"cannot connect to the PostgreSQL ledger: {first}") from None

    def _fault(self, exc: Exception) -> LedgerError | None:
        error = postgres_fault(self.name, exc)
        if error is not None and not self._depth:
            # A failed statement outside atomic() (a stored body the server cannot read as
            # JSON, say) aborts PostgreSQL's implicit transaction: end it, so that the same
            # ledger answers the next call instead of "current transaction is aborted".
            with contextlib.suppress(Exception):
                self._conn.rollback()
        return error

    def _transient(self, exc: BaseException) -> bool:
        import psycopg

        return isinstance(exc, (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure))

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple]:
        """Rows as they are read, through a server-side cursor (:attr:`BATCH` rows a fetch).

        The cursor is declared WITH HOLD, so a transaction committed between rows (a write
        while reading) does not close it; it is closed when the generator ends or is closed.
        """
        with self.faults():
            cur = self._conn.cursor(name=f"fluke_stream_{next(_CURSORS)}", withhold=True)
            cur.itersize = self.BATCH
            try:
                cur.execute(self._sql(sql), tuple(params))
                while rows := cur.fetchmany(self.BATCH):
                    yield from rows
            finally:
                with contextlib.suppress(Exception):   # a lost connection has no cursor to close
                    cur.close()

    def _begin(self) -> None:
        # psycopg opens a transaction implicitly; end any read-only one left open.
        self._conn.commit()

    def _tables(self) -> set[str]:
        rows = self.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        return {name for (name,) in rows}

    def _run_writer(self) -> RunWriter:
        return PostgresRunWriter(self._conn)

    def _json_field(self, *path: str, integer: bool = False) -> str:
        # PostgreSQL's JSON functions refuse a document holding the escape \u0000 (a NUL in a
        # tool result, say), which its text type cannot carry; the field read here never holds
        # one (a run refuses NUL in names), so the escape is swapped for a harmless one first
        # and one such run cannot make every query fail. Trials sort as numbers of any size.
        field = f"(replace(body, '\\u0000', '\\u0001')::json #>> '{{{','.join(path)}}}')"
        return f"{field}::numeric" if integer else field


class PostgresRunWriter(RunWriter):
    """The PostgreSQL writer: COPY into a temporary table, then one INSERT that returns the new keys."""

    placeholder = "%s"
    dialect = "postgresql"

    def _new_ingest(self, recorded_at: str) -> int:
        cur = self.conn.cursor()
        # Ingests into this ledger take turns from their first write to their commit (or
        # rollback, or a dropped connection): an advisory lock of the transaction, taken
        # before any row is locked, so two ingests of overlapping runs never wait on each other
        # in a cycle. Readers are not blocked.
        cur.execute("SELECT pg_advisory_xact_lock(hashtext('fluke ingest'), hashtext(current_schema()))")
        cur.execute("INSERT INTO ingests (recorded_at) VALUES (%s) RETURNING id", (recorded_at,))
        return int(cur.fetchone()[0])

    def _insert(self, rows: Iterable[tuple], count: int) -> set[int] | None:
        cur = self.conn.cursor()
        columns = ", ".join(STORED)
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS runs_in (k BIGINT, t BIGINT, vid BIGINT, scenario TEXT, "
                    "source TEXT, body TEXT) ON COMMIT DELETE ROWS")
        cur.execute("TRUNCATE runs_in")
        with cur.copy(f"COPY runs_in ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cur.execute(f"INSERT INTO runs (ingest, {columns}) SELECT {int(self.ingest)}, {columns} FROM runs_in "
                    "ORDER BY k ON CONFLICT DO NOTHING RETURNING k")
        added = {k for (k,) in cur.fetchall()}
        return None if len(added) == count else added
