"""The report without a browser: posteriors, deaths, redaction, escaping, CSP, the verb."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import beta

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.ledger import CountRow
from fluke.record import Outcome, Run, ToolCall, UserMessage, redact
from fluke.analysis import report
from fluke.analysis._report_collect import deaths_by_step
from fluke.errors import UsageError
from fluke.report import (
    SECTIONS,
    BoundaryCell,
    ReportData,
    render_html,
    script_json,
)
from fluke.report._charts import pvalue_histogram, suite_board_chart

from ..conftest import TAU_AIRLINE, need
from ._build import PAYLOAD, SECRETS, beta_board, full_report, pvalue_section, tau_runs


def _board(tmp_path, cells, **options):
    """The report's suite board of one version whose scenario ``s{i}`` passed ``k`` of ``n`` runs."""
    runs = [Run(scenario=f"s{i}", trial=t, identity={"model": "m"}, outcome=Outcome(passed=t < k))
            for i, (n, k) in enumerate(cells) for t in range(n)]
    with open_ledger(str(tmp_path / "b.db")) as ledger:
        ledger.ingest(runs)
        return report(ledger, out=tmp_path / "b.html", **options).data.suite_board[0]


def test_suite_board_matches_the_closed_form_for_five_of_five(tmp_path):
    # Beta(6, 1) has CDF x^6: P(θ > 0.9) = 1 − 0.9^6 ≈ 0.47, mean 6/7 ≈ 0.86 (seed 001's figures).
    board = _board(tmp_path, [(5, 5)], bar=0.9, level=0.95)
    row = board.rows[0]
    assert row.mean == pytest.approx(6 / 7)
    assert row.p_above_bar == pytest.approx(1 - 0.9 ** 6)
    assert round(row.p_above_bar, 2) == 0.47 and round(row.mean, 2) == 0.86
    assert (row.lo, row.hi) == pytest.approx((0.025 ** (1 / 6), 0.975 ** (1 / 6)))
    assert "Beta(1, 1)" in board.conditional_on and "bar 0.9" in board.conditional_on


def test_suite_board_over_many_rows_agrees_with_scipy_one_by_one(tmp_path):
    rng = np.random.default_rng(11)
    n = rng.integers(1, 30, size=40)
    k = rng.integers(0, n + 1)
    board = _board(tmp_path, list(zip(n.tolist(), k.tolist(), strict=True)), bar=0.8, level=0.9)
    mine = {r.scenario: r for r in board.rows}
    for i, (nn, kk) in enumerate(zip(n, k, strict=True)):
        dist, r = beta(1 + kk, 1 + nn - kk), mine[f"s{i}"]
        assert (r.lo, r.hi, r.p_above_bar) == pytest.approx((dist.ppf(0.05), dist.ppf(0.95), dist.sf(0.8)))


@pytest.mark.parametrize("bad", [{"bar": 1.0}, {"bar": 0.0}, {"level": 1.2}])
def test_suite_board_refuses_bad_options(tmp_path, bad):
    with pytest.raises(UsageError, match=next(iter(bad))):
        _board(tmp_path, [(1, 1)], **bad)


def test_deaths_by_step_on_tau_bench_counts_every_failed_run_once():
    runs = tau_runs(need(TAU_AIRLINE))
    raw = json.loads(TAU_AIRLINE.read_text())
    c = deaths_by_step([("gpt-4o", runs[0].version, runs)])
    deaths = np.array(c.arms[0].deaths)
    assert deaths.sum() == sum(x["reward"] < 1 for x in raw) == 116
    # τ-bench records no failure step, so each failed run dies at its last event.
    last = [len(r.events) - 1 for r in runs if r.outcome.passed is False]
    assert int((deaths * np.arange(len(deaths))).sum()) == sum(last)
    assert c.steps == list(range(max(last) + 1))


def test_boundary_status_is_the_most_common_outcome_and_ties_go_to_the_worse():
    assert BoundaryCell(condition="a", works=5, fails=2).status == "works"
    assert BoundaryCell(condition="a", works=2, should_ask=2).status == "should ask"
    assert BoundaryCell(condition="a", works=1, fails=1, errors=1).status == "fails"
    assert BoundaryCell(condition="a").status == "not yet run"


@pytest.mark.parametrize("secret, kept", [
    ("AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws-key-id]"),
    ("sk-ant-api03-abcdefghijklmnopqrstuvwx", "[REDACTED:anthropic-key]"),
    ("ghp_" + "a1" * 18, "[REDACTED:github-token]"),
    ("Bearer 9f8e7d6c5b4a3210", "Bearer [REDACTED]"),
    ("password=correct-horse", "password=[REDACTED]"),
    ('"api_key": "zz-123456"', '"api_key": "[REDACTED]"'),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----", "[REDACTED:private-key]"),
])
def test_redact_hides_each_kind_of_secret(secret, kept):
    out = redact(f"before {secret} after")
    assert out == f"before {kept} after"


@pytest.mark.parametrize("secret", [
    "AKIAIOSFODNN7EXAMPLE", "ASIAIOSFODNN7EXAMPLE", "sk-ant-api03-abcdefghijklmnopqrstuvwx", "ghp_" + "a1" * 18,
    "github_pat_" + "a1" * 20, "xoxb-1234567890-abc", "pypi-AgEIcHlwaS5vcmc" + "a" * 20, "AIza" + "b" * 35,
    "eyJhbGciOiJI.eyJzdWIiOiJ4.c2lnbmF0dXJl", "password=correct-horse", "api_key:zz-123456",
    "-----BEGIN PRIVATE KEY-----\nb3Bl\n-----END PRIVATE KEY-----", "Bearer\t9f8e7d6c5b4a3210"])
def test_redact_quick_test_never_skips_a_bare_secret(secret):
    """The quick test that returns plain values untouched lets every kind of secret through
    to the patterns, with no text around it."""
    assert redact(secret) != secret


@pytest.mark.parametrize("text", ["the token expires in an hour", "ask-me-anything", "password policy: 12 chars",
                                  "order W2378156 for AKIA", "sk-short"])
def test_redact_leaves_ordinary_text_alone(text):
    assert redact(text) == text


def test_redact_walks_nested_values_and_is_idempotent():
    value = {"headers": {"Authorization": "Basic dXNlcjpwYXNz"}, "items": [("x", "AKIAIOSFODNN7EXAMPLE")], "n": 2}
    once = redact(value)
    assert once == {"headers": {"Authorization": "[REDACTED]"}, "items": [("x", "[REDACTED:aws-key-id]")], "n": 2}
    assert redact(once) == once


def test_script_json_round_trips_and_cannot_close_its_element():
    value = {"a": PAYLOAD, "b": ["\u2029", "&amp;", 1.5, None]}
    text = script_json(value)
    assert json.loads(text) == value
    assert not set("<>&\u2028\u2029") & set(text)


def _inline(tag: str, page: str) -> str:
    return re.search(rf"<{tag}>(.*?)</{tag}>", page, re.DOTALL).group(1)


def test_the_page_pins_its_only_script_and_style_by_hash_and_forbids_the_network():
    page = render_html(ReportData(title="t"))
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    digest = lambda s: base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest(_inline('script', page))}'" in csp
    assert f"style-src 'sha256-{digest(_inline('style', page))}'" in csp
    assert csp.startswith("default-src 'none';")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing fetched from anywhere
    assert " style=" not in page and "onclick" not in page
    for sink in (".innerHTML", ".outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in page
    assert page.count("Not computed:") == len(SECTIONS)


def test_everything_from_a_run_is_escaped_and_redacted_in_the_html():
    runs = tau_runs(need(TAU_AIRLINE))
    data, _, _ = full_report(runs)
    page = render_html(data)
    # Booleans, not `x in page`: a failing `in` over half a megabyte makes pytest diff forever.
    raw_markup = re.findall(r"<(?:img|svg onload|script>window)", page)
    assert raw_markup == []
    assert page.count("\\u003cimg src=x onerror=alert(1)\\u003e") == 1  # the violation, escaped in the JSON
    leaked = [s for s in SECRETS if s in page]
    assert leaked == []
    assert page.count("Not computed") == 0


def test_charts_draw_one_mark_per_row_and_the_histogram_counts():
    board = beta_board([CountRow("v", f"s{i}", "", 4, i) for i in range(5)], version="v", label="m")
    svg = suite_board_chart(board)
    assert svg.count("<circle") == 5
    hist = pvalue_histogram(pvalue_section([0.01, 0.02, 0.03, 0.51, 0.52, 0.99]))
    assert "3 p-values in [0.00, 0.05)" in hist and "2 p-values in [0.50, 0.55)" in hist
    assert "1 p-values in [0.95, 1.00)" in hist


def _ledger_with(tmp_path, runs):
    url = str(tmp_path / "fluke.db")
    with open_ledger(url) as ledger:
        ledger.ingest(runs)
    return url


def test_report_json_is_the_model_with_its_format_version(tmp_path):
    runs = [Run(scenario=f"refund/{s}", trial=t, condition={"name": c}, identity={"model": m},
                events=[UserMessage(text="refund W1 password=abc123"), ToolCall(tool="refund", ok=t % 2 == 0)],
                outcome=Outcome(passed=t % 2 == 0, label="complete" if t % 2 == 0 else "should_ask"))
            for m in ("a", "b") for s in range(3) for t in range(4) for c in ("unique",)]
    url = _ledger_with(tmp_path, runs)
    out = tmp_path / "r.html"
    result = CliRunner().invoke(group, ["--ledger", url, "report", "--json", "--out", str(out), "--version", "model=a"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["format_version"] == 1 and doc["kind"] == "report" and doc["html"] == str(out)
    data = ReportData.model_validate({k: v for k, v in doc.items() if k != "html"})
    assert [v.label for v in data.versions] == ["a"]
    assert [(r.scenario, r.successes, r.trials) for r in data.suite_board[0].rows] == [
        ("refund/0", 2, 4), ("refund/1", 2, 4), ("refund/2", 2, 4)]
    assert data.comparison.arms[0].deaths == [0, 6]  # the six failed runs end at event 1
    assert [(c.condition, c.works, c.should_ask) for c in data.boundary[0].cells] == [("name=unique", 6, 6)]
    assert "abc123" not in result.output and "abc123" not in out.read_text()
    assert data.missing["luck"].startswith("no grades stored in the ledger")


def test_report_terminal_output_names_the_file_and_the_counts(tmp_path):
    runs = [Run(scenario="s", trial=t, identity={"model": "m"}, outcome=Outcome(passed=t < 5)) for t in range(5)]
    url = _ledger_with(tmp_path, runs)
    out = tmp_path / "r.html"
    result = CliRunner().invoke(group, ["--ledger", url, "report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "100.0% (5/5) runs passed" in text and "0.469" in text
    assert "report written to" in text and out.exists()


def test_report_bad_input_exits_2_with_one_clear_line(tmp_path):
    url = str(tmp_path / "missing.db")
    result = CliRunner().invoke(group, ["--ledger", url, "report", "--out", str(tmp_path / "x.html")])
    assert result.exit_code == 2 and f"no ledger at {url}" in result.output
    assert not (tmp_path / "missing.db").exists()  # a read verb never creates a ledger
    url = str(tmp_path / "empty.db")
    open_ledger(url).close()
    result = CliRunner().invoke(group, ["--ledger", url, "report", "--out", str(tmp_path / "x.html")])
    assert result.exit_code == 2 and "no runs" in result.output
    url = _ledger_with(tmp_path, [Run(scenario="s", identity={"model": "m"})])
    result = CliRunner().invoke(group, ["--ledger", url, "report", "--version", "model=nope"])
    assert result.exit_code == 2 and "fluke: error" in result.output


def test_terminal_summary_prints_run_strings_as_text_not_markup_or_escapes(tmp_path):
    runs = [Run(scenario="[red]evil[/]\x1b[2J", trial=t, identity={"model": "[link=http://x]m[/link]"},
                outcome=Outcome(passed=False)) for t in range(2)]
    url = _ledger_with(tmp_path, runs)
    result = CliRunner().invoke(group, ["--ledger", url, "report", "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert "[red]evil[/]" in result.output and "[link=http://x]m[/link]" in result.output
    assert "\x1b" not in result.output


def test_the_report_shows_what_fluke_believe_prints(tmp_path):
    # Issue 11: the report calls the answer layer, so its board and suite questions are believe's numbers.
    import json as _json

    from fluke import analysis

    runs = [Run(scenario=f"s{i}", trial=t, identity={"model": "m"}, outcome=Outcome(passed=(t * (i + 1)) % 5 != 0))
            for i in range(6) for t in range(7)]
    url = _ledger_with(tmp_path, runs)
    out = tmp_path / "r.html"
    doc = _json.loads(CliRunner().invoke(group, ["--ledger", url, "--json", "report", "--out", str(out)]).stdout)
    with open_ledger(url) as ledger:
        said = analysis.believe(ledger, bar=0.9, level=0.95).to_dict()
    board = {r["scenario"]: r for r in doc["suite_board"][0]["rows"]}
    assert len(board) == 6
    for row in said["scenarios"]:
        mine = board[row["scenario"]]
        assert mine["mean"] == pytest.approx(row["mean"], rel=1e-12)
        assert mine["p_above_bar"] == pytest.approx(row["p_above"], rel=1e-12)
        assert [mine["lo"], mine["hi"]] == pytest.approx(row["interval"], rel=1e-12)
    questions = {q["name"]: q for q in doc["suite_questions"][0]["questions"]}
    assert any(q["value"] == pytest.approx(said["suite"]["average_mean"]) for q in questions.values()
               if isinstance(q.get("value"), float))
