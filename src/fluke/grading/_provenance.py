"""Provenance: which sources supplied each identifier a call uses, in one pass over the run.

The index maps identifier -> sources (``user`` for every user message, ``tool:<name>`` for
each tool's result or error), fed in event order, so when a call's arguments are checked the
index holds exactly what the agent had been told before that call.

Only the identifiers that the run's calls use are indexed (its vocabulary, read from the
arguments first), and an identifier leaves the index's open set once nothing more can
change its verdict: it has a source and is used by no privileged call, or a source that is
not untrusted; or its last use has passed. Each text is then read once by the cheaper of two
equivalent matchers: a tokenisation intersected with the open set, or, while at most
:data:`SMALL` identifiers are open, one substring scan per open identifier with a
whole-token check at each hit. Either way a text costs at most a bounded number of linear
scans, so time is linear in the size of the trajectory.

Known limit: this is token matching, not data flow. A coincidental equal token (an order id
that also appears in an unrelated page) counts as a source.

>>> p = Provenance({2: [("order", "W88213")], 4: [("order", "W213")]}, privileged=set(),
...                untrusted=frozenset())
>>> p.feed("my order is W88213.", "user"); p.close(2)
>>> p.sources("W88213"), p.sources("W213")
({'user'}, None)
"""

from __future__ import annotations

import string

from ._text import _SEPARATE

#: Up to this many open identifiers, substring scans beat tokenising a text.
SMALL = 12
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

    __slots__ = ("seen", "open", "variants", "vocab", "priv", "untrusted", "expire")

    def __init__(self, queries: dict[int, list[tuple[str, str]]], *, privileged: set[int],
                 untrusted: frozenset[str]) -> None:
        last: dict[str, int] = {}
        priv: set[str] = set()
        for i, ids in queries.items():
            for _path, tok in ids:
                last[tok] = i
                if i in privileged:
                    priv.add(tok)
        self.expire: dict[int, list[str]] = {}
        for tok, i in last.items():
            self.expire.setdefault(i, []).append(tok)
        self.variants = {v: tok for tok in last for v in (tok, tok + ".")}
        self.vocab = frozenset(self.variants)
        self.open = set(last)
        self.seen: dict[str, set[str]] = {}
        self.priv = priv
        self.untrusted = untrusted

    def feed(self, text: str, source: str) -> None:
        """Record what ``text``, said by ``source`` at the current position, supplies."""
        open_ = self.open
        if not open_ or not text:
            return
        if len(open_) <= SMALL:
            hits = [tok for tok in open_ if tok in text and whole_token_in(text, tok)]
        else:
            variants = self.variants
            hits = [variants[h] for h in self.vocab.intersection(text.translate(_SEPARATE).split())]
            hits = [tok for tok in hits if tok in open_]
        if not hits:
            return
        seen, priv, untrusted = self.seen, self.priv, self.untrusted
        settles = source not in untrusted
        for tok in hits:
            got = seen.get(tok)
            if got is None:
                seen[tok] = {source}
            else:
                got.add(source)
            if settles or tok not in priv:
                open_.discard(tok)

    def sources(self, tok: str) -> set[str] | None:
        """The sources that supplied ``tok`` so far (None: none did)."""
        return self.seen.get(tok)

    def close(self, index: int) -> None:
        """The call at ``index`` has been checked: drop identifiers it was the last to use."""
        done = self.expire.get(index)
        if done:
            self.open.difference_update(done)
