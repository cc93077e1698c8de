"""``--unknown both``: every pass rate with unknown outcomes shown under both policies side by
side, and ``leaderboard``/``compare`` flag a pair whose order flips between them.

The fixture: on 10 scenarios × 10 trials, A passes 5 of 10 everywhere with no unknown; B passes
4, fails 3 and has 3 unknown outcomes; C passes 3. Counting unknowns as failures B is at 40%
(below A's 50%); leaving them out B is at 4/7 = 57.1% (above A). C's order against both holds."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from fluke.analysis import compare, leaderboard
from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run


@pytest.fixture
def ledger(tmp_path):
    runs = []
    for s in range(10):
        for t in range(10):
            runs.append(Run(scenario=f"s{s}", trial=t, identity=Identity(model="A"), outcome=Outcome(passed=t < 5)))
            b = True if t < 4 else (None if t < 7 else False)
            runs.append(Run(scenario=f"s{s}", trial=t, identity=Identity(model="B"), outcome=Outcome(passed=b)))
            runs.append(Run(scenario=f"s{s}", trial=t, identity=Identity(model="C"), outcome=Outcome(passed=t < 3)))
    led = open_ledger(str(tmp_path / "u.db"))
    led.ingest(runs)
    return led


def test_the_leaderboard_shows_both_rates_and_flags_the_flipped_pair(ledger):
    doc = leaderboard(ledger, unknown="both", replicates=200).payload()
    by = {v["label"]: v for v in doc["versions"]}
    assert by["B"]["rate_points"] == pytest.approx(40.0) and by["B"]["exclude"]["rate_points"] == pytest.approx(400 / 7)
    assert (by["B"]["exclude"]["passes"], by["B"]["exclude"]["trials"]) == (40, 70)
    assert (by["A"]["rank"], by["A"]["exclude"]["rank"], by["B"]["rank"], by["B"]["exclude"]["rank"]) == (1, 2, 2, 1)
    assert [(f["a"], f["b"]) for f in doc["flips"]] == [("A", "B")] and doc["unknown_policy"] == "both"
    # each policy alone gives the same figures as the side-by-side
    alone = {v["label"]: v["rate_points"] for v in leaderboard(ledger, unknown="exclude", replicates=200)
             .payload()["versions"]}
    assert alone["B"] == pytest.approx(by["B"]["exclude"]["rate_points"])


def test_compare_shows_both_and_says_the_order_flips(ledger):
    result = compare(ledger, "model=A", "model=B", unknown="both", record=False)
    doc = result.payload()
    assert doc["difference_points"] == pytest.approx(-10.0)
    assert doc["exclude"]["difference_points"] == pytest.approx(400 / 7 - 50)
    assert doc["order_flips"] is True and doc["unknown_policy"] == "both"
    assert "the order flips" in result.render()
    steady = compare(ledger, "model=C", "model=A", unknown="both", record=False).payload()
    assert steady["order_flips"] is False


def test_the_command_line_takes_both(ledger):
    done = CliRunner().invoke(group, ["--ledger", ledger.url, "leaderboard", "--unknown", "both",
                                      "--replicates", "200"])
    assert done.exit_code == 0, done.output
    assert "order flips between the policies" in done.output and "unknowns left out" in done.output
    refused = CliRunner().invoke(group, ["--ledger", ledger.url, "passk", "--unknown", "both"])
    assert refused.exit_code == 2
