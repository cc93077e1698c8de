"""θ(model, harness, tools, world, grader, policy) plus the date, and its version hash.

>>> from fluke.record import Identity
>>> a = Identity(model="gpt-4o", world="tau-bench/airline", date="2024-06-01")
>>> b = Identity(model="gpt-4o", world="tau-bench/airline", date="2025-01-01")
>>> a.version == b.version          # the date is not part of the version
True
>>> a.version == Identity(model="gpt-4.1", world="tau-bench/airline").version
False
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict

from ._canonical import digest

IDENTITY_FIELDS = ("model", "harness", "tools", "world", "grader", "policy")
Component = str | dict[str, Any] | None


class Identity(BaseModel):
    """Who ran, with what, where, judged by whom. Every field is a string or a dict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: Component = None
    harness: Component = None
    tools: Component = None
    world: Component = None
    grader: Component = None
    policy: Component = None
    date: str | None = None

    @cached_property
    def version(self) -> str:
        """SHA-256 of the six identity components (never the date): names the version."""
        return digest({name: getattr(self, name) for name in IDENTITY_FIELDS})

    def label(self) -> str:
        """A short human label: the model, else the harness, else the version prefix."""
        for name in ("model", "harness", "policy"):
            value = getattr(self, name)
            if isinstance(value, str):
                return value
        return self.version[:12]

    def filled(self, values: dict[str, Any]) -> "Identity":
        """A copy with the *missing* fields set from ``values`` (present ones win)."""
        current = self.model_dump()
        for key, value in values.items():
            if current.get(key) is None:
                current[key] = value
        return Identity(**current)
