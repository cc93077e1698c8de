"""A third party's reader, installed with pip from a test package, read through ``fluke ingest``.

The package is the worked example of docs/adapters.md ("Readers of your own"), taken from
the page itself: its ``pyproject.toml`` and its module. pip installs it (no build isolation,
no dependencies: fluke is already here) into a folder of its own, which the ``fluke``
processes get on their path, so the shared environment never sees it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "adapters.md"


def _blocks(kind: str) -> list[str]:
    section = DOCS.read_text().split("## Readers of your own", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{kind}\n(.*?)```", section, flags=re.S)


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    pytest.importorskip("setuptools")
    package = tmp_path_factory.mktemp("acme-fluke")
    [toml] = _blocks("toml")
    [module] = _blocks("python")
    (package / "pyproject.toml").write_text(toml + '\n[build-system]\nrequires = ["setuptools>=61"]\n'
                                            'build-backend = "setuptools.build_meta"\n')
    (package / "acme_fluke").mkdir()
    (package / "acme_fluke" / "__init__.py").write_text(module)
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--target", str(target), str(package)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        pytest.skip(f"pip could not install the test package: {done.stderr.strip()[-300:]}")
    return target


def _fluke(plugin_path, *args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(plugin_path)]))
    return subprocess.run([sys.executable, "-c", "from fluke.cli import main; main()", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


def test_an_installed_plugin_reads_its_format_through_fluke_ingest(plugin_path, tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"kind": "acme-results", "model": "m-1", "cases": [
        {"id": "c1", "ok": True}, {"id": "c1", "attempt": 1, "ok": False}, {"id": "c2", "ok": None}]}))
    done = _fluke(plugin_path, "--ledger", "l.db", "--json", "ingest", str(results), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"][0]["added"] == 3

    listed = _fluke(plugin_path, "--json", "formats", cwd=tmp_path)
    acme = [f for f in json.loads(listed.stdout)["formats"] if f["name"] == "acme"]
    assert acme and acme[0]["source"] == "acme-fluke" and acme[0]["error"] is None

    runs = _fluke(plugin_path, "--ledger", "l.db", "runs", "--jsonl", cwd=tmp_path)
    rows = [json.loads(line)["run"] for line in runs.stdout.splitlines()]
    stored = sorted((r["scenario"], r["trial"], r["outcome"]["passed"], r["identity"]["model"]) for r in rows)
    assert stored == [("c1", 0, True, "m-1"), ("c1", 1, False, "m-1"), ("c2", 0, None, "m-1")]


def test_a_plugin_refusing_input_is_one_line_and_exit_2(plugin_path, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"kind": "acme-results", "cases": [{"id": 7}]}))
    done = _fluke(plugin_path, "--ledger", "l.db", "ingest", "--format", "acme", str(bad), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "case 0: field id: expected a string" in done.stderr


def test_without_the_plugin_the_format_is_unknown(tmp_path):
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps({"kind": "acme-results", "cases": []}))
    done = _fluke(tmp_path, "--ledger", "l.db", "ingest", "--format", "acme", str(bad), cwd=tmp_path)
    assert done.returncode == 2 and "unknown format 'acme'" in done.stderr
