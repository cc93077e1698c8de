"""One tool call as the tool layer records it, and the digests that decide whether a recorded
response may be reused.

A call's **request** is the tool's name and its arguments; its digest is the SHA-256 of their
canonical JSON. The **declared state** is whatever the environment says its answers depend on
(a sandbox's memory, a counter of attempts); the record keeps its digest before and after the
call, and the state after in full, so a later intervention can restore the state before any step.

>>> r = ToolRecord(step=0, tool="lookup", args={"case": "c1"}, response={"account": "c1"},
...                state_before=state_digest({"n": 0}), state_after=state_digest({"n": 1}), after={"n": 1})
>>> r.request == request_digest("lookup", {"case": "c1"}), ToolRecord.from_dict(r.to_dict()) == r
(True, True)
>>> r.event().tool, r.event().ok
('lookup', True)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..record import ToolCall, digest

__all__ = ["SERVED", "ToolRecord", "request_digest", "state_digest"]

#: Who answered a call: a real function, the declared simulator, the recording (a replay, or a
#: reuse whose request and state digests matched), the stated intervention, or a recorded
#: response forced onto a request or state it was not recorded for (``stale``: biased, opt-in).
SERVED = ("function", "simulator", "recorded", "intervention", "stale")


def request_digest(tool: str, args: Any) -> str:
    """The SHA-256 of the request's canonical JSON (tool name and arguments)."""
    return digest({"tool": tool, "args": args})


def state_digest(state: Any) -> str | None:
    """The SHA-256 of the declared state's canonical JSON; None when no state is declared.

    >>> state_digest(None), state_digest({"b": 1, "a": 2}) == state_digest({"a": 2, "b": 1})
    (None, True)
    """
    return None if state is None else digest(state)


@dataclass(frozen=True)
class ToolRecord:
    """One call: ``step`` (0-based, in call order), the request, the tool's ``version``, the
    ``response`` or the exception text ``error``, ``seconds`` elapsed, the state digests before
    and after, the state ``after`` in full, and who ``served`` it (one of :data:`SERVED`)."""

    step: int
    tool: str
    args: Any = field(default_factory=dict)
    response: Any = None
    error: str | None = None
    version: str | None = None
    seconds: float = 0.0
    state_before: str | None = None
    state_after: str | None = None
    after: Any = None
    served: str = "function"

    @property
    def request(self) -> str:
        """The request's digest (:func:`request_digest`)."""
        return request_digest(self.tool, self.args)

    @property
    def ok(self) -> bool:
        """True when the call returned a response, False when it raised."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data (what the ledger's ``tool_log`` documents hold)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> "ToolRecord":
        """The record back from :meth:`to_dict`."""
        return cls(**body)

    def event(self) -> ToolCall:
        """The call as a run event (:class:`fluke.record.ToolCall`), for every verb to read."""
        return ToolCall(tool=self.tool, args=self.args, call_id=f"step-{self.step}", ok=self.ok,
                        result=self.response if self.ok else None, error=self.error)
