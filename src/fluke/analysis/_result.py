"""The base of every answer: a frozen result that prints itself to text, Markdown and JSON.

A subclass is a frozen dataclass naming what it is (``BeliefResult``), with ``kind`` (the JSON
document's kind), :meth:`Result.payload` (plain data) and :meth:`Result.blocks` (the document
to render). Everything a person or a machine reads goes through here, so redaction and escaping
happen in one place.

>>> from dataclasses import dataclass
>>> from fluke.analysis._document import line
>>> @dataclass(frozen=True)
... class Count(Result):
...     kind = "count"
...     n: int
...     def payload(self): return {"n": self.n}
...     def blocks(self): return [line(f"{self.n} runs")]
>>> Count(3).to_dict()
{'format_version': 1, 'kind': 'count', 'n': 3}
>>> print(Count(3))
3 runs
"""

from __future__ import annotations

import re
import sys
from typing import Any, ClassVar

import orjson

from ._document import Block
from ._render import is_terminal, make_console, plain_text, render_text, to_markdown, to_text

#: The version of every JSON document fluke prints. Bump on an incompatible change.
JSON_FORMAT_VERSION = 1
#: The renderings every result has.
FORMATS = ("text", "markdown", "json", "github-summary", "github")


def _default(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")


# C1 controls (U+0080–U+009F), line and paragraph separators and bidi overrides, as UTF-8: JSON allows
# them raw inside strings, but a terminal reading U+009B as CSI would act on them.
_RAW_CONTROLS = re.compile(rb"\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]")


def _escape(match: re.Match) -> bytes:
    return b"\\u%04x" % ord(match.group().decode("utf-8"))


def dumps(doc: dict[str, Any], *, indent: bool = True) -> bytes:
    """One JSON document by orjson: NaN and infinities become null; numpy values are plain numbers.

    Every control character is escaped (orjson escapes C0; C1 and bidi overrides are escaped here).

    >>> dumps({"p": float("nan"), "s": "a\x9bb"}, indent=False)
    b'{"p":null,"s":"a\\\\u009bb"}'
    """
    option = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS | (orjson.OPT_INDENT_2 if indent else 0)
    data = orjson.dumps(doc, default=_default, option=option)
    if b"\xc2" in data or b"\xe2" in data:
        data = _RAW_CONTROLS.sub(_escape, data)
    return data


class Result:
    """An answer to one question asked of a ledger. Subclasses are frozen dataclasses."""

    kind: ClassVar[str] = "result"

    def payload(self) -> dict[str, Any]:
        """The answer as plain data (what ``--json`` prints beside ``format_version`` and ``kind``)."""
        raise NotImplementedError

    def blocks(self) -> list[Block]:
        """The answer as a document: lines and tables, the verdict first."""
        raise NotImplementedError

    def annotations(self) -> list[tuple[str, str, str]]:
        """``(level, title, message)`` for GitHub annotations: here one notice, the verdict line."""
        from ._document import Heading, Line

        first = next((b for b in self.blocks() if isinstance(b, (Heading, Line))), None)
        text = first.text if isinstance(first, Heading) else first.plain() if first is not None else self.kind
        return [("notice", f"fluke {self.kind}", text)]

    def to_dict(self) -> dict[str, Any]:
        """``{"format_version": 1, "kind": ..., **payload}`` with every secret-shaped string redacted."""
        from ..record import redact

        return {"format_version": JSON_FORMAT_VERSION, "kind": self.kind, **redact(self.payload())}

    def to_json(self, *, indent: bool = True) -> str:
        """:meth:`to_dict` as one JSON document (NaN as null)."""
        return dumps(self.to_dict(), indent=indent).decode()

    def render(self, fmt: str = "text", *, width: int | None = None, all_rows: bool = False) -> str:
        """The answer as ``"text"`` (plain, unwrapped unless ``width``), ``"markdown"`` (a pull-request
        comment), ``"json"``, ``"github-summary"`` (GitHub's job summary) or ``"github"`` (annotations)."""
        if fmt == "text":
            return to_text(self.blocks(), width=width, all_rows=all_rows)
        if fmt == "markdown":
            return to_markdown(self.blocks(), all_rows=all_rows)
        if fmt == "json":
            return self.to_json()
        if fmt == "github-summary":   # GitHub's job summary: every row, under its 1 MiB
            from ._github import SUMMARY_LIMIT

            return to_markdown(self.blocks(), all_rows=True, limit=SUMMARY_LIMIT)
        if fmt == "github":
            from ._github import to_annotations

            return to_annotations(self.annotations())
        from ..errors import UsageError

        raise UsageError(f"format={fmt!r} is not one of {', '.join(FORMATS)}")

    def print(self, file=None, *, all_rows: bool = False) -> None:
        """Print the text rendering (with colour on a terminal), as lifelines' ``print_summary`` does."""
        file = file if file is not None else sys.stdout
        if not is_terminal(file):   # no colour, no wrapping: the same text, without rich's console
            file.write(plain_text(self.blocks(), all_rows=all_rows))
            return
        render_text(self.blocks(), make_console(file), all_rows=all_rows)

    def __str__(self) -> str:
        return self.render("text")
