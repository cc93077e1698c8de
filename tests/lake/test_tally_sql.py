"""The aggregate SQL the lake answers the count verbs with (:data:`fluke.ledger._duckdb.TALLY_VIEWS`)
is portable: run as it is on SQLite and on a real PostgreSQL server, over a table of the lake's
run columns loaded from an exported dataset, it gives the ``counts``, ``steps`` and ``unit_cells``
the SQLite ledger kept at ingest.
"""

from __future__ import annotations

import math

import pytest

from fluke.ledger import open_ledger
from fluke.ledger._duckdb import TALLY_VIEWS

from .test_lake import generated

pyarrow = pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

COLUMNS = ("vid", "scenario", "condition", "trial", "unit", "passed", "reward", "cause", "step", "event")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    import pyarrow.parquet as pq

    from fluke.lake import Dataset, write_dataset

    folder = tmp_path_factory.mktemp("sql")
    db = str(folder / "fluke.db")
    with open_ledger(db) as ledger:
        runs = generated(900, seed=5)
        ledger.ingest(runs[:600])
        ledger.ingest(runs[400:])
        write_dataset(ledger, folder / "lake")
        want = {"counts": sorted((r.version[:15], r.scenario, r.condition, r.trials, r.passes, r.unknowns)
                                 for r in ledger.counts()),
                "steps": sorted((r.version[:15], r.scenario, r.condition, r.cause, r.step, r.event, r.runs)
                                for r in ledger.steps()),
                "unit_cells": sorted((c.version[:15], c.unit, c.scenario, c.condition, c.trials, c.passes,
                                      c.unknowns, c.rewarded, c.reward_sum, c.reward_squares)
                                     for c in ledger.unit_cells())}
    rows = []
    for path in Dataset(folder / "lake").run_files():
        table = pq.read_table(path, columns=list(COLUMNS))
        rows.extend(zip(*(table.column(c).to_pylist() for c in COLUMNS), strict=True))
    return rows, want


def _check(got: dict[str, list[tuple]], want: dict[str, list[tuple]]) -> None:
    for name, rows in want.items():
        mine = sorted((f"{int(r[0]):015x}", *r[1:]) for r in got[name])
        assert len(mine) == len(rows) and rows, name
        for a, b in zip(mine, rows, strict=True):
            assert a[:8 if name == "unit_cells" else None] == b[:8 if name == "unit_cells" else None], name
            if name == "unit_cells":
                assert all(math.isclose(float(x), y, rel_tol=1e-9, abs_tol=1e-12) for x, y in zip(a[8:], b[8:],
                                                                                                  strict=True))


def test_the_tally_sql_runs_on_sqlite(exported):
    import sqlite3

    rows, want = exported
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE TABLE runs ({', '.join(COLUMNS)})")
    conn.executemany(f"INSERT INTO runs VALUES ({', '.join('?' * len(COLUMNS))})", rows)
    _check({name: conn.execute(sql).fetchall() for name, sql in TALLY_VIEWS.items()}, want)


@pytest.mark.postgres
def test_the_tally_sql_runs_on_a_postgresql_server(exported, postgres_url):
    psycopg = pytest.importorskip("psycopg")
    rows, want = exported
    with psycopg.connect(postgres_url) as conn:
        conn.execute("CREATE TABLE runs (vid BIGINT, scenario TEXT, condition TEXT, trial BIGINT, unit TEXT, "
                      "passed BOOLEAN, reward DOUBLE PRECISION, cause TEXT, step BIGINT, event TEXT)")
        with conn.cursor().copy(f"COPY runs ({', '.join(COLUMNS)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        _check({name: conn.execute(sql).fetchall() for name, sql in TALLY_VIEWS.items()}, want)
