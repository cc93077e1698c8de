"""The reader protocol: one :class:`Reader` object per format says all the registry needs.

A reader module (fluke's own, or a third party's registered through the ``fluke.readers``
entry-point group) defines ``READER = Reader(...)``:

``name``, ``description``
    the format's name (what ``--format`` takes) and one line for ``fluke formats``;
``sniff(doc) -> bool``
    given the parsed document (for a JSON Lines file, its first parsed line; for a zip
    archive, the :class:`fluke.adapters.Archive`), say whether this is the format;
``read(doc, *, file, identity, **extra) -> Iterator[Run]``
    yield runs; raise :class:`fluke.errors.InputError` (file, record, field) on bad input.
    ``identity`` is a dict of identity fields the user supplied for what the file lacks;
``takes``
    what ``read`` receives: ``"document"`` (one parsed JSON document), ``"lines"`` (an
    iterator of ``(line_number, parsed_line)``, streamed, for JSON Lines) or
    ``"documents"`` (an iterator of ``(record, document)`` pairs: ``(None, doc)`` for a
    JSON file, ``("line N", obj)`` per line of JSON Lines of such documents);
``archive``
    the format also comes as a zip archive (``sniff`` and ``read`` then receive an
    :class:`~fluke.adapters.Archive`);
``options``
    the reader options ``read`` takes as ``options=`` (any other is an InputError);
``prepared``
    ``read`` takes ``prepared=True`` and may then yield :class:`fluke.record.Prepared`
    runs for an ingest (fluke's own JSONL);
``notes``
    ``read`` takes ``notes=``, a list it appends lines to that the ingest summary prints
    (a job's own counts, say, to hold beside what was read), or None when nobody asked;
``workers``
    ``read`` takes ``workers=`` (with ``prepared``): how many processes may read the file
    beside the one storing its runs (fluke's own JSONL). Readers read in the calling
    process otherwise; concurrency is the ingest's choice (``ingest(..., workers=N)``).

>>> reader = Reader("demo", "a list of {task, ok}", sniff=lambda doc: isinstance(doc, list), read=iter)
>>> reader.takes, reader.options, reader.kwargs(options={}, prepared=True, notes=[], workers=2)
('document', (), {})
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

#: What a reader's ``read`` may take.
TAKES = ("document", "lines", "documents")


@dataclass(frozen=True)
class Reader:
    """How one format is recognised and read (see the module docstring)."""

    name: str
    description: str
    sniff: Callable[[Any], bool]
    read: Callable[..., Iterator[Any]]
    takes: str = "document"
    archive: bool = False
    options: tuple[str, ...] = ()
    prepared: bool = False
    notes: bool = False
    workers: bool = False

    def __post_init__(self) -> None:
        if self.takes not in TAKES:
            raise ValueError(f"Reader {self.name!r}: takes must be one of {', '.join(TAKES)}, not {self.takes!r}")

    def kwargs(self, *, options: dict[str, Any], prepared: bool, notes: list[str],
               workers: int | str = 0) -> dict[str, Any]:
        """The keyword arguments beyond ``file`` and ``identity`` that ``read`` takes."""
        extra: dict[str, Any] = {}
        if self.options:
            extra["options"] = dict(options)
        if prepared and self.prepared:
            extra["prepared"] = True
        if self.notes:
            extra["notes"] = notes
        if prepared and self.prepared and self.workers:
            extra["workers"] = workers
        return extra
