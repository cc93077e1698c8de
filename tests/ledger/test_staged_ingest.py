"""A SQLite ingest too large for one transaction commits its batches while pending, and is
still all or nothing: a bad record late in the file, or a kill -9 part-way, leaves the
ledger exactly as it was (every table, byte for byte), and the write-ahead log stays about
a batch long.

The batch sizes are made small here (``BATCH``, ``HOLD_RUNS``) so that a file of a few
thousand runs spans dozens of committed batches.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import orjson
import pytest

from fluke.adapters import read_file
from fluke.errors import InputError
from fluke.ledger import _ingest, open_ledger

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from verbs import _run  # noqa: E402  (20-event runs, the shape fluke export writes)


def _snapshot(path: Path) -> dict[str, list]:
    """Every row of every table, read past the ledger's own filters."""
    conn = sqlite3.connect(path)
    try:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        return {name: conn.execute(f"SELECT * FROM {name} ORDER BY 1, 2").fetchall()
                for name in tables if name != "migrations"}
    finally:
        conn.close()


def _write(path: Path, start: int, n: int, *, bad_at: int | None = None) -> Path:
    with open(path, "wb") as out:
        for i in range(start, start + n):
            record = _run(i)
            if i - start == bad_at:
                record["outcome"]["passed"] = "perhaps"
            out.write(orjson.dumps(record) + b"\n")
    return path


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(_ingest, "BATCH", 50)
    monkeypatch.setattr("fluke.ledger.Ledger.HOLD_RUNS", 100)


def test_a_bad_record_many_batches_in_leaves_every_table_as_it_was(tmp_path, small_batches):
    db = tmp_path / "l.db"
    with open_ledger(str(db)) as ledger:
        ledger.ingest(read_file(_write(tmp_path / "first.jsonl", 0, 120), prepared=True))
    before = _snapshot(db)
    seen_raw, seen_by_reader = [], []
    raw = sqlite3.connect(db)
    reader = open_ledger(str(db))

    def progress(n):
        seen_raw.append(raw.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
        seen_by_reader.append(reader.count(since="0"))

    with open_ledger(str(db)) as ledger:
        with pytest.raises(InputError, match=r"line 1901: field outcome.passed"):
            ledger.ingest(read_file(_write(tmp_path / "big.jsonl", 1000, 2000, bad_at=1900), prepared=True),
                          progress=progress)
    # Dozens of batches were committed (another connection saw them) but no reader saw one.
    assert max(seen_raw) >= 120 + 1800 and set(seen_by_reader) == {120}
    assert _snapshot(db) == before
    raw.close()
    reader.close()


def test_a_staged_ingest_commits_a_few_batches_at_a_time(tmp_path, small_batches):
    """Batches of 50 runs, committed _ingest.COMMIT_BATCHES at a time: another connection sees
    the runs grow by that many batches (and by the rest at the end), and the file is kept whole."""
    db = tmp_path / "l.db"
    with open_ledger(str(db)) as ledger:
        ledger.ingest(read_file(_write(tmp_path / "first.jsonl", 0, 120), prepared=True))
    raw = sqlite3.connect(db)
    seen = []
    step = 50 * _ingest.COMMIT_BATCHES
    with open_ledger(str(db)) as ledger:
        result = ledger.ingest(read_file(_write(tmp_path / "big.jsonl", 1000, 2030), prepared=True),
                               progress=lambda n: seen.append(raw.execute("SELECT COUNT(*) FROM runs").fetchone()[0]))
        assert result.added == 2030 and ledger.count() == 2150
    raw.close()
    committed = sorted(set(seen) - {120})
    assert committed and all((n - 120) % step == 0 for n in committed), (step, committed)
    assert len(committed) >= 2030 // step - 1   # the transactions came one by one, not at the end


def _child(db: Path, jsonl: Path, *, delay: float) -> subprocess.Popen:
    """``fluke ingest`` in its own process, batches small and each write slowed by ``delay``."""
    code = textwrap.dedent(f"""
        import sys, time
        from fluke.ledger import Ledger, _ingest, _writer
        _ingest.BATCH = 50
        Ledger.HOLD_RUNS = 100
        put = _writer.SqliteRunWriter.put_runs
        def slow(self, *a):
            time.sleep({delay})
            return put(self, *a)
        _writer.SqliteRunWriter.put_runs = slow
        from fluke.cli import main
        sys.exit(main(["--ledger", {str(db)!r}, "ingest", {str(jsonl)!r}]))
    """)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_bad_record_late_in_a_file_through_the_command_writes_nothing(tmp_path):
    db = tmp_path / "l.db"
    with open_ledger(str(db)) as ledger:
        ledger.ingest(read_file(_write(tmp_path / "first.jsonl", 0, 30)))
    before = _snapshot(db)
    proc = _child(db, _write(tmp_path / "big.jsonl", 500, 1500, bad_at=1400), delay=0)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err
    assert b"line 1401: field outcome.passed" in err and b"Traceback" not in err
    assert _snapshot(db) == before


def test_kill_9_mid_ingest_leaves_a_ledger_that_opens_answers_and_holds_none_of_it(tmp_path):
    db = tmp_path / "l.db"
    with open_ledger(str(db)) as ledger:
        ledger.ingest(read_file(_write(tmp_path / "first.jsonl", 0, 40)))
        counts = ledger.counts()
    before = _snapshot(db)
    proc = _child(db, _write(tmp_path / "big.jsonl", 500, 3000), delay=0.05)
    raw = sqlite3.connect(db, timeout=30)
    try:
        deadline = time.monotonic() + 240
        while raw.execute("SELECT COUNT(*) FROM runs").fetchone()[0] < 40 + 500:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else ""
            time.sleep(0.05)
        assert raw.execute("SELECT COUNT(*) FROM pending").fetchone()[0] == 1
    finally:
        raw.close()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with open_ledger(str(db)) as ledger:   # opens (removing what the killed ingest left) and answers
        assert ledger.count() == 40 and ledger.counts() == counts
        assert len(list(ledger.runs())) == 40 and ledger.count(since="0") == 40
    assert _snapshot(db) == before
    with open_ledger(str(db)) as ledger:   # and takes the same file whole afterwards
        assert ledger.ingest(read_file(tmp_path / "big.jsonl", prepared=True)).added == 3000


def test_the_write_ahead_log_stays_about_a_batch_long(tmp_path, monkeypatch):
    from fluke.ledger import _checkpoint

    monkeypatch.setattr(_ingest, "BATCH_BYTES", 2 ** 20)
    monkeypatch.setattr(_ingest, "COMMIT_BATCHES", 1)   # a transaction per batch of 1 MiB
    monkeypatch.setattr("fluke.ledger.Ledger.HOLD_BYTES", 2 ** 20)
    db = tmp_path / "l.db"
    jsonl = _write(tmp_path / "big.jsonl", 0, 6000)
    peak, stop = [0], threading.Event()

    def watch():
        while not stop.is_set():
            try:
                peak[0] = max(peak[0], os.path.getsize(f"{db}-wal"))
            except OSError:
                pass
            time.sleep(0.002)

    with open_ledger(str(db)) as ledger:
        thread = threading.Thread(target=watch)
        thread.start()
        try:
            assert ledger.ingest(read_file(jsonl, prepared=True)).added == 6000
        finally:
            stop.set()
            thread.join()
        stored = sum(len(body) for (body,) in ledger.query("SELECT body FROM runs"))
        (page,), = ledger.query("PRAGMA page_size")
    # One transaction would put every stored byte through the log (> 25 MB here). In transactions
    # of 1 MiB of bodies the log holds Checkpointer.BATCHES (3) of them at most before the ingest
    # waits for the checkpoints: each writes its ~16 body pages and every index leaf its random keys
    # touch, about 33 frames of 64 KiB, so ~100 frames (6.6 MB) when the checkpoints lag behind
    # (a loaded machine) and fewer when they keep up (5.4 MB on an idle one).
    bound = (_checkpoint.Checkpointer.BATCHES + 1) * 40 * (24 + page)   # commits of <= 40 frames (header + page)
    assert stored > 20e6 and 0 < peak[0] <= bound < stored / 2, (peak[0], bound, stored)


def test_the_log_is_checkpointed_by_a_thread_beside_the_ingest(tmp_path, monkeypatch):
    from fluke.ledger import _checkpoint

    monkeypatch.setattr(_ingest, "BATCH_BYTES", 2 ** 20)
    monkeypatch.setattr(_ingest, "COMMIT_BATCHES", 1)
    monkeypatch.setattr("fluke.ledger.Ledger.HOLD_BYTES", 2 ** 20)
    passes, real = [], _checkpoint.Checkpointer._checkpoint

    def counted(self):
        got = real(self)
        passes.append((threading.current_thread().name, got))
        return got

    monkeypatch.setattr(_checkpoint.Checkpointer, "_checkpoint", counted)
    db = tmp_path / "l.db"
    with open_ledger(str(db)) as ledger:
        assert ledger.ingest(read_file(_write(tmp_path / "big.jsonl", 0, 3000), prepared=True)).added == 3000
        # the ingest's own connection checkpoints as before once it is done
        assert ledger.query("PRAGMA wal_autocheckpoint")[0][0] == 1000
    # 3000 runs of ~4 KB in batches of 1 MiB: about a dozen commits, each copied by the thread
    assert len(passes) >= 12 / _checkpoint.Checkpointer.BATCHES
    assert {name for name, _ in passes} == {"fluke-checkpoint"}
    assert any(frames > 0 and frames == copied for _, (busy, frames, copied) in passes)


def test_a_checkpoint_that_fails_fails_the_ingest_and_leaves_the_ledger_as_it_was(tmp_path, monkeypatch):
    from fluke.errors import LedgerError
    from fluke.ledger import _checkpoint

    monkeypatch.setattr(_ingest, "BATCH_BYTES", 2 ** 20)
    monkeypatch.setattr("fluke.ledger.Ledger.HOLD_BYTES", 2 ** 20)
    db = tmp_path / "l.db"
    with open_ledger(str(db)) as ledger:
        ledger.ingest(read_file(_write(tmp_path / "first.jsonl", 0, 30), prepared=True))
    before = _snapshot(db)

    def full(self):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(_checkpoint.Checkpointer, "_checkpoint", full)
    with open_ledger(str(db)) as ledger:
        with pytest.raises(LedgerError, match="full") as info:
            ledger.ingest(read_file(_write(tmp_path / "big.jsonl", 100, 3000), prepared=True))
        assert "\n" not in str(info.value)
    assert _snapshot(db) == before
