"""grade's vocabulary check samples the first runs in the order it grades them, and never sorts the ledger.

The sample was read in ``runs()`` order (ingest, scenario, trial): on SQLite a sort of every
stored body, most of a minute at a million runs, in the parent, before any grading. The oracle
here is the ledger file read with sqlite3 itself, in row id order.
"""

from __future__ import annotations

import sqlite3

import orjson

from fluke.analysis import grade
from fluke.analysis._vocabulary import SAMPLE
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run, ToolCall


def _runs(n, tool_of):
    # scenarios in descending order: storage order is not (ingest, scenario, trial) order
    return [Run(scenario=f"s{n - i:05d}", trial=0, identity=Identity(model="m"), outcome=Outcome(passed=True),
                events=[ToolCall(tool=tool_of(i), ok=True)]) for i in range(n)]


def test_the_sample_is_the_first_runs_stored_and_no_statement_sorts_the_runs(tmp_path):
    path = tmp_path / "v.db"
    ledger = open_ledger(str(path))
    ledger.ingest(_runs(SAMPLE + 700, lambda i: "lookup" if i < SAMPLE else f"foreign_{i % 3}"))
    statements = []
    ledger._conn.set_trace_callback(statements.append)
    result = grade(ledger, {"tools": ["lookup"]}, store=False, jobs=1)
    ledger._conn.set_trace_callback(None)

    con = sqlite3.connect(path)
    first = [orjson.loads(b) for (b,) in con.execute("SELECT body FROM runs ORDER BY rowid LIMIT ?", (SAMPLE,))]
    want = sorted({e["tool"] for run in first for e in run["events"]} - {"lookup"})
    vocabulary = result.payload()["vocabulary"]
    assert vocabulary["runs_sampled"] == SAMPLE
    assert vocabulary["tools_unknown"] == want == []      # the foreign tools come later in storage order
    # the runs() order (ingest, scenario, trial) starts with the highest scenarios: the foreign tools
    by_runs_order = [r for r in ledger.runs(limit=SAMPLE)]
    assert any(e.tool.startswith("foreign") for r in by_runs_order for e in r.events)
    assert result.runs == SAMPLE + 700
    assert not [s for s in statements if "ORDER BY ingest" in s], statements


def test_a_filtered_sample_reads_on_past_slices_without_matches(tmp_path):
    ledger = open_ledger(str(tmp_path / "f.db"))
    ledger.ingest(_runs(3 * SAMPLE, lambda i: "lookup"))
    ledger.ingest([Run(scenario="only", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True),
                       events=[ToolCall(tool="get_bill", ok=True)]) for t in range(5)])
    result = grade(ledger, {"tools": ["lookup"]}, scenario="only", store=False, jobs=1)
    vocabulary = result.payload()["vocabulary"]
    assert (vocabulary["runs_sampled"], vocabulary["tools_unknown"]) == (5, ["get_bill"])
    assert result.vocabulary_warning.startswith("1 of 1 tools the runs called are unknown")
