"""What the runs let you believe: posteriors, the running account, suite questions, calibration.

Pure functions over pass counts (arrays over scenarios), returning small frozen results.

>>> from fluke.inference import posterior, suite_questions
>>> round(float(posterior(5, 5).sf(0.9)), 3)
0.469
"""

from ._account import (ChangeDetection, RunningAccount, betabinom_cdf, detect_change, discount,
                       footprint_discount, running_account, surprise)
from ._beta import UNIFORM, BetaMixture, BetaPosterior, Prior, check_counts, log_marginal, parse_prior, posterior
from ._calibration import (BrierDecomposition, CalibrationReport, CalibrationScore, CalibrationTest,
                           ReliabilityTable, brier_decomposition, brier_score, calibration_test,
                           reliability_table, score_predictions)
from ._family import FamilyFit, FamilyPriors, family_priors, fit_family_prior
from ._statement import Statement, carried_text, scenario_statement, scenario_statements, suite_statement
from ._suite import SuiteAnswers, poisson_binomial_pmf, runs_to_certify, suite_questions, suite_runs_to_certify
from ._weekly import CanaryChart, WeeklyReview, canary_chart, p_greater, review_week

__all__ = [
    "UNIFORM", "BetaMixture", "BetaPosterior", "BrierDecomposition", "CalibrationReport",
    "CalibrationScore", "CalibrationTest", "CanaryChart", "ChangeDetection", "FamilyFit",
    "FamilyPriors", "Prior", "ReliabilityTable", "RunningAccount", "Statement", "SuiteAnswers",
    "WeeklyReview", "betabinom_cdf", "brier_decomposition", "brier_score", "calibration_test",
    "canary_chart", "carried_text", "check_counts", "detect_change", "discount", "family_priors",
    "fit_family_prior", "footprint_discount", "log_marginal", "p_greater", "parse_prior",
    "poisson_binomial_pmf", "posterior", "reliability_table", "review_week", "running_account",
    "runs_to_certify", "scenario_statement", "scenario_statements", "score_predictions", "suite_questions",
    "suite_runs_to_certify", "suite_statement", "surprise",
]
