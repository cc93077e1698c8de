"""One run per version × scenario × condition × trial, for every ingest (issue 27, point 1), on
SQLite (a real file) and PostgreSQL (a real server).

Two files of the same runs that differ only in what varies by accident (latency, event
timestamps, cost) used to store twice: their content hashes differ. Now the second copy of a
trial is skipped and reported (how many, and where a few of them and the run kept were read
from), the first is kept, and every tally (counts, trial outcomes, unit cells) counts it once.
A ledger holding such duplicates from before keeps them as they were through the migration.
"""

from __future__ import annotations

import orjson

from fluke.adapters import read_file
from fluke.analysis import ingest as ingest_files
from fluke.ledger import _ingest, open_ledger
from fluke.record import Identity, Outcome, Run, ToolCall, UserMessage


def _run(scenario: int, trial: int, jitter: float = 0.0, passed: bool | None = None, **extra) -> Run:
    """A run whose timing and cost move with ``jitter`` (and its outcome, if given, with ``passed``)."""
    ok = (scenario + trial) % 3 != 0 if passed is None else passed
    return Run(scenario=f"s{scenario}", trial=trial, identity=Identity(model="m", harness="h"),
               events=[UserMessage(text="go", t=jitter), ToolCall(tool="t", ok=True, t_start=jitter, t_end=jitter + 1)],
               latency=1.0 + jitter, cost={"usd": 0.01 + jitter}, outcome=Outcome(passed=ok), **extra)


def _write(path, runs) -> str:
    path.write_bytes(b"".join(orjson.dumps(r.model_dump(mode="json", exclude={"source"})) + b"\n" for r in runs))
    return str(path)


def _tallies(ledger) -> tuple:
    counts = sorted((c.scenario, c.trials, c.passes) for c in ledger.counts())
    trials = ledger.trial_outcomes()
    cells = sorted((c.scenario, c.trials, c.passes) for c in ledger.unit_cells())
    return counts, sorted(zip(trials.trial.tolist(), trials.outcome.tolist(), strict=True)), cells


def test_two_files_differing_only_in_timing_store_each_trial_once(ledger, tmp_path):
    runs = [_run(s, t) for s in range(6) for t in range(4)]
    first = _write(tmp_path / "a.jsonl", runs)
    second = _write(tmp_path / "b.jsonl", [_run(s, t, jitter=0.5) for s in range(6) for t in range(4)])
    kept = ledger.ingest(read_file(first, prepared=True))
    assert (kept.added, kept.skipped, kept.same_trial) == (24, 0, 0)
    before = _tallies(ledger)
    again = ledger.ingest(read_file(second, prepared=True))
    assert (again.added, again.skipped, again.same_trial) == (0, 24, 24)
    assert ledger.count() == 24 and _tallies(ledger) == before
    assert sorted(r.latency for r in ledger.runs()) == [1.0] * 24          # the first kept
    example = again.same_trial_examples[0]
    assert (example.scenario, example.trial) == ("s0", 0)
    assert "b.jsonl" in example.source and "a.jsonl" in example.kept
    # the same file again is the same runs, not other runs of their trials
    same = ledger.ingest(read_file(first, prepared=True))
    assert (same.added, same.skipped, same.same_trial) == (0, 24, 0)


def test_a_trial_repeated_in_one_file_keeps_the_first_and_counts_it_once(ledger, tmp_path):
    runs = [_run(0, 0), _run(1, 0), _run(0, 0, jitter=0.25, passed=False), _run(0, 1), _run(1, 0, jitter=2.0)]
    result = ledger.ingest(read_file(_write(tmp_path / "r.jsonl", runs), prepared=True))
    assert (result.added, result.skipped, result.same_trial) == (3, 2, 2)
    stored = {(r.scenario, r.trial): r for r in ledger.runs()}
    assert stored[("s0", 0)].latency == 1.0 and stored[("s1", 0)].latency == 1.0
    assert sorted((c.scenario, c.trials, c.passes) for c in ledger.counts()) == [
        ("s0", 2, int(runs[0].outcome.passed) + int(runs[3].outcome.passed)), ("s1", 1, int(runs[1].outcome.passed))]


def test_another_condition_or_version_is_its_own_trial(ledger):
    base = _run(0, 0)
    other_condition = _run(0, 0, jitter=1.0, condition={"lang": "fr"})
    other_version = _run(0, 0, jitter=1.0).model_copy(update={"identity": Identity(model="m2")})
    result = ledger.ingest([base, other_condition, other_version])
    assert (result.added, result.same_trial) == (3, 0)


def test_the_dedupe_holds_across_batches_of_a_large_ingest(ledger, monkeypatch):
    monkeypatch.setattr(_ingest, "BATCH", 50)      # many batches, and written as they come (staged on SQLite)
    monkeypatch.setattr(type(ledger), "HOLD_RUNS", 60)
    runs = [_run(s, t) for s in range(20) for t in range(10)]
    repeats = [_run(s, t, jitter=0.75) for s in range(12) for t in range(10) if (s + t) % 4 == 0]   # of runs[:120]
    result = ledger.ingest(runs[:120] + repeats + runs[120:])
    assert (result.added, result.skipped, result.same_trial) == (200, len(repeats), len(repeats))
    assert ledger.count() == 200 and sum(c.trials for c in ledger.counts()) == 200
    assert all(r.latency == 1.0 for r in ledger.runs())


def test_the_ingest_verb_says_which_runs_were_other_runs_of_a_kept_trial(ledger, tmp_path):
    first = _write(tmp_path / "a.jsonl", [_run(0, t) for t in range(3)])
    second = _write(tmp_path / "b.jsonl", [_run(0, t, jitter=0.5) for t in range(3)] + [_run(0, 3)])
    ingest_files(ledger, [first])
    report = ingest_files(ledger, [second])
    [row] = report.payload()["files"]
    assert (row["added"], row["skipped"], row["same_trial"]["runs"]) == (1, 3, 3)
    assert row["duplicates"]["before"] == 0 and row["duplicates"]["in_file"] == 0   # not "stored before"
    text = report.render("text", width=400)
    assert "3 another run of a trial the ledger keeps" in text
    assert "s0 trial 0 (" in text and "b.jsonl position 1; kept: " in text and "a.jsonl position 1" in text


def test_a_ledger_holding_two_runs_of_a_trial_from_before_keeps_both_through_the_migration(ledger_url):
    with open_ledger(ledger_url) as old:
        assert old.ingest([_run(0, 0), _run(0, 1)]).added == 2
        with old.atomic():
            old.execute("DROP INDEX runs_trial")     # content-addressed only, as before 0007
        assert old.ingest([_run(0, 0, jitter=0.5)]).added == 1     # so stored twice, and counted twice
        with old.atomic():                           # and the ledger as 0006 left it
            old.execute("ALTER TABLE runs DROP COLUMN t")
            old.execute("DELETE FROM migrations WHERE name = '0007_one_run_per_trial'")
        before = _tallies(old)
    assert sum(n for _, n, _ in before[0]) == 3
    with open_ledger(ledger_url) as ledger:
        assert ledger.migrations()[-1] == "0007_one_run_per_trial"
        assert ledger.count() == 3 and _tallies(ledger) == before       # nothing dropped, nothing recounted
        assert sorted(r.latency for r in ledger.runs()) == [1.0, 1.0, 1.5]
        keyed = ledger.query("SELECT COUNT(*) FROM runs WHERE t IS NOT NULL")[0][0]
        assert keyed == 2                                                # the first of each trial holds its key
        late = ledger.ingest([_run(0, 0, jitter=0.9), _run(0, 1, jitter=0.9), _run(0, 2)])
        assert (late.added, late.same_trial) == (1, 2)
        # the second copy from before is still there and still skipped by content
        assert ledger.ingest([_run(0, 0, jitter=0.5)]).added == 0
