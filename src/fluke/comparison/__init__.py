"""Honest comparisons of two versions: what the runs could and could not have shown.

Pure functions over counts and numpy arrays (and, in :func:`compare_versions`,
:func:`pass_counts` and :func:`survival_data`, over :class:`~fluke.record.Run` objects).

* Did the pass rate move? :func:`compare_pass_rates` (counts per stratum) and
  :func:`compare_pass_counts` (maps of counts): the difference in points with an interval
  clustered by scenario, the stratified test (:func:`stratified_test`: CMH, exact
  conditional, exact McNemar), P(B < A) and the detection limit in points.
* Where do runs die? :func:`compare_where`: the stratified log-rank over runs whose failure
  step is known, its limit from the information, the hazard ratio from a stratified Cox fit
  (:func:`stratified_cox`), per-step tests stratified by scenario; skipped when no step is known.
* Looking again: :func:`sequential_test`, anytime-valid over any number of looks.
* The fix check against a control (:func:`fix_check`; without one, the bar a re-run clears
  by itself), failure consistency, per-cell Fisher tests, Wilson intervals, null calibration.
* One verdict rule for all of them: :func:`verdict_of`.

>>> from fluke.comparison import compare_pass_rates, detection_limit, wilson_interval
>>> round(detection_limit(48), 3), [round(x, 4) for x in wilson_interval(11, 200)]
(2.245, [0.031, 0.0958])
>>> compare_pass_rates([18], [40], [30], [40]).verdict
'different'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

# Each name is imported from its module when it is first asked for (as in fluke.record): compare needs
# a dozen of these modules, leaderboard another few, and neither needs the fix check, the sequential
# test or the null calibration.

#: Where each public name lives (a module of this package).
_HOMES = {
    "._calibration": ("NullCalibration", "null_calibration"),
    "._consistency": ("Consistency", "consistency_from_counts"),
    "._cox": ("HazardRatio", "stratified_cox"),
    "._data": ("SurvivalData", "failure_counts", "outcome_arrays", "survival_data"),
    "._fisher": ("bh_qvalues", "fisher_exact_many"),
    "._fixcheck": ("ByInputTest", "FixCheck", "FixTally", "InputFlag", "RerunBar", "RerunRule", "check_tally",
        "fix_check", "fix_tally", "rerun_bar", "rerun_rule"),
    "._intervals": ("ClusteredMean", "clustered_mean", "clustered_mean_sums", "wilson_interval"),
    "._leaderboard": ("CORRECTIONS", "Leaderboard", "PairTest", "SeparatingStratum", "Standing",
        "adjust_pvalues", "holm_adjust", "indistinct_groups", "leaderboard_counts", "p_first_posterior",
        "rank_bootstrap"),
    "._logrank": ("LogRankResult", "logrank_batch", "logrank_test"),
    "._limit": ("DIRECTIONS", "regression_limit", "shift_power", "verdict_interval"),
    "._newtasks": ("NewTasksInterval", "new_tasks_interval"),
    "._passrate": ("ROOM_SHARE", "UNKNOWN_POLICIES", "PassRateComparison", "compare_pass_rates", "design_limits",
        "limit_phrase", "p_below_edgeworth", "pass_rate_limit"),
    "._runs": ("RunComparison", "compare_runs"),
    "._sequential": ("SequentialTest", "matched_batches", "sequential_evalues", "sequential_power",
        "sequential_test"),
    "._steps": ("CellTable", "CellTest", "StepTable", "StepTest", "per_cell", "per_step"),
    "._stratified": ("StratifiedTest", "stratified_information", "stratified_pvalues", "stratified_test"),
    "._verdict": ("CLOSING_STATEMENT", "DIFFERENT", "NO_DIFFERENCE", "TOO_SMALL", "SurvivalComparison",
        "compare_survival", "detection_limit", "detection_z", "hazard_ratio_limit", "runs_needed_per_arm",
        "verdict_of", "verdicts_of"),
    "._versions": ("VersionComparison", "compare_counted", "compare_pass_counts", "compare_versions", "pass_counts",
        "places_of"),
    "._where": ("ASSUMPTIONS", "WhereComparison", "compare_where"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "ASSUMPTIONS", "CLOSING_STATEMENT", "DIFFERENT", "NO_DIFFERENCE", "TOO_SMALL", "UNKNOWN_POLICIES",
    "ByInputTest", "CellTable", "CellTest", "ClusteredMean", "Consistency", "FixCheck", "HazardRatio",
    "InputFlag", "LogRankResult", "NullCalibration", "PassRateComparison", "RerunBar", "RerunRule",
    "RunComparison", "SequentialTest", "StepTable", "StepTest", "StratifiedTest", "SurvivalComparison",
    "SurvivalData", "VersionComparison", "WhereComparison",
    "bh_qvalues", "clustered_mean", "compare_counted", "compare_pass_counts", "compare_pass_rates", "compare_runs",
    "compare_survival", "compare_versions", "compare_where", "consistency_from_counts", "detection_limit",
    "detection_z", "failure_counts", "fisher_exact_many", "fix_check",
    "check_tally", "clustered_mean_sums", "fix_tally", "FixTally",
    "hazard_ratio_limit", "logrank_batch", "logrank_test", "null_calibration", "outcome_arrays",
    "pass_counts", "pass_rate_limit", "places_of", "per_cell", "per_step", "rerun_bar", "rerun_rule",
    "runs_needed_per_arm", "sequential_evalues", "sequential_test", "stratified_cox",
    "stratified_information", "stratified_pvalues", "stratified_test", "survival_data",
    "verdict_of", "verdicts_of", "wilson_interval",
    # many versions at once (issue 13)
    "CORRECTIONS", "Leaderboard", "PairTest", "SeparatingStratum", "Standing", "adjust_pvalues",
    "holm_adjust", "indistinct_groups", "leaderboard_counts", "rank_bootstrap",
    # limits under the alternative and the interval that inverts the test (issue 35)
    "DIRECTIONS", "ROOM_SHARE", "design_limits", "limit_phrase", "matched_batches", "p_below_edgeworth",
    "p_first_posterior", "sequential_power", "regression_limit", "shift_power", "verdict_interval",
    "NewTasksInterval", "new_tasks_interval",
]
assert sorted(__all__) == sorted(_HOME_OF)

if TYPE_CHECKING:
    from ._calibration import NullCalibration, null_calibration
    from ._consistency import Consistency, consistency_from_counts
    from ._cox import HazardRatio, stratified_cox
    from ._data import SurvivalData, failure_counts, outcome_arrays, survival_data
    from ._fisher import bh_qvalues, fisher_exact_many
    from ._fixcheck import (ByInputTest, FixCheck, FixTally, InputFlag, RerunBar, RerunRule, check_tally, fix_check,
                            fix_tally, rerun_bar, rerun_rule)
    from ._intervals import ClusteredMean, clustered_mean, clustered_mean_sums, wilson_interval
    from ._leaderboard import (CORRECTIONS, Leaderboard, PairTest, SeparatingStratum, Standing,
                               adjust_pvalues, holm_adjust, indistinct_groups, leaderboard_counts, p_first_posterior,
                               rank_bootstrap)
    from ._logrank import LogRankResult, logrank_batch, logrank_test
    from ._limit import DIRECTIONS, regression_limit, shift_power, verdict_interval
    from ._newtasks import NewTasksInterval, new_tasks_interval
    from ._passrate import (ROOM_SHARE, UNKNOWN_POLICIES, PassRateComparison, compare_pass_rates, design_limits,
                            limit_phrase, p_below_edgeworth, pass_rate_limit)
    from ._runs import RunComparison, compare_runs
    from ._sequential import SequentialTest, matched_batches, sequential_evalues, sequential_power, sequential_test
    from ._steps import CellTable, CellTest, StepTable, StepTest, per_cell, per_step
    from ._stratified import StratifiedTest, stratified_information, stratified_pvalues, stratified_test
    from ._verdict import (CLOSING_STATEMENT, DIFFERENT, NO_DIFFERENCE, TOO_SMALL, SurvivalComparison,
                           compare_survival, detection_limit, detection_z, hazard_ratio_limit, runs_needed_per_arm,
                           verdict_of, verdicts_of)
    from ._versions import (VersionComparison, compare_counted, compare_pass_counts, compare_versions, pass_counts,
                            places_of)
    from ._where import ASSUMPTIONS, WhereComparison, compare_where


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())
