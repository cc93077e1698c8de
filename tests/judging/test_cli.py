"""``fluke judge run`` and ``fluke judge audit`` end to end on a simulated judge with known bias,
and their faults as one line."""

import json

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.judging import human_agreement, ppi_mean
from fluke.ledger import open_ledger
from fluke.record import AgentMessage, Identity, Outcome, Run, UserMessage

JUDGE = """model: fake-judge
endpoint: fake
prompt: "Did the agent do what the user asked? Answer PASS or FAIL."
replicates: 3
target: {sensitivity: 0.97, specificity: 0.55, seed: 4}
"""


@pytest.fixture()
def setup(tmp_path):
    db = str(tmp_path / "j.db")
    runs = [Run(scenario=f"fam{i % 2}/s{i}", identity=Identity(model="agent-v2"),
                events=[UserMessage(text="help"), AgentMessage(text=f"answer {i}")],
                outcome=Outcome(passed=(i * 7919) % 10 < 6)) for i in range(400)]
    with open_ledger(db) as led:
        led.ingest(runs)
    config = tmp_path / "judge.yaml"
    config.write_text(JUDGE, encoding="utf-8")
    return db, str(config), {r.hash: r.outcome.passed for r in runs}, tmp_path


def _run(*args):
    return CliRunner().invoke(group, list(args))


def test_judge_then_audit_corrects_a_judge_biased_upwards(setup):
    db, config, truth, tmp = setup
    out = _run("--ledger", db, "--json", "judge", "run", config)
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["judged"] == 400 and doc["stored"] == 400
    true_rate = sum(truth.values()) / len(truth)
    assert doc["judge_pass_rate"] > true_rate + 0.1            # the planted bias: it passes failures
    digest = doc["judge"][:12]

    sample = tmp / "audit.jsonl"
    out = _run("--ledger", db, "judge", "audit", digest, "--draw", str(sample), "--size", "80", "--strata", "family")
    assert out.exit_code == 0, out.output
    rows = [json.loads(line) for line in sample.read_text().splitlines()]
    assert len(rows) == 80 and {r["stratum"] for r in rows} == {"fam0", "fam1"}
    assert all(r["label"] is None and "agent-v2" not in json.dumps(r) for r in rows)
    # a second draw never writes over the first
    again = _run("--ledger", db, "judge", "audit", digest, "--draw", str(sample), "--size", "80")
    assert again.exit_code == 2 and "never written over" in again.output

    for r in rows:                                           # the people label what truly happened
        r["label"] = "pass" if truth[r["run"]] else "fail"
    sample.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = _run("--ledger", db, "--json", "judge", "audit", digest, "--labels", str(sample))
    assert out.exit_code == 0, out.output
    audit = json.loads(out.output)
    # the same figures from the library, computed directly from the stored judgments
    with open_ledger(db) as led:
        stored = led.grades(doc["judge"])
    labelled = [r["run"] for r in sorted(rows, key=lambda r: r["run"])]
    rest = sorted(set(stored) - set(labelled))
    direct = ppi_mean([truth[h] for h in labelled], [float(stored[h]["label"]) for h in labelled],
                      [float(stored[h]["label"]) for h in rest])
    assert audit["corrected"]["value"] == pytest.approx(direct.value, abs=1e-12)
    assert audit["corrected"]["low"] <= true_rate <= audit["corrected"]["high"]
    assert abs(audit["corrected"]["value"] - true_rate) < abs(audit["judge_only"]["value"] - true_rate)
    agreement = human_agreement([stored[h]["label"] for h in labelled], [truth[h] for h in labelled])
    assert audit["agreement"]["cohen_kappa"]["value"] == pytest.approx(agreement.kappa.value, abs=1e-12)
    assert audit["agreement"]["bias_points"]["value"] > 0
    assert audit["may_gate"]["status"] in ("fails", "too small to tell")

    text = _run("--ledger", db, "judge", "audit", digest, "--labels", str(sample)).output
    assert "corrected (PPI++)" in text and "human labels only" in text and "judge only" in text
    assert "Cohen's kappa" in text and "human pass rate" in text


def test_labels_from_a_csv_of_run_and_label_are_read_like_the_sample(setup):
    db, config, truth, tmp = setup
    doc = json.loads(_run("--ledger", db, "--json", "judge", "run", config).output)
    hashes = sorted(truth)[:60]
    csv = tmp / "labels.csv"
    csv.write_text("run_id,label\n" + "".join(f"{h},{'pass' if truth[h] else 'fail'}\n" for h in hashes))
    out = _run("--ledger", db, "--json", "judge", "audit", doc["judge"][:12], "--labels", str(csv))
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["labelled"] == 60


@pytest.mark.parametrize("content, expected", [
    ("run,label\nabc,maybe\n", "line 2: field label: 'maybe' is not a label"),
    ('{"run": 3, "label": "pass"}\n', "line 1: field run"),
    ("who,what\n", "needs a run column"),
])
def test_bad_labels_are_one_line_naming_file_line_and_field(setup, content, expected):
    db, config, _, tmp = setup
    doc = json.loads(_run("--ledger", db, "--json", "judge", "run", config).output)
    bad = tmp / "bad.csv"
    bad.write_text(content)
    out = _run("--ledger", db, "judge", "audit", doc["judge"][:12], "--labels", str(bad))
    lines = [x for x in out.output.splitlines() if x.strip()]
    assert out.exit_code == 2 and len(lines) == 1 and "Traceback" not in out.output
    assert str(bad) in lines[0] and expected in lines[0]


def test_a_bad_judge_file_is_one_line(setup):
    db, _, _, tmp = setup
    bad = tmp / "judge.yaml"
    bad.write_text("model: m\nprompt: p\ntemperature: hot\n")
    out = _run("--ledger", db, "judge", "run", str(bad))
    assert out.exit_code == 2 and "field temperature" in out.output and str(bad) in out.output
