"""Chat message lists to events: the shared core of every chat-shaped format.

Calls are appended when issued, and each result is matched to its call by id (never by
position), so a call whose result never came back stays in the trajectory with ``ok=None``.

>>> events = chat_events([
...     {"role": "user", "content": "cancel order 88213"},
...     {"role": "assistant", "content": None, "tool_calls": [
...         {"id": "c1", "type": "function",
...          "function": {"name": "cancel", "arguments": '{"order": "88213"}'}}]},
...     {"role": "tool", "tool_call_id": "c1", "content": "done"}])
>>> [e["kind"] for e in events], events[1]["ok"], events[1]["args"]
(['user', 'tool'], True, {'order': '88213'})
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..errors import InputError
from ._common import epoch, parse_args


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _openai_call(call: dict) -> tuple[str | None, str, Any]:
    function = call.get("function") or {}
    return call.get("id"), function.get("name") or call.get("name") or "", parse_args(
        function.get("arguments", call.get("arguments")))


def chat_events(messages: Iterable[Any], *, file: str | None = None, record: str | None = None,
                is_error: Callable[[dict, Any], bool] | None = None,
                user_roles: tuple[str, ...] = ("user",),
                agent_roles: tuple[str, ...] = ("assistant",)) -> list[dict[str, Any]]:
    """Convert OpenAI-style chat messages into event dicts (validated later as a Run).

    ``is_error(message, content)`` decides whether a tool result is an error; OpenAI's own
    format has no flag, so by default every returned result counts as ``ok=True``.
    System messages are not events (they belong to the identity's policy).
    """
    events: list[dict[str, Any]] = []
    pending: dict[str, int] = {}
    for position, message in enumerate(messages):
        if not isinstance(message, dict):
            raise InputError(file, record, f"messages[{position}]", f"expected an object, got {type(message).__name__}")
        role = message.get("role")
        t = epoch(message.get("timestamp"))
        if role in user_roles or role in agent_roles:
            text = _text(message.get("content"))
            if role in user_roles and text:
                events.append({"kind": "user", "text": text, "t": t})
            elif text:
                events.append({"kind": "agent", "text": text, "t": t})
            requestor = "user" if role in user_roles else "agent"
            for call in message.get("tool_calls") or []:
                call_id, name, args = _openai_call(call)
                if not name:
                    raise InputError(file, record, f"messages[{position}].tool_calls.function.name", "is missing")
                if call_id is not None:
                    pending[call_id] = len(events)
                events.append({"kind": "tool", "tool": name, "args": args, "call_id": call_id, "ok": None,
                               "t_start": t, "requestor": call.get("requestor", requestor)
                               if call.get("requestor") in ("agent", "user") else requestor})
        elif role == "tool":
            call_id = message.get("tool_call_id", message.get("id"))
            index = pending.pop(call_id, None)
            if index is None:
                raise InputError(file, record, f"messages[{position}].tool_call_id",
                                 f"result for call id {call_id!r} matches no earlier tool call")
            content = message.get("content")
            failed = bool(is_error(message, content)) if is_error else False
            event = events[index]
            event["ok"] = not failed
            event["result"] = content
            event["t_end"] = t
            if failed:
                event["error"] = _text(content)[:500]
    return events
