"""How runs are stored: content bytes, keys, batches written as they are built, counts, and migration 0002."""

from __future__ import annotations

import hashlib
import random

import orjson
import pytest

from fluke.adapters import read_file
from fluke.errors import FlukeError, LedgerError
from fluke.ledger import open_ledger
from fluke.ledger import _base
from fluke.ledger._rows import hash_key
from fluke.record import (AgentMessage, Identity, Outcome, Run, Source, ToolCall, UserMessage,
                          canonical_json, content_json)

from ..conftest import DATA, FORMATS, need
from . import kept


def _runs(n, *, seed=0, models=("m1", "m2")):
    rng = random.Random(seed)
    return [Run(scenario=f"s{rng.randrange(9)}", trial=i, identity=Identity(model=rng.choice(models)),
                condition={"noise": rng.choice(["none", "typos"])} if i % 3 else {},
                outcome=Outcome(passed=rng.random() < 0.6 if i % 7 else None)) for i in range(n)]


def _tally(runs):
    out = {}
    for r in kept(runs):
        key = (r.version, r.scenario, r.condition_key())
        n, k = out.get(key, (0, 0))
        out[key] = (n + 1, k + int(bool(r.outcome.passed)))
    return out


def _counts(ledger):
    return {(c.version, c.scenario, c.condition): (c.trials, c.passes) for c in ledger.counts()}


def _real_runs():
    runs = []
    for path in sorted(need(DATA).rglob("*.json")) + sorted(need(FORMATS / "samples").rglob("*")):
        if path.is_file():
            try:
                runs.extend(read_file(path))
            except FlukeError:
                continue   # not a run file (a spec, a README)
    return runs


def test_content_json_is_pydantic_json_on_real_runs_and_on_every_field():
    runs = _real_runs()
    assert len(runs) > 500
    full = Run(scenario="s", trial=3, unit="u", condition={"t": 0.5, "k": True, "n": None}, tags=["a"],
               identity=Identity(model="m", tools={"lookup": {"v": 2}}, date="2026-11-30"),
               events=[UserMessage(text="hi", t=0.0), AgentMessage(text="ok", agent="a"),
                       ToolCall(tool="lookup", args={"id": [1, {"x": None}]}, call_id="c", ok=None,
                                requestor="user")],
               outcome=Outcome(passed=False, reward=0.25, label="fail", died_at=2), cost={"usd": 0.01},
               latency=1.5, seed=7, tape="t", error="boom", source=Source(adapter="x", file="f", position=3))
    for run in runs + [full]:
        assert content_json(run) == canonical_json(run.model_dump(mode="json", exclude={"source"}))
        assert run.hash == hashlib.sha256(content_json(run)).hexdigest()


def test_a_stored_body_is_the_hashed_content(ledger):
    runs = _runs(50)
    ledger.ingest(runs)
    bodies = [b for (b,) in ledger.query("SELECT body FROM runs")]
    assert sorted(hashlib.sha256(b.encode()).hexdigest() for b in bodies) == sorted(r.hash for r in runs)
    keys = {k for (k,) in ledger.query("SELECT k FROM runs")}
    assert keys == {hash_key(r.hash) for r in runs}


@pytest.fixture
def streaming(ledger_url):
    """A ledger (on each backend) whose every ingest opens its transaction after its first
    batch and writes each later batch as it is built, instead of holding them."""
    ledger = open_ledger(ledger_url)
    ledger.HOLD_RUNS = 1
    yield ledger
    ledger.close()


def test_a_large_ingest_written_batch_by_batch_counts_exactly(streaming):
    runs = _runs(12_000)
    again = runs[:300] + runs[-5:]
    result = streaming.ingest(runs + again)          # repeats inside one ingest, across batches
    assert (result.added, result.skipped) == (12_000, len(again))
    assert _counts(streaming) == _tally(runs)
    more = _runs(6_000, seed=1)
    result = streaming.ingest(runs[5_000:11_000] + more)   # half stored already
    assert (result.added, result.skipped) == (len(kept(runs + more)) - len(kept(runs)),
                                              6_000 + 6_000 - result.added)
    assert _counts(streaming) == _tally(runs + more)
    assert streaming.count() == len(kept(runs + more))
    assert sorted(r.hash for r in streaming.runs()) == sorted(r.hash for r in kept(runs + more))


def test_a_failure_after_batches_were_written_keeps_nothing(streaming):
    streaming.ingest(_runs(10))
    written = []

    def broken():
        yield from _runs(11_000, seed=2)
        written.append(streaming.query("SELECT COUNT(*) FROM runs")[0][0])   # inside the transaction
        raise ValueError("record 11001 is bad")

    with pytest.raises(ValueError, match="record 11001"):
        streaming.ingest(broken())
    assert written and written[0] > 10          # batches had been written before the failure
    assert streaming.count() == 10 and streaming.query("SELECT COUNT(*) FROM runs")[0][0] == 10
    assert sum(c.trials for c in streaming.counts()) == 10


def _forge_collision(ledger, victim: Run, other: Run) -> None:
    """Store ``other``'s content under ``victim``'s key: what a 64-bit collision would leave."""
    with ledger.atomic():
        ledger.execute("INSERT INTO ingests (recorded_at) VALUES (?)", ("2026-01-01T00:00:00.000000Z",))
        ingest = ledger.query("SELECT MAX(id) FROM ingests")[0][0]
        ledger.execute("INSERT INTO runs (k, vid, ingest, scenario, source, body) VALUES (?, ?, ?, ?, ?, ?)",
                       (hash_key(victim.hash), 1, ingest, other.scenario, None, content_json(other).decode()))


def test_two_runs_sharing_a_key_are_refused(ledger):
    victim, other = _runs(2, seed=3)
    _forge_collision(ledger, victim, other)
    with pytest.raises(LedgerError, match="first 64 bits"):
        ledger.ingest([victim])
    assert ledger.query("SELECT COUNT(*) FROM runs")[0][0] == 1


def test_two_runs_sharing_a_key_are_refused_in_a_later_batch(streaming):
    runs = _runs(6_000, seed=4)
    _forge_collision(streaming, runs[-1], runs[0])
    with pytest.raises(LedgerError, match="first 64 bits"):
        streaming.ingest(runs)
    assert streaming.query("SELECT COUNT(*) FROM runs")[0][0] == 1


def _old_row(run: Run, recorded_at: str) -> tuple:
    """The 0001 layout of a run, written out independently of the current code."""
    body = run.model_dump(mode="json")
    source = body.pop("source")
    del body["identity"]
    slim = {k: v for k, v in body.items() if v is not None and v != [] and v != {}}
    if source is not None:
        slim["source"] = source
    passed = None if run.outcome.passed is None else int(run.outcome.passed)
    return (run.hash, int(run.version[:15], 16), run.scenario, run.trial, run.sampling_unit, run.condition_key(),
            passed, run.outcome.reward, run.outcome.label, run.outcome.died_at, len(run.events), run.identity.date,
            recorded_at, orjson.dumps(slim).decode())


def _ledger_at_0001(url, monkeypatch, runs, times):
    monkeypatch.setattr(_base, "MIGRATIONS", _base.MIGRATIONS[:1])
    with open_ledger(url) as old, old.atomic():
        for identity in {r.version: r.identity for r in runs}.values():
            body = identity.model_dump(mode="json", exclude={"date"})
            old.execute("INSERT INTO versions VALUES (?, ?, ?, ?)",
                        (int(identity.version[:15], 16), identity.version, canonical_json(body).decode(), times[0]))
        for run, at in zip(runs, times, strict=True):
            old.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", _old_row(run, at))
    monkeypatch.undo()


def test_migration_0002_keeps_every_run_its_hash_counts_and_time(ledger_url, monkeypatch):
    runs = _runs(40, seed=5)
    runs[3] = runs[3].model_copy(update={"source": Source(adapter="tau-bench", file="x.json", position=3),
                                         "identity": Identity(model="m1", date="2026-02-01")})
    runs[4] = runs[4].model_copy(update={"events": [UserMessage(text="refund W1"),
                                                    ToolCall(tool="refund", args={"id": "W1"}, ok=True)]})
    times = [f"2026-03-0{1 + i % 3}T00:00:00.000000Z" for i in range(len(runs))]
    _ledger_at_0001(ledger_url, monkeypatch, runs, times)
    with open_ledger(ledger_url) as ledger:
        assert ledger.migrations()[1:3] == ["0002_runs_keyed_by_hash_with_counts", "0003_counts_keep_unknowns"]
        stored = {r.hash: r for r in ledger.runs()}
        assert stored == {r.hash: r for r in runs}
        assert stored[runs[3].hash].source == runs[3].source
        assert _counts(ledger) == _tally(runs)
        assert {(c.version, c.scenario, c.condition): c.unknowns for c in ledger.counts()} == {
            key: sum(1 for r in runs if (r.version, r.scenario, r.condition_key()) == key and r.outcome.passed is None)
            for key in _tally(runs)}
        assert {h: ledger.recorded_at(h) for h in stored} == {r.hash: t for r, t in zip(runs, times, strict=True)}
        assert ledger.recorded_times() == {r.hash: t for r, t in zip(runs, times, strict=True)}


@pytest.mark.parametrize("edited", [{"scenario": "edited", "trial": 0},     # still a run, another one
                                    {"scenario": "", "trial": "x"}])        # no longer a run at all
def test_migration_0002_refuses_a_run_changed_outside_fluke(ledger_url, monkeypatch, edited):
    runs = _runs(5, seed=6)
    _ledger_at_0001(ledger_url, monkeypatch, runs, ["2026-03-01T00:00:00.000000Z"] * 5)
    monkeypatch.setattr(_base, "MIGRATIONS", _base.MIGRATIONS[:1])
    with open_ledger(ledger_url) as old, old.atomic():
        old.execute("UPDATE runs SET body = ? WHERE hash = ?", (orjson.dumps(edited).decode(), runs[2].hash))
    monkeypatch.undo()
    with pytest.raises(LedgerError, match=f"run {runs[2].hash} does not reproduce its hash"):
        open_ledger(ledger_url)
    monkeypatch.setattr(_base, "MIGRATIONS", _base.MIGRATIONS[:1])
    with open_ledger(ledger_url) as old:
        assert old.migrations() == ["0001_runs_versions_documents_grades"]
        assert old.query("SELECT COUNT(*) FROM runs")[0][0] == 5
