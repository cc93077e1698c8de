"""The counts table keeps how many trials had an unknown outcome: at ingest, and by migration 0003."""

from __future__ import annotations

import random

import pytest

from fluke.ledger import open_ledger
from fluke.ledger import _base
from fluke.record import Identity, Outcome, Run

from . import kept, undo_trial_keys

from .test_steps import _expected as _steps_expected
from .test_steps import _steps


def _runs(n, *, seed=0):
    rng = random.Random(seed)
    return [Run(scenario=f"s{rng.randrange(6)}", trial=i, identity=Identity(model=rng.choice(["m1", "m2"])),
                condition={"noise": rng.choice(["none", "typos"])} if i % 3 else {},
                outcome=Outcome(passed=None if rng.random() < 0.25 else rng.random() < 0.6)) for i in range(n)]


def _tally(runs):
    """(trials, passes, unknowns) per version x scenario x condition, computed from the runs."""
    out = {}
    for r in kept(runs):
        key = (r.version, r.scenario, r.condition_key())
        n, k, u = out.get(key, (0, 0, 0))
        out[key] = (n + 1, k + (r.outcome.passed is True), u + (r.outcome.passed is None))
    return out


def _counts(ledger):
    return {(c.version, c.scenario, c.condition): (c.trials, c.passes, c.unknowns) for c in ledger.counts()}


@pytest.mark.parametrize("hold", [None, 1])    # one short transaction, or batches written as built
def test_ingest_keeps_unknowns_beside_trials_and_passes(ledger_url, hold):
    runs = _runs(900)
    with open_ledger(ledger_url) as ledger:
        if hold:
            ledger.HOLD_RUNS = hold
        ledger.ingest(runs[:600] + runs[:40])                  # repeats are not counted twice
        ledger.ingest(runs[300:])                              # half of it stored already
        expected = _tally(runs)
        assert _counts(ledger) == expected
        assert sum(u for _, _, u in expected.values()) > 150    # the test has unknowns to count
        row = ledger.counts()[0]
        assert row.failures == row.trials - row.passes and row.known == row.trials - row.unknowns


def test_a_failed_ingest_leaves_the_unknowns_as_they_were(ledger_url):
    runs = _runs(200, seed=3)

    def broken():
        yield from runs[100:]
        raise RuntimeError("the harness file ended early")

    with open_ledger(ledger_url) as ledger:
        ledger.ingest(runs[:100])
        with pytest.raises(RuntimeError):
            ledger.ingest(broken())
        assert _counts(ledger) == _tally(runs[:100])
        assert _steps(ledger) == _steps_expected(runs[:100])     # the steps table, by the same tally


def test_migration_0003_fills_unknowns_from_the_stored_bodies(ledger_url, monkeypatch):
    runs = _runs(300, seed=1)
    with open_ledger(ledger_url) as made, made.atomic():    # a ledger as 0002 left it
        made.ingest(runs)
        made.execute("ALTER TABLE counts DROP COLUMN unknowns")
        made.execute("DELETE FROM migrations WHERE name IN ('0003_counts_keep_unknowns', '0004_pending_ingests', "
                     "'0005_steps_where_runs_die', '0006_trial_outcomes_and_unit_cells')")
        for table in ("pending", "steps", "trial_outcomes", "trial_outcomes_staged", "unit_cells"):
            made.execute(f"DROP TABLE {table}")
        undo_trial_keys(made)
    monkeypatch.setattr(_base, "MIGRATIONS", _base.MIGRATIONS[:2])
    with open_ledger(ledger_url) as old:
        assert old.migrations()[-1] == "0002_runs_keyed_by_hash_with_counts"
        cur = old.execute("SELECT * FROM counts LIMIT 0")
        assert [d[0] for d in cur.description] == ["vid", "scenario", "condition", "trials", "passes"]
    monkeypatch.undo()
    with open_ledger(ledger_url) as ledger:
        assert ledger.migrations()[2:] == ["0003_counts_keep_unknowns", "0004_pending_ingests",
                                           "0005_steps_where_runs_die", "0006_trial_outcomes_and_unit_cells",
                                           "0007_one_run_per_trial"]
        assert _counts(ledger) == _tally(runs)
        ledger.ingest(_runs(100, seed=2))
        assert _counts(ledger) == _tally(runs + _runs(100, seed=2))
