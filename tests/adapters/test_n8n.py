"""The n8n adapter on real executions of n8n 2.41 (../shared/formats/samples/n8n).

The expected values were read off the files by hand: in execution 3, runData holds
Calculator runs 0 and 1 (executionIndex 3 and 4, inputs "2+3" and "7*/") and Hotel Lookup
run 0 (executionIndex 7, executionStatus "error"); the agent's subNodeExecutionData names
call_hotels in ``actions`` and call_calc_ok / call_calc_bad in ``previousRequests``.
"""

from __future__ import annotations

import copy

import orjson
import pytest

from fluke.adapters import _n8n, detect_format, read_file
from fluke.errors import InputError

EXEC3 = [("Calculator", "call_calc_ok", {"input": "2+3"}, True, "5"),
         ("Calculator", "call_calc_bad", {"input": "7*/"}, True, "I don't know how to do that."),
         ("Hotel Lookup", "call_hotels", {"input": "Paris"}, False,
          {"error": "lookup backend unavailable for Paris [line 1]"})]


def _calls(run):
    return [(c.tool, c.call_id, c.args, c.ok, c.result) for c in run.tool_calls]


def _load(samples, name):
    return orjson.loads((samples / "n8n" / name).read_bytes())


def test_execution_with_parallel_calls_and_a_failing_tool(samples):
    path = samples / "n8n" / "execution_3_success.json"
    assert detect_format(path) == "n8n"
    [run] = read_file(path)
    assert _calls(run) == EXEC3
    hotel = run.tool_calls[2]
    assert hotel.error == "lookup backend unavailable for Paris [line 1]"
    assert hotel.agent == "AI Agent"
    # startTime 1796027673272 ms, executionTime 305 ms
    assert (hotel.t_start, hotel.t_end) == (1796027673.272, 1796027673.577)
    assert run.events[0].text == "What is 2+3 and 7*/, and which hotels are in Paris?"
    assert run.events[-1].text == "2+3 = 5; the second expression was invalid; hotel lookup failed."
    assert run.identity.harness == {"n8n_workflow": "wfAgentTools00002"}
    assert run.identity.model == "gpt-4o-mini"
    assert run.latency == pytest.approx(1.446)      # stoppedAt 08:34:33.601 - startedAt 08:34:32.155
    assert run.source.position == "3" and run.error is None and run.outcome.passed is None


def test_flatted_db_column_reads_like_the_api_payload(samples):
    path = samples / "n8n" / "execution_3_success.db_flatted.txt"
    assert detect_format(path) == "n8n"
    [flat] = read_file(path, identity={"scenario": "hotels"})
    [plain] = read_file(samples / "n8n" / "execution_3_success.json")
    assert flat.scenario == "hotels"
    assert flat.events == plain.events
    # The same column inside a DB row (data still a flatted string).
    row = {"id": "3", "workflowId": "wfAgentTools00002", "finished": True,
           "data": (samples / "n8n" / "execution_3_success.db_flatted.txt").read_text()}
    [from_row] = _n8n.read(row, file="row.json", identity={})
    assert from_row.events == plain.events


def test_cli_raw_output_irun(samples):
    [run] = read_file(samples / "n8n" / "cli_execute_rawOutput_IRun.json")
    assert [(c.tool, c.call_id, c.ok) for c in run.tool_calls] == [
        ("Calculator", "call_calc_ok", True), ("Calculator", "call_calc_bad", True),
        ("Hotel Lookup", "call_hotels", False)]
    assert run.latency == pytest.approx(1.297)      # ISO times 08:34:50.765Z -> 08:34:52.062Z


def test_invented_tool_leaves_no_call_and_the_run_failed(samples):
    [run] = read_file(samples / "n8n" / "execution_1_error.json")
    assert run.tool_calls == []
    assert run.error.startswith("Max iterations (10) reached")
    assert [e.kind for e in run.events] == ["user"]


def test_page_of_executions(samples):
    page = {"data": [_load(samples, "execution_2_success.json"), _load(samples, "execution_3_success.json")],
            "nextCursor": None}
    runs = list(_n8n.read(page, file="page.json", identity={}))
    assert [(r.trial, r.source.position, len(r.tool_calls)) for r in runs] == [(0, "2", 2), (1, "3", 3)]
    assert [c.call_id for c in runs[0].tool_calls] == ["call_calc_ok", "call_calc_bad"]


def _tool_entries(doc):
    return doc["data"]["resultData"]["runData"]


def test_one_ordering_key_for_every_entry(samples):
    doc = _load(samples, "execution_3_success.json")
    rd = _tool_entries(doc)
    # Calculator run 0 loses its executionIndex. Mixing keys per entry would sort its
    # startTime (1.8e12) after the others' small indexes; fluke orders all by startTime.
    del rd["Calculator"][0]["executionIndex"]
    [run] = _n8n.read(doc, file="x.json", identity={})
    assert [(c.tool, c.call_id) for c in run.tool_calls] == [(t, i) for t, i, *_ in EXEC3]
    # With executionIndex on all, it wins over startTime: give Hotel Lookup the earliest time.
    doc = _load(samples, "execution_3_success.json")
    _tool_entries(doc)["Hotel Lookup"][0]["startTime"] = 1
    [run] = _n8n.read(doc, file="x.json", identity={})
    assert [c.tool for c in run.tool_calls] == ["Calculator", "Calculator", "Hotel Lookup"]


def test_ties_go_to_runData_order_then_runIndex(samples):
    doc = _load(samples, "execution_3_success.json")
    rd = _tool_entries(doc)
    for node in ("Calculator", "Hotel Lookup"):
        for e in rd[node]:
            e.pop("executionIndex")
            e["startTime"] = 1796027673250
    [run] = _n8n.read(copy.deepcopy(doc), file="x.json", identity={})
    assert [c.call_id for c in run.tool_calls] == ["call_calc_ok", "call_calc_bad", "call_hotels"]
    # Hotel Lookup listed before Calculator in runData: it now wins the tie.
    doc["data"]["resultData"]["runData"] = {"Hotel Lookup": rd["Hotel Lookup"],
                                            **{k: v for k, v in rd.items() if k != "Hotel Lookup"}}
    [run] = _n8n.read(doc, file="x.json", identity={})
    assert [c.call_id for c in run.tool_calls] == ["call_hotels", "call_calc_ok", "call_calc_bad"]


def test_replayed_id_argument_is_dropped_only_when_it_is_the_call_id(samples):
    doc = _load(samples, "execution_3_success.json")
    calc = _tool_entries(doc)["Calculator"]
    calc[0]["inputOverride"]["ai_tool"][0][0]["json"]["id"] = "call_calc_ok"
    calc[1]["inputOverride"]["ai_tool"][0][0]["json"]["id"] = "W1234"   # a real argument
    [run] = _n8n.read(doc, file="x.json", identity={})
    assert run.tool_calls[0].args == {"input": "2+3"}
    assert run.tool_calls[1].args == {"input": "7*/", "id": "W1234"}
    assert run.tool_calls[1].call_id == "call_calc_bad"


def test_statuses_and_items(samples):
    doc = _load(samples, "execution_3_success.json")
    rd = _tool_entries(doc)
    rd["Calculator"][1]["executionStatus"] = "running"
    rd["Hotel Lookup"][0]["inputOverride"]["ai_tool"][0][0]["pairedItem"]["item"] = 1
    runs = list(_n8n.read(doc, file="exec.json", identity={}))
    assert [r.scenario for r in runs] == ["exec#0", "exec#1"]
    assert [c.ok for c in runs[0].tool_calls] == [True, None]
    assert [c.tool for c in runs[1].tool_calls] == ["Hotel Lookup"]


def test_bad_payloads(samples):
    doc = _load(samples, "execution_3_success.json")
    doc["storedAt"] = "fs"
    del doc["data"]
    assert not _n8n.sniff({"nodes": [], "connections": {}})      # a workflow, not an execution
    with pytest.raises(InputError, match="stored in 'fs'"):
        list(_n8n.read(doc, file="e.json", identity={}))
    with pytest.raises(InputError, match="no n8n execution"):
        list(_n8n.read({"nodes": []}, file="w.json", identity={}))
