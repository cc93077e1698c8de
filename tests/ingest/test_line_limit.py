"""A line over the reader's limit is refused by its number and the limit, not blamed on truncation."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.adapters import _fluke_jsonl, _registry, read_file
from fluke.cli import group
from fluke.errors import InputError
from fluke.ledger import open_ledger

LIMIT = 4096


def _line(scenario: str, pad: int = 0) -> str:
    return json.dumps({"format_version": 1, "scenario": scenario, "events": [{"kind": "user", "text": "x" * pad}]})


def _write(path, long_at: int, lines: int = 6) -> None:
    rows = [_line(f"s{i}", LIMIT + 10 if i == long_at else 0) for i in range(lines)]
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture()
def small_limit(monkeypatch):
    monkeypatch.setattr(_registry, "MAX_LINE", LIMIT)


@pytest.mark.parametrize("long_at", [0, 1, 4])
@pytest.mark.parametrize("beside", [False, True], ids=["one process", "reading processes"])
def test_a_line_over_the_limit_is_refused_by_its_number(tmp_path, small_limit, monkeypatch, long_at, beside):
    monkeypatch.setattr(_fluke_jsonl, "BESIDE_BYTES", 0 if beside else 2 ** 62)
    monkeypatch.setattr(_registry, "CHUNK", 1000)   # the long line spans several chunks
    path = tmp_path / "a.jsonl"
    _write(path, long_at)
    with pytest.raises(InputError) as caught:
        list(read_file(path, prepared=True, workers=2 if beside else 0))
    text = str(caught.value)
    assert f"line {long_at + 1}:" in text and "longer than the reader's limit of 4,096 bytes" in text
    assert "truncated" not in text


def test_a_line_at_the_limit_is_read(tmp_path, monkeypatch):
    path = tmp_path / "a.jsonl"
    path.write_text(_line("a") + "\n" + _line("b", 100) + "\n")
    monkeypatch.setattr(_registry, "MAX_LINE", len(_line("b", 100)))
    assert [r.scenario for r in read_file(path)] == ["a", "b"]
    monkeypatch.setattr(_registry, "MAX_LINE", len(_line("b", 100)) - 1)
    with pytest.raises(InputError, match="line 2: is longer"):
        list(read_file(path))


def test_one_json_document_on_one_long_line_is_still_a_document(tmp_path, small_limit):
    # the limit is the JSON Lines readers': a τ-bench results file is one document, however long its line
    doc = [{"task_id": 1, "trial": 0, "reward": 1.0, "info": {},
            "traj": [{"role": "user", "content": "x" * (LIMIT * 2)}]}]
    path = tmp_path / "a.json"
    path.write_text(json.dumps(doc) + "\n\n")
    assert [r.outcome.passed for r in read_file(path)] == [True]
    path.write_text(_line("only", LIMIT * 2) + "\n")    # fluke's own JSONL, one line: a line
    with pytest.raises(InputError, match="line 1: is longer"):
        list(read_file(path))


def test_ingest_refuses_the_file_in_one_line_and_writes_nothing(tmp_path, small_limit):
    path, ledger = tmp_path / "a.jsonl", tmp_path / "l.db"
    _write(path, 3)
    result = CliRunner().invoke(group, ["--ledger", str(ledger), "ingest", str(path)])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert "line 4: is longer than the reader's limit of 4,096 bytes" in lines[0]
    if ledger.exists():
        with open_ledger(str(ledger)) as led:
            assert led.count() == 0
