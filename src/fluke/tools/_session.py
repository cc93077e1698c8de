"""Tools through fluke: declare them once, and every call an agent makes is recorded.

A :class:`Tools` declaration names real functions, a declared simulator, or both. A
**simulator** is a class (or any callable) taking a :class:`fluke.design.Tape` — the run's
random streams — and returning an object with ``apply(request, state) -> (response, state)``;
to answer with an exception it returns ``(Failure("TimeoutError: ..."), state)``. ``state`` is
the declared initial state (a JSON value, or a function of the agent's input).

An agent takes ``tools`` as a keyword and calls ``tools.call(name, **args)``; an exception
reaches it as :class:`ToolFailure`. The session records every call
(:class:`fluke.tools.ToolRecord`); where it answers from (live tools, a recording, a
continuation) is its ``serve`` function's business, so replay and intervention reuse it.

>>> box = Tools({"add": lambda a, b: a + b}, versions={"add": "1.0"})
>>> session = box.session({"x": 1}, seed=7)
>>> session.call("add", a=2, b=3), [(r.tool, r.version, r.response, r.served) for r in session.records]
(5, [('add', '1.0', 5, 'function')])
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..design import Tape
from ..errors import InputError, UsageError
from ._record import ToolRecord, state_digest

__all__ = ["Divergence", "Failure", "Request", "Served", "ToolFailure", "ToolSession", "Tools"]


@dataclass(frozen=True)
class Request:
    """What the agent asked of a tool: its name and its arguments."""

    tool: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class Failure:
    """A simulator's way to answer with an exception: ``error`` is its text."""

    error: str


@dataclass(frozen=True)
class Served:
    """How one call was answered: a response or an error, the state after, who served it, and
    the tool's version."""

    response: Any = None
    error: str | None = None
    after: Any = None
    served: str = "function"
    version: str | None = None


class ToolFailure(Exception):
    """A tool call that raised (live, simulated or recorded); ``str()`` is the recorded text."""


class Divergence(Exception):
    """The agent made a request the recording cannot answer: the step, what was recorded,
    what was asked, and why reuse was refused. The session keeps it (``session.divergence``)
    even when the agent swallows the exception, so the run is marked as stopped there."""

    def __init__(self, step: int, reason: str, *, expected: Any = None, got: Any = None) -> None:
        self.step, self.reason, self.expected, self.got = step, reason, expected, got
        super().__init__(f"step {step}: {reason}")

    def to_dict(self) -> dict[str, Any]:
        """The divergence as JSON-ready data."""
        return {"step": self.step, "reason": self.reason, "expected": self.expected, "got": self.got}


Serve = Callable[[int, Request, Any], Served]


class ToolSession:
    """The tools of one run: answers each call through ``serve`` and records it."""

    def __init__(self, serve: Serve, state: Any = None) -> None:
        self._serve = serve
        self.initial_state = state
        self.state = state
        self.records: list[ToolRecord] = []
        self.divergence: Divergence | None = None

    def call(self, tool: str, /, **args: Any) -> Any:
        """Call ``tool`` with ``args``: its response, or :class:`ToolFailure` when it raised."""
        if self.divergence is not None:   # stopped: nothing after the first divergence is answered
            raise self.divergence
        step, before = len(self.records), self.state
        began = time.perf_counter()
        try:
            served = self._serve(step, Request(tool, dict(args)), before)
        except Divergence as exc:
            self.divergence = exc
            raise
        record = ToolRecord(step=step, tool=tool, args=dict(args), response=served.response, error=served.error,
                            version=served.version, seconds=time.perf_counter() - began,
                            state_before=state_digest(before), state_after=state_digest(served.after),
                            after=served.after, served=served.served)
        self.records.append(record)
        self.state = served.after
        if served.error is not None:
            raise ToolFailure(served.error)
        return served.response

    __call__ = call

    def events(self) -> list[Any]:
        """The calls so far as run events (:class:`fluke.record.ToolCall`)."""
        return [r.event() for r in self.records]

    def log(self) -> dict[str, Any]:
        """What the ledger keeps of this session: the initial state, every call, the divergence."""
        return {"state": self.initial_state, "calls": [r.to_dict() for r in self.records],
                "diverged": None if self.divergence is None else self.divergence.to_dict()}


class Tools:
    """The tools an agent may call: ``functions`` by name, and/or a declared ``simulator``.

    ``versions`` names each tool's version (default: the function's ``__version__``, the
    simulator's ``version``). ``state`` is the declared initial state, or a function of the
    agent's input returning it. A function raising is recorded as the exception's text.
    """

    def __init__(self, functions: Mapping[str, Callable[..., Any]] | None = None, *, simulator: Any = None,
                 state: Any = None, versions: Mapping[str, str] | None = None) -> None:
        self.functions = dict(functions or {})
        for name, fn in self.functions.items():
            if not callable(fn):
                raise UsageError(f"tools: {name} is a {type(fn).__name__}, not callable", argument=name)
        if simulator is not None and not callable(simulator):
            raise UsageError("simulator is not callable", argument="simulator",
                             hint="a class taking a Tape whose objects have apply(request, state) -> (response, state)")
        self.simulator = simulator
        self.state = state
        self.versions = dict(versions or {})

    def initial_state(self, input: Any) -> Any:
        """The declared state before the first call of a run given ``input``."""
        return self.state(input) if callable(self.state) else self.state

    def version_of(self, tool: str, simulator: Any = None) -> str | None:
        """The version of ``tool``: declared, else the function's or the simulator's own."""
        if tool in self.versions:
            return self.versions[tool]
        source = self.functions.get(tool, simulator)
        return getattr(source, "__version__", None) or getattr(source, "version", None)

    def sandbox(self, seed: Any) -> Any:
        """The simulator of one run, drawing from ``Tape([seed, "tools"])`` (None when none is declared)."""
        return None if self.simulator is None else self.simulator(Tape([seed, "tools"]))

    def live(self, seed: Any) -> Serve:
        """Answer from the real functions, else the simulator; refuse an undeclared tool."""
        sandbox = self.sandbox(seed)

        def serve(step: int, request: Request, state: Any) -> Served:
            version = self.version_of(request.tool, sandbox)
            fn = self.functions.get(request.tool)
            if fn is not None:
                try:
                    return Served(fn(**request.args), after=state, served="function", version=version)
                except Exception as exc:  # the tool's exception is the call's outcome, recorded
                    return Served(error=f"{type(exc).__name__}: {exc}", after=state, served="function",
                                  version=version)
            if sandbox is None:
                raise InputError(None, f"tool call {step}", "tool", f"{request.tool!r} is not a declared tool",
                                 hint="declared: " + ", ".join(sorted(self.functions)))
            return simulated(sandbox, request, state, version)

        return serve

    def session(self, input: Any = None, *, seed: Any = 0, serve: Serve | None = None,
                state: Any = ...) -> ToolSession:
        """A session for one run: live tools (or ``serve``) from the declared initial state."""
        start = self.initial_state(input) if state is ... else state
        return ToolSession(serve or self.live(seed), start)


def simulated(sandbox: Any, request: Request, state: Any, version: str | None) -> Served:
    """The simulator's answer: ``apply(request, state)``, a :class:`Failure` read as an exception."""
    response, after = sandbox.apply(request, state)
    if isinstance(response, Failure):
        return Served(error=response.error, after=after, served="simulator", version=version)
    return Served(response, after=after, served="simulator", version=version)
