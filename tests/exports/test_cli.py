"""fluke export --format: bad usage is one line and exit 2, and nothing half-written is left."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from fluke.cli import group


def _run(path, *args):
    return CliRunner().invoke(group, ["--ledger", str(path), "export", *args])


@pytest.mark.parametrize("args, said", [
    (["--format", "junit"], "name the rule with --rule"),
    (["--format", "mlflow"], "name the rule with --rule"),
    (["--format", "eee", "--rule", "r.yaml"], "--rule does not apply to --format eee"),
    (["--format", "junit", "--rule", "r.yaml", "--endpoint", "http://127.0.0.1:1"],
     "--endpoint does not apply to --format junit"),
    (["--format", "otel", "--since", "2025-01-01"], "--since applies to --format jsonl"),
    (["--format", "otel", "--redact"], "--format jsonl"),
    (["--format", "otel", "--endpoint", "ftp://x"], "must be an http:// or https:// URL"),
    (["--format", "otel", "--baseline", "model=nobody"], "model=nobody"),
])
def test_bad_usage_is_one_line_and_exit_2(planted, tmp_path, args, said):
    path, _ = planted
    out = tmp_path / "x.out"
    result = _run(path, *args, "-o", str(out))
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("fluke: error")]
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in result.stderr


def test_a_bad_spec_names_the_file_and_writes_nothing(planted, tmp_path):
    path, _ = planted
    spec = tmp_path / "bad.yaml"
    spec.write_text("tools: [lookup]\nforbidden: [lokup]\n", encoding="utf-8")
    out = tmp_path / "x.json"
    result = _run(path, "--format", "otel", "--spec", str(spec), "-o", str(out))
    assert result.exit_code == 2 and "did you mean 'lookup'" in result.stderr and "bad.yaml" in result.stderr
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_an_unwritable_output_is_one_line_and_leaves_no_part_file(planted, tmp_path):
    path, _ = planted
    result = _run(path, "--format", "eee", "-o", str(tmp_path / "missing" / "x.jsonl"))
    assert result.exit_code == 2 and "does not exist (create it first)" in result.stderr
    assert not (tmp_path / "missing").exists()


def test_the_written_file_has_the_users_permissions(planted, tmp_path):
    import os
    import stat

    path, _ = planted
    out = tmp_path / "x.jsonl"
    assert _run(path, "--format", "eee", "-o", str(out)).exit_code == 0
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask


def test_jsonl_is_still_the_default_and_reingests(planted, tmp_path):
    path, _ = planted
    out = tmp_path / "runs.jsonl"
    assert _run(path, "-o", str(out)).exit_code == 0
    copy = tmp_path / "copy.db"
    assert CliRunner().invoke(group, ["--ledger", str(copy), "ingest", str(out)]).exit_code == 0
    from fluke.ledger import open_ledger

    with open_ledger(str(path)) as a, open_ledger(str(copy)) as b:
        assert sorted(r.hash for r in a.runs()) == sorted(r.hash for r in b.runs())


def test_without_output_the_export_goes_to_standard_output(planted):
    import json

    path, _ = planted
    result = _run(path, "--format", "eee")
    assert result.exit_code == 0, result.stderr
    assert [json.loads(line)["model_info"]["id"] for line in result.stdout.splitlines()] in (["a", "b"], ["b", "a"])
    assert "to standard output" in result.stderr
