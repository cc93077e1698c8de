"""DeepEval test runs: the ``test_run_<date>.json`` that ``deepeval.evaluate`` (or ``deepeval test
run``) writes into ``DEEPEVAL_RESULTS_FOLDER``, and the ``.deepeval/.latest_test_run.json`` it
keeps (the same document inside ``testRunData``).

A test run holds ``testCases`` (single-turn: ``name``, ``input``, ``actualOutput``,
``toolsCalled``, ``success``, ``order`` and ``metricsData``, one entry per metric with ``name``,
``score``, ``threshold``, ``success``, ``reason``, ``evaluationModel``, ``error``) and
``conversationalTestCases`` (``turns`` of ``role``/``content`` instead of input and output).
The judgments are DeepEval's own: importing them is reading, not judging again.

Reading rules:

* One run per test case; scenario: its ``name`` (DeepEval names an unnamed one
  ``test_case_<order>``); trial ``0`` unless ``--identity trial=N`` (a test run is one pass).
* Outcome: the metric the ``score`` option names, else the only metric, else every metric
  (the test case's ``success``, DeepEval's own "all metrics pass"). Passed is that metric's
  ``success``; a metric that errored or has no verdict is an unknown outcome. The reward is its
  ``score``.
* Identity: ``grader`` is the metric (its name, threshold, strict mode and evaluation model),
  so another metric or threshold is another version; ``harness`` ``{"deepeval": "test run"}``;
  the model under test is not in the file: give it with ``--identity model=...``.
* Events: the input as a user message, the actual output as an agent message, each tool
  in ``toolsCalled`` as a tool call; a conversation's turns as user and agent messages.

>>> doc = {"testCases": [{"name": "refund-1", "input": "refund W1", "actualOutput": "refunded", "success": True,
...        "order": 0, "metricsData": [{"name": "Correctness", "score": 0.8, "threshold": 0.5, "success": True}]}],
...        "conversationalTestCases": [], "metricsScores": [], "testPassed": 1, "testFailed": 0}
>>> [(r.scenario, r.outcome.passed, r.outcome.reward, r.identity.grader["deepeval_metric"])
...  for r in read(doc, file="test_run.json", identity={})]
[('refund-1', True, 0.8, 'Correctness')]
"""

from __future__ import annotations

from typing import Any, Iterator

from ..errors import InputError
from ..record import Run
from ._common import build_run, with_identity
from ._reader import Reader

_MARKERS = ("testPassed", "testFailed", "metricsScores", "conversationalTestCases")


def _body(doc: Any) -> Any:
    """The test run itself (``.latest_test_run.json`` wraps it in ``testRunData``)."""
    if isinstance(doc, dict) and isinstance(doc.get("testRunData"), dict):
        return doc["testRunData"]
    return doc


def sniff(doc: Any) -> bool:
    """A JSON object with a ``testCases`` list and one of DeepEval's run totals beside it.

    >>> sniff({"testRunData": {"testCases": [], "testPassed": 0}}), sniff({"testCases": []})
    (True, False)
    """
    body = _body(doc)
    return isinstance(body, dict) and isinstance(body.get("testCases"), list) and any(k in body for k in _MARKERS)


def _metric(case: dict[str, Any], chosen: str | None, file: str, record: str) -> dict[str, Any] | None:
    """The metric entry that decides the outcome, or None for "every metric" (the case's success)."""
    metrics = case.get("metricsData")
    metrics = [m for m in metrics if isinstance(m, dict)] if isinstance(metrics, list) else []
    if chosen is not None:
        found = next((m for m in metrics if m.get("name") == chosen), None)
        if found is None:
            names = ", ".join(sorted({str(m.get("name")) for m in metrics})) or "none"
            raise InputError(file, record, "metricsData", f"no metric {chosen!r} (this test case has: {names})",
                             hint="choose one with --option score=NAME")
        return found
    return metrics[0] if len(metrics) == 1 else None


def _verdict(entry: Any, case: dict[str, Any]) -> tuple[bool | None, float | None]:
    if entry is None:       # every metric: DeepEval's own verdict on the test case
        success = case.get("success")
        return (success if isinstance(success, bool) else None), None
    score = entry.get("score")
    reward = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) and score == score \
        else None
    success = entry.get("success")
    if entry.get("error") or not isinstance(success, bool):
        return None, reward
    return success, reward


def _grader(entry: Any) -> dict[str, Any]:
    if entry is None:
        return {"deepeval_metric": "all metrics"}
    grader = {"deepeval_metric": entry.get("name"), "threshold": entry.get("threshold"),
              "strict_mode": bool(entry.get("strictMode", False))}
    if entry.get("evaluationModel"):
        grader["evaluation_model"] = entry["evaluationModel"]
    return grader


def _events(case: dict[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    turns = case.get("turns")
    if isinstance(turns, list):
        for turn in turns:
            if isinstance(turn, dict) and isinstance(turn.get("content"), str):
                kind = "user" if turn.get("role") == "user" else "agent"
                events.append({"kind": kind, "text": turn["content"]})
        return events
    if isinstance(case.get("input"), str):
        events.append({"kind": "user", "text": case["input"]})
    for call in case.get("toolsCalled") or []:
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            args = call.get("inputParameters") if isinstance(call.get("inputParameters"), dict) else {}
            events.append({"kind": "tool", "tool": call["name"], "args": args, "ok": True,
                           "result": call.get("output")})
    if isinstance(case.get("actualOutput"), str):
        events.append({"kind": "agent", "text": case["actualOutput"]})
    return events


def read(doc: Any, *, file: str, identity: dict[str, Any], options: dict[str, Any] | None = None) -> Iterator[Run]:
    """Yield one run per test case (single-turn, then conversational)."""
    options = options or {}
    chosen = options.get("score")
    if chosen is not None and not isinstance(chosen, str):
        raise InputError(file, None, "score", f"expected a metric name, got {chosen!r}")
    body = _body(doc)
    supplied = dict(identity)
    trial = supplied.pop("trial", 0)
    supplied.pop("scenario", None)
    cases = [("testCases", c) for c in body.get("testCases") or []]
    cases += [("conversationalTestCases", c) for c in body.get("conversationalTestCases") or []]
    for position, (where, case) in enumerate(cases):
        record = f"{where}[{position if where == 'testCases' else position - len(body.get('testCases') or [])}]"
        if not isinstance(case, dict):
            raise InputError(file, record, None, f"expected a test case object, got {type(case).__name__}")
        name = case.get("name")
        if name is None:
            name = f"test_case_{case.get('order', position)}"
        if not isinstance(name, str) or not name:
            raise InputError(file, record, "name", f"expected the test case's name, got {name!r}")
        entry = _metric(case, chosen, file, record)
        passed, reward = _verdict(entry, case)
        ident = {"harness": {"deepeval": "test run"}, "grader": _grader(entry)}
        fields = {"scenario": name, "trial": trial,
                  "identity": with_identity(ident, supplied, file=file, record=record), "events": _events(case),
                  "outcome": {"passed": passed, "reward": reward,
                              "label": None if passed is None else ("complete" if passed else "fail")},
                  "source": {"adapter": "deepeval", "file": file, "position": position}}
        yield build_run(fields, file=file, record=record)


READER = Reader("deepeval", "DeepEval test run JSON (DEEPEVAL_RESULTS_FOLDER/test_run_<date>.json, "
                ".deepeval/.latest_test_run.json)", sniff=sniff, read=read, options=("score",))
