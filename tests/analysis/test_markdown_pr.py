"""The pull-request comment: gate, compare, believe and grade as GitHub Markdown, parsed by
markdown-it-py (the verdict a heading, then a table, the detection limit, what it rests on),
and under GitHub's 65,536-character limit on a 1,000-scenario ledger."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from fluke.analysis import believe, compare, gate, grade
from fluke.ledger import open_ledger
from fluke.simulate import support_desk

GITHUB_LIMIT = 65_536


def _parse(md: str):
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    headings = ["".join(c.content for c in tokens[i + 1].children if c.type in ("text", "code_inline"))
                for i, t in enumerate(tokens) if t.type == "heading_open"]  # as a reader sees them
    tables = sum(t.type == "table_open" for t in tokens)
    rows = sum(t.type == "tr_open" for t in tokens)
    return tokens, headings, tables, rows


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """1,000 scenarios (each under two conditions) at two versions, two runs each: 8,000 runs."""
    desk = support_desk(scenarios=1000, trials=2, seed=11)
    path = str(tmp_path_factory.mktemp("big") / "big.db")
    with open_ledger(path) as led:
        led.ingest(desk.runs)
    led = open_ledger(path)
    yield led, desk
    led.close()


def _results(led, desk):
    rule = {"version": "model=support-desk-v2", "spec": desk.spec, "gate": True,
            "reliable": {"bar": 0.9, "prob": 0.95}, "luck": {"at_most": 0.05},
            "compare": {"baseline": "model=support-desk-v1"}}
    return {"gate": gate(led, rule),
            "compare": compare(led, "model=support-desk-v1", "model=support-desk-v2", record=False),
            "believe": believe(led, version="model=support-desk-v2"),
            "grade": grade(led, desk.spec, version="model=support-desk-v2", store=False)}


def test_each_comment_opens_with_its_verdict_as_a_heading_then_a_table(big):
    led, desk = big
    for name, result in _results(led, desk).items():
        md = result.render("markdown")
        tokens, headings, tables, rows = _parse(md)
        assert tokens[0].type == "heading_open" and tokens[0].tag == "h2", name
        first = result.blocks()[0]
        verdict = first.text if hasattr(first, "text") else first.plain()
        assert headings[0] == verdict, name  # the verdict itself, unescaped by the parser
        assert tables >= 1 and rows > 2, name
        assert len(md) < GITHUB_LIMIT, (name, len(md))
    gate_md = _results(led, desk)["gate"].render("markdown")
    _, headings, _, _ = _parse(gate_md)
    assert headings[0] == "fluke gate FAILS: gate rule"
    # the demo's versions differ: the limit in compare's words for a *different* verdict
    assert "detection limit (not\\_worse\\_than): the design had 80% power" in gate_md
    assert "_Conditional on (reliable):" in gate_md
    assert "more reasons (in the JSON output)" in gate_md  # 2,000 cells: the reasons table is cut, with a count


def test_the_longest_comment_is_cut_under_githubs_limit_with_a_note(big):
    led, desk = big
    result = _results(led, desk)["gate"]
    every = result.render("markdown", all_rows=True)      # every reason: far more than a comment holds
    assert len(result.reasons()) > 1000
    assert len(every) <= GITHUB_LIMIT
    assert every.rstrip().endswith("the whole answer is in the JSON output._")
    _, headings, tables, _ = _parse(every)
    assert headings[0].startswith("fluke gate FAILS") and tables >= 1   # still a comment, still a table


def test_hostile_strings_stay_inert_in_the_heading(tmp_path):
    from fluke.record import Identity, Outcome, Run

    with open_ledger(str(tmp_path / "h.db")) as led:
        led.ingest([Run(scenario="s", trial=t, identity=Identity(model="# [x](http://e) <b>|"),
                        outcome=Outcome(passed=True)) for t in range(3)])
        md = believe(led).render("markdown")
    tokens, headings, _, _ = _parse(md)
    assert headings[0].startswith("version ") and "# [x](http://e) <b>|" in headings[0]
    assert not any(t.type in ("link_open", "html_inline") for tok in tokens for t in (tok.children or []))
