"""The SQLite backend: a single file in WAL mode, zero setup.

A file this process cannot write (a read-only mount, another user's file) is opened
read-only: every verb that reads works, and an ingest says why it cannot.
"""

from __future__ import annotations

import contextlib
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

    SLICE_KEY = "rowid"

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
        existed = path != ":memory:" and self._exists()
        try:
            if self.read_only:
                conn = connect_sqlite_readonly(str(Path(path).expanduser()))
            else:
                conn = connect_sqlite(path)
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{path}: not a fluke ledger ({exc}); choose another --ledger") from None
        if existed:
            _check_pages(conn, path)
        return conn

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
                # and hand back the pages the stream read (up to the stream's cache): a pass over
                # every run leaves its last pages in memory, which a later step would only re-read
                self._conn.execute("PRAGMA shrink_memory")

    def _begin(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def _tables(self) -> set[str]:
        return {name for (name,) in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def _run_writer(self) -> RunWriter:
        return SqliteRunWriter(self._conn)

    #: How long an ingest waits for another process's ingest into the same file (seconds).
    INGEST_WAIT = 30.0
    #: Whether this ledger holds its file's ingest lock now (it is not taken twice).
    _lock_depth = 0

    def __init__(self, url: str, *, create: bool = True) -> None:
        super().__init__(url, create=create)
        if not self.read_only and "pending" in self._tables() and self.query("SELECT 1 FROM pending LIMIT 1"):
            self._recover()

    def _stages(self) -> bool:
        return self._path() != ":memory:"

    def _checkpointer(self) -> Any:
        from ._checkpoint import Checkpointer

        return Checkpointer(str(Path(self._path()).expanduser()), self._conn)

    @contextlib.contextmanager
    def ingest_lock(self, wait: float | None = None) -> Iterator[bool]:
        """Hold the file's ingest lock (an exclusive ``flock`` on ``FILE-ingest``) for one
        logical ingest, whose batches commit one by one: no other ingest can then store,
        or skip as stored, a run of an ingest that may yet be removed. Yields whether it was
        taken: ``wait=0`` tries once; otherwise an ingest waits up to :attr:`INGEST_WAIT`
        seconds and then says that another process is writing.
        """
        try:
            import fcntl
        except ImportError:   # no flock here (Windows): SQLite's own lock is all there is
            fcntl = None
        if fcntl is None or not self._stages() or self._lock_depth:   # or in memory; or held here already
            yield True
            return
        import time

        wait = self.INGEST_WAIT if wait is None else wait
        path = Path(self._path()).expanduser()
        with open(f"{path}-ingest", "a") as fh:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        if not wait:
                            yield False
                            return
                        raise LedgerError(f"{self.name}: another process is ingesting into it (waited "
                                          f"{wait:.0f} s); run this again when that has finished") from None
                    time.sleep(0.05)
            self._lock_depth = 1   # an ingest inside record_once's lock joins it (flock is per open file)
            try:
                yield True
            finally:
                self._lock_depth = 0
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _recover(self) -> None:
        """Remove what ingests that ended without finishing (a killed process) left, if no
        ingest is running now; readers skip those runs meanwhile."""
        with self.ingest_lock(wait=0) as taken:
            if taken:
                self.drop_pending()

    def drop_pending(self) -> None:
        """Remove every pending ingest: its runs, a batch per transaction, then its record.

        The caller holds :meth:`ingest_lock`, so each pending ingest is one that failed.
        """
        with self.faults():
            for ingest, after in self.query("SELECT ingest, after FROM pending ORDER BY ingest"):
                while True:
                    with self.atomic():
                        cur = self._conn.execute(
                            "DELETE FROM runs WHERE rowid IN (SELECT rowid FROM runs WHERE rowid > ? AND ingest = ? "
                            "LIMIT ?)", (after, ingest, self.DROP_BATCH))
                    if cur.rowcount < self.DROP_BATCH:
                        break
                with self.atomic():
                    self._conn.execute("DELETE FROM trial_outcomes_staged WHERE ingest = ?", (ingest,))
                    self._conn.execute("DELETE FROM ingests WHERE id = ?", (ingest,))
                    self._conn.execute("DELETE FROM pending WHERE ingest = ?", (ingest,))

    #: Runs removed per transaction when a pending ingest is dropped.
    DROP_BATCH = 20_000

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


#: A ledger file up to this size is checked whole (``PRAGMA quick_check``: about 0.08 s for a
#: 32 MB file of 30,000 runs here) each time it is opened, before anything reads or writes it.
#: A larger one has every table checked but ``runs`` (and its indexes), the one that grows; a
#: damaged page of ``runs`` is then found by the first statement that reads it, which fails
#: with SQLite's "malformed" and is refused the same way (:func:`fluke.ledger._faults.sqlite_fault`).
CHECK_WHOLE_BYTES = 64 * 2 ** 20
#: The page cache (KiB) the check reads through.
CHECK_CACHE_KIB = 2048


def _check_pages(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a damaged ledger file before it is read or written on: SQLite's quick check of
    the whole file, or of all its tables but ``runs`` when it is large (:data:`CHECK_WHOLE_BYTES`).

    >>> import tempfile, os
    >>> from fluke.ledger import open_ledger
    >>> path = os.path.join(tempfile.mkdtemp(), "ok.db")
    >>> open_ledger(path).close()
    >>> _check_pages(sqlite3.connect(path), path)   # an intact file passes
    """
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    # the check reads every page of the tables once: through a small cache, so that it does not
    # leave the connection's page cache (64 MiB) filled with pages the verb may never read
    conn.execute(f"PRAGMA cache_size=-{CHECK_CACHE_KIB}")
    try:
        if Path(path).expanduser().stat().st_size <= CHECK_WHOLE_BYTES:
            found = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
        else:
            tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                      if name != "runs"]
            found = [row[0] for table in tables
                     for row in conn.execute('PRAGMA quick_check("{}")'.format(table.replace('"', '""')))]
    except sqlite3.DatabaseError as exc:
        found = [str(exc)]
    finally:
        conn.execute(f"PRAGMA cache_size={int(cache)}")
    problems = [text for text in found if text != "ok"]
    if problems:
        conn.close()
        raise LedgerError(f"{path}: is damaged (SQLite's check found: {problems[0]}); nothing was read from it "
                          f"or written to it. Restore it from a backup, or copy out what SQLite can still "
                          f"read: sqlite3 {path} .recover | sqlite3 recovered.db")


def _read_only(path: Path) -> bool:
    """Whether the ledger file exists but cannot be written here (nor its folder, where SQLite
    keeps the write-ahead log beside it)."""
    if not path.exists():
        return False
    return not (os.access(path, os.W_OK) and os.access(path.resolve().parent, os.W_OK))
