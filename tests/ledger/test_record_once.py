"""One run per version × scenario × condition × trial when writers race (issue 27, point 1).

Three processes record the same 30 trials at once, each run with its own latency and answer
(so the content hashes differ): :meth:`Ledger.record_once` keeps exactly one run per trial, the
first recorded, on SQLite (a real file) and on PostgreSQL (a real server). The other writers are
told which run was kept. A ledger holding duplicates from before stays readable as it is.
"""

from __future__ import annotations

import multiprocessing as mp

import pytest

from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

TRIALS = 30


def _run(worker: int, trial: int, condition: dict | None = None) -> Run:
    return Run(scenario="refund", trial=trial, condition=condition or {}, identity=Identity(model="m"),
               latency=worker + trial / 100, error=f"worker {worker}",
               outcome=Outcome(passed=(worker + trial) % 2 == 0))


def _writer(url: str, worker: int, barrier, done) -> None:
    try:
        kept_elsewhere = 0
        with open_ledger(url) as led:
            barrier.wait()
            for trial in range(TRIALS):
                first = led.record_once(_run(worker, trial))
                if first is not None:
                    assert first.trial == trial and first.error != f"worker {worker}"
                    kept_elsewhere += 1
        done.put(kept_elsewhere)
    except Exception as exc:   # reported to the test, not lost in the child
        done.put(repr(exc))


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_racing_writers_keep_one_run_per_trial(request, tmp_path, backend):
    url = str(tmp_path / "race.db") if backend == "sqlite" else request.getfixturevalue("postgres_url")
    open_ledger(url).close()   # migrated once before the race
    ctx = mp.get_context("spawn")
    barrier, done = ctx.Barrier(3), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(url, w, barrier, done)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    told = [done.get(timeout=10) for _ in procs]
    assert all(isinstance(t, int) for t in told), told
    assert sum(told) == 2 * TRIALS          # every trial recorded once; the other two writers were told
    with open_ledger(url) as led:
        runs = list(led.runs())
        assert sorted(r.trial for r in runs) == list(range(TRIALS))
        assert led.count() == TRIALS and sum(c.trials for c in led.counts()) == TRIALS   # the tallies agree


def test_a_trial_under_another_condition_is_another_run_and_timing_alone_is_not(tmp_path):
    with open_ledger(str(tmp_path / "c.db")) as led:
        assert led.record_once(_run(0, 0)) is None
        kept = led.record_once(_run(1, 0))                  # the same trial again, other latency and answer
        assert kept is not None and kept.latency == 0 and kept.error == "worker 0"
        assert led.record_once(_run(1, 0, {"lang": "fr"})) is None   # another condition: its own trial 0
        assert led.count() == 2
