"""Run listings written as they stream: ``runs --json`` (one document) and ``runs --jsonl``.

No list of runs is built: each run is read, turned into its entry ``{"hash", "version", "run"}``
(the run redacted as every JSON output is), written, and dropped. ``--json`` writes the same
document :class:`fluke.analysis.RunsResult` gives (``format_version``, ``kind``, ``total``,
``runs``), indented the same way, with each run's keys in sorted order (as stored) where the
listing follows the record's field order; ``--jsonl`` writes one entry per line. No Run is
built: each entry is the stored JSON, so a listing runs at the speed of a copy.

>>> import io, json, os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "w.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t > 0))
...                    for t in range(3)])
>>> out = io.BytesIO()
>>> write_runs(ledger, out, lines=True)
3
>>> [json.loads(x)["run"]["trial"] for x in out.getvalue().splitlines()]
[0, 1, 2]
>>> out = io.BytesIO()
>>> write_runs(ledger, out, limit=2)
2
>>> doc = json.loads(out.getvalue()); doc["kind"], doc["total"], len(doc["runs"])
('runs', 3, 2)
"""

from __future__ import annotations

from typing import IO

from ._result import JSON_FORMAT_VERSION, dumps
from ._select import EmptyLedger, require_runs, select_versions


def write_runs(ledger, out: IO[bytes], *, lines: bool = False, version: str | None = None,
               scenario: str | None = None, condition: str | None = None, since: str | None = None,
               until: str | None = None, limit: int | None = None) -> int:
    """Write the runs :func:`fluke.analysis.list_runs` lists to ``out`` as they stream; how many.

    ``lines`` writes JSON lines (one ``{"hash", "version", "run"}`` per line); otherwise one
    indented document equal, as JSON, to ``list_runs(...).to_json()``.
    """
    from ..record import may_hold_secret, redact

    chosen = select_versions(ledger, version)
    if chosen is None:
        require_runs(ledger)
    filters = dict(version=chosen, scenario=scenario, condition=condition, since=since, until=until)
    if not lines:
        total = ledger.count(**filters)   # every match, as the listing says (even past ``limit``)
        if not total and chosen is None and not any((scenario, condition, since, until)):
            raise EmptyLedger()
        head = dumps({"format_version": JSON_FORMAT_VERSION, "kind": "runs", "total": total, "runs": []})
        out.write(head[:head.rindex(b"[")] + b"[")
    import hashlib

    import orjson

    from ._facts import identity_names

    written = 0
    for body, source in ledger.run_bodies(limit=limit, **filters):
        # the stored body is the run's content (keys sorted); with its source it is the Run's JSON
        doc = orjson.loads(body)
        doc["source"] = None if source is None else orjson.loads(source)
        raw = body.encode() if isinstance(body, str) else body
        entry = {"hash": hashlib.sha256(raw).hexdigest(), "version": identity_names(doc["identity"])[0], "run": doc}
        flat = dumps(entry, indent=False)
        if may_hold_secret(flat):   # else no string is secret-shaped and redact would change nothing
            entry = redact(entry)
            flat = dumps(entry, indent=False)
        if lines:
            out.write(flat + b"\n")
        else:
            body = dumps(entry).replace(b"\n", b"\n    ")
            out.write((b"\n    " if not written else b",\n    ") + body)
        written += 1
    if not lines:
        out.write(b"\n  ]\n}\n" if written else b"]\n}\n")
    elif not written and chosen is None and not any((scenario, condition, since, until)):
        raise EmptyLedger()
    return written
