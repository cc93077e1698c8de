"""Several processes writing one SQLite ledger at once (what pytest-xdist workers do): WAL mode,
a busy timeout, and migrations that a second opener does not apply twice."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3

from fluke.ledger import open_ledger
from fluke.ledger._sqlite import SqliteLedger
from fluke.ledger._migrations import MIGRATIONS

from . import MIGRATIONS as EXPECTED


def _writer(path: str, worker: int, barrier, done) -> None:
    from fluke.record import Identity, Outcome, Run

    runs = [Run(scenario=f"w{worker}", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t % 3 > 0))
            for t in range(25)]
    barrier.wait()  # every worker opens the new file at the same moment
    try:
        with open_ledger(path) as led:
            for run in runs:  # one transaction per run, as the runner writes them
                led.ingest([run])
        done.put("ok")
    except Exception as exc:  # reported to the test, not lost in the child
        done.put(repr(exc))


def test_four_processes_writing_one_new_ledger_lose_and_double_nothing(tmp_path):
    path = str(tmp_path / "shared.db")
    ctx = mp.get_context("spawn")
    barrier, done = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(path, w, barrier, done)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [done.get(timeout=5) for _ in procs] == ["ok"] * 4
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        rows = conn.execute("SELECT scenario, COUNT(*) FROM runs GROUP BY scenario ORDER BY scenario").fetchall()
        applied = conn.execute("SELECT COUNT(*) FROM migrations").fetchone()[0]
    assert rows == [(f"w{w}", 25) for w in range(4)]
    assert applied == len(open_ledger(path).migrations()) == len(MIGRATIONS)


def test_a_writer_waits_for_another_writer_rather_than_failing(tmp_path):
    import threading
    import time

    from fluke.record import Identity, Outcome, Run

    path = str(tmp_path / "busy.db")
    open_ledger(path).close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another worker mid-write, for a second
    release = threading.Timer(1.0, lambda: holder.execute("COMMIT"))
    release.start()
    began = time.perf_counter()
    with open_ledger(path) as led:
        assert led.ingest([Run(scenario="s", trial=0, identity=Identity(model="m"),
                               outcome=Outcome(passed=True))]).added == 1
    assert time.perf_counter() - began >= 0.9  # it waited for the lock, then wrote
    release.join()
    holder.close()


def test_a_migration_applied_by_another_process_meanwhile_is_not_applied_again(tmp_path, monkeypatch):
    """The race: this opener read the applied migrations before another process applied them."""
    path = str(tmp_path / "race.db")
    open_ledger(path).close()  # "the other process" has migrated the file
    real = SqliteLedger.query
    stale = {"done": False}

    def query(self, sql, params=()):
        if sql == "SELECT name FROM migrations" and not stale["done"]:
            stale["done"] = True
            return []  # what it read before the other process committed
        return real(self, sql, params)

    monkeypatch.setattr(SqliteLedger, "query", query)
    led = open_ledger(path)  # without the re-check under the write lock: "table versions already exists"
    assert stale["done"] and led.migrations() == EXPECTED
    led.close()
