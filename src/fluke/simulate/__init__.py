"""Synthetic agents with known answers: the staged-failure workload with its sealed planted
change, and the simulated support agent (memory × retry, planted effects, random tapes).

>>> from fluke.simulate import draw_arm, BASELINE_RATES, simulate_support
>>> draw_arm(BASELINE_RATES, tasks=2, runs_per_task=3, salt="x").died.size
6
>>> simulate_support(environments=2).memory_effect
0.15
"""

from ._boundary import PlantedAgent, planted_agent, search
from ._desk import DESK_SPEC, SupportDesk, desk_agent, support_desk
from ._null import NullPairs, NullRun, calibrate_null, null_pairs
from ._staged import (BASELINE_RATES, STAGES, PlantedChange, StagedArm, draw_arm, draw_failures,
                      plant_change, verify_seal)
from ._support import SupportStudy, simulate_support
from ._tradeoff import TRADEOFF_SPEC, SubgroupCounts, TradeoffSuite, subgroup_counts, tradeoff_suite

__all__ = [
    "BASELINE_RATES",
    "DESK_SPEC",
    "STAGES",
    "SupportDesk",
    "NullPairs",
    "NullRun",
    "PlantedAgent",
    "PlantedChange",
    "StagedArm",
    "SupportStudy",
    "calibrate_null",
    "draw_arm",
    "draw_failures",
    "null_pairs",
    "plant_change",
    "planted_agent",
    "search",
    "simulate_support",
    "support_desk",
    "verify_seal",
    "desk_agent",
    "TRADEOFF_SPEC",
    "SubgroupCounts",
    "TradeoffSuite",
    "subgroup_counts",
    "tradeoff_suite",
]
