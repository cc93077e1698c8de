"""The registry of readers, detection, and the one entry point :func:`read_file`.

Each format is a :class:`fluke.adapters.Reader` (see :mod:`fluke.adapters._reader` for the
protocol): fluke's own, listed in :data:`fluke.adapters._builtin.BUILTIN`, then those other
packages register under the ``fluke.readers`` entry-point group (:mod:`._plugins`).
Detection tries them in that order; the first whose ``sniff`` says yes wins.
:func:`read_file` (files) and :func:`read_document` (a document in memory, for the runner)
share one dispatch: what a reader ``takes`` decides what it is given.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import orjson

from ..errors import InputError, UsageError
from ..record import Run
from ._archive import ZIP_MAGIC, Archive
from ._builtin import BUILTIN
from ._reader import Reader


@dataclass(frozen=True)
class Format:
    """A registered format: its name, where its :class:`Reader` is (``module:attribute``), and the
    package it comes from (``fluke`` for fluke's own)."""

    name: str
    target: str
    source: str = "fluke"
    _loaded: dict = field(default_factory=dict, compare=False, repr=False)

    def load(self) -> Reader:
        """The reader (imported once); a target that is not a :class:`Reader` is an InputError."""
        if "reader" not in self._loaded:
            module, _, attribute = self.target.partition(":")
            reader = getattr(importlib.import_module(module), attribute or "READER")
            if not isinstance(reader, Reader):
                raise UsageError(f"the {self.name} reader from {self.source} ({self.target}) "
                                 f"is a {type(reader).__name__}, not a fluke.adapters.Reader",
                                 hint="its package must define READER = fluke.adapters.Reader(...)")
            self._loaded["reader"] = reader
        return self._loaded["reader"]

    @property
    def description(self) -> str:
        return self.load().description


def _formats() -> dict[str, Format]:
    from ._plugins import plugin_formats

    found = {name: Format(name, f"fluke.adapters.{module}:READER") for name, module in BUILTIN}
    for fmt in plugin_formats():
        found.setdefault(fmt.name, fmt)   # a plugin cannot take the name of one of fluke's readers
    return found


#: Every registered format, in detection order: fluke's own, then the plugins'.
FORMATS: dict[str, Format] = _formats()


def refresh_formats() -> dict[str, Format]:
    """Look for plugin readers again (after installing one in a running process); the new :data:`FORMATS`."""
    FORMATS.clear()
    FORMATS.update(_formats())
    return FORMATS


def _available(fmt: Format) -> Reader | None:
    """The reader, or None for a plugin that cannot be imported (it is skipped in detection;
    ``fluke formats`` says why)."""
    try:
        return fmt.load()
    except Exception:
        if fmt.source == "fluke":
            raise
        return None


def _invalid(path: Path, line: int, exc: orjson.JSONDecodeError, hint: str, data: bytes | None = None) -> InputError:
    """Not JSON: blamed on truncation only when the parser ran off the end of the text."""
    text = exc.doc.encode() if data is None and isinstance(exc.doc, str) else (data or b"")
    if not text.strip():
        return InputError(str(path), None, None, "is empty: there are no runs to read",
                          hint="check that the export finished writing it")
    if exc.pos >= len(text.rstrip()):
        return InputError(str(path), f"line {line}", None,
                          f"not valid JSON ({exc.msg}); it stops mid-document, so the file may be truncated",
                          hint=hint)
    return InputError(str(path), f"line {line}", None, f"not valid JSON ({exc.msg})",
                      hint="fluke reads JSON, JSON Lines and zip archives of them")


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
        pieces: list[bytes] = []   # a line longer than a chunk, gathered whole once its end is read
        held = 0
        while True:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            if pieces and b"\n" not in chunk:   # still inside one long line: adding to it costs its own bytes only
                pieces.append(chunk)
                held += len(chunk)
                if held > limit:
                    raise LineTooLong(number + 1)
                continue
            if pieces:
                rest, pieces, held = b"".join(pieces), [], 0
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
            if len(rest) >= CHUNK:
                pieces, held, rest = [rest], len(rest), b""
        if pieces:
            rest = b"".join(pieces)
        if rest and not rest.isspace():
            yield number + 1, rest


def _unreadable(path: Path, exc: OSError) -> InputError:
    return InputError(str(path), None, None, f"cannot be read ({exc.strerror or exc})",
                      hint="check the path and its permissions")


def _open_document(path: Path) -> Any:
    """Parse ``path``: a zip archive stays an :class:`Archive`; JSON Lines (streamed) when its
    first line is a whole JSON object and more lines follow; a folder holding a fluke Parquet
    dataset's manifest is a :class:`fluke.lake.Dataset`; otherwise one JSON document."""
    if path.is_dir():
        from ..lake._layout import is_dataset

        if is_dataset(path):
            from ..lake._layout import Dataset

            return Dataset(path)
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
        raise _invalid(path, data[: exc.pos].count(b"\n") + 1, exc, "re-export it from its source", data) from None


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
    for fmt in list(FORMATS.values()):
        reader = _available(fmt)
        if reader is None:
            continue
        if is_lines and reader.takes == "document":
            continue
        if is_archive and not reader.archive:
            continue
        try:
            matched = reader.sniff(probe)
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


def reader_for(name: str, where: str | None = None) -> Reader:
    """The reader of format ``name``; an unknown or unloadable one is an InputError naming ``where``."""
    if name not in FORMATS:
        raise InputError(where, None, "format" if where is None else None, f"unknown format {name!r}",
                         hint="choose one of: " + ", ".join(FORMATS) + " (fluke formats lists them)")
    try:
        return FORMATS[name].load()
    except InputError:
        raise
    except Exception as exc:
        raise InputError(where, None, None, f"the {name} reader from {FORMATS[name].source} cannot be loaded "
                         f"({type(exc).__name__}: {exc})", hint="reinstall the package that provides it") from None


def _given(reader: Reader, doc: Any, path: Path | None) -> Any:
    """What ``reader.read`` takes, made of ``doc`` (a file's parsed document, or one in memory)."""
    if reader.takes == "documents":
        return _documents(doc)
    if reader.takes == "lines" and not isinstance(doc, _JsonLines):
        if path is None:   # in memory: a list of parsed lines
            return enumerate(doc, start=1)
        return _JsonLines(path, doc)   # a one-line file
    return doc


def _dispatch(reader: Reader, doc: Any, *, path: Path | None, identity: dict[str, Any] | None,
              options: dict[str, Any] | None, prepared: bool, notes: list[str] | None,
              workers: int | str = 0) -> Iterator[Run]:
    where = None if path is None else str(path)
    unknown = sorted(set(options or {}) - set(reader.options))
    if unknown:
        raise InputError(where, None, None, f"the {reader.name} reader takes no option {unknown[0]!r}",
                         hint=("it takes: " + ", ".join(reader.options)) if reader.options else "it takes no options")
    extra = reader.kwargs(options=options or {}, prepared=prepared, notes=notes, workers=workers)
    try:
        yield from reader.read(_given(reader, doc, path), file=where, identity=identity or {}, **extra)
    except RecursionError:   # a reader walking a document nested deeper than Python's stack
        raise _too_deep(where, None) from None


def read_file(path: str | Path, *, format: str | None = None,
              identity: dict[str, Any] | None = None,
              options: dict[str, Any] | None = None, prepared: bool = False,
              notes: list[str] | None = None, workers: int | str = 0) -> Iterator[Run]:
    """Yield the runs in ``path``, detecting its format unless ``format`` is given.

    ``options`` are reader options for formats that take them (Inspect AI: ``score``, the
    scorer that decides pass or fail, and ``pass_at``, the lowest passing score; see
    docs/adapters.md); an option the format does not take is an InputError. With ``prepared``,
    a reader that can (fluke JSONL) yields :class:`fluke.record.Prepared` runs for an ingest.
    ``notes``, a list, receives the lines a reader has for the ingest summary (a Harbor job's
    own counts). ``workers`` (with ``prepared``) lets a reader that can (fluke JSONL) read a
    large file in that many forked processes; 0, the default, reads in this one.

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
    reader = reader_for(name, str(path))
    if isinstance(doc, Archive) and not reader.archive:
        raise InputError(str(path), None, None, f"is a zip archive, which the {name} reader does not read",
                         hint="unpack it, or choose the format with --format")
    yield from _dispatch(reader, doc, path=path, identity=identity, options=options, prepared=prepared, notes=notes,
                         workers=workers)


def read_document(doc: Any, *, format: str, identity: dict[str, Any] | None = None,
                  options: dict[str, Any] | None = None) -> Iterator[Run]:
    """Yield the runs of ``doc``, a document in memory (for a lines format, the list of its
    parsed lines), read as ``format`` by the same dispatch as :func:`read_file`.

    >>> [r.scenario for r in read_document([{"format_version": 1, "scenario": "s1"}], format="fluke")]
    ['s1']
    """
    yield from _dispatch(reader_for(format), doc, path=None, identity=identity, options=options, prepared=False,
                         notes=None)


def _too_deep(path: Path | str | None, record: str | None) -> InputError:
    return InputError(None if path is None else str(path), record, None, "is nested too deep to read",
                      hint="fluke reads documents nested up to a few hundred levels")
