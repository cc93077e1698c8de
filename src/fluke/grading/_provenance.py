"""Provenance: which sources supplied an identifier before a given call, in one pass.

The texts of a run are fed in event order (``user`` for every user message, ``tool:<name>``
for each tool's result or error), so when a call's arguments are asked about, the index
holds exactly what the agent had been told before that call.

Each identifier is looked for lazily, when a call first uses it, in the texts not yet
searched for it, with a substring scan and a whole-token check at each hit; the search
stops as soon as the answer cannot change (a source is found, or, for a privileged call, a
source that is not untrusted), and resumes from there if a later call asks again. So each
identifier reads each text at most once. To keep the whole pass linear however many
distinct identifiers a run uses, the scanning work is budgeted: past :data:`BUDGET` times
the characters fed (plus :data:`FLOOR`), the index switches to a full inverted index, every
text tokenised once, token -> sources.

Known limit: this is token matching, not data flow. A coincidental equal token (an order id
that also appears in an unrelated page) counts as a source.

>>> p = Provenance(untrusted=frozenset())
>>> p.feed("my order is W88213.", "user")
>>> p.sources("W88213", taint=False), p.sources("W213", taint=False)
({'user'}, None)
"""

from __future__ import annotations

import string

from ._text import _SEPARATE

#: Substring scanning may read this many times the characters fed before the full index.
BUDGET = 16
FLOOR = 200_000
_SEP_CHARS = frozenset(chr(c) for c in range(128)
                       if chr(c) not in set(string.ascii_letters + string.digits + "_-@.+"))


def _is_sep(ch: str) -> bool:
    return ch in _SEP_CHARS or ch.isspace()


def whole_token_in(text: str, tok: str, p: int | None = None) -> bool:
    """Does ``tok`` occur in ``text`` as a whole token (optionally followed by a final dot)?

    ``p`` is its first occurrence when the caller has already found it.

    >>> whole_token_in("order 88213 shipped", "213"), whole_token_in("order 213.", "213")
    (False, True)
    """
    n, size = len(tok), len(text)
    if p is None:
        p = text.find(tok)
    while True:
        if p < 0:
            return False
        end = p + n
        if p == 0 or _is_sep(text[p - 1]):
            if end == size or _is_sep(text[end]):
                return True
            if text[end] == "." and (end + 1 == size or _is_sep(text[end + 1])):
                return True
        p = text.find(tok, p + 1)


class Provenance:
    """The identifier -> sources index of one run (see the module docstring)."""

    __slots__ = ("corpus", "ends", "scanned", "seen", "pos", "settled", "full", "untrusted")

    def __init__(self, *, untrusted: frozenset[str]) -> None:
        self.corpus: list[tuple[str, str]] = []
        self.ends = [0]         # ends[k]: characters in the first k texts
        self.scanned = 0
        self.seen: dict[str, set[str]] = {}
        self.pos: dict[str, int] = {}
        self.settled: set[str] = set()
        self.full: dict[str, set[str]] | None = None
        self.untrusted = untrusted

    def feed(self, text: str, source: str) -> None:
        """``source`` said ``text`` at the current position of the run."""
        if not text:
            return
        self.corpus.append((source, text))
        self.ends.append(self.ends[-1] + len(text))
        if self.full is not None:
            self._index(text, source)

    def _index(self, text: str, source: str) -> None:
        full = self.full
        for tok in set(text.translate(_SEPARATE).split()):
            got = full.get(tok)
            if got is None:
                full[tok] = {source}
            else:
                got.add(source)

    def sources(self, tok: str, *, taint: bool) -> set[str] | None:
        """The sources that supplied ``tok`` so far (None: none did).

        With ``taint`` False the answer may stop at the first source (enough to know the
        identifier is grounded); with ``taint`` True it holds every source unless one that
        is not untrusted was found (enough to know it is not taint).
        """
        if self.full is not None:
            a, b = self.full.get(tok), self.full.get(tok + ".")
            return (a | b) if (a and b) else (a or b)
        seen = self.seen.get(tok)
        if tok in self.settled or (seen and not taint):
            return seen
        corpus, k = self.corpus, self.pos.get(tok, 0)
        n = len(corpus)
        if k < n:
            start, untrusted = k, self.untrusted
            for src, text in (corpus[k:] if k else corpus):
                k += 1
                at = text.find(tok)
                if at >= 0 and whole_token_in(text, tok, at):
                    if seen is None:
                        seen = self.seen[tok] = {src}
                    else:
                        seen.add(src)
                    if src not in untrusted:
                        self.settled.add(tok)
                        break
                    if not taint:
                        break
            self.pos[tok] = k
            ends = self.ends
            self.scanned += ends[k] - ends[start]
            if self.scanned > BUDGET * ends[-1] + FLOOR:
                self.seen.clear()       # from now on every answer comes from the full index
                self.settled.clear()
                self.full = {}
                for src, text in corpus:
                    self._index(text, src)
        return seen
