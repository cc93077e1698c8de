"""Where a run sits in the survival analysis of a comparison: its *place*, counted by the ledger.

>>> place_of(False, 2, [{"kind": "user"}, {"kind": "tool", "tool": "pay", "ok": True}])
('died_at', 2, 'end')
"""

from __future__ import annotations

from typing import Any

#: A place's cause: the run passed (censored at its last event), failed at its recorded
#: ``died_at``, failed on the failed tool call it ends on, or failed with no known step.
CAUSES = ("censored", "died_at", "failed call", "unknown step")


def place_of(passed: bool | None, died_at: int | None, events: Any) -> tuple[str, int, str] | None:
    """Where a run sits in the survival analysis: ``(cause, step, event)``, None for an unknown outcome.

    The rule of :func:`fluke.comparison.survival_data` (without a grading spec): a passing run
    is censored at its last event (``event`` is then ``""``: no analysis reads it); a failed run
    dies at ``died_at`` when recorded, else at the failed tool call it ends on; any other failed
    run has no known step (``-1``). ``event`` names the event at the step (a tool call by its
    tool, any other event by its kind; ``"end"`` past the last event). ``events`` are event
    models or their JSON objects.

    >>> from fluke.record import ToolCall, UserMessage
    >>> events = [UserMessage(text="hi"), ToolCall(tool="refund", ok=False)]
    >>> place_of(False, None, events), place_of(False, 0, events), place_of(False, 7, events)
    (('failed call', 1, 'refund'), ('died_at', 0, 'user'), ('died_at', 7, 'end'))
    >>> place_of(True, None, events), place_of(False, None, events[:1]), place_of(None, None, events)
    (('censored', 1, ''), ('unknown step', -1, ''), None)
    """
    if passed is None:
        return None
    size = len(events)
    last = max(size - 1, 0)
    if passed:
        return ("censored", last, "")
    if died_at is not None:
        step, cause = int(died_at), "died_at"
    elif size and _field(events[-1], "kind") == "tool" and _field(events[-1], "ok") is False:
        step, cause = last, "failed call"
    else:
        return ("unknown step", -1, "")
    if not 0 <= step < size:
        return (cause, step, "end")
    event = events[step]
    kind = _field(event, "kind")
    return (cause, step, str(_field(event, "tool") if kind == "tool" else kind))


def _field(event: Any, name: str) -> Any:
    return event.get(name) if isinstance(event, dict) else getattr(event, name, None)
