"""Named migrations, applied in order, each in a transaction with the record of having run.

A migration is a name and a list of SQL statements written in the dialect both backends
accept (TEXT, INTEGER, REAL, BIGINT; no AUTOINCREMENT). Append new migrations to the end
of :data:`MIGRATIONS`; never edit or reorder one that has shipped.

>>> [name for name, _ in MIGRATIONS][:1]
['0001_runs_versions_documents_grades']
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, list[str]]] = [
    ("0001_runs_versions_documents_grades", [
        # ``vid`` is the first 60 bits of the version hash: an integer key that both backends
        # index compactly, computed rather than allocated, so no sequence is needed.
        """CREATE TABLE versions (
            vid BIGINT PRIMARY KEY,
            version TEXT NOT NULL UNIQUE,
            identity TEXT NOT NULL,
            first_recorded TEXT NOT NULL
        )""",
        """CREATE TABLE runs (
            hash TEXT PRIMARY KEY,
            vid BIGINT NOT NULL,
            scenario TEXT NOT NULL,
            trial INTEGER NOT NULL,
            unit TEXT NOT NULL,
            condition TEXT NOT NULL,
            passed INTEGER,
            reward REAL,
            label TEXT,
            died_at INTEGER,
            n_events INTEGER NOT NULL,
            date TEXT,
            recorded_at TEXT NOT NULL,
            body TEXT NOT NULL
        )""",
        # Covering index for the counts that feed every statistic; the only index besides the
        # content hash, because every index costs ingest speed.
        "CREATE INDEX runs_counts ON runs (vid, scenario, condition, passed)",
        """CREATE TABLE documents (
            kind TEXT NOT NULL,
            digest TEXT NOT NULL,
            body TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            PRIMARY KEY (kind, digest)
        )""",
        """CREATE TABLE grades (
            spec_digest TEXT NOT NULL,
            run_hash TEXT NOT NULL,
            body TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            PRIMARY KEY (spec_digest, run_hash)
        )""",
    ]),
]
