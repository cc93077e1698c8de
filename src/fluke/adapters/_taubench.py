"""τ-bench (v1) results: a JSON list of ``{task_id, trial, reward, info, traj}``.

``traj`` is an OpenAI chat message list. τ-bench tools report failures by returning a string
that starts with ``Error:``, so such a result is recorded as ``ok=False``. The domain comes
from the policy heading of the system prompt ("# Airline Agent Policy"); the scenario is
``<domain>/<task_id>`` and the world ``tau-bench/<domain>``. The model is not in the file:
pass it with ``--identity model=...``.

>>> sniff([{"task_id": 0, "trial": 0, "reward": 1.0, "traj": []}]), sniff({"simulations": []})
(True, False)
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ..errors import InputError
from ..record import Run, digest
from ._openai import chat_events
from ._common import build_run, field_int, field_list, field_number, field_value, short, with_identity
from ._reader import Reader

_DOMAIN = re.compile(r"#\s*(\w+)\s+agent\s+policy", re.IGNORECASE)
#: A reward at or above this counts as a pass (τ-bench rewards are 0 or 1).
PASS_REWARD = 1.0 - 1e-9


def sniff(doc: Any) -> bool:
    """A non-empty list whose first item has ``task_id``, ``reward`` and ``traj``."""
    return (isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict)
            and {"task_id", "reward", "traj"} <= doc[0].keys())


def _task_id(value: Any, file: str, record: str) -> str:
    """A task id as the scenario's name: a string or a whole number (τ-bench writes ints)."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(file, record, "task_id", f"expected a task number or name, got {short(value)}",
                     hint="fix the record or drop it")


def _tau_error(_message: dict, content: Any) -> bool:
    return isinstance(content, str) and content.startswith("Error:")


def gold_actions(item: dict) -> list[dict] | None:
    """The task's gold actions (``info.task.actions``: ``{name, kwargs}``) as gold calls, or
    None when the record has none in that shape (they are optional: grading by reference only).

    >>> gold_actions({"info": {"task": {"actions": [{"name": "cancel", "kwargs": {"id": "X1"}}]}}})
    [{'tool': 'cancel', 'args': {'id': 'X1'}}]
    """
    info = item.get("info")
    task = info.get("task") if isinstance(info, dict) else None
    actions = task.get("actions") if isinstance(task, dict) else None
    if not isinstance(actions, list) or not all(
            isinstance(a, dict) and isinstance(a.get("name"), str) and isinstance(a.get("kwargs", {}), dict)
            for a in actions):
        return None
    return [{"tool": a["name"], "args": a.get("kwargs", {})} for a in actions]


def read(doc: list, *, file: str, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per record, tool calls paired with their results by call id."""
    if not isinstance(doc, list):
        raise InputError(file, None, None, "is not τ-bench results: expected a list of runs, "
                         f"got a {type(doc).__name__}", hint="check --format")
    for position, item in enumerate(doc):
        record = f"record {position + 1}"  # counted from 1, as a reader counts them
        if not isinstance(item, dict):
            raise InputError(file, record, None, f"expected an object, got {type(item).__name__}")
        traj = field_list(item, "traj", file=file, record=record)
        reward = field_number(item, "reward", file=file, record=record)
        trial = field_int(item, "trial", file=file, record=record, default=0)
        task_id = _task_id(field_value(item, "task_id", file=file, record=record), file, record)
        system = next((m.get("content") for m in traj if isinstance(m, dict) and m.get("role") == "system"), "")
        system = system if isinstance(system, str) else ""
        match = _DOMAIN.search(system)
        domain = match.group(1).lower() if match else None
        found = {"harness": "tau-bench", "world": f"tau-bench/{domain}" if domain else None,
                 "policy": {"system_prompt_sha256": digest(system)} if system else None}
        fields = {
            "scenario": f"{domain}/{task_id}" if domain else task_id,
            "trial": trial,
            "identity": with_identity(found, identity, file=file, record=record),
            "events": chat_events(traj, file=file, record=record, is_error=_tau_error),
            "outcome": {"reward": reward, "passed": None if reward is None else reward >= PASS_REWARD,
                        "label": None if reward is None else ("complete" if reward >= PASS_REWARD else "fail")},
            "source": {"adapter": "tau-bench", "file": file, "position": position},
            "gold": gold_actions(item),
        }
        yield build_run(fields, file=file, record=record)


READER = Reader(
    "tau-bench", "τ-bench v1 results [{task_id, trial, reward, info, traj}]",
    sniff=sniff, read=read,
)
