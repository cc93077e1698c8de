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

from pydantic import ConfigDict, field_validator

from ._cached import CachedModel
from ._canonical import digest
from ._storable import IDENTITY_FIELDS, check_identity_text, check_json, check_name

Component = str | dict[str, Any] | None


#: Version hashes of all-string identities, by their component values.
_VERSIONS: dict[tuple, str] = {}


class Identity(CachedModel):
    """Who ran, with what, where, judged by whom. Every field is a string or a dict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: Component = None
    harness: Component = None
    tools: Component = None
    world: Component = None
    grader: Component = None
    policy: Component = None
    date: str | None = None

    @field_validator(*IDENTITY_FIELDS)
    @classmethod
    def _storable(cls, value: Component) -> Component:
        return check_json(value) if isinstance(value, dict) else check_identity_text(value)

    @field_validator("date")
    @classmethod
    def _date_storable(cls, value: str | None) -> str | None:
        return check_name(value)

    @cached_property
    def version(self) -> str:
        """SHA-256 of the six identity components (never the date): names the version.

        Remembered by component values when they are all strings (the usual case), since a
        file read line by line builds a new identity for every run.
        """
        values = self.__dict__
        key = (values["model"], values["harness"], values["tools"], values["world"], values["grader"],
               values["policy"])
        try:
            version = _VERSIONS.get(key)
        except TypeError:   # a dict component: not hashable, not remembered
            return digest(dict(zip(IDENTITY_FIELDS, key, strict=True)))
        if version is None:
            if len(_VERSIONS) >= 4096:
                _VERSIONS.clear()
            version = _VERSIONS[key] = digest(dict(zip(IDENTITY_FIELDS, key, strict=True)))
        return version

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
