"""Statistics over run counts and arrays: pure functions, no I/O.

Posteriors, the running account, suite questions, the weekly review and calibration (from
counts of passes and trials); clustered intervals, variance components, pass@k and pass^k.

>>> from fluke.inference import posterior, pass_at_k
>>> round(float(posterior(5, 5).sf(0.9)), 3), round(pass_at_k([2], [10], k=3).statistic, 4)
(0.469, 0.5333)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

# Each name is imported from its module when it is first asked for (as in fluke.record): a verb that
# answers from counts needs a few of these modules, not all twenty.

#: Where each public name lives (a module of this package).
_HOMES = {
    "._account": ("ChangeDetection", "RunningAccount", "as_beta", "betabinom_cdf", "detect_change", "discount",
        "footprint_discount", "running_account", "surprise"),
    "._beta": ("UNIFORM", "BetaMixture", "BetaPosterior", "Prior", "check_counts", "log_marginal", "parse_prior",
        "posterior"),
    "._calibration": ("BrierDecomposition", "CalibrationReport", "CalibrationScore", "CalibrationTest",
        "ReliabilityTable", "brier_decomposition", "brier_score", "calibration_test", "reliability_table",
        "score_predictions"),
    "._carry": ("Belief", "EarlierVersion", "belief_from_counts"),
    "._cells": ("Cells",),
    "._clustered": ("FEW_CLUSTERS", "BootstrapInterval", "ClusteredInterval", "ClusterRobustFit",
        "FewClustersWarning", "NaiveInterval", "check_level", "check_values", "cluster_bootstrap_cells",
        "cluster_bootstrap_interval", "cluster_codes", "cluster_robust_ols", "clustered_interval",
        "clustered_interval_cells", "clopper_pearson_ends", "wilson_effective"),
    "._family": ("HYPERPRIOR", "FamilyFit", "FamilyPosterior", "FamilyPriors", "family_priors", "fit_family_prior",
        "hyperprior_grid"),
    "._lazy": ("lazy_stats",),
    "._matching": ("PredictionMatch", "match_predictions"),
    "._passk": ("PassAtK", "PlugInWarning", "default_ks", "expected_pass_at_k", "pass_at_k", "pass_at_k_curve",
        "pass_at_k_from_average", "pass_at_k_plugin", "pass_hat_k"),
    "._pvalue": ("t_test_pvalue",),
    "._reset_rate": ("ResetRate", "reset_rate"),
    "._statement": ("Statement", "carried_text", "scenario_statement", "scenario_statements", "suite_statement"),
    "._suite": ("SuiteAnswers", "poisson_binomial_pmf", "runs_to_certify", "suite_questions",
        "suite_runs_to_certify"),
    "._unknown": ("UNKNOWN_POLICIES", "UnknownOutcomes", "UnknownPolicy", "apply_unknown_policy",
        "check_unknown_policy", "counts_with_unknowns"),
    "._variance": ("Projection", "VarianceComponents", "grand_mean_sd", "variance_components",
        "variance_components_cells"),
    "._multiplicity": ("bh_qvalues", "bh_reject"),
    "._weekly": ("CanaryChart", "WeeklyReview", "canary_chart", "p_greater", "review_week"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "bh_qvalues", "bh_reject",
    # posteriors, the running account, suite questions, weekly review, calibration (issue 4)
    "UNIFORM", "BetaMixture", "BetaPosterior", "BrierDecomposition", "CalibrationReport",
    "CalibrationScore", "CalibrationTest", "CanaryChart", "ChangeDetection", "FamilyFit",
    "FamilyPriors", "Prior", "ReliabilityTable", "RunningAccount", "Statement", "SuiteAnswers",
    "WeeklyReview", "betabinom_cdf", "brier_decomposition", "brier_score", "calibration_test",
    "canary_chart", "carried_text", "check_counts", "detect_change", "discount", "family_priors",
    "fit_family_prior", "footprint_discount", "log_marginal", "p_greater", "parse_prior",
    "poisson_binomial_pmf", "posterior", "reliability_table", "review_week", "running_account",
    "runs_to_certify", "scenario_statement", "scenario_statements", "score_predictions",
    "suite_questions", "suite_runs_to_certify", "suite_statement", "surprise",
    # clustered intervals, variance components, pass@k and pass^k (issue 6)
    "BootstrapInterval", "ClusterRobustFit", "ClusteredInterval", "NaiveInterval", "PassAtK",
    "PlugInWarning", "Projection", "VarianceComponents", "cluster_bootstrap_interval",
    "cluster_robust_ols", "clustered_interval", "expected_pass_at_k", "grand_mean_sd",
    "pass_at_k", "pass_at_k_from_average", "pass_at_k_plugin", "pass_hat_k",
    "variance_components",
    # argument checks and the t test, shared with fluke.design and fluke.analysis (issue 11)
    "check_level", "check_values", "cluster_codes", "t_test_pvalue",
    # honest at the edges (issue 14): one belief per version, hierarchical families, unknown
    # outcomes, pass@k's default k and interval, few clusters, calibration matching, looking again
    "Belief", "EarlierVersion", "belief_from_counts", "as_beta", "HYPERPRIOR", "FamilyPosterior", "hyperprior_grid",
    "UNKNOWN_POLICIES", "UnknownOutcomes", "UnknownPolicy", "apply_unknown_policy", "check_unknown_policy",
    "counts_with_unknowns", "default_ks", "pass_at_k_curve", "FEW_CLUSTERS", "wilson_effective",
    "clopper_pearson_ends",
    "FewClustersWarning", "PredictionMatch", "match_predictions", "ResetRate", "reset_rate",
    "lazy_stats",
    # the same three from per-cell sums (rows, Σy, Σy²), as a ledger keeps them (issue 19)
    "Cells", "cluster_bootstrap_cells", "clustered_interval_cells", "variance_components_cells",
]
assert sorted(__all__) == sorted(_HOME_OF)

if TYPE_CHECKING:
    from ._account import (ChangeDetection, RunningAccount, as_beta, betabinom_cdf, detect_change, discount,
                           footprint_discount, running_account, surprise)
    from ._beta import UNIFORM, BetaMixture, BetaPosterior, Prior, check_counts, log_marginal, parse_prior, posterior
    from ._calibration import (BrierDecomposition, CalibrationReport, CalibrationScore, CalibrationTest,
                               ReliabilityTable, brier_decomposition, brier_score, calibration_test,
                               reliability_table, score_predictions)
    from ._carry import Belief, EarlierVersion, belief_from_counts
    from ._cells import Cells
    from ._clustered import (FEW_CLUSTERS, BootstrapInterval, ClusteredInterval, ClusterRobustFit, FewClustersWarning,
                             NaiveInterval, check_level, check_values, cluster_bootstrap_cells,
                             cluster_bootstrap_interval, cluster_codes, cluster_robust_ols, clustered_interval,
                             clustered_interval_cells, clopper_pearson_ends, wilson_effective)
    from ._family import (HYPERPRIOR, FamilyFit, FamilyPosterior, FamilyPriors, family_priors, fit_family_prior,
                          hyperprior_grid)
    from ._lazy import lazy_stats
    from ._matching import PredictionMatch, match_predictions
    from ._passk import (PassAtK, PlugInWarning, default_ks, expected_pass_at_k, pass_at_k, pass_at_k_curve,
                         pass_at_k_from_average, pass_at_k_plugin, pass_hat_k)
    from ._pvalue import t_test_pvalue
    from ._reset_rate import ResetRate, reset_rate
    from ._statement import Statement, carried_text, scenario_statement, scenario_statements, suite_statement
    from ._suite import SuiteAnswers, poisson_binomial_pmf, runs_to_certify, suite_questions, suite_runs_to_certify
    from ._unknown import (UNKNOWN_POLICIES, UnknownOutcomes, UnknownPolicy, apply_unknown_policy,
                           check_unknown_policy, counts_with_unknowns)
    from ._variance import Projection, VarianceComponents, grand_mean_sd, variance_components, variance_components_cells
    from ._multiplicity import bh_qvalues, bh_reject
    from ._weekly import CanaryChart, WeeklyReview, canary_chart, p_greater, review_week


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())
