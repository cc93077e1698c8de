"""``pip install fluke`` with no extras reads Inspect AI's default ``.eval`` logs, whose members
are Zstandard-compressed (compression method 93).

The quick test reads the declared dependencies; the slow one builds a fresh virtual
environment, installs this checkout into it with no extras, and ingests the real ``.eval``
sample of ../shared/formats with that environment's ``fluke``."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from ..conftest import FORMATS, need

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = FORMATS / "samples" / "inspect_ai" / "tiny_tools_epochs3.eval"


def test_zstandard_is_a_core_dependency_before_python_3_14():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    [zstd] = [d for d in project["dependencies"] if d.startswith("zstandard")]
    assert "python_version < '3.14'" in zstd


@pytest.mark.slow
def test_a_plain_install_ingests_a_zstd_eval_log(tmp_path):
    sample = need(SAMPLE)
    assert {i.compress_type for i in zipfile.ZipFile(sample).infolist()} == {93}   # really Zstandard
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(ROOT)],
                         capture_output=True, text=True, timeout=1200)
    if pip.returncode != 0:
        pytest.skip(f"pip could not install fluke into a fresh environment: {pip.stderr.strip()[-300:]}")
    done = subprocess.run([str(venv / "bin" / "fluke"), "--ledger", str(tmp_path / "l.db"), "ingest", str(sample)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("6 runs added, 0 already in the ledger")   # 2 samples × 3 epochs
