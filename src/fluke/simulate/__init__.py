"""Synthetic agents with known answers.

This branch's part: the simulated support agent (memory × retry, planted effects, random
tapes). The lead merges it with the staged-failure workload.

>>> from fluke.simulate import simulate_support
>>> simulate_support(environments=2).memory_effect
0.15
"""

from ._support import SupportStudy, simulate_support

__all__ = ["SupportStudy", "simulate_support"]
