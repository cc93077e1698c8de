"""The `fluke run` verb: a suite file in, a table or JSON out, exit 1 when the gate fails."""

from __future__ import annotations

import textwrap

import orjson
import pytest
from click.testing import CliRunner

from fluke.cli import group

SUITE = textwrap.dedent('''
    from fluke.record import ToolCall
    from fluke.runner import Case, Trajectory

    cases = [Case("refund", input="refund W1", check=lambda out: out == "done"),
             {"name": "lookup", "input": "find W2", "expect": lambda out: out == "found"}]
    identity = {"model": "toy-1"}
    k = 2

    def agent(text, *, trial, rng):
        if text.startswith("find") and trial == 1:
            raise TimeoutError("model API timed out")
        return Trajectory([ToolCall(tool="get_order", args={"id": text.split()[-1]}, ok=True)],
                          output="done" if text.startswith("refund") else "found")
''')


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "suite.py"
    path.write_text(SUITE)
    return path


def test_json_output_and_gate_exit_code(suite):
    result = CliRunner().invoke(group, ["run", str(suite), "--no-ledger", "--json"])
    assert result.exit_code == 1, result.output       # a run raised: a hard violation
    doc = orjson.loads(result.stdout)
    assert doc["kind"] == "run" and doc["k"] == 2 and doc["identity"] == {"model": "toy-1"}
    assert [(c["scenario"], c["runs"], c["passed"], c["judged"], c["errors"]) for c in doc["cases"]] == [
        ("refund", 2, 2, 2, 0), ("lookup", 2, 1, 1, 1)]
    failed = [r for r in doc["runs"] if r["error"]]
    assert [(r["scenario"], r["trial"], r["violations"][0]["check"]) for r in failed] == [("lookup", 1, "run_error")]
    assert doc["gate"]["passed"] is False
    assert doc["gate"]["reasons"] == ["lookup: hard violation in 1 of 2 runs"]
    assert doc["luck"] is None                          # no spec: nothing graded


def test_k_and_identity_from_the_command_line(suite):
    result = CliRunner().invoke(group, ["run", str(suite), "--k", "1", "--identity", "model=toy-2",
                                        "--no-ledger", "--json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)
    assert doc["k"] == 1 and doc["identity"] == {"model": "toy-2"} and doc["gate"]["passed"] is True


def test_table_output(suite):
    result = CliRunner().invoke(group, ["run", str(suite), "--no-ledger"])
    assert result.exit_code == 1
    assert "100.0% (2/2)" in result.output and "100.0% (1/1)" in result.output
    assert "raised: lookup trial 1: agent raised TimeoutError: model API timed out" in result.output
    assert "lookup: hard violation in 1 of 2 runs" in result.output
    assert "conditional on version" in result.output


def test_bad_suite_files(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    result = CliRunner().invoke(group, ["run", str(empty), "--no-ledger"])
    assert result.exit_code == 2
    assert "empty.py: field cases: is not defined" in result.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("cases = [\n")
    from fluke.errors import InputError
    from fluke.runner import load_suite
    with pytest.raises(InputError, match="broken.py: line 1: is not valid Python"):
        load_suite(broken)
    with pytest.raises(InputError, match="field cases: is not defined"):
        load_suite(empty)


def test_writes_to_the_ledger_and_resumes(suite, tmp_path):
    db = str(tmp_path / "fluke.db")
    first = CliRunner().invoke(group, ["--ledger", db, "run", str(suite), "--json"])
    assert orjson.loads(first.stdout)["added"] == 4
    again = CliRunner().invoke(group, ["--ledger", db, "run", str(suite), "--json"])
    doc = orjson.loads(again.stdout)
    assert (doc["added"], doc["resumed"]) == (0, 4)


def test_spec_grades_and_prints_the_luck_rate(suite, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("tools: [get_order, refund]\nrequired: [refund]\nseverity:\n  required: warn\n")
    result = CliRunner().invoke(group, ["--ledger", str(tmp_path / "l.db"), "run", str(suite),
                                        "--spec", str(spec), "--json"])
    doc = orjson.loads(result.stdout)
    # Every green run skipped the required refund (a warning): all green runs were lucky.
    assert doc["luck"]["pooled"]["lucky"] == 3 and doc["luck"]["pooled"]["green"] == 3
    assert doc["spec_digest"] and doc["gate"]["passed"] is False   # the raised run is hard


def test_bad_spec_file_exits_2_before_running(suite, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("tools: [get_order]\nforbiden: [refund]\n")
    result = CliRunner().invoke(group, ["run", str(suite), "--spec", str(spec), "--no-ledger"])
    assert result.exit_code == 2 and "forbiden" in result.stderr


def test_spec_named_in_the_suite_is_relative_to_it(tmp_path, monkeypatch):
    (tmp_path / "spec.yaml").write_text("tools: [get_order]\nforbidden: [get_order]\n")
    path = tmp_path / "suite.py"
    path.write_text(SUITE + '\nspec = "spec.yaml"\n')
    monkeypatch.chdir("/")
    result = CliRunner().invoke(group, ["run", str(path), "--no-ledger", "--json"])
    doc = orjson.loads(result.stdout)
    assert doc["spec_digest"] is not None
    forbidden = [v for r in doc["runs"] for v in r["violations"] if v["check"] == "forbidden"]
    assert len(forbidden) == 3          # every run that reached the tool (one raised first)
