"""Read the output of agent frameworks into :class:`fluke.record.Run` objects.

No adapter imports its framework: each reads the JSON the framework wrote. Formats are
registered in :data:`FORMATS`; :func:`read_file` detects the format of a file (or takes the
one you force) and yields runs, raising :class:`fluke.errors.InputError` naming the file,
the record and the field on bad input.

:data:`FORMAT_NAMES` lists the registered names without importing any reader (nor
pydantic): the command line builds its ``--format`` choices from it and starts fast. A
test holds it equal to the registry.

>>> from fluke.adapters import FORMATS
>>> sorted(FORMATS)[:3]
['crewai', 'fluke', 'inspect']
>>> FORMAT_NAMES == tuple(FORMATS)
True
"""

from __future__ import annotations

from typing import Any

#: The registered format names, in detection order (kept equal to ``tuple(FORMATS)`` by a test).
FORMAT_NAMES: tuple[str, ...] = (
    "fluke", "tau2-bench", "tau-bench", "langgraph", "openai", "n8n", "inspect", "openinference", "otel-genai",
    "openai-agents", "openai-agents-items", "terminal-bench", "crewai",
)

__all__ = ["FORMATS", "FORMAT_NAMES", "Format", "detect_format", "read_file"]

_LAZY = ("FORMATS", "Format", "detect_format", "read_file")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import _registry

        return getattr(_registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
