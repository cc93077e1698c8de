"""What a newcomer meets (issue 36): each reproducer run as typed, and the text it now prints.

Must show: over the verbs' outputs on the demo ledger, no ``= <0.001``, no ``is True`` and no
``time(s)``; every other test here runs one line of the issue and checks the new wording.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from fluke.cli import VERBS, group

from ..conftest import TAU2_RESULTS, TAU_AIRLINE, need

PYTHONISH = re.compile(r"= <0\.001|is True|is False|time\(s\)|e-\d{2,}|P\([^)]*\) = [01]\.000\b")


def fluke(*args: str):
    return CliRunner().invoke(group, list(map(str, args)), prog_name="fluke", catch_exceptions=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's ledger, with a seal opened twice (the second look says how often it was opened)."""
    root = tmp_path_factory.mktemp("demo")
    assert fluke("demo", "--out", root / "demo").exit_code == 0
    rule = root / "rule.yaml"
    rule.write_text("name: half pass\ndecision: {statistic: mean, above: 0.5}\n")
    ledger = str(root / "demo" / "fluke.db")
    digest = json.loads(fluke("--ledger", ledger, "--json", "seal", rule).output)["digest"]
    return {"root": root, "ledger": ledger, "digest": digest[:12], "spec": str(root / "demo" / "spec.yaml")}


@pytest.fixture(scope="module")
def tau2(tmp_path_factory):
    ledger = str(tmp_path_factory.mktemp("tau2") / "tau2.db")
    assert fluke("--ledger", ledger, "ingest", *sorted(need(TAU2_RESULTS).glob("*.json"))).exit_code == 0
    return ledger


def test_no_verb_prints_python_on_the_demo_ledger(demo):
    L, a, b = demo["ledger"], "model=support-desk-v1", "model=support-desk-v2"
    commands = [["believe"], ["believe", "--version", a], ["predict"], ["calibration"], ["summary"],
                ["compare", a, b], ["fixcheck", a, b], ["consistency", a, b], ["interval"], ["passk", "--k", "1..4"],
                ["leaderboard"], ["grade", "--spec", demo["spec"]], ["unseal", demo["digest"]],
                ["unseal", demo["digest"]], ["unseal", "--list"], ["plan", "--bar", "0.9", "--version", b],
                ["report", "--out", demo["root"] / "r.html"], ["runs"], ["formats"],
                ["export", "--format", "eee", "-o", demo["root"] / "e.jsonl"],
                ["--json", "export", "--format", "eee", "-o", demo["root"] / "e2.jsonl"]]
    seen = []
    for args in commands:
        result = fluke("--ledger", L, *args)
        assert result.exit_code in (0, 1), (args, result.output)
        found = PYTHONISH.findall(result.output)
        assert not found, (args, found, result.output)
        seen.append(result.output)
    text = "\n".join(seen)
    assert "Cochran–Mantel–Haenszel p < 0.001;" in text               # the sentence form of the floor
    assert "this seal has been opened 1 time before" in text           # the second look
    assert re.search(r"decision: mean = [\d.]+ .* on \d+ runs; (yes|no): [\d.]+ is (not )?above the threshold 0.5",
                     text)


def test_believe_prints_a_vanishing_p_all_clear_as_every_other_verb_does(demo):
    out = fluke("--ledger", demo["ledger"], "believe").output
    row = next(line for line in out.splitlines() if line.startswith("P(every scenario above 0.9)"))
    assert row.split()[-1] == "<0.001"


def test_a_probability_from_finite_data_never_prints_as_a_certainty(demo):
    # every one of the 2000 joint draws ranks v1 first: P(first) is 1.0 in floating point, but it
    # rests on finite data, so it reads as the bound it is, like any other probability past the last digit
    doc = json.loads(fluke("--ledger", demo["ledger"], "--json", "leaderboard").output)
    assert sorted(r["p_first"] for r in doc["versions"]) == [0.0, 1.0]
    out = fluke("--ledger", demo["ledger"], "leaderboard").output
    row = next(line for line in out.splitlines() if "support-desk-v1" in line and "(920/1152)" in line)
    assert ">0.999" in row.split() and "1.000" not in row and "0.000" not in out


def test_passk_says_24_trials_not_24_24(demo):
    out = fluke("--ledger", demo["ledger"], "passk", "--k", "1..2").output
    assert "48 scenarios, 24 trials each" in out and "24–24" not in out


def test_fixcheck_shares_and_intervals_in_one_unit(demo):
    out = fluke("--ledger", demo["ledger"], "fixcheck", "model=support-desk-v1", "model=support-desk-v2").output
    # candidate fixed once: 150 of 232 first-run failures; its interval printed in percent beside it
    assert re.search(r"64\.7% \(150/232\) \[\d+\.\d%, \d+\.\d%\]", out), out
    assert not re.search(r"\(\d+/\d+\) \[0\.\d{3}, ", out)
    assert "does not clear the bar" not in out and "(≤" not in out
    assert "1 − C" not in out or "pure chance" in out


def test_consistency_interval_of_p_is_in_percent(demo):
    out = fluke("--ledger", demo["ledger"], "consistency", "model=support-desk-v1").output
    assert re.search(r"20\.1% \(232/1152\)\s+\[\d+\.\d%, \d+\.\d%\]", out), out


def test_interval_with_the_scenario_as_unit_has_no_unit_within_itself(demo):
    out = fluke("--ledger", demo["ledger"], "interval", "--unit", "scenario").output
    assert "scenario within unit" not in out and "scen./unit" not in out and "2x units" not in out
    assert "2x scenarios" in out


def test_plan_says_settled_runs_buy_nothing(demo):
    out = fluke("--ledger", demo["ledger"], "plan", "--budget", "200", "--bar", "0.9", "--version",
                "model=support-desk-v2").output
    assert "these 200 runs buy nothing; the decision is settled" in out
    assert "where the next runs go" not in out


def test_gate_says_too_small_to_tell_once_and_names_the_version(tau2, tmp_path):
    doc = json.loads(fluke("--ledger", tau2, "--json", "summary").output)
    retail = sorted({r["version"] for r in doc["rows"] if r["scenario"].startswith("retail/")})
    rule = tmp_path / "gate.yaml"
    rule.write_text(f"version: {retail[0][:12]}\ncompare: {{baseline: {retail[1][:12]}}}\n")
    out = fluke("--ledger", tau2, "gate", rule).output
    assert "too small to tell" in out and "too small to tell: too small to tell" not in out
    label = next(r for r in doc["rows"] if r["version"] == retail[0])["label"]
    assert f"{retail[0][:12]} ({label}) is not worse than" in out


def test_contrast_on_the_demo_says_there_is_no_study(demo):
    result = fluke("--ledger", demo["ledger"], "contrast", "--factors", "memory,retry")
    assert result.exit_code == 2
    assert "no run in scope was recorded under condition 'memory'" in result.output
    assert "narrow the scope" not in result.output


def test_an_ambiguous_selector_names_the_field_the_versions_differ_by(tau2):
    result = fluke("--ledger", tau2, "believe", "--version", "model=gpt-4.1")
    assert result.exit_code == 2 and "differ by world=" in result.output
    narrowed = re.search(r"e\.g\. --version (\S+)", result.output).group(1)
    assert fluke("--ledger", tau2, "believe", "--version", narrowed).exit_code == 0


def test_a_bare_value_suggests_its_field(tmp_path):
    ledger = str(tmp_path / "q.db")
    assert fluke("--ledger", ledger, "ingest", need(TAU_AIRLINE), "--identity", "model=gpt-4o").exit_code == 0
    result = fluke("--ledger", ledger, "believe", "--version", "gpt-4o")
    assert result.exit_code == 2 and "did you mean model=gpt-4o?" in result.output


def test_a_misspelt_verb_gets_the_nearest_one():
    result = fluke("belive")
    assert result.exit_code == 2 and "did you mean 'believe'?" in result.output


def test_a_leaderboard_without_common_strata_says_so_in_words(tau2):
    result = fluke("--ledger", tau2, "leaderboard")
    assert result.exit_code == 2 and "field trials" not in result.output
    assert "no scenario (with its condition) was run by all 6 versions" in result.output


def test_demo_refuses_the_ledger_option_naming_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (["--ledger", "x.db", "demo"], ["demo", "--ledger", "x.db"]):
        result = fluke(*args)
        assert result.exit_code == 2 and "--out DIR" in result.output, result.output
    assert list(tmp_path.iterdir()) == []   # nothing written, no ./fluke-demo


def test_every_verb_takes_json_and_no_help_shows_rest_markup(tmp_path, demo):
    out = tmp_path / "runs.jsonl"
    doc = json.loads(fluke("--ledger", demo["ledger"], "export", "--json", "-o", out).output)
    assert doc["kind"] == "export" and doc["runs"] == sum(1 for _ in out.open())
    assert fluke("--ledger", demo["ledger"], "--json", "export").exit_code == 2     # JSON and JSONL on one stdout
    assert json.loads(fluke("schema", "--json").output)["title"]
    for verb in VERBS:
        help_text = fluke(verb, "--help").output
        assert "``" not in help_text and ":func:" not in help_text, verb


def test_a_failed_first_ingest_leaves_no_ledger(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.json").write_text("")
    result = fluke("ingest", "empty.json")
    assert result.exit_code == 2 and "empty.json: is empty" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.json"]
    assert "no ledger at fluke.db" in fluke("summary").output


def test_input_errors_name_the_real_fault(tmp_path):
    ledger = str(tmp_path / "l.db")
    text = tmp_path / "notes.json"
    text.write_text("these are my notes, not runs\n")
    line = fluke("--ledger", ledger, "ingest", text).output
    assert "not valid JSON" in line and "truncated" not in line
    cut = tmp_path / "cut.json"
    cut.write_text(need(TAU_AIRLINE).read_text()[:5000])
    assert "may be truncated" in fluke("--ledger", ledger, "ingest", cut).output
    records = json.loads(need(TAU_AIRLINE).read_text())[:3]
    records[0]["reward"] = "x"          # the first record, as a reader counts
    first = tmp_path / "first.json"
    first.write_text(json.dumps(records))
    assert "first.json: record 1: field reward" in fluke("--ledger", ledger, "ingest", first).output
    spec = tmp_path / "spec.yaml"
    spec.write_text("version: 1\ntools: [a,\n  b: {\n")
    line = fluke("--ledger", ledger, "grade", "--spec", spec).output
    assert "\\x0a" not in line and re.search(r"not valid YAML \(line \d+, column \d+: ", line), line


def test_the_same_file_under_a_second_identity_warns(tmp_path):
    ledger = str(tmp_path / "l.db")
    assert "stored again" not in fluke("--ledger", ledger, "ingest", need(TAU_AIRLINE)).output
    again = fluke("--ledger", ledger, "ingest", need(TAU_AIRLINE), "--identity", "model=gpt-4o")
    assert again.exit_code == 0 and "200 runs added" in again.output
    assert "the same file was ingested before as" in again.output and "(gpt-4o)" in again.output
    assert "stored again" not in fluke("--ledger", ledger, "ingest", need(TAU_AIRLINE), "--identity",
                                       "model=gpt-4o").output   # nothing new stored: nothing to warn about


def test_reveal_refusal_names_each_arm_left(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made = fluke("--ledger", "sim.db", "simulate", "--runs-per-task", "2", "--runs-per-task", "3",
                 "--seal-file", "p.json")
    assert "fluke --ledger sim.db compare" in made.output
    refused = fluke("--ledger", "sim.db", "simulate", "--reveal", "p.json")
    assert refused.exit_code == 1
    assert re.search(r"B/2 has not been compared yet: fluke --ledger sim\.db compare [0-9a-f]{12} [0-9a-f]{12}",
                     refused.output)
    assert re.search(r"B/3 has not been compared yet", refused.output)
