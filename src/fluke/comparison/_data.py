"""From runs to the arrays the tests take: when each run died, and its outcome per input.

A run's time is its event index. A failed run dies at ``outcome.died_at`` when the harness
recorded it, else at its first hard violation (``hard_index``: run hash → event index, from
grading), else at the failed tool call it ends on (an engine that rejects a call and ends the
episode). A failed run that ends any other way has no known failure step: it is left out and
counted (``unknown_step="exclude"``, the default), or, under the old rule
``unknown_step="last event"``, dies at its last event, which makes a survival test measure
trajectory length. A passing run is censored at its last event. Runs whose outcome is unknown
(``passed`` is None) are left out and counted.

>>> from fluke.record import Run, Outcome, ToolCall, UserMessage
>>> runs = [Run(scenario="s", events=[UserMessage(text="hi"), ToolCall(tool="review", ok=False)],
...             outcome=Outcome(passed=False)),
...         Run(scenario="s", trial=1, events=[UserMessage(text="hi")], outcome=Outcome(passed=True))]
>>> data = survival_data(runs)
>>> data.time.tolist(), data.died.tolist(), data.label.tolist()
([1, 0], [True, False], ['review', 'user'])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:   # the pydantic run model is imported by the functions that read runs
    from ..record import Run

__all__ = ["SurvivalData", "failure_counts", "outcome_arrays", "survival_data"]


@dataclass(frozen=True)
class SurvivalData:
    """One entry per run with a known outcome: time, died, scenario, condition and death label.

    ``died_from`` counts where each time came from: ``died_at``, ``hard violation``,
    ``failed call`` and ``unknown step`` (failed runs; the last left out of the arrays) and
    ``censored`` (passing runs); under the old rule ``last event`` replaces the middle two.
    ``cause`` says for each entry which of those it is.
    """

    time: np.ndarray
    died: np.ndarray
    scenario: np.ndarray
    condition: np.ndarray
    label: np.ndarray
    trial: np.ndarray
    unknown: int
    died_from: dict[str, int]
    unknown_step: int = 0
    cause: np.ndarray | None = None


def _label(event) -> str:
    from ..record import ToolCall

    return event.tool if isinstance(event, ToolCall) else event.kind


def survival_data(runs: Iterable[Run], *, hard_index: Mapping[str, int] | None = None,
                  unknown_step: str = "exclude") -> SurvivalData:
    """Times and death flags for ``runs`` by the died_at rule (see the module docstring).

    >>> from fluke.record import Run, Outcome, UserMessage
    >>> run = Run(scenario="s", events=[UserMessage(text="a"), UserMessage(text="b")], outcome=Outcome(passed=False))
    >>> survival_data([run], hard_index={run.hash: 0}).died_from["hard violation"]
    1
    >>> data = survival_data([run])
    >>> data.unknown_step, data.time.size
    (1, 0)
    """
    if unknown_step not in ("exclude", "last event"):
        raise InputError(None, None, "unknown_step", f"unknown_step={unknown_step!r} must be 'exclude' or 'last event'")
    from ..record import ToolCall

    legacy = unknown_step == "last event"
    time, died, scen, cond, label, trial, causes = [], [], [], [], [], [], []
    unknown = 0
    sources = ({"died_at": 0, "hard violation": 0, "last event": 0, "censored": 0} if legacy else
               {"died_at": 0, "hard violation": 0, "failed call": 0, "unknown step": 0, "censored": 0})
    for run in runs:
        passed = run.outcome.passed
        if passed is None:
            unknown += 1
            continue
        last = max(len(run.events) - 1, 0)
        if passed:
            t, how = last, "censored"
        elif run.outcome.died_at is not None:
            t, how = run.outcome.died_at, "died_at"
        elif hard_index is not None and run.hash in hard_index and hard_index[run.hash] is not None:
            t, how = int(hard_index[run.hash]), "hard violation"
        elif legacy:
            t, how = last, "last event"
        elif run.events and isinstance(run.events[-1], ToolCall) and run.events[-1].ok is False:
            t, how = last, "failed call"
        else:
            sources["unknown step"] += 1
            continue
        sources[how] += 1
        causes.append(how)
        time.append(t)
        died.append(not passed)
        scen.append(run.scenario)
        cond.append(run.condition_key())
        label.append(_label(run.events[t]) if 0 <= t < len(run.events) else "end")
        trial.append(run.trial)
    return SurvivalData(np.asarray(time, dtype=np.int64), np.asarray(died, dtype=bool),
                        np.asarray(scen, dtype=object), np.asarray(cond, dtype=object),
                        np.asarray(label, dtype=object), np.asarray(trial, dtype=np.int64),
                        unknown, sources, 0 if legacy else sources["unknown step"], np.asarray(causes, dtype=object))


def outcome_arrays(runs: Iterable[Run]):
    """``(inputs, failed, order)`` for the fix check: scenario (with condition), failed, trial.

    Runs with an unknown outcome are left out.

    >>> from fluke.record import Run, Outcome
    >>> inputs, failed, order = outcome_arrays([Run(scenario="s", trial=2, outcome=Outcome(passed=False))])
    >>> inputs.tolist(), failed.tolist(), order.tolist()
    (['s'], [True], [2.0])
    """
    inputs, failed, order = [], [], []
    for run in runs:
        if run.outcome.passed is None:
            continue
        key = run.condition_key()
        inputs.append(f"{run.scenario}|{key}" if key else run.scenario)
        failed.append(not run.outcome.passed)
        order.append(run.trial)
    return np.asarray(inputs, dtype=str), np.asarray(failed, dtype=bool), np.asarray(order, dtype=float)


def failure_counts(inputs, failed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per input: ``(names, failures, trials)``, vectorised.

    >>> names, f, n = failure_counts(["a", "b", "a"], [True, False, False])
    >>> names.tolist(), f.tolist(), n.tolist()
    (['a', 'b'], [1, 0], [2, 1])
    """
    names, codes = np.unique(np.asarray(inputs), return_inverse=True)
    codes = codes.reshape(-1)
    failed = np.asarray(failed, dtype=float).reshape(-1)
    return names, np.bincount(codes, weights=failed).astype(int), np.bincount(codes)
