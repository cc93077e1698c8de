"""Let an agent return what its framework gave it: a LangGraph state, OpenAI messages, an
n8n execution. :func:`read_trajectory` reads it with the matching adapter into a Run, which
the runner accepts as an agent's return value (scenario and trial are then the runner's).

>>> run = read_trajectory([{"role": "user", "content": "2+3?"},
...     {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
...       "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]},
...     {"role": "tool", "tool_call_id": "c1", "content": "5"}], format="openai")
>>> [(c.tool, c.args, c.ok) for c in run.tool_calls]
[('add', {'a': 2, 'b': 3}, True)]
"""

from __future__ import annotations

from typing import Any

from ..adapters import read_document
from ..errors import UsageError
from ..record import Run


def read_trajectory(doc: Any, *, format: str) -> Run:
    """Read one run from an in-memory framework document (``format`` as in ``fluke ingest``), by
    the registry's own dispatch (:func:`fluke.adapters.read_document`)."""
    runs = list(read_document(doc, format=format, identity={"scenario": "agent"}))
    if len(runs) != 1:
        raise UsageError(f"the document holds {len(runs)} runs, not one", hint="return one conversation per agent call")
    return runs[0]
