"""The report's suite board says how many outcomes were unknown and what was done with them
(issue 14, point 6): the count is the ledger's, checked against the runs the test wrote."""

from __future__ import annotations

from fluke import analysis
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run


def test_the_suite_board_counts_the_unknown_outcomes(tmp_path):
    outcomes = [None if i % 5 == 0 else i % 2 == 0 for i in range(40)]
    with open_ledger(str(tmp_path / "l.db")) as ledger:
        ledger.ingest([Run(scenario=f"s{i % 4}", trial=i // 4, identity=Identity(model="m"), outcome=Outcome(passed=v))
                       for i, v in enumerate(outcomes)])
        doc = analysis.report(ledger, out=str(tmp_path / "r.html")).to_dict()
    (board,) = doc["suite_board"]
    unknown = sum(v is None for v in outcomes)
    assert f"; {unknown} unknown outcomes counted as failures (--unknown fail, as in fluke believe)" \
        in board["conditional_on"]
