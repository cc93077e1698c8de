"""Export runs as fluke JSONL: a streaming copy of the stored bodies, lossless by default.

Each line is a run's stored body (the canonical JSON its hash is taken over) with its
``source`` added, written without building a :class:`~fluke.record.Run`: re-ingested, every
run gets back its hash. While copying, the export counts the runs that hold secret-shaped
values, so whoever shares the file can be told. With ``redact=True`` those runs are written
redacted instead (:func:`fluke.record.redact`); their content, and so their hash, changes.

>>> import io, os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Run, UserMessage
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "x.db"))
>>> leaky = Run(scenario="b", events=[UserMessage(text="key sk_live_4eC39HqLyjWDarjtT1zd")])
>>> _ = ledger.ingest([Run(scenario="a"), leaky])
>>> out = io.BytesIO()
>>> export_runs(ledger, out)
ExportResult(runs=2, with_secrets=1, redacted=False)
>>> export_runs(ledger, io.BytesIO(), redact=True).describe()
'wrote 2 runs; 1 held secret-shaped values and was written redacted (its hash changes on ingest)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Sequence

import orjson

from ..errors import UsageError
from ..record import holds_secret, may_hold_secret
from ..record import redact as redact_value

if TYPE_CHECKING:
    from ._base import Ledger


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: ``runs`` lines, of which ``with_secrets`` held secret-shaped
    values (counted before any redaction; None when the export was told not to look);
    ``redacted`` says whether those were hidden."""

    runs: int
    with_secrets: int | None
    redacted: bool

    def describe(self) -> str:
        """One line for a person.

        >>> ExportResult(3, 0, False).describe()
        'wrote 3 runs; none holds a secret-shaped value'
        >>> ExportResult(3, 2, False).describe()
        'wrote 3 runs; 2 hold secret-shaped values (keys, tokens, passwords): share with care, or export with --redact'
        """
        head = f"wrote {self.runs} run{'s' if self.runs != 1 else ''}"
        n = self.with_secrets
        if n is None:
            return f"{head}; not checked for secret-shaped values"
        if not n:
            return f"{head}; none holds a secret-shaped value"
        if self.redacted:
            return (f"{head}; {n} held secret-shaped values and {'was' if n == 1 else 'were'} written redacted "
                    f"({'its hash changes' if n == 1 else 'their hashes change'} on ingest)")
        return (f"{head}; {n} {'holds' if n == 1 else 'hold'} secret-shaped values (keys, tokens, passwords): "
                "share with care, or export with --redact")

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON values.

        >>> ExportResult(1, 0, True).to_dict()
        {'runs': 1, 'with_secrets': 0, 'redacted': True}
        """
        return {"runs": self.runs, "with_secrets": self.with_secrets, "redacted": self.redacted}


def export_runs(ledger: "Ledger", out: IO[bytes], *, redact: bool = False, scenario: str | None = None,
                version: str | Sequence[str] | None = None, condition: str | None = None,
                since: str | None = None, until: str | None = None, limit: int | None = None,
                scan: bool = True) -> ExportResult:
    """Write the runs matching the filters (those of :meth:`Ledger.runs`) to ``out`` as JSONL.

    Streams: one stored body at a time, never a parsed run unless it may hold a secret.
    ``redact=False`` writes every run exactly as stored (re-ingests to the same hashes);
    ``redact=True`` writes the runs holding secret-shaped values redacted. Either way the
    result counts those runs. ``scan=False`` (only without ``redact``) skips the count, a
    plain copy: the quick test on each body costs about twice a run's validation, because
    it searches the text for some twenty anchors.
    """
    if redact and not scan:
        raise UsageError("export_runs: redact=True needs scan=True (a run is redacted when the scan flags it)")
    written = flagged = 0
    for body, source in ledger.run_bodies(scenario=scenario, version=version, condition=condition,
                                          since=since, until=until, limit=limit):
        text = body.decode() if isinstance(body, bytes) else body
        if source is not None:   # the body is a non-empty object: splice the source in
            text = f'{text[:-1]},"source":{source.decode() if isinstance(source, bytes) else source}}}'
        line = text.encode()
        if scan and may_hold_secret(line):
            doc = orjson.loads(line)
            if holds_secret(doc):
                flagged += 1
                if redact:
                    line = orjson.dumps(redact_value(doc))
        out.write(line + b"\n")
        written += 1
    return ExportResult(written, flagged if scan else None, redact)
