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

Formats that come either as one JSON document or as JSON Lines of such documents (an
OTLP file exporter writes one request per line) set ``DOCUMENTS = True`` and receive an
iterator of ``(record, document)`` pairs: one pair ``(None, doc)`` for a JSON file, one
``("line N", obj)`` per line for JSON Lines.

Formats stored as a zip archive (Inspect AI's ``.eval``) set ``ARCHIVE = True``; their
``sniff`` and ``read`` then also receive a :class:`fluke.adapters._archive.Archive`.

A format that takes reader options (``read_file(..., options={...})``) names them in
``OPTIONS`` and receives them as ``options=``; any other option is an InputError.
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
from ._archive import ZIP_MAGIC, Archive


@dataclass(frozen=True)
class Format:
    """A registered input format: its name, its module, and a line of description."""

    name: str
    module: str
    description: str

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


#: Detection tries formats in this order; the first whose ``sniff`` says yes wins.
#: One row per format: its name, its module in this package, and a line of description.
FORMATS: dict[str, Format] = {name: Format(name, f"fluke.adapters.{module}", description)
                              for name, module, description in [
    ("fluke", "_fluke_jsonl", "fluke's own JSONL (one Run per line)"),
    ("tau2-bench", "_tau2bench", "τ²-bench results {timestamp, info, tasks, simulations}"),
    ("tau-bench", "_taubench", "τ-bench v1 results [{task_id, trial, reward, info, traj}]"),
    ("langgraph", "_langgraph", "LangGraph/LangChain message lists"),
    ("openai", "_openai", "OpenAI chat-completions message lists"),
    ("n8n", "_n8n", "n8n execution payloads"),
    ("inspect", "_inspect", "Inspect AI eval logs (.eval archives and .json)"),
    ("openinference", "_openinference", "OpenInference spans (OTLP JSON)"),
    ("otel-genai", "_otel_genai", "OpenTelemetry GenAI spans (OTLP JSON)"),
    ("openai-agents", "_agents_sdk", "OpenAI Agents SDK trace and span exports"),
    ("openai-agents-items", "_agents_items", "OpenAI Agents SDK run items and RunState JSON"),
    ("terminal-bench", "_terminal_bench", "Terminal-Bench and Harbor results"),
    ("crewai", "_crewai", "CrewAI event-bus logs (tool_usage_* events)"),
]}


def _available(fmt: Format) -> ModuleType | None:
    try:
        return fmt.load()
    except ModuleNotFoundError as exc:
        if exc.name == fmt.module:  # registered but not built yet
            return None
        raise


def _invalid(path: Path, line: int, exc: orjson.JSONDecodeError, hint: str) -> InputError:
    return InputError(str(path), f"line {line}", None,
                      f"not valid JSON ({exc.msg}); the file may be truncated", hint=hint)


class _JsonLines:
    """A JSON Lines file, read and parsed line by line from disk (so large files stream)."""

    def __init__(self, path: Path, first: Any) -> None:
        self.path, self.first = path, first

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        for number, line in self.raw():
            yield number, self.parse(number, line)

    def raw(self) -> Iterator[tuple[int, bytes]]:
        """The lines not blank, unparsed, with their numbers (for a reader that parses them itself)."""
        try:
            yield from raw_lines(self.path)
        except OSError as exc:
            raise _unreadable(self.path, exc) from None
        except LineTooLong as exc:
            raise too_long(self.path, exc.number) from None

    def parse(self, number: int, line: bytes) -> Any:
        """Line ``number`` parsed; not JSON, an InputError naming it."""
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise _invalid(self.path, number, exc, "fix or remove that line") from None


#: Bytes read at a time by :func:`raw_lines`.
CHUNK = 4 * 2 ** 20
#: The longest line of JSON Lines the readers take, in bytes (256 MiB): a longer one is
#: refused by its number before it is held in memory whole.
MAX_LINE = 256 * 2 ** 20


class LineTooLong(Exception):
    """Line ``number`` is longer than :data:`MAX_LINE` (raised by :func:`raw_lines`)."""

    def __init__(self, number: int) -> None:
        super().__init__(number)
        self.number = number


def too_long(path: Path | str, number: int) -> InputError:
    """The error for line ``number`` of ``path`` over :data:`MAX_LINE`.

    >>> str(too_long("a.jsonl", 7)).startswith("a.jsonl: line 7: is longer than the reader's limit of 256 MiB")
    True
    """
    return InputError(str(path), f"line {number}", None,
                      f"is longer than the reader's limit of {_size(MAX_LINE)} (a record that big is not a run)",
                      hint="split or shorten that record")


def _size(n: int) -> str:
    return f"{n / 2 ** 20:g} MiB" if n >= 2 ** 20 else f"{n:,} bytes"


def raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The lines of ``path`` that are not blank, without their newline, with their numbers
    (from 1, blank ones counted); read a chunk at a time and split in C, which takes a
    tenth of the time of reading line by line. An OSError propagates; a line longer than
    :data:`MAX_LINE` raises :class:`LineTooLong` once that much of it is read."""
    limit = MAX_LINE
    with open(path, "rb") as fh:
        number, rest = 0, b""
        while True:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            lines = (rest + chunk if rest else chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                number += 1
                if len(line) > limit:
                    raise LineTooLong(number)
                if line and not line.isspace():
                    yield number, line
            if len(rest) > limit:
                raise LineTooLong(number + 1)
        if rest and not rest.isspace():
            yield number + 1, rest


def _unreadable(path: Path, exc: OSError) -> InputError:
    return InputError(str(path), None, None, f"cannot be read ({exc.strerror or exc})",
                      hint="check the path and its permissions")


def _open_document(path: Path) -> Any:
    """Parse ``path``: a zip archive stays an :class:`Archive`; JSON Lines (streamed) when its
    first line is a whole JSON object and more lines follow; otherwise one JSON document."""
    try:
        with open(path, "rb") as fh:
            if fh.read(4) == ZIP_MAGIC:
                return Archive(path)
            fh.seek(0)
            limit, number = MAX_LINE, 1
            first_line = fh.readline(limit + 1)
            while first_line and not first_line.strip():
                first_line, number = fh.readline(limit + 1), number + 1
            if len(first_line) > limit and _more_lines(fh):   # JSON Lines whose first line is too long
                raise too_long(path, number)
            rest = fh.readline(limit + 1)
            while rest and not rest.strip():
                rest = fh.readline(limit + 1)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if rest:
        try:
            first = orjson.loads(first_line)
        except orjson.JSONDecodeError:
            first = None
        if isinstance(first, dict):
            return _JsonLines(path, first)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _unreadable(path, exc) from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise _invalid(path, data[: exc.pos].count(b"\n") + 1, exc, "re-export it from its source") from None


def _more_lines(fh: Any) -> bool:
    """Past the rest of the current line of ``fh`` (read a chunk at a time), is there a line
    that is not blank?"""
    while chunk := fh.read(CHUNK):
        at = chunk.find(b"\n")
        if at != -1:
            fh.seek(at + 1 - len(chunk), 1)
            break
    while chunk := fh.read(CHUNK):
        if chunk.strip():
            return True
    return False


def detect_format(path: str | Path, doc: Any = None) -> str:
    """Name the format of ``path`` (parsing it if ``doc`` is not given).

    Raises :class:`InputError` when no registered format recognises it.
    """
    path = Path(path)
    if doc is None:
        doc = _open_document(path)
    is_lines = isinstance(doc, _JsonLines)
    is_archive = isinstance(doc, Archive)
    probe = doc.first if is_lines else doc
    for fmt in FORMATS.values():
        module = _available(fmt)
        if module is None:
            continue
        if is_lines and not (getattr(module, "LINES", False) or getattr(module, "DOCUMENTS", False)):
            continue
        if is_archive and not getattr(module, "ARCHIVE", False):
            continue
        try:
            matched = module.sniff(probe)
        except RecursionError:
            raise _too_deep(path, None) from None
        if matched:
            return fmt.name
    raise InputError(str(path), None, None, "is in no format fluke knows",
                     hint="known formats: " + ", ".join(FORMATS) + "; force one with --format")


def _documents(doc: Any) -> Iterator[tuple[str | None, Any]]:
    if isinstance(doc, _JsonLines):
        for number, obj in doc:
            yield f"line {number}", obj
    else:
        yield None, doc


def read_file(path: str | Path, *, format: str | None = None,
              identity: dict[str, Any] | None = None,
              options: dict[str, Any] | None = None, prepared: bool = False) -> Iterator[Run]:
    """Yield the runs in ``path``, detecting its format unless ``format`` is given.

    ``options`` are reader options for formats that take them (Inspect AI: ``score``, the
    scorer that decides pass or fail, and ``pass_at``, the lowest passing score; see
    docs/adapters.md); an option the format does not take is an InputError. With ``prepared``,
    a reader that can (fluke JSONL) yields :class:`fluke.record.Prepared` runs for an ingest.

    >>> import tempfile, os
    >>> from fluke.record import Run
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write(Run(scenario="s1").model_dump_json() + "\\n")
    >>> [r.scenario for r in read_file(f.name)]
    ['s1']
    >>> os.unlink(f.name)
    """
    path = Path(path)
    doc = _open_document(path)
    name = format or detect_format(path, doc)
    if name not in FORMATS:
        raise InputError(str(path), None, None, f"unknown format {name!r}",
                         hint="choose one of: " + ", ".join(FORMATS))
    module = _available(FORMATS[name])
    if module is None:
        raise InputError(str(path), None, None, f"the {name} reader is not available in this build")
    if isinstance(doc, Archive) and not getattr(module, "ARCHIVE", False):
        raise InputError(str(path), None, None, f"is a zip archive, which the {name} reader does not read",
                         hint="unpack it, or choose the format with --format")
    accepted = tuple(getattr(module, "OPTIONS", ()))
    extra = {"options": dict(options or {})} if accepted else {}
    if prepared and getattr(module, "PREPARED", False):
        extra["prepared"] = True
    unknown = sorted(set(options or {}) - set(accepted))
    if unknown:
        raise InputError(str(path), None, None, f"the {name} reader takes no option {unknown[0]!r}",
                         hint=("it takes: " + ", ".join(accepted)) if accepted else "it takes no options")
    if getattr(module, "DOCUMENTS", False):
        doc = _documents(doc)
    elif getattr(module, "LINES", False) and not isinstance(doc, _JsonLines):
        doc = _JsonLines(path, doc)  # a one-line file
    try:
        yield from module.read(doc, file=str(path), identity=identity or {}, **extra)
    except RecursionError:   # a reader walking a document nested deeper than Python's stack
        raise _too_deep(path, None) from None


def _too_deep(path: Path, record: str | None) -> InputError:
    return InputError(str(path), record, None, "is nested too deep to read",
                      hint="fluke reads documents nested up to a few hundred levels")
