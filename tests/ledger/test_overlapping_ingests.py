"""Eight ingests of overlapping inputs, each in its own order, into one PostgreSQL ledger at once:
no deadlock, no error, and every run stored exactly once with its counts (issue 28)."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest

from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

WRITERS, ROUNDS = 8, 25


def _pool(rnd: int) -> list[Run]:
    models = [Identity(model=f"m{v}") for v in range(4)]
    return [Run(scenario=f"s{s}", identity=m, trial=rnd * 10 + t, outcome=Outcome(passed=(s + t) % 3 != 0))
            for m in models for s in range(40) for t in range(2)]


@pytest.mark.postgres
@pytest.mark.slow
def test_eight_overlapping_ingests_in_different_orders_25_rounds(postgres_url):
    rng = random.Random(28)
    stored: dict[str, Run] = {}
    with open_ledger(postgres_url) as ledger:
        ledger.ingest(_pool(0)[::7])            # some runs and every version already stored
        stored.update((r.hash, r) for r in _pool(0)[::7])
    failures = []
    for rnd in range(1, ROUNDS + 1):
        pool = _pool(rnd) + _pool(0)[::5]      # new runs, and runs stored before
        inputs = [rng.sample(pool, k=len(pool) * 2 // 3) for _ in range(WRITERS)]
        barrier = threading.Barrier(WRITERS, timeout=120)
        errors: list[BaseException] = []

        def ingest(runs: list[Run]) -> None:
            def stream():
                yield from runs
                barrier.wait()                 # every writer reaches its writing at once
            try:
                with open_ledger(postgres_url) as ledger:
                    ledger.ingest(stream())
            except BaseException as exc:      # noqa: BLE001 - counted below
                errors.append(exc)

        threads = [threading.Thread(target=ingest, args=(runs,)) for runs in inputs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            failures.append((rnd, [str(e)[:200] for e in errors]))
        for runs in inputs:
            stored.update((r.hash, r) for r in runs)
    assert failures == []
    with open_ledger(postgres_url) as ledger:
        assert ledger.count() == len(stored)
        assert sorted(r.hash for r in ledger.runs()) == sorted(stored)      # each run once
        want = Counter((r.version, r.scenario) for r in stored.values())
        passes = Counter((r.version, r.scenario) for r in stored.values() if r.outcome.passed)
        got = {(c.version, c.scenario): (c.trials, c.passes) for c in ledger.counts()}
        assert got == {k: (n, passes[k]) for k, n in want.items()}


@pytest.mark.postgres
def test_a_deadlock_the_server_breaks_is_retried_inside_the_ingest(postgres_url, monkeypatch):
    """Another writer (not an ingest, so not taking turns) holds a counts row the ingest needs,
    then wants a run the ingest has just written: PostgreSQL breaks the deadlock by failing the
    ingest's transaction, which the ingest writes again from what it holds, without a word."""
    import time

    import psycopg

    from fluke.ledger._postgres import PostgresLedger
    from fluke.ledger._rows import hash_key, version_id

    seen: list[str] = []
    transient = PostgresLedger._transient
    monkeypatch.setattr(PostgresLedger, "_transient",
                        lambda self, exc: seen.append(type(exc).__name__) or transient(self, exc))
    first = Run(scenario="s0", identity=Identity(model="m"), trial=0, outcome=Outcome(passed=True))
    later = [Run(scenario="s0", identity=Identity(model="m"), trial=t, outcome=Outcome(passed=t % 2 == 0))
             for t in range(1, 4)]
    with open_ledger(postgres_url) as ledger:
        ledger.ingest([first])
    other = psycopg.connect(postgres_url, autocommit=False)
    other.execute("SELECT 1 FROM counts WHERE vid = %s AND scenario = 's0' FOR UPDATE",
                  (version_id(first.version),))
    errors: list[BaseException] = []

    def ingest() -> None:
        try:
            with open_ledger(postgres_url) as ledger:
                ledger.ingest(later)
        except BaseException as exc:   # noqa: BLE001 - asserted below
            errors.append(exc)

    thread = threading.Thread(target=ingest)
    thread.start()
    time.sleep(0.5)                    # the ingest has written its runs and waits for the counts row
    other.execute("INSERT INTO runs (k, vid, ingest, scenario, source, body) SELECT %s, vid, ingest, scenario, "
                  "source, body FROM runs LIMIT 1", (hash_key(later[0].hash),))   # waits for the ingest: a cycle
    other.rollback()
    other.close()
    thread.join(timeout=120)
    assert errors == [] and "DeadlockDetected" in seen
    with open_ledger(postgres_url) as ledger:
        assert ledger.count() == 4
        assert [(c.trials, c.passes) for c in ledger.counts()] == [(4, 2)]   # trials 0 and 2 passed
