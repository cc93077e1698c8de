"""Declared interventions: what to change at a step of a recorded run.

* ``respond`` / ``raise``: the tool call at the step answers with this response, or raises this
  exception text, whatever the environment would have said (the state moves as the simulator
  says it would for that request);
* ``set``: a policy parameter of the agent (a key of its input, such as ``retry``) takes a value;
* ``forget`` / ``remember``: a memory item (a key of the declared state's ``memory``) is removed,
  or set to a value, in the state restored before the step.

>>> i = parse_intervention("set:retry=3")
>>> i.action, i.name, i.value, i.describe()
('set', 'retry', 3, 'set the policy parameter retry to 3')
>>> edited_input({"retry": 1}, [i]), len(interventions_digest([i]))
({'retry': 3}, 64)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from ..errors import UsageError
from ..record import digest

__all__ = ["ACTIONS", "Intervention", "edited_input", "edited_state", "interventions_digest", "parse_intervention",
           "replacement"]

ACTIONS = ("respond", "raise", "set", "forget", "remember")


@dataclass(frozen=True)
class Intervention:
    """One change: ``action`` (one of :data:`ACTIONS`), the ``name`` it acts on (a policy
    parameter, a memory key), and the ``value`` (a response, an exception's text, a value)."""

    action: str
    name: str | None = None
    value: Any = None

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise UsageError(f"intervention {self.action!r} is not one of {', '.join(ACTIONS)}", argument="action")
        if self.action in ("set", "forget", "remember") and not self.name:
            raise UsageError(f"intervention {self.action} needs a name", argument="name")
        if self.action == "raise" and not isinstance(self.value, str):
            raise UsageError("intervention raise needs the exception's text", argument="value")

    def describe(self) -> str:
        """One line saying what the intervention does."""
        shown = json.dumps(self.value, sort_keys=True)
        return {"respond": f"replace the response by {shown}",
                "raise": f"replace the response by the exception {self.value!r}",
                "set": f"set the policy parameter {self.name} to {shown}",
                "forget": f"remove the memory item {self.name!r}",
                "remember": f"set the memory item {self.name!r} to {shown}"}[self.action]

    def to_dict(self) -> dict[str, Any]:
        """The intervention as JSON-ready data."""
        return asdict(self)


def parse_intervention(text: str) -> Intervention:
    """``respond=JSON``, ``raise=TEXT``, ``set:NAME=JSON``, ``forget=KEY`` or ``remember:KEY=JSON``.

    >>> parse_intervention('respond={"account": "c1"}').value
    {'account': 'c1'}
    >>> parse_intervention("forget=env-0001").name
    'env-0001'
    """
    head, sep, rest = text.partition("=")
    action, _, name = head.partition(":")
    if not sep or action not in ACTIONS:
        raise UsageError(f"intervention {text!r} is not ACTION=VALUE",
                         hint="respond=JSON, raise=TEXT, set:NAME=JSON, forget=KEY, remember:KEY=JSON")
    if action == "raise":
        return Intervention("raise", value=rest)
    if action == "forget":
        return Intervention("forget", name=rest)
    try:
        value = json.loads(rest)
    except ValueError:
        value = rest   # a bare word is a string
    return Intervention(action, name=name or None, value=value)


def interventions_digest(interventions: Sequence[Intervention]) -> str:
    """The digest naming a list of interventions (what the intervened runs' identity holds)."""
    return digest([i.to_dict() for i in interventions])


def edited_input(input: Any, interventions: Sequence[Intervention]) -> Any:
    """The agent's input with every ``set`` applied (the input must be a dict to take one)."""
    sets = [i for i in interventions if i.action == "set"]
    if not sets:
        return input
    if not isinstance(input, dict):
        raise UsageError(f"intervention set:{sets[0].name}: the agent's input is a {type(input).__name__}, "
                         "not a dict of policy parameters")
    return {**input, **{i.name: i.value for i in sets}}


def edited_state(state: Any, interventions: Sequence[Intervention]) -> Any:
    """The declared state with every ``forget`` / ``remember`` applied to its ``memory``."""
    edits = [i for i in interventions if i.action in ("forget", "remember")]
    if not edits:
        return state
    if not isinstance(state, dict) or not isinstance(state.get("memory"), dict):
        raise UsageError(f"intervention {edits[0].action}:{edits[0].name}: the declared state has no `memory` "
                         "dict to edit")
    memory = dict(state["memory"])
    for edit in edits:
        if edit.action == "forget":
            memory.pop(edit.name, None)
        else:
            memory[edit.name] = edit.value
    return {**state, "memory": memory}


def replacement(interventions: Sequence[Intervention]) -> Intervention | None:
    """The ``respond`` or ``raise`` among ``interventions`` (at most one), or None."""
    found = [i for i in interventions if i.action in ("respond", "raise")]
    if len(found) > 1:
        raise UsageError("give at most one respond or raise intervention per step")
    return found[0] if found else None
