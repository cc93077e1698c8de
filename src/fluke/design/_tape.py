"""Random tapes: one stream per mechanism and event, so paired runs share their draws.

A single seed does not pair two runs: if one policy makes an extra call it consumes an
extra number, and from then on the two branches read different draws for the same event.
A :class:`Tape` instead derives a fresh Philox stream from (tape seed, mechanism, event key),
hashed through canonical JSON. The draw for "tool fault on the second lookup of case 7"
is then the same in every policy that reaches that event, however many other draws each
policy made before it, and each policy's marginal process is unchanged.

>>> tape = Tape(2026)
>>> a = tape.uniform("tool_fault", ["case-7", "lookup", 2])
>>> b = Tape(2026).uniform("tool_fault", ["case-7", "lookup", 2])
>>> a == b, a == tape.uniform("tool_fault", ["case-7", "lookup", 3])
(True, False)

Limit: events can be matched only while histories agree on what the event *is*; when two
policies diverge so far that no stable key names the same event, their draws are simply
independent, which is honest but gives up the variance reduction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UsageError, UsageTypeError
from ..record import digest

__all__ = ["Tape"]


class Tape:
    """A keyed family of random streams. ``seed`` is any JSON value (an int, a string, a list).

    Use one tape for every policy to pair them ("shared tapes"); a tape per policy (for
    example ``Tape([seed, "memory=on"])``) gives independent streams.
    """

    __slots__ = ("seed", "id")

    def __init__(self, seed: Any) -> None:
        try:
            self.id = digest({"tape": seed})[:16]
        except TypeError as exc:
            raise UsageTypeError(f"seed={seed!r} must be JSON-serialisable (int, str, list)") from exc
        self.seed = seed

    def generator(self, mechanism: str, event: Any) -> np.random.Generator:
        """The stream for one mechanism at one event (the event key: any JSON value).

        >>> draw = lambda: int(Tape(1).generator("judge", "case-1").integers(0, 10))
        >>> draw() == draw()
        True
        """
        if not isinstance(mechanism, str) or not mechanism:
            raise UsageError(f"mechanism={mechanism!r} must be a non-empty string")
        key = digest({"tape": self.seed, "mechanism": mechanism, "event": event})
        return np.random.Generator(np.random.Philox(key=int(key[:32], 16)))

    def uniform(self, mechanism: str, event: Any) -> float:
        """One Uniform(0, 1) draw for this mechanism and event."""
        return float(self.generator(mechanism, event).random())

    def normal(self, mechanism: str, event: Any, *, loc: float = 0.0, scale: float = 1.0) -> float:
        """One normal draw for this mechanism and event."""
        return float(self.generator(mechanism, event).normal(loc, scale))

    def __repr__(self) -> str:
        return f"Tape(seed={self.seed!r}, id={self.id!r})"
