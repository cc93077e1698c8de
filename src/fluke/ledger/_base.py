"""The ledger: one interface over SQLite and PostgreSQL.

Runs are append-only and content-addressed; every write happens in a transaction, so a
failure part-way through a file leaves the ledger exactly as it was before that file.

>>> import tempfile, os
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Run, Outcome
>>> path = os.path.join(tempfile.mkdtemp(), "doc.db")
>>> with open_ledger(path) as ledger:
...     first = ledger.ingest([Run(scenario="s", trial=t, outcome=Outcome(passed=t > 0)) for t in range(3)])
...     again = ledger.ingest([Run(scenario="s", trial=0, outcome=Outcome(passed=False))])
...     rows = ledger.counts()
>>> first.added, again.added, again.skipped, (rows[0].trials, rows[0].passes)
(3, 0, 1, (3, 2))
"""

from __future__ import annotations

import contextlib
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from ..errors import EmptyLedgerError, LedgerError, SelectorError
from ..record import IDENTITY_FIELDS, canonical_json, redact_url
from ._migrations import MIGRATIONS
from ._rows import body_hash, body_holds, hash_key, row_run, version_id
from ._documents import DocumentStore
from ._tables import TableReads
from ._types import IngestResult, StoredRun, VersionInfo
from ._writer import RunWriter

if TYPE_CHECKING:
    from ..record import Run


#: Over ``runs``: the runs of ingests that have finished (an ingest committing in batches is
#: listed in ``pending`` until its last transaction; see :mod:`fluke.ledger._ingest`).
VISIBLE = "ingest NOT IN (SELECT ingest FROM pending)"


class Ledger(TableReads, DocumentStore):
    """The store of runs, grades and documents. Use :func:`fluke.ledger.open_ledger`.

    Reading the tallies kept at ingest is :class:`fluke.ledger._tables.TableReads`; documents and
    grades are :class:`fluke.ledger._documents.DocumentStore`.
    """

    #: The parameter placeholder of the backend's DB-API driver.
    placeholder = "?"
    #: The SQL dialect, which picks a migration step's variant.
    dialect = "sqlite"

    #: True when the ledger could only be opened for reading (a read-only file or mount).
    read_only = False

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = url
        #: The URL as it may be printed (a password in it is masked).
        self.name = redact_url(url)
        self._depth = 0
        if not create and self._exists() is False:
            raise LedgerError(self._missing())
        self._conn = self._connect()
        with self.faults():
            if not create and "migrations" not in self._tables():
                self._conn.close()
                raise LedgerError(self._missing())
            self._migrate()

    # -- backend hooks -------------------------------------------------------------
    def _exists(self) -> bool | None:
        """Whether the ledger's storage exists, where that is known before connecting."""
        return None

    def _missing(self) -> str:
        """The message for a ledger that is not there (opened with ``create=False``)."""
        return f"no fluke ledger at {redact_url(self.url)} (create one with: fluke ingest FILE)"

    def _connect(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _run_writer(self) -> RunWriter:
        """A writer of one ingest on this connection (inside the current transaction)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _stages(self) -> bool:
        """Whether an ingest too large for one transaction commits its runs in batches while
        it is pending (SQLite files, see :mod:`fluke.ledger._ingest`)."""
        return False

    def _checkpointer(self) -> Any:
        """What checkpoints the log beside an ingest committing in batches, or None (SQLite:
        :class:`fluke.ledger._checkpoint.Checkpointer`)."""
        return None

    @contextlib.contextmanager
    def ingest_lock(self, wait: float | None = None) -> Iterator[bool]:
        """Held for one logical ingest, where the backend needs one (SQLite)."""
        yield True

    def record_once(self, run: Run) -> Run | None:
        """Store ``run`` unless the ledger holds a run of its version × scenario × condition × trial;
        None when stored, else the run recorded first (see :mod:`fluke.ledger._once`)."""
        from ._once import record_once

        return record_once(self, run)

    def _transient(self, exc: BaseException) -> bool:
        """Is ``exc`` a failure the server may not repeat (a deadlock it broke, a serialisation
        failure), so that the transaction it ended can simply be run again?"""
        return False

    def drop_pending(self) -> None:
        """Remove what ingests that did not finish left (SQLite: their pending runs)."""

    def _fault(self, exc: Exception) -> LedgerError | None:
        """The :class:`LedgerError` for an error of the backend's driver, or None if ``exc``
        is not one (it then propagates as it is)."""
        return None  # pragma: no cover - overridden

    @contextlib.contextmanager
    def faults(self) -> Iterator[None]:
        """Turn the driver's errors (disk full, connection lost, a corrupted file, ...) into
        one :class:`LedgerError` that names the ledger and says what to do.

        >>> from fluke.ledger import open_ledger
        >>> ledger = open_ledger(":memory:")
        >>> with ledger.faults():
        ...     ledger._conn.execute("SELECT * FROM no_such_table")
        Traceback (most recent call last):
        ...
        fluke.errors.LedgerError: :memory:: the ledger failed (no such table: no_such_table)
        """
        try:
            yield
        except LedgerError:
            raise
        except Exception as exc:
            error = self._fault(exc)
            if error is None:
                raise
            raise error from None

    def _ordered_runs(self, where: str, limit: int | None) -> str:
        """SQL for ``(body, source)`` of the runs matching ``where``, in :meth:`runs` order."""
        return (f"SELECT body, source FROM runs{where} "
                f"ORDER BY ingest, scenario, {self._json_field('trial', integer=True)}, k"
                + ("" if limit is None else f" LIMIT {int(limit)}"))

    def _json_field(self, *path: str, integer: bool = False) -> str:
        """SQL for a field of the stored body, by its path (``"identity", "date"``)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _tables(self) -> set[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- plumbing ------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement (``?`` placeholders on every backend); return the cursor."""
        with self.faults():
            cur = self._conn.cursor()
            cur.execute(self._sql(sql), tuple(params))
        return cur

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement per row of parameters."""
        with self.faults():
            self._conn.cursor().executemany(self._sql(sql), rows)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Run a query and return all its rows."""
        with self.faults():
            return list(self.execute(sql, params).fetchall())

    #: Rows fetched at a time by :meth:`stream`: enough to amortise a round trip, few enough
    #: that a batch of run bodies stays a few megabytes.
    BATCH = 256

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple]:
        """Run a query and yield its rows as they are read, :attr:`BATCH` at a time.

        The ledger may be queried (or written) between rows. Breaking off early closes
        the cursor when the generator is closed or collected.
        """
        with self.faults():
            cur = self._conn.cursor()
            try:
                cur.execute(self._sql(sql), tuple(params))
                while rows := cur.fetchmany(self.BATCH):
                    yield from rows
            finally:
                cur.close()

    @contextlib.contextmanager
    def atomic(self) -> Iterator["Ledger"]:
        """A transaction; nested calls join the outer one. Rolls back on any exception."""
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        with self.faults():
            self._begin()
        self._depth = 1
        try:
            yield self
        except BaseException:
            with contextlib.suppress(Exception):   # a lost connection cannot roll back: the server does
                self._conn.rollback()
            raise
        else:
            try:
                with self.faults():
                    self._conn.commit()
            except LedgerError:   # a COMMIT that failed (a full disk) may leave the transaction open
                with contextlib.suppress(Exception):
                    self._conn.rollback()
                raise
        finally:
            self._depth = 0

    def _begin(self) -> None:
        """Start a transaction (drivers that autocommit-off start one implicitly)."""

    def close(self) -> None:
        """Close the connection."""
        with contextlib.suppress(Exception):   # already lost: nothing to close
            self._conn.close()

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        if "migrations" not in self._tables():
            if self.read_only:
                raise LedgerError(f"{self.name}: is read-only and holds no fluke ledger; "
                                  "choose another --ledger")
            with self.atomic():
                if "migrations" not in self._tables():
                    self.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        applied = {name for (name,) in self.query("SELECT name FROM migrations")}
        known = {name for name, _ in MIGRATIONS}
        if applied - known:
            raise LedgerError(
                f"{self.name}: written by a newer fluke (migrations {sorted(applied - known)}); "
                "upgrade with: pip install -U fluke")
        pending = [name for name, _ in MIGRATIONS if name not in applied]
        if pending and self.read_only:
            raise LedgerError(f"{self.name}: is read-only and needs upgrading to this fluke's layout "
                              f"({', '.join(pending)}); open it once where it can be written")
        for name, statements in MIGRATIONS:
            if name in applied:
                continue
            from ._ingest import utcnow

            with self.atomic():
                # Another process (an xdist worker opening the same new file) may have applied it
                # between our read of ``applied`` and taking the write lock: check again under it.
                if self.query("SELECT 1 FROM migrations WHERE name = ?", (name,)):
                    continue
                for step in statements:
                    if callable(step):
                        step(self)
                    else:
                        self.execute(step[self.dialect] if isinstance(step, dict) else step)
                self.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, utcnow()))

    def migrations(self) -> list[str]:
        """The names of the applied migrations, in order."""
        return [name for (name,) in self.query("SELECT name FROM migrations ORDER BY name")]

    # -- runs ----------------------------------------------------------------------
    #: An ingest holds the rows it has built, to write them in one short transaction at its
    #: end, until they reach this many bytes or runs; past that its transaction begins and
    #: each batch is written as it is built (see :mod:`fluke.ledger._ingest`).
    HOLD_BYTES = 32 * 2 ** 20
    HOLD_RUNS = 20_000

    def ingest(self, runs: Iterable[Run], *, progress: Any = None) -> IngestResult:
        """Store ``runs``, all or nothing; runs already present are skipped. ``runs`` may hold
        :class:`fluke.record.Prepared` runs (a file's plain lines, their bodies made).

        If the iterable raises part-way (a bad record in a file), or the ledger fails (disk
        full, connection lost), or the process dies, nothing of it is kept: a small ingest is
        one transaction, a large SQLite one commits in batches while pending, unseen by readers
        (see :mod:`fluke.ledger._ingest`). ``progress`` is called with the number of runs
        handled after each batch. Memory stays bounded by bytes whatever the number of runs.
        """
        if self.read_only:
            raise LedgerError(f"{self.name}: is read-only here, so nothing can be ingested into it; "
                              "copy it somewhere writable or choose another --ledger")
        from ._ingest import ingest_runs   # the ingest machinery loads only for a verb that stores runs

        return ingest_runs(self, runs, progress=progress)

    def _where(self, *, scenario: str | None = None, version: str | Sequence[str] | None = None,
               since: str | None = None, until: str | None = None, runs: bool = True) -> tuple[str, list[Any]]:
        """WHERE clause over ``runs`` (or ``counts``, which has the same vid and scenario, with
        ``runs=False``). Over runs it leaves out those of an ingest still being written."""
        clauses, params = [VISIBLE] if runs else [], []
        if scenario is not None:
            if any(ch in scenario for ch in "*?"):
                clauses.append("scenario LIKE ?")
                params.append(scenario.replace("*", "%").replace("?", "_"))
            else:
                clauses.append("scenario = ?")
                params.append(scenario)
        if isinstance(version, str):
            clauses.append("vid = ?")
            params.append(_vid(version))
        elif version is not None:
            vids = [_vid(v) for v in version]
            clauses.append(f"vid IN ({', '.join('?' * len(vids)) or 'NULL'})")
            params.extend(vids)
        if since is not None:
            clauses.append(f"{self._json_field('identity', 'date')} >= ?")
            params.append(since)
        if until is not None:
            clauses.append(f"{self._json_field('identity', 'date')} <= ?")
            params.append(until)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    @staticmethod
    def _condition_where(where: str, params: list[Any], condition: str | None) -> tuple[str, list[Any]]:
        """Add a ``key=value[,key=value]`` filter on the ``counts`` table's condition key."""
        if not condition:
            return where, params
        clauses = []
        for pair in condition.split(","):
            clauses.append("(',' || condition || ',') LIKE ?")
            params = [*params, f"%,{pair.strip()},%"]
        return (where + " AND " if where else " WHERE ") + " AND ".join(clauses), params

    def runs(self, *, scenario: str | None = None, version: str | Sequence[str] | None = None,
             condition: str | None = None, since: str | None = None, until: str | None = None,
             limit: int | None = None) -> Iterator[Run]:
        """The stored runs matching the filters, in ingest order then scenario and trial.

        ``scenario`` may use ``*`` wildcards; ``condition`` is ``key=value[,key=value]``;
        ``since``/``until`` compare with the identity date (ISO strings).
        """
        for body, source in self.run_bodies(scenario=scenario, version=version, condition=condition,
                                            since=since, until=until, limit=limit):
            yield row_run(body, source, ledger=self.name)

    def run_bodies(self, *, scenario: str | None = None, version: str | Sequence[str] | None = None,
                   condition: str | None = None, since: str | None = None, until: str | None = None,
                   limit: int | None = None) -> Iterator[tuple[str, str | None]]:
        """The stored JSON of the runs :meth:`runs` yields, in the same order, unparsed:
        ``(body, source)``, where ``body`` is the run's content (its hash is the body's
        SHA-256) and ``source`` is JSON or None. For a streaming copy (``fluke export``).
        """
        where, params = self._where(scenario=scenario, version=version, since=since, until=until)
        sql = self._ordered_runs(where, None if condition else limit)
        given = 0
        for body, source in self.stream(sql, params):
            if condition and not body_holds(body, condition, ledger=self.name):
                continue
            yield body, source
            given += 1
            if limit is not None and given >= limit:
                return

    #: The column that orders runs as stored and cuts them into :meth:`slices`: SQLite's
    #: rowid (append order, so a slice is one contiguous read); PostgreSQL's ``k`` (the
    #: content hash's first 64 bits, uniform, so equal widths hold about equal numbers).
    SLICE_KEY = "k"

    def slices(self, parts: int) -> list[tuple[int, int]]:
        """Cut the stored runs into about ``parts`` disjoint inclusive key ranges, in storage
        order, that together hold every run; read one with :meth:`run_slice`. For readers
        that split a ledger between processes (each with its own connection).

        >>> from fluke.ledger import open_ledger
        >>> from fluke.record import Run
        >>> ledger = open_ledger(":memory:")
        >>> ledger.slices(4)
        []
        >>> _ = ledger.ingest([Run(scenario="s", trial=t) for t in range(10)])
        >>> ledger.slices(4) if ledger.SLICE_KEY == "rowid" else None
        [(1, 2), (3, 5), (6, 7), (8, 10)]
        >>> sum(len(list(ledger.run_slice(b))) for b in ledger.slices(4))
        10
        """
        low, high = self.query(f"SELECT MIN({self.SLICE_KEY}), MAX({self.SLICE_KEY}) FROM runs")[0]
        if low is None:
            return []
        low, span = int(low), int(high) - int(low) + 1
        parts = max(1, min(int(parts), span))
        edges = [low + span * i // parts for i in range(parts + 1)]   # exact: integers of any size
        return [(a, b - 1) for a, b in pairwise(edges)]

    def run_slice(self, bounds: tuple[int, int], *, scenario: str | None = None,
                  version: str | Sequence[str] | None = None) -> Iterator[str]:
        """The bodies of the runs of one of :meth:`slices` matching the filters, in storage order."""
        where, params = self._where(scenario=scenario, version=version)
        where += (" AND " if where else " WHERE ") + f"{self.SLICE_KEY} BETWEEN ? AND ?"
        for (body,) in self.stream(f"SELECT body FROM runs{where} ORDER BY {self.SLICE_KEY}",
                                   [*params, *bounds]):
            yield body

    def count(self, **filters: Any) -> int:
        """How many runs match the filters of :meth:`runs` (from ``counts`` unless dated)."""
        if filters.get("since") is None and filters.get("until") is None:
            return sum(row.trials for row in self.counts(**{k: v for k, v in filters.items()
                                                             if k not in ("since", "until")}))
        condition = filters.pop("condition", None)
        where, params = self._where(**filters)
        if not condition:
            return int(self.query(f"SELECT COUNT(*) FROM runs{where}", params)[0][0])
        return sum(1 for (body,) in self.stream(f"SELECT body FROM runs{where}", params)
                   if body_holds(body, condition, ledger=self.name))

    def empty(self) -> bool:
        """True when the ledger holds no runs (one indexed probe, whatever its size)."""
        return not self.query(f"SELECT 1 FROM runs WHERE {VISIBLE} LIMIT 1")

    def require_runs(self) -> None:
        """Raise :class:`fluke.errors.EmptyLedgerError` when the ledger holds no runs: the one
        answer every verb that reads runs gives an empty ledger.

        >>> import tempfile, os
        >>> from fluke.ledger import open_ledger
        >>> open_ledger(os.path.join(tempfile.mkdtemp(), "e.db")).require_runs()
        Traceback (most recent call last):
        fluke.errors.EmptyLedgerError: the ledger has no runs; add some with: fluke ingest FILE
        """
        if self.empty():
            raise EmptyLedgerError()

    def _stored(self, run_hash: str) -> tuple[str, str] | None:
        try:
            key = hash_key(run_hash)
        except ValueError:   # not hexadecimal
            return None
        rows = self.query("SELECT r.body, i.recorded_at FROM runs r JOIN ingests i ON i.id = r.ingest "
                          f"WHERE r.k = ? AND {VISIBLE}", (key,))
        if rows and body_hash(rows[0][0]) == run_hash:
            return rows[0]
        return None

    def recorded_at(self, run_hash: str) -> str:
        """When the run with this hash was first ingested (ISO-8601 UTC)."""
        stored = self._stored(run_hash) if len(run_hash) == 64 else None
        if stored is None:
            raise SelectorError(f"no run with hash {run_hash}")
        return stored[1]

    def recorded_times(self, **filters: Any) -> dict[str, str]:
        """``{run hash: when it was first ingested}`` for the runs matching the filters, in one query."""
        condition = filters.pop("condition", None)
        where, params = self._where(**filters)
        rows = self.stream(f"SELECT r.body, i.recorded_at FROM runs r JOIN ingests i ON i.id = r.ingest{where}",
                           params)
        return {body_hash(body): at for body, at in rows
                if not condition or body_holds(body, condition, ledger=self.name)}

    def stored_runs(self, **filters: Any) -> Iterator[StoredRun]:
        """Every stored run matching the filters with its ingest time, checked against its key.

        A body that no longer hashes to the key it was stored under was edited after ingest;
        it is returned with ``intact=False`` so a caller that must trust the runs (an unseal)
        can refuse it instead of silently reading the edit.
        """
        condition = filters.pop("condition", None)
        where, params = self._where(**filters)
        rows = self.query(f"SELECT r.k, r.body, r.source, i.recorded_at FROM runs r "
                          f"JOIN ingests i ON i.id = r.ingest{where} ORDER BY r.ingest, r.k", params)
        for key, body, source, at in rows:
            stored = int(key).to_bytes(8, "big", signed=True).hex()
            try:
                run = row_run(body, source, ledger=self.name)
            except (ValueError, LedgerError) as exc:   # a body that no longer reads as a run
                yield StoredRun(stored, None, at, False, f"the stored body no longer reads as a run ({exc})")
                continue
            if condition and not body_holds(body, condition, ledger=self.name):
                continue
            intact = hash_key(run.hash) == int(key)
            yield StoredRun(stored, run, at, intact, None if intact else
                            f"the stored body hashes to {run.hash[:16]}, not to its key {stored}: edited after ingest")

    # -- versions ------------------------------------------------------------------
    def versions(self) -> list[VersionInfo]:
        """Every version with runs, oldest first."""
        # The per-version counts come from the counts table (no run rows read).
        rows = self.query(
            "SELECT v.version, v.identity, c.n, c.s, v.first_recorded FROM versions v JOIN "
            "(SELECT vid, SUM(trials) AS n, COUNT(DISTINCT scenario) AS s FROM counts GROUP BY vid) c "
            "ON c.vid = v.vid ORDER BY v.first_recorded, v.version")
        return [VersionInfo(v, i, int(n), int(s), first, ledger=self.name) for v, i, n, s, first in rows]

    def select_versions(self, selector: str) -> list[str]:
        """Every version hash named by a hash prefix or ``field=value[,field=value]`` (maybe none)."""
        return [i.version for i in self._select(selector, self.versions())]

    def _select(self, selector: str, infos: list[VersionInfo]) -> list[VersionInfo]:
        if "=" not in selector:
            return [i for i in infos if i.version.startswith(selector.lower())]
        wanted = {}
        for pair in selector.split(","):
            key, _, value = pair.partition("=")
            key = key.strip()
            if key not in IDENTITY_FIELDS:
                raise SelectorError(f"version selector {selector!r}: unknown identity field {key!r} "
                                    f"(fields: {', '.join(IDENTITY_FIELDS)})")
            wanted[key] = value.strip()
        return [i for i in infos if all(_matches(i.value(k), v) for k, v in wanted.items())]

    def resolve_version(self, selector: str) -> str:
        """The full version hash named by a unique hash prefix or ``field=value[,field=value]``.

        >>> import tempfile, os
        >>> from fluke.ledger import open_ledger
        >>> from fluke.record import Run, Identity
        >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "v.db"))
        >>> _ = ledger.ingest([Run(scenario="s", identity=Identity(model="gpt-4.1"))])
        >>> ledger.resolve_version("model=gpt-4.1") == Identity(model="gpt-4.1").version
        True
        """
        infos = self.versions()
        matches = self._select(selector, infos)
        if len(matches) == 1:
            return matches[0].version
        if not matches:
            names = ", ".join(f"{i.version[:12]} ({i.label()})" for i in infos[:8])
            hint = _field_for(selector, infos)
            raise SelectorError(f"no version matches {selector!r}; " + (
                f"did you mean {hint}? " if hint else "") + f"the ledger has: {names or 'no runs'}")
        raise SelectorError(_ambiguous(selector, matches))

    # -- documents and grades -------------------------------------------------------
def _field_value(identity, key: str) -> str | None:
    """The field's value when it is text a ``field=value`` selector can name (None otherwise)."""
    value = getattr(identity, key, None)
    return value if isinstance(value, str) and value else None


def _field_for(selector: str, infos: list) -> str | None:
    """``model=gpt-4o`` for a bare ``gpt-4o`` that is some version's value of an identity field."""
    if "=" in selector:
        return None
    for key in IDENTITY_FIELDS:
        if any((_field_value(i.identity, key) or "").lower() == selector.strip().lower() for i in infos):
            return f"{key}={selector.strip()}"
    return None


def _ambiguous(selector: str, matches: list) -> str:
    """Why ``selector`` names several versions: the identity fields they differ by, with a narrower selector.

    >>> from types import SimpleNamespace as N
    >>> a = N(version="2c2d27f84bb7ff", identity=N(model="gpt-4.1", world="airline", harness=None))
    >>> b = N(version="2797c0827312ff", identity=N(model="gpt-4.1", world="retail", harness=None))
    >>> print(_ambiguous("model=gpt-4.1", [a, b]))
    'model=gpt-4.1' matches 2 versions, which differ by world=: 2c2d27f84bb7 (world=airline), 2797c0827312 \
(world=retail); narrow it, e.g. --version model=gpt-4.1,world=airline
    """
    differ = [k for k in IDENTITY_FIELDS if len({_field_value(m.identity, k) for m in matches}) > 1]
    if not differ:  # the same identity fields: only the hash tells them apart
        names = ", ".join(m.version[:12] for m in matches[:8])
        return f"{selector!r} matches {len(matches)} versions with the same identity: {names}; give a hash prefix"
    by = " and ".join(f"{k}=" for k in differ)
    names = ", ".join(f"{m.version[:12]} (" + ", ".join(f"{k}={_field_value(m.identity, k) or '(none)'}"
                                                       for k in differ) + ")" for m in matches[:8])
    first = matches[0]
    extra = ",".join(f"{k}={_field_value(first.identity, k)}" for k in differ if _field_value(first.identity, k))
    example = f"{selector},{extra}" if "=" in selector and extra else first.version[:12]
    more = f" and {len(matches) - 8} more" if len(matches) > 8 else ""
    return (f"{selector!r} matches {len(matches)} versions, which differ by {by}: {names}{more}; "
            f"narrow it, e.g. --version {example}")


def _vid(version: str) -> int:
    """The key of a full version hash given as a filter; a selector error for anything else."""
    if not isinstance(version, str) or len(version) < 15 or any(c not in "0123456789abcdef" for c in version):
        raise SelectorError(f"{version!r} is not a version hash; resolve a prefix or field=value selector "
                            "with Ledger.resolve_version first")
    return version_id(version)


def _matches(component: Any, wanted: str) -> bool:
    """Whether an identity component matches a selector value (``*`` matches any characters)."""
    if "*" in wanted and isinstance(component, str):
        import fnmatch

        return fnmatch.fnmatchcase(component, wanted.replace("[", "[[]"))
    if isinstance(component, str):
        return component == wanted
    if isinstance(component, dict):
        return wanted in {str(v) for v in component.values()} or canonical_json(component).decode() == wanted
    return wanted in ("", "none", "None") and component is None
