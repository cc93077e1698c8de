"""The Inspect AI reader on real logs: the samples in ../shared/formats/samples/inspect_ai
(inspect-ai 0.3.285, 2 samples x 3 epochs, a .eval archive with Zstandard members and a
.json log) and a log written in the test by a tiny task run on Inspect's mock model.

Expected values come from the .json log read with plain json in the test."""

from __future__ import annotations

import json

import pytest

from fluke.adapters import detect_format, read_file
from fluke.errors import InputError


def _expected(log: dict) -> dict:
    """(scenario, trial) -> (passed, [(call id, ok)]) from a JSON log, read independently."""
    out = {}
    for s in log["samples"]:
        calls = [(m["tool_call_id"], not m.get("error")) for m in s["messages"] if m["role"] == "tool"]
        out[(f"{log['eval']['task']}/{s['id']}", s["epoch"] - 1)] = (s["scores"]["match"]["value"] == "C", calls)
    return out


def _seen(runs) -> dict:
    return {(r.scenario, r.trial): (r.outcome.passed, [(c.call_id, c.ok) for c in r.tool_calls]) for r in runs}


def test_json_log_runs_outcomes_and_failed_calls(samples):
    path = samples / "inspect_ai" / "tiny_tools_epochs3.json"
    log = json.loads(path.read_text())
    assert detect_format(path) == "inspect"
    runs = list(read_file(path))
    assert len(runs) == 6 == len(log["samples"])
    assert _seen(runs) == _expected(log)
    assert sum(r.outcome.passed for r in runs) == 4       # one answer in three is wrong
    s1 = next(r for r in runs if (r.scenario, r.trial) == ("tiny_tools/s1", 0))
    add, lookup, bad = s1.tool_calls
    assert (add.tool, add.args, add.result) == ("add", {"a": 2, "b": 3}, "5")
    assert lookup.error == "lookup backend unavailable for key='k2'" and lookup.result is None
    assert bad.args == {"a": "x"} and bad.error.startswith("Found 2 validation errors")
    assert add.t_start is not None and add.t_end > add.t_start   # times from the tool events
    ident = s1.identity
    assert (ident.model, ident.world, ident.grader["inspect_scorer"]) == (
        "mockllm/model",
        "inspect/tiny_tools",
        "match",
    )
    assert ident.harness["inspect_solver"] == "system_message,use_tools,generate"
    assert s1.cost["total_tokens"] == log["samples"][0]["model_usage"]["mockllm/model"]["total_tokens"]


def test_eval_archive_reads_like_its_json_twin(samples):
    """The .eval archive (Zstandard members) is the same task run again: same outcomes and calls."""
    log = json.loads((samples / "inspect_ai" / "tiny_tools_epochs3.json").read_text())
    path = samples / "inspect_ai" / "tiny_tools_epochs3.eval"
    assert detect_format(path) == "inspect"
    runs = list(read_file(path))
    assert _seen(runs) == _expected(log)
    assert {r.version for r in runs} == {
        r.version for r in read_file(samples / "inspect_ai" / "tiny_tools_epochs3.json")
    }


def test_score_options(samples, tmp_path):
    path = samples / "inspect_ai" / "tiny_tools_epochs3.json"
    with pytest.raises(InputError, match="no scorer 'accuracy'"):
        list(read_file(path, options={"score": "accuracy"}))
    with pytest.raises(InputError, match="takes no option 'scorer'"):
        list(read_file(path, options={"scorer": "match"}))
    # a partial-credit scorer: P is 0.5, which fails at the default pass_at=1 and passes at 0.5
    log = json.loads(path.read_text())
    for s in log["samples"]:
        s["scores"] = {"graded": {"value": "P" if s["epoch"] == 1 else "I"}}
    log["eval"]["scorers"] = [{"name": "graded"}]
    log.pop("results")
    edited = tmp_path / "graded.json"
    edited.write_text(json.dumps(log))
    strict = list(read_file(edited))
    lenient = list(read_file(edited, options={"pass_at": 0.5}))
    assert [r.outcome.reward for r in strict] == [0.5, 0.5, 0.0, 0.0, 0.0, 0.0]
    assert sum(r.outcome.passed for r in strict) == 0 and sum(r.outcome.passed for r in lenient) == 2
    assert strict[0].identity.grader["inspect_scorer"] == "graded"
    # a scorer returning several values: one must be named
    for s in log["samples"]:
        s["scores"] = {"graded": {"value": {"correct": s["epoch"] != 2, "style": 0.3}}}
    edited.write_text(json.dumps(log))
    with pytest.raises(InputError, match=r"holds several values.*score=graded.correct"):
        list(read_file(edited))
    named = list(read_file(edited, options={"score": "graded.correct"}))
    assert [r.outcome.passed for r in named] == [s["epoch"] != 2 for s in log["samples"]]
    assert named[0].identity.grader["inspect_scorer"] == "graded.correct"


def test_attachments_are_resolved(samples, tmp_path):
    log = json.loads((samples / "inspect_ai" / "tiny_tools_epochs3.json").read_text())
    sample = log["samples"][0]
    [(digest, text)] = sample["attachments"].items()
    sample["messages"][6]["error"]["message"] = f"attachment://{digest}"   # how long texts are stored
    log["samples"] = [sample]
    edited = tmp_path / "attached.json"
    edited.write_text(json.dumps(log))
    [run] = read_file(edited)
    assert run.tool_calls[2].error == text


def test_live_mock_model_run_writes_a_log_fluke_reads(tmp_path):
    """A tiny task on Inspect's mock model (no network), logged as .eval and as .json."""
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import ToolError, tool

    @tool
    def add():
        async def execute(a: int, b: int):
            """Add two integers.

            Args:
                a: first integer
                b: second integer
            """
            return str(a + b)
        return execute

    @tool
    def lookup():
        async def execute(key: str):
            """Look a key up.

            Args:
                key: the key
            """
            raise ToolError(f"no value for {key}")
        return execute

    def outputs(input, tools, tool_choice, config):
        tool_messages = [m for m in input if m.role == "tool"]
        usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
        if not tool_messages:
            out = ModelOutput.for_tool_call("mockllm/model", "add", {"a": 2, "b": 3}, tool_call_id="c_add")
            out.choices[0].message.tool_calls.append(
                type(out.choices[0].message.tool_calls[0])(id="c_look", function="lookup", arguments={"key": "k"}))
        else:
            out = ModelOutput.from_content("mockllm/model", "ANSWER: 5")
        out.usage = usage
        return out

    task = Task(dataset=[Sample(input="2+3?", target="5", id="q1")], solver=[use_tools([add(), lookup()]), generate()],
                scorer=includes(), name="live")
    model = get_model("mockllm/model", custom_outputs=outputs)
    for fmt in ("eval", "json"):
        [log] = inspect_eval(task, model=model, epochs=2, log_dir=str(tmp_path / fmt), log_format=fmt,
                             display="none", log_level="error")
        assert log.status == "success"
        [path] = list((tmp_path / fmt).glob(f"*.{fmt}"))
        runs = sorted(read_file(path), key=lambda r: r.trial)
        assert [(r.scenario, r.trial, r.outcome.passed) for r in runs] == [("live/q1", 0, True), ("live/q1", 1, True)]
        assert [(c.call_id, c.tool, c.args, c.ok) for c in runs[0].tool_calls] == [
            ("c_add", "add", {"a": 2, "b": 3}, True), ("c_look", "lookup", {"key": "k"}, False)]
        assert runs[0].tool_calls[0].result == "5" and runs[0].tool_calls[1].error == "no value for k"
        assert runs[0].identity.model == "mockllm/model"
