"""One run per version × scenario × condition × trial, for writers that run the agent themselves.

A run's content hash covers what it did and also what varies by accident between two
executions of the same trial (``latency``, the events' timestamps, ``cost``). Ingesting files
is content-addressed and stays so; but a writer that *made* the run (the runner, the pytest
plugin) knows which trial it meant, and two processes running the same trial at once
(pytest-xdist workers, two CI jobs) must not both be kept. :func:`record_once` stores a run
only if the ledger holds no run of its version, scenario, condition and trial; otherwise it
returns the stored one (the first is kept, the second is reported by the caller).

The check and the write happen under one lock per ledger (SQLite: the file's ingest lock;
PostgreSQL: a session advisory lock on the version), so two writers cannot both see the
trial as free. No schema changes: a ledger written before keeps every run it holds.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "once.db"))
>>> first = Run(scenario="s", trial=3, latency=1.5, identity=Identity(model="m"), outcome=Outcome(passed=True))
>>> again = Run(scenario="s", trial=3, latency=2.25, identity=Identity(model="m"), outcome=Outcome(passed=True))
>>> record_once(ledger, first) is None, record_once(ledger, again).latency
(True, 1.5)
>>> ledger.count()
1
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..record import Run
from ._rows import row_run, version_id

if TYPE_CHECKING:
    from ._base import Ledger


def stored_trial(ledger: "Ledger", run: Run) -> Run | None:
    """The run the ledger already holds for ``run``'s version, scenario, condition and trial, or None."""
    from ._base import VISIBLE

    trial = ledger._json_field("trial", integer=True)
    rows = ledger.query(f"SELECT body, source FROM runs WHERE {VISIBLE} AND vid = ? AND scenario = ? "
                        f"AND {trial} = ? ORDER BY ingest, k", (version_id(run.version), run.scenario, run.trial))
    wanted = run.condition_key()
    for body, source in rows:
        stored = row_run(body, source, ledger=ledger.name)
        if stored.condition_key() == wanted:
            return stored
    return None


def record_once(ledger: "Ledger", run: Run) -> Run | None:
    """Store ``run`` unless its trial is already recorded; None when stored, else the run kept before."""
    with ledger.trial_lock(version_id(run.version)):
        stored = stored_trial(ledger, run)
        if stored is not None:
            return stored
        ledger.ingest([run])
        return None
