"""The same runs export to the same findings from SQLite and from PostgreSQL (a real server)."""

from __future__ import annotations

from fluke.exports import collect, eee_documents, otlp_logs
from fluke.ledger import open_ledger

from .conftest import SPEC, expected_label, planted_runs


def test_both_backends_give_the_same_records_and_documents(ledger, tmp_path, monkeypatch):
    import fluke.exports._findings as findings

    monkeypatch.setattr(findings, "CHUNK", 7)   # stored grades asked for while the runs still stream
    ledger.ingest(planted_runs())
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    from fluke.grading import grade_run, load_spec

    stored = [grade_run(r, load_spec(str(spec))) for r in planted_runs()[::2]]   # half stored, half graded now
    ledger.put_grades(load_spec(str(spec)).digest, [(g.run_hash, g.to_dict()) for g in stored])
    found = collect(ledger, spec=str(spec), baseline="model=a", stream=True)
    found = type(found)(**{**found.__dict__, "runs": list(found.runs)})
    runs = {r.hash: r for r in planted_runs()}
    assert sorted((g.run_hash, g.label) for g in found.runs) == sorted((h, expected_label(r)) for h, r in runs.items())
    with open_ledger(str(tmp_path / "reference.db")) as reference:
        reference.ingest(planted_runs())
        expected = collect(reference, spec=str(spec), baseline="model=a")
    mine = otlp_logs(found, time_unix_nano=1)["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    theirs = otlp_logs(expected, time_unix_nano=1)["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    key = lambda r: str(r["attributes"])   # noqa: E731 - order of runs may differ between backends
    assert sorted(mine, key=key) == sorted(theirs, key=key)
    def results(docs):   # the ledger's name is in rests_on; the numbers must agree
        return {d["model_info"]["id"]: [(r["evaluation_name"], r["score_details"]["score"],
                                         r["score_details"]["uncertainty"]) for r in d["evaluation_results"]]
                for d in docs}

    assert results(eee_documents(found, recorded={})) == results(eee_documents(expected, recorded={}))
