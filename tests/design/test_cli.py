"""``fluke interval``, ``passk``, ``contrast``, ``seal``, ``unseal`` end to end on a real ledger."""

import json
import sqlite3
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run
from fluke.simulate import simulate_support

from ..conftest import TAU_AIRLINE, need

sm = pytest.importorskip("statsmodels.api")


def fluke(ledger_url, *args, code=0):
    result = CliRunner().invoke(group, ["--ledger", ledger_url, *map(str, args)], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def fluke_json(ledger_url, *args, code=0):
    return json.loads(fluke(ledger_url, "--json", *args, code=code).output)


def _seed_panel_runs(seed=5):
    """The seed's 40 users × 3 tasks × 4 generations, each difference stored as a reward."""
    rng = np.random.default_rng(seed)
    d = (0.02 + rng.normal(0, 0.06, (40, 1, 1)) + rng.normal(0, 0.04, (40, 3, 1))
         + rng.normal(0, 0.04, (40, 3, 4)))
    runs = [Run(scenario=f"user{i}/task{t}", unit=f"user{i}", trial=r,
                identity=Identity(model="paired-diff"), outcome=Outcome(reward=float(d[i, t, r])))
            for i in range(40) for t in range(3) for r in range(4)]
    return runs, d


def test_interval_prints_clustered_beside_naive_with_the_warning(ledger_url):
    runs, d = _seed_panel_runs()
    with open_ledger(ledger_url) as ledger:
        ledger.ingest(runs)
    text = fluke(ledger_url, "interval", "--unit", "unit", "--outcome", "reward").output
    assert "clustered" in text and "naive" in text and "warning:" in text
    assert "what more evidence would buy" in text and "Conditional on:" in text
    doc = fluke_json(ledger_url, "interval", "--unit", "unit", "--outcome", "reward",
                     "--bootstrap", "500")
    v = doc["versions"][0]
    y = d.reshape(-1)
    users = np.repeat(np.arange(40), 12)
    fit = sm.OLS(y, np.ones((480, 1))).fit(cov_type="cluster", cov_kwds={"groups": users})
    assert v["clustered"]["standard_error"] == pytest.approx(fit.bse[0], abs=1e-9)
    assert v["clustered"]["statistic"] == pytest.approx(y.mean(), abs=1e-12)
    assert v["naive"]["standard_error"] == pytest.approx(y.std(ddof=1) / np.sqrt(480), abs=1e-12)
    assert v["clustered"]["clusters"] == 40 and v["clustered"]["df"] == 39
    assert v["warning"] and v["design_effect"] > 3
    assert v["variance_components"]["units"] == 40 and v["variance_components"]["scenarios_per_unit"] == 3
    assert v["bootstrap"]["resamples"] == 500
    assert doc["format_version"] == 1 and doc["kind"] == "interval"


def _independent_tau(k):
    raw = json.loads(need(TAU_AIRLINE).read_text())
    per = {}
    for rec in raw:
        c = per.setdefault(rec["task_id"], [0, 0])
        c[0] += rec["reward"] == 1.0
        c[1] += 1
    at = sum(1 - Fraction(comb(n - c, k), comb(n, k)) for c, n in per.values()) / len(per)
    hat = sum(Fraction(comb(c, k), comb(n, k)) for c, n in per.values()) / len(per)
    return float(at), float(hat)


def test_passk_on_tau_bench_airline(ledger_url):
    fluke(ledger_url, "ingest", need(TAU_AIRLINE), "--identity", "model=gpt-4o")
    doc = fluke_json(ledger_url, "passk", "--k", "1..4", "--version", "model=gpt-4o")
    rows = doc["versions"][0]["rows"]
    assert [r["k"] for r in rows] == [1, 2, 3, 4]
    for r in rows:
        at, hat = _independent_tau(r["k"])
        assert r["pass_at_k"] == pytest.approx(at, abs=1e-12)
        assert r["pass_hat_k"] == pytest.approx(hat, abs=1e-12)
    text = fluke(ledger_url, "passk", "--k", "1,5", "--plugin").output
    assert "k=5 undefined" in text and "biased" in text and "pass^k" in text
    assert fluke(ledger_url, "passk", "--k", "0", code=2).exit_code == 2


def test_contrast_recovers_the_planted_memory_effect(ledger_url):
    with open_ledger(ledger_url) as ledger:
        ledger.ingest(simulate_support(150, seed=31).runs)
    doc = fluke_json(ledger_url, "contrast", "--factors", "memory,retry", "--version", "model=sim-support")
    c = {x["name"]: x for x in doc["contrasts"]}
    assert c["memory"]["low"] <= 0.15 <= c["memory"]["high"] and c["memory"]["low"] > 0
    assert c["memory x retry"]["low"] <= 0 <= c["memory x retry"]["high"]
    assert doc["environments"] == 150 and c["memory"]["df"] == 149
    text = fluke(ledger_url, "contrast", "--factors", "memory,retry").output
    assert "memory at retry=3" in text and "Conditional on:" in text
    fluke(ledger_url, "contrast", "--factors", "memory", code=2)


RULE = """name: memory helps
scope:
  identity: {model: sim-support}
decision:
  statistic: contrast
  factors: [memory, retry]
  effect: memory
  above: 0.025
predictions: {memory: 0.15}
"""


def _seal(ledger_url, tmp_path, text=RULE):
    path = tmp_path / "rule.yaml"
    path.write_text(text)
    return path, fluke_json(ledger_url, "seal", path)["digest"]


def test_seal_then_runs_then_unseal_holds(ledger_url, tmp_path):
    path, digest = _seal(ledger_url, tmp_path)
    with open_ledger(ledger_url) as ledger:
        ledger.ingest(simulate_support(100, seed=32).runs)
    doc = fluke_json(ledger_url, "unseal", digest[:12], "--rule", path)
    assert doc["holds"] and doc["intact"] and doc["runs"] == 400 and not doc["early_runs"]
    assert "HOLDS" in fluke(ledger_url, "unseal", digest).output
    # one changed byte in the rule file: detected, exit 1
    path.write_bytes(path.read_bytes().replace(b"0.025", b"0.020"))
    doc = fluke_json(ledger_url, "unseal", digest, "--rule", path, code=1)
    assert not doc["intact"] and "first at byte" in doc["problems"][0]


def test_unseal_exit_1_when_the_rule_says_no(ledger_url, tmp_path):
    _, digest = _seal(ledger_url, tmp_path, RULE.replace("above: 0.025", "above: 0.4"))
    with open_ledger(ledger_url) as ledger:
        ledger.ingest(simulate_support(60, seed=33).runs)
    doc = fluke_json(ledger_url, "unseal", digest, code=1)
    assert doc["intact"] and not doc["early_runs"] and not doc["decision"]["passed"]
    assert "DOES NOT HOLD" in fluke(ledger_url, "unseal", digest, code=1).output


def test_a_run_recorded_before_the_seal_fails_unseal(ledger_url, tmp_path):
    runs = simulate_support(60, seed=34).runs
    with open_ledger(ledger_url) as ledger:
        ledger.ingest(runs[:3])
    _, digest = _seal(ledger_url, tmp_path)
    with open_ledger(ledger_url) as ledger:
        ledger.ingest(runs[3:])
    doc = fluke_json(ledger_url, "unseal", digest, code=1)
    assert sorted(doc["early_runs"]) == sorted(r.hash for r in runs[:3])
    assert "ingested or executed before the seal" in " ".join(doc["problems"])


def test_a_changed_byte_in_the_stored_seal_is_detected(tmp_path):
    url = str(tmp_path / "fluke.db")
    _, digest = _seal(url, tmp_path)
    with sqlite3.connect(url) as db:
        db.execute("UPDATE documents SET body = replace(body, '0.025', '0.015') WHERE digest = ?", (digest,))
    doc = fluke_json(url, "unseal", digest, code=1)
    assert any("no longer hashes" in p for p in doc["problems"])


def test_seal_refuses_a_bad_rule_and_unseal_an_unknown_digest(ledger_url, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("decision: {statistic: median, above: 1}\n")
    result = fluke(ledger_url, "seal", path, code=2)
    assert "median" in (result.stderr or result.output)
    fluke(ledger_url, "unseal", "deadbeef00", code=2)


def test_interval_unit_weighting_on_unequal_units(tmp_path):
    url = str(tmp_path / "fluke.db")
    runs = [Run(scenario="a", unit="a", trial=t, outcome=Outcome(reward=0.0)) for t in range(3)]
    runs += [Run(scenario="b", unit="b", trial=0, outcome=Outcome(reward=1.0)),
             Run(scenario="c", unit="c", trial=0, outcome=Outcome(reward=0.5))]
    with open_ledger(url) as ledger:
        ledger.ingest(runs)
    rows = fluke_json(url, "interval", "--outcome", "reward")["versions"][0]["clustered"]
    units = fluke_json(url, "interval", "--outcome", "reward", "--weighting", "units")["versions"][0]["clustered"]
    assert rows["statistic"] == pytest.approx(1.5 / 5) and rows["method"] == "CR2 sandwich, Bell–McCaffrey df"
    assert units["statistic"] == pytest.approx(0.5) and units["method"] == "cluster means"
