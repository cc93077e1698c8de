"""The neutral document a result renders into: lines of styled spans, and tables.

A result builds a list of blocks once; :mod:`fluke.analysis._render` turns the same blocks into
terminal text or Markdown. Every string in a block is treated as untrusted when rendered (never
parsed as markup, control characters made visible, secrets redacted), so a result never has to
remember which of its strings came from a run.

>>> t = Table("runs", [Column("scenario", key=True), Column("passed", align="right")], [["a", "1/2"]])
>>> t.columns[0].key, len(t.rows)
(True, 1)
"""

from __future__ import annotations

from collections.abc import Sequence as SequenceBase
from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

#: Styles a span may carry; the renderers map them to colours or to Markdown emphasis.
STYLES = ("bold", "dim", "good", "bad", "warn", "code")


@dataclass(frozen=True)
class Span:
    """A run of text in one style (``None`` for plain)."""

    text: str
    style: str | None = None


Cell = Union[str, Span]


@dataclass(frozen=True)
class Line:
    """One paragraph: spans joined without separators; ``style`` applies to the whole line."""

    spans: tuple[Span, ...]
    style: str | None = None

    @classmethod
    def of(cls, *parts: Cell, style: str | None = None) -> "Line":
        """A line from strings and spans.

        >>> Line.of("p = ", Span("0.031", "bold")).plain()
        'p = 0.031'
        """
        return cls(tuple(p if isinstance(p, Span) else Span(str(p)) for p in parts), style)

    def plain(self) -> str:
        return "".join(s.text for s in self.spans)


@dataclass(frozen=True)
class Column:
    """A table column. The ``key`` column (the scenario, usually) takes the width the others leave."""

    name: str
    align: str = "left"
    key: bool = False


#: How many rows a table shows by default (``--all`` shows every one).
TABLE_ROWS = 25


class Rows(SequenceBase):
    """A table's rows made when a renderer reads them: ``make(item)`` is one row of ``items``.
    A table shows its first rows, so a comparison of 10,000 cells formats the 8 it prints, and
    all of them only when every row is asked for (``--all``, a GitHub summary).

    >>> rows = Rows([3, 1, 2], lambda n: [str(n), "x" * n])
    >>> len(rows), rows[:2], rows[-1]
    (3, [['3', 'xxx'], ['1', 'x']], ['2', 'xx'])
    """

    def __init__(self, items: Sequence, make: Callable[[object], Sequence[Cell]]):
        self._items, self._make = items, make

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._make(item) for item in self._items[index]]
        return self._make(self._items[index])


@dataclass(frozen=True)
class Table:
    """Rows already in the order a reader wants (worst first); renderers show ``limit`` of them.

    ``more`` names what the cut rows are (``"scenarios"``); the renderer says how many were left
    out and how to see them all (``--all``, or the JSON output). ``total`` is how many rows the
    table has when the producer built only the first ones (a listing of a million runs builds
    the rows it shows, not a million).
    """

    title: str
    columns: Sequence[Column]
    rows: Sequence[Sequence[Cell]]
    limit: int | None = TABLE_ROWS
    more: str = "rows"
    notes: Sequence[str] = field(default_factory=tuple)
    total: int | None = None


@dataclass(frozen=True)
class Heading:
    """A section title: bold in the terminal, a ``##`` heading in Markdown."""

    text: str
    level: int = 2


@dataclass(frozen=True)
class Details:
    """Blocks a reader opens when they want them: a ``<details>`` section in Markdown (closed,
    under its ``summary``); in the terminal the summary as a title, then the blocks."""

    summary: str
    blocks: Sequence["Block"]


Block = Union[Heading, Line, Table, Details]


def line(*parts: Cell, style: str | None = None) -> Line:
    """Shorthand for :meth:`Line.of`.

    >>> line("a", "b", style="dim").style
    'dim'
    """
    return Line.of(*parts, style=style)


def note(text: str) -> Line:
    """A dim line: what a claim rests on, a definition, a hint.

    >>> note("conditional on 5 runs").style
    'dim'
    """
    return Line.of(text, style="dim")


def blank() -> Line:
    """An empty line between sections.

    >>> blank().plain()
    ''
    """
    return Line(())
