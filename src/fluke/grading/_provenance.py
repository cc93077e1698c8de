"""Provenance: which sources supplied an identifier before a given call, in one pass.

The texts of a run are fed in event order (``user`` for every user message, ``tool:<name>``
for each tool's result or error), so when a call's arguments are asked about, the index
holds exactly what the agent had been told before that call.

Each identifier is looked for lazily, when a call uses it, in the texts not yet searched
for it, newest first, with a substring scan and a whole-token check at each hit; the search
stops as soon as the answer cannot change (a source is found, or, for a privileged call, a
source that is not untrusted; the user's messages, short and decisive, are tokenised as
they arrive and asked first), and the texts it skipped are remembered in case a later call
needs them. So each identifier reads each text at most once. To keep the whole pass linear however many
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


def whole_token_in(text: str, tok: str) -> bool:
    """Does ``tok`` occur in ``text`` as a whole token (optionally followed by a final dot)?

    >>> whole_token_in("order 88213 shipped", "213"), whole_token_in("order 213.", "213")
    (False, True)
    """
    n, size, start = len(tok), len(text), 0
    while True:
        p = text.find(tok, start)
        if p < 0:
            return False
        end = p + n
        if p == 0 or _is_sep(text[p - 1]):
            if end == size or _is_sep(text[end]):
                return True
            if text[end] == "." and (end + 1 == size or _is_sep(text[end + 1])):
                return True
        start = p + 1


class Provenance:
    """The identifier -> sources index of one run (see the module docstring)."""

    __slots__ = ("corpus", "ends", "user_tokens", "scanned", "seen", "top", "gaps", "settled", "full", "untrusted")

    def __init__(self, *, untrusted: frozenset[str]) -> None:
        self.corpus: list[tuple[str, str]] = []
        self.ends = [0]         # ends[k]: characters in the first k texts
        self.user_tokens: set[str] = set()
        self.scanned = 0
        self.seen: dict[str, set[str]] = {}
        self.top: dict[str, int] = {}                       # texts below this were considered ...
        self.gaps: dict[str, list[tuple[int, int]]] = {}    # ... except these ranges, unread
        self.settled: set[str] = set()
        self.full: dict[str, set[str]] | None = None
        self.untrusted = untrusted

    def feed(self, text: str, source: str) -> None:
        """``source`` said ``text`` at the current position of the run."""
        if not text:
            return
        self.corpus.append((source, text))
        self.ends.append(self.ends[-1] + len(text))
        if source == "user":   # user messages are short and settle everything they mention
            self.user_tokens.update(text.translate(_SEPARATE).split())
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
        users = self.user_tokens
        if users and (tok in users or tok + "." in users):
            # the user said it: grounded and never taint, whatever else said it too
            seen = self.seen[tok] = (seen or set()) | {"user"}
            self.settled.add(tok)
            return seen
        corpus, ends, untrusted = self.corpus, self.ends, self.untrusted
        n = len(corpus)
        # A grounding question reads the newest texts first (an identifier is most often used
        # soon after a tool revealed it); a taint question reads the oldest first (the user's
        # messages, which settle it, usually open the run).
        todo = [(self.top.get(tok, 0), n)]
        gaps = self.gaps.get(tok)
        if gaps:
            todo += gaps
        todo.sort(reverse=not taint)
        left: list[tuple[int, int]] = []
        stopped, scanned = False, 0
        for a, b in todo:
            if stopped:
                left.append((a, b))
                continue
            order = range(a, b) if taint else range(b - 1, a - 1, -1)
            for k in order:
                src, text = corpus[k]
                if tok in text and whole_token_in(text, tok):
                    if seen is None:
                        seen = self.seen[tok] = {src}
                    else:
                        seen.add(src)
                    if src not in untrusted or not taint:
                        stopped = True
                        if src not in untrusted:
                            self.settled.add(tok)
                        break
            else:
                scanned += ends[b] - ends[a]
                continue
            if taint:
                scanned += ends[k + 1] - ends[a]
                if k + 1 < b:
                    left.append((k + 1, b))
            else:
                scanned += ends[b] - ends[k]
                if k > a:
                    left.append((a, k))
        self.top[tok] = n
        self.gaps[tok] = left
        self.scanned += scanned
        if self.scanned > BUDGET * ends[-1] + FLOOR:
            self.seen.clear()       # from now on every answer comes from the full index
            self.settled.clear()
            self.full = {}
            for src, text in corpus:
                self._index(text, src)
        return seen
