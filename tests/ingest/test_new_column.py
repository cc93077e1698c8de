"""A field added to the run schema reaches the fast path with no edit in adapters/ or record/_line.py.

The schema is the pydantic model; the fast path's msgspec structs are made from it at import
(fluke.record._structs). Here a fresh interpreter replaces ``Run`` (and its ``Outcome``) by
models with one more field each, as an edit of record/_run.py would, before the rest of fluke
is imported. The lines holding the new fields must then prepare (none declined for the new
field) to the body the extended model itself makes, mutations of the new fields must either
prepare to the model's body or be left to the model, and ``fluke ingest`` of a file must store
and give back the new fields through the readers and the ledger unchanged.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_SCRIPT = r'''
import hashlib, json, random, sys
import orjson
from pydantic import Field
import fluke.record._run as schema

class Outcome(schema.Outcome):
    judge_score: float | None = None

class Run(schema.Run):
    attempt: schema.Int64 | None = None
    outcome: Outcome = Field(default_factory=Outcome)

Run.__name__ = "Run"
schema.Run, schema.Outcome = Run, Outcome
import fluke.record
fluke.record.Run, fluke.record.Outcome = Run, Outcome

from fluke.record import LinePreparer, content_json
from fluke.record._line import agrees, _Run
assert agrees(), "the fast path is off"
assert "attempt" in _Run.__struct_fields__

def line(i):
    return {"format_version": 1, "scenario": f"s{i % 7}", "trial": i, "attempt": i % 3,
            "identity": {"model": "m"}, "events": [{"kind": "user", "text": "hi"},
            {"kind": "tool", "tool": "t", "args": {"n": i}, "ok": True}],
            "outcome": {"passed": i % 2 == 0, "reward": float(i % 2), "judge_score": i / 8}}

prep = LinePreparer("f.jsonl")
taken = declined = 0
rng = random.Random(7)
odd = [None, 0, -1, 2 ** 63, 2 ** 64 - 1, 1.5, 1e16, "x", True, [], {}]
for i in range(300):
    fields = line(i)
    if i % 4 == 1:
        fields["attempt"] = rng.choice(odd)
    elif i % 4 == 3:
        fields["outcome"]["judge_score"] = rng.choice(odd)
    raw = orjson.dumps(fields)
    got = prep(raw, i + 1)
    try:
        run = Run.model_validate(dict(orjson.loads(raw), source={"adapter": "fluke", "file": "f.jsonl",
                                                                 "position": i + 1}))
    except Exception:
        run = None
    if got is None:
        declined += 1
        assert i % 2, ("a plain line with the new fields declined", fields)
        continue
    assert run is not None, ("the fast path took what the model refuses", fields)
    assert got.body == content_json(run), (got.body, content_json(run))
    assert got.digest.hex() == run.hash and got.outcome == run.outcome.model_dump(mode="json")
    taken += 1

import tempfile, pathlib
from fluke.ledger import open_ledger
from fluke.adapters import read_file
work = pathlib.Path(tempfile.mkdtemp())
path = work / "runs.jsonl"
path.write_bytes(b"\n".join(orjson.dumps(line(i)) for i in range(40)) + b"\n")
ledger = open_ledger(str(work / "l.db"))
result = ledger.ingest(read_file(path, prepared=True))
back = sorted(ledger.runs(), key=lambda r: r.trial)
print(json.dumps({"taken": taken, "declined": declined, "added": result.added,
                  "attempts": [r.attempt for r in back], "scores": [r.outcome.judge_score for r in back],
                  "hashes_ok": all(r.hash == hashlib.sha256(content_json(r)).hexdigest() for r in back)}))
'''


def test_a_new_field_in_the_run_model_is_in_the_fast_path_and_the_ledger_with_no_other_edit(tmp_path):
    src = Path(__file__).resolve().parents[2] / "src"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["taken"] >= 150 and got["declined"] >= 10, got   # the plain half all taken, odd values left
    assert got["added"] == 40 and got["hashes_ok"]
    assert got["attempts"] == [i % 3 for i in range(40)]
    assert got["scores"] == [i / 8 for i in range(40)]
