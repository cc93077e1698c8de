"""The reproducers a19 and a21 through the command line (issue 14, points 2 and 3), on a real
SQLite file: the carried prior printed per scenario, discounting only what was carried, and one
posterior behind every number in both modes (``--carry-from`` and ``--account``).

Oracles: closed-form Beta arithmetic and the enumeration of change configurations in
``test_carry``.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from scipy import stats

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

from .test_carry import _mixture_oracle, _oracle_certify, _oracle_sf


def _believe(url, *args, text=False):
    result = CliRunner().invoke(group, ["--ledger", url, "believe", *args] + ([] if text else ["--json"]))
    assert result.exit_code == 0, result.output
    return result.stdout if text else {s["scenario"]: s for s in json.loads(result.stdout)["scenarios"]}


def _ledger(folder, batches) -> str:
    """A SQLite ledger with one ingest per ``(model, {scenario: outcomes})`` batch, in order."""
    url = str(folder / "acc.db")
    with open_ledger(url) as led:
        for model, outcomes in batches:
            led.ingest([Run(scenario=s, trial=t, identity=Identity(model=model), outcome=Outcome(passed=v))
                        for s, vs in outcomes.items() for t, v in enumerate(vs)])
    return url


@pytest.fixture(scope="module")
def a19(tmp_path_factory):
    return _ledger(tmp_path_factory.mktemp("a19"), [("v1", {"s": [True] * 50}), ("v2", {"s": [False] + [True] * 4})])


def test_a19_both_modes_print_the_one_mixture_posterior(a19):
    # a19: --carry-from printed P(θ > 0.9) = 0.690 beside "certify 0", --account next-run 0.965.
    w, a, b = _mixture_oracle([(50, 50), (4, 5)], odds=4, delta=1.0)
    carry = _believe(a19, "--version", "model=v2", "--carry-from", "model=v1", "--discount", "1", "--odds", "4")["s"]
    account = _believe(a19, "--version", "model=v2", "--account", "--discount", "1", "--odds", "4")["s"]
    for s in (carry, account):
        assert s["mean"] == pytest.approx(float((w * a / (a + b)).sum()), abs=1e-9)
        assert s["p_above"] == pytest.approx(_oracle_sf(w, a, b, 0.9), abs=1e-9)
        assert s["runs_to_certify"] == _oracle_certify(w, a, b) > 0
        assert s["p_changed"] == pytest.approx(float(w[a + b < 10].sum()), abs=1e-9)
        lo, hi = s["interval"]
        assert _oracle_sf(w, a, b, lo) == pytest.approx(0.95, abs=1e-6)
        assert _oracle_sf(w, a, b, hi) == pytest.approx(0.05, abs=1e-6)
    assert round(carry["mean"], 3) == round(account["mean"], 3) == 0.881


@pytest.fixture(scope="module")
def a21(tmp_path_factory):
    return _ledger(tmp_path_factory.mktemp("a21"), [("v1", {"old": [True] * 10}),
                                                    ("v2", {"old": [True] * 5, "new": [True] * 5})])


@pytest.mark.parametrize("delta", [0.5, 0.0])
def test_a21_only_what_was_carried_is_discounted_and_the_prior_is_printed_per_scenario(a21, delta):
    args = ["--version", "model=v2", "--prior", "beta:8,2", "--carry-from", "model=v1", "--discount", str(delta)]
    got = _believe(a21, *args)
    # new: no earlier version ran it, so Beta(8, 2) + 5/5 whatever δ (a21: was discounted to Beta(4.5, 1.5))
    assert got["new"]["mean"] == pytest.approx(13 / 15, abs=1e-12)
    assert got["new"]["prior"] == "declared Beta(8, 2) (nothing carried: no earlier version ran this scenario)"
    # old: Beta(8 + δ·10, 2) + 5/5; at δ = 0 the declared prior, not uniform (a21: 6/7)
    alpha = 8 + delta * 10 + 5
    assert got["old"]["mean"] == pytest.approx(alpha / (alpha + 2), abs=1e-12)
    assert got["old"]["p_above"] == pytest.approx(stats.beta.sf(0.9, alpha, 2), abs=1e-9)
    assert "declared Beta(8, 2)" in got["old"]["prior"] and f"δ = {delta:g}" in got["old"]["prior"]
    text = _believe(a21, *args, text=True)
    assert "prior declared Beta(8, 2) (nothing carried: no earlier version ran this scenario)" in text
    assert "carried into 1 of 2 scenarios" in text
    assert "carried: nothing" not in text.split("Carried from before:")[1].split("\n")[0]


def test_the_change_check_prints_how_often_it_resets_an_unchanged_scenario(a21):
    # issue 14, point 5: the reset rule's false-reset rate, from simulation under no change, printed
    from .test_weekly_edges import _exact_two_version_reset

    args = ["--version", "model=v2", "--carry-from", "model=v1", "--discount", "1", "--odds", "4"]
    result = CliRunner().invoke(group, ["--ledger", a21, "believe", *args, "--json"])
    r = json.loads(result.stdout)["reset_rate"]
    assert (r["trials"], r["versions"], r["seed"]) == (5, 2, 2026)
    exact = _exact_two_version_reset(r["theta"], r["trials"], 4)
    assert r["per_version"] == pytest.approx(exact, abs=4 * (exact * (1 - exact) / r["histories"]) ** 0.5 + 1e-4)
    text = _believe(a21, *args, text=True)
    assert f"False resets: under no change (θ = {r['theta']:g}, 5 runs per version" in text
    # no change check asked for: no reset rate
    assert json.loads(CliRunner().invoke(group, ["--ledger", a21, "believe", "--version", "model=v2",
                                                 "--json"]).stdout)["reset_rate"] is None
