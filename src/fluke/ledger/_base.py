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
import datetime as _dt
import hashlib
from typing import Any, Iterable, Iterator, Sequence

import orjson

from ..errors import LedgerError, SelectorError
from ..record import IDENTITY_FIELDS, Identity, Run, canonical_json, digest
from ._migrations import MIGRATIONS
from ._types import CountRow, Document, IngestResult, VersionInfo

_RUN_COLUMNS = ("hash", "vid", "scenario", "trial", "unit", "condition", "passed", "reward",
                "label", "died_at", "n_events", "date", "recorded_at", "body")
#: Runs are written in batches of this many rows (all inside one transaction).
BATCH = 5000


def version_id(version: str) -> int:
    """The integer key of a version hash: its first 60 bits (fits a signed BIGINT).

    >>> version_id("f" * 64) == 2 ** 60 - 1
    True
    """
    return int(version[:15], 16)


def utcnow() -> str:
    """The current UTC time as a sortable ISO-8601 string with microseconds."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run_row(run: Run, recorded_at: str) -> tuple:
    """The ``runs`` row of ``run``: dumps the run once and derives hash and body from it.

    The stored body leaves out the identity (kept once per version in ``versions``, with the
    date in its own column) and empty fields, which halves the row; :func:`row_run` puts
    them back.
    """
    body = run.model_dump(mode="json")
    source = body.pop("source")
    run_hash = hashlib.sha256(canonical_json(body)).hexdigest()
    run.__dict__.setdefault("hash", run_hash)  # share the work with Run.hash
    del body["identity"]
    slim = {k: v for k, v in body.items() if v is not None and v != [] and v != {}}
    if source is not None:
        slim["source"] = source
    outcome = run.outcome
    passed = None if outcome.passed is None else int(outcome.passed)
    return (run_hash, version_id(run.identity.version), run.scenario, run.trial, run.sampling_unit,
            run.condition_key(), passed, outcome.reward, outcome.label, outcome.died_at,
            len(run.events), run.identity.date, recorded_at, orjson.dumps(slim).decode())


def row_run(body: str, identity: dict[str, Any], date: str | None) -> Run:
    """Rebuild a Run from its stored body, its version's identity and its date."""
    fields = orjson.loads(body)
    fields["identity"] = dict(identity, date=date)
    return Run.model_validate(fields)


class Ledger:
    """The store of runs, grades and documents. Use :func:`fluke.ledger.open_ledger`."""

    #: The parameter placeholder of the backend's DB-API driver.
    placeholder = "?"

    def __init__(self, url: str) -> None:
        self.url = url
        self._depth = 0
        self._conn = self._connect()
        self._migrate()

    # -- backend hooks -------------------------------------------------------------
    def _connect(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _insert_runs(self, rows: list[tuple]) -> int:
        """Insert rows, skipping hashes already present; return how many were added."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _tables(self) -> set[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- plumbing ------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement (``?`` placeholders on every backend); return the cursor."""
        cur = self._conn.cursor()
        cur.execute(self._sql(sql), tuple(params))
        return cur

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Run a query and return all its rows."""
        return list(self.execute(sql, params).fetchall())

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
        self._begin()
        self._depth = 1
        try:
            yield self
        except BaseException:
            self._conn.rollback()
            raise
        else:
            self._conn.commit()
        finally:
            self._depth = 0

    def _begin(self) -> None:
        """Start a transaction (drivers that autocommit-off start one implicitly)."""

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        with self.atomic():
            if "migrations" not in self._tables():
                self.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        applied = {name for (name,) in self.query("SELECT name FROM migrations")}
        known = {name for name, _ in MIGRATIONS}
        if applied - known:
            raise LedgerError(
                f"{self.url}: written by a newer fluke (migrations {sorted(applied - known)}); "
                "upgrade with: pip install -U fluke")
        for name, statements in MIGRATIONS:
            if name in applied:
                continue
            with self.atomic():
                for statement in statements:
                    self.execute(statement)
                self.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, utcnow()))

    def migrations(self) -> list[str]:
        """The names of the applied migrations, in order."""
        return [name for (name,) in self.query("SELECT name FROM migrations ORDER BY name")]

    # -- runs ----------------------------------------------------------------------
    def ingest(self, runs: Iterable[Run], *, progress: Any = None) -> IngestResult:
        """Store ``runs`` in one transaction; runs already present are skipped.

        If the iterable raises part-way (a bad record in a file), nothing of it is kept.
        ``progress`` is called with the number of runs handled after each batch.
        """
        added = seen = 0
        recorded_at = utcnow()
        known_versions: set[str] = set()
        with self.atomic():
            batch: list[tuple] = []
            for run in runs:
                version = run.identity.version
                if version not in known_versions:
                    self._put_version(run.identity, recorded_at)
                    known_versions.add(version)
                batch.append(run_row(run, recorded_at))
                if len(batch) >= BATCH:
                    added += self._insert_runs(batch)
                    seen += len(batch)
                    batch = []
                    if progress:
                        progress(seen)
            if batch:
                added += self._insert_runs(batch)
                seen += len(batch)
                if progress:
                    progress(seen)
        return IngestResult(added=added, skipped=seen - added)

    def _put_version(self, identity: Identity, recorded_at: str) -> None:
        body = identity.model_dump(mode="json", exclude={"date"})
        self.execute("INSERT INTO versions (vid, version, identity, first_recorded) VALUES (?, ?, ?, ?) "
                     "ON CONFLICT (vid) DO NOTHING",
                     (version_id(identity.version), identity.version, canonical_json(body).decode(), recorded_at))

    def _where(self, *, scenario: str | None = None, version: str | Sequence[str] | None = None,
               condition: str | None = None, since: str | None = None,
               until: str | None = None) -> tuple[str, list[Any]]:
        clauses, params = [], []
        if scenario is not None:
            if any(ch in scenario for ch in "*?"):
                clauses.append("scenario LIKE ?")
                params.append(scenario.replace("*", "%").replace("?", "_"))
            else:
                clauses.append("scenario = ?")
                params.append(scenario)
        if isinstance(version, str):
            clauses.append("vid = ?")
            params.append(version_id(version))
        elif version is not None:
            vids = [version_id(v) for v in version]
            clauses.append(f"vid IN ({', '.join('?' * len(vids)) or 'NULL'})")
            params.extend(vids)
        if condition:
            for pair in condition.split(","):
                clauses.append("(',' || condition || ',') LIKE ?")
                params.append(f"%,{pair.strip()},%")
        if since is not None:
            clauses.append("date >= ?")
            params.append(since)
        if until is not None:
            clauses.append("date <= ?")
            params.append(until)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def runs(self, *, scenario: str | None = None, version: str | None = None,
             condition: str | None = None, since: str | None = None, until: str | None = None,
             limit: int | None = None) -> Iterator[Run]:
        """The stored runs matching the filters, in ingest order then scenario and trial.

        ``scenario`` may use ``*`` wildcards; ``condition`` is ``key=value[,key=value]``;
        ``since``/``until`` compare with the identity date (ISO strings).
        """
        where, params = self._where(scenario=scenario, version=version, condition=condition,
                                    since=since, until=until)
        sql = f"SELECT body, vid, date FROM runs{where} ORDER BY recorded_at, scenario, trial, hash"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        identities = {vid: orjson.loads(identity) for vid, identity in self.query("SELECT vid, identity FROM versions")}
        for body, vid, date in self.query(sql, params):
            yield row_run(body, identities[vid], date)

    def count(self, **filters: Any) -> int:
        """How many runs match the filters of :meth:`runs`."""
        where, params = self._where(**filters)
        return int(self.query(f"SELECT COUNT(*) FROM runs{where}", params)[0][0])

    def counts(self, *, version: str | None = None, scenario: str | None = None,
               condition: str | None = None) -> list[CountRow]:
        """Trials and passes per version × scenario × condition, aggregated in SQL.

        A run whose ``passed`` is unknown counts as a trial that did not pass.
        """
        where, params = self._where(scenario=scenario, version=version, condition=condition)
        rows = self.query(
            "SELECT vid, scenario, condition, COUNT(*), COALESCE(SUM(passed), 0) FROM runs"
            f"{where} GROUP BY vid, scenario, condition", params)
        names = dict(self.query("SELECT vid, version FROM versions"))
        out = [CountRow(names[v], s, c, int(n), int(k)) for v, s, c, n, k in rows]
        out.sort(key=lambda r: (r.version, r.scenario, r.condition))
        return out

    def recorded_at(self, run_hash: str) -> str:
        """When the run with this hash was first ingested (ISO-8601 UTC)."""
        rows = self.query("SELECT recorded_at FROM runs WHERE hash = ?", (run_hash,))
        if not rows:
            raise SelectorError(f"no run with hash {run_hash}")
        return rows[0][0]

    def recorded_times(self, **filters: Any) -> dict[str, str]:
        """``{run hash: when it was first ingested}`` for the runs matching the filters, in one query."""
        where, params = self._where(**filters)
        return dict(self.query(f"SELECT hash, recorded_at FROM runs{where}", params))

    # -- versions ------------------------------------------------------------------
    def versions(self) -> list[VersionInfo]:
        """Every version with runs, oldest first."""
        # The per-version counts come from the covering index alone (no table rows read).
        rows = self.query(
            "SELECT v.version, v.identity, c.n, c.s, v.first_recorded FROM versions v JOIN "
            "(SELECT vid, COUNT(*) AS n, COUNT(DISTINCT scenario) AS s FROM runs GROUP BY vid) c "
            "ON c.vid = v.vid ORDER BY v.first_recorded, v.version")
        return [VersionInfo(v, Identity.model_validate_json(i), int(n), int(s), first)
                for v, i, n, s, first in rows]

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
        return [i for i in infos if all(_matches(getattr(i.identity, k), v) for k, v in wanted.items())]

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
        names = ", ".join(f"{i.version[:12]} ({i.identity.label()})" for i in (matches or infos)[:8])
        if not matches:
            raise SelectorError(f"no version matches {selector!r}; the ledger has: {names or 'no runs'}")
        raise SelectorError(f"{selector!r} matches {len(matches)} versions: {names}; be more specific")

    # -- documents and grades -------------------------------------------------------
    def put_document(self, kind: str, body: dict[str, Any]) -> str:
        """Append a document (idempotent by content); return its SHA-256 digest."""
        doc_digest = digest(body)
        with self.atomic():
            self.execute("INSERT INTO documents (kind, digest, body, recorded_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT (kind, digest) DO NOTHING",
                         (kind, doc_digest, canonical_json(body).decode(), utcnow()))
        return doc_digest

    def documents(self, kind: str) -> list[Document]:
        """Every document of ``kind``, oldest first."""
        rows = self.query("SELECT digest, body, recorded_at FROM documents WHERE kind = ? "
                          "ORDER BY recorded_at, digest", (kind,))
        return [Document(d, kind, orjson.loads(b), r) for d, b, r in rows]

    def put_grades(self, spec_digest: str, rows: Iterable[tuple[str, dict[str, Any]]]) -> int:
        """Store per-run grades under a spec digest (one transaction); return how many were new."""
        now = utcnow()
        added = 0
        with self.atomic():
            for run_hash, body in rows:
                cur = self.execute("INSERT INTO grades (spec_digest, run_hash, body, recorded_at) "
                                   "VALUES (?, ?, ?, ?) ON CONFLICT (spec_digest, run_hash) DO NOTHING",
                                   (spec_digest, run_hash, canonical_json(body).decode(), now))
                added += max(cur.rowcount, 0)
        return added

    def grades(self, spec_digest: str) -> dict[str, dict[str, Any]]:
        """The stored grades for a spec digest, by run hash."""
        rows = self.query("SELECT run_hash, body FROM grades WHERE spec_digest = ?", (spec_digest,))
        return {h: orjson.loads(b) for h, b in rows}


def _matches(component: Any, wanted: str) -> bool:
    if isinstance(component, str):
        return component == wanted
    if isinstance(component, dict):
        return wanted in {str(v) for v in component.values()} or canonical_json(component).decode() == wanted
    return wanted in ("", "none", "None") and component is None

