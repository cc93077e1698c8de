"""Run an agent suite: k runs per case, graded, recorded in the ledger as they finish.

>>> from fluke.runner import evaluate, Case, Trajectory
>>> result = evaluate([Case("echo", input="hi", check=lambda out: out == "hi")],
...                   lambda text: Trajectory(output=text), k=2)
>>> result.passes(), result.errors
((2, 2), 0)
"""

from ._evaluate import evaluate
from ._executors import EXECUTORS, Attempt, Job, executor_for
from ._frameworks import read_trajectory
from ._suite import Suite, load_suite
from ._types import Case, EvaluationResult, RunResult, Trajectory, as_case

__all__ = ["EXECUTORS", "Attempt", "Case", "EvaluationResult", "RunResult", "Suite", "Trajectory",
           "Job", "as_case", "evaluate", "executor_for", "load_suite", "read_trajectory"]
