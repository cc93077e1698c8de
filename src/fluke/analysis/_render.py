"""Render a result's blocks to terminal text or to Markdown, treating every string as untrusted.

One mechanism for every verb: strings are never parsed as rich markup, control characters are
shown as visible escapes, secrets are redacted. Tables keep their data: no cell is squeezed to
``0…``; the key column (the scenario) takes the width the others leave, and a table that cannot
fit is printed wider than the terminal rather than cut. Long tables show their first ``limit``
rows (the producer puts the worst first) and say how many more there are.

>>> from fluke.analysis._document import Column, Table, line
>>> blocks = [line("verdict: ", "[red]x[/red] \\x1b[2J"), Table("t", [Column("s", key=True)], [["a|b"]])]
>>> print(to_text(blocks))
verdict: [red]x[/red] \\x1b[2J
t
s
───
a|b
>>> print(to_markdown(blocks))
## verdict: \\[red\\]x\\[/red\\] \\\\x1b\\[2J
<BLANKLINE>
**t**
<BLANKLINE>
| s |
| --- |
| a\\|b |
<BLANKLINE>
"""

from __future__ import annotations

import io
import re
import sys
from typing import Iterable, Sequence

from ..format import safe
from ._document import Block, Cell, Details, Heading, Line, Span, Table

#: rich styles for the document's style names.
_RICH = {"bold": "bold", "dim": "dim", "good": "green", "bad": "bold red", "warn": "yellow", "code": "cyan"}
#: Width used when the output is not a terminal: wide enough never to wrap a line or a table.
PIPE_WIDTH = 100_000
#: GitHub refuses a comment longer than this many characters.
GITHUB_LIMIT = 65_536


def _cell_text(cell: Cell) -> tuple[str, str | None]:
    if isinstance(cell, Span):
        return safe(cell.text, newlines=False), cell.style
    return safe(cell, newlines=False), None


def _shown(table: Table, all_rows: bool) -> tuple[Sequence, int]:
    rows = table.rows
    size = len(rows) if table.total is None else max(table.total, len(rows))
    if all_rows or table.limit is None or size <= table.limit:
        return rows, size - len(rows)
    return rows[:table.limit], size - table.limit


def _more_text(table: Table, hidden: int, how: str) -> str:
    return f"… and {hidden} more {table.more} ({how})"


# -- terminal text ---------------------------------------------------------------------------
def _rich_text(spans: Iterable[Span], style: str | None):
    from rich.text import Text

    text = Text(style=_RICH.get(style, "") if style else "")
    for span in spans:
        text.append(safe(span.text), style=_RICH.get(span.style) if span.style else None)
    return text


def _rich_table(table: Table, rows: Sequence, width: int):
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table as RichTable
    from rich.text import Text

    cells = [[_cell_text(c) for c in row] for row in rows]
    out = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    widths = []
    for j, col in enumerate(table.columns):
        longest = max([cell_len(col.name)] + [cell_len(r[j][0]) for r in cells if j < len(r)])
        widths.append(longest)
        out.add_column(safe(col.name, newlines=False), justify="right" if col.align == "right" else "left",
                       no_wrap=not col.key, overflow="fold" if col.key else "ellipsis",
                       min_width=min(longest, 12) if col.key else longest)
    for r in cells:
        out.add_row(*(Text(t, style=_RICH.get(s) if s else "") for t, s in r))
    # The narrowest the table can be with every non-key cell whole and key cells folded at 12.
    need = sum(w if not c.key else min(w, 12) for w, c in zip(widths, table.columns, strict=True)) + 2 * len(widths)
    return out, max(width, need)


def render_text(blocks: Sequence[Block], console, *, all_rows: bool = False, how_all: str = "--all") -> None:
    """Print ``blocks`` on a rich ``console`` (colours where it is a terminal)."""
    width = console.width
    for block in blocks:
        if isinstance(block, Details):
            console.print(_rich_text([Span(block.summary)], "bold"), soft_wrap=True)
            render_text(block.blocks, console, all_rows=all_rows, how_all=how_all)
        elif isinstance(block, Heading):
            console.print(_rich_text([Span(block.text)], "bold"), soft_wrap=True)
        elif isinstance(block, Line):
            console.print(_rich_text(block.spans, block.style), soft_wrap=True)
        else:
            rows, hidden = _shown(block, all_rows)
            table, need = _rich_table(block, rows, width)
            if block.title:
                console.print(_rich_text([Span(block.title)], "bold"), soft_wrap=True)
            console.print(table, width=need, crop=False)
            for text in block.notes:
                console.print(_rich_text([Span(text)], "dim"), soft_wrap=True)
            if hidden:
                console.print(_rich_text([Span(_more_text(block, hidden, how_all))], "dim"), soft_wrap=True)


def make_console(file=None, *, width: int | None = None, colour: bool | None = None):
    """A rich console: terminal width on a terminal, :data:`PIPE_WIDTH` (no wrapping) when piped.

    >>> make_console(io.StringIO()).width == PIPE_WIDTH
    True
    """
    import shutil

    from rich.console import Console

    file = file if file is not None else sys.stdout
    tty = is_terminal(file)
    if width is None:
        width = shutil.get_terminal_size((100, 24)).columns if tty else PIPE_WIDTH
    return Console(file=file, width=width, highlight=False, markup=False, emoji=False,
                   force_terminal=tty if colour is None else colour,
                   color_system="auto" if (tty if colour is None else colour) else None,
                   soft_wrap=False, legacy_windows=False)


def is_terminal(file) -> bool:
    """Whether ``file`` is a terminal (colours and its width) rather than a pipe or a file."""
    return hasattr(file, "isatty") and file.isatty()


def to_text(blocks: Sequence[Block], *, width: int | None = None, all_rows: bool = False) -> str:
    """Blocks as plain text (no colour), at ``width`` columns (default: never wrapped)."""
    if width is None or width >= PIPE_WIDTH:
        text = plain_text(blocks, all_rows=all_rows)
    else:
        buffer = io.StringIO()
        render_text(blocks, make_console(buffer, width=width, colour=False), all_rows=all_rows)
        text = buffer.getvalue()
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n")


# -- text for a pipe or a file, without rich ----------------------------------------------------
#: Characters outside ASCII that fluke's own text uses, each one cell wide as rich counts it
#: (``tests/analysis/test_plain_text.py`` asks rich): a table of them needs no width table.
NARROW = frozenset("—–…·•≤≥±×→←↑↓≈≠√∞µ°")


def _narrow(text: str) -> bool:
    return text.isascii() or all(c.isascii() or c in NARROW for c in text)


def _width(text: str) -> int:
    """Terminal cells ``text`` takes (a wide character two), as rich counts them."""
    if _narrow(text):
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def _zero_width(text: str) -> bool:
    """Does ``text`` hold a character of no width (a combining mark, a zero-width space)? rich
    lays such a table out by rules of its own, so it draws that one."""
    if _narrow(text):
        return False
    from rich.cells import cell_len

    return any(cell_len(ch) == 0 for ch in text)


def _plain_line(spans: Iterable[Span]) -> str:
    text = "".join(safe(span.text) for span in spans)
    if "\t" in text:   # rich expands a tab to the next stop of 8 cells: let it say where that is
        from rich.text import Text

        lines = []
        for part in text.split("\n"):
            expanded = Text(part)
            expanded.expand_tabs(8)
            lines.append(expanded.plain)
        return "\n".join(lines)
    return text


def _plain_table(table: Table, rows: Sequence) -> list[str] | None:
    """The lines rich draws for ``table`` (``SIMPLE_HEAD``, no edge, padding collapsed) at a width
    that never folds a cell: each column as wide as its widest cell, two spaces between columns,
    the header underlined across the whole table. None if a cell holds a character of no width, or
    the table has no columns or a row more cells than columns (rich has rules of its own for those)."""
    names = [safe(col.name, newlines=False) for col in table.columns]
    if not names or any(len(row) > len(names) for row in rows):
        return None
    cells = [[_cell_text(c)[0] for c in row] + [""] * (len(names) - len(row)) for row in rows]
    if any(_zero_width(name) for name in names) or any(_zero_width(c) for row in cells for c in row):
        return None
    widths = [max([_width(name)] + [_width(r[j]) for r in cells]) for j, name in enumerate(names)]
    right = [col.align == "right" for col in table.columns]

    def row_line(values: Sequence[str]) -> str:
        out = []
        for value, width, flush_right in zip(values, widths, right, strict=False):
            if flush_right:   # rich strips what trails a right-justified cell before padding it
                value = value.rstrip()
            pad = " " * (width - _width(value))
            out.append(pad + value if flush_right else value + pad)
        return "  ".join(out)

    return [row_line(names), "─" * (sum(widths) + 2 * (len(widths) - 1))] + [row_line(r) for r in cells]


def plain_text(blocks: Sequence[Block], *, all_rows: bool = False, how_all: str = "--all") -> str:
    """What :func:`render_text` prints on a console that is not a terminal (no colour, never
    wrapped), made without rich: a verb whose output goes to a pipe or a file skips loading and
    running rich's console. Checked against rich's own output (``tests/analysis/test_plain_text.py``).

    >>> from fluke.analysis._document import Column
    >>> print(plain_text([Table("", [Column("s", key=True), Column("n", align="right")], [["a", "10"]])]), end="")
    s   n
    ─────
    a  10
    """
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Details):
            out.append(_plain_line([Span(block.summary)]) + "\n")
            out.append(plain_text(block.blocks, all_rows=all_rows, how_all=how_all))
        elif isinstance(block, Heading):
            out.append(_plain_line([Span(block.text)]) + "\n")
        elif isinstance(block, Line):
            out.append(_plain_line(block.spans) + "\n")
        else:
            rows, hidden = _shown(block, all_rows)
            lines = _plain_table(block, rows)
            if lines is None:
                buffer = io.StringIO()
                render_text([block], make_console(buffer), all_rows=all_rows, how_all=how_all)
                out.append(buffer.getvalue())
                continue
            if block.title:
                out.append(_plain_line([Span(block.title)]) + "\n")
            out.extend(line + "\n" for line in lines)
            out.extend(_plain_line([Span(text)]) + "\n" for text in block.notes)
            if hidden:
                out.append(_plain_line([Span(_more_text(block, hidden, how_all))]) + "\n")
    return "".join(out)


# -- Markdown ----------------------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")
#: ``@user`` and ``#123`` (``org/repo#123``, ``GH-123``) that GitHub would turn into a mention or
#: a reference: a zero-width space after the ``@``/``#`` keeps them text and notifies nobody.
_REFERENCE = re.compile(r"(@|\\#|(?<=GH)-)(?=[A-Za-z0-9])", re.IGNORECASE)
#: A word (no spaces: a scenario id, a version label) longer than this is cut in Markdown.
NAME_SHOWN = 120
#: A span longer than this is cut in Markdown (a long sentence of names).
SPAN_SHOWN = 2_000
_LONG_WORD = re.compile(r"\S{%d,}" % (NAME_SHOWN + 1))


def bounded(text: str) -> str:
    """``text`` with every word over :data:`NAME_SHOWN` characters, and the whole over
    :data:`SPAN_SHOWN`, cut with a marker saying how much was left out.

    >>> cut = bounded("scenario " + "x" * 500 + " failed")
    >>> len(cut.split()[1]), cut.split(" ", 2)[2]
    (101, '(+400 characters) failed')
    """
    text = _LONG_WORD.sub(lambda m: f"{m.group()[:NAME_SHOWN - 20]}… (+{len(m.group()) - NAME_SHOWN + 20} "
                                    "characters)", text)
    if len(text) > SPAN_SHOWN:
        text = f"{text[:SPAN_SHOWN - 40]}… (+{len(text) - SPAN_SHOWN + 40} characters)"
    return text


def md_escape(text: str) -> str:
    """A string made inert in GitHub Markdown: no emphasis, links, HTML, table breaks, mentions
    or issue references; long names cut (:func:`bounded`).

    >>> md_escape("a_b <img src=x> [x](y)")
    'a\\\\_b \\\\<img src=x\\\\> \\\\[x\\\\](y)'
    >>> md_escape("ask @octocat about #12")
    'ask @&#8203;octocat about \\\\#&#8203;12'
    """
    return _REFERENCE.sub(r"\1&#8203;", _MD_SPECIAL.sub(r"\\\1", bounded(safe(text, newlines=False))))


def _md_span(span: Span) -> str:
    text = md_escape(span.text)
    if not text.strip() or span.style in (None, "dim"):
        return text
    if span.style == "code":
        return f"`{bounded(safe(span.text, newlines=False)).replace('`', chr(39))}`"
    return f"**{text.strip()}**" + (" " if text.endswith(" ") else "")


def _md_line(line: Line) -> str:
    text = "".join(_md_span(s) for s in line.spans)
    if line.style == "dim" and text.strip():
        return f"_{text.strip()}_"
    if line.style in ("bold", "bad", "good", "warn") and text.strip():
        return f"**{text.strip()}**"
    return text


def to_markdown(blocks: Sequence[Block], *, all_rows: bool = False, limit: int = GITHUB_LIMIT) -> str:
    """Blocks as GitHub Markdown, cut (with a count) to stay under ``limit`` characters.

    Written to be read in a pull request: the first line (the verdict) becomes a ``##`` heading
    when the result does not open with one; empty lines are dropped (paragraphs separate).
    """
    blocks = list(blocks)
    if blocks and isinstance(blocks[0], Line) and blocks[0].plain().strip():
        blocks[0] = Heading(blocks[0].plain().strip())
    return _cut(_md_blocks(blocks, all_rows).rstrip() + "\n", limit)


def _md_blocks(blocks: Sequence[Block], all_rows: bool) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, Details):
            # a blank line after <summary> lets GitHub render the Markdown inside
            parts.append(f"<details><summary>{md_escape(block.summary)}</summary>\n\n"
                         + _md_blocks(block.blocks, all_rows).rstrip() + "\n\n</details>\n\n")
        elif isinstance(block, Heading):
            parts.append(f"{'#' * max(1, min(block.level, 6))} {md_escape(block.text)}\n\n")
        elif isinstance(block, Line):
            if block.plain().strip():
                parts.append(_md_line(block) + "\n\n")  # each line its own paragraph
        else:
            rows, hidden = _shown(block, all_rows)
            head = [md_escape(c.name) for c in block.columns]
            rule = ["---:" if c.align == "right" else "---" for c in block.columns]
            body = [f"**{md_escape(block.title)}**\n\n" if block.title else "",
                    "| " + " | ".join(head) + " |\n", "| " + " | ".join(rule) + " |\n"]
            body += ["| " + " | ".join(_md_span(c if isinstance(c, Span) else Span(c)) for c in row) + " |\n"
                     for row in rows]
            for text in block.notes:
                body.append(f"\n_{md_escape(text)}_\n")
            if hidden:
                body.append(f"\n_{md_escape(_more_text(block, hidden, 'in the JSON output'))}_\n")
            parts.append("".join(body) + "\n")
    return "".join(parts)


def _cut(text: str, limit: int) -> str:
    """Cut at a line end to stay under ``limit``, closing any ``<details>`` left open."""
    if len(text) <= limit:
        return text
    tail = "\n\n_… cut here to stay under GitHub's comment limit; the whole answer is in the JSON output._\n"
    keep = text[: limit - len(tail) - 64]
    keep = keep[: keep.rfind("\n") + 1] if "\n" in keep else keep
    unclosed = keep.count("<details>") - keep.count("</details>")
    return keep + "\n</details>\n" * unclosed + tail
