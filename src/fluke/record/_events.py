"""The events of a trajectory: a tagged union on the literal ``kind``.

>>> from fluke.record import ToolCall
>>> call = ToolCall(tool="get_order", args={"order_id": "W123"}, call_id="c1", ok=True, result="{}")
>>> call.kind, call.requestor
('tool', 'agent')
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._storable import check_json


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class UserMessage(_Event):
    """Something the user (or the simulated user) said to the agent."""

    kind: Literal["user"] = "user"
    text: str
    t: float | None = None


class AgentMessage(_Event):
    """Text the agent said; ``agent`` names which agent in a multi-agent run."""

    kind: Literal["agent"] = "agent"
    text: str
    agent: str | None = None
    t: float | None = None


class ToolCall(_Event):
    """One tool call and what came back.

    ``ok`` is True for a result, False for an error, and None when no result ever came
    back (the call was issued and the run stopped). ``requestor`` is ``user`` when the
    simulated user, not the agent, made the call (τ²-bench telecom).
    """

    kind: Literal["tool"] = "tool"
    tool: str
    args: Any = Field(default_factory=dict)
    call_id: str | None = None
    ok: bool | None = None
    result: Any = None
    error: str | None = None
    t_start: float | None = None
    t_end: float | None = None
    agent: str | None = None
    requestor: Literal["agent", "user"] = "agent"

    @field_validator("args", "result")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        return check_json(value)


Event = Annotated[Union[UserMessage, AgentMessage, ToolCall], Field(discriminator="kind")]
