"""The write-ahead log of a SQLite ingest checkpointed beside it, in a thread of its own.

An ingest committing batch after batch (see :mod:`fluke.ledger._ingest`) would otherwise
checkpoint in its own commits: SQLite copies the log into the file and syncs both at the
commit that passes ``wal_autocheckpoint``, and the ingest waits on the disk. Here its
connection does not checkpoint; a second connection does, in a thread (the driver lets go
of the GIL while SQLite works), as each batch is committed, so the ingest builds and
inserts the next batch meanwhile. The checkpoints are the ones SQLite would make (PASSIVE,
with the ledger's ``synchronous=NORMAL``: the log is synced before it is copied, the file
after), so a crash leaves what it always did.

The log stays bounded: it starts over only at a transaction that begins once every frame
is copied, so after :attr:`Checkpointer.BATCHES` commits the ingest waits, before its next
one, for the checkpoints to catch up, however slow the disk, as long as they copy frames.
A reader holding an old snapshot (another process) can keep them from catching up, as it
keeps SQLite's own from restarting the log; once a wait has seen no frame copied for
:attr:`Checkpointer.PATIENCE` seconds, the ingest goes on.

>>> import os, tempfile
>>> from fluke.ledger._writer import connect_sqlite
>>> path = os.path.join(tempfile.mkdtemp(), "c.db")
>>> conn = connect_sqlite(path)
>>> _ = conn.execute("CREATE TABLE t (x)")
>>> log = Checkpointer(path, conn)
>>> for i in range(6):
...     log.before_write()
...     _ = conn.execute("INSERT INTO t VALUES (?)", (i,))
...     log.committed()
>>> log.close()
>>> busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
>>> frames == copied and frames <= Checkpointer.BATCHES   # started over after the first three
True
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import Any


class Checkpointer:
    """Checkpoints ``path``'s log as ``conn`` (the ingest's connection) commits batches."""

    #: Commits the log may hold before the ingest waits for the checkpoints to catch up
    #: (with batches of 8 MiB of bodies, about 90 MB of log at a million runs).
    BATCHES = 3
    #: How long the ingest waits for them (seconds) while no frame is copied, before it goes on.
    PATIENCE = 10.0

    def __init__(self, path: str, conn: sqlite3.Connection) -> None:
        from ._writer import connect_sqlite

        self.conn = conn
        self.autocheckpoint = int(conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        self.own = connect_sqlite(path)
        conn.execute("PRAGMA wal_autocheckpoint=0")
        self.cond = threading.Condition()
        self.commits = 0        # batches committed
        self.copied = 0         # of those, the ones whose frames are all in the file
        self.since_restart = 0  # commits since the log last started over
        self.progress = 0       # frames copied by the last pass (it changes while copying goes on)
        self.error: BaseException | None = None
        self.stopping = False
        self.thread = threading.Thread(target=self._run, name="fluke-checkpoint", daemon=True)
        self.thread.start()

    def before_write(self) -> None:
        """Called before each batch's transaction: once the log holds :attr:`BATCHES`
        commits, wait until they are copied, so that this transaction starts it over."""
        with self.cond:
            if self.since_restart >= self.BATCHES:
                deadline = time.monotonic() + self.PATIENCE
                progress = self.progress
                while self.copied < self.commits and self.error is None and time.monotonic() < deadline:
                    self.cond.wait(0.1)
                    if self.progress != progress:   # still copying (a slow disk): wait on
                        progress, deadline = self.progress, time.monotonic() + self.PATIENCE
                self.since_restart = 0
            self._raise()

    def committed(self) -> None:
        """Called after each batch's commit: its frames are there to copy."""
        with self.cond:
            self.commits += 1
            self.since_restart += 1
            self.cond.notify_all()

    def close(self) -> None:
        """Copy what is left, stop the thread, and give the ingest's connection its
        checkpoints back; a checkpoint that failed is raised here."""
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        self.thread.join()
        self.own.close()
        self.conn.execute(f"PRAGMA wal_autocheckpoint={self.autocheckpoint}")
        with self.cond:
            self._raise()

    def _raise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def _run(self) -> None:
        while True:
            with self.cond:
                while self.copied == self.commits and not self.stopping:
                    self.cond.wait()
                if self.copied == self.commits or self.error is not None:
                    return
                target = self.commits
            try:
                busy, frames, copied = self._checkpoint()
            except BaseException as exc:   # a full disk, say: the ingest raises it
                with self.cond:
                    self.error = exc
                    self.cond.notify_all()
                return
            with self.cond:
                self.progress = copied
                if not busy and frames == copied:
                    self.copied = max(self.copied, target)
                    self.cond.notify_all()
                elif self.stopping:   # a reader holds frames back: leave them to SQLite
                    return
            if busy or frames != copied:
                time.sleep(0.01)

    def _checkpoint(self) -> Any:
        return self.own.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
