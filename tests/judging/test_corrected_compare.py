"""Versions compared on corrected rates: a lenient judge shrinks the gap between a good and a
weak version (it passes more of the weak one's failures); the audit stratified by version
corrects each rate and their difference."""

import json

from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

JUDGE = ('model: lenient\nendpoint: fake\nprompt: "PASS or FAIL?"\n'
         'target: {sensitivity: 0.97, specificity: 0.5, seed: 9}\n')


def test_the_corrected_difference_recovers_the_gap_the_judge_shrinks(tmp_path):
    import numpy as np

    rng = np.random.default_rng(3)
    db = str(tmp_path / "v.db")
    runs = [Run(scenario=f"s{i}", identity=Identity(model=model), outcome=Outcome(passed=bool(rng.random() < p)))
            for model, p in (("good", 0.7), ("weak", 0.5)) for i in range(1000)]
    with open_ledger(db) as led:
        led.ingest(runs)
    truth = {r.hash: r.outcome.passed for r in runs}
    rate = {m: np.mean([r.outcome.passed for r in runs if r.identity.model == m]) for m in ("good", "weak")}
    (tmp_path / "judge.yaml").write_text(JUDGE)
    cli = CliRunner()
    digest = json.loads(cli.invoke(group, ["--ledger", db, "--json", "judge", "run", str(tmp_path / "judge.yaml")])
                        .output)["judge"][:12]
    sample = tmp_path / "audit.jsonl"
    out = cli.invoke(group, ["--ledger", db, "judge", "audit", digest, "--draw", str(sample), "--size", "300",
                             "--strata", "version"])
    assert out.exit_code == 0, out.output
    rows = [json.loads(x) for x in sample.read_text().splitlines()]
    sample.write_text("".join(json.dumps({**r, "label": truth[r["run"]]}) + "\n" for r in rows))
    out = cli.invoke(group, ["--ledger", db, "--json", "judge", "audit", digest, "--labels", str(sample),
                             "--strata", "version"])
    assert out.exit_code == 0, out.output
    audit = json.loads(out.output)
    by = {s["stratum"].split(" (")[1].rstrip(")"): s for s in audit["by_stratum"]}
    with open_ledger(db) as led:
        stored = led.grades(audit["judge"])
    model_of = {r.hash: r.identity.model for r in runs}
    judge_rate = {m: np.mean([b["label"] for h, b in stored.items() if model_of[h] == m]) for m in rate}
    true_gap = rate["good"] - rate["weak"]
    assert abs((judge_rate["good"] - judge_rate["weak"]) - true_gap) > 0.05      # the judge shrinks the gap
    for m in rate:
        assert by[m]["low"] <= rate[m] <= by[m]["high"]
    (diff,) = audit["differences"]
    sign = 1 if diff["version"].endswith("(good)") else -1
    assert diff["low"] <= sign * true_gap <= diff["high"]
    assert diff["low"] > 0 or diff["high"] < 0                                   # the gap is told apart
