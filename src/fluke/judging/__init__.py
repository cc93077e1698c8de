"""Judges you can trust: a judge frozen as a hashed configuration, runs judged blind and K times,
the judge's disagreement with itself and with people measured, and its pass rate corrected by a
few human labels (PPI++).

>>> from fluke.judging import JudgeConfig, FakeJudge, judge_runs, self_consistency
>>> from fluke.record import Run, Outcome
>>> runs = [Run(scenario=f"s{i}", outcome=Outcome(passed=i % 3 != 0)) for i in range(30)]
>>> config = JudgeConfig(model="fake", prompt="PASS or FAIL?", endpoint="fake", replicates=3)
>>> judged = judge_runs(runs, config, FakeJudge.from_runs(runs, sensitivity=0.9, specificity=0.8))
>>> sc = self_consistency(judged.replicate_matrix())
>>> sc.runs, sc.replicates, 0 < sc.flips.value < 1
(30, 3, True)
"""

from ._agreement import (Estimate, HumanAgreement, SelfConsistency, cohen_kappa, fleiss_kappa, flip_share,
                         human_agreement, krippendorff_alpha, positional_bias, self_consistency, wilson)
from ._blind import balanced_orders, blind_view
from ._config import JUDGE_KIND, JudgeConfig, load_judge
from ._judge import JudgedRuns, Judgment, PairVerdict, judge_pairs, judge_runs
from ._judges import CallableJudge, FakeJudge, HttpJudge, Judge, make_judge, read_preference, read_verdict
from ._ppi import RateEstimate, human_only, judge_only, labels_for_width, ppi_difference, ppi_mean, ppi_stratified

__all__ = [
    "CallableJudge", "Estimate", "FakeJudge", "HttpJudge", "HumanAgreement", "JUDGE_KIND", "Judge", "JudgeConfig",
    "JudgedRuns", "Judgment", "PairVerdict", "RateEstimate", "SelfConsistency", "balanced_orders", "blind_view",
    "cohen_kappa", "fleiss_kappa", "flip_share", "human_agreement", "human_only", "judge_only", "judge_pairs",
    "judge_runs", "krippendorff_alpha", "labels_for_width", "load_judge", "make_judge", "ppi_difference", "ppi_mean",
    "ppi_stratified", "positional_bias", "read_preference", "read_verdict", "self_consistency", "wilson",
]
