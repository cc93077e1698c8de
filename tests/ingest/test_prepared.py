"""The ingest's fast path (fluke.record.prepare) against the model path it stands in for.

The oracle is the model itself: every record prepare() accepts must validate as a Run whose
content JSON is byte for byte the prepared body (so the content hash, the row key and the
stored body are the same), with the same identity, condition key, outcome and source JSON;
and a record it declines must give, through the reader, the error the model path gives.
"""

from __future__ import annotations

import copy
import os
import random
import sys
from pathlib import Path

import orjson
import pytest

from fluke.adapters import read_file
from fluke.adapters import _fluke_jsonl
from fluke.errors import FlukeError
from fluke.ledger import open_ledger
from fluke.record import Run, content_json, prepare
from fluke.record._storable import MAX_DEPTH

from ..conftest import DATA, FORMATS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from verbs import _run  # noqa: E402  (the shape bench/verbs.py ingests)


def _agrees(fields: dict) -> bool | None:
    """None when prepare() declines; else whether it matches the model on every stored part."""
    prepared = prepare(copy.deepcopy(fields))
    if prepared is None:
        return None
    run = Run.model_validate(fields)
    passed = run.outcome.passed
    assert prepared.body == content_json(run)
    assert prepared.identity == run.identity and prepared.identity.version == run.version
    assert prepared.scenario == run.scenario and prepared.condition == run.condition_key()
    assert prepared.passed == (None if passed is None else int(passed))
    assert prepared.source == (None if run.source is None else run.source.model_dump_json())
    assert prepared.steps == len(run.events) and prepared.outcome == run.outcome.model_dump(mode="json")
    assert prepared.run() == run
    return True


def _real_runs() -> list[Run]:
    runs = []
    for root in (DATA, FORMATS):
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.suffix in (".md", ".py", ".txt"):
                continue
            try:
                runs.extend(read_file(path))
            except (FlukeError, ValueError):   # not a file of runs (a schema, a broken sample)
                continue
    return runs


def test_every_real_run_prepares_to_the_model_s_body_and_hash():
    runs = _real_runs()
    if len(runs) < 100:
        pytest.skip(f"shared data not found under {DATA}")
    accepted = 0
    for run in runs:
        exported = orjson.loads(content_json(run))     # what `fluke export` writes, with the source
        exported["source"] = run.source.model_dump(mode="json") if run.source else None
        dumped = orjson.loads(orjson.dumps(run.model_dump(mode="json")))   # pydantic's own dump
        for fields in (exported, dumped):
            accepted += bool(_agrees(fields))
    # The real files are plain enough that the fast path takes (nearly) all of them.
    assert accepted >= 0.95 * 2 * len(runs), (accepted, len(runs))


def test_generated_runs_and_every_mutation_agree_with_the_model():
    rng = random.Random(20261201)
    bad_values = [None, 0, 1, -1, 2 ** 63, 2 ** 64 - 1, 1.0, 0.5, True, False, "", "x", "a\x00b", [], {}, ["x"],
                  {"k": "v"}, {"k": 1}, "agent", "user", "tool", "fail", "bogus"]
    decided_fast = decided_by_model = 0
    for i in range(400):
        fields = _run(i)
        if i % 3 == 0:
            fields["condition"] = {"temp": 0.5, "lang": "fr", "n": 3, "b": True}
            fields["tags"] = ["a", "b"]
            fields["cost"] = {"usd": 0.25}
            fields["seed"] = i
            fields["source"] = {"adapter": "x", "file": "f\u00e9\"\\.json", "position": i}
        assert _agrees(fields) is True, fields
        decided_fast += 1
        # One mutation: a field (top level, outcome, identity, an event) set to an odd value,
        # or removed, or an unknown one added.
        mutated = copy.deepcopy(fields)
        where = rng.choice(["top", "outcome", "identity", "event", "event", "event"])
        target = (mutated if where == "top" else mutated.setdefault(where, {}) if where != "event"
                  else rng.choice(mutated["events"]))
        keys = sorted(target) + ["extra", "t", "t_start", "agent", "requestor", "error", "label", "died_at"]
        key = rng.choice(keys)
        if rng.random() < 0.15:
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(rng.choice(bad_values))
        agreed = _agrees(mutated)
        if agreed is None:
            decided_by_model += 1
    assert decided_fast == 400 and decided_by_model > 50


def _outcome(obj: dict, prepared: bool) -> object:
    try:
        got = list(_fluke_jsonl.read([(7, copy.deepcopy(obj))], file="f.jsonl", identity={}, prepared=prepared))
    except FlukeError as exc:
        return ("error", str(exc))
    (item,) = got
    return ("run", (item.run() if not isinstance(item, Run) else item).model_dump(mode="json"))


@pytest.mark.parametrize("change", [
    ("outcome", "reward", 1), ("outcome", "passed", "yes"), ("outcome", "label", "bogus"), ("outcome", "died_at", -1),
    (None, "trial", 2 ** 63), (None, "trial", 1.0), (None, "scenario", ""), (None, "scenario", "a\x00"),
    (None, "format_version", 2), (None, "hash", "x"), (None, "cost", {"usd": 1}), (None, "tags", ["a\x00"]),
    ("event", "kind", "bogus"), ("event", "ok", "yes"), ("event", "requestor", "bot"), ("event", "t_start", 1),
    ("event", "tool", None), ("event", "extra", 1), ("event", "args", "deep"), ("identity", "model", 3),
    ("identity", "date", "x\x00"), (None, "gold", [{"tool": "t"}]), (None, "source", {"adapter": 1}),
])
def test_a_record_the_fast_path_declines_reads_as_the_model_path_reads_it(change):
    where, key, value = change
    obj = _run(3)
    if value == "deep":
        for _ in range(MAX_DEPTH + 1):
            value = [value]
    target = obj if where is None else obj["events"][1] if where == "event" else obj[where]
    target[key] = value
    assert _outcome(obj, prepared=True) == _outcome(obj, prepared=False)


def test_an_ingest_stores_the_same_rows_by_either_path(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"".join(orjson.dumps(_run(i)) + b"\n" for i in range(300)))
    tables = []
    for prepared in (True, False):
        with open_ledger(str(tmp_path / f"{prepared}.db")) as ledger:
            ledger.ingest(read_file(path, prepared=prepared))
            tables.append((ledger.query("SELECT k, vid, scenario, source, body FROM runs ORDER BY rowid"),
                           ledger.query("SELECT * FROM counts ORDER BY vid, scenario"),
                           ledger.query("SELECT vid, version, identity FROM versions ORDER BY vid")))
    assert len(tables[0][0]) == 300 and tables[0] == tables[1]


def _read_all(path, monkeypatch, beside: bool, **kwargs):
    monkeypatch.setattr(_fluke_jsonl, "BESIDE_BYTES", 0 if beside else 2 ** 62)
    try:
        items = list(read_file(path, prepared=True, workers=_fluke_jsonl.BESIDE_PROCESSES, **kwargs))
    except FlukeError as exc:
        return ("error", str(exc))
    return [(item.body, item.source) if not isinstance(item, Run) else
            (content_json(item), item.source.model_dump_json()) for item in items]


@pytest.mark.parametrize("processes", [1, 2])   # with 2, they take every other batch
@pytest.mark.parametrize("batch", [1000, 100])   # with 100 and one process, every fourth batch is parsed here
@pytest.mark.parametrize("defect", [None, "not json", "bad record", "odd but valid", "identity"])
def test_a_file_read_by_a_second_process_gives_the_same_runs_and_errors(tmp_path, monkeypatch, defect, batch,
                                                                        processes):
    monkeypatch.setattr(_fluke_jsonl, "BESIDE_LINES", batch)
    monkeypatch.setattr(_fluke_jsonl, "BESIDE_PROCESSES", processes)
    lines = [orjson.dumps(_run(i)) for i in range(2500)]
    lines[7] = b"   "                               # blank lines are skipped, and counted
    lines[1200] = orjson.dumps(dict(_run(1200), outcome={"passed": True, "reward": 1}))   # the model coerces
    if defect == "not json":
        lines[2300] = lines[2300][:-9]
    elif defect == "bad record":
        lines[2400] = orjson.dumps(dict(_run(2400), trial="seven"))
    elif defect == "odd but valid":
        lines[5] = orjson.dumps(dict(_run(5), source={"adapter": "x", "position": "p"}))
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n\n")
    kwargs = {"identity": {"model": "filled", "policy": "p"}} if defect == "identity" else {}
    one = _read_all(path, monkeypatch, False, **kwargs)
    two = _read_all(path, monkeypatch, True, **kwargs)
    assert one == two
    if defect in ("not json", "bad record"):
        assert one[0] == "error" and f"line {2301 if defect == 'not json' else 2401}" in one[1]
    else:
        assert len(one) == 2499


def _dies_after_one_batch(path, file, identity, out, **turns):
    out.send([])
    os._exit(3)


def test_a_second_process_that_dies_part_way_is_an_error_naming_the_file(tmp_path, monkeypatch):
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"".join(orjson.dumps(_run(i)) + b"\n" for i in range(50)))
    monkeypatch.setattr(_fluke_jsonl, "_prepare_lines", _dies_after_one_batch)
    got = _read_all(path, monkeypatch, True)
    assert got[0] == "error" and str(path) in got[1] and "could not be read to the end" in got[1]


@pytest.mark.parametrize("load, forked", [(0.2, 2), (1.5, 0), (40.0, 0)])
def test_auto_forks_readers_only_where_a_core_is_idle(tmp_path, monkeypatch, load, forked):
    """``workers="auto"`` on two cores: two reading processes at a load average below 1, none
    above it (a busy machine's readers add CPU and time); the runs are the same either way."""
    monkeypatch.setattr(_fluke_jsonl, "BESIDE_BYTES", 0)
    monkeypatch.setattr(_fluke_jsonl.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_fluke_jsonl.os, "getloadavg", lambda: (load, load, load))
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"".join(orjson.dumps(_run(i)) + b"\n" for i in range(300)))
    notes: list[str] = []
    got = [item.body for item in read_file(path, prepared=True, workers="auto", notes=notes)]
    assert got == [item.body for item in read_file(path, prepared=True, workers=0)] and len(got) == 300
    assert [note.split(";")[0] for note in notes] == \
        ([f"read by {forked} forked processes beside the one storing the runs"] if forked else [])
