"""The fix check reads each arm as its inputs' outcome sequences, one byte a run
(``Ledger.outcome_sequences``: over a Parquet dataset one ordered DuckDB query), and reduces the
arms side by side a part of whole inputs at a time to a tally; cut into parts of one run, a few
runs or many, it prints the SQLite ledger's ``fixcheck --json``, on generated runs with unknown
outcomes, uneven trials per input, conditions, trials shared by the versions of one arm, trial
selectors and a control.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import fluke.analysis._fixcheck as fixcheck_module
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

from .._runs import cli_json as cli

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

from fluke.ledger._duckdb import LakeLedger  # noqa: E402


def uneven(seed: int) -> list[Run]:
    """Three models over 14 scenarios; each input runs a different number of trials (0 to 30,
    numbers drawn with gaps, so the versions of ``model=m*`` share some), 12% unknown outcomes."""
    rng = random.Random(seed)
    out = []
    for model, bad in (("m1", 0.35), ("m2", 0.5), ("x3", 0.45)):
        for s in range(14):
            for condition in ({}, {"noise": "typos"}):
                if rng.random() < 0.15:
                    continue                      # this input never ran on this model
                hard = min(0.95, bad + 0.4 * (s % 4) / 3 - 0.2)
                for trial in rng.sample(range(45), rng.randrange(1, 31)):
                    passed = None if rng.random() < 0.12 else rng.random() > hard
                    out.append(Run(scenario=f"case{s}", trial=trial, identity=Identity(model=model),
                                   condition=condition, outcome=Outcome(passed=passed)))
    rng.shuffle(out)
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parts")
    db = str(folder / "fluke.db")
    runs = uneven(5)
    with open_ledger(db) as ledger:
        ledger.ingest(runs[:700])
        ledger.ingest(runs[500:])
    assert cli(db, "export", "--format", "parquet", "-o", str(folder / "lake"))[0] == 0
    return db, "parquet:" + str(folder / "lake")


CHECKS = [("model=m1", "model=m2"), ("model=m1", "model=m2", "--control", "model=x3"),
          ("model=x3", "model=m*", "--unknown", "exclude"),
          ("model=m1@0-14", "model=m1@15-44", "--control", "model=m2@15-44", "--within", "5"),
          ("model=m*@0-20", "model=x3", "--within", "1", "--unknown", "exclude"),
          ("model=m1", "model=m2", "--scenario", "case3")]


@pytest.fixture(scope="module")
def wanted(made):
    """The SQLite ledger's answers, read whole (one part)."""
    db, _ = made
    out = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fixcheck_module, "PART_RUNS", 10 ** 9)
        for args in CHECKS:
            code, out[args] = cli(db, "fixcheck", *args)
            assert code == 0, out[args]
    return out


@pytest.mark.parametrize("part,here", [(1, True), (7, False), (60, True)])
@pytest.mark.parametrize("args", CHECKS, ids=[" ".join(a) for a in CHECKS])
def test_the_fix_check_in_parts_prints_the_sqlite_ledgers_json(made, wanted, monkeypatch, args, part, here):
    """Parts of 1, 7 and 60 runs; the lake's outcomes sorted here or by DuckDB."""
    db, lake = made
    monkeypatch.setattr(fixcheck_module, "PART_RUNS", part)
    monkeypatch.setattr(LakeLedger, "SORT_HERE", here)
    want = wanted[args]
    for ledger in (lake, db):
        code, got = cli(ledger, "fixcheck", *args)
        assert code == 0, got
        assert json.loads(got) == json.loads(want)
        assert got == want


def test_the_lakes_outcome_sequences_and_trial_outcomes_are_the_ledgers(made):
    db, lake = made
    with open_ledger(db) as ledger:
        chosen = ledger.select_versions("model=m*")
        want = ledger.trial_outcomes(version=chosen, trials=range(3, 40))
        seq = ledger.outcome_sequences(version=chosen, trials=range(3, 40))
    with open_ledger(lake) as ledger:
        got = ledger.trial_outcomes(version=chosen, trials=range(3, 40))
        got_seq = ledger.outcome_sequences(version=chosen, trials=range(3, 40))
    assert len(want) > 500 and len(want.inputs) > 20
    assert got.versions == want.versions and got.inputs == want.inputs
    for name in ("version", "input", "trial", "outcome"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    # the sequences: each input's outcomes in the order of trial_outcomes, counted per input
    assert got_seq.inputs == seq.inputs == want.inputs and got_seq.versions == seq.versions == want.versions
    assert np.array_equal(got_seq.sizes, np.bincount(want.input)) and np.array_equal(seq.sizes, got_seq.sizes)
    assert np.array_equal(got_seq.outcome, want.outcome) and np.array_equal(seq.outcome, want.outcome)
    # trial order within each input, ties (two versions on one trial) in version order
    key = np.lexsort((want.version, want.trial, want.input))
    assert np.array_equal(key, np.arange(len(want)))
    assert ((np.diff(want.trial) == 0) & (np.diff(want.input) == 0)).any()


def test_runs_that_share_a_version_input_and_trial_are_left_to_duckdbs_order(made, monkeypatch):
    """Two runs of one version on one input and trial (a ledger written before one run per trial):
    only the ingest and the content key order them, which the sort here does not read, so it
    gives way to DuckDB's ORDER BY, and the sequences are the same as with DuckDB's sort alone."""
    _, lake = made
    with open_ledger(lake) as ledger:
        ledger._conn.execute("ALTER VIEW runs RENAME TO runs_once")
        ledger._conn.execute("CREATE VIEW runs AS SELECT * FROM runs_once UNION ALL "
                             "SELECT k + 1, vid, ingest + 1, scenario, condition, trial, unit, NOT passed, reward, "
                             "cause, step, event, latency, cost, body, source FROM runs_once WHERE trial % 3 = 0")
        chosen = ledger.select_versions("model=m1")
        cur = ledger._conn.cursor()
        where, params = ledger._outcome_where(chosen, None, None, None)
        inputs, sizes, vids = ledger._inputs(cur, where, params)
        assert ledger._sorted_here(cur, where, params, inputs, sizes, vids) is None
        got = ledger.outcome_sequences(version=chosen)
        monkeypatch.setattr(LakeLedger, "SORT_HERE", False)
        want = ledger.outcome_sequences(version=chosen)
        whole = ledger.trial_outcomes(version=chosen)
    assert np.array_equal(got.outcome, want.outcome) and np.array_equal(got.sizes, want.sizes)
    assert np.array_equal(got.outcome, whole.outcome)
    assert ((np.diff(whole.trial) == 0) & (np.diff(whole.input) == 0)).any()
