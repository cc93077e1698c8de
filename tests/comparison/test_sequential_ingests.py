"""Issue 35 (6): compare --sequential with a baseline ingested once and a candidate in 20 batches.

Reproducer b14 in ../shared/repro/stats/limits/: with the arms in separate ingests every look
held one arm only, and the test printed "e-value 1 after 1000 looks" beside a fixed p = 0.012.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from fluke import analysis
from fluke.comparison import DIFFERENT, matched_batches, sequential_evalues
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run


def test_baseline_once_candidate_in_twenty_batches_decides():
    rng = np.random.default_rng(31)
    ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "seq.db"))
    rates = np.array([0.9, 0.7, 0.5, 0.95, 0.6])
    ledger.ingest([Run(scenario=f"s{s}", trial=t, identity=Identity(model="A"),
                       outcome=Outcome(passed=bool(rng.random() < rates[s]))) for s in range(5) for t in range(40)])
    for batch in range(20):
        ledger.ingest([Run(scenario=f"s{s}", trial=2 * batch + j, identity=Identity(model="B"),
                           outcome=Outcome(passed=bool(rng.random() < rates[s] - 0.35)))
                       for s in range(5) for j in range(2)])
    result = analysis.compare(ledger, "model=A", "model=B", sequential=True, record=False)
    assert result.sequential.looks == 21
    assert result.sequential.verdict == DIFFERENT and result.pass_rates.verdict == DIFFERENT
    text = result.render()
    assert "batch by batch: different" in text and "the fixed-sample test has power" in text
    limit, seq_power, fixed_power = result.sequential_power
    assert 0 <= seq_power <= fixed_power <= 1 and limit == result.pass_rates.detection_limit


def test_false_alarms_stay_below_alpha_over_1000_unchanged_pairs():
    rng = np.random.default_rng(35)
    g, looks, reps = 5, 21, 1000
    rates = np.array([0.9, 0.7, 0.5, 0.95, 0.6])
    # A: 40 runs per scenario at look 0; B: 2 runs per scenario at each of looks 1–20
    strata_a = np.repeat(np.arange(g), 40)
    strata_b = np.tile(np.repeat(np.arange(g), 2), 20)
    looks_b = np.repeat(np.arange(1, 21), 2 * g)
    tables = []
    for _ in range(reps):
        fa = (rng.random(strata_a.size) > rates[strata_a]).astype(int)
        fb = (rng.random(strata_b.size) > rates[strata_b]).astype(int)
        tables.append(matched_batches(strata_a, np.zeros_like(strata_a), fa, strata_b, looks_b, fb,
                                      looks=looks, strata=g))
    counts = np.stack(tables, axis=1)                  # (4, reps, looks, strata)
    assert np.all(counts[1, :, 0] == 0) and np.all(counts[1, :, 1:].sum(axis=1) == 40)   # every look matched
    e = sequential_evalues(*counts)
    alarms = float(np.mean((e >= 20).any(axis=-1)))
    assert alarms <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps)


def test_compare_prints_the_mean_over_cells_beside_a_pooled_share_that_differs():
    # issue 35 (6): A runs s0 ten times (all pass) and s1 twice (both fail): pooled 10/12, mean over cells 50%
    ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "mean.db"))
    runs = [Run(scenario="s0", trial=t, identity=Identity(model=m), outcome=Outcome(passed=True))
            for m in ("A", "B") for t in range(10)]
    runs += [Run(scenario="s1", trial=t, identity=Identity(model=m), outcome=Outcome(passed=False))
             for m in ("A", "B") for t in range(2)]
    ledger.ingest(runs)
    result = analysis.compare(ledger, "model=A", "model=B", record=False)
    assert result.pass_rates.rate_a == 50.0
    assert "83.3% (10/12) passed; 50.0% as the mean over scenario cells" in result.render()
