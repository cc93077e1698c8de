"""The documented workflow and its gate rule: the YAML parses, names its steps, and the rule it
checks is a valid gate rule (no network: nothing here runs the workflow)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from fluke.analysis import load_gate_rule

CI = Path(__file__).resolve().parents[2] / "examples" / "ci"


def test_the_workflow_parses_and_names_every_step():
    doc = yaml.safe_load((CI / "github-actions.yml").read_text())
    triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request" in triggers and triggers["push"]["branches"] == ["main"]
    assert doc["permissions"]["pull-requests"] == "write"
    steps = doc["jobs"]["evals"]["steps"]
    names = [s["name"] for s in steps]
    assert all(names) and len(set(names)) == len(names)
    assert names == ["Check out", "Set up Python", "Install", "Restore the ledger", "Run the agent tests",
                     "Check the release gate", "Post or update the pull-request comment", "Save the ledger",
                     "Upload the ledger", "Fail when the tests or the gate did not hold"]
    by = {s["name"]: s for s in steps}
    assert "-n 2" in by["Run the agent tests"]["run"] and by["Run the agent tests"]["continue-on-error"]
    gate = by["Check the release gate"]["run"]
    assert "gate examples/ci/gate.yaml --format markdown" in gate and "--baseline" in gate
    assert "gh pr comment" in by["Post or update the pull-request comment"]["run"]
    assert "--edit-last" in by["Post or update the pull-request comment"]["run"]
    assert "secrets.FLUKE_LEDGER_URL" in doc["jobs"]["evals"]["env"]["FLUKE_LEDGER"]
    assert by["Restore the ledger"]["uses"].startswith("actions/cache/restore@")
    assert by["Save the ledger"]["with"]["key"] == by["Restore the ledger"]["with"]["key"]


def test_the_workflows_gate_rule_is_valid_and_its_spec_exists():
    rule, raw = load_gate_rule(CI / "gate.yaml")
    assert rule["gate"] and rule["reliable"]["bar"] == 0.8 and rule["compare"]["baseline"] == "harness=main"
    assert Path(rule["spec"]).is_file()
    assert raw.startswith(b"# The release gate")


def _workflow() -> dict:
    return yaml.safe_load((CI / "github-actions.yml").read_text())


def test_the_workflow_is_valid_against_githubs_workflow_schema():
    # SchemaStore's github-workflow schema, the file check-jsonschema vendors (read, not imported:
    # no network, and its command line is not needed)
    import importlib.util
    import json

    jsonschema = pytest.importorskip("jsonschema")
    spec = importlib.util.find_spec("check_jsonschema")
    if spec is None or spec.origin is None:
        pytest.skip("check-jsonschema (the workflow schema) is not installed: pip install check-jsonschema")
    schema_file = Path(spec.origin).parent / "builtin_schemas" / "vendor" / "github-workflows.json"
    schema = json.loads(schema_file.read_text())
    doc = _workflow()
    doc["on"] = doc.pop(True, doc.get("on"))   # YAML 1.1 reads a bare `on` as true; GitHub reads it as on
    jsonschema.Draft7Validator(schema).validate(doc)
    broken = {**doc, "jobs": {"evals": {**doc["jobs"]["evals"], "runs-on": None}}}
    assert list(jsonschema.Draft7Validator(schema).iter_errors(broken))    # the schema can fail


def test_the_workflow_installs_fluke_from_a_declared_source():
    doc = _workflow()
    install = next(s for s in doc["jobs"]["evals"]["steps"] if s["name"] == "Install")["run"]
    assert '"fluke[postgres] @ $FLUKE_SOURCE"' in install
    assert 'pip install "fluke[postgres]" ' not in install        # not by name from the package index
    assert doc["jobs"]["evals"]["env"]["FLUKE_SOURCE"] == "${{ vars.FLUKE_SOURCE }}"
    assert "exit 1" in install and "::error title=fluke::set the repository variable FLUKE_SOURCE" in install


def _gate_script() -> str:
    step = next(s for s in _workflow()["jobs"]["evals"]["steps"] if s["name"] == "Check the release gate")
    return step["run"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_gate_steps_exit_2_leaves_the_error_in_the_comment_file(tmp_path):
    # The step as written, run by bash with `fluke` on PATH, on a ledger whose base commit has no
    # runs: the gate exits 2, and the comment the next step posts holds its error, inert.
    import sys

    from fluke.ledger import open_ledger
    from fluke.record import Identity, Outcome, Run

    ledger = tmp_path / "fluke.db"
    with open_ledger(str(ledger)) as led:
        led.ingest([Run(scenario="refund/@octocat", trial=t, identity=Identity(harness="head"),
                        outcome=Outcome(passed=True)) for t in range(3)])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    src = Path(__file__).resolve().parents[2] / "src"
    (bin_dir / "fluke").write_text(f'#!/bin/sh\nPYTHONPATH="{src}" exec "{sys.executable}" -m fluke.cli "$@"\n')
    (bin_dir / "fluke").chmod(0o755)
    (tmp_path / "examples").symlink_to(CI.parent)
    out, summary = tmp_path / "github_output", tmp_path / "summary.md"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FLUKE_LEDGER": str(ledger), "FLUKE_HARNESS": "head",
           "BASE": "never-recorded", "GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary)}
    done = subprocess.run(["bash", "-e", "-c", _gate_script()], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0                         # the step itself succeeds; the last step fails the job
    assert out.read_text().strip() == "code=2"
    comment = (tmp_path / "gate.md").read_text()
    assert comment.startswith("## fluke gate could not decide (exit 2)")
    error = (tmp_path / "gate.err").read_text().strip()
    assert error.startswith("fluke: error:") and "never-recorded" in error
    assert f"    {error.splitlines()[0]}" in comment   # the error itself, as an indented code block
    assert "never-recorded" in done.stderr             # and in the job's log
    assert summary.read_text() == comment
