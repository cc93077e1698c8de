"""Honest comparisons of two versions: what the runs could and could not have shown.

Pure functions over numpy arrays (and, in :func:`survival_data`, over :class:`~fluke.record.Run`
objects): the stratified log-rank with its detection limit and verdict, per-step and per-cell
tests with Benjamini–Hochberg q-values, the fix check against a control, failure consistency,
Wilson intervals and null calibration.

>>> from fluke.comparison import detection_limit, wilson_interval
>>> round(detection_limit(48), 3), [round(x, 4) for x in wilson_interval(11, 200)]
(2.245, [0.031, 0.0958])
"""

from ._calibration import NullCalibration, null_calibration
from ._consistency import Consistency, consistency
from ._data import SurvivalData, failure_counts, outcome_arrays, survival_data
from ._fisher import bh_qvalues, fisher_exact_many
from ._fixcheck import (
                       ByInputTest,
                       FixCheck,
                       InputFlag,
                       RerunRule,
                       fix_check,
                       rerun_rule,
)
from ._intervals import ClusteredMean, clustered_mean, wilson_interval
from ._logrank import LogRankResult, logrank_batch, logrank_test
from ._runs import RunComparison, compare_runs
from ._steps import CellTable, CellTest, StepTable, StepTest, per_cell, per_step
from ._verdict import (
                       CLOSING_STATEMENT,
                       DIFFERENT,
                       NO_DIFFERENCE,
                       TOO_SMALL,
                       SurvivalComparison,
                       compare_survival,
                       detection_limit,
                       runs_needed_per_arm,
)

__all__ = [
    "CLOSING_STATEMENT", "DIFFERENT", "NO_DIFFERENCE", "TOO_SMALL",
    "ByInputTest", "CellTable", "CellTest", "ClusteredMean", "Consistency", "FixCheck", "InputFlag",
    "LogRankResult", "NullCalibration", "RerunRule", "RunComparison", "StepTable", "StepTest", "SurvivalComparison",
    "SurvivalData", "bh_qvalues", "clustered_mean", "compare_runs", "compare_survival", "consistency",
    "detection_limit", "failure_counts", "fisher_exact_many", "fix_check", "logrank_batch",
    "logrank_test", "null_calibration", "outcome_arrays", "per_cell", "per_step", "rerun_rule",
    "runs_needed_per_arm", "survival_data", "wilson_interval",
]
