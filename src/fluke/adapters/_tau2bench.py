"""τ²-bench results: ``{timestamp, info, tasks, simulations}``.

Each simulation becomes a run of scenario ``<domain>/<task_id>``. Tool calls carry their
``requestor``: in telecom the simulated user calls tools too, and those calls are kept with
``requestor="user"``. Results match calls by id and carry τ²-bench's own ``error`` flag.
The identity is read from ``info``: the agent's model, the harness (agent implementation,
user simulator, commit), the world (domain), and digests of the tool definitions and policy.
A simulation that ended in ``agent_error`` or ``user_error`` is labelled ``error``.

>>> sniff({"timestamp": "t", "info": {}, "tasks": [], "simulations": []}), sniff([])
(True, False)
"""

from __future__ import annotations

from typing import Any, Iterator

from ..errors import InputError
from ..record import Run, digest
from ._openai import chat_events
from ._common import (as_str, build_run, building, expect_dict, field_dict, field_list, field_number, short,
                      with_identity)
from ._taubench import PASS_REWARD
from ._reader import Reader

_ERROR_ENDINGS = {"agent_error", "user_error"}


def sniff(doc: Any) -> bool:
    """An object with ``info`` and ``simulations``."""
    return isinstance(doc, dict) and "simulations" in doc and "info" in doc


def _identity(doc: dict, file: str) -> dict[str, Any]:
    info = field_dict(doc, "info", file=file, record="info")
    agent = expect_dict(info.get("agent_info"), file=file, record="info", field="agent_info")
    user = expect_dict(info.get("user_info"), file=file, record="info", field="user_info")
    env = expect_dict(info.get("environment_info"), file=file, record="info", field="environment_info")
    domain = env.get("domain_name")
    if domain is not None and not (isinstance(domain, str) and domain):
        raise InputError(file, "info", "environment_info.domain_name",
                         f"expected the domain's name, got {short(domain)}")
    timestamp = doc.get("timestamp")
    with building(file, "info"):   # digests of what JSON cannot hold (nested too deep)
        tools = {"tool_defs_sha256": digest(env["tool_defs"])} if env.get("tool_defs") else None
        policy = {"policy_sha256": digest(env["policy"])} if env.get("policy") else None
    return {
        "model": agent.get("llm"),
        "harness": {"name": "tau2-bench", "agent": agent.get("implementation"),
                    "user_simulator": user.get("llm"), "commit": info.get("git_commit")},
        "world": f"tau2-bench/{domain}" if domain else None,
        "tools": tools,
        "policy": policy,
        "date": (timestamp[:10] or None) if isinstance(timestamp, str) else None,
    }, domain


def _tau2_error(message: dict, _content: Any) -> bool:
    return bool(message.get("error"))


def gold_by_task(doc: dict) -> dict[str, list[dict]]:
    """Each task's ``evaluation_criteria.actions`` as gold calls, by task id; a task whose
    actions are not in that shape is left out (gold is optional: grading by reference only).

    >>> gold_by_task({"tasks": [{"id": "7", "evaluation_criteria": {"actions": [
    ...     {"name": "refund", "arguments": {"id": "X1"}, "requestor": "assistant", "compare_args": None}]}}]})
    {'7': [{'tool': 'refund', 'args': {'id': 'X1'}, 'requestor': 'agent', 'compare': None}]}
    """
    out: dict[str, list[dict]] = {}
    tasks = doc.get("tasks")
    for task in tasks if isinstance(tasks, list) else ():
        if not isinstance(task, dict) or "id" not in task:
            continue
        criteria = task.get("evaluation_criteria")
        actions = criteria.get("actions") if isinstance(criteria, dict) else None
        if not isinstance(actions, list) or not all(
                isinstance(a, dict) and isinstance(a.get("name"), str)
                and isinstance(a.get("arguments", {}), dict)
                and (a.get("compare_args") is None or (isinstance(a["compare_args"], list)
                                                       and all(isinstance(k, str) for k in a["compare_args"])))
                for a in actions):
            continue
        out[str(task["id"])] = [{"tool": a["name"], "args": a.get("arguments", {}),
                                 "requestor": "user" if a.get("requestor") == "user" else "agent",
                                 "compare": a.get("compare_args")} for a in actions]
    return out


def read(doc: dict, *, file: str, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per simulation."""
    if not isinstance(doc, dict):
        raise InputError(file, None, None, "is not τ²-bench results: expected an object with info and "
                         f"simulations, got a {type(doc).__name__}", hint="check --format")
    found, domain = _identity(doc, file)
    merged = with_identity(found, identity, file=file, record="info")
    golds = gold_by_task(doc)
    for position, sim in enumerate(field_list(doc, "simulations", file=file, record="simulations")):
        record = f"simulation {position + 1}"  # counted from 1
        if not isinstance(sim, dict) or "task_id" not in sim:
            field_dict({"s": sim}, "s", file=file, record=record)  # raises for non-objects
            raise InputError(file, record, "task_id", "is missing", hint="the file may be from another tool")
        task_id = sim["task_id"]
        if not (isinstance(task_id, str) and task_id) and not (isinstance(task_id, int)
                                                               and not isinstance(task_id, bool)):
            raise InputError(file, record, "task_id", f"expected a task name or number, got {short(task_id)}")
        reward_info = expect_dict(sim.get("reward_info"), file=file, record=record, field="reward_info")
        reward = field_number(reward_info, "reward", file=file, record=record, default=None,
                              prefix="reward_info.")
        ending = as_str(sim.get("termination_reason"))
        passed = None if reward is None else reward >= PASS_REWARD
        label = (
            "error" if ending in _ERROR_ENDINGS else (None if passed is None else ("complete" if passed else "fail"))
        )
        messages = field_list(sim, "messages", file=file, record=record)
        cost = {k: float(v) for k, v in (("agent_usd", sim.get("agent_cost")), ("user_usd", sim.get("user_cost")))
                if isinstance(v, (int, float)) and not isinstance(v, bool)}
        fields = {
            "scenario": f"{domain}/{task_id}" if domain else str(task_id),
            "trial": sim.get("trial") or 0,
            "identity": merged,
            "events": chat_events(messages, file=file, record=record, is_error=_tau2_error),
            "outcome": {"reward": reward, "passed": passed, "label": label},
            "cost": cost,
            "latency": field_number(sim, "duration", file=file, record=record, default=None),
            "seed": sim.get("seed"),
            "error": ending if ending in _ERROR_ENDINGS else None,
            "source": {"adapter": "tau2-bench", "file": file, "position": position},
            "gold": golds.get(str(sim["task_id"])),
        }
        yield build_run(fields, file=file, record=record)


READER = Reader(
    "tau2-bench", "τ²-bench results {timestamp, info, tasks, simulations}",
    sniff=sniff, read=read,
)
