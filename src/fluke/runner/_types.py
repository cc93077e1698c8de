"""What the runner takes (cases, an agent's trajectory) and what it gives back.

A **case** is one scenario to run k times: an id, the input handed to the agent, and an
optional output check. Plain dicts work too (``{"scenario" or "name", "input",
"check" or "expect"}``), so a suite file stays short.

An **agent** is any callable ``agent(input, *, trial, rng)`` (it may leave out ``trial``
and ``rng``; the runner passes only what it accepts) returning one of:

* a :class:`Trajectory` (events, output, and optionally cost / passed / reward);
* a :class:`fluke.record.Run` (e.g. from an adapter), whose events and outcome are kept;
* a pair ``(events, output)``.

Events are :class:`fluke.record.ToolCall` / ``UserMessage`` / ``AgentMessage`` objects or
their dicts (``{"kind": "tool", "tool": ..., ...}``).

>>> case = as_case({"name": "refund-7", "input": "refund W1", "expect": lambda out: "done" in out})
>>> case.scenario, case.check("done.")
('refund-7', True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..errors import InputError
from ..record import Run


@dataclass(frozen=True)
class Case:
    """One scenario: ``scenario`` id, the agent's ``input``, and an optional ``check``.

    ``check(output) -> bool`` decides whether the run's output is right; without one the
    run's ``passed`` comes from the agent's own trajectory (or stays unknown).
    ``unit``, ``condition`` and ``tags`` are copied onto every run of the case.
    """

    scenario: str
    input: Any = None
    check: Callable[[Any], Any] | None = None
    unit: str | None = None
    condition: Mapping[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()


def as_case(obj: Any, *, position: int = 0, file: str | None = None) -> Case:
    """A :class:`Case` from a Case or a dict; a clear error for anything else."""
    if isinstance(obj, Case):
        return obj
    if not isinstance(obj, Mapping):
        raise InputError(file, f"case {position}", None,
                         f"is a {type(obj).__name__}, not a Case or a dict",
                         hint="write Case(scenario=..., input=...) or {'scenario': ..., 'input': ...}")
    known = {"scenario", "name", "input", "check", "expect", "unit", "condition", "tags"}
    unknown = sorted(set(obj) - known)
    if unknown:
        raise InputError(file, f"case {position}", unknown[0], "is not a case field",
                         hint="case fields: " + ", ".join(sorted(known)))
    scenario = obj.get("scenario", obj.get("name"))
    if not isinstance(scenario, str) or not scenario:
        raise InputError(file, f"case {position}", "scenario", "is missing or not a string",
                         hint="give every case a 'scenario' (or 'name')")
    check = obj.get("check", obj.get("expect"))
    if check is not None and not callable(check):
        raise InputError(file, f"case {position}", "check", "is not callable",
                         hint="check(output) -> bool")
    return Case(scenario=scenario, input=obj.get("input"), check=check, unit=obj.get("unit"),
                condition=dict(obj.get("condition") or {}), tags=tuple(obj.get("tags") or ()))


@dataclass(frozen=True)
class Trajectory:
    """What one agent call returns: the ordered ``events`` and the final ``output``.

    ``passed`` / ``reward`` are the agent's (or its environment's) own verdict, used when
    the case has no check. ``cost`` is tokens or money, e.g. ``{"input_tokens": 812}``.
    """

    events: list[Any] = field(default_factory=list)
    output: Any = None
    cost: Mapping[str, float] = field(default_factory=dict)
    passed: bool | None = None
    reward: float | None = None


@dataclass(frozen=True)
class RunResult:
    """One finished run: the run, its :class:`fluke.grading.RunGrade` and its violations.

    ``grade`` is None for a run that did not raise when no spec was given. A run that
    raised has a grade with one hard ``run_error`` violation. ``hard`` is True on any hard
    violation. ``resumed`` marks a run that was already in the ledger and was not run again.
    ``tool_log`` is what the run's tools did (:meth:`fluke.tools.ToolSession.log`), when
    the agent called them through fluke.
    """

    run: Run
    grade: Any = None
    violations: tuple[Any, ...] = ()
    hard: bool = False
    resumed: bool = False
    traceback: str | None = None
    tool_log: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class EvaluationResult:
    """The outcome of :func:`fluke.runner.evaluate`: one :class:`RunResult` per (case, trial).

    ``added`` runs were written to the ledger by this call, ``resumed`` were there
    already; ``duplicates`` were run here but another writer had recorded the same trial
    first (that first run is the one kept, and returned). Conditional on ``version`` (the
    identity's hash) and, when graded, on the spec with digest ``spec_digest``.
    """

    results: tuple[RunResult, ...]
    k: int
    version: str
    spec_digest: str | None = None
    added: int = 0
    resumed: int = 0
    duplicates: int = 0

    @property
    def runs(self) -> list[Run]:
        """The runs, in (case, trial) order."""
        return [r.run for r in self.results]

    @property
    def errors(self) -> int:
        """How many runs raised (agent, check or grading)."""
        return sum(r.run.error is not None for r in self.results)

    @property
    def hard(self) -> int:
        """How many runs carry a hard violation (errors included)."""
        return sum(r.hard for r in self.results)

    def grades(self) -> list[Any]:
        """One grade per run; an ungraded run (no spec) counts as a clean path."""
        from ..grading import make_grade

        return [r.grade if r.grade is not None else
                make_grade(r.run.hash, r.run.scenario, [], r.run.outcome.passed,
                           version=r.run.version, trial=r.run.trial) for r in self.results]

    def gate(self) -> Any:
        """The gate (:func:`fluke.grading.evaluate_gate`): a hard violation, a run that raised
        included, fails on one occurrence; a soft check only when a strict majority of a
        case's runs fail it; warnings never."""
        from ..grading import evaluate_gate

        return evaluate_gate(self.grades())

    def passes(self) -> tuple[int, int]:
        """``(passed, judged)``: runs whose output passed, of those with a known verdict."""
        known = [r.run.outcome.passed for r in self.results if r.run.outcome.passed is not None]
        return sum(known), len(known)
