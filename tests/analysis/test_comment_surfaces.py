"""The gate on GitHub's three surfaces, read as a reviewer would (issue 27, point 5).

The comment is rendered to HTML by markdown-it (CommonMark with GFM tables and raw HTML, as
GitHub renders it) and read the way a reviewer reads it: what is in view outside ``<details>``,
whether any ``@mention`` or ``#reference`` would be live, how long it is. The job summary and the
annotations are checked against GitHub's limits (1 MiB; 50 annotations a batch) and the runner's
workflow-command escaping.
"""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from fluke.analysis import gate, grade
from fluke.analysis._github import ANNOTATIONS, SUMMARY_LIMIT
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run
from fluke.simulate import support_desk

GITHUB_LIMIT = 65_536
HOSTILE = ["@octocat/refunds", "fix #12 for @team-billing", "org/repo#34"]


def _html(md: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


def _text(html: str) -> str:
    """What a reader sees: tags removed, entities decoded (the zero-width space stays a character)."""
    import html as htmllib

    return htmllib.unescape(re.sub(r"<[^>]+>", "", html))


def _outside_details(md: str) -> list[str]:
    return re.sub(r"<details>.*?</details>", "", md, flags=re.S).splitlines()


def _live_references(text: str) -> list[str]:
    """Mentions and issue references GitHub would link: @name, #12, org/repo#34, GH-5."""
    return re.findall(r"(?<![\w`])@[A-Za-z0-9][\w-]*|(?<![\w&])#\d+|\bGH-\d+", text)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's support desk (seed 7, both versions) plus three scenarios with hostile names."""
    desk = support_desk(seed=7)
    path = str(tmp_path_factory.mktemp("demo") / "demo.db")
    v1, v2 = desk.version(1)[0].identity, desk.version(2)[0].identity
    extra = [Run(scenario=name, trial=t, identity=ident, outcome=Outcome(passed=t % 3 == 0))
             for name in HOSTILE for ident in (v1, v2) for t in range(6)]
    with open_ledger(path) as led:
        led.ingest(desk.runs + extra)
    led = open_ledger(path)
    yield led, desk
    led.close()


def _rule(desk, **more):
    return {"name": "release", "version": "model=support-desk-v2", "spec": desk.spec, "gate": True,
            "reliable": {"bar": 0.9, "prob": 0.95}, "luck": {"at_most": 0.05},
            "compare": {"baseline": "model=support-desk-v1"}, **more}


def test_the_demo_gate_comment_is_short_in_view_inert_and_within_the_limit(demo):
    led, desk = demo
    result = gate(led, _rule(desk))
    md = result.render("markdown")
    assert len(md) <= GITHUB_LIMIT
    in_view = _outside_details(md)
    assert len(in_view) < 60, len(in_view)
    assert len(result.reasons()) > 60                      # the demo has many reasons: they are folded
    html = _html(md)
    assert html.count("<details>") == html.count("</details>") == 1
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(md)
    assert tokens[0].tag == "h2" and tokens[1].content == "fluke gate FAILS: release"
    seen = _text(_html("\n".join(in_view)))
    # in view: the verdict, the checks table, the detection limit, what it rests on, the worst reasons
    for wanted in ("checks (failing first)", "detection limit (not_worse_than)", "Conditional on (reliable)",
                   "worst reasons (5 of"):
        assert wanted in seen, wanted
    assert "every reason it does not hold" in _text(html)   # the rest, one click away
    every = _text(html)
    assert _live_references(every) == [], _live_references(every)
    assert any(name.split("/")[0].replace("@", "@\u200b") in every for name in HOSTILE)  # shown, but inert
    assert "= <0.001" not in every and "p < 0.001" in every   # as the terminal prints a floor


def test_a_100000_character_name_still_makes_a_comment(tmp_path):
    # Ingest refuses such a name now (test_bounded_names); a ledger written before may hold one.
    path = str(tmp_path / "long.db")
    name = "n" * 100_000
    good = Run(scenario="s", trial=0, identity=Identity(model="m"), outcome=Outcome(passed=False))
    with open_ledger(path) as led:
        led.ingest([Run.model_construct(**{**good.__dict__, "scenario": name})])
        md = grade(led, support_desk(scenarios=2, trials=2, seed=1).spec, store=False).render("markdown")
    html = _html(md)
    assert md.startswith("## gate: FAIL in 1 of 1 cases") and "<table>" in html
    assert len(md) < 10_000 and "… (+99901 characters)" in md and name not in md


def test_the_job_summary_has_every_reason_within_one_mebibyte(tmp_path):
    desk = support_desk(scenarios=1000, trials=2, seed=11)
    path = str(tmp_path / "big.db")
    with open_ledger(path) as led:
        led.ingest(desk.runs)
        result = gate(led, _rule(desk))
    summary = result.render("github-summary")
    assert len(summary.encode()) <= SUMMARY_LIMIT
    reasons = result.reasons()
    assert len(reasons) > 1000
    body = _text(_html(summary))
    shown = sum(r.split(": ", 1)[1][:40].replace("[", "").replace("]", "") in body.replace("[", "").replace("]", "")
                for r in reasons[:200])
    assert shown == 200        # the job summary is where every reason is (the comment keeps 200 in details)
    annotations = result.render("github").splitlines()
    assert len(annotations) == ANNOTATIONS
    assert annotations[0].startswith("::error title=fluke gate::fluke gate FAILS")
    assert re.fullmatch(r"::notice title=fluke::\d+ more not annotated .*", annotations[-1])
    assert all(re.match(r"::(error|warning|notice) title=[^:,\n]*::", a) for a in annotations)


def test_annotations_cannot_break_out_of_their_command():
    from fluke.analysis._github import to_annotations

    out = to_annotations([("error", "a, b: c", "line\r\n::error::forged %0A")])
    # one command: the line break is shown as an escape, never a new line; % cannot forge an escape
    assert out.splitlines() == [out] and "\r" not in out
    assert out.startswith("::error title=a%2C b%3A c::line") and out.endswith("::error::forged %250A")


def test_an_inconclusive_gate_warns_by_default_and_fails_when_the_rule_says_so(tmp_path):
    path = str(tmp_path / "small.db")
    with open_ledger(path) as led:
        led.ingest([Run(scenario=f"s{i}", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True))
                    for i in range(3) for t in range(10)])
        warned = gate(led, {"reliable": {"bar": 0.9, "prob": 0.95}})
        failed = gate(led, {"reliable": {"bar": 0.9, "prob": 0.95}, "on_inconclusive": "fail"})
        passed = gate(led, {"reliable": {"bar": 0.9, "prob": 0.95}, "on_inconclusive": "pass"})
    # 10 of 10 under a uniform prior: P(θ > 0.9) = 1 − 0.9¹¹ = 0.686, short of 0.95: too small to tell;
    # certified after m more clean runs when 1 − 0.9^(11+m) ≥ 0.95, i.e. m = 18
    m = next(m for m in range(100) if 1 - 0.9 ** (11 + m) >= 0.95)
    assert (warned.status, warned.holds, failed.holds, passed.holds) == ("too small to tell", True, False, True)
    text = warned.render("text")
    assert text.startswith("fluke gate PASSES WITH A WARNING (too small to tell; on_inconclusive: warn)")
    assert f"reliable: about {m} more clean runs would settle it" in text
    assert "too small to tell (warn)" in text
    assert failed.render("text").startswith("fluke gate DOES NOT HOLD (too small to tell)")
    assert warned.to_dict()["on_inconclusive"] == "warn" and failed.to_dict()["on_inconclusive"] == "fail"
    assert warned.render("github").splitlines()[0].startswith("::warning title=fluke gate::")
