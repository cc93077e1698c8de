"""Run listings at scale: ``runs --json``/``--jsonl`` written as they stream, equal to the old document;
a text listing reads only the rows it shows; an arm keeps reductions that compare like whole runs."""

from __future__ import annotations

import io
import json

from click.testing import CliRunner

from fluke.analysis import RunFacts, list_runs, select_arm, write_runs
from fluke.cli import group as main
from fluke.comparison import compare_versions, outcome_arrays
from fluke.simulate import support_desk


def _fill(ledger):
    desk = support_desk(scenarios=8, trials=6, planted_factor=4, seed=5)
    ledger.ingest(list(desk.version(1)) + list(desk.version(2)))
    return ledger


def test_streamed_json_is_the_listing_document(ledger):
    from fluke.adapters import read_file

    from ..conftest import TAU_AIRLINE, need

    _fill(ledger)
    ledger.ingest(read_file(need(TAU_AIRLINE), identity={"model": "gpt-4o"}))
    for limit in (None, 7):
        out = io.BytesIO()
        n = write_runs(ledger, out, limit=limit)
        whole = list_runs(ledger, limit=limit)
        assert json.loads(out.getvalue()) == json.loads(whole.to_json())   # the same document, as JSON
        assert out.getvalue().startswith(b'{\n  "format_version": 1,\n  "kind": "runs",\n  "total": ')
        assert n == len(whole.runs) == (192 + 200 if limit is None else 7)   # 8 × 2 conditions × 6 × 2, + τ-bench


def test_jsonl_holds_one_entry_per_run_in_listing_order(ledger):
    _fill(ledger)
    out = io.BytesIO()
    write_runs(ledger, out, lines=True, scenario="*1")
    got = [json.loads(x) for x in out.getvalue().splitlines()]
    want = json.loads(list_runs(ledger, scenario="*1").to_json())["runs"]
    assert got == want and len(got) == sum(1 for r in ledger.runs() if r.scenario.endswith("1"))
    assert len(got) == 24


def test_text_listing_reads_the_rows_it_shows_and_counts_the_rest(ledger):
    _fill(ledger)
    cut = list_runs(ledger, rows=25)
    assert len(cut.runs) == 25 and cut.total == 192 and cut.listed == 192
    text = cut.render("text")
    assert "192 runs" in text and "… and 167 more runs" in text
    # the same words as the listing read whole
    assert text == list_runs(ledger).render("text")


def test_cli_jsonl_and_json(tmp_path):
    from fluke.ledger import open_ledger

    url = str(tmp_path / "l.db")
    _fill(open_ledger(url))
    lines = CliRunner().invoke(main, ["--ledger", url, "runs", "--jsonl", "--limit", "5"])
    assert lines.exit_code == 0, lines.output
    want = [r.hash for r in list_runs(open_ledger(url), limit=5).runs]
    assert [json.loads(x)["hash"] for x in lines.output.splitlines()] == want and len(want) == 5
    doc = CliRunner().invoke(main, ["--ledger", url, "--json", "runs"])
    assert json.loads(doc.output)["total"] == 192


def test_reduced_arm_compares_like_whole_runs(ledger):
    _fill(ledger)
    a, b = (v.version for v in ledger.versions())
    arm_a, arm_b = select_arm(ledger, a[:12]), select_arm(ledger, b[:12])
    assert all(isinstance(r, RunFacts) for r in arm_a.runs)
    whole_a, whole_b = list(ledger.runs(version=a)), list(ledger.runs(version=b))
    got = compare_versions(arm_a.runs, arm_b.runs).to_dict()
    want = compare_versions(whole_a, whole_b).to_dict()
    assert got == want and got["where"] == want["where"]
    for x, y in zip(outcome_arrays(arm_a.runs), outcome_arrays(whole_a), strict=True):
        assert x.tolist() == y.tolist()


def test_streamed_runs_are_redacted_like_every_json_output(ledger):
    from fluke.record import Identity, Outcome, Run, ToolCall

    secret = "sk-proj-abcdefghijklmnopqrstuvwx"
    ledger.ingest([Run(scenario="s", identity=Identity(model="m"), outcome=Outcome(passed=True),
                       events=[ToolCall(tool="login", args={"key": secret}, ok=True)])])
    for lines in (True, False):
        out = io.BytesIO()
        write_runs(ledger, out, lines=lines)
        assert secret not in out.getvalue().decode() and "[REDACTED" in out.getvalue().decode()
    out = io.BytesIO()
    write_runs(ledger, out)
    assert json.loads(out.getvalue()) == json.loads(list_runs(ledger).to_json())


def _same(x, y) -> None:
    for name in ("scenario", "trial", "hash", "version", "label"):
        assert getattr(x, name) == getattr(y, name), name
    assert (x.outcome.passed, x.outcome.died_at) == (y.outcome.passed, y.outcome.died_at)
    assert x.condition_key() == y.condition_key() and len(x.events) == len(y.events)
    assert x.events.kept == y.events.kept   # the same shared stand-ins at the same steps


def test_reductions_from_stored_json_equal_those_from_whole_runs_on_real_runs(ledger):
    import orjson

    from fluke.adapters import read_file
    from fluke.analysis import reduce_body, reduce_run

    from ..conftest import TAU2_RESULTS, TAU_AIRLINE, need

    tau2 = sorted(need(TAU2_RESULTS).glob("*.json"))[0]
    ledger.ingest(list(read_file(need(TAU_AIRLINE), identity={"model": "gpt-4o"})) + list(read_file(tau2)))
    _fill(ledger)
    runs = list(ledger.runs())
    bodies = list(ledger.run_bodies())
    assert len(runs) == len(bodies) > 300
    hard = {r.hash: 2 for r in runs[::3]}
    for run, (body, _) in zip(runs, bodies, strict=True):
        _same(reduce_body(body, orjson.loads(body), hard), reduce_run(run, hard))
