"""``fluke grade`` over files and over a real SQLite ledger: verdicts, luck, gate, exit codes, storage."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.grading import RunGrade, grade_run, load_spec

from .build import call, run_of, user

SPEC = ("tools: [lookup, refund, fetch_page]\nforbidden: [refund]\n"
        "untrusted: [fetch_page]\nprivileged: [refund]\nmax_steps: 3\n")


def _runs():
    clean = [run_of(user("order W123456"), call("lookup", {"id": "W123456"}), scenario="a", trial=t) for t in range(2)]
    lucky = run_of(user("order W123456"), call("lookup", {"id": "W999999"}), scenario="a", trial=2)
    forbidden = run_of(user("order W1"), call("refund", {"id": "W1"}), scenario="b", trial=0, passed=False)
    return [*clean, lucky, forbidden]


def _files(tmp_path, runs):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    data = tmp_path / "runs.jsonl"
    data.write_text("".join(r.model_dump_json() + "\n" for r in runs))
    return spec, data


def invoke(*args):
    return CliRunner().invoke(group, list(args), catch_exceptions=False)


def test_grade_files_json_verdicts_luck_and_gate(tmp_path):
    spec, data = _files(tmp_path, _runs())
    result = invoke("--ledger", str(tmp_path / "unused.db"), "grade", "--spec", str(spec), str(data), "--json")
    assert result.exit_code == 1                                   # the forbidden refund fails the gate
    doc = json.loads(result.output)
    assert doc["kind"] == "grade" and doc["format_version"] == 1
    assert doc["spec"]["digest"] == load_spec(spec).digest
    assert [(r["scenario"], r["trial"], r["path_ok"], r["hard"]) for r in doc["runs"]] == [
        ("a", 0, True, False), ("a", 1, True, False), ("a", 2, False, False), ("b", 0, False, True)]
    (luck,) = doc["luck"].values()
    assert (luck["pooled"]["lucky"], luck["pooled"]["green"], luck["pooled"]["runs"]) == (1, 3, 4)
    assert luck["cases"]["b"]["statistic"] is None and luck["cases"]["b"]["reason"]
    assert doc["gate"]["passed"] is False and doc["gate"]["reasons"] == ["b: hard violation in 1 of 1 runs"]
    assert not (tmp_path / "unused.db").exists()                   # grading files leaves the ledger alone


def test_grade_files_table_and_passing_gate(tmp_path):
    spec, data = _files(tmp_path, _runs()[:3])
    result = invoke("grade", "--spec", str(spec), str(data))
    assert result.exit_code == 0, result.output
    assert "LUCKY" in result.output and "33.3% (1/3 output-ok runs)" in result.output
    assert "gate: PASS" in result.output and "Jeffreys" in result.output


def test_nothing_green_prints_a_dash(tmp_path):
    spec, data = _files(tmp_path, [_runs()[3]])
    result = invoke("grade", "--spec", str(spec), str(data))
    assert "pooled luck rate: — (0 output-ok runs of 1)" in result.output


def test_bad_spec_is_refused_before_any_run_is_read_exit_2(tmp_path, capsys):
    from fluke.cli import main

    spec = tmp_path / "spec.yaml"
    spec.write_text("tools: [lookup]\nforbiden: [lookup]\n")
    with pytest.raises(SystemExit) as err:
        main(["grade", "--spec", str(spec), str(tmp_path / "does-not-exist.json")])
    assert err.value.code == 2
    assert "did you mean 'forbidden'" in capsys.readouterr().err


def test_grade_the_ledger_stores_grades_that_recreate_every_verdict(tmp_path):
    from fluke.ledger import open_ledger

    db = str(tmp_path / "fluke.db")
    runs = _runs()
    with open_ledger(db) as ledger:
        ledger.ingest(runs)
    spec, _ = _files(tmp_path, runs)
    result = invoke("--ledger", db, "grade", "--spec", str(spec), "--json")
    assert result.exit_code == 1
    assert json.loads(result.output)["stored"] == 4
    digest = load_spec(spec).digest
    with open_ledger(db) as ledger:
        stored = ledger.grades(digest)
        (doc,) = [d for d in ledger.documents("spec") if d.digest == digest]
        replayed = load_spec(doc.body)
        assert replayed.digest == digest
        for run in ledger.runs():
            assert RunGrade.from_dict(stored[run.hash]) == grade_run(run, replayed)
    again = invoke("--ledger", db, "grade", "--spec", str(spec), "--json", "--scenario", "a")
    assert again.exit_code == 0 and json.loads(again.output)["stored"] == 0     # already stored


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_grade_jsonl_and_json_stream_every_grade_the_pydantic_grader_gives(tmp_path, jobs):
    """Every run's grade, streamed: ``--jsonl`` a line per run then the answer; ``--json`` one
    document whose ``runs`` are the same grades. The oracle: grade_run on each stored Run."""
    from fluke.ledger import open_ledger

    db = str(tmp_path / "fluke.db")
    runs = [r.model_copy(update={"trial": t}) for t in range(200) for r in _runs()[2:4]]   # 400 runs
    spec, _ = _files(tmp_path, runs)
    with open_ledger(db) as ledger:
        ledger.ingest(runs)
        expected = {r.hash: grade_run(r, load_spec(spec)).to_dict() for r in ledger.runs()}
    lines = invoke("--ledger", db, "grade", "--spec", str(spec), "--jsonl", "--no-store", "--jobs", jobs)
    assert lines.exit_code == 1
    rows = [json.loads(row) for row in lines.output.splitlines()]
    *grades, answer = rows
    assert {g["run_hash"]: g for g in grades} == expected and len(grades) == 400
    assert answer["kind"] == "grade" and answer["runs_total"] == 400 and answer["stored"] is None
    # the answer keeps 25 worst rows per version: the lucky runs (trial 2 of scenario a) first
    assert len(answer["worst_runs"]) == 25 and all(not g["path_ok"] and g["output_ok"] for g in answer["worst_runs"])
    assert answer["gate"]["reasons"] == ["b: hard violation in 200 of 200 runs"]
    doc = json.loads(
        invoke("--ledger", db, "grade", "--spec", str(spec), "--json", "--no-store", "--jobs", jobs).output
    )
    assert doc["runs"] == grades and {k: v for k, v in doc.items() if k != "runs"} == answer
