"""Verbs that answer from the ledger's counts and steps give exactly the answer of streaming every run.

Each case runs the verb twice on one real ledger: from the ``counts`` and ``steps`` tables (the
default) and with ``stream=True`` (every run read and reduced, the path ``--spec`` and trial
selectors take), and asserts the JSON payloads equal. Ledgers: τ²-bench (gpt-4.1 against its
fine-tune, three domains), τ-bench (each trial as its own version), and generated runs with
unknown outcomes, conditions, recorded failure steps, failed calls and several versions.
"""

from __future__ import annotations

import json
import random

import pytest

from fluke.analysis import compare, consistency, dumps
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

from .._close import assert_same_doc
from .._runs import generated as generated_runs
from ..conftest import TAU2_RESULTS, TAU_AIRLINE, need


def _same(counted, streamed):
    a, b = counted.payload(), streamed.payload()
    tail = "; read from the ledger's counts and steps tables"
    if "conditional_on" in a and isinstance(a["conditional_on"], str) and a["conditional_on"].endswith(tail):
        assert b["conditional_on"].endswith("; read run by run (the spec, trial selectors or the batch-by-batch "
                                            "test need the runs)")
        a["conditional_on"] = b["conditional_on"] = None
    assert_same_doc(json.loads(dumps(a)), json.loads(dumps(b)))     # NaN (undefined) is null in both


@pytest.fixture
def generated(ledger_url):
    with open_ledger(ledger_url) as ledger:
        runs = generated_runs(1500, seed=7)
        ledger.ingest(runs[:1000])
        ledger.ingest(runs[600:])      # a second ingest, partly of stored runs
        yield ledger


@pytest.mark.parametrize("options", [{}, {"unknown": "exclude"}, {"condition": "noise=typos"},
                                     {"scenario": "case1*"}, {"alpha": 0.1, "ceiling": 12.0, "seed": 4}])
def test_compare_from_counts_is_compare_from_every_run_on_generated_runs(generated, options):
    counted = compare(generated, "model=m1", "model=m2", record=False, **options)
    streamed = compare(generated, "model=m1", "model=m2", record=False, stream=True, **options)
    _same(counted, streamed)
    doc = counted.payload()
    assert not doc["where"]["skipped"] and doc["where"]["steps"]["steps"]       # there were deaths to place
    assert doc["died_from"]["died_at"] and doc["died_from"]["failed call"] and doc["died_from"]["unknown step"]
    assert counted.a.counted is not None and streamed.a.counted is None


def test_an_arm_of_several_versions_from_counts_is_the_same_as_from_its_runs(generated):
    counted = compare(generated, "model=m*", "model=x3", record=False)
    _same(counted, compare(generated, "model=m*", "model=x3", record=False, stream=True))
    assert len(counted.a.versions) == 2


def test_consistency_from_counts_is_consistency_from_every_run(generated):
    arms = ["model=m1", "model=m2", "model=x3", "model=m*", "model=m1@0-700", "model=m*@300-1200,1400"]
    for unknown in ("fail", "exclude"):
        _same(consistency(generated, arms, unknown=unknown), consistency(generated, arms, unknown=unknown, stream=True))
    picked = consistency(generated, arms[-1:], scenario="case1*")
    _same(picked, consistency(generated, arms[-1:], scenario="case1*", stream=True))
    assert picked.agents[0][0].size == sum(r.trial in range(300, 1201) or r.trial == 1400
                                           for r in generated.runs(version=picked.agents[0][0].versions,
                                                                   scenario="case1*"))


def test_tau2_bench_compare_and_consistency_from_counts_equal_the_stream(tmp_path):
    from fluke.adapters import read_file

    files = sorted(need(TAU2_RESULTS).glob("*gpt-4.1*1trials.json"))
    assert len(files) >= 6
    with open_ledger(str(tmp_path / "tau2.db")) as ledger:
        for path in files:     # each file names its model; its domain makes a version of its own
            ledger.ingest(read_file(path))
        counted = compare(ledger, "model=gpt-4.1", "model=ft:*", record=False)
        _same(counted, compare(ledger, "model=gpt-4.1", "model=ft:*", record=False, stream=True))
        assert counted.payload()["a"]["runs"] == sum(1 for p in files if not p.name.startswith("ft:")
                                                     for _ in read_file(p))
        _same(consistency(ledger, ["model=gpt-4.1", "model=ft:*"]),
              consistency(ledger, ["model=gpt-4.1", "model=ft:*"], stream=True))


def test_tau_bench_trials_as_versions_from_counts_equal_the_stream(tmp_path):
    from fluke.adapters import read_file

    path = need(TAU_AIRLINE)
    with open_ledger(str(tmp_path / "tau.db")) as ledger:
        for t in range(4):
            ledger.ingest(
                [r for r in read_file(path, identity={"model": f"{'early' if t < 2 else 'late'} {t}"}) if r.trial == t]
            )
        for a, b in (("model=early 0", "model=early 1"), ("model=early*", "model=late*")):
            _same(compare(ledger, a, b, record=False), compare(ledger, a, b, record=False, stream=True))
        counted = compare(ledger, "model=early 0", "model=late 3", record=False)
        assert counted.payload()["a"]["runs"] == 50
        _same(consistency(ledger, ["model=early*", "model=late 3"]),
              consistency(ledger, ["model=early*", "model=late 3"], stream=True))


def _tied(n, *, seed):
    """Runs of few trials (0-4, repeated), three versions ingested together: the ledger keeps the first
    run of each trial of a version, so runs of one input share a trial across the versions of one arm."""
    rng = random.Random(seed)
    return [Run(scenario=f"case{rng.randrange(8)}", trial=rng.randrange(5), seed=i,
                identity=Identity(model=rng.choice(["m1", "m2", "m3", "x3"])),
                condition={"noise": "typos"} if rng.random() < 0.3 else {},
                outcome=Outcome(passed=None if rng.random() < 0.08 else rng.random() < 0.55)) for i in range(n)]


@pytest.fixture
def tied(ledger_url):
    with open_ledger(ledger_url) as ledger:
        runs = _tied(1600, seed=3)
        ledger.ingest(runs[:1000])
        ledger.ingest(runs[700:])
        yield ledger


_FIXCHECKS = [("model=m1@0-699", "model=m1@700-1499", {}),
              ("model=m1", "model=m2", {}),
              ("model=m1", "model=m2", {"control": "model=x3", "unknown": "exclude"}),
              ("model=m1@0-799", "model=m2", {"control": "model=m1@800-1499", "within": 5}),
              ("model=m1", "model=x3", {"scenario": "case1*", "q": 0.2})]


@pytest.mark.parametrize("first,candidate,options", _FIXCHECKS)
def test_fixcheck_from_trial_outcomes_is_fixcheck_from_every_run(generated, first, candidate, options):
    from fluke.analysis import fixcheck

    counted = fixcheck(generated, first, candidate, **options)
    streamed = fixcheck(generated, first, candidate, stream=True, **options)
    _same(counted, streamed)
    assert counted.check.candidate.rows > 20 and not counted.streamed and streamed.streamed
    assert "trial_outcomes table" in counted.render() and "read run by run" in streamed.render()


@pytest.mark.parametrize("first,candidate,options", [
    ("model=m1@0", "model=m1@1-4", {}),
    ("model=m*@0-1", "model=m*@2-4", {"unknown": "exclude"}),          # arms of three versions, tied trials
    ("model=m1@0,2", "model=m2@1-4", {"control": "model=m3@1-4"}),
    ("model=m1", "model=m2", {"control": "model=m3", "scenario": "case?"}),
    ("model=m1@0", "model=m1@1-4", {"scenario": "case3"})])
def test_fixcheck_with_runs_that_share_a_trial_from_the_table_is_the_stream(tied, first, candidate, options):
    import numpy as np

    from fluke.analysis import fixcheck
    from fluke.analysis._fixcheck import fix_arrays   # the fix check's reader, not a verb

    _same(fixcheck(tied, first, candidate, **options), fixcheck(tied, first, candidate, stream=True, **options))
    for text in (first, candidate, options.get("control")):
        if text is None:
            continue
        kw = {k: v for k, v in options.items() if k in ("scenario", "unknown")}
        arm, arrays, unknowns, names = fix_arrays(tied, text, **kw)
        arm_s, arrays_s, unknowns_s, names_s = fix_arrays(tied, text, stream=True, **kw)
        arrays, arrays_s = (names[arrays[0]], *arrays[1:]), (names_s[arrays_s[0]], *arrays_s[1:])
        assert all(np.array_equal(a, b) for a, b in zip(arrays, arrays_s, strict=True)) and unknowns == unknowns_s
        assert arm.describe() == arm_s.describe() and arrays[0].size > 0
        ties = np.unique(np.char.add(np.char.add(arrays[0], "|"), arrays[2].astype(str)), return_counts=True)[1]
        # runs of one input share a trial across an arm's versions; within one version never (one run a trial)
        assert ties.max() > 1 if "*" in text else ties.max() == 1


def test_fixcheck_on_tau_bench_trials_from_the_table_is_the_stream(tmp_path):
    from fluke.adapters import read_file
    from fluke.analysis import fixcheck

    with open_ledger(str(tmp_path / "tau.db")) as ledger:
        ledger.ingest(read_file(need(TAU_AIRLINE)))
        for first, candidate in (("@0", "@1-3"), ("@0-1", "@2-3"), ("@3", "@0-2")):
            counted = fixcheck(ledger, first, candidate)
            _same(counted, fixcheck(ledger, first, candidate, stream=True))
            assert counted.payload()["candidate"]["runs"] == 50 * len(counted.candidate.trials)
