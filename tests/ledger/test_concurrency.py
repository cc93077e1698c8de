"""Concurrent ingests into one PostgreSQL ledger (``repro_defects.sh pg-deadlock``), and memory
that follows bytes, not runs (``big-runs-memory``): real processes, a real server."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from fluke.adapters import read_file
from fluke.ledger import open_ledger

from .._repro import DRILLS
from ..conftest import need

GEN = DRILLS / "gen_jsonl.py"
FLUKE = [sys.executable, "-c", "import sys; from fluke.cli import main; sys.exit(main())"]


def _gen(path, n, *args):
    subprocess.run([sys.executable, str(need(GEN)), str(path), str(n), *map(str, args)], check=True)
    return path


@pytest.mark.postgres
@pytest.mark.slow
def test_eight_concurrent_ingests_into_stored_versions_never_deadlock(postgres_url, tmp_path):
    """Every ingest upserts the counts of the same 200 (version, scenario) rows, met in a
    different order in each file: written in one key order, they wait, never deadlock."""
    seed = _gen(tmp_path / "seed.jsonl", 200, "--scenarios", 50)
    subprocess.run([*FLUKE, "--ledger", postgres_url, "ingest", str(seed)], check=True, capture_output=True)
    files = [seed]
    for rnd in (1, 2):
        batch = [_gen(tmp_path / f"w{rnd}-{p}.jsonl", 1500, "--offset", rnd * 1_000_000 + p * 5000,
                      "--shuffle", rnd * 10 + p, "--scenarios", 50) for p in range(8)]
        procs = [subprocess.Popen([*FLUKE, "--ledger", postgres_url, "ingest", str(f)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for f in batch]
        errors = [p.communicate()[1] for p in procs]
        assert [p.returncode for p in procs] == [0] * 8, [e for e in errors if e]
        files += batch
    expected = Counter()
    passes = Counter()
    for f in files:
        for run in read_file(f):
            expected[(run.version, run.scenario)] += 1
            passes[(run.version, run.scenario)] += bool(run.outcome.passed)
    with open_ledger(postgres_url) as ledger:
        counts = {(c.version, c.scenario): (c.trials, c.passes) for c in ledger.counts()}
        assert counts == {k: (n, passes[k]) for k, n in expected.items()}
        assert ledger.count() == 200 + 2 * 8 * 1500


@pytest.mark.postgres
def test_two_ingests_writing_the_same_counts_at_once_wait_instead_of_deadlocking(postgres_url):
    """The deterministic core of the drill: two ingests reach their writing at the same moment
    (a barrier at the end of each input) with the same 200 counts rows met in opposite
    orders. Upserted in that order, each held half the rows the other wanted (PostgreSQL's
    DeadlockDetected); in key order, the second waits for the first."""
    from fluke.record import Identity, Outcome, Run

    models = [Identity(model=f"m{v}") for v in range(4)]
    grid = [(m, f"s{s}") for m in models for s in range(50)]
    with open_ledger(postgres_url) as ledger:
        ledger.ingest([Run(scenario=s, identity=m) for m, s in grid])   # every version stored
    for attempt in range(4):
        barrier = threading.Barrier(2, timeout=60)
        errors: list[BaseException] = []

        def ingest(order, offset):
            def runs():
                for i, (m, s) in enumerate(order):
                    yield Run(scenario=s, identity=m, trial=offset + i, outcome=Outcome(passed=i % 2 == 0))
                barrier.wait()
            try:
                with open_ledger(postgres_url) as ledger:
                    ledger.ingest(runs())
            except BaseException as exc:   # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=ingest, args=(grid, 1000 * (attempt + 1))),
                   threading.Thread(target=ingest, args=(grid[::-1], 1000 * (attempt + 1) + 500))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [], errors
    with open_ledger(postgres_url) as ledger:
        # per cell: the stored run, then per attempt one run from each ingest, exactly one passing
        assert len(ledger.counts()) == 200
        assert {(c.trials, c.passes) for c in ledger.counts()} == {(1 + 2 * 4, 4)}


_PEAK = """
import sys
from fluke.adapters import read_file
from fluke.ledger import open_ledger
url, path = sys.argv[1], sys.argv[2]
ledger = open_ledger(url)
if not url.startswith("postgresql"):
    ledger.execute("PRAGMA cache_size=-16384")   # SQLite's own page cache held to 16 MiB
result = ledger.ingest(read_file(path))
ledger.close()
# VmHWM: this process's own peak (ru_maxrss would carry the parent's, inherited through fork)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(result.added, peak // 1024)
"""


def _peak_mb(url, path) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", _PEAK, url, str(path)], check=True, capture_output=True, text=True)
    added, peak = out.stdout.split()
    return int(added), int(peak)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak from /proc (Linux)")
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_peak_memory_of_an_ingest_does_not_grow_with_the_stream(backend, tmp_path, request):
    """Runs of about 40 KB (τ²-bench sized): a stream four times longer (240 MB against 60 MB)
    peaks at the same memory, within 40 MB. Before batches were bounded by bytes, the first
    20,000 runs were all held, so the longer stream peaked some 180 MB higher."""
    small = _gen(tmp_path / "small.jsonl", 1500, "--events", 4, "--pad", 19500)
    large = _gen(tmp_path / "large.jsonl", 6000, "--events", 4, "--pad", 19500, "--offset", 100_000)
    assert 38_000 < large.stat().st_size / 6000 < 42_000
    peaks = {}
    for name, path, n in (("small", small, 1500), ("large", large, 6000)):
        url = request.getfixturevalue("postgres_url") if backend == "postgres" else str(tmp_path / f"{name}.db")
        added, peaks[name] = _peak_mb(url, path)
        assert added == n
    assert peaks["large"] - peaks["small"] < 40, peaks
    assert peaks["large"] < 600, peaks
