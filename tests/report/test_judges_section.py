"""The report's judges section is the judge verbs' own answers, drawn: the figures in the report's
JSON equal what ``judge run``, ``judge audit`` and ``judge pairs`` print, and the page shows them
(self-consistency, agreement with people, the judge's bias, the corrected rate, the first-slot bias)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import AgentMessage, Identity, Outcome, Run

JUDGE = ("model: lenient\nendpoint: fake\nprompt: PASS or FAIL?\nreplicates: 3\n"
         "target: {sensitivity: 0.95, specificity: 0.55, seed: 5}\n")
PAIRS = ("model: slot-taster\nendpoint: fake\nprompt: FIRST or SECOND?\npairwise: true\nreplicates: 2\n"
         "target: {first_slot: 0.4, seed: 2}\n")


def fluke(db, *args):
    out = CliRunner().invoke(group, ["--ledger", db, *map(str, args)], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return out.output


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    root = tmp_path_factory.mktemp("judges")
    db = str(root / "j.db")
    runs = [Run(scenario=f"s{i}", identity=Identity(model=m), events=[AgentMessage(text=f"{m} answer {i}")],
                outcome=Outcome(passed=(i * 7 + (m == "b")) % 10 < 6)) for m in ("a", "b") for i in range(150)]
    with open_ledger(db) as led:
        led.ingest(runs)
    (root / "judge.yaml").write_text(JUDGE)
    (root / "pairs.yaml").write_text(PAIRS)
    ran = json.loads(fluke(db, "--json", "judge", "run", root / "judge.yaml"))
    sample = root / "audit.jsonl"
    fluke(db, "judge", "audit", ran["judge"][:12], "--draw", sample, "--size", 80)
    truth = {r.hash: r.outcome.passed for r in runs}
    rows = [json.loads(x) for x in sample.read_text().splitlines()]
    sample.write_text("".join(json.dumps({**r, "label": truth[r["run"]]}) + "\n" for r in rows))
    audit = json.loads(fluke(db, "--json", "judge", "audit", ran["judge"][:12], "--labels", sample))
    pairs = json.loads(fluke(db, "--json", "judge", "pairs", root / "pairs.yaml", "model=a", "model=b"))
    report = json.loads(fluke(db, "--json", "report", "--out", root / "r.html"))
    return {"ran": ran, "audit": audit, "pairs": pairs, "report": report,
            "html": (root / "r.html").read_text(encoding="utf-8")}


def _entry(judged, digest):
    return next(j for j in judged["report"]["judges"]["judges"] if j["digest"] == digest)


def test_the_section_holds_what_judge_run_and_judge_audit_print(judged):
    ran, audit = judged["ran"], judged["audit"]
    entry = _entry(judged, ran["judge"])
    assert entry["judged"] == ran["judged"] == 300 and entry["replicates"] == 3
    assert entry["pass_rate"] == pytest.approx(ran["judge_pass_rate"], abs=1e-12)
    sc = ran["self_consistency"]
    for ours, theirs in ((entry["flips"], sc["flip_share"]), (entry["alpha"], sc["krippendorff_alpha"])):
        assert (ours["value"], ours["low"], ours["high"]) == pytest.approx((theirs["value"], theirs["low"],
                                                                            theirs["high"]), abs=1e-12)
    a = entry["audit"]
    assert a["labelled"] == audit["labelled"] == 80
    for key, theirs in (("corrected", audit["corrected"]), ("human_only", audit["human_only"]),
                        ("judge_only", audit["judge_only"]), ("kappa", audit["agreement"]["cohen_kappa"]),
                        ("bias_points", audit["agreement"]["bias_points"])):
        assert (a[key]["value"], a[key]["low"], a[key]["high"]) == \
            pytest.approx((theirs["value"], theirs["low"], theirs["high"]), abs=1e-12), key
    assert a["human_rate"] == pytest.approx(audit["agreement"]["human_pass_rate"])
    assert a["may_gate"] == audit["may_gate"]["status"]
    assert a["bias_points"]["value"] > 0            # a lenient judge: its pass rate above the people's


def test_the_section_shows_a_pairwise_judges_first_slot_bias(judged):
    pairs = judged["pairs"]
    entry = _entry(judged, pairs["judge"])
    assert entry["pairwise"] and entry["judged"] == pairs["pairs"] == 150
    first = entry["first_slot"]
    assert (first["value"], first["low"], first["high"]) == pytest.approx(
        (pairs["first_slot_share"]["value"], pairs["first_slot_share"]["low"], pairs["first_slot_share"]["high"]))
    assert first["low"] > 0.5                                    # the planted taste for the first slot shows
    assert entry["a_share"]["value"] == pytest.approx(pairs["a_share"]["value"])


def test_the_page_draws_the_figures(judged):
    html, entry = judged["html"], _entry(judged, judged["ran"]["judge"])
    assert 'id="judges' in html and "Not computed: nothing in this report feeds it yet" not in \
        html.split('id="judges', 1)[1].split("</section>", 1)[0]
    section = html.split('id="judges', 1)[1].split("</section>", 1)[0]
    corrected = entry["audit"]["corrected"]
    text = f"{100 * corrected['value']:.1f}% [{100 * corrected['low']:.1f}%, {100 * corrected['high']:.1f}%]"
    assert text in section
    assert "pass rate corrected (PPI++)" in section and "kappa with people" in section
    assert "runs whose label flips over K = 3" in section
    bias = entry["audit"]["bias_points"]["value"]
    assert f"{bias:+.1f} points" in section
    first = _entry(judged, judged["pairs"]["judge"])["first_slot"]["value"]
    assert re.search(rf"share choosing the first slot.*?{first:.3f}", section, re.S)
