"""Reading the ledger: runs stream as they are read, a missing ledger is not created, an
empty one says so. SQLite files and a real PostgreSQL server."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from fluke.errors import EmptyLedgerError, LedgerError
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run, Source, ToolCall, UserMessage

from . import MIGRATIONS


def _run(i: int, *, events: int = 3, pad: str = "") -> Run:
    evs = [UserMessage(text=f"refund order W{i:07d}")]
    evs += [ToolCall(tool="lookup", args={"order_id": f"W{i:07d}", "step": j}, ok=True,
                     result={"status": "ok", "n": j, "pad": pad}) for j in range(events)]
    return Run(scenario=f"s{i % 37}", trial=i // 37, identity=Identity(model=f"m{i % 3}"), events=evs,
               condition={"lang": "fr" if i % 2 else "de"}, outcome=Outcome(passed=i % 3 != 0))


def test_runs_come_in_order_and_survive_writes_between_them(ledger):
    ledger.ingest([_run(i) for i in range(700)])          # more than one fetch batch
    ledger.ingest([_run(i) for i in range(700, 760)])     # a second ingest comes after the first
    first_ingest = sorted((_run(i) for i in range(700)), key=lambda r: (r.scenario, r.trial))
    second = sorted((_run(i) for i in range(700, 760)), key=lambda r: (r.scenario, r.trial))
    expected = [r.hash for r in first_ingest + second]
    got = []
    for n, run in enumerate(ledger.runs()):
        got.append(run.hash)
        if n in (0, 300, 600):   # a committed write while the read is open must not end it
            ledger.put_document("note", {"at": n})
    assert got == expected
    assert [r.hash for r in ledger.runs(condition="lang=fr", limit=5)] == \
        [r.hash for r in first_ingest if r.condition["lang"] == "fr"][:5]
    assert sum(1 for _ in ledger.run_bodies(scenario="s1")) == ledger.count(scenario="s1") == 21


def test_run_bodies_are_the_hashed_bytes(ledger):
    import hashlib
    import json

    runs = [_run(i) for i in range(40)]
    runs[3] = runs[3].model_copy(update={"source": Source(adapter="fluke-jsonl", file="a.jsonl", position=4)})
    ledger.ingest(runs)
    bodies = list(ledger.run_bodies())
    assert {hashlib.sha256(b.encode()).hexdigest() for b, _ in bodies} == {r.hash for r in runs}
    sources = [json.loads(s) for _, s in bodies if s is not None]
    assert sources == [{"adapter": "fluke-jsonl", "file": "a.jsonl", "position": 4}]


@pytest.mark.postgres
def test_postgres_reads_through_a_server_side_cursor(postgres_url):
    with open_ledger(postgres_url) as ledger:
        ledger.ingest([_run(i) for i in range(50)])
        stream = ledger.runs()
        next(stream)
        cursors = [name for (name,) in ledger.query("SELECT name FROM pg_cursors")]
        assert any(name.startswith("fluke_stream_") for name in cursors)
        assert sum(1 for _ in stream) == 49
        assert not [n for (n,) in ledger.query("SELECT name FROM pg_cursors") if n.startswith("fluke_stream_")]


#: The child's own peak RSS. Not ``resource.getrusage(...).ru_maxrss``: Linux carries the
#: parent's high-water mark into a child across fork and exec (this test's process holds
#: the runs it just wrote), so the child would report the parent's peak. ``VmHWM`` is the
#: peak of the child's own address space, which exec starts afresh.
_PEAK = textwrap.dedent("""
    import sys
    from fluke.ledger import open_ledger
    ledger = open_ledger(sys.argv[1], create=False)
    n = sum(len(run.events) for run in ledger.runs())
    with open("/proc/self/status") as status:
        kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    print(n, kib)
""")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the peak RSS from /proc (Linux)")
def test_peak_memory_of_reading_runs_does_not_grow_with_the_ledger(tmp_path):
    """5,000 and 50,000 runs of 11 events (about 3.5 KB each, 175 MB of bodies in the larger):
    iterating every run holds a batch, not the ledger. Before streaming, the larger read
    peaked at about 700 MB against 100 MB (bodies fetched first, then sorted in SQLite's
    page cache)."""
    pad = "x" * 150
    peaks = {}
    for n in (5_000, 50_000):
        path = str(tmp_path / f"l{n}.db")
        with open_ledger(path) as ledger:
            ledger.ingest(_run(i, events=10, pad=pad) for i in range(n))
            size = sum(len(b) for b, _ in ledger.run_bodies())
        out = subprocess.run([sys.executable, "-c", _PEAK, path], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": "0"}).stdout.split()
        assert int(out[0]) == n * 11
        peaks[n] = int(out[1]) * 1024
    assert size > 150e6
    growth = peaks[50_000] - peaks[5_000]
    assert growth < 40e6, f"peak RSS grew by {growth / 1e6:.0f} MB from 5k to 50k runs ({size / 1e6:.0f} MB of bodies)"


# -- opening -------------------------------------------------------------------------
def test_a_read_of_a_missing_ledger_file_says_so_and_creates_nothing(tmp_path):
    path = tmp_path / "nothing.db"
    with pytest.raises(LedgerError) as caught:
        open_ledger(str(path), create=False)
    assert str(caught.value) == f"no ledger at {path} (create one with: fluke ingest FILE)"
    assert not path.exists() and not list(tmp_path.iterdir())
    empty_file = tmp_path / "empty.db"
    empty_file.write_bytes(b"")
    with pytest.raises(LedgerError, match="no ledger at"):
        open_ledger(str(empty_file), create=False)
    assert empty_file.read_bytes() == b""
    with open_ledger(str(path)) as made:                     # the default still creates
        assert made.empty()
        applied = made.migrations()
    with open_ledger(str(path), create=False) as opened:     # and then it opens for reading
        assert opened.migrations() == applied == MIGRATIONS


@pytest.mark.postgres
def test_a_read_of_a_database_without_a_ledger_says_so_and_creates_no_tables(postgres_url):
    with pytest.raises(LedgerError) as caught:
        open_ledger(postgres_url, create=False)
    assert "no fluke ledger at postgresql://" in str(caught.value)
    assert "(create one with: fluke ingest FILE)" in str(caught.value)
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").fetchone()[0] == 0


def test_a_missing_ledger_url_never_prints_its_password():
    with pytest.raises(LedgerError) as caught:
        open_ledger("postgresql://fluke:Sup3rSecret@127.0.0.1:1/none?connect_timeout=1", create=False)
    assert "Sup3rSecret" not in str(caught.value)


def test_an_empty_ledger_answers_in_one_way(ledger):
    assert ledger.empty()
    with pytest.raises(EmptyLedgerError) as caught:
        ledger.require_runs()
    assert str(caught.value) == "the ledger has no runs; add some with: fluke ingest FILE"
    assert isinstance(caught.value, LedgerError)
    ledger.ingest([_run(0)])
    assert not ledger.empty()
    ledger.require_runs()
