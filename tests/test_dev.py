"""dev.py, the two commands' set-up: its lock covers every dependency pyproject.toml declares."""

from __future__ import annotations

import doctest
import importlib.util
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _dev():
    spec = importlib.util.spec_from_file_location("fluke_dev", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dev_py_examples_run():
    result = doctest.testmod(_dev())
    assert result.attempted >= 2 and result.failed == 0


def test_the_lock_pins_every_declared_dependency_at_a_version_the_declaration_admits():
    dev = _dev()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    locked = dev.read_lock(dev.LOCK.read_text())
    declared = list(project["dependencies"])
    for extra in dev.LOCKED_EXTRAS.split(","):
        declared += project["optional-dependencies"][extra]
    missing, outside = [], []
    for line in declared:
        req = Requirement(line)
        version = locked.get(dev._normal(req.name))
        if version is None:
            missing.append(req.name)
        elif not req.specifier.contains(version, prereleases=True):
            outside.append(f"{req.name}=={version} against {req.specifier}")
    assert not missing, f"not in {dev.LOCK.name} (run `python3 dev.py lock`): {missing}"
    assert not outside, f"locked outside the declared range: {outside}"
