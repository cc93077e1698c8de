"""One reduction of a stored run (``RunFacts``) for every verb that reads runs: each field equals what
the Run model gives, on τ-bench, τ²-bench and generated runs with units, conditions, tags and labels;
the report's tally, the explorer's header and contrast's scope read the same facts."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest

from fluke.analysis import reduce_body, reduce_run
from fluke.record import Identity, Outcome, Run, ToolCall, UserMessage


def _generated() -> list[Run]:
    runs = []
    for i in range(40):
        passed = None if i % 7 == 0 else i % 3 != 0
        events = [UserMessage(text=f"hi {i}")] + [ToolCall(tool=f"t{j % 3}", ok=j % 4 != 1) for j in range(i % 5)]
        runs.append(Run(scenario=f"s{i % 6}", trial=i // 6, unit=None if i % 2 else f"u{i % 4}",
                        condition={} if i % 3 == 0 else {"temp": i % 2, "lang": "fr" if i % 5 else "en"},
                        tags=[] if i % 4 else [f"family/{i % 2}", "x"],
                        identity=Identity(model="m", harness=f"h{i % 2}"),
                        outcome=Outcome(passed=passed, reward=None if i % 5 == 0 else round(i / 40, 3),
                                        died_at=(i % 5) if passed is False and i % 2 else None,
                                        label=None if i % 3 else ("complete" if passed else "fail")),
                        events=events))
    return runs


def _fields_of_run(run: Run) -> tuple:
    """What the former consumers read of a whole run: ScopedRun (interval, contrast), the report's scan
    and the explorer's header, from the Run model's own properties."""
    o = run.outcome
    return (run.scenario, run.trial, run.hash, run.version, run.identity.label(), run.sampling_unit,
            dict(run.condition), run.condition_key(), tuple(run.tags), o.passed, o.reward, o.died_at, o.label,
            len(run.events))


def _fields_of_facts(f) -> tuple:
    o = f.outcome
    return (f.scenario, f.trial, f.hash, f.version, f.label, f.sampling_unit, dict(f.condition), f.condition_key(),
            tuple(f.tags), o.passed, o.reward, o.died_at, o.label, len(f.events))


@pytest.fixture
def stored(ledger):
    from fluke.adapters import read_file

    from ..conftest import TAU2_RESULTS, TAU_AIRLINE, need

    tau2 = sorted(need(TAU2_RESULTS).glob("*.json"))[0]
    ledger.ingest(list(read_file(need(TAU_AIRLINE), identity={"model": "gpt-4o"})) + list(read_file(tau2))
                  + _generated())
    return ledger


def test_the_reduction_equals_the_run_model_on_real_and_generated_runs(stored):
    runs = list(stored.runs())
    bodies = list(stored.run_bodies())
    assert len(runs) == len(bodies) > 250
    kinds = Counter()
    for run, (body, _) in zip(runs, bodies, strict=True):
        want = _fields_of_run(run)
        assert _fields_of_facts(reduce_body(body, orjson.loads(body))) == want, run.hash
        assert _fields_of_facts(reduce_run(run)) == want, run.hash
        kinds["unit"] += run.unit is not None
        kinds["condition"] += bool(run.condition)
        kinds["tags"] += bool(run.tags)
        kinds["label"] += run.outcome.label is not None
        kinds["unknown"] += run.outcome.passed is None
    assert all(kinds[k] > 0 for k in ("unit", "condition", "tags", "label", "unknown")), kinds


def test_the_report_tally_counts_what_the_runs_say(stored):
    """The report's one pass (scan_runs, from the reduction) against counts made here from the Run model."""
    from fluke.analysis._report_scan import scan_runs
    from fluke.analysis._report_tally import death_step_of

    chosen = [v.version for v in stored.versions()]
    tally = scan_runs(stored, chosen, max_runs=10).tally
    runs, deaths, outcomes, tags = Counter(), {}, {}, {}
    for run in stored.runs():
        v, o = run.version, run.outcome
        runs[v] += 1
        step = death_step_of(o.passed, o.died_at, len(run.events))
        if step is not None:
            deaths.setdefault(v, Counter())[step] += 1
        name = o.label or {True: "complete", False: "fail", None: None}[o.passed]
        if name is not None:
            outcomes.setdefault(v, {}).setdefault(run.condition_key(), Counter())[name] += 1
        tags.setdefault(v, {}).setdefault(run.scenario, set()).update(run.tags)
    assert tally.runs == dict(runs)
    assert {v: dict(c) for v, c in tally.deaths.items() if c} == {v: dict(c) for v, c in deaths.items()}
    assert tally.outcomes == outcomes
    assert tally.tags == tags
    assert tally.conditioned == {r.version for r in stored.runs() if r.condition}


def test_the_explorer_header_and_contrast_scope_read_the_same_facts(stored):
    from fluke.analysis._facts import scoped_runs
    from fluke.analysis._report_collect import death_step, explorer_run

    for run in list(stored.runs())[::25]:
        shown = explorer_run(run)
        o = run.outcome
        assert (shown.hash, shown.version, shown.label, shown.scenario, shown.trial, shown.condition, shown.passed,
                shown.reward, shown.outcome) == (run.hash, run.version, run.identity.label(), run.scenario, run.trial,
                                                 run.condition_key(), o.passed, o.reward, o.label)
        assert shown.died_at == (o.died_at if o.died_at is not None else death_step(run))
    scoped = scoped_runs(stored, None, None)
    assert [_fields_of_facts(f) for f in scoped] == [_fields_of_run(r) for r in stored.runs()]
