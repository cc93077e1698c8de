"""Deciding under cost and risk: pure functions over counts and numpy arrays.

* What a success costs: :func:`cost_per_success` (every run charged, unknown cost set apart, an
  interval clustered by scenario by the delta method or the bootstrap-t), :func:`per_run` (mean
  and 95th percentile of latency, spend or tokens, with intervals).
* Severe failures apart: :func:`severe_rate` and :func:`upper_bound` (exact Clopper–Pearson).
* Cheaper and not worse: :func:`not_worse` (a non-inferiority margin on the paired interval).
* Subgroups: :func:`subgroup_contrasts` (per group, Holm across groups, the "better on average,
  worse in a group" flag).
* The cost–quality frontier: :func:`frontier` (the versions no other beats on both).
* A declared loss table: :func:`parse_loss_table`, :func:`decide_losses` (expected loss per task,
  the choice, and the probability that it is wrong).

>>> from fluke.decisions import upper_bound
>>> round(upper_bound(0, 300), 4)
0.0099
"""

from ._cost import (METHODS, CostPerSuccess, PerRun, cost_per_success, cost_per_success_sums, per_run,
                    quantile_interval, scenario_sums)
from ._frontier import frontier
from ._loss import Decision, LossTable, VersionLoss, decide_losses, parse_loss_table
from ._margin import CostDifference, NonInferiority, not_worse, paired_cost_difference
from ._severe import SevereRate, clean_runs_needed, lower_bound, severe_rate, upper_bound
from ._subgroups import GroupContrast, SubgroupReport, subgroup_contrasts

__all__ = [
    "METHODS", "CostDifference", "CostPerSuccess", "Decision", "GroupContrast", "LossTable", "NonInferiority",
    "PerRun",
    "SevereRate", "SubgroupReport", "VersionLoss", "cost_per_success", "cost_per_success_sums", "decide_losses",
    "not_worse", "paired_cost_difference", "parse_loss_table", "per_run", "quantile_interval", "scenario_sums",
    "severe_rate", "subgroup_contrasts", "upper_bound", "lower_bound", "clean_runs_needed", "frontier",
]
