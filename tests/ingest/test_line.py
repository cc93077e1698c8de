"""The ingest's fastest path (fluke.record.LinePreparer: msgspec decodes a line into structs
and encodes it sorted) against the model path it stands in for.

The oracle is the model: a line the fast path takes must validate (orjson-parsed) as a Run
whose content JSON is byte for byte the prepared body, with the same identity, condition
key, outcome, place and source JSON, and a digest that is the body's SHA-256 (so the row key
and Run.hash agree); a line it declines goes down the slow path, so through the reader the
result (runs or the error) is the model path's, on real, generated, mutated and broken lines.
"""

from __future__ import annotations

import copy
import hashlib
import random
import sys
from pathlib import Path

import orjson
import pytest

from fluke.adapters import _fluke_jsonl, read_file
from fluke.errors import FlukeError
from fluke.record import LinePreparer, Run, content_json, place_of
from fluke.record._line import agrees
from fluke.record._storable import MAX_DEPTH

from .test_prepared import _real_runs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from verbs import _run  # noqa: E402  (the shape bench/verbs.py ingests)


def _agrees(line: bytes, number: int = 5, identity: dict | None = None) -> bool | None:
    """None when the fast path declines ``line``; else whether it matches the model."""
    prepared = LinePreparer("f.jsonl", identity)(line, number)
    if prepared is None:
        return None
    fields = orjson.loads(line)
    if fields.get("source") is None:
        fields["source"] = {"adapter": "fluke", "file": "f.jsonl", "position": number}
    if identity:
        from fluke.record import Identity

        fields["identity"] = Identity.model_validate(fields.get("identity") or {}).filled(identity).model_dump()
    run = Run.model_validate(fields)
    outcome = run.outcome
    assert prepared.body == content_json(run), (prepared.body, content_json(run))
    assert prepared.digest == hashlib.sha256(prepared.body).digest() and prepared.digest.hex() == run.hash
    assert prepared.identity == run.identity and prepared.identity.version == run.version
    assert prepared.scenario == run.scenario and prepared.condition == run.condition_key()
    assert prepared.passed == (None if outcome.passed is None else int(outcome.passed))
    assert prepared.source == run.source.model_dump_json()
    assert prepared.outcome == outcome.model_dump(mode="json") and prepared.steps == len(run.events)
    assert prepared.place == place_of(outcome.passed, outcome.died_at, run.events)
    return True


def test_msgspec_and_orjson_agree_here():
    assert agrees()   # else the fast path is off and the rest of this file tests the slow one


def test_every_real_run_as_a_line_prepares_to_the_model_s_body_and_hash():
    runs = _real_runs()
    if len(runs) < 100:
        pytest.skip("shared data not found")
    taken = 0
    for run in runs:
        exported = orjson.loads(content_json(run))     # what `fluke export` writes, with the source
        exported["source"] = run.source.model_dump(mode="json") if run.source else None
        for fields in (exported, run.model_dump(mode="json")):
            taken += bool(_agrees(orjson.dumps(fields)))
    assert taken >= 0.95 * 2 * len(runs), (taken, len(runs))


_ODD = [None, 0, 1, -1, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -(2 ** 63) - 1, 10 ** 30, 1.0, 0.5, -0.0, 1e15, 1e16, 1e300,
        1e-7, True, False, "", "x", "a\x00b", "\u00e9\U0001f600\u2028", [], {}, ["x"], {"k": "v"}, {"k": 1e20},
        {"\u00e9": 1, "a": 2}, "agent", "user", "tool", "fail", "bogus", "1.5", "12345678901234567890"]


def test_generated_lines_and_every_mutation_agree_with_the_model():
    rng = random.Random(20261201)
    taken = declined = 0
    for i in range(600):
        fields = _run(i)
        if i % 3 == 0:
            fields.update(condition={"temp": 0.5, "lang": "fr", "n": 3, "b": True}, tags=["a", "b"],
                          cost={"usd": 0.25}, seed=i, latency=1.5, unit="u", tape="t",
                          source={"adapter": "x", "file": "f\u00e9\"\\.json", "position": i})
        if i % 5 == 0:
            fields["gold"] = [{"tool": "lookup", "args": {"id": i}}, {"tool": "refund", "compare": ["id"]}]
        if i % 7 == 0:
            fields["identity"]["tools"] = {"lookup": {"v": 2, "w": [1.5, None]}}
        assert _agrees(orjson.dumps(fields)) is True, fields
        mutated = copy.deepcopy(fields)
        where = rng.choice(["top", "outcome", "identity", "event", "event", "event", "args"])
        if where == "args":
            target = rng.choice([e for e in mutated["events"] if e["kind"] == "tool"])["args"]
        elif where == "event":
            target = rng.choice(mutated["events"])
        else:
            target = mutated if where == "top" else mutated.setdefault(where, {})
        keys = sorted(target) + ["extra", "t", "t_start", "agent", "requestor", "error", "label", "died_at", "gold",
                                 "source", "date"]
        key = rng.choice(keys)
        if rng.random() < 0.15:
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(rng.choice(_ODD))
        try:
            line = orjson.dumps(mutated)
        except orjson.JSONEncodeError:   # an integer orjson cannot write: not a line a file holds
            continue
        got = _agrees(line)
        taken += got is True
        declined += got is None
    assert taken > 150 and declined > 100, (taken, declined)


def test_identity_given_on_the_command_line_fills_what_the_line_lacks():
    line = orjson.dumps(_run(4))
    assert _agrees(line, identity={"tools": "t1", "model": "not used: the line has one"}) is True
    assert LinePreparer("f", {"tools": "t1"})(line, 1).identity.tools == "t1"


@pytest.mark.parametrize(
    "line",
    [
        b'{"scenario":"s","outcome":{"reward":1e16}}',  # orjson writes 1e+16, msgspec 1e16
        b'{"scenario":"s","events":[{"kind":"tool","tool":"t","result":1e300}]}',
        b'{"scenario":"s","events":[{"kind":"tool","tool":"t","args":{"n":18446744073709551616}}]}',  # orjson: a float
        b'{"scenario":"s","events":[{"kind":"tool","tool":"t","args":{"n":-9223372036854775809}}]}',
        b'{"scenario":"s\\u0000"}',
        b'{"scenario":"s","tags":["\\u0000"]}',
        b'{"scenario":"s","condition":{"k":"\\u0000"}}',
        b'{"scenario":"s","identity":{"date":"\\u0000"}}',
        b'{"scenario":"s","trial":true}',
        b'{"scenario":"s","outcome":{"passed":1}}',
        b'{"scenario":"s","format_version":2}',
        b'{"scenario":""}',
        b'{"scenario":"s","hash":"x"}',
    ],
)
def test_values_the_two_libraries_would_write_apart_are_left_to_the_model(line, tmp_path):
    assert _agrees(line) is None
    assert _through_reader(line, True, tmp_path) == _through_reader(line, False, tmp_path)


@pytest.mark.parametrize(
    "line",
    [
        b'{"scenario":"s","gold":null}',
        b'{"scenario":"s","outcome":{"reward":1}}',
        b'{"scenario":"s","cost":{"usd":2}}',
        b' { "scenario" : "s\\/\\u00e9\\ud83d\\ude00" , "trial" : -0 } ',
        b'{"scenario":"s","latency":9999999999999998.0}',
        b'{"scenario":"s","events":[{"kind":"tool","tool":"t","args":{"\\u00e9":1,"B":[1e-7,-0.0,12345678901234567]}}]}',
        b'{"scenario":"s","source":null,"seed":"x","condition":{"a":1,"b":1.0,"c":null}}',
        b'{"scenario":"s","scenario":"t"}',
    ],
)
def test_values_written_alike_are_taken(line):
    assert _agrees(line) is True


def test_a_line_nested_deeper_than_a_ledger_stores_is_the_model_s_error(tmp_path):
    deep: object = "x"
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    line = orjson.dumps(dict(_run(1), events=[{"kind": "tool", "tool": "t", "result": deep}]))
    assert _agrees(line) is None
    got = _through_reader(line, True, tmp_path)
    assert got == _through_reader(line, False, tmp_path) and got[0] == "error" and "nested" in got[1]
    shallow = orjson.dumps(dict(_run(1), events=[{"kind": "tool", "tool": "t", "args": [[1]] * 150}]))
    assert _agrees(shallow) is True   # many brackets, none deep: still taken


def _through_reader(line: bytes, prepared: bool, tmp: Path) -> object:
    path = tmp / "runs.jsonl"
    path.write_bytes(orjson.dumps(_run(0)) + b"\n" + line + b"\n")
    try:
        items = list(read_file(path, prepared=prepared))
    except FlukeError as exc:
        return ("error", str(exc))
    return [(item.body, item.source) if not isinstance(item, Run) else
            (content_json(item), item.source.model_dump_json()) for item in items]


def test_lines_broken_byte_by_byte_read_as_the_model_path_reads_them(tmp_path):
    rng = random.Random(7)
    base = orjson.dumps(dict(_run(2), condition={"t": 0.5}, tags=["x"]))
    differ = 0
    for _ in range(300):
        line = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(line))
            op = rng.random()
            if op < 0.4:
                line[at] = rng.choice(b'{}[]",:0123456789.eE+-tfnul\\ \t\x00\xff\xc3')
            elif op < 0.7:
                del line[at]
            else:
                line.insert(at, rng.choice(b'{}[]",:05e-\\ '))
        line = bytes(line).replace(b"\n", b" ")
        fast, slow = _through_reader(line, True, tmp_path), _through_reader(line, False, tmp_path)
        assert fast == slow, line
        differ += fast != _through_reader(base, False, tmp_path)
    assert differ > 200


def _stored(item) -> tuple:
    """What the ledger stores of a run read (a Prepared one, or one the model built: line 300's
    float of 1e16 is one the structs refuse), and the digest it keys it by."""
    if isinstance(item, Run):
        body = content_json(item)
        return body, item.source.model_dump_json(), hashlib.sha256(body).digest()
    return item.body, item.source, item.digest or hashlib.sha256(item.body).digest()


def test_a_file_read_by_a_second_process_stores_what_one_process_stores(tmp_path, monkeypatch):
    lines = [orjson.dumps(_run(i)) for i in range(1500)]
    lines[300] = b'{"scenario":"s","outcome":{"reward":1e16}}'   # declined here: parsed by the model
    lines[900] = orjson.dumps(dict(_run(900), source={"adapter": "x", "position": "p"}))
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    got = []
    for size in (2 ** 62, 0):
        monkeypatch.setattr(_fluke_jsonl, "BESIDE_BYTES", size)
        got.append([_stored(item) for item in read_file(path, prepared=True, workers=2)])
    assert got[0] == got[1] and len(got[0]) == 1500
    assert all(digest == hashlib.sha256(body).digest() for body, _, digest in got[1])
