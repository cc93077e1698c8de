"""Synthetic agents with known answers: the staged workload and its planted change.

>>> from fluke.simulate import draw_arm, BASELINE_RATES
>>> draw_arm(BASELINE_RATES, tasks=2, runs_per_task=3, salt="x").died.size
6
"""

from ._null import NullPairs, NullRun, calibrate_null, null_pairs
from ._staged import (
                      BASELINE_RATES,
                      STAGES,
                      PlantedChange,
                      StagedArm,
                      draw_arm,
                      draw_failures,
                      plant_change,
                      verify_seal,
)

__all__ = [
    "BASELINE_RATES", "STAGES", "NullPairs", "NullRun", "PlantedChange", "StagedArm",
    "calibrate_null", "draw_arm", "draw_failures", "null_pairs", "plant_change", "verify_seal",
]
