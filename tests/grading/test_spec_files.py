"""A spec file that is not UTF-8, or nested too deep, is a SpecError naming the file, and
`fluke grade` says so in one line with exit 2 (repro_defects.sh spec-utf8 and spec-deep)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.errors import SpecError
from fluke.grading import load_spec

RUN = '{"format_version":1,"scenario":"s","trial":0}\n'


def _deep(levels):
    a = {}
    for _ in range(levels):
        a = {"k": a}
    return {"tools": ["a"], "args": a}


def test_a_spec_that_is_not_utf8(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"tools: [a]\nname: \xff\n")
    with pytest.raises(SpecError, match=r"s\.yaml: is not UTF-8 text \(byte 0xff at offset 17\)"):
        load_spec(path)


@pytest.mark.parametrize("levels", [70, 600])
def test_a_spec_nested_too_deep(tmp_path, levels):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_deep(levels)))
    with pytest.raises(SpecError, match=r"s\.json: nested more than 64 levels deep"):
        load_spec(path)
    with pytest.raises(SpecError, match=r"^spec: nested more than 64 levels deep"):
        load_spec(_deep(levels))


def test_a_spec_nested_within_the_limit_is_read_as_before(tmp_path):
    # 60 levels of args: not too deep, so the ordinary validation answers (args want rules)
    with pytest.raises(SpecError, match="field args.k"):
        load_spec(_deep(60))


@pytest.mark.parametrize("name, body", [("s.yaml", b"tools: [a]\nname: \xff\n"),
                                        ("s.json", json.dumps(_deep(600)).encode())])
def test_fluke_grade_says_so_in_one_line(tmp_path, name, body):
    spec = tmp_path / name
    spec.write_bytes(body)
    runs = tmp_path / "a.jsonl"
    runs.write_text(RUN)
    result = CliRunner().invoke(group, ["--ledger", str(tmp_path / "l.db"), "grade", "--spec", str(spec), str(runs)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(spec) in lines[0] and "Traceback" not in result.output
