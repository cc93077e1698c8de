"""Strings from runs are hostile: they never act as markup or terminal controls, and secrets never print.

One ledger carries hostile strings (rich markup, ESC[2J, OSC 8 and OSC 52, BEL, CR) and one of each
secret shape in every field a run has: scenario, model, tool names, arguments, results, messages,
tags, conditions and error texts. Every verb's text, ``--json`` and Markdown output, and the HTML
report, are then checked byte by byte.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import AgentMessage, Identity, Outcome, Run, ToolCall, UserMessage

from .._close import strings_in

HOSTILE = ["[red]red[/red]", "[link=https://evil.example/x]click me[/link]", "\x1b[2J", "\x1b]8;;https://evil.example/y\x07here\x1b]8;;\x07",
           "\x1b]52;c;ZXZpbA==\x07", "bell\x07", "over\rwrite", "\x9b2J"]
#: Every secret shape the redactor must know, and the part of it that must never be printed.
SECRETS = {
    "postgresql://admin:Hunter2Secret@db.internal/prod": "Hunter2Secret",
    "https://ann:Pa55wordInUrl@api.example.com/v1": "Pa55wordInUrl",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "EXAMPLEKEY",
    "https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/XXXXSECRETXXXXslackhook": "XXXXSECRETXXXX",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc": "4eC39HqLyjWDarjtT1zdp7dc",
    "rk_live_51HbQzRkLiveRestrictedKey99": "51HbQzRkLiveRestrictedKey99",
    "sk-ant-api03-AnthropicKeyMaterial0123456789abcdefghijklmnopqrstuvwxyzABCDEFG": "AnthropicKeyMaterial",
    ('{"type": "service_account", "private_key": '
     '"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqGoogleSAkeyBody\\n'
     '-----END PRIVATE KEY-----\\n"}'): "GoogleSAkeyBody",
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAPemBlockBodyXyz\n"
     "-----END RSA PRIVATE KEY-----"): "PemBlockBodyXyz",
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJqd3QtdGVzdCJ9."
     "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"): "SflKxwRJSMeKKF2QT4fwpMeJf36",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789": "abcdefghijklmnopqrstuvwxyz0123456789",
}
MARKERS = list(SECRETS.values())
SPEC = "tools: [lookup, refund]\nforbidden: [refund]\n"


def _runs() -> list[Run]:
    hostile = " ".join(HOSTILE)
    secrets = list(SECRETS)
    runs = []
    for version in ("a", "b"):
        for i, secret in enumerate(secrets):
            for trial in range(2):
                text = f"{hostile} {secret}"
                runs.append(Run(
                    scenario=f"s{i} {HOSTILE[i % len(HOSTILE)]} {secret}" if i % 3 == 0 else f"s{i}",
                    trial=trial, identity=Identity(model=f"{version} {HOSTILE[0]}" + (f" {secret}" if i == 0 else "")),
                    condition={"note": text} if i % 3 == 1 else {}, tags=[f"tool:{text}"] if i % 3 == 2 else [],
                    events=[UserMessage(text=f"please {text}"),
                            ToolCall(tool="lookup", args={"q": text, "nested": [{"token": secret}]}, ok=True,
                                     result={"body": text}),
                            ToolCall(tool="refund", args={"id": secret}, ok=False, error=f"boom {text}"),
                            AgentMessage(text=f"done {text}")],
                    outcome=Outcome(passed=(i + trial) % 2 == 0), error=f"harness: {text}" if trial else None))
    return runs


@pytest.fixture(scope="module")
def hostile_ledger(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    path = str(folder / "l.db")
    with open_ledger(path) as ledger:
        ledger.ingest(_runs())
    (folder / "spec.yaml").write_text(SPEC, encoding="utf-8")
    return folder, path


def _verbs(folder) -> list[list[str]]:
    spec = str(folder / "spec.yaml")
    return [
        ["summary"],
        ["runs"],
        ["believe", "--statements"],
        ["compare", "model=a*", "model=b*", "--no-record"],
        ["consistency", "model=a*"],
        ["fixcheck", "model=a*@0", "model=a*@1"],
        ["interval"],
        ["passk"],
        ["grade", "--spec", spec, "--violations", "--no-store"],
        ["report", "--out", str(folder / "r.html")],
        [
            "leaderboard",
            "--replicates",
            "100",
            "--all",
            *(Identity(model=f"{v} {HOSTILE[0]} {next(iter(SECRETS))}").version[:12] for v in "ab"),
        ],
        [
            "plan",
            "--budget",
            "20",
            "--version",
            Identity(model=f"a {HOSTILE[0]} {next(iter(SECRETS))}").version[:12],
            "--against",
            Identity(model=f"b {HOSTILE[0]} {next(iter(SECRETS))}").version[:12],
        ],
    ]


def _check_bytes(text: str, where: str) -> None:
    for ch in ("\x1b", "\x07", "\r", "\x9b"):
        assert ch not in text, f"{where}: control character {ch!r} reached the output"
    for marker in MARKERS:
        assert marker not in text, f"{where}: secret {marker!r} printed"


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_every_verb_prints_hostile_strings_inert_and_no_secret(hostile_ledger, fmt):
    folder, path = hostile_ledger
    for args in _verbs(folder):
        result = CliRunner().invoke(group, ["--ledger", path, "--format", fmt, *args])
        where = f"fluke --format {fmt} {' '.join(args[:1])}"
        assert result.exit_code in (0, 1), f"{where}: {result.stderr or result.output}"
        _check_bytes(result.stdout + result.stderr, where)
        if fmt == "json":
            json.loads(result.stdout)
        elif fmt == "text" and args[0] in ("summary", "runs", "believe"):
            assert "[red]red[/red]" in result.stdout, f"{where}: markup was interpreted, not shown"
            assert "\\x1b[2J" in result.stdout, f"{where}: the escape is not shown as a visible escape"


def test_the_report_file_carries_no_secret(hostile_ledger):
    folder, path = hostile_ledger
    result = CliRunner().invoke(group, ["--ledger", path, "report", "--out", str(folder / "r.html"),
                                        "--spec", str(folder / "spec.yaml")])
    assert result.exit_code == 0, result.output
    html = (folder / "r.html").read_text(encoding="utf-8")
    for marker in MARKERS:
        assert marker not in html, f"secret {marker!r} in the HTML report"
    assert "\x1b" not in html


def test_an_ingest_error_does_not_quote_a_secret(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"format_version":1,"scenario":"s"}\n'
                    '{"format_version":1,"scenario":"s2","trial":"AKIAIOSFODNN7EXAMPLE"}\n', encoding="utf-8")
    result = CliRunner().invoke(group, ["--ledger", str(tmp_path / "l.db"), "ingest", str(path)])
    assert result.exit_code == 2
    assert "AKIAIOSFODNN7EXAMPLE" not in result.stdout + result.stderr
    assert "line 2" in result.stderr and "trial" in result.stderr


@pytest.mark.skipif(shutil.which("script") is None, reason="needs util-linux's script for a pseudo-terminal")
def test_on_a_terminal_only_colour_escapes_are_written(hostile_ledger):
    # Under a pseudo-terminal rich writes colours; every escape sequence must be an SGR colour code,
    # never a screen clear, an OSC 8 link or an OSC 52 clipboard write planted by a run.
    folder, path = hostile_ledger
    fluke = f"{sys.executable} -m fluke.cli --ledger {path}"
    for verb in ("summary", "runs", "believe"):
        out = subprocess.run(["script", "-qfec", f"{fluke} {verb}", "/dev/null"], capture_output=True,
                             timeout=120).stdout.decode("utf-8", "replace")
        escapes = re.findall(r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07\x1b]*|.)", out)
        assert escapes, f"{verb}: expected colour on a terminal"
        bad = [e for e in escapes if not re.fullmatch(r"\[[0-9;]*m", e)]
        assert not bad, f"{verb}: non-colour escapes reached the terminal: {bad[:5]}"
        assert "evil.example" not in "".join(escapes)


def test_grade_jsonl_streams_every_grade_inert_and_without_secrets(hostile_ledger):
    folder, path = hostile_ledger
    result = CliRunner().invoke(group, ["--ledger", path, "grade", "--spec", str(folder / "spec.yaml"), "--jsonl",
                                        "--no-store", "--jobs", "2"])
    assert result.exit_code == 1, result.stderr or result.output    # every run calls the forbidden refund
    _check_bytes(result.stdout + result.stderr, "fluke grade --jsonl")
    rows = [json.loads(row) for row in result.stdout.splitlines()]
    assert len(rows) == len(_runs()) + 1 and rows[-1]["kind"] == "grade"   # a line per run, then the answer
    assert all(r["hard"] for r in rows[:-1]) and rows[-1]["runs_total"] == len(_runs())


def _hostile_rule(folder):
    rule = folder / "exports-rule.yaml"
    rule.write_text("reliable: {bar: 0.9}\nluck: {at_most: 0.05}\nspec: spec.yaml\n", encoding="utf-8")
    return rule


@pytest.mark.parametrize("fmt", ["otel", "eee", "junit"])
def test_every_export_format_carries_hostile_strings_inert_and_no_secret(hostile_ledger, tmp_path, fmt):
    import xml.etree.ElementTree as ET

    folder, path = hostile_ledger
    extra = {"otel": ["--spec", str(folder / "spec.yaml")], "eee": [],
             "junit": ["--rule", str(_hostile_rule(folder))]}[fmt]
    out = tmp_path / f"export.{fmt}"
    result = CliRunner().invoke(group, ["--ledger", path, "export", "--format", fmt, "-o", str(out), *extra])
    assert result.exit_code == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    _check_bytes(text + result.stderr, f"fluke export --format {fmt}")
    if fmt == "junit":
        root = ET.fromstring(text.encode("utf-8"))
        strings = [v for e in root.iter() for v in [*e.attrib.values(), e.text or ""]]
    else:
        strings = [s for line in text.splitlines() for s in strings_in(json.loads(line))]
    for s in strings:   # a JSON writer escapes a raw control as \u001b: look inside every parsed string
        _check_bytes(s, f"a string of the {fmt} export")
    shown = "\n".join(strings)
    assert "\\x1b]8;;https://evil.example" in shown, "a hostile scenario name is not shown as visible escapes"
    assert "[REDACTED" in shown


def test_gate_junit_is_inert_and_without_secrets(hostile_ledger):
    import xml.etree.ElementTree as ET

    folder, path = hostile_ledger
    result = CliRunner().invoke(group, ["--ledger", path, "gate", str(_hostile_rule(folder)), "--format", "junit"])
    assert result.exit_code == 1, result.stderr
    _check_bytes(result.stdout + result.stderr, "fluke gate --format junit")
    root = ET.fromstring(result.stdout.encode("utf-8"))
    assert int(root.get("tests")) == 2 and int(root.get("failures")) + int(root.get("skipped")) == 2


def test_mlflow_feedback_carries_no_secret(hostile_ledger, tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    folder, path = hostile_ledger
    store = f"file://{tmp_path / 'mlruns'}"
    result = CliRunner().invoke(group, ["--ledger", path, "export", "--format", "mlflow", "--rule",
                                        str(_hostile_rule(folder)), "--mlflow-uri", store])
    assert result.exit_code == 0, result.stderr
    client = mlflow.MlflowClient(tracking_uri=store)
    [trace] = client.search_traces(locations=[client.get_experiment_by_name("fluke").experiment_id])
    full = client.get_trace(trace.info.trace_id)
    assert full.info.assessments
    for a in full.info.assessments:
        for s in [a.rationale, str(a.value), *a.metadata.values()]:
            _check_bytes(s, "an MLflow assessment")
    for span in full.data.spans:
        _check_bytes(json.dumps([span.inputs, span.outputs], ensure_ascii=False), "the MLflow span")
