"""Provenance: which sources supplied an identifier before a given call.

A run's texts (``user`` for every user message, ``tool:<name>`` for each tool's result or
error), in event order, are joined into one string, the *blob*, with a newline between
texts (a newline separates tokens, so no match spans two texts). A call at some point of
the run sees the texts fed before it: the blob's prefix up to a *limit*, the start offset
of the first text it has not been told. An identifier was supplied before the call exactly
when its earliest whole-token occurrence in the blob starts before that limit.

So each identifier is looked for once per run, lazily, when a call first uses it: one
substring scan over the blob (one ``str.find`` per hit, not one per text), with a
whole-token check at each hit, stopping at the first whole-token occurrence, or at the
asking call's limit. Its start is remembered (:attr:`Provenance.first`); every later call
answers with one dict look-up and a comparison (an identifier not found before a limit is
looked for again, from that limit on, only by a later call that asks). Taint asks one more thing, remembered the same
way: the earliest occurrence
in a source that is not untrusted (:attr:`Provenance.trusted`). The set of sources behind
an identifier is worked out only for the rare taint violation.

To keep the whole pass linear however many distinct identifiers a run uses, the scanning
work is budgeted: past :data:`BUDGET` times the characters of the blob (plus
:data:`FLOOR`), the index switches to a full inverted index, every text tokenised once,
token -> {source: first text}, and answers every later question from it.

Known limit: this is token matching, not data flow. A coincidental equal token (an order id
that also appears in an unrelated page) counts as a source.

>>> p = Provenance(["my order is W88213.", "W213 shipped"], ["user", "tool:lookup"],
...                untrusted=frozenset())
>>> call_before_lookup = p.limit(1)   # a call made after the user spoke, before lookup returned
>>> p.find("W88213") < call_before_lookup, p.find("W213") < call_before_lookup
(True, False)
>>> p.find("W213") < p.limit(2), p.find("88213") == NEVER
(True, True)
"""

from __future__ import annotations

import string
import sys
from bisect import bisect_right

from ._text import _SEPARATE

#: Substring scanning may read this many times the characters of the blob before the full index.
BUDGET = 16
FLOOR = 200_000
#: The start of an identifier that occurs nowhere: after every limit.
NEVER = sys.maxsize
#: Every character that separates tokens: ASCII ones but letters, digits and ``_-@.+``, and
#: every whitespace character (``str.isspace``, spelled out: one set look-up per test).
SEPARATORS = frozenset([chr(c) for c in range(128)
                        if chr(c) not in set(string.ascii_letters + string.digits + "_-@.+")]
                       + list("\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                              "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"))


def whole_token_at(text: str, tok: str, p: int, limit: int = NEVER) -> int:
    """The start of the first whole-token occurrence of ``tok`` in ``text`` at or after ``p``
    (optionally followed by a final dot), ending before ``limit``, or -1.

    >>> whole_token_at("order 88213 shipped", "213", 0), whole_token_at("order 213.", "213", 0)
    (-1, 6)
    """
    n, size, seps = len(tok), len(text), SEPARATORS
    p = text.find(tok, p, limit)
    while p >= 0:
        end = p + n
        if p == 0 or text[p - 1] in seps:
            if end == size or text[end] in seps:
                return p
            if text[end] == "." and (end + 1 == size or text[end + 1] in seps):
                return p
        p = text.find(tok, p + 1, limit)
    return -1


def whole_token_in(text: str, tok: str) -> bool:
    """Does ``tok`` occur in ``text`` as a whole token (optionally followed by a final dot)?

    >>> whole_token_in("order 88213 shipped", "213"), whole_token_in("order 213.", "213")
    (False, True)
    """
    return whole_token_at(text, tok, 0) >= 0


class Provenance:
    """The identifier -> sources index of one run (see the module docstring).

    ``texts`` are the run's texts in event order, ``owners`` the source of each.
    :attr:`first` and :attr:`trusted` map an identifier already asked about to where its
    earliest whole-token occurrence is (in any source; in a source not untrusted), or
    :data:`NEVER`; :meth:`find` and :meth:`find_trusted` fill them. Where: the occurrence's
    start, or, once the full index is on, the start of the text holding it; either is
    before a call's limit exactly when that text was fed before the call.
    """

    __slots__ = ("texts", "owners", "untrusted", "blob", "starts", "first", "upto", "trusted",
                 "trusted_upto", "scanned", "full")

    def __init__(self, texts: list[str], owners: list[str], *, untrusted: frozenset[str]) -> None:
        self.texts, self.owners, self.untrusted = texts, owners, untrusted
        self.blob = "\n".join(texts)
        starts, at = [], 0
        for text in texts:
            starts.append(at)
            at += len(text) + 1
        starts.append(at)       # the limit of a call that has been told every text
        self.starts = starts    # starts[k]: where text k begins in the blob
        self.first: dict[str, int] = {}
        self.upto: dict[str, int] = {}
        self.trusted: dict[str, int] = {}
        self.trusted_upto: dict[str, int] = {}
        self.scanned = 0
        self.full: dict[str, dict[str, int]] | None = None

    def limit(self, told: int) -> int:
        """The limit of a call made when the first ``told`` texts had been fed."""
        return self.starts[told]

    def find(self, tok: str, limit: int = NEVER) -> int:
        """Where ``tok``'s earliest whole-token occurrence is, if it is before ``limit``
        (:data:`NEVER`: none is).

        The scan stops at the first hit that is a whole token, or at ``limit``: an identifier
        no text holds is not looked for past the call asking. "None before the limit" is
        remembered too (:data:`NEVER` in :attr:`first`, the limit in :attr:`upto`), and a
        later call with a larger limit resumes from there. Every scan is charged to the budget.
        """
        if self.full is not None:
            got = self._owners(tok)
            p = self.first[tok] = self.starts[min(got.values())] if got else NEVER
            return p
        p = self.first.get(tok)
        if p is None:
            return self.ask(tok, limit)
        if p != NEVER:
            return p
        start = self.upto[tok]
        if start >= limit:
            return NEVER
        p = self._next(tok, start, limit)
        if p < 0:
            self.upto[tok] = limit
            return NEVER
        self.first[tok] = p
        return p

    def ask(self, tok: str, limit: int = NEVER) -> int:
        """:meth:`find` for an identifier not asked about yet: the grading loop's miss, so
        nothing to read back, and the scan (:meth:`_next` from 0) inlined."""
        if self.full is not None:
            return self.find(tok, limit)
        blob, seps = self.blob, SEPARATORS
        n, size = len(tok), len(blob)
        p = blob.find(tok, 0, limit)
        while p >= 0:
            end = p + n
            if (p == 0 or blob[p - 1] in seps) and (
                    end == size or blob[end] in seps
                    or (blob[end] == "." and (end + 1 == size or blob[end + 1] in seps))):
                break
            p = blob.find(tok, p + 1, limit)
        self.scanned += min(limit, size) if p < 0 else p
        if p < 0:
            p = NEVER
            self.upto[tok] = limit
        self.first[tok] = p
        if self.scanned > BUDGET * size + FLOOR:
            self._index_all()
        return p

    def find_trusted(self, tok: str, limit: int = NEVER) -> int:
        """Where ``tok``'s earliest whole-token occurrence in a text whose source is not
        untrusted is, if it is before ``limit`` (:data:`NEVER`: none is); remembered like
        :meth:`find`, resuming past the untrusted occurrences already read."""
        untrusted = self.untrusted
        if self.full is not None:
            got = self._owners(tok)
            ks = [k for src, k in got.items() if src not in untrusted]
            p = self.starts[min(ks)] if ks else NEVER
        else:
            p = self.trusted.get(tok)
            if p is not None and p != NEVER:
                return p
            start = self.trusted_upto.get(tok)
            if start is None:           # first asked: from the earliest occurrence on
                p = self.find(tok, limit)
            elif start >= limit:
                return NEVER
            else:                       # every occurrence before start is untrusted
                p = self._next(tok, start, limit)
            while 0 <= p < NEVER and self._owner(p) in untrusted:
                p = self._next(tok, p + 1, limit)
            if p < 0 or p == NEVER:
                p = NEVER
                self.trusted_upto[tok] = limit
        self.trusted[tok] = p
        return p

    def sources(self, tok: str, limit: int) -> set[str]:
        """Every source that supplied ``tok`` before ``limit`` (for a taint report)."""
        if self.full is not None:
            starts = self.starts
            return {src for src, k in self._owners(tok).items() if starts[k] < limit}
        out = set()
        p = self.find(tok, limit)
        while 0 <= p < limit:
            out.add(self._owner(p))
            p = self._next(tok, p + 1, limit)
        return out

    def _owner(self, p: int) -> str:
        return self.owners[bisect_right(self.starts, p) - 1]

    def _next(self, tok: str, p: int, limit: int) -> int:
        """The next whole-token occurrence in the blob at or after ``p`` and before ``limit``
        (-1: none), the scan charged to the budget; past it, the switch to the full index."""
        blob = self.blob   # a question under way when the index switches finishes its scan
        hit = whole_token_at(blob, tok, p, limit)
        self.scanned += (hit if hit >= 0 else min(limit, len(blob))) - p
        if self.scanned > BUDGET * len(blob) + FLOOR:
            self._index_all()
        return hit

    def _index_all(self) -> None:
        """Switch to the full inverted index: token -> {source: first text holding it}."""
        full: dict[str, dict[str, int]] = {}
        for k, (text, src) in enumerate(zip(self.texts, self.owners, strict=True)):
            for tok in set(text.translate(_SEPARATE).split()):
                got = full.get(tok)
                if got is None:
                    full[tok] = {src: k}
                elif src not in got:
                    got[src] = k
        self.full = full

    def _owners(self, tok: str) -> dict[str, int]:
        """From the full index: each source of ``tok`` (or ``tok.``), with its first text."""
        a, b = self.full.get(tok), self.full.get(tok + ".")
        if a and b:
            return {src: min(a.get(src, NEVER), b.get(src, NEVER)) for src in a.keys() | b.keys()}
        return a or b or {}
