"""CrewAI event-bus logs, read without ``crewai``: the events a listener wrote with
``event.to_json(...)``, one per line (or a JSON list of them).

Reading rules:

* Runs: one per crew kickoff (``crew_kickoff_started`` opens one; events before any
  kickoff form a run of their own). Inside a run, events are ordered by
  ``emission_sequence`` (listeners run in a thread pool, so file order is not event order).
* Tool calls: each ``tool_usage_started`` is one call (a retry is a new call: CrewAI runs
  the tool again). It ends with the ``tool_usage_finished`` or ``tool_usage_error`` whose
  ``started_event_id`` is its ``event_id`` (no id: the oldest open call of that tool and
  agent). ``finished`` → ``ok=True`` with ``output`` as the result, unless ``failure`` is
  set (a tool that returned a failure) → ``ok=False`` with ``failure.message``. ``error`` →
  ``ok=False`` with the error text, and no result: a raised tool has no finished event. A
  start that never ends stays ``ok=None``. ``tool_selection_error`` /
  ``tool_validate_input_error`` / ``tool_execution_error`` without a start are failed calls.
* Arguments: the ending event's ``tool_args`` when it is a dict, else the start's (JSON
  text parsed; the text path writes a string).
* Times: ``timestamp`` of the start and of the end (UTC; ``Z`` and ``+00:00`` both read).
  ``started_at``/``finished_at`` are naive local times and are not used: mixing them with
  UTC stamps would shift calls by the writer's UTC offset.
* ``agent`` = ``agent_role``. The task's description is the user message and the agent's
  ``agent_execution_completed`` output the answer. ``*_failed`` / ``agent_execution_error``
  events set :attr:`Run.error`. Identity: model = ``llm_call_*`` events' ``model`` when one;
  harness = ``{"crew": crew_name, "agents": [roles]}``. Outcome unknown.

>>> def ev(seq, kind, **fields):
...     return {"type": kind, "event_id": f"e{seq}", "emission_sequence": seq, "agent_role": "R",
...             "timestamp": f"2026-01-01T00:00:0{seq}Z", **fields}
>>> log = [ev(1, "tool_usage_started", tool_name="lookup", tool_args='{"k": 1}'),
...        ev(3, "tool_usage_error", tool_name="lookup", started_event_id="e1", error="KeyError('k')"),
...        ev(2, "tool_usage_started", tool_name="add", tool_args="{}")]
>>> [run] = read(iter([(None, log)]), file="crew.jsonl", identity={})
>>> [(c.tool, c.args, c.ok, c.error) for c in run.tool_calls]
[('lookup', {'k': 1}, False, "KeyError('k')"), ('add', {}, None, None)]
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from ..errors import InputError
from ..record import AgentMessage, Run, Source, ToolCall, UserMessage
from ._common import building, epoch
from ._runparts import RunBase, parse_arguments
from ._reader import Reader

_STANDALONE_ERRORS = {"tool_selection_error", "tool_validate_input_error", "tool_execution_error"}
_FAILED = {"crew_kickoff_failed", "task_failed", "agent_execution_error", "llm_call_failed"}


def _is_event(d: Any) -> bool:
    return isinstance(d, dict) and isinstance(d.get("type"), str) and "event_id" in d and (
        "emission_sequence" in d or "source_fingerprint" in d)


def sniff(doc: Any) -> bool:
    """A CrewAI event (or a list of them): ``type``, ``event_id`` and ``emission_sequence``."""
    if isinstance(doc, list):
        return bool(doc) and _is_event(doc[0])
    return _is_event(doc)


def read(docs: Iterable[tuple[str | None, Any]], *, file: str, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per crew kickoff in the log."""
    base = RunBase.from_options(identity, file=file)
    runs: list[list[tuple[str, dict[str, Any]]]] = [[]]
    for record, doc in docs:
        items = doc if isinstance(doc, list) else [doc]
        for i, event in enumerate(items):
            where = record if not isinstance(doc, list) else (f"{record}: event {i}" if record else f"event {i}")
            where = where or "event 0"
            if not _is_event(event):
                raise InputError(file, where, "type", "is not a CrewAI event",
                                 hint="expected an event.to_json() object with type and event_id")
            if event["type"] == "crew_kickoff_started" and runs[-1]:
                runs.append([])
            runs[-1].append((where, event))
    position = 0
    for members in runs:
        if members:
            with building(file, members[0][0]):   # a value the run model refuses names its field
                run = _run(members, base, position, file)
            yield run
            position += 1


def _seq(event: dict[str, Any]) -> float:
    s = event.get("emission_sequence")
    return float(s) if isinstance(s, (int, float)) and not isinstance(s, bool) else float("inf")


def _run(members: list[tuple[str, dict[str, Any]]], base: RunBase, position: int, file: str) -> Run:
    members = sorted(members, key=lambda we: _seq(we[1]))   # stable: file order breaks ties
    items: list[Any] = []
    open_calls: dict[str, dict[str, Any]] = {}
    roles: list[str] = []
    models: set[str] = set()
    crew = None
    error = None
    answer = None
    for where, e in members:
        kind = e["type"]
        role = e.get("agent_role") if isinstance(e.get("agent_role"), str) else None
        if role and role not in roles:
            roles.append(role)
        if kind == "crew_kickoff_started" and isinstance(e.get("crew_name"), str):
            crew = e["crew_name"]
        elif kind == "tool_usage_started":
            call = {"tool": str(e.get("tool_name") or "<unnamed>"), "args": parse_arguments(e.get("tool_args")),
                    "ok": None, "t_start": epoch(e.get("timestamp")), "agent": role}
            items.append(call)
            open_calls[str(e.get("event_id"))] = call
        elif kind in ("tool_usage_finished", "tool_usage_error") or kind in _STANDALONE_ERRORS:
            call = _opening(e, open_calls, role)
            if call is None:
                if kind not in _STANDALONE_ERRORS and kind != "tool_usage_error":
                    raise InputError(file, where, "started_event_id", "ends a tool call that never started",
                                     hint="the log may be cut at its start")
                call = {"tool": str(e.get("tool_name") or "<unnamed>"), "args": parse_arguments(e.get("tool_args")),
                        "t_start": epoch(e.get("timestamp")), "agent": role}
                items.append(call)
            if isinstance(e.get("tool_args"), dict):
                call["args"] = e["tool_args"]
            call["t_end"] = epoch(e.get("timestamp"))
            if kind == "tool_usage_finished":
                failure = e.get("failure")
                call["result"] = e.get("output")
                call["ok"] = not failure
                if failure:
                    call["error"] = (
                        str(failure.get("message") or failure) if isinstance(failure, dict) else str(failure)
                    )
            else:
                call["ok"] = False
                call["error"] = str(e.get("error") or kind)
        elif kind == "task_started" or kind == "task_completed":
            out = e.get("output") if isinstance(e.get("output"), dict) else {}
            text = out.get("description") or e.get("task_description")
            if kind == "task_completed" and isinstance(text, str) and text and \
                    not any(isinstance(x, UserMessage) for x in items):
                items.insert(0, UserMessage(text=text, t=None))
        elif kind == "agent_execution_completed" and isinstance(e.get("output"), str):
            answer = AgentMessage(text=e["output"], agent=role, t=epoch(e.get("timestamp")))
            items.append(answer)
        elif kind.startswith("llm_call") and isinstance(e.get("model"), str):
            models.add(e["model"])
        if kind in _FAILED and error is None:
            error = str(e.get("error") or kind)
    events = [ToolCall(**x) if isinstance(x, dict) else x for x in items]
    found = {"model": next(iter(models)) if len(models) == 1 else ({"models": sorted(models)} if models else None),
             "harness": {"crew": crew, "agents": roles} if crew or roles else None}
    return Run(scenario=base.scenario_or(None, f"run {position}"), trial=(base.trial or 0) + position, unit=base.unit,
               identity=base.identity_with(found), events=events, error=error,
               source=Source(adapter="crewai", file=file, position=position))


def _opening(e: dict[str, Any], open_calls: dict[str, dict[str, Any]], role: str | None) -> dict[str, Any] | None:
    started = e.get("started_event_id")
    if isinstance(started, str) and started in open_calls:
        return open_calls.pop(started)
    for key, call in open_calls.items():
        if call["tool"] == e.get("tool_name") and call["agent"] == role:
            return open_calls.pop(key)
    return None


READER = Reader(
    "crewai", "CrewAI event-bus logs (tool_usage_* events)",
    sniff=sniff, read=read, takes="documents",
)
