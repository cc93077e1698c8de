"""The run record: one execution of one scenario by one agent.

>>> from fluke.record import Run, Identity, Outcome, UserMessage, ToolCall
>>> run = Run(scenario="refund/7", trial=0, identity=Identity(model="m"),
...           events=[UserMessage(text="refund order W1"),
...                   ToolCall(tool="refund", args={"order": "W1"}, ok=True)],
...           outcome=Outcome(passed=True, reward=1.0, label="complete"))
>>> run.sampling_unit, run.outcome.label, len(run.hash)
('refund/7', 'complete', 64)
>>> run.hash == Run.model_validate_json(run.model_dump_json()).hash
True
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._canonical import digest
from ._events import Event, ToolCall
from ._identity import Identity

#: The version of the stored run format this fluke writes. Readers refuse newer ones.
FORMAT_VERSION = 1

Label = Literal["complete", "should_ask", "fail", "error"]
ConditionValue = str | int | float | bool | None


class Outcome(BaseModel):
    """How the run ended. ``died_at`` is the event index where a failed run failed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    passed: bool | None = None
    reward: float | None = None
    label: Label | None = None
    died_at: int | None = Field(default=None, ge=0)


class Source(BaseModel):
    """Where the run came from, so every number can be traced to its input."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    adapter: str
    file: str | None = None
    position: int | str | None = None


class Run(BaseModel):
    """One execution of one scenario. Immutable and content-addressed (see :attr:`hash`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format_version: int = FORMAT_VERSION
    scenario: str = Field(min_length=1)
    trial: int = 0
    unit: str | None = None
    condition: dict[str, ConditionValue] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    identity: Identity = Field(default_factory=Identity)
    events: list[Event] = Field(default_factory=list)
    outcome: Outcome = Field(default_factory=Outcome)
    cost: dict[str, float] = Field(default_factory=dict)
    latency: float | None = None
    seed: int | str | None = None
    tape: str | None = None
    error: str | None = None
    source: Source | None = None

    @field_validator("format_version")
    @classmethod
    def _not_newer(cls, value: int) -> int:
        if value > FORMAT_VERSION:
            raise ValueError(
                f"format_version {value} is newer than this fluke reads ({FORMAT_VERSION}); "
                "upgrade with: pip install -U fluke")
        return value

    @cached_property
    def hash(self) -> str:
        """Content hash over everything but ``source``: the same run from two files is one run."""
        body = self.model_dump(mode="json", exclude={"source"})
        return digest(body)

    @property
    def version(self) -> str:
        """The version hash of the identity."""
        return self.identity.version

    @property
    def sampling_unit(self) -> str:
        """The independent sampling unit; defaults to the scenario."""
        return self.unit if self.unit is not None else self.scenario

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool-call events, in order."""
        return [e for e in self.events if isinstance(e, ToolCall)]

    def condition_key(self) -> str:
        """A stable string for the condition dict ('' when there is none)."""
        if not self.condition:
            return ""
        return ",".join(f"{k}={self.condition[k]}" for k in sorted(self.condition))


def run_schema() -> dict[str, Any]:
    """The JSON Schema of the run record (what ``fluke schema`` prints).

    >>> run_schema()["title"]
    'Run'
    """
    return Run.model_json_schema()
