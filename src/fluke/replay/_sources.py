"""The recorded runs a replay or an intervention starts from: each run with its tool log.

The runner stores a run's tool log as a ``tool_log`` document naming the run's hash
(:data:`fluke.tools.TOOL_LOG`); a run without one was not run with tools through
fluke and cannot be replayed. Documents are read whole (one query), which suits ledgers of
thousands of logged runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..errors import InputError, UsageError
from ..record import Identity, Run, digest
from ..tools import TOOL_LOG

__all__ = ["LoggedRun", "TOOL_LOG", "made_here", "origin_identity", "select_sources", "tool_logs"]

@dataclass(frozen=True)
class LoggedRun:
    """A recorded run and its tool log."""

    run: Run
    log: dict[str, Any]


def tool_logs(ledger: Any) -> dict[str, dict[str, Any]]:
    """Every stored tool log, by the hash of its run."""
    return {doc.body["run"]: doc.body for doc in ledger.documents(TOOL_LOG)}


def select_sources(ledger: Any, selectors: Sequence[str] = (), *, scenario: str | None = None) -> list[LoggedRun]:
    """The runs whose hash starts with one of ``selectors`` (when none is given, every logged run
    that is not itself a replay or a continuation), optionally of one ``scenario``; refused when
    a selector matches no logged run."""
    ledger.require_runs()
    logs = tool_logs(ledger)
    runs = [r for r in ledger.runs(scenario=scenario) if r.hash in logs]
    if not selectors:   # the recorded runs, not the replays and continuations made from them
        chosen = [r for r in runs if not made_here(r)]
    else:
        chosen = []
        for selector in selectors:
            hits = [r for r in runs if r.hash.startswith(selector.lower())]
            if not hits:
                raise InputError(None, f"run {selector}", None, "matches no run with a tool log in the ledger",
                                 hint="runs recorded by `fluke run` with `tools` declared have one; "
                                      "`fluke runs` lists hashes")
            chosen.extend(h for h in hits if h not in chosen)
    if not chosen:
        raise UsageError("the ledger holds no run with a tool log",
                     hint="record runs with `fluke run SUITE.py` whose suite declares `tools`")
    return [LoggedRun(r, logs[r.hash]) for r in chosen]


def made_here(run: Run) -> bool:
    """Is ``run`` a replay or a continuation (its harness names an origin)?"""
    harness = run.identity.harness
    return isinstance(harness, dict) and isinstance(harness.get("origin"), dict)


def origin_identity(runs: Iterable[Run], origin: dict[str, Any]) -> Identity:
    """The identity of runs made from ``runs``: theirs, with the harness naming the origin (the
    origin runs' version, the digest of their hashes, and what ``origin`` adds: the verb, step,
    arm, interventions).
    The origin runs must share one version."""
    runs = list(runs)
    versions = {r.version for r in runs}
    if len(versions) != 1:
        raise UsageError(f"the runs come from {len(versions)} versions; give runs of one version",
                         argument="runs", hint="select runs by hash prefix or --scenario")
    base = runs[0].identity
    body = base.model_dump()
    body["harness"] = {"of": base.harness, "origin": {"version": base.version,
                                                      "runs": digest(sorted(r.hash for r in runs)), **origin}}
    return Identity(**body)
