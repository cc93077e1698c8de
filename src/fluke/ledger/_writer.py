"""Writing one ingest: its record, new versions, the runs not yet stored, and the counts
(``counts`` and ``steps`` here, ``trial_outcomes`` and ``unit_cells`` by :mod:`fluke.ledger._tallies`).

:class:`RunWriter` does it on the ledger's connection, inside the transaction of the whole
ingest that its caller owns: if the run source raises part-way, or a write fails, nothing
is kept. Rows that several ingests may lock at once (versions, counts) are written in key
order, so concurrent ingests into PostgreSQL wait for one another instead of deadlocking.

>>> import sqlite3, os, tempfile
>>> from fluke.ledger import open_ledger
>>> path = os.path.join(tempfile.mkdtemp(), "w.db")
>>> open_ledger(path).close()
>>> conn = sqlite3.connect(path, isolation_level=None)
>>> _ = conn.execute("BEGIN IMMEDIATE")
>>> writer = SqliteRunWriter(conn)
>>> writer.begin("2026-11-30T00:00:00.000000Z")
>>> from fluke.ledger._rows import RunRow
>>> rows = [RunRow(7, 70, 1, "s", "", 1, None, '{"trial":0}', ("censored", 0, ""), 0, "s", 1.0),
...         RunRow(7, 70, 1, "s", "", 1, None, '{"trial":0}', ("censored", 0, ""), 0, "s", 1.0),
...         RunRow(9, 71, 1, "s", "", None, None, '{"trial":1}', None, 1, "s", None)]
>>> offered = {}
>>> tally(offered, rows)
>>> writer.put_runs(rows)
2
>>> writer.finish(offered)
2
>>> _ = conn.execute("COMMIT")
>>> conn.execute("SELECT trials, passes, unknowns FROM counts").fetchall()
[(2, 1, 1)]
>>> conn.execute("SELECT cause, step, event, runs FROM steps").fetchall()
[('censored', 0, '', 1)]
>>> conn.execute("SELECT trials, passes, unknowns, rewarded, reward_sum FROM unit_cells").fetchall()
[(2, 1, 1, 1, 1.0)]
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Sequence
from urllib.parse import quote

from ..errors import LedgerError
from ._rows import STORED, RunRow, stored_values
from ._tallies import Tallies

_UPSERT_COUNTS = ("INSERT INTO counts (vid, scenario, condition, trials, passes, unknowns) VALUES (?, ?, ?, ?, ?, ?) "
                  "ON CONFLICT (vid, scenario, condition) DO UPDATE SET "
                  "trials = counts.trials + excluded.trials, passes = counts.passes + excluded.passes, "
                  "unknowns = counts.unknowns + excluded.unknowns")
_UPSERT_STEPS = ("INSERT INTO steps (vid, scenario, condition, cause, step, event, runs) VALUES (?, ?, ?, ?, ?, ?, ?) "
                 "ON CONFLICT (vid, scenario, condition, cause, step, event) DO UPDATE SET "
                 "runs = steps.runs + excluded.runs")
_PUT_VERSION = ("INSERT INTO versions (vid, version, identity, first_recorded) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (vid) DO NOTHING")


class RunWriter:
    """Writes one ingest on ``conn``, inside a transaction its caller began and will end."""

    placeholder = "?"
    dialect = "sqlite"
    #: Whether bodies may be given as UTF-8 bytes (stored as text without decoding them here).
    takes_bytes = False

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        #: the trial outcomes and unit sums of the runs added (fluke.ledger._tallies)
        self.tallies = Tallies(self._sql, self.dialect)
        self.ingest = 0
        self.recorded_at = ""
        self.added = 0
        #: the tally (:func:`tally`) of the runs offered but not added
        self.skipped: dict[tuple, dict] = {}
        #: runs skipped because another run of their trial, with other content, was kept; a few of them
        self.same_trial = 0
        self.same_trial_examples: list[SameTrial] = []

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

    def put_versions(self, versions: Iterable[tuple[int, str, str]]) -> None:
        """Store the identities of versions no ingest has seen before, ``(vid, version, identity)``,
        in the order of ``vid`` (the lock order every ingest shares)."""
        rows = [(vid, version, identity, self.recorded_at) for vid, version, identity in sorted(versions)]
        if rows:
            self.conn.cursor().executemany(self._sql(_PUT_VERSION), rows)

    def put_runs(self, rows: Sequence[RunRow]) -> int:
        """Store a batch of :class:`fluke.ledger._rows.RunRow`, skipping runs already stored
        and runs of a trial already stored (or met earlier in the batch); return how many were
        new. Bodies are JSON, as text or UTF-8.

        The caller tallies every run it offers (:func:`tally`); the writer keeps the tally of
        those it skipped, which :meth:`finish` takes off, and the trial outcomes and unit
        sums of those it added (:class:`fluke.ledger._tallies.Tallies`). A skipped run whose
        content differs from the kept run of its trial is noted in :attr:`same_trial`.
        """
        if rows and isinstance(rows[0].body, bytes) and not self.takes_bytes:
            rows = [row._replace(body=row.body.decode()) for row in rows]
        seen: set[int] = set()
        firsts = rows if len({row.tkey for row in rows}) == len(rows) else \
            [row for row in rows if not (row.tkey in seen or seen.add(row.tkey))]   # the first of each trial
        inserted = self._insert(map(stored_values, firsts), len(firsts))
        if inserted is None and firsts is rows:
            self.added += len(rows)
            self.tallies.add(rows)
            self.tallies.stage(self.conn.cursor(), self.ingest)
            return len(rows)
        kept = {row.tkey: row for row in firsts if inserted is None or row.key in inserted}
        added = [kept.get(row.tkey) is row for row in rows]
        self._check_skipped([row for row, new in zip(rows, added, strict=True) if not new], kept)
        for row, new in zip(rows, added, strict=True):
            if not new:
                tally(self.skipped, (row,))
        self.tallies.add(rows, added)
        self.tallies.stage(self.conn.cursor(), self.ingest)
        self.added += len(kept)
        return len(kept)

    def _check_skipped(self, skipped: Sequence[RunRow], kept: dict[int, RunRow]) -> None:
        """Each skipped run is the kept run of its trial (this batch's, or one stored before)
        itself, or another run of the same trial (noted in :attr:`same_trial`); never a run
        that only shares a 64-bit key with it. A body is the hashed content itself, so equal
        content keys mean equal bodies unless the key collides.
        """
        if not skipped:
            return
        wanted = {row.tkey for row in skipped if row.tkey not in kept}
        stored: dict[int, tuple] = {}
        cur = self.conn.cursor()
        chunks = sorted(wanted)
        for start in range(0, len(chunks), 500):
            chunk = chunks[start:start + 500]
            cur.execute(self._sql(f"SELECT t, k, vid, scenario, source, body FROM runs "
                                  f"WHERE t IN ({', '.join('?' * len(chunk))})"), chunk)
            for t, k, vid, scenario, source, body in cur.fetchall():
                stored[t] = (k, vid, scenario, source, body)
        for row in skipped:
            first = kept.get(row.tkey)
            if first is not None:
                key, vid, scenario, source, body = first.key, first.vid, first.scenario, first.source, first.body
            elif row.tkey in stored:
                key, vid, scenario, source, body = stored[row.tkey]
            else:   # neither kept nor stored: a row of the same content key as another stored run
                self._check_content(row)
                continue
            if key == row.key:
                if _text(body) != _text(row.body):
                    _collision(row.key)
                continue
            if (vid, scenario) != (row.vid, row.scenario) or _trial_of(body) != (row.condition, row.trial):
                _collision(row.tkey, "trial")
            self.same_trial += 1
            if len(self.same_trial_examples) < SAME_TRIAL_EXAMPLES:
                self.same_trial_examples.append(SameTrial(row.scenario, row.condition, row.trial, row.source,
                                                          source))

    def _check_content(self, row: RunRow) -> None:
        """A run skipped for its content key alone: the stored run of that key must be it."""
        cur = self.conn.cursor()
        cur.execute(self._sql("SELECT body FROM runs WHERE k = ?"), (row.key,))
        found = cur.fetchone()
        if found is None or _text(found[0]) != _text(row.body):
            _collision(row.key)

    def finish(self, offered: dict[tuple, dict]) -> int:
        """Add the tally of the runs added (``offered`` less those skipped) to ``counts`` and
        ``steps``, and their trial outcomes and unit sums to ``trial_outcomes`` and
        ``unit_cells``; return how many runs this ingest added."""
        counts: dict[tuple, list[int]] = {}
        steps: dict[tuple, int] = {}
        none: dict = {}
        for group, places in offered.items():
            skipped = self.skipped.get(group, none)
            for place, packed in places.items():
                n, k, u = unpacked(packed - skipped.get(place, 0))   # no field borrows: skipped ones were offered
                if n:
                    row = counts.setdefault(group, [0, 0, 0])
                    row[0] += n
                    row[1] += k
                    row[2] += u
                    if place is not None:
                        steps[group + place] = n
        cur = self.conn.cursor()
        if counts:   # in key order: one lock order for every ingest
            cur.executemany(self._sql(_UPSERT_COUNTS), [(*g, *c) for g, c in sorted(counts.items())])
        if steps:
            cur.executemany(self._sql(_UPSERT_STEPS), [(*g, n) for g, n in sorted(steps.items())])
        self.tallies.write(cur, self.ingest)
        self.skipped = {}
        return self.added


#: A group's trials, passes and unknowns are packed into one integer, 40 bits each: a run adds
#: one of these (failed, passed, unknown outcome).
_FAILED, _PASSED, _UNKNOWN = 1, 1 + (1 << 40), 1 + (1 << 80)
_FIELD = (1 << 40) - 1
#: One tuple per distinct place, shared by every group it is met in (a few hundred in a file).
_PLACES: dict[tuple, tuple] = {}


def tally(counts: dict[tuple, dict], rows: Iterable[RunRow]) -> None:
    """Add runs to ``counts``: per ``(vid, scenario, condition)``, per ``place`` (where the run
    died or was censored, :func:`fluke.record.place_of`; None for an unknown outcome), the
    trials, passes and unknowns packed in one integer (:func:`unpacked`); a ``passed`` of
    None is an unknown outcome (a trial that did not pass, counted apart).
    :meth:`RunWriter.finish` sums the places away for the ``counts`` table and keeps them for
    the ``steps`` table. Packed, and each place one shared tuple, a group and place take about
    65 bytes (a tuple key and a list of three counts took over 200): an ingest of a million
    runs over 10,000 scenarios meets hundreds of thousands (tests/ledger/test_steps.py).

    >>> from fluke.ledger._rows import RunRow
    >>> counts = {}
    >>> tally(counts, [RunRow(0, 0, vid, "s", "", ok, None, "", None, 0, "s", None)
    ...                for vid, ok in [(1, 1), (1, None), (2, 1)]])
    >>> {group: {place: unpacked(n) for place, n in places.items()} for group, places in counts.items()}
    {(1, 's', ''): {None: (2, 1, 1)}, (2, 's', ''): {None: (1, 1, 0)}}
    """
    shared = _PLACES
    if len(shared) > 100_000:   # a stream of ever new places: start over rather than grow
        shared.clear()
    get = counts.get
    for row in rows:
        group = (row.vid, row.scenario, row.condition)
        places = get(group)
        if places is None:
            places = counts[group] = {}
        place = row.place
        if place is not None:
            place = shared.setdefault(place, place)
        ok = row.passed
        places[place] = places.get(place, 0) + (_PASSED if ok else _FAILED if ok is not None else _UNKNOWN)


def unpacked(packed: int) -> tuple[int, int, int]:
    """``(trials, passes, unknowns)`` of a packed tally (:func:`tally`).

    >>> unpacked(3 * _FAILED + 2 * _PASSED + _UNKNOWN)
    (6, 2, 1)
    """
    return packed & _FIELD, (packed >> 40) & _FIELD, packed >> 80


def _collision(key: int, which: str = "content") -> None:
    raise LedgerError(f"two different runs share the first 64 bits of their {which} hash "
                      f"({key & (2 ** 64 - 1):016x}), the ledger's key; nothing was stored. "
                      "Please report this to the fluke maintainers")


def _text(body: str | bytes) -> str:
    return body.decode() if type(body) is bytes else body


def _trial_of(body: str | bytes) -> tuple[str, int]:
    """The condition key and trial of a stored body."""
    import orjson

    from ..record import condition_key

    doc = orjson.loads(body)
    condition = doc.get("condition") or {}
    return (condition_key(condition) if condition else ""), doc.get("trial", 0)


#: Runs of a trial already kept that an ingest names in its result (the rest it counts).
SAME_TRIAL_EXAMPLES = 3


class SameTrial(NamedTuple):
    """A run skipped because another run of its trial was kept: where each was read from."""

    scenario: str
    condition: str
    trial: int
    source: str | None
    kept: str | None


class SqliteRunWriter(RunWriter):
    """The SQLite writer: ``executemany`` with the ingest inlined; rowids tell what was added.

    A body given as bytes is stored as text by ``CAST``, which keeps its bytes (the file's
    encoding is UTF-8): no decoding in Python on the ingest's one serial step.
    """

    takes_bytes = True

    def _new_ingest(self, recorded_at: str) -> int:
        cur = self.conn.execute("INSERT INTO ingests (recorded_at) VALUES (?)", (recorded_at,))
        ingest = int(cur.lastrowid)
        self._insert_sql = (f"INSERT INTO runs (ingest, {', '.join(STORED)}) "
                            f"VALUES ({ingest}, ?, ?, ?, ?, ?, CAST(? AS TEXT)) ON CONFLICT DO NOTHING")
        return ingest

    def stage(self) -> None:
        """List this ingest as pending (its runs are skipped by readers until :meth:`unstage`),
        with the largest row id before it."""
        self.conn.execute("INSERT INTO pending (ingest, after) SELECT ?, COALESCE(MAX(rowid), 0) FROM runs",
                          (self.ingest,))

    def unstage(self) -> None:
        """Take this ingest out of ``pending``: its runs are read from the commit on."""
        self.conn.execute("DELETE FROM pending WHERE ingest = ?", (self.ingest,))

    def _insert(self, rows: Iterable[tuple], count: int) -> set[int] | None:
        conn = self.conn
        last = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM runs").fetchone()[0]
        before = conn.total_changes
        conn.executemany(self._insert_sql, rows)
        if conn.total_changes - before == count:
            return None
        return {k for (k,) in conn.execute("SELECT k FROM runs WHERE rowid > ?", (last,))}


#: The page size of a new SQLite ledger: SQLite's largest. A page holds whole rows, so a run of
#: 6.6 KB as stored (20 events) fits twice in a 16 KiB page, a fifth of the page left empty, and nine
#: times in 64 KiB: 100,000 such runs took 12% less CPU to ingest (docs/ledger.md, issue 37). A row
#: larger than a page spills into overflow pages, which are filled whole, so runs much larger than a
#: page pack well at any size; the rows that leave a page part empty are those from about a third of
#: a page to a whole one (22-64 KB here: runs of 40 KB took 3-4% more CPU than with 16 KiB pages).
#: A ledger keeps the page size it was made with.
PAGE_SIZE = 65536


def connect_sqlite(path: str, *, wait: float = 30.0) -> sqlite3.Connection:
    """A connection to a SQLite ledger file with the pragmas every fluke connection uses.

    Switching a new file to WAL can meet another process's lock without SQLite's busy handler
    waiting for it ("database is locked" at once); the set-up is then tried again, for ``wait``
    seconds at most, as the busy timeout would have waited.
    """
    import time

    deadline = time.monotonic() + wait
    while True:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=wait)
        try:
            conn.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new file only (before WAL is on): see PAGE_SIZE
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA cache_size=-65536")  # up to 64 MiB: both key indexes of a few million runs stay hot
            conn.execute("PRAGMA journal_size_limit=67108864")  # a big ingest's log shrinks back after checkpoint
            conn.execute("PRAGMA foreign_keys=ON")
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def connect_sqlite_readonly(path: str) -> sqlite3.Connection:
    """A read-only connection to a ledger file this process cannot write (a read-only mount,
    a file of another user).

    WAL mode needs its ``-shm`` file even to read; where that cannot be made and no write-ahead
    log is left over (the file was closed cleanly), the file is opened as immutable: nothing
    can change it while it is read, since nobody can write where it lives.
    """
    uri = "file:" + quote(str(Path(path).resolve()))
    conn = sqlite3.connect(uri + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    wal = Path(path + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise sqlite3.OperationalError("its write-ahead log holds changes that only a writable copy can read")
    return sqlite3.connect(uri + "?immutable=1", uri=True, isolation_level=None, check_same_thread=False)
