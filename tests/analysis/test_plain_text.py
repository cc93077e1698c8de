"""Text for a pipe or a file is made without rich's console (``plain_text``): it must be what rich
prints there, character for character. rich is the oracle: random documents (wide characters,
tabs, newlines, escapes, secrets, empty and short rows, cut tables) are drawn both ways."""

from __future__ import annotations

import io
import random

from fluke.analysis._document import Column, Details, Heading, Line, Span, Table
from fluke.analysis._render import _plain_table, make_console, plain_text, render_text, to_text

PIECES = ["a", "scn-12", "0.0% (0/1)", "—", "≤ ±", "µs…", "界面", "é", "x\ty", "two\nlines", " lead", "trail ", "",
          "\x1b[2J", "key AKIAIOSFODNN7EXAMPLE", "[red]x[/red]", "|", "1,234", "🙂", "ﾊﾝｶｸ", "tab\tat\tstops"]
#: Characters of no width, which rich lays out by rules of its own (plain_text lets rich draw such a table).
ZERO_WIDTH = ["\u200b", "e\u0301"]
STYLES = [None, "bold", "dim", "good", "bad", "warn", "code"]


def _text(rng: random.Random) -> str:
    pieces = PIECES + ZERO_WIDTH if rng.random() < 0.1 else PIECES
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 3)))


def _cell(rng: random.Random):
    text = _text(rng)
    return Span(text, rng.choice(STYLES)) if rng.random() < 0.3 else text


def _table(rng: random.Random) -> Table:
    columns = [Column(_text(rng) or "c", align=rng.choice(["left", "right"]), key=j == 0)
               for j in range(rng.randint(1, 5))]
    rows = [[_cell(rng) for _ in range(rng.randint(max(1, len(columns) - 1), len(columns)))]
            for _ in range(rng.randint(0, 8))]
    return Table(rng.choice(["", "cells", _text(rng)]), columns, rows, limit=rng.choice([None, 3, 25]),
                 more=rng.choice(["rows", "scenarios"]), notes=tuple(_text(rng) for _ in range(rng.randint(0, 2))),
                 total=rng.choice([None, len(rows) + 4]))


def _blocks(rng: random.Random, depth: int = 0) -> list:
    out = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        if kind < 0.35:
            out.append(Line(tuple(Span(_text(rng), rng.choice(STYLES)) for _ in range(rng.randint(0, 3))),
                            rng.choice(STYLES)))
        elif kind < 0.75:
            out.append(_table(rng))
        elif kind < 0.85:
            out.append(Heading(_text(rng)))
        elif depth < 2:
            out.append(Details(_text(rng), _blocks(rng, depth + 1)))
    return out


def _rich(blocks, all_rows: bool) -> str:
    buffer = io.StringIO()
    render_text(blocks, make_console(buffer), all_rows=all_rows)
    return buffer.getvalue()


def test_plain_text_is_what_rich_prints_to_a_pipe():
    rng = random.Random(37)
    tables = plain = 0
    for case in range(150):
        blocks = _blocks(rng)
        all_rows = rng.random() < 0.3
        assert plain_text(blocks, all_rows=all_rows) == _rich(blocks, all_rows), case
        for table in _tables(blocks):
            tables += 1
            plain += _plain_table(table, table.rows) is not None
    assert tables > 200 and plain > 0.7 * tables   # most were drawn without rich, not handed back to it


def _tables(blocks):
    for block in blocks:
        if isinstance(block, Table):
            yield block
        elif isinstance(block, Details):
            yield from _tables(block.blocks)


def test_a_table_with_a_zero_width_character_is_drawn_as_rich_draws_it():
    for name in ("\u200b", "cafe\u0301"):
        blocks = [Table("", [Column("c", key=True), Column(name, align="right")], [["", "1,234"], ["a"]])]
        assert plain_text(blocks) == _rich(blocks, False)
    for odd in (Table("t", [Column("c")], [["a", "extra cell"]]), Table("t", [], [])):
        assert _plain_table(odd, odd.rows) is None and plain_text([odd]) == _rich([odd], False)


def test_a_wide_table_is_not_cut_and_a_secret_not_shown():
    long = "s" * 300
    blocks = [Table("t", [Column("scenario", key=True), Column("passed", align="right")],
                    [[long, "1"], ["ghp_" + "a" * 36, "22"]])]
    text = plain_text(blocks)
    assert text == _rich(blocks, False)
    assert long in text and "ghp_" not in text and "[REDACTED" in text


def test_result_print_to_a_file_is_its_text(tmp_path):
    """``Result.print`` to a file (not a terminal) writes what ``render('text')`` gives, line ends kept."""
    from fluke.analysis import summary
    from fluke.ledger import open_ledger
    from fluke.record import Identity, Outcome, Run

    ledger = open_ledger(str(tmp_path / "l.db"))
    ledger.ingest([Run(scenario=f"s{i % 60}", trial=i // 60, identity=Identity(model="m" if i % 2 else "n"),
                       outcome=Outcome(passed=i % 3 == 0)) for i in range(240)])
    result = summary(ledger)
    out = io.StringIO()
    result.print(out)
    assert out.getvalue() == _rich(result.blocks(), False)
    assert to_text(result.blocks()) == "\n".join(line.rstrip() for line in out.getvalue().split("\n")).rstrip("\n")
    assert "… and" in out.getvalue()   # 30 scenario cells a version: the table is cut at 25


def test_the_characters_counted_without_rich_are_one_cell_wide_for_rich():
    from rich.cells import cell_len

    from fluke.analysis._render import NARROW, _width

    assert all(cell_len(c) == 1 for c in NARROW)
    assert _width("—" * 3 + "a") == 4 and _width("界面") == cell_len("界面") == 4
