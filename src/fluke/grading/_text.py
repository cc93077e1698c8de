"""Text handling for provenance and secrets: tokens, identifier shape, credential patterns.

Tokens are maximal runs of letters, digits and ``_ - @ . +``; every other character
separates. A token that ends a sentence ("order W123.") also matches without its final
dot. Matching is on whole tokens, so "213" is not found in "88213".

>>> tokens("Order ORD-00213, placed by bob7@example.com on 2026-01-02.")
['Order', 'ORD-00213', 'placed', 'by', 'bob7@example.com', 'on', '2026-01-02.']
>>> [t for t in tokens("refund 250 for ORD-00213 to Bob") if id_shaped(t, prose=True)]
['ORD-00213']
>>> redact("key AKIAABCDEFGHIJKLMNOP here")
'key [REDACTED:aws-key-id] here'
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

from ..record import redact_text as redact  # one redaction for every output

_HIDDEN = "[REDACTED]"
_KEEP = set(string.ascii_letters + string.digits + "_-@.+")
#: Maps every ASCII separator to a space; non-ASCII characters stay inside tokens.
_SEPARATE = str.maketrans({chr(c): " " for c in range(128) if chr(c) not in _KEEP})
_DIGITS = frozenset(string.digits)
#: Could this value hold an identifier at all? (a digit, an @, or a capital letter)
_MAYBE_ID = re.compile(r"[0-9@A-Z]")
_DIGIT_AT = re.compile(r"[0-9@]")
_DIGIT_OR_AT = frozenset("0123456789@")
#: A whole value that is one token: no separator anywhere.
_ONE_TOKEN = re.compile(r"[A-Za-z0-9_@.+\-\x80-\U0010ffff]+")
_NUMBER = re.compile(r"[+-]?\d+(?:[.,]\d+)?")
#: Whole values that look like identifiers but carry no provenance.
LITERALS = frozenset({"true", "false", "none", "null", "yes", "nan", "n/a"})

_WHOLE_CACHE: dict[str, bool] = {}
_PROSE_CACHE: dict[str, bool] = {}


def _shape(tok: str, prose: bool) -> bool:
    n = len(tok)
    if n < 3 or n > 128 or tok.lower() in LITERALS:
        return False
    if "@" in tok:
        return True
    if _DIGITS.isdisjoint(tok):
        return tok.isupper()
    return not (prose and _NUMBER.fullmatch(tok))


def tokens(text: str) -> list[str]:
    """Split ``text`` into tokens (see the module docstring)."""
    return text.translate(_SEPARATE).split()


def id_shaped(tok: str, *, prose: bool) -> bool:
    """Is ``tok`` an identifier worth tracing?

    Yes when it has 3 to 128 characters and contains a digit or an ``@``, or is all
    capitals ("MDCLVA", "JFK"). Plain words and snake_case enums ("pending",
    "basic_economy") are not. Inside prose a bare number ("250", "12.50") is a quantity,
    not an identifier; given as a whole argument value it is traced.
    Known limit: a model-known code in capitals ("USA") is traced and may show as ungrounded.
    """
    cache = _PROSE_CACHE if prose else _WHOLE_CACHE
    hit = cache.get(tok)
    if hit is None:
        if len(cache) > 200_000:
            cache.clear()
        hit = cache[tok] = _shape(tok, prose)
    return hit


def strip_trailing(tok: str) -> str:
    """The token without sentence punctuation at its end."""
    return tok.rstrip(".") or tok


#: Each ASCII character's class, for :func:`identifiers`: 2 a digit or ``@``, 1 a capital,
#: 0 any other token character (``a-z _ . + -``), 4 a separator (bytes past 127: unused).
_CLASSES = bytes(2 if ch in _DIGIT_OR_AT else 1 if ch in string.ascii_uppercase else 0 if ch in _KEEP
                 else 4 for ch in map(chr, range(256)))


def identifiers(value: str) -> list[str]:
    """The identifier-shaped tokens of one string argument value.

    An ASCII value (``isascii`` is free) has its characters classified all at once, one
    bytes translation through :data:`_CLASSES`: whether it holds a digit or ``@``, a capital,
    a separator are then byte searches, not a regex scan over prose.

    >>> identifiers("ORD-00213."), identifiers("ship it to JFK by 2026-01-02"), identifiers("all lower case")
    (['ORD-00213'], ['JFK', '2026-01-02'], [])
    >>> identifiers("TRUE"), identifiers("JFK"), identifiers("Hello"), identifiers("ÉCOLE 7"), identifiers("école")
    ([], ['JFK'], [], ['ÉCOLE'], [])
    """
    if value.isascii():
        classes = value.encode().translate(_CLASSES)
        digit = 2 in classes
        if not digit and 1 not in classes:
            return []  # no capital, digit or @: no identifier
        one_token = 4 not in classes
    else:
        if _MAYBE_ID.search(value) is None:
            return []
        digit = _DIGIT_AT.search(value) is not None
        one_token = _ONE_TOKEN.fullmatch(value) is not None
    if one_token:  # the common case, the whole value one token: decide inline
        tok = value.rstrip(".") or value if value[-1] == "." else value
        if not 3 <= len(tok) <= 128:
            return []
        if digit:
            return [tok]
        return [] if not tok.isupper() or (tok.isalpha() and tok.lower() in LITERALS) else [tok]
    parts = value.translate(_SEPARATE).split()
    if len(parts) == 1:
        tok = parts[0]
        if tok[-1] == ".":
            tok = strip_trailing(tok)
        return [tok] if id_shaped(tok, prose=False) else []
    out = []
    for tok in parts:
        if tok[-1] == ".":
            tok = strip_trailing(tok)
        if id_shaped(tok, prose=True):
            out.append(tok)
    return out


# -- secrets -----------------------------------------------------------------------------
#: Detection, not redaction (that is :func:`fluke.record.redact_text`, which hides these
#: shapes and more): (label, literal anchor that every match contains, pattern). Prefix shapes only: a
#: credential or nothing. Known limit: a bare high-entropy secret (a password in a URL, a
#: bespoke token) has no prefix and is missed; no entropy heuristic on purpose (it fires on
#: hashes, UUIDs and session ids and trains people to ignore the check).
SECRET_PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("AWS access key id", "AKIA", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("GitHub token", "gh", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("GitHub fine-grained token", "github_pat_", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{50,}\b")),
    ("PyPI token", "pypi-AgEI", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9\-_]{16,}")),
    ("Slack token", "xox", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    ("OpenAI key", "sk-", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b")),
    ("Google API key", "AIza", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("private key block", "PRIVATE KEY", re.compile(r"-----BEGIN (?:RSA |EC |OPENSSH |PGP )?PRIVATE KEY-----")),
    ("bearer token", "Bearer", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*")),
)
#: Each anchor with the rarest character it contains in ordinary text: a one-character
#: search (memchr) rules most texts out before the multi-character search runs.
_ANCHORS: tuple[tuple[str, str], ...] = (
    ("K", "AKIA"), ("_", "gh"), ("_", "github_pat_"), ("E", "pypi-AgEI"), ("x", "xox"), ("k", "sk-"), ("I", "AIza"),
    ("V", "PRIVATE KEY"), ("B", "Bearer"))
ANCHORS: tuple[str, ...] = tuple(a for _, a in _ANCHORS)


def _probe(rare: str, anchor: str):
    """A search for ``anchor`` from its rare character on ("sk-": "k-"). re's search for a
    literal skips ahead to its first character quickly; str's ``in`` is 2-3 times slower
    over long texts when the anchor ends in a common character ("-", "x")."""
    at = anchor.find(rare)
    return re.compile(re.escape(anchor[at:] if at > 0 else anchor)).search


_RARE = dict((a, r) for r, a in _ANCHORS)
#: SECRET_PATTERNS with what rules a text out fast: (label, rare, anchor, pattern, probe).
_CHECKS: tuple[tuple[str, str, str, re.Pattern[str], object], ...] = tuple(
    (label, _RARE[anchor], anchor, pattern, _probe(_RARE[anchor], anchor))
    for label, anchor, pattern in SECRET_PATTERNS)


def may_hold_secret(text: str) -> bool:
    """A fast test: False means no pattern can match (substring scans, no regex).

    >>> may_hold_secret("order ORD-1 shipped"), may_hold_secret("token xoxb-123")
    (False, True)
    """
    for rare, anchor in _ANCHORS:
        if rare in text and anchor in text:
            return True
    return False


def secret_checks(text: str) -> tuple:
    """The checks (see :func:`find_secrets`) whose anchor occurs in ``text``: empty means no
    pattern can match. Only these can match in any part of ``text``, so a caller that tests
    the parts of a text it has joined passes them on and skips the anchor scans that failed.

    >>> [label for label, *_ in secret_checks("order ORD-1 shipped; token xoxb-123")]
    ['Slack token']
    """
    return tuple(c for c in _CHECKS if c[1] in text and c[4](text) and c[2] in text)


def find_secrets(text: str, checks: tuple = _CHECKS) -> list[str]:
    """The labels of the credential shapes found in ``text`` (never the matches).

    ``checks`` narrows the patterns tried (see :func:`secret_checks`); each is tried only
    when its rare character, then its anchor, occurs (a one-character scan is much cheaper).
    """
    return [label for label, rare, anchor, pattern, _ in checks
            if rare in text and anchor in text and pattern.search(text)]


def shown(value: object, limit: int = 60) -> str:
    """A value as it may appear in a message: redacted, and cut to ``limit`` characters."""
    text = redact(value if isinstance(value, str) else repr(value))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text) if isinstance(value, str) else text


def shown_part(part: str, wholes: Iterable[str], limit: int = 60) -> str:
    """``part``, cut out of one of the strings ``wholes``, as it may appear in a message.

    Redacting the part alone can miss what redacting its whole value finds (the password
    cut out of a URL has lost the ``scheme://user:`` that marks it), so a part that the
    redaction of a whole value holding it does not show is quoted as ``'[REDACTED]'``.

    >>> shown_part("Hunter2Secret@db", ["postgresql://admin:Hunter2Secret@db/prod"])
    "'[REDACTED]'"
    >>> shown_part("ORD-00213", ["refund ORD-00213 now"])
    "'ORD-00213'"
    """
    for whole in wholes:
        if part in whole and part not in redact(whole):
            return repr(_HIDDEN)
    return shown(part, limit)
