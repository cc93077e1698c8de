"""Every Eval Ever export: each document validates against the vendored v0.2.1 schema; its
uncertainty is fluke's interval, checked against scipy's Beta and the interval verb."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import stats

from fluke.cli import group
from fluke.exports import eee_schema

from .conftest import planted_runs

jsonschema = pytest.importorskip("jsonschema")
SCHEMAS = Path(__import__("fluke.exports", fromlist=["x"]).__file__).parent / "schemas"


def test_the_vendored_schema_is_the_published_file_it_names():
    source = (SCHEMAS / "every_eval_ever-0.2.1.SOURCE.txt").read_text(encoding="utf-8")
    sha = re.search(r"sha256:\s+([0-9a-f]{64})", source).group(1)
    raw = (SCHEMAS / "every_eval_ever-0.2.1.schema.json").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == sha
    assert "github.com/evaleval/every_eval_ever" in source and "v0.2.1" in source
    schema = eee_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["version"] == "0.2.1"


def _documents(path, tmp_path, *args) -> list[dict]:
    out = tmp_path / "e.jsonl"
    result = CliRunner().invoke(group, ["--ledger", str(path), "export", "--format", "eee", "-o", str(out), *args])
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_every_document_validates_and_carries_flukes_uncertainty(planted, tmp_path):
    path, _ = planted
    docs = _documents(path, tmp_path)
    validator = jsonschema.Draft7Validator(eee_schema())
    for doc in docs:
        errors = sorted(validator.iter_errors(doc), key=str)
        assert not errors, errors[0]
    by_model = {d["model_info"]["id"]: d for d in docs}
    assert set(by_model) == {"a", "b"}
    runs = planted_runs()
    interval = json.loads(CliRunner().invoke(group, ["--ledger", str(path), "--json", "interval", "--unit",
                                                     "scenario"]).stdout)
    for model, doc in by_model.items():
        mine = [r for r in runs if r.identity.model == model]
        suite, *scenarios = doc["evaluation_results"]
        passes = sum(r.outcome.passed is True for r in mine)
        assert suite["score_details"]["score"] == pytest.approx(passes / len(mine))
        u = suite["score_details"]["uncertainty"]
        assert u["num_samples"] == len(mine)
        [given] = [v for v in interval["versions"] if v["version"] == mine[0].version]
        assert (u["confidence_interval"]["lower"], u["confidence_interval"]["upper"]) == pytest.approx(
            (given["clustered"]["low"], given["clustered"]["high"]))
        assert u["standard_error"]["value"] == pytest.approx(given["clustered"]["standard_error"])
        assert len(scenarios) == 6
        for entry in scenarios:
            name = entry["evaluation_name"].removeprefix("fluke pass rate: ")
            k = sum(r.outcome.passed is True for r in mine if r.scenario == name)
            n = sum(r.scenario == name for r in mine)
            beta = stats.beta(1 + k, 1 + n - k)
            ci = entry["score_details"]["uncertainty"]["confidence_interval"]
            assert (ci["lower"], ci["upper"]) == pytest.approx(tuple(beta.ppf([0.025, 0.975])), abs=1e-9)
            assert entry["score_details"]["uncertainty"]["standard_error"]["value"] == pytest.approx(beta.std())
            assert entry["score_details"]["score"] == pytest.approx(k / n)


def test_the_identity_is_stable_across_exports_and_distinct_per_version(planted, tmp_path):
    path, _ = planted
    first = [d["evaluation_id"] for d in _documents(path, tmp_path)]
    again = [d["evaluation_id"] for d in _documents(path, tmp_path)]
    assert first == again and len(set(first)) == 2
    assert all(re.fullmatch(r"fluke/[ab]/\d+", e) for e in first)


def test_one_scenario_gives_no_suite_interval_and_says_too_small(tmp_path):
    from fluke.ledger import open_ledger
    from fluke.record import Identity, Outcome, Run

    path = tmp_path / "one.db"
    with open_ledger(str(path)) as ledger:
        ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t < 3))
                       for t in range(5)])
    [doc] = _documents(path, tmp_path)
    jsonschema.validate(doc, eee_schema())
    suite = doc["evaluation_results"][0]["score_details"]
    assert "confidence_interval" not in suite["uncertainty"] and suite["uncertainty"]["num_samples"] == 5
    assert "too small to tell" in suite["details"]["rests_on"]


def test_under_exclude_a_run_of_unknown_outcome_is_left_out_of_rate_and_samples(planted, tmp_path):
    path, _ = planted
    docs = {d["model_info"]["id"]: d for d in _documents(path, tmp_path, "--unknown", "exclude")}
    runs = [r for r in planted_runs() if r.identity.model == "a" and r.outcome.passed is not None]
    suite, first, *_ = docs["a"]["evaluation_results"]
    assert suite["score_details"]["uncertainty"]["num_samples"] == len(runs) == 59
    assert suite["score_details"]["score"] == pytest.approx(sum(r.outcome.passed for r in runs) / len(runs))
    assert first["evaluation_name"] == "fluke pass rate: s0" and first["score_details"]["score"] == pytest.approx(1.0)
    assert first["score_details"]["uncertainty"]["num_samples"] == 9
