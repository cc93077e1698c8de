"""One policy for unknown outcomes in every verb (issue 14, point 6), on a real agent.

The τ-bench gpt-4o airline runs (50 tasks x 4 trials, recorded by τ-bench itself) with the
outcome of trials 0 and 2 of 40 tasks made unknown (``passed: null``, as a crashed harness
leaves it): 80 unknown outcomes of 200. Every verb, through the CLI, must report the same
failure rate under each policy, computed here from the runs themselves, and say how many
outcomes were unknown and what was done with them (the issue: one verb said 0.87 and another
0.80 on the same agent).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.adapters import read_file
from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Outcome

from ..conftest import ROOT, TAU_AIRLINE, need

SPEC = ROOT / "examples" / "specs" / "airline.yaml"


def _unknown(run) -> bool:
    """The runs whose outcome the test makes unknown: trials 0 and 2 of tasks 0-7, 10-17, ..."""
    return int(run.scenario.split("/")[-1]) % 10 < 8 and run.trial in (0, 2)


def _runs(model="gpt-4o"):
    out = []
    for run in read_file(need(TAU_AIRLINE), identity={"model": model}):
        if _unknown(run):
            run = run.model_copy(update={"outcome": Outcome(passed=None, reward=None)})
        out.append(run)
    return out


def _expected(runs, policy, trials=None):
    """(failure rate, runs counted, unknowns) under ``policy``, from the runs alone."""
    chosen = [r for r in runs if trials is None or r.trial in trials]
    unknowns = sum(r.outcome.passed is None for r in chosen)
    counted = [r for r in chosen if not (policy == "exclude" and r.outcome.passed is None)]
    passes = sum(r.outcome.passed is True for r in counted)
    return 1 - passes / len(counted), len(counted), unknowns


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    runs = _runs()
    path = tmp_path_factory.mktemp("unknowns") / "fluke.db"
    with open_ledger(str(path)) as ledger:
        ledger.ingest(runs)
    return str(path), runs


def _json(url, *args, code=0):
    result = CliRunner().invoke(group, ["--ledger", url, *map(str, args), "--json"])
    assert code is None or result.exit_code == code, result.output
    return json.loads(result.stdout)


def _text(url, *args):
    result = CliRunner().invoke(group, ["--ledger", url, *map(str, args)])
    return result.stdout


def _rates(url, policy):
    """verb -> (failure rate, runs counted, unknowns reported, policy reported), each from the verb's JSON."""
    opt = ("--unknown", policy)
    out = {}
    doc = _json(url, "summary", *opt)
    n, k = sum(r["trials"] for r in doc["rows"]), sum(r["passes"] for r in doc["rows"])
    out["summary"] = (1 - k / n, n, doc["unknowns"], doc["unknown_policy"])
    doc = _json(url, "passk", "--k", "1", *opt)
    v = doc["versions"][0]
    out["passk"] = (1 - v["passes"] / v["trials"], v["trials"], doc["unknowns"], doc["unknown_policy"])
    doc = _json(url, "interval", *opt)
    c = doc["versions"][0]["clustered"]
    out["interval"] = (1 - c["statistic"], c["rows"], doc["unknowns"], doc["unknown_policy"])
    doc = _json(url, "believe", "--version", "model=gpt-4o", *opt)
    n, k = sum(s["trials"] for s in doc["scenarios"]), sum(s["passes"] for s in doc["scenarios"])
    out["believe"] = (1 - k / n, n, doc["unknowns"], doc["unknown_policy"])
    doc = _json(url, "consistency", "model=gpt-4o", *opt)
    a = doc["agents"][0]
    out["consistency"] = (a["failures"] / a["trials"], a["trials"], doc["unknowns"], doc["unknown_policy"])
    doc = _json(url, "compare", "model=gpt-4o@0-1", "model=gpt-4o@2-3", "--no-record", *opt)
    n, k = doc["a"]["compared"] + doc["b"]["compared"], doc["a"]["passes"] + doc["b"]["passes"]
    out["compare"] = (1 - k / n, n, doc["unknowns"], doc["unknown_policy"])
    doc = _json(url, "grade", "--spec", SPEC, "--no-store", *opt, code=None)
    pooled = next(iter(doc["luck"].values()))["pooled"]
    out["grade"] = (1 - pooled["green"] / pooled["runs"], pooled["runs"], doc["unknowns"], doc["unknown_policy"])
    return out


@pytest.mark.parametrize("policy", ["fail", "exclude"])
def test_every_verb_reports_one_failure_rate_under_each_policy(real, policy):
    url, runs = real
    rate, counted, unknowns = _expected(runs, policy)
    assert unknowns == 80 and counted == (200 if policy == "fail" else 120)
    found = _rates(url, policy)
    for verb, (got, n, u, said) in found.items():
        assert (verb, round(got, 12), n, u, said) == (verb, round(rate, 12), counted, unknowns, policy)
    # the two policies give different rates here, so a verb ignoring the option would be caught
    assert abs(_expected(runs, "fail")[0] - _expected(runs, "exclude")[0]) > 0.05


@pytest.mark.parametrize("policy", ["fail", "exclude"])
def test_fixcheck_and_predict_follow_the_policy(real, policy, tmp_path):
    url, runs = real
    rate, counted, unknowns = _expected(runs, policy, trials={0})
    doc = _json(url, "fixcheck", "model=gpt-4o@0", "model=gpt-4o@1-3", "--unknown", policy)
    assert doc["chance"]["p"] == pytest.approx(rate, abs=1e-12)
    assert doc["unknowns_by_arm"] == {"first": unknowns, "candidate": _expected(runs, policy, {1, 2, 3})[2],
                                      "control": 0}
    assert (doc["unknowns"], doc["unknown_policy"]) == (80, policy)
    # predict stores its evidence: the counts under the policy
    copy = tmp_path / "p.db"
    with open_ledger(str(copy)) as ledger:
        ledger.ingest(runs)
    doc = _json(str(copy), "predict", "--version", "model=gpt-4o", "--unknown", policy)
    assert (doc["unknowns"], doc["unknown_policy"]) == (80, policy)
    with open_ledger(str(copy)) as ledger:
        evidence = [d.body["evidence"] for d in ledger.documents("prediction")]
    n, k = sum(e["trials"] for e in evidence), sum(e["passes"] for e in evidence)
    assert (1 - k / n, n) == (pytest.approx(_expected(runs, policy)[0], abs=1e-12), _expected(runs, policy)[1])


@pytest.mark.parametrize("verb", [("summary",), ("passk",), ("interval",), ("believe",),
                                  ("consistency", "model=gpt-4o"), ("fixcheck", "model=gpt-4o@0", "model=gpt-4o@1-3"),
                                  ("compare", "model=gpt-4o@0-1", "model=gpt-4o@2-3", "--no-record"),
                                  ("grade", "--spec", str(SPEC), "--no-store")])
def test_every_verb_prints_how_many_were_unknown_and_what_was_done(real, verb):
    url, _ = real
    assert "80 unknown outcomes counted as failures (--unknown fail)" in _text(url, *verb)
    assert "80 unknown outcomes left out (--unknown exclude)" in _text(url, *verb, "--unknown", "exclude")


def test_compare_still_accepts_failure_as_the_old_spelling(real):
    url, _ = real
    old = _json(url, "compare", "model=gpt-4o@0-1", "model=gpt-4o@2-3", "--no-record", "--unknown", "failure")
    new = _json(url, "compare", "model=gpt-4o@0-1", "model=gpt-4o@2-3", "--no-record", "--unknown", "fail")
    assert old["unknown_policy"] == new["unknown_policy"] == "fail"
    assert (old["pvalue"], old["a"]["compared"]) == (new["pvalue"], new["a"]["compared"])


@pytest.mark.parametrize("policy", ["fail", "exclude"])
def test_leaderboard_follows_the_policy(real, policy, tmp_path):
    _, runs = real
    twin = _runs("gpt-4o-twin")     # the same runs under another name: a second version
    path = tmp_path / "two.db"
    with open_ledger(str(path)) as ledger:
        ledger.ingest(runs + twin)
    rate, counted, unknowns = _expected(runs, policy)
    doc = _json(str(path), "leaderboard", "--replicates", "100", "--no-costs", "--unknown", policy)
    assert [(1 - v["passes"] / v["trials"], v["trials"]) for v in doc["versions"]] == \
        [(pytest.approx(rate, abs=1e-12), counted)] * 2
    assert (doc["unknowns"], doc["unknown_policy"]) == (2 * unknowns, policy)
    text = _text(str(path), "leaderboard", "--replicates", "100", "--no-costs", "--unknown", policy)
    assert f"{2 * unknowns} unknown outcomes " + ("counted as failures" if policy == "fail" else "left out") in text
