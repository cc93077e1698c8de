"""Every verb on a missing ledger, an empty ledger and an unwritable --out: one line, exit 2.

A read verb never creates the ledger it was pointed at; an empty ledger answers the same way in
every verb; a path that cannot be written is said in one line, with nothing half-written.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner

from fluke.cli import VERBS, group
from fluke.ledger import open_ledger

#: Each read verb with the arguments it needs to get as far as reading the ledger.
READ_VERBS: dict[str, list[str]] = {
    "runs": [], "export": [], "summary": [], "believe": [], "predict": [], "calibration": [],
    "compare": ["model=a", "model=b"], "fixcheck": ["model=a@0", "model=a@1"], "consistency": ["model=a"],
    "interval": [], "passk": [], "contrast": ["--factors", "memory,retry"], "unseal": ["abc123"],
    "grade": ["--spec", "SPEC"], "report": ["--out", "OUT"], "gate": ["RULE"], "leaderboard": [],
    "plan": ["--budget", "10", "--version", "model=a", "--bar", "0.9"],
    "judge": ["audit", "abc123", "--labels", "labels.csv"], "decide": ["LOSS"],
    "boundary": ["--space", "SPACE"], "incident": ["show", "--space", "SPACE"],
}


@pytest.fixture()
def spec(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("tools: [lookup]\n", encoding="utf-8")
    return str(path)


def _rule(tmp_path) -> str:
    path = tmp_path / "rule.yaml"
    path.write_text("reliable: {bar: 0.5}\n", encoding="utf-8")
    return str(path)


def _space(tmp_path) -> str:
    path = tmp_path / "space.yaml"
    path.write_text("axes:\n  case: {levels: [unique, same_name]}\n", encoding="utf-8")
    return str(path)


def _loss(tmp_path) -> str:
    path = tmp_path / "loss.yaml"
    path.write_text("failure: 1\n", encoding="utf-8")
    return str(path)


def _args(verb: str, spec: str, tmp_path) -> list[str]:
    return [spec if a == "SPEC" else str(tmp_path / "r.html") if a == "OUT" else _rule(tmp_path) if a == "RULE"
            else _space(tmp_path) if a == "SPACE" else _loss(tmp_path) if a == "LOSS" else a
            for a in READ_VERBS[verb]]


def _one_error_line(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("fluke: error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


def test_every_read_verb_is_covered():
    # A verb added to the CLI must be added here (or be one of the verbs that create a ledger).
    creating = {"ingest", "run", "demo", "simulate", "calibrate", "schema", "seal", "formats"}   # or no ledger
    assert set(VERBS) - creating - set(READ_VERBS) == set()


@pytest.mark.parametrize("verb", sorted(READ_VERBS))
def test_read_verb_on_a_missing_ledger_says_so_and_creates_nothing(verb, tmp_path, spec):
    path = tmp_path / "nope.db"
    result = CliRunner().invoke(group, ["--ledger", str(path), verb, *_args(verb, spec, tmp_path)])
    line = _one_error_line(result)
    assert f"no ledger at {path}" in line and "ingest FILE" in line
    assert not path.exists() and not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("verb", sorted(READ_VERBS))
def test_read_verb_on_an_empty_ledger_answers_the_same_way(verb, tmp_path, spec):
    path = tmp_path / "empty.db"
    open_ledger(str(path)).close()
    result = CliRunner().invoke(group, ["--ledger", str(path), verb, *_args(verb, spec, tmp_path)])
    if verb == "incident":   # incidents need no runs: an empty ledger has none recorded, and says so
        assert result.exit_code == 0 and result.output.startswith("no incidents recorded yet"), result.output
        return
    line = _one_error_line(result)
    if verb == "unseal":
        assert "no seal" in line
    elif verb == "calibration":
        assert "no predictions" in line or "no runs" in line
    else:
        assert "the ledger has no runs; add some with: fluke ingest FILE" in line, line


@pytest.fixture()
def ledger_with_runs(tmp_path):
    from fluke.record import Identity, Outcome, Run

    path = str(tmp_path / "l.db")
    with open_ledger(path) as ledger:
        ledger.ingest(
            [
                Run(scenario=f"s{i}", trial=t, identity=Identity(model=m), outcome=Outcome(passed=(i + t) % 2 == 0))
                for m in ("a", "b")
                for i in range(3)
                for t in range(2)
            ]
        )
    return path


@pytest.mark.parametrize("verb,flag", [("report", "--out"), ("export", "-o")])
def test_output_into_a_missing_folder_is_one_line(verb, flag, tmp_path, ledger_with_runs):
    target = tmp_path / "no" / "such" / "folder" / "x.out"
    result = CliRunner().invoke(group, ["--ledger", ledger_with_runs, verb, flag, str(target)])
    line = _one_error_line(result)
    assert str(target.parent) in line and "does not exist" in line
    assert not target.parent.exists()


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="root may write into read-only folders; "
    "test_output_onto_a_folder_is_one_line covers an unwritable path for root",
)
@pytest.mark.parametrize("verb,flag", [("report", "--out"), ("export", "-o")])
def test_output_into_a_read_only_folder_is_one_line(verb, flag, tmp_path, ledger_with_runs):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    result = CliRunner().invoke(group, ["--ledger", ledger_with_runs, verb, flag, str(folder / "x.out")])
    _one_error_line(result)


def test_output_onto_a_folder_is_one_line(tmp_path, ledger_with_runs):
    # A path that names a folder cannot be written as a file: one line, exit 2, whoever runs it.
    folder = tmp_path / "d"
    folder.mkdir()
    for verb, flag in (("report", "--out"), ("export", "-o")):
        result = CliRunner().invoke(group, ["--ledger", ledger_with_runs, verb, flag, str(folder)])
        assert result.exit_code == 2 and result.output.count("\n") == 1, result.output


def test_demo_into_a_file_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(group, ["demo", "--out", str(blocker / "demo")])
    _one_error_line(result)


def test_interval_with_too_few_bootstrap_replicates_is_one_line(ledger_with_runs):
    result = CliRunner().invoke(group, ["--ledger", ledger_with_runs, "interval", "--bootstrap", "5"])
    line = _one_error_line(result)
    assert "bootstrap" in line and "5" in line


def test_a_corrupted_ledger_is_one_line(tmp_path):
    path = tmp_path / "bad.db"
    path.write_bytes(b"this is not an SQLite file at all" * 100)
    for verb in ("summary", "runs", "believe"):
        result = CliRunner().invoke(group, ["--ledger", str(path), verb])
        _one_error_line(result)


def test_a_postgres_password_is_never_printed(tmp_path):
    # Nothing listens on this port: the connection fails, and the error line must not carry the password.
    url = "postgresql://fluke:Sup3rSecretPw@127.0.0.1:9/none?connect_timeout=1"
    result = subprocess.run([sys.executable, "-m", "fluke.cli", "--ledger", url, "summary"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "Sup3rSecretPw" not in result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
