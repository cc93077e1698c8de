"""Documents (seals, specs, predictions) and per-run grades stored in a ledger. A mixin of
:class:`fluke.ledger.Ledger`, which gives it ``execute``, ``query`` and its connection.

>>> import tempfile, os
>>> from fluke.ledger import open_ledger
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "docs.db"))
>>> d = ledger.put_document("note", {"text": "hello"})
>>> [doc.body for doc in ledger.documents("note")], d == ledger.put_document("note", {"text": "hello"})
([{'text': 'hello'}], True)
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import orjson

from ..errors import LedgerError
from ..record import canonical_json, digest
from ._types import Document


class DocumentStore:
    """Content-addressed documents by kind, and grades by spec digest and run hash."""

    execute: Any
    query: Any
    _sql: Any
    _conn: Any
    name: str

    def put_document(self, kind: str, body: dict[str, Any]) -> str:
        """Append a document (idempotent by content); return its SHA-256 digest."""
        from ._ingest import utcnow   # not at the top: a verb that only reads loads no ingest machinery

        doc_digest = digest(body)
        with self.atomic():
            self.execute("INSERT INTO documents (kind, digest, body, recorded_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT (kind, digest) DO NOTHING",
                         (kind, doc_digest, canonical_json(body).decode(), utcnow()))
        return doc_digest

    def documents(self, kind: str) -> list[Document]:
        """Every document of ``kind``, oldest first."""
        rows = self.query("SELECT digest, body, recorded_at FROM documents WHERE kind = ? "
                          "ORDER BY recorded_at, digest", (kind,))
        return [Document(d, kind, self._json(b, f"{kind} document {d[:12]}"), r) for d, b, r in rows]

    def _json(self, text: str, what: str) -> Any:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise LedgerError(f"{self.name}: {what} is not valid JSON ({exc.msg}); the ledger was changed "
                              "outside fluke. Restore it from a backup") from None

    def put_grades(self, spec_digest: str, rows: Iterable[tuple[str, dict[str, Any] | str | bytes]]) -> int:
        """Store per-run grades under a spec digest (one transaction); return how many were new.

        A body is a dict or its canonical JSON already serialised (a grading worker's output).
        """
        from ._ingest import utcnow

        now = utcnow()
        params = [(spec_digest, run_hash,
                   body if isinstance(body, str) else body.decode() if isinstance(body, bytes)
                   else canonical_json(body).decode(), now) for run_hash, body in rows]
        if not params:
            return 0
        with self.atomic(), self.faults():
            cur = self._conn.cursor()   # both drivers sum an executemany's rows into rowcount
            cur.executemany(self._sql("INSERT INTO grades (spec_digest, run_hash, body, recorded_at) "
                                      "VALUES (?, ?, ?, ?) ON CONFLICT (spec_digest, run_hash) DO NOTHING"), params)
            return max(cur.rowcount, 0)

    def grade_bodies(self, spec_digest: str, hashes: Sequence[str] | None = None) -> dict[str, str]:
        """The stored grades for a spec digest as their JSON, by run hash (parsed when needed);
        only those of the runs ``hashes`` names when given."""
        if hashes is None:
            return dict(self.query("SELECT run_hash, body FROM grades WHERE spec_digest = ?", (spec_digest,)))
        found: dict[str, str] = {}
        hashes = list(hashes)
        for i in range(0, len(hashes), 500):   # under every backend's limit on parameters
            part = hashes[i:i + 500]
            found.update(self.query(f"SELECT run_hash, body FROM grades WHERE spec_digest = ? AND run_hash IN "
                                    f"({', '.join('?' * len(part))})", (spec_digest, *part)))
        return found

    def grades(self, spec_digest: str) -> dict[str, dict[str, Any]]:
        """The stored grades for a spec digest, by run hash."""
        return {h: self._json(b, f"the grade of run {h[:12]}") for h, b in self.grade_bodies(spec_digest).items()}
