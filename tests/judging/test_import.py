"""Judgments other tools made are read, not re-judged: an Inspect log's scorer (the real sample in
../shared/formats) and a CSV of run, label."""

import json

import pytest
from click.testing import CliRunner

from fluke.adapters._registry import read_file
from fluke.cli import group
from fluke.ledger import open_ledger
from tests.conftest import SHARED

EVAL = SHARED / "formats" / "samples" / "inspect_ai" / "tiny_tools_epochs3.eval"


@pytest.fixture()
def inspect_log():
    if not EVAL.exists():
        pytest.skip(f"the Inspect sample is not at {EVAL}")
    return str(EVAL)


def test_an_inspect_scorer_is_imported_as_a_judge(inspect_log, tmp_path):
    db = str(tmp_path / "i.db")
    assert CliRunner().invoke(group, ["--ledger", db, "ingest", inspect_log]).exit_code == 0
    out = CliRunner().invoke(group, ["--ledger", db, "--json", "judge", "import", inspect_log, "--name", "match"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    expected = {(r.scenario, r.trial): r.outcome.passed for r in read_file(inspect_log)}
    assert doc["imported"] == len(expected) and doc["unmatched"] == 0
    with open_ledger(db) as led:
        stored = led.grades(doc["judge"])
        runs = {r.hash: (r.scenario, r.trial) for r in led.runs()}
        config = [d.body for d in led.documents("judge") if d.digest == doc["judge"]][0]
    assert {runs[h]: b["label"] for h, b in stored.items()} == expected
    assert config["endpoint"] == "imported" and config["target"]["grader"]["inspect_scorer"] == "match"
    # imported judgments cannot be re-asked
    again = CliRunner().invoke(group, ["--ledger", db, "judge", "run", str(_yaml(tmp_path, config))])
    assert again.exit_code == 2 and "cannot be asked again" in again.output


def _yaml(tmp_path, config):
    path = tmp_path / "imported.json"
    path.write_text(json.dumps(config))
    return path


def test_a_csv_of_run_and_label_is_imported(tmp_path):
    from fluke.record import Identity, Outcome, Run

    db = str(tmp_path / "c.db")
    runs = [Run(scenario=f"s{i}", identity=Identity(model="m"), outcome=Outcome(passed=i % 2 == 0)) for i in range(6)]
    with open_ledger(db) as led:
        led.ingest(runs)
    csv = tmp_path / "deepeval.csv"
    csv.write_text("run,score\n" + "".join(f"{r.hash},{1 if i < 4 else 0}\n" for i, r in enumerate(runs))
                   + "f" * 64 + ",1\n")
    out = CliRunner().invoke(group, ["--ledger", db, "--json", "judge", "import", str(csv), "--name", "geval"])
    doc = json.loads(out.output)
    assert (doc["imported"], doc["unmatched"]) == (6, 1)
    assert doc["judge_pass_rate"] == pytest.approx(4 / 6)
