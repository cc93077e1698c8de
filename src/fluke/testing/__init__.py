"""Testing with fluke: agent runs asserted on belief (the pytest plugin), and real services for tests.

>>> from fluke.testing import postgres_binaries
>>> postgres_binaries() is None or postgres_binaries().name == "bin"
True
"""

from ._expect import AgentRuns, Expectation, expect, run_agent
from ._postgres import ThrowawayPostgres, postgres_binaries

__all__ = ["AgentRuns", "Expectation", "ThrowawayPostgres", "expect", "postgres_binaries", "run_agent"]
