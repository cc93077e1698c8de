"""The ledger, run once against a SQLite file and once against a real PostgreSQL server."""

import random

import pytest

from fluke.errors import SelectorError
from fluke.record import Identity, Outcome, Run, ToolCall

from . import MIGRATIONS


def _runs(n, *, seed=0, model="m"):
    rng = random.Random(seed)
    return [Run(scenario=f"s{rng.randrange(7)}", trial=i, identity=Identity(model=model),
                condition={"name": rng.choice(["plain", "ambiguous"])},
                events=[ToolCall(tool="lookup", args={"id": str(i)}, ok=True)],
                outcome=Outcome(passed=rng.random() < 0.6)) for i in range(n)]


def test_migrations_are_recorded(ledger):
    assert ledger.migrations() == MIGRATIONS


def test_ingest_is_idempotent_and_counts_match_an_independent_tally(ledger):
    runs = _runs(300)
    first = ledger.ingest(runs)
    assert (first.added, first.skipped) == (300, 0)
    again = ledger.ingest(runs[:120])
    assert (again.added, again.skipped) == (0, 120)
    assert ledger.count() == 300
    tally = {}
    for r in runs:
        key = (r.version, r.scenario, r.condition_key())
        n, k = tally.get(key, (0, 0))
        tally[key] = (n + 1, k + int(r.outcome.passed))
    got = {(c.version, c.scenario, c.condition): (c.trials, c.passes) for c in ledger.counts()}
    assert got == tally


def test_a_failure_mid_batch_leaves_the_ledger_as_it_was(ledger):
    ledger.ingest(_runs(10))

    def broken():
        yield from _runs(50, seed=1)
        raise ValueError("record 51 is bad")

    with pytest.raises(ValueError, match="record 51"):
        ledger.ingest(broken())
    assert ledger.count() == 10


def test_runs_round_trip_and_filter(ledger):
    runs = _runs(40)
    ledger.ingest(runs)
    stored = {r.hash: r for r in ledger.runs()}
    assert stored.keys() == {r.hash for r in runs}
    assert all(stored[r.hash] == r for r in runs)
    want = sorted(r.hash for r in runs if r.scenario == "s3" and r.condition["name"] == "ambiguous")
    got = sorted(r.hash for r in ledger.runs(scenario="s3", condition="name=ambiguous"))
    assert got == want
    assert ledger.count(scenario="s*") == 40
    assert len(list(ledger.runs(limit=5))) == 5


def test_versions_and_selectors(ledger):
    ledger.ingest(_runs(5, model="gpt-4.1") + _runs(3, model="gpt-4o"))
    infos = {v.identity.model: v for v in ledger.versions()}
    assert infos["gpt-4.1"].runs == 5 and infos["gpt-4o"].runs == 3
    v41 = Identity(model="gpt-4.1").version
    assert ledger.resolve_version("model=gpt-4.1") == v41
    assert ledger.resolve_version(v41[:10]) == v41
    with pytest.raises(SelectorError, match="no version matches"):
        ledger.resolve_version("model=claude")
    with pytest.raises(SelectorError, match="unknown identity field"):
        ledger.resolve_version("modle=gpt-4o")


def test_documents_are_content_addressed_and_grades_keyed_by_spec(ledger):
    d1 = ledger.put_document("seal", {"rule": "ship if p > 0.9"})
    d2 = ledger.put_document("seal", {"rule": "ship if p > 0.9"})
    assert d1 == d2 and len(ledger.documents("seal")) == 1
    assert ledger.documents("seal")[0].body == {"rule": "ship if p > 0.9"}
    runs = _runs(3)
    ledger.ingest(runs)
    added = ledger.put_grades("spec1", [(r.hash, {"hard": i == 0}) for i, r in enumerate(runs)])
    assert added == 3
    assert ledger.put_grades("spec1", [(runs[0].hash, {"hard": True})]) == 0
    assert ledger.grades("spec1")[runs[0].hash] == {"hard": True}
    assert ledger.recorded_at(runs[0].hash) >= ledger.documents("seal")[0].recorded_at
    with pytest.raises(SelectorError):
        ledger.recorded_at("0" * 64)
    with pytest.raises(SelectorError):
        ledger.recorded_at("z" * 64)
    other = runs[0].hash[:16] + "0" * 48   # the same key, another hash
    with pytest.raises(SelectorError):
        ledger.recorded_at(other)
