"""Named migrations, applied in order, each in a transaction with the record of having run.

A migration is a name and a list of steps. A step is a SQL statement both backends accept
(TEXT, INTEGER, REAL, BIGINT; no AUTOINCREMENT), a ``{"sqlite": ..., "postgresql": ...}``
pair where the dialects differ, or a Python function of the ledger for what SQL alone
cannot do. Append new migrations to the end of :data:`MIGRATIONS`; never edit or reorder
one that has shipped.

>>> [name for name, _ in MIGRATIONS][:2]
['0001_runs_versions_documents_grades', '0002_runs_keyed_by_hash_with_counts']
>>> [name for name, _ in MIGRATIONS][2:5]
['0003_counts_keep_unknowns', '0004_pending_ingests', '0005_steps_where_runs_die']
>>> [name for name, _ in MIGRATIONS][5:]
['0006_trial_outcomes_and_unit_cells', '0007_one_run_per_trial']
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable

import orjson

from ..record import place_of
from ._rows import hash_key

Step = str | dict[str, str] | Callable[[Any], None]


def _move_runs(ledger: Any) -> None:
    """0002: rewrite each run of the 0001 layout as its content (checked against its hash)."""
    from pydantic import ValidationError

    from ..errors import LedgerError
    from ..record import Run, content_json

    ledger.execute("INSERT INTO ingests (recorded_at) SELECT DISTINCT recorded_at FROM runs "
                   "ORDER BY recorded_at")
    ingest = dict(ledger.query("SELECT recorded_at, id FROM ingests"))
    identities = {vid: orjson.loads(identity)
                  for vid, identity in ledger.query("SELECT vid, identity FROM versions")}
    rows = []
    for run_hash, vid, scenario, date, recorded_at, body in ledger.query(
        "SELECT hash, vid, scenario, date, recorded_at, body FROM runs ORDER BY recorded_at, scenario, trial, hash"
    ):
        fields = orjson.loads(body)
        source = fields.pop("source", None)
        fields["identity"] = dict(identities[vid], date=date)
        try:
            content = content_json(Run.model_validate(fields))
        except ValidationError:
            content = b""   # not a run any more: reported below as not reproducing its hash
        if hashlib.sha256(content).hexdigest() != run_hash:
            raise LedgerError(f"{ledger.url}: run {run_hash} does not reproduce its hash; the ledger was "
                              "changed outside fluke, so it is left as it was")
        rows.append((hash_key(run_hash), vid, ingest[recorded_at], scenario,
                     None if source is None else orjson.dumps(source).decode(), content.decode()))
    ledger.executemany("INSERT INTO runs_keyed (k, vid, ingest, scenario, source, body) VALUES (?, ?, ?, ?, ?, ?)",
                       rows)


def _count_unknowns(ledger: Any) -> None:
    """0003: the runs whose ``outcome.passed`` is unknown, per version x scenario x condition,
    read from the stored bodies (only those bodies are parsed, for their condition)."""
    from ..record import condition_key

    unknown: dict[tuple[int, str, str], int] = {}
    passed = ledger._json_field("outcome", "passed")
    for vid, scenario, body in ledger.stream(f"SELECT vid, scenario, body FROM runs WHERE {passed} IS NULL"):
        condition = orjson.loads(body).get("condition") or {}
        group = (vid, scenario, condition_key(condition) if condition else "")
        unknown[group] = unknown.get(group, 0) + 1
    ledger.executemany("UPDATE counts SET unknowns = ? WHERE vid = ? AND scenario = ? AND condition = ?",
                       [(n, *group) for group, n in sorted(unknown.items())])


def _tally_trials_and_units(ledger: Any) -> None:
    """0006: ``trial_outcomes`` and ``unit_cells`` from the stored bodies (:mod:`fluke.ledger._tallies`)."""
    from ._tallies import backfill

    backfill(ledger)


def _count_places(ledger: Any) -> None:
    """0005: every stored run's place (:func:`fluke.record.place_of`), per version x
    scenario x condition x cause x step x event, read from the stored bodies once."""
    from ..record import condition_key

    places: dict[tuple, int] = {}
    # the runs of an unfinished ingest (listed in ``pending``) are not counted, as in ``counts``
    for vid, scenario, body in ledger.stream("SELECT vid, scenario, body FROM runs "
                                             "WHERE ingest NOT IN (SELECT ingest FROM pending)"):
        doc = orjson.loads(body)
        outcome = doc.get("outcome") or {}
        place = place_of(outcome.get("passed"), outcome.get("died_at"), doc.get("events") or ())
        if place is not None:
            condition = doc.get("condition") or {}
            group = (vid, scenario, condition_key(condition) if condition else "", *place)
            places[group] = places.get(group, 0) + 1
    ledger.executemany("INSERT INTO steps (vid, scenario, condition, cause, step, event, runs) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", [(*group, n) for group, n in sorted(places.items())])


def _key_trials(ledger: Any) -> None:
    """0007: each stored run's trial key (:func:`fluke.ledger._rows.trial_key`), from its body.

    A ledger written before may hold two runs of one trial (two files differing only in
    latency, both stored): every run is kept as it was, counted as before; the first of each
    trial (by ingest, then the order it was stored in) takes the trial's key and the others
    keep none, so an ingest from now on skips that trial, and no count changes. The runs of an
    unfinished ingest (listed in ``pending``, removed on the next write) take none either.
    """
    from array import array

    import numpy as np

    from ..record import condition_key
    from ._rows import trial_key

    if ledger.dialect == "sqlite":   # sort the row ids, not the bodies (see SqliteLedger._ordered_runs)
        sql = ("SELECT r.k, r.vid, r.scenario, r.body FROM (SELECT rowid AS id FROM runs WHERE ingest "
               "NOT IN (SELECT ingest FROM pending) ORDER BY ingest, rowid LIMIT -1) o "
               "CROSS JOIN runs r ON r.rowid = o.id")
    else:
        sql = "SELECT k, vid, scenario, body FROM runs WHERE ingest NOT IN (SELECT ingest FROM pending) " \
              "ORDER BY ingest, k"
    keys, trials = array("q"), array("q")
    for key, vid, scenario, body in ledger.stream(sql):
        doc = orjson.loads(body)
        condition = doc.get("condition") or {}
        keys.append(key)
        trials.append(trial_key(vid, scenario, condition_key(condition) if condition else "", doc.get("trial", 0)))
    if not keys:
        return
    _, first = np.unique(np.frombuffer(trials, dtype=np.int64), return_index=True)
    first.sort()
    pairs = [(trials[i], keys[i]) for i in first.tolist()]
    for start in range(0, len(pairs), 5000):
        ledger.executemany("UPDATE runs SET t = ? WHERE k = ?", pairs[start:start + 5000])


MIGRATIONS: list[tuple[str, list[Step]]] = [
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
    # Runs keyed by the first 64 bits of their content hash, the columns cut to what queries
    # filter on, one row per ingest, and the trials and passes per version x scenario x
    # condition kept up to date in ``counts`` instead of a covering index over every run.
    ("0002_runs_keyed_by_hash_with_counts", [
        {"sqlite": "CREATE TABLE ingests (id INTEGER PRIMARY KEY, recorded_at TEXT NOT NULL)",
         "postgresql": "CREATE TABLE ingests (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                       "recorded_at TEXT NOT NULL)"},
        # ``k`` is the first 64 bits of the content hash. Rows are appended in ingest order
        # (SQLite's rowid) and ``k``'s unique index is the content address: narrow, so a
        # random-order insert into it stays cheap when the table is large.
        """CREATE TABLE runs_keyed (
            k BIGINT NOT NULL UNIQUE,
            vid BIGINT NOT NULL,
            ingest BIGINT NOT NULL,
            scenario TEXT NOT NULL,
            source TEXT,
            body TEXT NOT NULL
        )""",
        """CREATE TABLE counts (
            vid BIGINT NOT NULL,
            scenario TEXT NOT NULL,
            condition TEXT NOT NULL,
            trials BIGINT NOT NULL,
            passes BIGINT NOT NULL,
            PRIMARY KEY (vid, scenario, condition)
        )""",
        "INSERT INTO counts (vid, scenario, condition, trials, passes) SELECT vid, scenario, condition, "
        "COUNT(*), COALESCE(SUM(passed), 0) FROM runs GROUP BY vid, scenario, condition",
        _move_runs,
        "DROP TABLE runs",
        "ALTER TABLE runs_keyed RENAME TO runs",
    ]),
    # How many of each group's trials had an unknown outcome (``passed`` null: a crashed
    # harness, a parse error), so that every verb can say how many there were and apply one
    # policy to them (:func:`fluke.inference.apply_unknown_policy`); ``passes`` is unchanged.
    ("0003_counts_keep_unknowns", [
        "ALTER TABLE counts ADD COLUMN unknowns BIGINT NOT NULL DEFAULT 0",
        _count_unknowns,
    ]),
    # An ingest too large for one transaction (SQLite, see fluke.ledger._ingest) commits its
    # runs in batches while its id is here; readers skip the runs of these ingests, and the
    # last transaction of the ingest removes its row. ``after`` is the largest row id before
    # it began, so that the runs of one that failed can be found and removed.
    ("0004_pending_ingests", [
        "CREATE TABLE pending (ingest BIGINT PRIMARY KEY, after BIGINT NOT NULL)",
    ]),
    # Where each run died or was censored, counted per version x scenario x condition, so that
    # the survival analysis of ``compare`` (the log-rank, the Cox fit, deaths per step) reads
    # a few rows instead of every run. ``cause`` is one of fluke.record.CAUSES; ``step``
    # is the event index (-1 for a failed run with no known step); ``event`` names the event
    # at that step ('' for a censored run). Kept at ingest by the same tally as ``counts``.
    ("0005_steps_where_runs_die", [
        """CREATE TABLE steps (
            vid BIGINT NOT NULL,
            scenario TEXT NOT NULL,
            condition TEXT NOT NULL,
            cause TEXT NOT NULL,
            step BIGINT NOT NULL,
            event TEXT NOT NULL,
            runs BIGINT NOT NULL,
            PRIMARY KEY (vid, scenario, condition, cause, step, event)
        )""",
        _count_places,
    ]),
    # Each run's outcome in trial order (the fix check's re-run rule pairs a failure with the
    # re-runs after it) and sums per sampling unit (the interval clusters by it), kept at ingest
    # beside counts and steps: see fluke.ledger._tallies for the layout of ``seq``. An ingest
    # too large to hold its entries moves them into ``trial_outcomes_staged`` until it finishes.
    ("0006_trial_outcomes_and_unit_cells", [
        {"sqlite": """CREATE TABLE trial_outcomes (
            vid BIGINT NOT NULL, scenario TEXT NOT NULL, condition TEXT NOT NULL, block BIGINT NOT NULL,
            seq BLOB NOT NULL, PRIMARY KEY (vid, scenario, condition, block))""",
         "postgresql": """CREATE TABLE trial_outcomes (
            vid BIGINT NOT NULL, scenario TEXT NOT NULL, condition TEXT NOT NULL, block BIGINT NOT NULL,
            seq BYTEA NOT NULL, PRIMARY KEY (vid, scenario, condition, block))"""},
        {"sqlite": """CREATE TABLE trial_outcomes_staged (
            ingest BIGINT NOT NULL, vid BIGINT NOT NULL, scenario TEXT NOT NULL, condition TEXT NOT NULL,
            block BIGINT NOT NULL, seq BLOB NOT NULL, PRIMARY KEY (ingest, vid, scenario, condition, block))""",
         "postgresql": """CREATE TABLE trial_outcomes_staged (
            ingest BIGINT NOT NULL, vid BIGINT NOT NULL, scenario TEXT NOT NULL, condition TEXT NOT NULL,
            block BIGINT NOT NULL, seq BYTEA NOT NULL, PRIMARY KEY (ingest, vid, scenario, condition, block))"""},
        """CREATE TABLE unit_cells (
            vid BIGINT NOT NULL,
            unit TEXT NOT NULL,
            scenario TEXT NOT NULL,
            condition TEXT NOT NULL,
            trials BIGINT NOT NULL,
            passes BIGINT NOT NULL,
            unknowns BIGINT NOT NULL,
            rewarded BIGINT NOT NULL,
            reward_sum DOUBLE PRECISION NOT NULL,
            reward_squares DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (vid, unit, scenario, condition)
        )""",
        _tally_trials_and_units,
    ]),
    # One run per version x scenario x condition x trial: ``t`` is the trial key, unique (NULL for
    # the later runs of a trial a ledger held twice before this, kept as they were; see _key_trials).
    ("0007_one_run_per_trial", [
        "ALTER TABLE runs ADD COLUMN t BIGINT",
        _key_trials,
        "CREATE UNIQUE INDEX runs_trial ON runs (t)",
    ]),
]
