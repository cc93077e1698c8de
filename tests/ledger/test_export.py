"""``export_runs``: a lossless streaming copy that counts secret-shaped runs, or redacts them.
Each test re-ingests the file through fluke's own JSONL reader into a second real ledger."""

from __future__ import annotations

import io

import orjson
import pytest

from fluke.adapters import read_file
from fluke.ledger import ExportResult, export_runs, open_ledger
from fluke.record import Identity, Outcome, Run, Source, ToolCall, UserMessage

from ..record.test_redact import SHAPES

#: One planted secret per field a run can carry it in (the secret, then where it goes).
_PLANTS = [
    (SHAPES[0][1], "user text"), (SHAPES[4][1], "tool args"), (SHAPES[7][1], "tool result"),
    (SHAPES[8][1], "args key"), (SHAPES[11][1], "error"), (SHAPES[14][1], "tool result"),
    (SHAPES[20][1], "condition"), (SHAPES[23][1], "tags"), (SHAPES[15][1], "identity"),
]


def _run(i: int, secret: str | None = None, where: str = "") -> Run:
    text, args, result, error, tags, condition = f"refund W{i}", {"order": f"W{i}"}, {"ok": True}, None, ["t"], {}
    model = "m"
    if where == "user text":
        text = f"connect with {secret} please"
    elif where == "tool args":
        args = {"order": f"W{i}", "creds": [{"v": secret}]}
    elif where == "tool result":
        result = {"log": f"loaded {secret}"}
    elif where == "args key":
        args = {secret: "1"}
    elif where == "error":
        error = f"crashed near {secret}"
    elif where == "condition":
        condition = {"auth": secret}
    elif where == "tags":
        tags = ["t", secret]
    elif where == "identity":
        model = f"m {secret}"
    return Run(scenario=f"s{i % 5}", trial=i, identity=Identity(model=model, harness={"v": 2}),
               condition=condition, tags=tags, error=error,
               events=[UserMessage(text=text), ToolCall(tool="lookup", args=args, ok=True, result=result)],
               outcome=Outcome(passed=i % 2 == 0, reward=0.5), cost={"usd": 0.01},
               source=Source(adapter="fluke", file="in.jsonl", position=i) if i % 3 else None)


def _ledger_runs():
    clean = [_run(i) for i in range(30)]
    planted = [_run(100 + j, secret, where) for j, (secret, where) in enumerate(_PLANTS)]
    return clean, planted


def _reingest(tmp_path, data: bytes, name: str) -> list[Run]:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(data)
    with open_ledger(str(tmp_path / f"{name}.db")) as copy:
        result = copy.ingest(read_file(path))
        assert result.added == data.count(b"\n")
        return list(copy.runs())


def test_export_is_lossless_and_counts_the_runs_holding_secrets(ledger, tmp_path):
    clean, planted = _ledger_runs()
    ledger.ingest(clean + planted)
    out = io.BytesIO()
    result = export_runs(ledger, out)
    assert result == ExportResult(runs=39, with_secrets=len(_PLANTS), redacted=False)
    data = out.getvalue()
    assert all(secret.encode() in data or orjson.dumps(secret)[1:-1] in data for secret, _ in _PLANTS)
    back = _reingest(tmp_path, data, "copy")
    assert {r.hash for r in back} == {r.hash for r in clean + planted}
    by_hash = {r.hash: r for r in clean + planted}
    assert all(r.source == by_hash[r.hash].source for r in back if by_hash[r.hash].source is not None)
    # Each line says what the export of a parsed run said before (the same JSON document).
    stored = {r.hash: r for r in ledger.runs()}
    for line in data.splitlines():
        doc = orjson.loads(line)
        run = Run.model_validate(doc)
        assert doc == {k: v for k, v in stored[run.hash].model_dump(mode="json").items()
                       if k != "source" or v is not None}


def test_export_with_redact_hides_every_planted_secret_and_only_those_runs_change(ledger, tmp_path):
    clean, planted = _ledger_runs()
    ledger.ingest(clean + planted)
    out = io.BytesIO()
    result = export_runs(ledger, out, redact=True)
    assert (result.runs, result.with_secrets, result.redacted) == (39, len(_PLANTS), True)
    data = out.getvalue()
    for name, text, secret in SHAPES:
        if any(text == s for s, _ in _PLANTS):
            assert secret.encode() not in data and orjson.dumps(secret)[1:-1] not in data, name
    assert data.count(b"[REDACTED") >= len(_PLANTS)
    back = {r.hash for r in _reingest(tmp_path, data, "redacted")}
    assert {r.hash for r in clean} <= back
    assert not back & {r.hash for r in planted}
    assert export_runs(ledger, io.BytesIO(), redact=True, scenario="s1").runs == \
        sum(1 for r in clean + planted if r.scenario == "s1")


def test_export_streams_filters_like_runs(ledger):
    clean, planted = _ledger_runs()
    ledger.ingest(clean + planted)
    version = clean[0].version
    out = io.BytesIO()
    got = export_runs(ledger, out, version=version, limit=7)
    first = list(ledger.runs(version=version, limit=7))
    planted_hashes = {r.hash for r in planted}
    assert (got.runs, got.with_secrets) == (7, sum(r.hash in planted_hashes for r in first)) == (7, 1)
    assert [orjson.loads(x)["trial"] for x in out.getvalue().splitlines()] == [r.trial for r in first]


def test_export_without_the_scan_is_the_same_copy_and_says_it_did_not_look(ledger):
    from fluke.errors import UsageError

    clean, planted = _ledger_runs()
    ledger.ingest(clean + planted)
    scanned, plain = io.BytesIO(), io.BytesIO()
    export_runs(ledger, scanned)
    result = export_runs(ledger, plain, scan=False)
    assert plain.getvalue() == scanned.getvalue()
    assert result == ExportResult(39, None, False)
    assert result.describe() == "wrote 39 runs; not checked for secret-shaped values"
    with pytest.raises(UsageError):
        export_runs(ledger, io.BytesIO(), redact=True, scan=False)


@pytest.mark.parametrize("n, flagged, redacted, text", [
    (1, 0, False, "wrote 1 run; none holds a secret-shaped value"),
    (5, 1, False, "wrote 5 runs; 1 holds secret-shaped values (keys, tokens, passwords): share with care, "
                  "or export with --redact"),
    (5, 2, True, "wrote 5 runs; 2 held secret-shaped values and were written redacted (their hashes change on "
                 "ingest)"),
])
def test_the_result_says_what_was_written(n, flagged, redacted, text):
    assert ExportResult(n, flagged, redacted).describe() == text
