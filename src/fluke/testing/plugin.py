"""The pytest plugin (entry point ``pytest11: fluke``): agent cases run k times, asserted on belief.

Inert unless a test uses it: importing this module loads nothing of fluke's statistics, and a
session where no test asks a claim prints nothing. A test asks for the ``fluke_runs`` fixture
and may set its defaults with the ``fluke`` marker::

    @pytest.mark.fluke(k=20, identity={"model": "gpt-4.1", "harness": "v3"}, spec="spec.yaml")
    def test_refund(fluke_runs):
        runs = fluke_runs(agent, [{"scenario": "refund-7", "input": "refund W1", "check": is_done}])
        fluke.expect(runs).reliable(bar=0.9, prob=0.95).luck_at_most(0.05)

Runs go to the ledger named by ``--fluke-ledger``, else the ``fluke_ledger`` ini value, else
``FLUKE_LEDGER``, else ``fluke.db`` in the root directory. Under pytest-xdist each worker writes
its own tests' runs to that shared ledger (SQLite in WAL mode with a busy timeout, or
PostgreSQL); claims travel back to the controller in each report's ``user_properties``, and the
controller prints the session's claims at the end (and, with ``--fluke-junit PATH``, writes them
as JUnit XML: a test case per claim).

>>> CLAIM_PROPERTY
'fluke_claim'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

#: The ``user_properties`` names the plugin writes (they cross from xdist workers to the controller).
CLAIM_PROPERTY = "fluke_claim"
RUNS_PROPERTY = "fluke_runs"
_MARKER_KEYS = ("k", "identity", "spec", "cases", "seed")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fluke", "fluke: agent runs asserted on what they let you believe")
    group.addoption("--fluke-ledger", default=None,
                    help="Ledger for runs made by tests (SQLite path or postgresql:// URL).")
    group.addoption("--fluke-junit", default=None, metavar="PATH",
                    help="Also write the session's claims as JUnit XML here (a test case per claim).")
    parser.addini("fluke_ledger", "Ledger for runs made by tests (default: FLUKE_LEDGER, else fluke.db in rootdir).",
                  default=None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fluke(k=, identity=, spec=, cases=, seed=): defaults for the fluke_runs "
                                       "fixture (an agent case run k times, recorded in the fluke ledger)")
    config.pluginmanager.register(_Session(config), "fluke-session")


def ledger_url(config: pytest.Config) -> str:
    """Where the session's runs go (see the module docstring for the order)."""
    chosen = config.getoption("--fluke-ledger") or config.getini("fluke_ledger") or os.environ.get("FLUKE_LEDGER")
    if chosen:
        return str(chosen)
    return str(Path(str(config.rootpath)) / "fluke.db")


class _Session:
    """Collects claims and run counts from every test's report (from any xdist worker)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.claims: list[tuple[str, dict]] = []
        self.batches: list[dict] = []

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name == CLAIM_PROPERTY:
                self.claims.append((report.nodeid, value))
            elif name == RUNS_PROPERTY:
                self.batches.append(value)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        junit = self.config.getoption("--fluke-junit", None)
        if junit and not hasattr(self.config, "workerinput"):   # the xdist controller has every claim
            from ..exports._junit import junit_xml
            from ..exports._write import write_atomic

            write_atomic(junit, junit_xml([{**claim, "test": nodeid} for nodeid, claim in self.claims],
                                          suite="fluke claims").encode("utf-8"))
        if not self.claims and not self.batches:
            return  # off unless used
        tr = terminalreporter
        tr.section("fluke: what the runs let you believe")
        made = sum(b["runs"] for b in self.batches)
        added = sum(b["added"] for b in self.batches)
        tr.write_line(f"{made} runs in {len(self.batches)} batches ({added} new, {made - added} already in the "
                      f"ledger) at {ledger_url(self.config)}")
        counts: dict[str, int] = {}
        for _, claim in self.claims:
            counts[claim["status"]] = counts.get(claim["status"], 0) + 1
        tr.write_line(f"{len(self.claims)} claims: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
        order = {"fails": 0, "too small to tell": 1, "holds": 2}
        for nodeid, claim in sorted(self.claims, key=lambda c: (order.get(c[1]["status"], 3), c[0])):
            mark = {"holds": "HOLDS", "fails": "FAILS"}.get(claim["status"], "TOO SMALL")
            tr.write_line(f"{mark:9} {nodeid}: {claim['asked']} — {claim['found']}")
            if claim["status"] != "holds":
                tr.write_line(f"{'':9} rests on: {claim['rests_on']}")


@pytest.fixture
def fluke_runs(request: pytest.FixtureRequest):
    """``fluke_runs(agent, cases=None, *, k=, identity=, spec=, seed=)`` → the runs (see :func:`fluke.expect`).

    Keywords not given come from the test's ``fluke`` marker. ``cases`` are
    :class:`fluke.runner.Case` objects or dicts (``scenario``, ``input``, ``check``); an ``input``
    keyword alone makes one case named after the test.
    """
    marker = request.node.get_closest_marker("fluke")
    defaults: dict[str, Any] = {}
    if marker is not None:
        if marker.args:
            raise pytest.UsageError(f"{request.node.nodeid}: the fluke marker takes keywords only "
                                    f"({', '.join(_MARKER_KEYS)})")
        unknown = sorted(set(marker.kwargs) - set(_MARKER_KEYS))
        if unknown:
            raise pytest.UsageError(f"{request.node.nodeid}: fluke marker: unknown keyword {unknown[0]!r}; "
                                    f"allowed: {', '.join(_MARKER_KEYS)}")
        defaults = dict(marker.kwargs)
    url = ledger_url(request.config)
    node = request.node

    def record(claim: Any) -> None:
        node.user_properties.append((CLAIM_PROPERTY, claim.as_dict()))

    def run(agent: Any, cases: Any = None, *, input: Any = None, **options: Any):
        from ._expect import run_agent

        unknown = sorted(set(options) - {"k", "identity", "spec", "seed"})
        if unknown:
            raise TypeError(f"fluke_runs() got an unexpected keyword {unknown[0]!r}")
        chosen = {**defaults, **options}
        cases = cases if cases is not None else chosen.get("cases")
        if cases is None:
            cases = [{"scenario": node.name, "input": input}]
        if "k" not in chosen:
            raise pytest.UsageError(f"{node.nodeid}: say how many runs per case: fluke_runs(..., k=20) or "
                                    "@pytest.mark.fluke(k=20)")
        runs = run_agent(agent, cases, k=chosen["k"], identity=chosen.get("identity"), ledger=url,
                         spec=chosen.get("spec"), seed=chosen.get("seed", 0))
        runs.on_claim = record
        node.user_properties.append((RUNS_PROPERTY, {"version": runs.version, "runs": len(runs),
                                                     "added": runs.added}))
        return runs

    return run
