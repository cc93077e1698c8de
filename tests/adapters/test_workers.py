"""Concurrency is the ingest's choice: a library read forks nothing unless asked
(``workers``), the command line's ``auto`` forks where measured to pay, and a fork from a
process running other threads is said, not done silently."""

from __future__ import annotations

import multiprocessing
import threading
import warnings

import orjson
import pytest

from fluke.adapters import _fluke_jsonl, read_file
from fluke.analysis import ingest
from fluke.errors import UsageError
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run


def _file(tmp_path, n=400):
    path = tmp_path / "runs.jsonl"
    runs = [Run(scenario=f"s{i % 40}", trial=i // 40, identity=Identity(model="m"), outcome=Outcome(passed=i % 3 == 0))
            for i in range(n)]
    path.write_bytes(b"".join(orjson.dumps(r.model_dump(mode="json")) + b"\n" for r in runs))
    return path


def _children_while_reading(path, **kwargs):
    seen = set()
    items = []
    for item in read_file(path, prepared=True, **kwargs):
        seen.update(p.name for p in multiprocessing.active_children())
        items.append(item.body)
    return items, seen


def test_a_library_read_forks_nothing_unless_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(_fluke_jsonl, "BESIDE_BYTES", 0)   # every file is "large"
    path = _file(tmp_path)
    alone, none = _children_while_reading(path)
    beside, some = _children_while_reading(path, workers=2)
    assert none == set() and some and all(name.startswith("fluke-read-") for name in some)
    assert alone == beside and len(alone) == 400


def test_a_fork_from_a_process_running_threads_is_said(tmp_path, monkeypatch):
    monkeypatch.setattr(_fluke_jsonl, "BESIDE_BYTES", 0)
    path = _file(tmp_path)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        notes: list[str] = []
        list(read_file(path, prepared=True, workers=1, notes=notes))
        assert "read by 1 forked process" in notes[0]
        assert f"running {threading.active_count() - 1} other thread" in notes[0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            list(read_file(path, prepared=True, workers=1))
        assert any(issubclass(w.category, RuntimeWarning) and "other thread" in str(w.message) for w in caught)
    finally:
        stop.set()
        other.join()


def test_ingest_workers_and_the_summary(tmp_path, monkeypatch):
    monkeypatch.setattr(_fluke_jsonl, "BESIDE_BYTES", 0)
    path = _file(tmp_path)
    quiet = ingest(open_ledger(str(tmp_path / "a.db")), [str(path)])
    forked = ingest(open_ledger(str(tmp_path / "b.db")), [str(path)], workers=2)
    assert "notes" not in quiet.files[0] and quiet.files[0]["added"] == forked.files[0]["added"] == 400
    assert any("forked process" in n for n in forked.files[0]["notes"])
    with pytest.raises(UsageError, match="workers=-1"):
        ingest(open_ledger(str(tmp_path / "c.db")), [str(path)], workers=-1)
