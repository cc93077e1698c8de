"""The steps table keeps each run's place (where it died or was censored): at ingest, and by migration 0005."""

from __future__ import annotations

import random

import pytest

from fluke.comparison import survival_data
from fluke.ledger import _base, open_ledger
from fluke.record import AgentMessage, Identity, Outcome, Run, ToolCall, UserMessage

from . import kept, undo_trial_keys


def _runs(n, *, seed=0):
    """Runs of every shape a place can take: passes, died_at (in and past range), failed calls, unknown steps."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        events = [UserMessage(text="hi")]
        for j in range(rng.randrange(4)):
            events.append(rng.choice([AgentMessage(text="ok"), ToolCall(tool=f"t{j}", ok=rng.random() < 0.5)]))
        passed = None if rng.random() < 0.15 else rng.random() < 0.5
        died = rng.choice([None, None, 0, len(events) - 1, len(events) + 2]) if passed is False else None
        out.append(Run(scenario=f"s{rng.randrange(5)}", trial=i, identity=Identity(model=rng.choice(["m1", "m2"])),
                       condition={"noise": "typos"} if i % 4 == 0 else {}, events=events,
                       outcome=Outcome(passed=passed, died_at=died)))
    return out


def _expected(runs):
    """Each distinct run's place as fluke.comparison.survival_data (another implementation) puts it."""
    out = {}
    for r in kept(runs):
        data = survival_data([r])
        if data.unknown:
            continue
        cause = next(k for k, v in data.died_from.items() if v)
        place = ("unknown step", -1, "") if cause == "unknown step" else \
            (cause, int(data.time[0]), "" if cause == "censored" else str(data.label[0]))
        key = (r.version, r.scenario, r.condition_key(), *place)
        out[key] = out.get(key, 0) + 1
    return out


def _steps(ledger):
    return {(s.version, s.scenario, s.condition, s.cause, s.step, s.event): s.runs for s in ledger.steps()}


@pytest.mark.parametrize("hold", [None, 1])    # one short transaction, or batches written as built
def test_ingest_keeps_every_runs_place_as_survival_data_puts_it(ledger_url, hold):
    runs = _runs(700)
    with open_ledger(ledger_url) as ledger:
        if hold:
            ledger.HOLD_RUNS = hold
        ledger.ingest(runs[:500] + runs[:30])                  # repeats are not counted twice
        ledger.ingest(runs[250:])                              # half of it stored already
        expected = _expected(runs)
        assert _steps(ledger) == expected
        causes = {key[3] for key in expected}
        assert causes == {"censored", "died_at", "failed call", "unknown step"}
        assert any(key[5] == "end" for key in expected)       # a died_at past the last event
        # every run with a known outcome has exactly one place
        known = {(c.version, c.scenario, c.condition): c.trials - c.unknowns for c in ledger.counts()}
        placed = {}
        for key, n in expected.items():
            placed[key[:3]] = placed.get(key[:3], 0) + n
        assert placed == {k: v for k, v in known.items() if v}
        one = ledger.steps(version=runs[0].version, condition="noise=typos")
        assert {s.version for s in one} == {runs[0].version} and {s.condition for s in one} == {"noise=typos"}


def test_migration_0005_fills_the_steps_from_the_stored_bodies(ledger_url, monkeypatch):
    runs = _runs(300, seed=1)
    with open_ledger(ledger_url) as made, made.atomic():    # a ledger as 0003 left it
        made.ingest(runs)
        for table in ("steps", "trial_outcomes", "trial_outcomes_staged", "unit_cells"):
            made.execute(f"DROP TABLE {table}")
        made.execute("DELETE FROM migrations WHERE name IN ('0005_steps_where_runs_die', "
                     "'0006_trial_outcomes_and_unit_cells')")
        undo_trial_keys(made)
    monkeypatch.setattr(_base, "MIGRATIONS", _base.MIGRATIONS[:4])
    with open_ledger(ledger_url) as old:
        assert old.migrations()[-1] == "0004_pending_ingests"
    monkeypatch.undo()
    with open_ledger(ledger_url) as ledger:
        assert ledger.migrations()[-3:] == ["0005_steps_where_runs_die", "0006_trial_outcomes_and_unit_cells",
                                            "0007_one_run_per_trial"]
        assert _steps(ledger) == _expected(runs)
        ledger.ingest(_runs(100, seed=2))
        assert _steps(ledger) == _expected(runs + _runs(100, seed=2))


def test_the_tally_an_ingest_holds_is_small_per_place_and_counts_each_run():
    """An ingest holds the tally of every run it was offered until its last transaction: per
    version x scenario x condition x place. At a million runs over 10,000 scenarios that is
    hundreds of thousands of places, so each must stay small (packed counts, one tuple per distinct place): here
    under 120 bytes each (65 measured), where a tuple key and a list of three counts took 207
    (the place tuples, made before the count, not included). And the packed counts are exact:
    the trials, passes and unknowns of a direct count."""
    import tracemalloc

    from fluke.ledger._rows import RunRow
    from fluke.ledger._writer import tally, unpacked

    rng = random.Random(3)
    rows, expected = [], {}
    for i in range(60_000):
        scenario, step = f"scn-{i % 3000}", rng.randrange(20)
        ok = None if rng.random() < 0.1 else int(rng.random() < 0.5)
        place = None if ok is None else ("censored", 19, "") if ok else ("died_at", step, "lookup" + "")
        rows.append(RunRow(i, i, 7, scenario, "", ok, None, b"", place, i, scenario, None))
        n, k, u = expected.get((scenario, place), (0, 0, 0))
        expected[(scenario, place)] = (n + 1, k + (ok == 1), u + (ok is None))
    counts: dict = {}
    tracemalloc.start()
    try:
        tally(counts, rows)
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    got = {(group[1], place): unpacked(packed) for group, places in counts.items() for place, packed in places.items()}
    assert got == expected and len(got) > 20_000
    assert size / len(got) < 120, size / len(got)
