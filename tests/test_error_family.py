"""One error family: argument misuse is a UsageError naming the argument, bad input an InputError
naming the file, record and field, a newer format a FormatVersionError whatever reads it, and
every warning a FlukeWarning."""

from __future__ import annotations

import ast
import importlib
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.errors import FlukeWarning, FormatVersionError, InputError, UsageError

SRC = Path(__file__).resolve().parents[1] / "src" / "fluke"


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        yield path, ".".join(("fluke", *path.relative_to(SRC).with_suffix("").parts)).removesuffix(".__init__")


def test_every_warning_class_fluke_defines_is_a_fluke_warning():
    found = []
    for path, module in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    (getattr(b, "id", None) or getattr(b, "attr", "")).endswith("Warning") for b in node.bases):
                found.append((module, node.name))
    assert len(found) >= 4, found          # InconclusiveClaim, PlugInWarning, FewClustersWarning, the fork's
    for module, name in found:
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, FlukeWarning) and issubclass(cls, UserWarning), (module, name)


def test_every_warning_fluke_gives_has_a_fluke_category():
    """``warnings.warn(text)`` alone is a bare UserWarning: each call names a class of fluke's own."""
    defined = set()
    calls = []
    for path, _ in _modules():
        tree = ast.parse(path.read_text())
        defined |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "warn" \
                    and getattr(node.func.value, "id", None) == "warnings":
                category = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "category"), None)
                if category is None and node.args and isinstance(node.args[0], ast.Call):
                    category = node.args[0].func           # warnings.warn(InconclusiveClaim(...))
                calls.append((path.name, node.lineno, getattr(category, "id", None)))
    assert calls
    for where, line, name in calls:
        assert name in defined, (where, line, name)


def test_a_fluke_warning_filter_catches_the_statistics_warnings():
    from fluke.inference import PlugInWarning, pass_at_k_from_average

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FlukeWarning)
        pass_at_k_from_average(0.5, 3)
    assert [w.category for w in caught] == [PlugInWarning]


def test_no_argument_misuse_is_raised_as_input_error_without_a_file():
    hits = [f"{p.relative_to(SRC)}:{i}" for p, _ in _modules()
            for i, line in enumerate(p.read_text().splitlines(), 1) if "InputError(None, None" in line]
    assert hits == []


@pytest.mark.parametrize("call, argument, words", [
    (lambda: __import__("fluke.comparison", fromlist=["x"]).wilson_interval(5, -1), "trials", "trials=-1"),
    (lambda: __import__("fluke.comparison", fromlist=["x"]).compare_pass_rates([1], [2], [1], [0]),
     "trials_b", "trials_b"),
    (lambda: __import__("fluke.design", fromlist=["x"]).paired_sample_size(200, 0.8, scenarios=50),
     "difference", "difference=200"),
    (lambda: __import__("fluke.runner", fromlist=["x"]).executor_for("dask", workers=1), "executor", "'dask'"),
    (lambda: __import__("fluke.inference", fromlist=["x"]).bh_qvalues(np.array([0.5, 2.0])),
     "pvalues", "[0, 1]"),
])
def test_a_misused_argument_is_a_usage_error_naming_it(call, argument, words):
    with pytest.raises(UsageError) as caught:
        call()
    assert not isinstance(caught.value, InputError)
    assert caught.value.argument == argument and words in str(caught.value)


def test_a_usage_error_reaches_the_terminal_as_one_line_and_exit_2():
    result = CliRunner().invoke(group, ["plan", "--detect", "200", "--rate", "0.8", "--scenarios", "50"])
    lines = [ln for ln in (result.stderr or result.output).splitlines() if ln.strip()]
    assert result.exit_code == 2 and lines == ["fluke: error: difference=200.0 must be between 0 and 100 points"]


def test_a_newer_run_format_is_a_format_version_error_from_a_reader_and_says_only_upgrade(tmp_path):
    from fluke.adapters import read_file

    path = tmp_path / "new.jsonl"
    path.write_text('{"format_version":1,"scenario":"s"}\n{"format_version":7,"scenario":"s"}\n')
    with pytest.raises(FormatVersionError) as caught:
        list(read_file(path))
    err = caught.value
    assert (err.file, err.record, err.field) == (str(path), "line 2", "format_version")
    assert "run format 7" in str(err) and err.hint == "upgrade with: pip install -U fluke"
    assert "fix the record" not in str(err)
    result = CliRunner().invoke(group, ["--ledger", str(tmp_path / "l.db"), "ingest", str(path)])
    lines = [ln for ln in (result.stderr or result.output).splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(lines) == 1
    assert "pip install -U fluke" in lines[0] and "fix the record" not in lines[0]


def test_a_bad_record_still_says_to_fix_it(tmp_path):
    from fluke.adapters import read_file

    path = tmp_path / "bad.jsonl"
    path.write_text('{"format_version":1,"scenario":"s","trial":"zero"}\n')
    with pytest.raises(InputError) as caught:
        list(read_file(path))
    assert not isinstance(caught.value, FormatVersionError)
    assert caught.value.field == "trial" and "fix the record" in str(caught.value)
