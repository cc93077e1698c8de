"""The documented workflow and its gate rule: the YAML parses, names its steps, and the rule it
checks is a valid gate rule (no network: nothing here runs the workflow)."""

from __future__ import annotations

from pathlib import Path

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
