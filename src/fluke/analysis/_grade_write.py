"""Every run's grade, written as it is made: what ``fluke grade --json`` and ``--jsonl`` print.

A :class:`GradeWriter` is the ``sink`` of :func:`fluke.analysis.grade`: it is handed each
grade's JSON as the grades come back, in order, and writes it at once, so a million grades
pass through and none is held. ``lines=True`` writes one grade per line and, last, one line
holding the answer (the result's JSON document: gate, luck rate, worst runs); otherwise one
JSON document, the answer with ``"runs"`` (every grade) streamed into it. Secret-shaped
values are redacted and control characters escaped in each grade, as in every document.

>>> import io
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run, ToolCall
>>> from fluke.analysis import grade
>>> ledger = open_ledger(":memory:")
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True),
...                        events=[ToolCall(tool="lookup", ok=True)]) for t in range(3)])
>>> out = io.BytesIO()
>>> writer = GradeWriter(out, lines=True)
>>> writer.close(grade(ledger, {"tools": ["lookup"]}, store=False, sink=writer))
>>> rows = [orjson.loads(row) for row in out.getvalue().splitlines()]
>>> [r.get("trial") for r in rows[:3]], rows[3]["kind"], rows[3]["runs_total"]
([0, 1, 2], 'grade', 3)
"""

from __future__ import annotations

from typing import IO, Any

import orjson

from ._result import JSON_FORMAT_VERSION, dumps

_HEAD = b'{\n  "format_version": %d,\n  "kind": "grade",\n  "runs": [' % JSON_FORMAT_VERSION


def _safe(raw: bytes) -> bytes:
    from ..record import may_hold_secret, redact

    if may_hold_secret(raw):
        return dumps(redact(orjson.loads(raw)), indent=False)
    if b"\xc2" in raw or b"\xe2" in raw:   # a C1 control or a bidi override may be inside: escaped
        return dumps(orjson.loads(raw), indent=False)
    return raw


class GradeWriter:
    """Writes grades to ``out`` (bytes) as they are made; :meth:`close` writes the answer."""

    def __init__(self, out: IO[bytes], *, lines: bool = False) -> None:
        self.out, self.lines, self.written = out, lines, 0

    def __call__(self, grades: list[bytes]) -> None:
        if not grades:
            return
        if self.lines:
            self.out.write(b"".join(_safe(g) + b"\n" for g in grades))
        else:
            head = _HEAD + b"\n    " if not self.written else b",\n    "
            self.out.write(head + b",\n    ".join(_safe(g) for g in grades))
        self.written += len(grades)

    def close(self, result: Any) -> None:
        """Write the answer (after the last grade) and flush."""
        doc = result.to_dict()
        if self.lines:
            self.out.write(dumps(doc, indent=False) + b"\n")
        else:
            rest = {k: v for k, v in doc.items() if k not in ("format_version", "kind")}
            if not self.written:
                self.out.write(_HEAD)
            else:
                self.out.write(b"\n  ")
            self.out.write(b"],\n" + dumps(rest)[2:] + b"\n")
        self.out.flush()
