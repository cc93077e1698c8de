"""One vocabulary: a public name means one thing in every package.

Every public sub-package (and public top-level module) of fluke lists its names in ``__all__``;
a name two of them list must be the same object (one re-exporting the other), never two objects
that happen to share a name (``believe`` the verb and ``believe`` the posterior step).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict

import fluke


def _public_modules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(fluke.__path__) if not m.name.startswith("_")]


def _names() -> dict[str, dict[str, object]]:
    """name -> {module: the object it names there}, over every public module's ``__all__``."""
    found: dict[str, dict[str, object]] = defaultdict(dict)
    for module in _public_modules():
        mod = importlib.import_module(f"fluke.{module}")
        for name in getattr(mod, "__all__", ()):
            found[name][module] = getattr(mod, name)    # an optional extra never hides behind a lazy name here
    return found


def test_the_walk_sees_the_packages_and_the_names_they_share():
    """Not vacuous: the packages are walked, and names that are one object in two places are seen."""
    modules = set(_public_modules())
    assert {"analysis", "comparison", "inference", "grading", "record", "design", "replay", "boundary",
            "exports", "lake", "decisions"} <= modules
    names = _names()
    assert len(names) > 400
    shared = {n for n, where in names.items() if len(where) > 1}
    assert "redact_text" in shared and "UNKNOWN_POLICIES" in shared     # re-exports of one object


def test_no_public_name_denotes_two_different_objects():
    clashes = {}
    for name, where in sorted(_names().items()):
        objects = {id(obj) for obj in where.values()}
        if len(objects) > 1:
            clashes[name] = sorted(f"fluke.{m}" for m in where)
    assert clashes == {}, "one name, two objects: " + "; ".join(f"{n} in {', '.join(m)}" for n, m in clashes.items())


def test_no_name_is_both_a_verb_of_analysis_and_something_else_under_a_shared_module():
    """The answer layer keeps the verbs' names; the lower packages' functions say what they compute."""
    import fluke.analysis as analysis

    for verb in ("believe", "gate", "seal", "unseal", "consistency", "explore"):
        owner = getattr(analysis, verb)
        assert owner.__module__.startswith("fluke.analysis.")
        for module in _public_modules():
            if module == "analysis":
                continue
            other = getattr(importlib.import_module(f"fluke.{module}"), verb, None)
            assert other is None or other is owner, (verb, module)
