"""One run per version × scenario × condition × trial, for writers that run the agent themselves.

Every ingest keeps one run per trial (the ``runs`` table's trial key, unique: see
:mod:`fluke.ledger._rows`), so two processes running the same trial at once (pytest-xdist
workers, two CI jobs) cannot both store it, whatever the timing, latency or cost of each.
:func:`record_once` is that ingest of one run, which also says which run was kept: None when
``run`` was stored, else the run stored first (the caller reports the second).

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
from ._rows import row_run, trial_key, version_id

if TYPE_CHECKING:
    from ._base import Ledger


def stored_trial(ledger: "Ledger", run: Run) -> Run | None:
    """The run the ledger already holds for ``run``'s version, scenario, condition and trial, or None."""
    from ._base import VISIBLE

    key = trial_key(version_id(run.version), run.scenario, run.condition_key(), run.trial)
    rows = ledger.query(f"SELECT body, source FROM runs WHERE {VISIBLE} AND t = ?", (key,))
    return row_run(rows[0][0], rows[0][1], ledger=ledger.name) if rows else None


def record_once(ledger: "Ledger", run: Run) -> Run | None:
    """Store ``run`` unless its trial is already recorded; None when stored, else the run kept before."""
    if ledger.ingest([run]).added:
        return None
    return stored_trial(ledger, run)
