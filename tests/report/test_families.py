"""Boards over 50 cells group the rest by the family tag each scenario declares (``Run.tags``),
and the explorer, capped, says which runs it shows and shows them by a stated rule."""

from __future__ import annotations

import re

from fluke.analysis import report
from fluke.format import natural_key
from fluke.ledger import open_ledger
from fluke.record import Run
from fluke.simulate import support_desk

#: How the test tags the desk's scenarios: by scenario number mod 3 (the third declares none).
TAGS = (["tool:check_policy", "workflow:refund"], ["tool:lookup_order", "workflow:refund"], [])


def tagged_desk(path, *, scenarios: int = 30, trials: int = 4) -> str:
    """Version 1 of the simulated desk (its runs carry tags) on 30 scenarios × 2 conditions = 60 cells,
    retagged so that three families are declared, one scenario in three declaring none."""
    runs = []
    for r in support_desk(scenarios=scenarios, trials=trials, seed=3).version(1):
        body = r.model_dump(mode="json")
        body["tags"] = TAGS[int(r.scenario.split("/")[1]) % 3]
        runs.append(Run.model_validate(body))
    with open_ledger(str(path)) as ledger:
        ledger.ingest(runs)
    return str(path)


def _family(scenario: str, prefix: str) -> str | None:
    tags = sorted(t for t in TAGS[int(scenario.split("/")[1]) % 3] if t.startswith(prefix))
    return tags[0] if tags else None


def _headings(html: str) -> dict[str, int]:
    return {
        fam: int(n) for fam, n in re.findall(r'<h4 class="family" data-family="([^"]*)">[^<]*?\((\d+)\)</h4>', html)
    }


def test_boards_group_the_rest_by_the_declared_family_tag(tmp_path):
    url = tagged_desk(tmp_path / "tags.db")
    with open_ledger(url) as ledger:
        result = report(ledger, out=tmp_path / "r.html", family_prefix="tool:")
        default = report(ledger, out=tmp_path / "d.html")
        workflow = report(ledger, out=tmp_path / "w.html", family_prefix="workflow:")
    board = result.data.suite_board[0]
    assert len(board.rows) == 60
    assert board.families == {
        r.scenario: _family(r.scenario, "tool:") for r in board.rows if _family(r.scenario, "tool:")
    }
    # The 50 worst are drawn first; the other 10 are grouped under their family in "show all".
    rest = sorted(board.rows, key=lambda r: (r.p_above_bar, r.mean, natural_key(r.scenario)))[50:]
    expected: dict[str, int] = {}
    for r in rest:
        fam = _family(r.scenario, "tool:") or ""
        expected[fam] = expected.get(fam, 0) + 1
    assert len(expected) > 1
    html = (tmp_path / "r.html").read_text()
    assert _headings(html) == expected
    assert "Grouped by family tag" in html and ("(no family tag)" in html) == ("" in expected)
    # No prefix: a scenario's first tag in sorted order, the rule of fluke believe --prior family.
    assert default.data.suite_board[0].families == board.families
    # A prefix only two families share: the tool tags no longer count, workflow:refund does.
    assert set(workflow.data.suite_board[0].families.values()) == {"workflow:refund"}


def test_without_declared_tags_the_rest_falls_back_to_the_scenario_prefix(tmp_path):
    runs = []
    for r in support_desk(scenarios=30, trials=4, seed=3).version(1):
        body = r.model_dump(mode="json")
        n = int(r.scenario.split("/")[1])
        body["tags"], body["scenario"] = [], f"{'exchange' if n % 5 else 'returns'}/{n:02d}"
        runs.append(Run.model_validate(body))
    with open_ledger(str(tmp_path / "plain.db")) as ledger:
        ledger.ingest(runs)
        result = report(ledger, out=tmp_path / "p.html")
    board = result.data.suite_board[0]
    assert board.families == {} and len(board.rows) == 60
    rest = sorted(board.rows, key=lambda r: (r.p_above_bar, r.mean, natural_key(r.scenario)))[50:]
    expected = {p: sum(r.scenario.startswith(p + "/") for r in rest) for p in ("exchange", "returns")}
    html = (tmp_path / "p.html").read_text()
    assert all(expected.values()), expected  # this seed leaves both prefixes among the rest
    assert "Grouped by scenario prefix" in html and _headings(html) == expected


def test_a_capped_explorer_shows_failed_runs_first_an_equal_share_per_version(tmp_path):
    desk = support_desk(scenarios=6, trials=8, seed=3)
    with open_ledger(str(tmp_path / "cap.db")) as ledger:
        ledger.ingest(desk.runs)
        result = report(ledger, out=tmp_path / "c.html", max_runs=20)
    ex = result.data.explorer
    assert (len(ex.runs), ex.total) == (20, len(desk.runs)) and ex.rule
    by_version = {v.version: [r for r in ex.runs if r.version == v.version] for v in result.data.versions}
    assert [len(rs) for rs in by_version.values()] == [10, 10]
    for v, shown in by_version.items():
        mine = [r for r in desk.runs if r.version == v]
        failing_cells = {(r.scenario, r.condition_key()) for r in mine if r.outcome.passed is False}
        # The oracle: ten failed runs, one from each failing cell before any cell gives a second.
        assert all(r.passed is False for r in shown)
        cells = [(r.scenario, r.condition) for r in shown]
        assert len(set(cells)) == min(10, len(failing_cells))
        assert shown == sorted(shown, key=lambda r: (natural_key(r.scenario), r.trial, r.hash))
    html = (tmp_path / "c.html").read_text()
    assert f"The explorer shows 20 of {len(desk.runs):,} runs: each version an equal share" in html
