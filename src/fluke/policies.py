"""Options that travel through several layers (a verb, the statistics under it, the JSON it
writes), as types: checked once where they come in, then passed on as themselves.

:class:`UnknownPolicy` is what a run whose outcome is unknown (``passed`` null: a crashed
harness, a parse error) counts as: a trial that did not pass (``fail``, the default, as the
harnesses count them) or nothing (``exclude``: the run is left out and the trials shrink).
``"failure"`` is read as another spelling of ``fail``. Every layer takes the type (or a string
it reads with :meth:`UnknownPolicy.of`), and :meth:`~UnknownPolicy.apply` is the one place a
count changes under it.

>>> policy = UnknownPolicy.of("failure")
>>> policy is UnknownPolicy.FAIL, policy == "fail", f"--unknown {policy}"
(True, True, '--unknown fail')
>>> UnknownPolicy.EXCLUDE.apply(5, 3, 1), UnknownPolicy.FAIL.apply(5, 3, 1)
((4, 3), (5, 3))
>>> UnknownPolicy.EXCLUDE.describe(2), UnknownPolicy.of("failure").describe(1)
('2 unknown outcomes left out', '1 unknown outcome counted as a failure')
>>> UNKNOWN_POLICIES
('fail', 'exclude')
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType
from typing import Mapping

from .errors import UsageError

__all__ = ["INCONCLUSIVE_POLICIES", "InconclusivePolicy", "UNKNOWN_POLICIES", "UnknownPolicy"]


class UnknownPolicy(StrEnum):
    """What a run whose outcome is unknown counts as: a failure (``FAIL``) or nothing (``EXCLUDE``).

    A string, so it prints, compares, serialises and shows in a repr as its name (``"fail"``,
    ``"exclude"``): a result holding one reads as it did when the policy was a bare string.
    """

    FAIL = "fail"
    EXCLUDE = "exclude"

    def __repr__(self) -> str:
        return repr(self.value)

    @classmethod
    def of(cls, value: "UnknownPolicy | str", *, argument: str = "unknown") -> "UnknownPolicy":
        """The policy ``value`` names, checked; ``argument`` is the option's name in the error.

        >>> UnknownPolicy.of("drop")
        Traceback (most recent call last):
        ...
        fluke.errors.UsageError: unknown='drop' must be 'fail' (count it as a failure, the default) or 'exclude' \
(leave it out)
        """
        if isinstance(value, cls):
            return value
        if isinstance(value, str) and value in ALIASES:
            return cls(ALIASES[value])
        raise UsageError(f"{argument}={value!r} must be 'fail' (count it as a failure, the default) or 'exclude' "
                         "(leave it out)", argument=argument)

    @property
    def excludes(self) -> bool:
        """Is a run of unknown outcome left out (rather than counted as a failure)?"""
        return self is UnknownPolicy.EXCLUDE

    def keeps(self, passed: bool | None) -> bool:
        """Does a run whose outcome is ``passed`` (None: unknown) stay among the trials?"""
        return passed is not None or not self.excludes

    def apply(self, trials, passes, unknowns):
        """``(trials, passes)`` of a count row (whose trials include the unknowns) under this policy.

        Works on numbers and on numpy arrays alike: an excluded unknown leaves the trials; a
        counted one stays among them, as a run that did not pass.
        """
        return (trials - unknowns if self.excludes else trials), passes

    def describe(self, unknowns: int) -> str:
        """The phrase every output prints: how many outcomes were unknown and what was done with them."""
        if unknowns == 0:
            return "no unknown outcomes"
        noun = "outcome" if unknowns == 1 else "outcomes"
        if self.excludes:
            return f"{unknowns} unknown {noun} left out"
        return f"{unknowns} unknown {noun} counted as {'a failure' if unknowns == 1 else 'failures'}"


#: The policies, as every verb's ``unknown=`` and ``--unknown`` spell them: the one list.
UNKNOWN_POLICIES: tuple[str, ...] = tuple(p.value for p in UnknownPolicy)

#: Every spelling :meth:`UnknownPolicy.of` reads, with the policy it names ("failure": an older spelling).
ALIASES: Mapping[str, str] = MappingProxyType({**{p: p for p in UNKNOWN_POLICIES}, "failure": "fail"})


class InconclusivePolicy(StrEnum):
    """What a claim too small to tell does, as a rule's or a test's ``on_inconclusive`` declares it:
    it passes with a warning (``WARN``, the default), fails (``FAIL``), or passes silently (``PASS``).

    >>> [(p, p.lets_pass, p.warns) for p in InconclusivePolicy]
    [('warn', True, True), ('fail', False, False), ('pass', True, False)]
    >>> InconclusivePolicy.of("ignore")
    Traceback (most recent call last):
    ...
    fluke.errors.UsageError: on_inconclusive='ignore' is not one of warn, fail, pass
    """

    WARN = "warn"
    FAIL = "fail"
    PASS = "pass"

    def __repr__(self) -> str:
        return repr(self.value)

    @classmethod
    def of(cls, value: "InconclusivePolicy | str", *, argument: str = "on_inconclusive") -> "InconclusivePolicy":
        """The policy ``value`` names, checked; ``argument`` is the option's name in the error."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str) and value in INCONCLUSIVE_POLICIES:
            return cls(value)
        raise UsageError(f"{argument}={value!r} is not one of {', '.join(INCONCLUSIVE_POLICIES)}", argument=argument)

    @property
    def lets_pass(self) -> bool:
        """Does a claim too small to tell let the test or the gate pass?"""
        return self is not InconclusivePolicy.FAIL

    @property
    def warns(self) -> bool:
        """Is a claim too small to tell said as a warning when it passes?"""
        return self is InconclusivePolicy.WARN


#: The inconclusive policies, as ``on_inconclusive`` and ``--fluke-on-inconclusive`` spell them.
INCONCLUSIVE_POLICIES: tuple[str, ...] = tuple(p.value for p in InconclusivePolicy)
