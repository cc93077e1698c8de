"""The registry of formats, detection, and the one entry point :func:`read_file`.

A format is a module with two functions:

``sniff(doc) -> bool``
    given the parsed document (or, for line formats, the first parsed line), say whether
    this is the format.
``read(doc, *, file, identity) -> Iterator[Run]``
    yield runs; raise :class:`fluke.errors.InputError` (file, record, field) on bad input.
    ``identity`` is a dict of identity fields the user supplied for what the file lacks.

Line-oriented formats (JSONL) set ``LINES = True`` and receive an iterator of
``(line_number, parsed_line)`` instead of one document, so large files stream.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import orjson

from ..errors import InputError
from ..record import Run


@dataclass(frozen=True)
class Format:
    """A registered input format: its name, its module, and a line of description."""

    name: str
    module: str
    description: str

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


#: Detection tries formats in this order; the first whose ``sniff`` says yes wins.
FORMATS: dict[str, Format] = {f.name: f for f in [
    Format("fluke", "fluke.adapters._fluke_jsonl", "fluke's own JSONL (one Run per line)"),
    Format("tau2-bench", "fluke.adapters._tau2bench", "τ²-bench results {timestamp, info, tasks, simulations}"),
    Format("tau-bench", "fluke.adapters._taubench", "τ-bench v1 results [{task_id, trial, reward, info, traj}]"),
    Format("langgraph", "fluke.adapters._langgraph", "LangGraph/LangChain message lists"),
    Format("openai", "fluke.adapters._openai", "OpenAI chat-completions message lists"),
    Format("n8n", "fluke.adapters._n8n", "n8n execution payloads"),
]}


def _available(fmt: Format) -> ModuleType | None:
    try:
        return fmt.load()
    except ModuleNotFoundError as exc:
        if exc.name == fmt.module:  # registered but not built yet
            return None
        raise


def _parse_json(path: Path, data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        # Try JSON Lines: every non-empty line a document.
        lines = [ln for ln in data.splitlines() if ln.strip()]
        if len(lines) > 1:
            try:
                return _JsonLines(path, data)
            except _NotJsonLines:
                pass
        line = data[: exc.pos].count(b"\n") + 1
        raise InputError(str(path), f"line {line}", None,
                         f"not valid JSON ({exc.msg}); the file may be truncated",
                         hint="re-export it from its source") from None


class _NotJsonLines(Exception):
    pass


class _JsonLines:
    """A JSONL file, parsed lazily line by line (so large files stream)."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path, self.data = path, data
        first = next((ln for ln in data.splitlines() if ln.strip()), b"")
        try:
            self.first = orjson.loads(first)
        except orjson.JSONDecodeError:
            raise _NotJsonLines from None

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        for number, line in enumerate(self.data.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                yield number, orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise InputError(str(self.path), f"line {number}", None,
                                 f"not valid JSON ({exc.msg}); the file may be truncated",
                                 hint="fix or remove that line") from None


def detect_format(path: str | Path, doc: Any = None) -> str:
    """Name the format of ``path`` (parsing it if ``doc`` is not given).

    Raises :class:`InputError` when no registered format recognises it.
    """
    path = Path(path)
    if doc is None:
        doc = _parse_json(path, path.read_bytes())
    is_lines = isinstance(doc, _JsonLines)
    probe = doc.first if is_lines else doc
    for fmt in FORMATS.values():
        module = _available(fmt)
        if module is None or (is_lines and not getattr(module, "LINES", False)):
            continue
        if module.sniff(probe):
            return fmt.name
    raise InputError(str(path), None, None, "is in no format fluke knows",
                     hint="known formats: " + ", ".join(FORMATS) + "; force one with --format")


def read_file(path: str | Path, *, format: str | None = None,
              identity: dict[str, Any] | None = None) -> Iterator[Run]:
    """Yield the runs in ``path``, detecting its format unless ``format`` is given.

    >>> import tempfile, os
    >>> from fluke.record import Run
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write(Run(scenario="s1").model_dump_json() + "\\n")
    >>> [r.scenario for r in read_file(f.name)]
    ['s1']
    >>> os.unlink(f.name)
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(str(path), None, None, f"cannot be read ({exc.strerror})") from None
    doc = _parse_json(path, data)
    name = format or detect_format(path, doc)
    if name not in FORMATS:
        raise InputError(str(path), None, None, f"unknown format {name!r}",
                         hint="choose one of: " + ", ".join(FORMATS))
    module = _available(FORMATS[name])
    if module is None:
        raise InputError(str(path), None, None, f"the {name} reader is not available in this build")
    if getattr(module, "LINES", False) and not isinstance(doc, _JsonLines):
        doc = _JsonLines.__new__(_JsonLines)
        doc.path, doc.data = path, data
    yield from module.read(doc, file=str(path), identity=identity or {})
