"""Pieces the chat-style adapters (LangGraph, OpenAI chat, n8n) share.

How a run gets its scenario, trial and identity: what the payload says wins, the
``identity`` dict the caller passed fills the gaps, and the documented defaults fill the
rest (scenario: the file's stem; trial: the run's position in the file).

>>> base = RunBase.from_options({"model": "m", "scenario": "refund"}, file="x/run.json")
>>> base.scenario, base.identity.model
('refund', 'm')
>>> RunBase.from_options({}, file="x/case-7.json").scenario
'case-7'
>>> parse_arguments('{"a": 1}'), parse_arguments('{"a": 1'), parse_arguments("")
({'a': 1}, '{"a": 1', {})
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError
from ._common import short
from ..record import IDENTITY_FIELDS, Identity

#: Keys of the ``identity`` dict that are not identity fields but name the run.
RUN_KEYS = ("scenario", "trial", "unit")
_IDENTITY_KEYS = (*IDENTITY_FIELDS, "date")


@dataclass(frozen=True)
class RunBase:
    """The caller's defaults for the runs of one file."""

    scenario: str | None
    trial: int | None
    unit: str | None
    identity: Identity
    file: str | None

    @classmethod
    def from_options(cls, options: dict[str, Any], *, file: str | None) -> "RunBase":
        unknown = sorted(set(options) - set(RUN_KEYS) - set(_IDENTITY_KEYS))
        if unknown:
            raise InputError(file, None, None, f"unknown identity key {unknown[0]!r}",
                             hint="use one of: " + ", ".join((*_IDENTITY_KEYS, *RUN_KEYS)))
        trial = options.get("trial")
        if trial is not None:
            try:
                trial = int(trial)
            except (TypeError, ValueError):
                raise InputError(file, None, "trial", f"trial={trial!r} is not an integer") from None
        scenario = options.get("scenario")
        if scenario is None and file:
            scenario = Path(file).stem
        ident = Identity(**{k: options[k] for k in _IDENTITY_KEYS if options.get(k) is not None})
        return cls(scenario=None if scenario is None else str(scenario), trial=trial,
                   unit=options.get("unit"), identity=ident, file=file)

    def scenario_or(self, payload: str | None, record: str | None) -> str:
        """The payload's scenario, else the caller's, else an error saying how to name one."""
        if payload:
            return payload
        if self.scenario:
            return self.scenario
        raise InputError(self.file, record, "scenario", "the payload names no scenario",
                         hint="pass identity={'scenario': ...} to read_file")

    def identity_with(self, payload: dict[str, Any]) -> Identity:
        """The payload's identity fields, with the caller's filling the gaps."""
        given = Identity(**{k: v for k, v in payload.items() if v is not None})
        return given.filled(self.identity.model_dump(exclude_none=True))


def tool_name(value: Any) -> str:
    """A tool's name as a string: ``<unnamed>`` when absent, a number as its digits, any
    other value (a garbled file) as a short ``repr``.

    >>> tool_name("refund"), tool_name(None), tool_name(7), tool_name(["a"])
    ('refund', '<unnamed>', '7', "['a']")
    """
    if isinstance(value, str) and value:
        return value
    if not value:
        return "<unnamed>"
    if isinstance(value, (int, float)):
        return str(value)
    return short(value)


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments: a JSON string becomes its value; unparseable text stays as is.

    An empty string means "no arguments" (some providers send it for a tool with none).
    """
    if not isinstance(raw, str):
        return raw if raw is not None else {}
    if not raw.strip():
        return {}
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a block list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in ("text", "output_text", "input_text"):
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return str(content)


def result_of(content: Any) -> Any:
    """A tool result: text stays text, a list of only text blocks becomes its text,
    anything else (images, structured blocks) is kept as it was."""
    if isinstance(content, list) and all(
            isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text") for b in content):
        return text_of(content)
    return content

