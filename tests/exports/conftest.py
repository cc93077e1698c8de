"""A small two-version ledger with known grades, shared by the export tests."""

from __future__ import annotations

import pytest

from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run, ToolCall

SPEC = "tools: [lookup, refund]\nforbidden: [refund]\n"


def planted_runs() -> list[Run]:
    """Version a passes every run; version b passes 3 of 10 per scenario. Every fifth run of each
    version calls the forbidden refund; trial 9 of scenario s0 has an unknown outcome."""
    runs = []
    for model, passing in (("a", 10), ("b", 3)):
        for s in range(6):
            for t in range(10):
                passed = None if (s, t) == (0, 9) else t < passing
                tools = [ToolCall(tool="lookup", ok=True)] + ([ToolCall(tool="refund", ok=True)] if t % 5 == 0 else [])
                runs.append(Run(scenario=f"s{s}", trial=t, identity=Identity(model=model), events=tools,
                                outcome=Outcome(passed=passed)))
    return runs


def expected_label(run: Run) -> str:
    """The label the mapping promises, from the run alone: a forbidden call or a failed outcome fails."""
    if any(c.tool == "refund" for c in run.tool_calls) or run.outcome.passed is False:
        return "fail"
    return "unknown" if run.outcome.passed is None else "pass"


@pytest.fixture
def planted(tmp_path):
    path = tmp_path / "l.db"
    with open_ledger(str(path)) as ledger:
        ledger.ingest(planted_runs())
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    return path, spec
