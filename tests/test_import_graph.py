"""The whiteboard's layering, read off the source: which package may import which.

Every ``import`` in ``src/fluke`` (at module level or inside a function: a lazy import is still a
dependency) is an edge from the importing module to the imported one. The report draws; it must
not reach into the packages that compute answers, and ``fluke.format`` sits under everything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Packages the report must never import: it renders what fluke.analysis computed.
COMPUTING = ("fluke.comparison", "fluke.inference", "fluke.grading", "fluke.design", "fluke.ledger",
             "fluke.decisions")


def _module(path: Path) -> tuple[str, str]:
    """(module name, the package its relative imports start from)."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def imports() -> dict[str, set[str]]:
    """Module → every fluke module it imports, anywhere in its body."""
    out: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        name, package = _module(path)
        found = out.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("fluke"))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                    if node.module is None:   # from . import x: x is a module of the package
                        found.update(f"{target}.{a.name}" for a in node.names)
                        continue
                else:
                    target = node.module or ""
                if target.startswith("fluke"):
                    found.add(target)
    return out


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_graph_reads_real_edges():
    """The reader is not vacuous: edges known to exist are found."""
    graph = imports()
    assert "fluke.comparison" in graph["fluke.analysis._compare"]
    assert "fluke.report._model" in graph["fluke.report._html"]


@pytest.mark.parametrize("forbidden", COMPUTING)
def test_the_report_imports_none_of_the_computing_packages(forbidden):
    graph = imports()
    bad = sorted(f"{m} imports {t}" for m, targets in graph.items() if _within(m, "fluke.report")
                 for t in targets if _within(t, forbidden))
    assert not bad, "; ".join(bad)


def test_no_computing_package_imports_the_report():
    graph = imports()
    bad = sorted(f"{m} imports {t}" for m, targets in graph.items()
                 if any(_within(m, p) for p in COMPUTING) for t in targets if _within(t, "fluke.report"))
    assert not bad, "; ".join(bad)


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        for nxt in graph.get(node, ()):
            # importing fluke.a.b runs fluke.a's __init__ first
            for step in {nxt, *(nxt.rsplit(".", k)[0] for k in range(1, nxt.count(".")))}:
                if step in graph and step not in seen:
                    seen.add(step)
                    todo.append(step)
    return seen


def test_format_is_under_everything_no_circle_runs_through_it():
    graph = imports()
    assert "fluke.format" not in _reaches(graph, "fluke.format")
    assert _reaches(graph, "fluke.format") <= {"fluke", "fluke._redact", "fluke._gitleaks"}
    assert _reaches(graph, "fluke._gitleaks") <= {"fluke"}     # the redactor's rule set is a leaf
