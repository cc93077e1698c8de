"""One path to every answer: each number the report shows is the one the verb prints with --json.

The page is laid out from the verbs' JSON documents (``fluke.analysis._report_page``); these
tests hold the report's comparison, suite boards and questions, luck rates and leaderboard equal
to ``fluke compare / believe / grade / leaderboard --json`` run separately on the same ledger:
the demo's, and real τ²-bench (and τ-bench) runs. Then the τ²-bench quickstart a new user runs
(an airline spec over retail and telecom runs): the page names the spec, does not claim a luck
rate from a spec whose tools the runs never call, and says where runs die as compare does.
"""

from __future__ import annotations

import json
from html import escape as html_escape
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from fluke.analysis import run_demo
from fluke.cli import group
from fluke.ledger import open_ledger

from ..conftest import TAU2_RESULTS, TAU_AIRLINE, need

ROOT = Path(__file__).resolve().parents[2]
AIRLINE_SPEC = ROOT / "examples" / "specs" / "airline.yaml"


def cli(url, *args, ok=(0,)) -> dict:
    result = CliRunner().invoke(group, ["--ledger", str(url), *args])
    assert result.exit_code in ok, result.output
    return json.loads(result.stdout)


def close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, float) and math.isinf(a):
        return b is None or math.isinf(b)
    return a == pytest.approx(b, rel=1e-12, abs=1e-15)


def check_comparison(page: dict, said: dict) -> None:
    """The page's comparison against ``fluke compare --json``."""
    assert page["verdict"] == said["verdict"]
    for mine, theirs in ((page["pvalue"], said["pvalue"]), (page["detection_limit"], said["detection_limit"]),
                         (page["difference"], said["difference_points"]), (page["ceiling"], said["ceiling"]),
                         (page["difference_lo"], said["interval_points"][0]),
                         (page["difference_hi"], said["interval_points"][1])):
        assert close(mine, theirs), (mine, theirs)
    assert page["passes"] == [said["a"]["passes"], said["b"]["passes"]]
    # the limit in compare's own words (one function words it for every surface)
    assert page["limit_text"] == said["pass_rates"]["limit_text"]
    assert [arm["runs"] for arm in page["arms"]] == [said["a"]["compared"], said["b"]["compared"]]
    steps = [] if said["where"]["skipped"] else sorted(said["where"]["steps"]["steps"], key=lambda s: s["step"])
    assert page["steps"] == [s["step"] for s in steps]
    assert [arm["deaths"] for arm in page["arms"]] == [[s["deaths_a"] for s in steps], [s["deaths_b"] for s in steps]]
    assert (page["qvalues"] or []) == pytest.approx([s["qvalue"] for s in steps], rel=1e-12)


def check_board(board: dict, said: dict) -> None:
    """One version's suite board against ``fluke believe --json`` at the same bar and level."""
    rows = {(r["scenario"], r["condition"]): r for r in board["rows"]}
    assert len(rows) == len(said["scenarios"]) > 0
    for cell in said["scenarios"]:
        mine = rows[(cell["scenario"], cell["condition"])]
        assert (mine["successes"], mine["trials"]) == (cell["passes"], cell["trials"])
        assert [mine["mean"], mine["p_above_bar"], mine["lo"], mine["hi"]] == pytest.approx(
            [cell["mean"], cell["p_above"], *cell["interval"]], rel=1e-12)


def check_questions(block: dict, said: dict) -> None:
    values = [q["value"] for q in block["questions"]]
    suite = said["suite"]
    assert values == pytest.approx([suite["average_mean"], suite["expected_below"], suite["p_all_clear"],
                                    suite["expected_failures"]], rel=1e-12)


def check_luck(luck: dict, said: dict, version: str) -> None:
    """One version's luck section against ``fluke grade --json``'s ``luck``."""
    theirs = said["luck"][version]
    for mine, rate in [(luck["pooled"], theirs["pooled"])] + [
            (c, theirs["cases"][c["case"]]) for c in luck["cases"]]:
        assert (mine["lucky"], mine["green"]) == (rate["lucky"], rate["green"])
        assert close(mine["share"], rate["statistic"])
        if rate["interval"] is not None:
            assert [mine["lo"], mine["hi"]] == pytest.approx(rate["interval"], rel=1e-12)
    assert len(luck["cases"]) == len(theirs["cases"])
    assert luck["spec_digest"] == said["spec"]["digest"]


def check_report(url, tmp_path, versions: list[str], *, spec: str | None = None) -> dict:
    """The report of two versions, every number of it held against the verbs' own --json."""
    out = tmp_path / "one.html"
    picks = [a for v in versions for a in ("--version", v)]
    doc = cli(url, "report", "--json", "--out", str(out), *picks, *(("--spec", spec) if spec else ()))
    check_comparison(doc["comparison"], cli(url, "compare", *versions, "--json",
                                             *(("--spec", spec) if spec else ())))
    for v, board, block in zip(versions, doc["suite_board"], doc["suite_questions"], strict=True):
        said = cli(url, "believe", "--version", v, "--level", "0.95", "--json")
        assert board["version"] == said["version"]
        check_board(board, said)
        check_questions(block, said)
    if spec:
        for v, luck in zip(versions, doc["luck"], strict=True):
            said = cli(url, "grade", "--spec", spec, "--version", v, "--json", ok=(0, 1))
            check_luck(luck, said, luck["version"])
    html = out.read_text(encoding="utf-8")
    limit = doc["comparison"]["detection_limit"]
    assert doc["comparison"]["verdict"] in html and (limit is None or f"{limit:.1f} points" in html)
    assert html_escape(doc["comparison"]["limit_text"]) in html
    return doc


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return run_demo(tmp_path_factory.mktemp("one-path-demo"), null_pairs=20)


def test_the_demo_report_shows_the_numbers_the_verbs_print(demo, tmp_path):
    versions = [v.version for v in demo.data.versions]
    doc = check_report(demo.ledger, tmp_path, versions, spec=str(demo.spec))
    assert doc["comparison"]["verdict"] == "different" and len(doc["luck"]) == 2
    # the demo's own page is the same page: its extra sections are calibration's, contrast's and calibrate's
    data = demo.data
    said = cli(demo.ledger, "calibration", "--version", versions[0], "--json")
    assert data.calibration.brier == pytest.approx(said["overall"]["brier"], rel=1e-12)
    assert data.calibration.n == said["overall"]["predictions"]
    assert [b.n for b in data.calibration.bins] == [r["count"] for r in said["overall"]["table"] if r["count"]]
    null = cli(demo.ledger, "calibrate", "--pairs", "20", "--seed", "7", "--json")
    assert data.null_calibration.histogram == null["histogram"] and data.null_calibration.pairs == 20
    assert (data.null_calibration.false_alarms, [data.null_calibration.lo, data.null_calibration.hi]) == (
        null["false_alarms"], pytest.approx(null["interval"], rel=1e-12))
    study = cli(demo.ledger.parent / "study.db", "contrast", "--factors", "memory,retry", "--json")
    assert [(c.label, c.estimate, c.lo, c.hi) for c in data.contrasts.contrasts] == [
        (c["name"], pytest.approx(c["statistic"]), pytest.approx(c["low"]), pytest.approx(c["high"]))
        for c in study["contrasts"]]


def _written(url) -> tuple:
    with open_ledger(str(url)) as ledger:
        return (ledger.query("SELECT COUNT(*) FROM documents")[0][0], ledger.query("SELECT COUNT(*) FROM grades")[0][0])


def test_the_stored_grades_give_the_luck_fluke_grade_prints(demo, tmp_path):
    from fluke.analysis import report

    versions = [v.version for v in demo.data.versions]
    before = _written(demo.ledger)
    with open_ledger(str(demo.ledger)) as ledger:   # reading stored grades writes nothing
        assert report(ledger, out=tmp_path / "quiet.html", versions=versions).data.luck
    assert _written(demo.ledger) == before and before[1] == demo.runs
    doc = check_report(demo.ledger, tmp_path, versions)      # no --spec: the grades the demo stored
    for luck in doc["luck"]:
        check_luck(luck, cli(demo.ledger, "grade", "--spec", str(demo.spec), "--version", luck["version"], "--json",
                             ok=(0, 1)), luck["version"])
        assert luck["spec"] == "support desk" and not luck["warning"]


def tau2_ledger(url):
    """τ²-bench retail and telecom, gpt-4.1 and its fine-tune: four versions, one run per task."""
    files = sorted(need(TAU2_RESULTS).glob("*retail*.json")) + sorted(TAU2_RESULTS.glob("*telecom*.json"))
    result = CliRunner().invoke(group, ["--ledger", str(url), "ingest", *map(str, files)])
    assert result.exit_code == 0, result.output
    with open_ledger(str(url)) as ledger:
        worlds = {i.version: (i.identity.world, i.identity.model) for i in ledger.versions()}
    retail = sorted((v for v, (w, _) in worlds.items() if w.endswith("retail")), key=lambda v: worlds[v][1])
    return url, retail


@pytest.fixture(scope="module")
def tau2(tmp_path_factory):
    return tau2_ledger(tmp_path_factory.mktemp("tau2") / "tau2.db")


def _retail_spec(tmp_path, url, retail) -> str:
    """A spec in the retail domain's own vocabulary: the tools its agents called."""
    with open_ledger(str(url)) as ledger:
        tools = sorted({e.tool for r in ledger.runs(version=retail) for e in r.tool_calls if e.requestor == "agent"})
    spec = tmp_path / "retail.json"
    spec.write_text(json.dumps({"name": "tau2 retail", "tools": tools}), encoding="utf-8")
    return str(spec)


def test_the_tau2_report_shows_the_numbers_the_verbs_print(tau2, tmp_path):
    url, retail = tau2
    spec = _retail_spec(tmp_path, url, retail)
    doc = check_report(url, tmp_path, retail, spec=spec)
    assert doc["warnings"] == [] and all(not luck["warning"] for luck in doc["luck"])


def test_the_tau2_quickstart_with_the_airline_spec_names_it_and_claims_no_luck(tau2, tmp_path):
    url, retail = tau2
    result = CliRunner().invoke(group, ["--ledger", str(url), "grade", "--spec", str(AIRLINE_SPEC)])
    assert result.exit_code == 1   # the gate fails: every path breaks a spec of another domain
    assert "tools the runs called are unknown to spec" in result.output and "is this the right spec?" in result.output
    out = tmp_path / "retail.html"
    doc = cli(url, "report", "--json", "--out", str(out), *[a for v in retail for a in ("--version", v)])
    said = cli(url, "compare", *retail, "--json")
    check_comparison(doc["comparison"], said)
    assert len(doc["warnings"]) == 1 and "unknown to spec tau-bench airline" in doc["warnings"][0]
    luck = [c for c in doc["headline"] if c["question"] == "How often was a pass luck?"]
    assert len(luck) == 2 and all("not claimed" in c["answer"] and "tau-bench airline" in c["answer"] for c in luck)
    assert not any("100.0%" in c["answer"] for c in doc["headline"])
    # where runs die: compare finds no known failure step in these runs, so the page claims no step either
    assert said["where"]["skipped"]
    assert not any(c["question"] == "Where does the change sit?" for c in doc["headline"])
    html = out.read_text(encoding="utf-8")
    assert "is this the right spec?" in html and "not claimed" in html


def test_one_arm_graded_is_named_and_not_used_for_where_runs_die(tmp_path):
    local, retail = tau2_ledger(tmp_path / "one-arm.db")
    spec = _retail_spec(tmp_path, local, retail)
    CliRunner().invoke(group, ["--ledger", str(local), "grade", "--spec", spec, "--version", retail[0]])
    doc = cli(local, "report", "--json", "--out", str(tmp_path / "r.html"),
              *[a for v in retail for a in ("--version", v)])
    check_comparison(doc["comparison"], cli(local, "compare", *retail, "--json"))
    assert [luck["version"] for luck in doc["luck"]] == [retail[0]]
    with open_ledger(str(local)) as ledger:
        other = {i.version: i.identity.label() for i in ledger.versions()}[retail[1]]
    assert other in doc["missing"]["luck"] and "no grades under spec tau2 retail" in doc["missing"]["luck"]
    assert f"{other} is ungraded under it" in doc["comparison"]["note"]
    assert not any(c["answer"].startswith("The change sits") for c in doc["headline"])


def test_the_leaderboard_on_the_page_is_fluke_leaderboard(tmp_path):
    from fluke.adapters import read_file

    url = tmp_path / "four.db"
    with open_ledger(str(url)) as ledger:   # τ-bench gpt-4o airline, each trial its own version
        for t in range(4):
            ledger.ingest([r for r in read_file(need(TAU_AIRLINE), identity={"model": f"gpt-4o trial {t}"})
                           if r.trial == t])
    doc = cli(url, "report", "--json", "--out", str(tmp_path / "lb.html"))
    said = cli(url, "leaderboard", "--json")
    rows = doc["leaderboard"]["rows"]
    assert [r["version"] for r in rows] == [v["version"] for v in said["versions"]]
    for mine, theirs in zip(rows, said["versions"], strict=True):
        assert (mine["passes"], mine["trials"], mine["rank"], [mine["rank_low"], mine["rank_high"]]) == (
            theirs["passes"], theirs["trials"], theirs["rank"], theirs["rank_interval"])
        assert [mine["rate"], mine["low"], mine["high"], mine["p_first"]] == pytest.approx(
            [theirs["rate_points"], *theirs["interval_points"], theirs["p_first"]], rel=1e-12)
    assert doc["leaderboard"]["strata"] == said["strata"]
