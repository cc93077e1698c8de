"""A run larger than a ledger stores (``MAX_RUN``) is refused with the limit named, before anything is
written; a long line is gathered in time linear in its length."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.adapters import _registry
from fluke.cli import group
from fluke.ledger import _rows, open_ledger
from fluke.record import Outcome, Run, ToolCall

LIMIT = 20_000


def _line(scenario: str, pad: int) -> str:
    return json.dumps({"format_version": 1, "scenario": scenario, "outcome": {"passed": True},
                       "events": [{"kind": "tool", "tool": "t", "result": {"text": "x" * pad}}]})


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_run_over_the_limit_is_refused_by_its_line_and_nothing_is_stored(tmp_path, monkeypatch, workers):
    monkeypatch.setattr(_rows, "MAX_RUN", LIMIT)
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join([_line("s0", 10), _line("s1", 10), _line("big", LIMIT + 1), _line("s3", 10)]) + "\n")
    ledger = str(tmp_path / "l.db")
    got = CliRunner().invoke(group, ["--ledger", ledger, "ingest", "--format", "fluke", "--workers", workers,
                                     str(path)])
    assert got.exit_code == 2, got.output
    last = got.output.strip().splitlines()[-1]
    assert "a.jsonl: record 3:" in last and f"at most {LIMIT:,} bytes" in last and "Traceback" not in got.output
    with open_ledger(ledger) as opened:
        assert opened.empty()                      # all or nothing: the runs before it are not kept


def test_a_run_built_in_code_over_the_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(_rows, "MAX_RUN", LIMIT)
    big = Run(scenario="big", events=[ToolCall(tool="t", result={"text": "x" * LIMIT})], outcome=Outcome(passed=True))
    with open_ledger(str(tmp_path / "l.db")) as ledger:
        with pytest.raises(Exception, match="a ledger stores a run of at most") as caught:
            ledger.ingest([Run(scenario="ok"), big])
        assert type(caught.value).__name__ == "InputError"
        assert ledger.empty()


def test_a_line_over_many_chunks_is_read_whole_and_the_limit_still_holds(tmp_path, monkeypatch):
    monkeypatch.setattr(_registry, "CHUNK", 64)                 # the long line spans about 300 chunks
    path = tmp_path / "a.jsonl"
    lines = [_line("a", 5), _line("b", 20_000), "", _line("c", 70)]
    path.write_text("\n".join(lines))
    got = list(_registry.raw_lines(path))
    assert got == [(1, lines[0].encode()), (2, lines[1].encode()), (4, lines[3].encode())]
    monkeypatch.setattr(_registry, "MAX_LINE", 10_000)
    with pytest.raises(_registry.LineTooLong) as caught:
        list(_registry.raw_lines(path))
    assert caught.value.number == 2
