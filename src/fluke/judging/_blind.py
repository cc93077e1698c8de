"""What a judge is shown: the transcript without the policy's labels, and pairs in balanced order.

A judge that can read which model or policy produced a run can favour it, so the view keeps
the task and what was said and done, and drops the identity, the condition, the tags, the
outcome, agent names and timings; any identity string that a message repeats is masked.

>>> from fluke.record import Run, Identity, UserMessage, AgentMessage
>>> run = Run(scenario="refund/1", identity=Identity(model="gpt-4o", policy="careful-v2"),
...           events=[UserMessage(text="refund W1"), AgentMessage(text="careful-v2 here: done", agent="gpt-4o")])
>>> view = blind_view(run)
>>> view["transcript"][1], "identity" in view, "gpt-4o" in str(view)
({'kind': 'agent', 'text': '[hidden] here: done'}, False, False)
>>> [order for order in balanced_orders(4)]
[False, True, False, True]
"""

from __future__ import annotations

from typing import Any, Iterator

from ..record import IDENTITY_FIELDS, Run

#: Event fields a judge is not shown: who spoke (an agent's name can name the policy) and when.
HIDDEN_EVENT_FIELDS = frozenset({"agent", "t", "t_start", "t_end", "call_id"})
MASK = "[hidden]"


def _labels(run: Run) -> list[str]:
    """The identity's and condition's string values, longest first (so a longer name is masked
    before a shorter one inside it)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if len(value) >= 3:
                found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for name in IDENTITY_FIELDS:
        walk(getattr(run.identity, name))
    walk(dict(run.condition))
    walk(list(run.tags))
    return sorted(found, key=len, reverse=True)


def _mask(value: Any, labels: list[str]) -> Any:
    if isinstance(value, str):
        for label in labels:
            value = value.replace(label, MASK)
        return value
    if isinstance(value, dict):
        return {k: _mask(v, labels) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, labels) for v in value]
    return value


def blind_view(run: Run) -> dict[str, Any]:
    """The run as a judge sees it: ``run`` (its content hash, to key the judgment), ``scenario``
    and ``transcript`` (each event without its speaker's name and times, identity strings masked)."""
    labels = _labels(run)
    transcript = []
    for event in run.events:
        body = {k: v for k, v in event.model_dump(mode="json").items()
                if k not in HIDDEN_EVENT_FIELDS and v is not None}
        transcript.append(_mask(body, labels))
    return {"run": run.hash, "scenario": _mask(run.scenario, labels), "transcript": transcript}


def balanced_orders(n: int, start: int = 0) -> Iterator[bool]:
    """For ``n`` consecutive judgments of a pair, whether to swap its two outputs: every other
    one, so each output sits in the first slot as often as the other (to within one)."""
    for i in range(n):
        yield (start + i) % 2 == 1
