"""Run an agent with a tool session, so the runner can store what its tools did.

:class:`ToolAgent` is what the runner calls in place of an agent that takes ``tools``: it
opens a session for the run, passes it in, and returns the agent's value together with the
session's log (:class:`Logged`), which the runner stores beside the run in the ledger (a
``tool_log`` document naming the run's hash). It is picklable when the agent and the
declaration are, so it runs on every executor, Ray included.

>>> from fluke.runner import Trajectory
>>> def agent(text, *, tools):
...     return Trajectory(tools.events(), output=tools.call("shout", text=text))
>>> logged = ToolAgent(agent, Tools({"shout": lambda text: text.upper()}))("hi", trial=0, rng=np.random.default_rng(3))
>>> logged.value.output, [c["response"] for c in logged.log["calls"]], logged.log["seed"]
('HI', ['HI'], 3)
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..record import digest
from ._session import ToolSession, Tools

__all__ = ["TOOL_LOG", "Logged", "keep_log", "kept_log",
           "ToolAgent", "accepts_tools", "takes_any_keyword", "call_with_session", "json_input"]

#: The ledger's document kind for a run's tool log (the runner writes it beside the run).
TOOL_LOG = "tool_log"


@dataclass(frozen=True)
class Logged:
    """An agent's return value and the log of its tool session."""

    value: Any
    log: dict[str, Any]


def keep_log(exc: BaseException, log: dict[str, Any]) -> None:
    """Attach a tool session's ``log`` to the exception an agent raised, so the runner stores the
    calls made before it beside the errored run (:func:`kept_log` reads it back).

    >>> exc = ValueError("boom"); keep_log(exc, {"calls": []}); kept_log(exc), kept_log(KeyError())
    ({'calls': []}, None)
    """
    try:
        exc._fluke_tool_log = log
    except AttributeError:   # an exception type without a __dict__: the log is lost, the error kept
        pass


def kept_log(exc: BaseException) -> dict[str, Any] | None:
    """The tool log :func:`keep_log` attached to ``exc``, or None."""
    return getattr(exc, "_fluke_tool_log", None)


def _params(agent: Callable[..., Any]) -> set[str]:
    try:
        params = inspect.signature(agent).parameters
    except (TypeError, ValueError):
        return set()
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return {"trial", "rng", "tools"}
    return {name for name in ("trial", "rng", "tools") if name in params}


def accepts_tools(agent: Callable[..., Any]) -> bool:
    """Does ``agent`` name a ``tools`` keyword? (One taking ``**kwargs`` is handed tools when
    they are declared, but is not refused for lacking them.)

    >>> accepts_tools(lambda x, *, tools: x), accepts_tools(lambda x: x), accepts_tools(lambda x, **kw: x)
    (True, False, False)
    """
    try:
        return "tools" in inspect.signature(agent).parameters
    except (TypeError, ValueError):
        return False


def takes_any_keyword(agent: Callable[..., Any]) -> bool:
    """Does ``agent`` take ``**kwargs``?

    >>> takes_any_keyword(lambda x, **kw: x), takes_any_keyword(lambda x, *, tools: x)
    (True, False)
    """
    try:
        return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(agent).parameters.values())
    except (TypeError, ValueError):
        return False


def seed_of(rng: np.random.Generator) -> int:
    """The seed the runner built ``rng`` from (its seed sequence's entropy)."""
    return int(rng.bit_generator.seed_seq.entropy)


def json_input(value: Any) -> Any:
    """``value`` when it is a JSON value (what a log can keep for a replay), else None."""
    try:
        digest(value)
    except TypeError:
        return None
    return value


def call_with_session(agent: Callable[..., Any], input: Any, session: ToolSession, *, trial: int,
                      rng: np.random.Generator) -> Any:
    """Call ``agent`` with the keywords it accepts, ``tools`` being the session."""
    accepted = _params(agent)
    kwargs = {"trial": trial, "rng": rng, "tools": session}
    return agent(input, **{k: v for k, v in kwargs.items() if k in accepted})


class ToolAgent:
    """An agent run with live tools: the runner's agent when a suite declares ``tools``."""

    def __init__(self, agent: Callable[..., Any], tools: Tools) -> None:
        self.agent, self.tools = agent, tools

    def __call__(self, input: Any, *, trial: int, rng: np.random.Generator) -> Logged:
        seed = seed_of(rng)
        session = self.tools.session(input, seed=seed)
        try:
            value = call_with_session(self.agent, input, session, trial=trial, rng=rng)
        except Exception as exc:   # the run is recorded as errored; the calls it made are kept
            keep_log(exc, {"input": json_input(input), "seed": seed, **session.log()})
            raise
        return Logged(value, {"input": json_input(input), "seed": seed, **session.log()})
