"""fluke.analysis.calibration on real τ-bench runs: predictions recorded after the first half of the
trials, scored against the second half (the pairing the CLI used to do, now in the library)."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from fluke import analysis
from fluke.cli import group
from fluke.errors import EmptyLedgerError, UsageError
from fluke.inference import score_predictions
from fluke.ledger import open_ledger

from ..conftest import TAU_AIRLINE, need


def fluke(url, *args):
    result = CliRunner().invoke(group, ["--ledger", url, *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def halves(tmp_path_factory):
    """Trials 0-1 ingested, predictions made from them, then trials 2-3 ingested (the same version)."""
    raw = json.loads(need(TAU_AIRLINE).read_text())
    folder = tmp_path_factory.mktemp("cal")
    first, second = folder / "first.json", folder / "second.json"
    first.write_text(json.dumps([r for r in raw if r["trial"] < 2]))
    second.write_text(json.dumps([r for r in raw if r["trial"] >= 2]))
    url = str(folder / "tau.db")
    fluke(url, "ingest", first, "--identity", "model=gpt-4o")
    with open_ledger(url) as ledger:
        assert analysis.calibration(ledger).to_dict()["scored_runs"] == 0
    fluke(url, "predict", "--version", "model=gpt-4o")
    fluke(url, "ingest", second, "--identity", "model=gpt-4o")
    with open_ledger(url) as ledger:
        yield ledger, [r for r in raw if r["trial"] >= 2]


def _old_score(s):
    """What cli/_believe_print.py's _score_json printed."""
    return dict(predictions=s.predictions, brier=s.brier, baseline_brier=s.baseline_brier, skill=s.skill,
                reliability=s.decomposition.reliability, resolution=s.decomposition.resolution,
                uncertainty=s.decomposition.uncertainty, within_bin=s.decomposition.within_bin,
                z=s.test.statistic, pvalue=s.test.pvalue, expected_brier=s.test.expected_brier,
                verdict=s.verdict, table=s.table.rows())


def test_calibration_scores_only_the_runs_after_the_predictions(halves):
    ledger, later = halves
    preds = {d.body["scenario"]: d.body for d in ledger.documents("prediction")}
    assert len(preds) == 50
    p = np.array([preds[f"airline/{r['task_id']}"]["probability"] for r in later])
    y = np.array([int(r["reward"] == 1.0) for r in later])
    result = analysis.calibration(ledger, bins=5)
    doc = result.to_dict()
    assert (doc["predictions"], doc["scored_runs"], doc["unknowns"]) == (50, 100, 0)
    assert doc["overall"]["brier"] == pytest.approx(np.mean((p - y) ** 2), abs=1e-12)
    assert doc["overall"]["baseline_brier"] == pytest.approx(np.mean((y.mean() - y) ** 2), abs=1e-12)
    # the whole document is what the CLI printed before: score_predictions on the same pairs
    families = [preds[f"airline/{r['task_id']}"].get("family") for r in later]
    order = np.lexsort((p, y))  # the ledger's run order may differ from the file's; the scores do not
    report = score_predictions(list(p[order]), list(y[order]), families=[families[i] for i in order], bins=5)
    expected = {"predictions": 50, "scored_runs": 100, "unknowns": 0, "overall": _old_score(report.overall),
                "by_family": {f: _old_score(s) for f, s in report.by_family.items()}}
    got = {k: doc[k] for k in expected}
    assert set(got["by_family"]) == set(expected["by_family"])
    for name, want in [("overall", expected["overall"])] + [(f, s) for f, s in expected["by_family"].items()]:
        have = got["overall"] if name == "overall" else got["by_family"][name]
        assert set(have) == set(want)
        for key, value in want.items():
            if isinstance(value, float):
                assert have[key] == pytest.approx(value, rel=1e-9, nan_ok=True), (name, key)
            else:
                assert have[key] == value, (name, key)
    assert got["predictions"] == 50 and got["unknowns"] == 0
    tokens = MarkdownIt("commonmark").enable("table").parse(result.render("markdown"))
    assert sum(t.type == "table_open" for t in tokens) == 1 + len(report.by_family)
    text = result.render()
    assert text.startswith("100 runs scored against predictions made before they were recorded. Brier ")
    assert "always predicting the average" in text


def test_calibration_for_one_version_and_refusals(halves, tmp_path):
    ledger, _ = halves
    assert analysis.calibration(ledger, version="model=gpt-4o").scored_runs == 100
    with pytest.raises(UsageError, match="bins=0"):
        analysis.calibration(ledger, bins=0)
    empty = open_ledger(str(tmp_path / "empty.db"))
    with pytest.raises(EmptyLedgerError):
        analysis.calibration(empty)
    m = analysis.read_prediction_matches(ledger)
    assert (m.outcome.size, m.predictions, set(m.outcome.tolist())) == (100, 50, {0.0, 1.0})
