"""The lake backend: a read-only ledger over a fluke Parquet dataset (``parquet:DIR``) or a
DuckDB database holding the same tables (``duckdb:FILE``), queried through DuckDB.

Nothing is kept at ingest here, so the tallies the count verbs read (``counts``, ``steps``,
``unit_cells``) are made by grouping the runs table in DuckDB, over the Parquet files, the first
time a statement of the shared :class:`fluke.ledger.Ledger` code reads one (then kept as a
table of the in-memory database while the ledger is open: a verb reads ``counts`` several
times). ``trial_outcomes`` is one ordered query (:data:`TRIAL_OUTCOMES`), and the fix check's
``outcome_sequences`` the same query's outcomes alone, one byte a run. The aggregate SQL
(:data:`TALLY_VIEWS`) is plain SQL that PostgreSQL and SQLite run too, over any table with the
columns of :data:`fluke.lake.RUN_COLUMNS`.

>>> import tempfile, os
>>> from fluke.ledger import open_ledger
>>> from fluke.lake import write_dataset
>>> from fluke.record import Outcome, Run
>>> folder = tempfile.mkdtemp()
>>> with open_ledger(os.path.join(folder, "x.db")) as ledger:
...     _ = ledger.ingest([Run(scenario="s", trial=t, outcome=Outcome(passed=t > 0)) for t in range(3)])
...     _ = write_dataset(ledger, os.path.join(folder, "lake"))
>>> lake = open_ledger("parquet:" + os.path.join(folder, "lake"))
>>> [(r.trials, r.passes) for r in lake.counts()], lake.read_only
([(3, 2)], True)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..errors import LedgerError, require
from ._base import Ledger
from ._migrations import MIGRATIONS

#: The tallies as queries over ``runs``: the same SQL runs on DuckDB, PostgreSQL and SQLite.
TALLY_VIEWS: dict[str, str] = {
    "counts": ("SELECT vid, scenario, condition, COUNT(*) AS trials, "
               "SUM(CASE WHEN passed THEN 1 ELSE 0 END) AS passes, "
               "SUM(CASE WHEN passed IS NULL THEN 1 ELSE 0 END) AS unknowns "
               "FROM runs GROUP BY vid, scenario, condition"),
    "steps": ("SELECT vid, scenario, condition, cause, step, event, COUNT(*) AS runs FROM runs "
              "WHERE cause IS NOT NULL GROUP BY vid, scenario, condition, cause, step, event"),
    "unit_cells": ("SELECT vid, unit, scenario, condition, COUNT(*) AS trials, "
                   "SUM(CASE WHEN passed THEN 1 ELSE 0 END) AS passes, "
                   "SUM(CASE WHEN passed IS NULL THEN 1 ELSE 0 END) AS unknowns, COUNT(reward) AS rewarded, "
                   "COALESCE(SUM(reward), 0) AS reward_sum, COALESCE(SUM(reward * reward), 0) AS reward_squares "
                   "FROM runs GROUP BY vid, unit, scenario, condition"),
}

#: Every run's version, trial and outcome in the order :meth:`fluke.ledger.Ledger.trial_outcomes`
#: gives (input, trial, version, ingest, key); its inputs' sizes come from :data:`OUTCOME_INPUTS`,
#: in the same order. ``{columns}``: all three, or the outcome alone (:meth:`LakeLedger.outcome_sequences`).
TRIAL_OUTCOMES = ("SELECT {columns} FROM (SELECT vid, trial, "
                  "CAST(CASE WHEN passed THEN 0 WHEN passed IS NULL THEN 2 ELSE 1 END AS UTINYINT) AS outcome, "
                  "scenario, condition, ingest, k FROM runs{where}) r "
                  "ORDER BY scenario, condition, trial, vid, ingest, k")
#: The runs of each input and version, inputs in the order of :data:`TRIAL_OUTCOMES`.
OUTCOME_INPUTS = ("SELECT scenario, condition, vid, COUNT(*) FROM runs{where} GROUP BY scenario, condition, vid "
                  "ORDER BY scenario, condition, vid")

#: The tables a verb may add to (a verdict recorded, grades stored): each write is a new file.
APPENDED = ("documents", "grades")

_EMPTY = {"pending": "CREATE TABLE pending (ingest BIGINT, after BIGINT)"}


def _literal(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class LakeLedger(Ledger):
    """A read-only ledger over a Parquet dataset or a DuckDB file (see the module docstring)."""

    dialect = "duckdb"
    read_only = True

    #: DuckDB's memory limit: past it, a sort or group-by spills to its temporary files.
    MEMORY_LIMIT = "2GB"

    def _sql(self, sql: str) -> str:
        """Make each tally a table the first time a statement reads it: one group-by over the
        runs (the filters of later reads then cost nothing), kept while the ledger is open."""
        for name, view in TALLY_VIEWS.items():
            if name not in self._tallied and re.search(rf"\b{name}\b", sql):
                self._tallied.add(name)
                self._conn.execute(f"CREATE TABLE {name} AS {view}")
        return sql

    def _kind(self) -> tuple[str, Path]:
        kind, _, rest = self.url.partition(":")
        return kind, Path(rest.removeprefix("//")).expanduser()

    def _exists(self) -> bool | None:
        kind, path = self._kind()
        if kind == "parquet":
            from ..lake import is_dataset

            return is_dataset(path)
        return path.is_file()

    def _missing(self) -> str:
        kind, path = self._kind()
        if kind == "parquet":
            return f"no fluke Parquet dataset at {path} (write one with: fluke export --format parquet -o {path})"
        return f"no DuckDB ledger at {path} (make one with: python -c \"from fluke.lake import materialise; " \
               f"materialise('DIR', '{path}')\")"

    def __init__(self, url: str, *, create: bool = True) -> None:
        super().__init__(url, create=False)

    def _connect(self) -> Any:
        duckdb = require("duckdb", package="duckdb", extra="lake", purpose="A Parquet or DuckDB ledger")
        kind, path = self._kind()
        import os
        import tempfile
        import uuid

        # what a sort spills goes to a folder of its own in the system's temporary folder (DuckDB
        # makes it when it first spills and removes it when closed), not to a .tmp beside the caller
        spill = os.path.join(tempfile.gettempdir(), f"fluke-duckdb-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        conn = duckdb.connect(":memory:", config={"preserve_insertion_order": False,
                                                  "memory_limit": self.MEMORY_LIMIT,
                                                  "temp_directory": spill})
        self._tallied: set[str] = set()
        try:
            if kind == "parquet":
                self._parquet_views(conn, path)
            else:
                conn.execute(f"ATTACH {_literal(path)} AS lake (READ_ONLY)")
                found = {n for (n,) in conn.execute("SELECT table_name FROM information_schema.tables "
                                                    "WHERE table_catalog = 'lake'").fetchall()}
                missing = sorted({"runs", "versions", "ingests"} - found)
                if missing:
                    raise LedgerError(f"{path}: a DuckDB file without fluke's {', '.join(missing)} table(s); "
                                      "make one with fluke.lake.materialise")
                for name in ("runs", "versions", "ingests", "documents", "grades"):
                    if name in found:
                        conn.execute(f"CREATE VIEW {name} AS SELECT * FROM lake.{name}")
                    else:
                        self._empty_table(conn, name)
            for sql in _EMPTY.values():
                conn.execute(sql)
            conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
            conn.executemany("INSERT INTO migrations VALUES (?, '')", [(name,) for name, _ in MIGRATIONS])
        except duckdb.Error as exc:
            conn.close()
            raise LedgerError(f"{self.name}: cannot be read as a fluke lake ({str(exc).splitlines()[0]})") from None
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _empty_table(conn: Any, name: str) -> None:
        from ..lake._layout import RUN_COLUMNS, TABLES

        kinds = {"int64": "BIGINT", "string": "VARCHAR", "bool": "BOOLEAN", "float64": "DOUBLE",
                 "map<string,float64>": "MAP(VARCHAR, DOUBLE)"}
        columns = RUN_COLUMNS if name == "runs" else TABLES[name]
        conn.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {kinds[t]}' for c, t in columns)})")

    def _parquet_views(self, conn: Any, path: Path) -> None:
        from ..lake import Dataset

        dataset = Dataset(path)
        files = dataset.run_files()
        if files:
            listed = ", ".join(_literal(f) for f in files)
            conn.execute(f"CREATE VIEW runs AS SELECT * FROM read_parquet([{listed}], hive_partitioning = false)")
        else:
            self._empty_table(conn, "runs")
        for name in ("versions", "ingests"):
            file = dataset.table(name)
            if file.is_file():
                conn.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet({_literal(file)})")
            else:
                self._empty_table(conn, name)
        for name in APPENDED:
            self._appended_view(conn, dataset, name)

    @staticmethod
    def _appended_view(conn: Any, dataset: Any, name: str) -> None:
        """``documents`` or ``grades``: the exported table and every file written back since
        (``documents/*.parquet``, ``grades/*.parquet``)."""
        files = [f for f in [dataset.table(name), *sorted((dataset.path / name).glob("*.parquet"))] if f.is_file()]
        conn.execute(f"DROP VIEW IF EXISTS {name}")
        conn.execute(f"DROP TABLE IF EXISTS {name}")
        if files:
            conn.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{', '.join(map(_literal, files))}])")
        else:
            LakeLedger._empty_table(conn, name)

    def _append(self, name: str, rows: list[tuple]) -> None:
        """Write ``rows`` of ``documents`` or ``grades`` as one new Parquet file of the dataset's
        folder of that name, whole or not at all (written beside it, then renamed)."""
        import uuid

        from ..lake import Dataset
        from ..lake._layout import TABLES, pyarrow, schema

        kind, path = self._kind()
        if kind != "parquet":
            raise self._refuse(name)
        pa = pyarrow()
        import pyarrow.parquet as pq

        target = schema(TABLES[name])
        table = pa.Table.from_arrays([pa.array([r[i] for r in rows], type=f.type) for i, f in enumerate(target)],
                                     schema=target)
        folder = path / name
        folder.mkdir(exist_ok=True)
        file = folder / f"part-{uuid.uuid4().hex}.parquet"
        part = file.with_name(file.name + ".part")
        try:
            pq.write_table(table, part, compression="zstd")
            part.rename(file)
        finally:
            part.unlink(missing_ok=True)
        with self.faults():
            self._appended_view(self._conn, Dataset(path), name)

    def _fault(self, exc: Exception) -> LedgerError | None:
        import duckdb

        if isinstance(exc, duckdb.Error):
            return LedgerError(f"{self.name}: the lake failed ({str(exc).splitlines()[0]})")
        return None

    def _tables(self) -> set[str]:
        return {name for (name,) in self._conn.execute("SELECT table_name FROM information_schema.tables "
                                                       "WHERE table_catalog = 'memory'").fetchall()}

    def _json_field(self, *path: str, integer: bool = False) -> str:
        field = f"json_extract_string(body, '$.{'.'.join(path)}')"
        return f"CAST({field} AS HUGEINT)" if integer else field

    def _ordered_runs(self, where: str, limit: int | None) -> str:
        return (f"SELECT body, source FROM runs{where} ORDER BY ingest, scenario, trial, k"
                + ("" if limit is None else f" LIMIT {int(limit)}"))

    def run_bodies(self, **filters: Any):
        for body, source in super().run_bodies(**filters):
            if body is None:
                raise LedgerError(f"{self.name}: holds outcome-only runs (no body); this verb reads whole runs, "
                                  "which only the count verbs can do without")
            yield body, source

    #: What a reader of :meth:`outcome_sequences` holds per run: its byte, and a share of one
    #: part of the fix check's arrays.
    SEQUENCE_BYTES = 2
    #: Whether :meth:`outcome_sequences` sorts the runs here (:meth:`_sorted_here`) rather than in
    #: DuckDB, whose sort of 10^8 rows spills past :data:`MEMORY_LIMIT` (3× the CPU time).
    SORT_HERE = True

    def _outcome_where(self, version, scenario, condition, trials) -> tuple[str, list]:
        where, params = self._where(scenario=scenario, version=version, runs=False)
        where, params = self._condition_where(where, params, condition)
        if trials is not None:
            wanted = sorted({int(t) for t in trials})
            where += (" AND " if where else " WHERE ") + "list_contains(?, trial)"
            params = [*params, wanted]
        return where, params

    def _inputs(self, cur: Any, where: str, params: list) -> tuple:
        """``(inputs, sizes, vids)`` of the runs matching ``where`` (:data:`OUTCOME_INPUTS`)."""
        import numpy as np

        inputs: list[tuple[str, str]] = []
        sizes: list[int] = []
        vids: set[int] = set()
        for scen, cond, vid, n in cur.execute(OUTCOME_INPUTS.format(where=where), params).fetchall():
            if not inputs or inputs[-1] != (scen, cond):
                inputs.append((scen, cond))
                sizes.append(0)
            sizes[-1] += int(n)
            vids.add(int(vid))
        return tuple(inputs), np.asarray(sizes, dtype=np.int64), sorted(vids)

    @staticmethod
    def _fetch(cur: Any, query: str, params: list, dtypes: list, total: int) -> list | None:
        """The columns of ``query`` written into numpy arrays of ``dtypes`` batch by batch as DuckDB
        hands the rows over; None when there are not exactly ``total`` of them."""
        import numpy as np

        arrays = [np.empty(total, dtype) for dtype in dtypes]
        relation = cur.sql(query, params=params)
        reader = (relation.to_arrow_reader(1 << 20) if hasattr(relation, "to_arrow_reader")
                  else cur.execute(query, params).fetch_record_batch(1 << 20))   # duckdb before 1.4
        at = 0
        for batch in reader:
            n = batch.num_rows
            if at + n > total:
                return None
            for target, column in zip(arrays, batch.columns, strict=True):
                target[at:at + n] = column.to_numpy(zero_copy_only=False)
            at += n
        return arrays if at == total else None

    def _ordered_outcomes(self, where: str, params: list, columns: str, into: list) -> tuple:
        """``(inputs, sizes, vids)`` of the runs matching ``where``, and their ``columns`` of
        :data:`TRIAL_OUTCOMES` as numpy arrays of the dtypes ``into``, in its order."""
        cur = self._conn.cursor()
        inputs, sizes, vids = self._inputs(cur, where, params)
        arrays = self._fetch(cur, TRIAL_OUTCOMES.format(columns=columns, where=where), params, into, int(sizes.sum()))
        cur.close()
        if arrays is None:
            raise LedgerError(f"{self.name}: the runs changed while they were read")
        return inputs, sizes, vids, arrays

    def _sorted_here(self, cur: Any, where: str, params: list, inputs: tuple, sizes: Any, vids: list):
        """The outcomes of :data:`TRIAL_OUTCOMES`' order without asking DuckDB to sort them: each
        run's input (a join with the ``inputs``, a few rows), trial, version and outcome streamed
        unsorted, then one stable sort here of a key packing input, trial and version into 64 bits.
        None where it cannot tell that order (the key does not fit; two runs of one version share
        an input and trial, which only the ingest and content key order): DuckDB then sorts."""
        import numpy as np

        pa = require("pyarrow", package="pyarrow", extra="lake", purpose="A Parquet dataset")
        total = int(sizes.sum())
        if total == 0:
            return np.empty(0, np.uint8)
        trials = cur.execute(f"SELECT MIN(trial), MAX(trial) FROM runs{where}", params).fetchall()[0]
        low, high = int(trials[0]), int(trials[1])
        bits = [max(len(inputs) - 1, 1).bit_length(), max(high - low, 1).bit_length(),
                max(len(vids) - 1, 1).bit_length() if len(vids) > 1 else 0]
        if sum(bits) > 62:
            return None
        cur.register("fluke_inputs", pa.table({"scenario": [i[0] for i in inputs], "condition": [i[1] for i in inputs],
                                               "i": np.arange(len(inputs), dtype=np.int64)}))
        columns = "f.i, r.trial, CAST(CASE WHEN r.passed THEN 0 WHEN r.passed IS NULL THEN 2 ELSE 1 END AS UTINYINT)"
        dtypes: list = [np.int64, np.int64, np.uint8]
        if bits[2]:
            columns += ", r.vid"
            dtypes.append(np.int64)
        query = (f"SELECT {columns} FROM (SELECT * FROM runs{where}) r JOIN fluke_inputs f "
                 "ON f.scenario = r.scenario AND f.condition = r.condition")
        got = self._fetch(cur, query, params, dtypes, total)
        cur.unregister("fluke_inputs")
        if got is None:
            return None
        key, trial, outcome = got[0], got[1], got[2]      # the key is made in the input's array
        key <<= bits[1] + bits[2]
        trial -= low
        trial <<= bits[2]
        key |= trial
        if bits[2]:
            key |= np.searchsorted(np.asarray(vids, dtype=np.int64), got[3])
        del got, trial
        order = np.argsort(key, kind="stable")
        step = 1 << 22
        for start in range(0, total, step):      # two runs with one key: the order is not the key's
            near = key[order[start:start + step + 1]]
            if (near[1:] == near[:-1]).any():
                return None
        return outcome[order]

    def trial_outcomes(self, *, version: str | Sequence[str] | None = None, scenario: str | None = None,
                       condition: str | None = None, trials: Iterable[int] | None = None):
        """:meth:`fluke.ledger.Ledger.trial_outcomes`, as one ordered query in DuckDB."""
        import numpy as np

        from ._types import TrialOutcomes

        where, params = self._outcome_where(version, scenario, condition, trials)
        names = dict(self.query("SELECT vid, version FROM versions"))
        with self.faults():
            inputs, sizes, vids, (vid, trial, outcome) = self._ordered_outcomes(
                where, params, "vid, trial, outcome", [np.int64, np.int64, np.uint8])
        return TrialOutcomes(tuple(names[v] for v in vids), inputs,
                             np.searchsorted(np.asarray(vids, dtype=np.int64), vid).astype(np.int32),
                             np.repeat(np.arange(len(inputs), dtype=np.int32), sizes), trial, outcome)

    def outcome_sequences(self, *, version: str | Sequence[str] | None = None, scenario: str | None = None,
                          condition: str | None = None, trials: Iterable[int] | None = None):
        """:meth:`fluke.ledger.Ledger.outcome_sequences`: the runs per input (a group-by), then their
        outcomes, one byte a run, put in order here (:meth:`_sorted_here`), or where that cannot
        tell the order, from one ordered query (:data:`TRIAL_OUTCOMES`) that DuckDB sorts (spilling
        to its temporary folder past :data:`MEMORY_LIMIT`)."""
        import numpy as np

        from ._types import OutcomeSequences

        where, params = self._outcome_where(version, scenario, condition, trials)
        names = dict(self.query("SELECT vid, version FROM versions"))
        with self.faults():
            cur = self._conn.cursor()
            inputs, sizes, vids = self._inputs(cur, where, params)
            outcome = self._sorted_here(cur, where, params, inputs, sizes, vids) if self.SORT_HERE else None
            if outcome is None:
                outcome = self._fetch(cur, TRIAL_OUTCOMES.format(columns="outcome", where=where), params, [np.uint8],
                                      int(sizes.sum()))
                if outcome is None:
                    raise LedgerError(f"{self.name}: the runs changed while they were read")
                outcome = outcome[0]
            cur.close()
        return OutcomeSequences(tuple(names[v] for v in vids), inputs, sizes, outcome)

    def _refuse(self, what: str) -> LedgerError:
        return LedgerError(f"{self.name}: a DuckDB file is read here, not written, so {what} cannot be stored in "
                           "it; pass --no-record (--no-store), or use the Parquet dataset it was made from")

    #: Whether a worker process (or a Ray task on this machine or one sharing its storage) may
    #: open the ledger by its URL and read its own slice of runs: a dataset's files are read-only.
    SHARED_READS = True

    def put_document(self, kind: str, body: dict[str, Any]) -> str:
        """Append a document (idempotent by content) as a new file of the dataset's ``documents/``."""
        from ..record import canonical_json
        from ..record import digest
        from ._ingest import utcnow

        doc_digest = digest(body)
        if not self.query("SELECT 1 FROM documents WHERE kind = ? AND digest = ?", (kind, doc_digest)):
            self._append("documents", [(kind, doc_digest, canonical_json(body).decode(), utcnow())])
        return doc_digest

    def put_grades(self, spec_digest: str, rows: Iterable[tuple[str, Any]]) -> int:
        """Write the grades not stored yet as one new Parquet file of the dataset's ``grades/``;
        return how many were new."""
        from ..record import canonical_json
        from ._ingest import utcnow

        rows = [(h, b if isinstance(b, str) else b.decode() if isinstance(b, bytes) else canonical_json(b).decode())
                for h, b in rows]
        known = self.grade_bodies(spec_digest, [h for h, _ in rows]) if rows else {}
        fresh = dict((h, b) for h, b in rows if h not in known)
        if fresh:
            now = utcnow()
            self._append("grades", [(spec_digest, h, b, now) for h, b in fresh.items()])
        return len(fresh)

    def spend(self, *, version: str | Sequence[str] | None = None) -> dict[str, dict[str, tuple[int, float]]]:
        """:meth:`fluke.ledger.Ledger.spend`, from the ``latency`` and ``cost`` columns."""
        where, params = self._where(version=version)
        names = dict(self.query("SELECT vid, version FROM versions"))
        out: dict[str, dict[str, tuple[int, float]]] = {}
        for vid, count, total in self.query(f"SELECT vid, COUNT(latency), SUM(latency) FROM runs{where} "
                                            "GROUP BY vid", params):
            if int(count):
                out.setdefault(names[vid], {})["latency"] = (int(count), float(total))
        for vid, key, count, total in self.query(
                f"SELECT vid, e.key, COUNT(*), SUM(e.value) FROM (SELECT vid, unnest(map_entries(cost)) AS e "
                f"FROM runs{where}) c GROUP BY vid, e.key", params):
            out.setdefault(names[vid], {})[f"cost.{key}"] = (int(count), float(total))
        return out


def materialise(dataset: str | Path, database: str | Path) -> int:
    """Copy a fluke Parquet dataset into a new DuckDB database file (for ``--ledger duckdb:FILE``);
    return the number of runs.

    >>> import tempfile, os
    >>> from fluke.ledger import open_ledger
    >>> from fluke.lake import write_dataset
    >>> from fluke.record import Run
    >>> folder = tempfile.mkdtemp()
    >>> with open_ledger(os.path.join(folder, "x.db")) as ledger:
    ...     _ = ledger.ingest([Run(scenario="s", trial=t) for t in range(4)])
    ...     _ = write_dataset(ledger, os.path.join(folder, "lake"))
    >>> materialise(os.path.join(folder, "lake"), os.path.join(folder, "lake.duckdb"))
    4
    >>> open_ledger("duckdb:" + os.path.join(folder, "lake.duckdb")).count()
    4
    """
    duckdb = require("duckdb", package="duckdb", extra="lake", purpose="A DuckDB ledger")
    from ..errors import UsageError

    target = Path(database)
    if target.exists():
        raise UsageError(f"{database}: already exists; materialise into a new file")
    source = LakeLedger(f"parquet:{dataset}")
    part = target.with_name(target.name + ".part")
    part.unlink(missing_ok=True)
    try:
        with source.faults():
            source._conn.execute(f"ATTACH {_literal(part)} AS out")
            for name in ("runs", "versions", "ingests", "documents", "grades"):
                source._conn.execute(f"CREATE TABLE out.{name} AS SELECT * FROM {name}")
            runs = int(source._conn.execute("SELECT COUNT(*) FROM out.runs").fetchall()[0][0])
            source._conn.execute("DETACH out")
        part.rename(target)
    finally:
        source.close()
        part.unlink(missing_ok=True)
        Path(str(part) + ".wal").unlink(missing_ok=True)
    del duckdb
    return runs
