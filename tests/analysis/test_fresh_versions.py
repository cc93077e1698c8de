"""One ledger object, many questions: a version ingested between two questions is seen by the second.

The answer layer once kept ``ledger.versions()`` on the caller's ledger and never dropped it, so
``summary``, then ``ingest`` of a new version, then ``compare`` ended in a raw ``KeyError``.
"""

from __future__ import annotations

from fluke.analysis import compare, ingest, summary
from fluke.ledger import open_ledger
from fluke.simulate import support_desk


def test_summary_then_ingest_then_compare_sees_the_new_version(tmp_path):
    desk = support_desk(scenarios=6, trials=8, planted_factor=4, seed=3)
    one, two = list(desk.version(1)), list(desk.version(2))
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in two), encoding="utf-8")
    with open_ledger(str(tmp_path / "fresh.db")) as ledger:
        ledger.ingest(one)
        first = summary(ledger)
        assert [v.version for v in first.versions] == [one[0].version]
        ingest(ledger, [str(path)])
        assert [v.version for v in summary(ledger).versions] == [one[0].version, two[0].version]
        result = compare(ledger, one[0].version[:12], two[0].version[:12], record=False)
        # the same question on a ledger opened afresh gives the same answer
        with open_ledger(str(tmp_path / "fresh.db")) as again:
            fresh = compare(again, one[0].version[:12], two[0].version[:12], record=False)
    assert result.pass_rates.runs_b == len(two)
    assert result.to_dict()["pvalue"] == fresh.to_dict()["pvalue"]
    assert result.to_dict()["b"]["passes"] == sum(bool(r.outcome.passed) for r in two)
