"""Helpers for testing and benchmarking against real services.

>>> from fluke.testing import postgres_binaries
>>> postgres_binaries() is None or postgres_binaries().name == "bin"
True
"""

from ._postgres import ThrowawayPostgres, postgres_binaries

__all__ = ["ThrowawayPostgres", "postgres_binaries"]
