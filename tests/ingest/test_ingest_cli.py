"""``fluke ingest`` and friends, end to end on the real τ-bench and τ²-bench files."""

import json
import re

import jsonschema
import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger

from ..conftest import DATA, TAU2_RESULTS, TAU_AIRLINE, need


def fluke(ledger_url, *args, ok=True):
    result = CliRunner().invoke(group, ["--ledger", ledger_url, *map(str, args)], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def test_tau_bench_airline_ingests_200_runs_paired_by_call_id(ledger_url):
    path = need(TAU_AIRLINE)
    raw = json.loads(path.read_text())
    fluke(ledger_url, "ingest", path, "--identity", "model=gpt-4o")
    with open_ledger(ledger_url) as ledger:
        runs = list(ledger.runs())
    assert len(runs) == 200
    assert len({r.scenario for r in runs}) == 50
    assert {r.trial for r in runs} == {0, 1, 2, 3}
    per_scenario = {}
    for r in runs:
        per_scenario[r.scenario] = per_scenario.get(r.scenario, 0) + 1
    assert set(per_scenario.values()) == {4}
    # The file's own mean reward, computed from the raw JSON.
    assert sum(r.outcome.reward for r in runs) / 200 == pytest.approx(sum(x["reward"] for x in raw) / len(raw))
    # Tool calls paired with their results by call id. τ-bench reuses call ids within one
    # trajectory, so the k-th result carrying an id belongs to the k-th call carrying it.
    results, calls = {}, {}
    for i, x in enumerate(raw):
        for m in x["traj"]:
            if m["role"] == "tool":
                results.setdefault((i, m["tool_call_id"]), []).append(m["content"])
            for c in m.get("tool_calls") or []:
                calls.setdefault((i, c["id"]), []).append(c["function"]["name"])
    ours_results, ours_calls = {}, {}
    for r in runs:
        for e in r.tool_calls:
            ours_results.setdefault((r.source.position, e.call_id), []).append(e.result)
            ours_calls.setdefault((r.source.position, e.call_id), []).append(e.tool)
    assert ours_calls == calls
    assert ours_results == results
    assert sum(len(v) for v in results.values()) == 1164
    fluke(ledger_url, "ingest", path, "--identity", "model=gpt-4o")
    with open_ledger(ledger_url) as ledger:
        assert ledger.count() == 200


def test_every_tau2_file_ingests_and_the_fine_tune_is_a_second_version(tmp_path):
    files = sorted(need(DATA / "tau2-bench").rglob("*.json"))
    url = str(tmp_path / "t2.db")
    result = fluke(url, "--json", "ingest", *files)
    report = json.loads(result.output)
    expected = sum(len(json.loads(f.read_text())["simulations"]) for f in files)
    assert sum(f["added"] for f in report["files"]) == expected
    with open_ledger(url) as ledger:
        base = ledger.resolve_version("model=gpt-4.1,world=tau2-bench/airline")
        tuned = ledger.resolve_version("model=ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm,"
                                       "world=tau2-bench/airline")
        assert base != tuned
        s_base = {c.scenario for c in ledger.counts(version=base)}
        s_tuned = {c.scenario for c in ledger.counts(version=tuned)}
        assert len(s_base) == 20 and s_base == s_tuned
        # telecom: the simulated user's tool calls are kept with requestor=user
        telecom = ledger.resolve_version("model=gpt-4.1,world=tau2-bench/telecom")
        raw = json.loads(next(TAU2_RESULTS.glob("gpt-4.1_telecom*.json")).read_text())
        user_calls = sum(1 for s in raw["simulations"] for m in s["messages"]
                         for c in m.get("tool_calls") or [] if c.get("requestor") == "user")
        assert user_calls > 0
        got = sum(1 for r in ledger.runs(version=telecom) for e in r.tool_calls if e.requestor == "user")
        assert got == user_calls


def _bad_inputs(tmp_path):
    good = need(TAU_AIRLINE).read_text()
    truncated = tmp_path / "truncated.json"
    truncated.write_text(good[: len(good) // 2])
    records = json.loads(good)[:3]
    records[2]["reward"] = "high"
    wrong_type = tmp_path / "wrong_type.json"
    wrong_type.write_text(json.dumps(records))
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"hello": [1, 2, 3]}))
    return [(truncated, r"truncated\.json: line \d+: not valid JSON"),
            (wrong_type, r"wrong_type\.json: record 3: field reward: expected a number, got 'high'"),
            (unknown, r"unknown\.json: is in no format fluke knows")]


def _error_lines(result):
    return [ln for ln in (result.stderr or result.output).strip().splitlines() if ln]


def test_bad_files_give_one_line_naming_file_record_field_and_write_nothing(ledger_url, tmp_path):
    fluke(ledger_url, "ingest", need(TAU_AIRLINE))
    for path, pattern in _bad_inputs(tmp_path):
        result = fluke(ledger_url, "ingest", path, ok=False)
        assert result.exit_code == 2
        lines = _error_lines(result)
        assert len(lines) == 1, lines
        assert re.search(pattern, lines[0]), lines[0]
        with open_ledger(ledger_url) as ledger:
            assert ledger.count() == 200


def test_a_bad_record_late_in_a_good_file_rolls_back_the_whole_file(ledger_url, tmp_path):
    records = json.loads(need(TAU_AIRLINE).read_text())
    records[150]["trial"] = "x"
    path = tmp_path / "late.json"
    path.write_text(json.dumps(records))
    result = fluke(ledger_url, "ingest", path, ok=False)
    assert "record 151: field trial" in _error_lines(result)[0]
    with open_ledger(ledger_url) as ledger:
        assert ledger.count() == 0


def test_runs_json_validates_against_the_printed_schema(tmp_path):
    url = str(tmp_path / "s.db")
    fluke(url, "ingest", need(TAU_AIRLINE), "--identity", "model=gpt-4o")
    doc = json.loads(fluke(url, "--json", "runs", "--limit", "25").output)
    schema = json.loads(fluke(url, "schema", "runs").output)
    jsonschema.validate(doc, schema)
    assert len(doc["runs"]) == 25
    run_schema = json.loads(fluke(url, "schema").output)
    for item in doc["runs"]:
        jsonschema.validate(item["run"], run_schema)
    broken = dict(doc, runs=[dict(doc["runs"][0], run=dict(doc["runs"][0]["run"], trial="zero"))])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_export_reingests_to_the_same_content_hashes(tmp_path):
    first, second, out = str(tmp_path / "a.db"), str(tmp_path / "b.db"), tmp_path / "runs.jsonl"
    fluke(first, "ingest", need(TAU_AIRLINE), "--identity", "model=gpt-4o")
    fluke(first, "export", "-o", out, "--scenario", "airline/1*")
    fluke(second, "ingest", out)
    with open_ledger(first) as a, open_ledger(second) as b:
        want = {r.hash for r in a.runs(scenario="airline/1*")}
        assert want and {r.hash for r in b.runs()} == want


def test_summary_counts_passes_per_version_and_scenario(tmp_path):
    url = str(tmp_path / "sum.db")
    raw = json.loads(need(TAU_AIRLINE).read_text())
    fluke(url, "ingest", TAU_AIRLINE)
    doc = json.loads(fluke(url, "--json", "summary").output)
    got = {row["scenario"]: (row["trials"], row["passes"]) for row in doc["rows"]}
    want = {}
    for x in raw:
        n, k = want.get(f"airline/{x['task_id']}", (0, 0))
        want[f"airline/{x['task_id']}"] = (n + 1, k + int(x["reward"] == 1.0))
    assert got == want
    assert doc["format_version"] == 1


def test_a_truncated_jsonl_names_the_line_and_writes_nothing(tmp_path):
    url, out = str(tmp_path / "j.db"), tmp_path / "runs.jsonl"
    fluke(url, "ingest", need(TAU_AIRLINE))
    fluke(url, "export", "-o", out)
    lines = out.read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    other = str(tmp_path / "other.db")
    result = fluke(other, "ingest", cut, ok=False)
    assert result.exit_code == 2
    assert _error_lines(result) == [_error_lines(result)[0]]
    assert re.search(rf"cut\.jsonl: line {len(lines)}: not valid JSON", _error_lines(result)[0])
    with open_ledger(other) as ledger:
        assert ledger.count() == 0


def test_forced_format_and_identity_fields_are_checked(tmp_path):
    url = str(tmp_path / "f.db")
    result = fluke(url, "ingest", need(TAU_AIRLINE), "--format", "tau2-bench", ok=False)
    assert result.exit_code == 2 and "is not τ²-bench results" in _error_lines(result)[0]
    result = fluke(url, "ingest", TAU_AIRLINE, "--identity", "modle=gpt-4o", ok=False)
    assert result.exit_code == 2 and "--identity" in _error_lines(result)[0]
    fluke(url, "ingest", TAU_AIRLINE, "--format", "tau-bench", "--identity", "model=gpt-4o,")
    with open_ledger(url) as ledger:
        assert [v.identity.model for v in ledger.versions()] == ["gpt-4o,"]
