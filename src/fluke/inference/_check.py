"""The one check of a level (a confidence or credible level, α, power, a bar, a false-discovery rate).

>>> check_level(0.9, "bar")
0.9
"""

from __future__ import annotations

from ..errors import UsageError

__all__ = ["check_level"]

def check_level(confidence_level: float, name: str = "confidence_level") -> float:
    """A level strictly between 0 and 1 (a confidence or credible level, α, power), or a
    :class:`fluke.errors.UsageError` naming ``name`` and the value. Every level fluke takes
    is checked here.

    >>> check_level(0.95)
    0.95
    >>> check_level(1.5, "--level")
    Traceback (most recent call last):
    ...
    fluke.errors.UsageError: --level=1.5 must lie strictly between 0 and 1
    """
    if not 0.0 < confidence_level < 1.0:
        raise UsageError(f"{name}={confidence_level!r} must lie strictly between 0 and 1")
    return float(confidence_level)

