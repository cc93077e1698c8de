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
        """CREATE TABLE versions (
            version TEXT PRIMARY KEY,
            identity TEXT NOT NULL
        )""",
        """CREATE TABLE runs (
            hash TEXT PRIMARY KEY,
            version TEXT NOT NULL,
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
        # Covering index for the counts that feed every statistic.
        "CREATE INDEX runs_counts ON runs (version, scenario, condition, passed)",
        "CREATE INDEX runs_scenario ON runs (scenario)",
        "CREATE INDEX runs_recorded ON runs (recorded_at)",
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
