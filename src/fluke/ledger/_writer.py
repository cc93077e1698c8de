"""Writing one ingest: its record, new versions, the runs not yet stored, and the counts.

:class:`RunWriter` does it on a connection whose transaction the caller owns. For a large
ingest into a SQLite file, :class:`PipedWriter` runs the same writer in a second process
(``python -m fluke.ledger._writer``), fed batches of rows through a pipe, so that building
rows (Python) and storing them (SQLite) use both cores. Either way the whole ingest is one
transaction: if the run source raises part-way, or the writer fails, nothing is kept.

This module imports nothing heavy (no pydantic), so the writer process starts quickly.

>>> import sqlite3, os, tempfile
>>> from fluke.ledger import open_ledger
>>> path = os.path.join(tempfile.mkdtemp(), "w.db")
>>> open_ledger(path).close()
>>> conn = sqlite3.connect(path, isolation_level=None)
>>> _ = conn.execute("BEGIN IMMEDIATE")
>>> writer = SqliteRunWriter(conn)
>>> writer.begin("2026-11-30T00:00:00.000000Z")
>>> bodies = ['{"trial":0}', '{"trial":0}', '{"trial":1}']
>>> offered = {}
>>> tally(offered, [1] * 3, ["s"] * 3, [""] * 3, [1, 1, 0])
>>> writer.put_runs([7, 7, 9], [1] * 3, ["s"] * 3, [""] * 3, [1, 1, 0], [None] * 3, bodies)
2
>>> writer.finish(offered)
2
>>> _ = conn.execute("COMMIT")
>>> conn.execute("SELECT trials, passes FROM counts").fetchall()
[(2, 1)]
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from itertools import compress
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..errors import LedgerError

_UPSERT_COUNTS = ("INSERT INTO counts (vid, scenario, condition, trials, passes) VALUES (?, ?, ?, ?, ?) "
                  "ON CONFLICT (vid, scenario, condition) DO UPDATE SET "
                  "trials = counts.trials + excluded.trials, passes = counts.passes + excluded.passes")
_PUT_VERSION = ("INSERT INTO versions (vid, version, identity, first_recorded) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (vid) DO NOTHING")


class RunWriter:
    """Writes one ingest on ``conn``, inside a transaction its caller began and will end."""

    placeholder = "?"

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.ingest = 0
        self.recorded_at = ""
        self.added = 0
        #: trials and passes of the runs offered but not added, per (vid, scenario, condition)
        self.skipped: dict[tuple, list[int]] = {}

    # -- backend hooks ---------------------------------------------------------------
    def _new_ingest(self, recorded_at: str) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _insert(self, rows: Iterable[tuple], count: int) -> set[int] | None:
        """Insert the ``count`` rows whose key is new; return the keys added, or None if every
        row was."""
        raise NotImplementedError  # pragma: no cover - abstract

    # -- the ingest ------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def begin(self, recorded_at: str) -> None:
        """Record the ingest (its time is every new run's ``recorded_at``)."""
        self.recorded_at = recorded_at
        self.ingest = self._new_ingest(recorded_at)

    def put_version(self, vid: int, version: str, identity: str) -> None:
        """Store a version's identity the first time any ingest sees it."""
        self.conn.cursor().execute(self._sql(_PUT_VERSION), (vid, version, identity, self.recorded_at))

    def put_runs(self, keys: Sequence[int], vids: Sequence[int], scenarios: Sequence[str],
                 conditions: Sequence[str], passed: Sequence[int], sources: Sequence[str | None],
                 bodies: Sequence[str] | Sequence[bytes]) -> int:
        """Store a batch (the columns of :class:`fluke.ledger._rows.Rows`), skipping runs
        already stored; return how many were new. Bodies are JSON, as text or UTF-8.

        The caller tallies every run it offers (:func:`tally`); the writer keeps the tally of
        those it skipped, which :meth:`finish` takes off.
        """
        if bodies and isinstance(bodies[0], bytes):
            bodies = [body.decode() for body in bodies]
        inserted = self._insert(zip(keys, vids, scenarios, sources, bodies), len(keys))
        if inserted is None:
            self.added += len(keys)
            return len(keys)
        self._check_skipped(keys, bodies, inserted)
        first: set[int] = set()
        for key, vid, scenario, condition, ok in zip(keys, vids, scenarios, conditions, passed):
            if key in inserted and key not in first:
                first.add(key)
            else:
                tally(self.skipped, (vid,), (scenario,), (condition,), (ok,))
        self.added += len(first)
        return len(first)

    def _check_skipped(self, keys: Sequence[int], bodies: Sequence[str], inserted: set[int]) -> None:
        """A skipped run must be the stored run itself, not another with the same 64-bit key.

        A body is the hashed content itself, so equal hashes mean equal bodies.
        """
        first: dict[int, str] = {}
        for key, body in zip(keys, bodies):
            if first.setdefault(key, body) != body:
                _collision(key)
        skipped = [key for key in first if key not in inserted]
        cur = self.conn.cursor()
        for start in range(0, len(skipped), 500):
            chunk = skipped[start:start + 500]
            cur.execute(self._sql(f"SELECT k, body FROM runs WHERE k IN ({', '.join('?' * len(chunk))})"),
                        chunk)
            for key, body in cur.fetchall():
                if body != first[key]:
                    _collision(key)

    def finish(self, offered: dict[tuple, list[int]]) -> int:
        """Add the tally of the runs added (``offered`` less those skipped) to ``counts``;
        return how many runs this ingest added."""
        rows = []
        for group, (n, k) in offered.items():
            n_skipped, k_skipped = self.skipped.get(group, (0, 0))
            if n > n_skipped:
                rows.append((*group, n - n_skipped, k - k_skipped))
        if rows:
            self.conn.cursor().executemany(self._sql(_UPSERT_COUNTS), rows)
        self.skipped = {}
        return self.added


def tally(counts: dict[tuple, list[int]], vids: Sequence[int], scenarios: Sequence[str],
          conditions: Sequence[str], passed: Sequence[int]) -> None:
    """Add runs to ``counts``: ``[trials, passes]`` per ``(vid, scenario, condition)``.

    >>> counts = {}
    >>> tally(counts, [1, 1, 2], ["s", "s", "s"], ["", "", ""], [1, 0, 1])
    >>> counts
    {(1, 's', ''): [2, 1], (2, 's', ''): [1, 1]}
    """
    groups = list(zip(vids, scenarios, conditions))
    for group, n in Counter(groups).items():
        pair = counts.get(group)
        if pair is None:
            counts[group] = [n, 0]
        else:
            pair[0] += n
    for group, k in Counter(compress(groups, passed)).items():
        counts[group][1] += k


def _collision(key: int) -> None:
    raise LedgerError(f"two different runs share the first 64 bits of their content hash "
                      f"({key & (2 ** 64 - 1):016x}), the ledger's key; nothing was stored. "
                      "Please report this to the fluke maintainers")


class SqliteRunWriter(RunWriter):
    """The SQLite writer: ``executemany`` with the ingest inlined; rowids tell what was added."""

    def _new_ingest(self, recorded_at: str) -> int:
        cur = self.conn.execute("INSERT INTO ingests (recorded_at) VALUES (?)", (recorded_at,))
        ingest = int(cur.lastrowid)
        self._insert_sql = ("INSERT INTO runs (k, vid, ingest, scenario, source, body) "
                            f"VALUES (?, ?, {ingest}, ?, ?, ?) ON CONFLICT DO NOTHING")
        return ingest

    def _insert(self, rows: Iterable[tuple], count: int) -> set[int] | None:
        conn = self.conn
        last = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM runs").fetchone()[0]
        before = conn.total_changes
        conn.executemany(self._insert_sql, rows)
        if conn.total_changes - before == count:
            return None
        return {k for (k,) in conn.execute("SELECT k FROM runs WHERE rowid > ?", (last,))}


def connect_sqlite(path: str) -> sqlite3.Connection:
    """A connection to a SQLite ledger file with the pragmas every fluke connection uses."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA page_size=16384")  # a new file only (before WAL is on): fewer, fuller pages
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA cache_size=-262144")  # up to 256 MiB: keeps the key index hot on big ingests
    conn.execute("PRAGMA journal_size_limit=67108864")  # a big ingest's log shrinks back after checkpoint
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


# -- the writer process ------------------------------------------------------------------
class PipedWriter:
    """A :class:`SqliteRunWriter` in a child process, with the same methods.

    Messages are pickled onto the child's stdin by a sender thread (so building rows never
    waits on the pipe); the child answers once, when the ingest is committed or has failed.
    After a commit it goes on to checkpoint the write-ahead log into the main file, which
    readers and later writers do not wait for; :meth:`wait` does.
    """

    def __init__(self, path: str) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        self._proc = subprocess.Popen([sys.executable, "-m", "fluke.ledger._writer", path],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=8)
        self._failed = False
        self._sender = threading.Thread(target=self._send_all, daemon=True)
        self._sender.start()

    def _send_all(self) -> None:
        pipe = self._proc.stdin
        try:
            while (data := self._queue.get()) is not None:
                pipe.write(data)
            pipe.close()
        except (BrokenPipeError, OSError):
            self._failed = True   # the child stopped: its answer says why
            while self._queue.get() is not None:
                pass

    def _send(self, *message: Any) -> None:
        if self._failed:
            self._answer()
        self._queue.put(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))

    def _answer(self) -> int:
        try:
            reply = pickle.load(self._proc.stdout)
        except (EOFError, pickle.UnpicklingError):
            reply = ("error", f"the ledger writer process stopped (exit status {self._proc.wait()})")
        if reply[0] != "done":
            self._proc.wait()
            raise LedgerError(reply[1])
        self._proc.stdout.close()
        return int(reply[1])

    def wait(self) -> int:
        """Wait until the child has checkpointed and exited; return its exit status."""
        return self._proc.wait()

    def begin(self, recorded_at: str) -> None:
        self._send("begin", recorded_at)

    def put_version(self, vid: int, version: str, identity: str) -> None:
        self._send("version", vid, version, identity)

    def put_runs(self, keys: Sequence[int], vids: Sequence[int], scenarios: Sequence[str],
                 conditions: Sequence[str], passed: Sequence[int], sources: Sequence[str | None],
                 bodies: Sequence[bytes]) -> int:
        # One byte string for the bodies (JSON never holds a raw newline): far cheaper to pickle.
        self._send("runs", keys, vids, scenarios, conditions, passed, sources, b"\n".join(bodies))
        return len(keys)   # the exact number comes with the answer

    def finish(self, offered: dict[tuple, list[int]]) -> int:
        """Commit in the child; return how many runs it added."""
        self._send("commit", offered)
        self._queue.put(None)
        self._sender.join()
        return self._answer()

    def abort(self) -> None:
        """Stop without committing: the child's transaction is rolled back."""
        self._queue.put(None)
        self._sender.join(timeout=5)
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()


def _serve(path: str) -> int:
    """The child's loop: apply the parent's messages to one transaction; answer once."""
    out = sys.stdout.buffer
    conn = None
    try:
        conn = connect_sqlite(path)
        conn.execute("PRAGMA wal_autocheckpoint=0")   # checkpoint after answering, not in COMMIT
        conn.execute("BEGIN IMMEDIATE")
        writer = SqliteRunWriter(conn)
        source = sys.stdin.buffer
        while True:
            try:
                message = pickle.load(source)
            except EOFError:
                conn.rollback()   # the parent gave up: keep nothing
                return 1
            kind = message[0]
            if kind == "runs":
                writer.put_runs(*message[1:7], message[7].decode().split("\n"))
            elif kind == "version":
                writer.put_version(*message[1:])
            elif kind == "begin":
                writer.begin(message[1])
            elif kind == "commit":
                added = writer.finish(message[1])
                conn.execute("COMMIT")
                pickle.dump(("done", added), out)
                out.flush()
                out.close()
                # The runs are committed (in the write-ahead log) and the parent goes on.
                # Copying those pages into the main file happens here, after the answer,
                # instead of inside the COMMIT (SQLite's automatic checkpoint).
                with contextlib.suppress(sqlite3.Error):   # a checkpoint left undone is redone later
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                conn.close()
                return 0
    except (LedgerError, sqlite3.Error) as exc:
        if conn is not None and conn.in_transaction:
            conn.rollback()
        pickle.dump(("error", f"{path}: {exc}"), out)
        out.flush()
        return 1


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1]))
