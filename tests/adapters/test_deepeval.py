"""DeepEval's own test-run files, made by DeepEval itself in the test (``deepeval.evaluate`` with two
deterministic metrics, saved through ``DEEPEVAL_RESULTS_FOLDER``), read as runs, and imported as a
judge's verdicts (read, not judged again)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from fluke.adapters import detect_format, read_file
from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

pytest.importorskip("deepeval", reason="pip install deepeval (test extra)")

CASES = 12
#: The test cases: case i says "refund" when i % 3 != 0 and "sorry" when i % 4 == 0; it calls the
#: refund tool when it says refund.
MAKE = textwrap.dedent('''
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, DisplayConfig
    from deepeval.metrics import BaseMetric
    from deepeval.test_case import LLMTestCase, ToolCall

    class Said(BaseMetric):
        def __init__(self, word, threshold):
            self.word, self.threshold, self.name = word, threshold, f"Says {word}"
        def measure(self, case, *args, **kwargs):
            self.score = 0.9 if self.word in case.actual_output else 0.2
            self.success = self.score >= self.threshold
            self.reason = "said it" if self.success else "did not say it"
            return self.score
        async def a_measure(self, case, *args, **kwargs):
            return self.measure(case)
        def is_successful(self):
            return self.success
        @property
        def __name__(self):
            return self.name

    cases = []
    for i in range(N_CASES):
        words = (["refund issued"] if i % 3 else ["no refund"]) + (["sorry"] if i % 4 == 0 else [])
        tools = [ToolCall(name="issue_refund", input_parameters={"order": f"W{i}"}, output="ok")] if i % 3 else []
        cases.append(LLMTestCase(name=f"refund/{i}", input=f"refund order W{i}", actual_output=" ".join(words),
                                 tools_called=tools))
    evaluate(test_cases=cases, metrics=[Said("refund issued", 0.5), Said("sorry", 0.5)],
             async_config=AsyncConfig(run_async=False), display_config=DisplayConfig(show_indicator=False,
                                                                                     print_results=False))
''').replace("N_CASES", str(CASES))


def _said(i: int) -> tuple[bool, bool]:
    return i % 3 != 0, i % 4 == 0


@pytest.fixture(scope="module")
def test_run(tmp_path_factory):
    """The test_run_<date>.json DeepEval wrote, and its .latest_test_run.json."""
    root = tmp_path_factory.mktemp("deepeval")
    env = dict(os.environ, DEEPEVAL_TELEMETRY_OPT_OUT="YES", DEEPEVAL_RESULTS_FOLDER=str(root / "results"),
               DEEPEVAL_DISABLE_DOTENV="1")
    made = subprocess.run([sys.executable, "-c", MAKE], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    [path] = sorted((root / "results").glob("test_run_*.json"))
    return path, root / ".deepeval" / ".latest_test_run.json"


def test_each_test_case_is_a_run_decided_by_the_named_metric(test_run):
    path, _ = test_run
    assert detect_format(path) == "deepeval"
    runs = list(read_file(path, options={"score": "Says refund issued"}, identity={"model": "agent-v1"}))
    assert sorted(r.scenario for r in runs) == sorted(f"refund/{i}" for i in range(CASES))
    for run in runs:
        i = int(run.scenario.split("/")[1])
        refund, _ = _said(i)
        assert run.outcome.passed is refund and run.outcome.reward == pytest.approx(0.9 if refund else 0.2)
        assert run.identity.model == "agent-v1"
        assert run.identity.grader == {"deepeval_metric": "Says refund issued", "threshold": 0.5,
                                       "strict_mode": False}
        assert run.events[0].kind == "user" and run.events[0].text == f"refund order W{i}"
        assert [c.tool for c in run.tool_calls] == (["issue_refund"] if refund else [])
        if refund:
            assert run.tool_calls[0].args == {"order": f"W{i}"}


def test_without_a_named_metric_the_outcome_is_deepevals_own_all_metrics_pass(test_run):
    path, latest = test_run
    runs = {r.scenario: r for r in read_file(path)}
    expected = {f"refund/{i}": all(_said(i)) for i in range(CASES)}
    assert {s: r.outcome.passed for s, r in runs.items()} == expected
    assert sum(expected.values()) == 2            # cases 4 and 8 say both
    # DeepEval's rolling copy (the run inside testRunData) reads to the same runs
    assert detect_format(latest) == "deepeval"
    assert sorted(r.hash for r in read_file(latest)) == sorted(r.hash for r in runs.values())


def test_another_metric_is_another_grader_and_so_another_version(test_run):
    path, _ = test_run
    a = list(read_file(path, options={"score": "Says refund issued"}, identity={"model": "m"}))
    b = list(read_file(path, options={"score": "Says sorry"}, identity={"model": "m"}))
    assert {r.identity.version for r in a}.isdisjoint({r.identity.version for r in b})
    assert [r.outcome.passed for r in sorted(b, key=lambda r: r.scenario)] == \
        [_said(int(r.scenario.split("/")[1]))[1] for r in sorted(b, key=lambda r: r.scenario)]


def test_a_metric_the_file_lacks_is_one_line_naming_file_record_and_field(test_run, tmp_path):
    path, _ = test_run
    result = CliRunner().invoke(group, ["--ledger", str(tmp_path / "x.db"), "ingest", str(path),
                                        "--option", "score=Faithfulness"])
    assert result.exit_code == 2, result.output
    [line] = [ln for ln in result.stderr.splitlines() if ln.startswith("fluke: error")]
    assert str(path.name) in line and "testCases[0]" in line and "metricsData" in line and "Says sorry" in line
    assert "Traceback" not in result.output


def test_deepevals_verdicts_are_imported_as_a_judge_of_the_stored_runs(test_run, tmp_path):
    path, _ = test_run
    db = str(tmp_path / "j.db")
    stored = [Run(scenario=f"refund/{i}", identity=Identity(model="agent"), outcome=Outcome(passed=i % 2 == 0))
              for i in range(CASES)]
    with open_ledger(db) as led:
        led.ingest(stored)
    out = CliRunner().invoke(group, ["--ledger", db, "--json", "judge", "import", str(path), "--name", "refund-metric",
                                     "--score", "Says refund issued"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert (doc["imported"], doc["unmatched"]) == (CASES, 0)
    assert doc["judge_pass_rate"] == pytest.approx(sum(_said(i)[0] for i in range(CASES)) / CASES)
    with open_ledger(db) as led:
        grades = led.grades(doc["judge"])
        config = next(d.body for d in led.documents("judge") if d.digest == doc["judge"])
    by_scenario = {r.hash: r.scenario for r in stored}
    assert {by_scenario[h]: b["label"] for h, b in grades.items()} == \
        {f"refund/{i}": _said(i)[0] for i in range(CASES)}
    assert config["endpoint"] == "imported" and config["target"]["grader"]["deepeval_metric"] == "Says refund issued"
