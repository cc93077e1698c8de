"""An ingest that finds most of a file's runs already stored from another file says so
(IngestResult.warnings), on SQLite and PostgreSQL: two agents' Terminal-Bench results whose
files do not name the agent would otherwise be merged into one version."""

from __future__ import annotations

import json

from fluke.adapters import read_file
from fluke.ledger import SourceOverlap


def _results(folder, outcomes):
    folder.mkdir(parents=True)
    trials = [{"task_id": f"task-{i}", "trial_name": f"task-{i}.1-of-1.run", "is_resolved": ok, "failure_mode": "unset"}
              for i, ok in enumerate(outcomes)]
    (folder / "results.json").write_text(json.dumps({"id": "r", "results": trials}))
    return folder / "results.json"


def test_second_agents_file_with_the_same_runs_warns(ledger, tmp_path):
    outcomes = [True, False, True, True, False]
    a = _results(tmp_path / "agent-a", outcomes)
    b = _results(tmp_path / "agent-b", outcomes[:4] + [True])     # 4 of 5 runs identical in content
    first = ledger.ingest(read_file(a))
    assert (first.added, first.warnings) == (5, ())
    again = ledger.ingest(read_file(a))                            # the same file again: no warning
    assert (again.added, again.skipped, again.warnings) == (0, 5, ())
    second = ledger.ingest(read_file(b))
    # the fifth is another run of a trial the ledger keeps (task-4, trial 0): skipped, and said
    assert (second.added, second.skipped, second.same_trial) == (0, 5, 1)
    [other] = second.same_trial_examples
    assert (other.scenario, other.trial) == ("task-4", 0)
    assert str(b) in other.source and str(a) in other.kept
    [warning] = second.warnings
    assert isinstance(warning, SourceOverlap)
    assert (warning.file, warning.checked, warning.already, warning.other_files) == (str(b), 5, 4, (str(a),))
    assert "--identity" in warning.message and str(a) in warning.message and str(warning) == warning.message


def test_the_same_file_by_another_path_is_no_warning(ledger, tmp_path, monkeypatch):
    a = _results(tmp_path / "agent-a", [True, False])
    ledger.ingest(read_file(a))
    monkeypatch.chdir(tmp_path)
    again = ledger.ingest(read_file("agent-a/results.json"))
    assert (again.skipped, again.warnings) == (2, ())


def test_identity_keeps_them_apart(ledger, tmp_path):
    outcomes = [True, False, True]
    a = _results(tmp_path / "agent-a", outcomes)
    b = _results(tmp_path / "agent-b", outcomes)
    ledger.ingest(read_file(a, identity={"model": "a"}))
    result = ledger.ingest(read_file(b, identity={"model": "b"}))
    assert (result.added, result.warnings) == (3, ())


def test_a_minority_overlap_is_no_warning(ledger, tmp_path):
    a = _results(tmp_path / "agent-a", [True, False, True, True])
    b = _results(tmp_path / "agent-b", [True, True, False, False])   # only task-0 coincides
    ledger.ingest(read_file(a))
    assert ledger.ingest(read_file(b)).warnings == ()


def test_large_ingests_written_batch_by_batch_warn_too(ledger, tmp_path, monkeypatch):
    # small batches and a low hold point make this ingest write each batch as it is built
    import fluke.ledger._ingest as ingest_module

    monkeypatch.setattr(ingest_module, "BATCH", 3)
    monkeypatch.setattr(ledger, "HOLD_RUNS", 3)
    outcomes = [i % 3 == 0 for i in range(12)]
    a = _results(tmp_path / "agent-a", outcomes)
    b = _results(tmp_path / "agent-b", outcomes)
    assert ledger.ingest(read_file(a)).added == 12
    second = ledger.ingest(read_file(b))
    assert second.skipped == 12
    [warning] = second.warnings
    assert (warning.checked, warning.already) == (12, 12)
