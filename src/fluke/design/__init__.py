"""Experiment design: pre-registration seals, factorial policy designs, perturbation suites,
random tapes.

>>> from fluke.design import Tape
>>> Tape(7).uniform("fault", "e1") == Tape(7).uniform("fault", "e1")
True
"""

from ._factorial import (Contrast, FactorialContrasts, FactorialPlan, factorial_contrasts,
                         factorial_plan, paired_interval)
from ._perturb import PerturbationRow, PerturbationSuite, perturbation_suite
from ._seal import RuleDecision, SealCheck, check_seal, evaluate_rule, in_scope, parse_rule, seal_body
from ._plan import (Allocation, CertificationPlan, PairedPlan, allocate_certification, allocate_difference,
                    certification_decided, certification_plan, paired_power, paired_sample_size, printed_limit,
                    spread_evenly)
from ._tape import Tape
from ._unseal import UnsealReport, execution_start, find_seal, seal_rule, unseal_rule

__all__ = [
    "Contrast", "RuleDecision", "FactorialContrasts", "FactorialPlan", "PerturbationRow",
    "PerturbationSuite", "SealCheck", "Tape", "UnsealReport", "check_seal", "evaluate_rule",
    "factorial_contrasts", "factorial_plan", "find_seal", "in_scope", "paired_interval",
    "parse_rule", "perturbation_suite", "seal_rule", "seal_body", "unseal_rule", "execution_start",
    # planning runs (issue 13)
    "Allocation", "CertificationPlan", "PairedPlan", "allocate_certification", "allocate_difference",
    "certification_decided", "certification_plan", "paired_power", "paired_sample_size", "printed_limit",
    "spread_evenly",
]
