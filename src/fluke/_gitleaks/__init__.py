"""gitleaks' rule set, vendored as data and run with Python's ``re``: secret shapes kept by others.

``gitleaks.toml`` is gitleaks' default configuration, copied unchanged from
:data:`SOURCE` (MIT-licensed; the licence is ``LICENSE`` beside it), and read as parsed into
``gitleaks.json`` (:data:`PARSED_FILE`). Each rule has keywords
(a text holding none of them, lower-cased, cannot match), a regular expression written for
Go's RE2, an optional entropy floor for the secret, and allow-lists. They are read on first
use (not when :mod:`fluke.errors` is imported) and each expression is compiled the first time
one of its keywords occurs.

RE2 and ``re`` differ in a few places, adapted here (:func:`translate`): a flag group
``(?i)`` inside the pattern applies to the rest of its group (``re`` only takes flags at the
start, so it becomes a scoped ``(?i:...)`` per branch), POSIX classes (``[[:alnum:]]``), ``\\z``,
and a ``[`` inside a class. A rule whose expression still does not compile is skipped and
counted (:func:`skipped`); so is one with no expression (a rule on file names only). Matching
is ASCII (``re.ASCII``), as in RE2. A leading ``[\\w.-]{0,50}?`` (it only widens the match
before the secret) is dropped, which makes the keyword-named rules much cheaper to run; the
full match is rebuilt where an allow-list needs it.

What gitleaks does that this does not: decoding base64, hex or percent-encoded segments before
matching, allow-lists on file paths and commits (there are none here), and composite rules.

>>> text = "deploy with glpat-AbCdEf0123456789xYz_ today"
>>> [(rule, text[a:b]) for a, b, rule in find(text)]
[('gitlab-pat', 'glpat-AbCdEf0123456789xYz_')]
>>> find("the order W2378156 ships on 2026-01-02")
[]
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

#: Where ``gitleaks.toml`` came from (copied unchanged).
SOURCE = {
    "repository": "https://github.com/gitleaks/gitleaks",
    "path": "config/gitleaks.toml",
    "commit": "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b",
    "version": "v8.30.0-27-gb58d3f10",
    "committed": "2026-07-22",
    "license": "MIT",
}
RULES_FILE = Path(__file__).with_name("gitleaks.toml")
#: The same rules parsed, as JSON (read in a millisecond, where the TOML takes 45): made from
#: ``gitleaks.toml`` with ``python -c "import json, tomllib; print(json.dumps(tomllib.load(open(
#: 'gitleaks.toml', 'rb')), indent=0, sort_keys=True))" > gitleaks.json``; a test keeps them equal.
PARSED_FILE = Path(__file__).with_name("gitleaks.json")

_POSIX = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "xdigit": "0-9A-Fa-f", "upper": "A-Z",
          "lower": "a-z", "space": r"\s", "word": r"\w", "punct": r"!-/:-@\[-`{-~", "blank": r" \t",
          "cntrl": r"\x00-\x1f\x7f", "print": r" -~", "graph": r"!-~", "ascii": r"\x00-\x7f"}
#: The lazy prefix of the keyword-named rules: it only widens a match to the left.
_WIDENING = r"[\w.-]{0,50}?"
_WORDISH = re.compile(r"[\w.-]{1,50}\Z", re.ASCII)


def translate(pattern: str) -> str:
    """An RE2 pattern rewritten for Python's ``re`` (see the module docstring).

    >>> translate(r"\\b(p8e-(?i)[a-z0-9]{32})(?:\\s|$)")
    '\\\\b(p8e-(?i:[a-z0-9]{32}))(?:\\\\s|$)'
    >>> translate(r"a(?i)b|c"), translate(r"[[:alnum:]_]{4}\\z")
    ('a(?i:b)|(?i:c)', '[a-zA-Z0-9_]{4}\\\\Z')
    """
    out: list[str] = []
    # One entry per open group: the flag groups opened inside it that must close with it
    # (and close and reopen at each of its ``|``).
    stack: list[list[str]] = [[]]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1:i + 2]
            out.append(r"\Z" if nxt == "z" else c + nxt)
            i += 2
            continue
        if c == "[":
            i = _char_class(pattern, i, out)
            continue
        if c == "(":
            flags = re.match(r"\(\?([a-zA-Z-]+)\)", pattern[i:])
            if flags and i > 0:        # a flag group past the start: scope it to the rest of the group
                out.append(f"(?{flags.group(1)}:")
                stack[-1].append(flags.group(1))
                i += flags.end()
                continue
            stack.append([])
            out.append(c)
            i += 1
            continue
        if c == "|":
            opened = stack[-1]
            out.append(")" * len(opened) + "|" + "".join(f"(?{f}:" for f in opened))
            i += 1
            continue
        if c == ")":
            out.append(")" * len(stack.pop()) + ")")
            i += 1
            continue
        out.append(c)
        i += 1
    out.append(")" * len(stack[0]))
    return "".join(out)


def _char_class(pattern: str, i: int, out: list[str]) -> int:
    """Copy the character class opening at ``pattern[i]``; return the index past it."""
    out.append("[")
    i += 1
    if pattern[i:i + 1] == "^":
        out.append("^")
        i += 1
    if pattern[i:i + 1] == "]":   # a leading ] is a literal
        out.append(r"\]")
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        posix = re.match(r"\[:(\^?)([a-z]+):\]", pattern[i:])
        if posix and posix.group(2) in _POSIX and not posix.group(1):
            out.append(_POSIX[posix.group(2)])
            i += posix.end()
            continue
        out.append(r"\[" if c == "[" else c)
        i += 1
    out.append("]")
    return i + 1


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character, as gitleaks computes it.

    >>> round(entropy("aaaa"), 3), round(entropy("ab"), 3)
    (0.0, 1.0)
    """
    if not text:
        return 0.0
    n = len(text)
    return max(0.0, -sum(k / n * math.log2(k / n) for k in Counter(text).values()))


@dataclass
class Allowlist:
    """A rule's (or the global) allow-list: a finding it matches is not a secret."""

    target: str = "secret"               # what the regexes read: "secret", "match" or "line"
    sources: tuple[str, ...] = ()        # the regexes as gitleaks writes them (compiled on first use)
    stopwords: tuple[str, ...] = ()
    never: bool = False                  # an AND with a path condition: never true on a text
    _regexes: Any = field(default=None, repr=False)

    def allows(self, secret: str, match: str, line: str) -> bool:
        if self.never:
            return False
        if self._regexes is None:
            self._regexes = tuple(re.compile(translate(r), re.ASCII) for r in self.sources)
        target = match if self.target == "match" else line if self.target == "line" else secret
        low = secret.lower()
        return (any(r.search(target) for r in self._regexes)
                or any(word in low for word in self.stopwords))


@dataclass
class Rule:
    """One gitleaks rule: compiled on first use."""

    id: str
    source: str                          # the RE2 pattern as gitleaks writes it
    keywords: tuple[str, ...]
    entropy: float = 0.0
    secret_group: int = 0
    allowlists: tuple[Allowlist, ...] = ()
    widened: bool = False                # the leading lazy prefix was dropped
    _compiled: Any = field(default=None, repr=False)
    _in_json: Any = field(default=None, repr=False)

    _text: Any = field(default=None, repr=False)
    _led: Any = field(default=None, repr=False)

    @property
    def text(self) -> str:
        """The pattern for ``re``: translated, its leading lazy prefix dropped."""
        if self._text is None:
            text = translate(self.source)
            if text.startswith("(?i)" + _WIDENING):
                text, self.widened = "(?i)" + text[4 + len(_WIDENING):], True
            self._text = text
        return self._text

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.text, re.ASCII)
        return self._compiled

    @property
    def led(self) -> bool:
        """Does every match begin with one of the rule's keywords? (then a search need only
        try the places where a keyword begins)"""
        if self._led is None:
            self._led = _led_by(self.text, self.keywords)
        return self._led

    @property
    def in_json(self) -> re.Pattern[bytes]:
        """:func:`json_view` of the pattern, compiled for bytes: a search of a JSON document's
        UTF-8 text that never misses a string this rule would match."""
        if self._in_json is None:
            self._in_json = re.compile(json_view(self.text).encode(), re.ASCII)
        return self._in_json

    def spans(self, text: str, everywhere: tuple[Allowlist, ...]) -> list[tuple[int, int]]:
        """The spans of ``text`` that hold this rule's secret (its group, or the match)."""
        out = []
        for m in self.pattern.finditer(text):
            g = self.secret_group or next((k for k, s in enumerate(m.groups(), 1) if s), 0)
            secret = m.group(g)
            if not secret or (self.entropy and entropy(secret) <= self.entropy):
                continue
            start = m.start()
            if self.widened:   # the match gitleaks would report: back over the dropped prefix
                before = _WORDISH.search(text, max(0, start - 50), start)
                start = before.start() if before else start
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", m.end())
            line = text[line_start:len(text) if line_end == -1 else line_end]
            match = text[start:m.end()].strip("\n")
            if any(a.allows(secret, match, line) for a in everywhere + self.allowlists):
                continue
            out.append(m.span(g))
        return out


#: The characters JSON escapes (``"``, ``\\``, controls), each with the escape a JSON writer
#: uses for it; and a string's non-ASCII character may come as ``\uXXXX`` too.
_ESCAPES = {0x22: r'\\"', 0x5C: r"\\\\", 0x08: r"\\b", 0x0C: r"\\f", 0x0A: r"\\n", 0x0D: r"\\r", 0x09: r"\\t",
            **{c: rf"\\u00{c:02x}" for c in range(0x20) if c not in (0x08, 0x09, 0x0A, 0x0C, 0x0D)}}
_UNICODE_ESCAPE = r"\\u[0-9a-fA-F]{4}"
#: The pattern runs on the document's UTF-8 bytes: an ASCII character JSON writes as it is is
#: one byte, any other character one whole UTF-8 sequence.
_RAW = r'(?!["\\\x00-\x1f\x80-\xff])'
_UTF8 = r"[\xc2-\xf4][\x80-\xbf]{1,3}"
_PROBE_NON_ASCII = "\u00e9\u4e2d"


def _json_item(item: str, flags: int) -> str:
    """One character-matching item of a pattern (a class, ``.``, ``\\s``...), rewritten to
    match that character as a JSON string holds it: as it is, or as its escape."""
    test = re.compile(item, flags)
    escapes = [_ESCAPES[c] for c in _ESCAPES if test.fullmatch(chr(c))]
    if any(test.fullmatch(ch) for ch in _PROBE_NON_ASCII):
        escapes += [_UNICODE_ESCAPE, _UTF8]
    if not escapes:
        return item
    return f"(?:{_RAW}{item}|" + "|".join(escapes) + ")"


def json_view(pattern: str) -> str:
    """``pattern`` (as :func:`translate` writes it) rewritten to find, in the text of a JSON
    document, the encoding of every match it has in a string of that document: each item that
    can match a character JSON escapes also matches that escape, and anchors (``\\b``, ``^``,
    ``$``) are dropped, which only widens it. A search of the document's text for it is then a
    test that never misses (it may fire where no string matches: across strings, or where
    the rule's entropy floor or allow-lists would have said no).

    It is meant for the UTF-8 bytes of the document: an item that matches any character
    other than ASCII matches one whole UTF-8 sequence (or a ``\\uXXXX`` escape).

    >>> import orjson
    >>> view = re.compile(json_view(r'\\bkey"?:(\\w{4})$').encode())
    >>> [bool(view.search(orjson.dumps([text]))) for text in ('key":abcd', "key=abcd")]
    [True, False]
    >>> bool(re.search(json_view(r"a\\sb[^x]{2}$").encode(), orjson.dumps("a\\nb\u00e9\u00e9")))
    True
    """
    flags = re.ASCII | (re.IGNORECASE if pattern.startswith("(?i)") else 0)
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            esc = pattern[i:i + 2]
            if esc[1:] in ("b", "B", "A", "Z"):
                pass
            elif esc[1:] == "x":
                esc = pattern[i:i + 4]
                out.append(_json_item(esc, flags))
            elif esc[1:].isalnum() and esc[1:] not in "0123456789" or esc[1:] in ('"', "\\"):
                out.append(_json_item(esc, flags))
            else:
                out.append(esc)
            i += len(esc)
            continue
        if c == "[":
            end = _class_end(pattern, i)
            out.append(_json_item(pattern[i:end], flags))
            i = end
            continue
        if c in "^$":
            i += 1
            continue
        if c == "." or c == '"':
            out.append(_json_item(c, flags | (re.DOTALL if c == "." else 0)))
            i += 1
            continue
        if c == "(" and pattern.startswith("(?s:.)", i):
            out.append(_json_item(".", flags | re.DOTALL))
            i += 6
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _class_end(pattern: str, i: int) -> int:
    """The index past the character class opening at ``pattern[i]`` (as translate writes it)."""
    j = i + 1
    if pattern[j:j + 1] == "^":
        j += 1
    if pattern[j:j + 1] == "]":
        j += 1
    while pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def _prefixes(tree: Any, limit: int = 24) -> set[str] | None:
    """The literal text every match of a parsed pattern begins with, one per way it can
    begin (lower case, up to ``limit`` characters); None when a way begins with no literal."""
    from re import _constants as C   # noqa: N812 (the parser's own names)

    done: set[str] = set()
    ways = [("", list(tree))]
    while ways:
        text, rest = ways.pop()
        if len(text) >= limit or not rest:
            if not text:
                return None
            done.add(text)
            continue
        (op, arg), rest = rest[0], rest[1:]
        if op is C.LITERAL:
            ways.append((text + chr(arg).lower(), rest))
        elif op is C.AT:
            ways.append((text, rest))
        elif op is C.SUBPATTERN:
            ways.append((text, list(arg[3]) + rest))
        elif op is C.BRANCH:
            ways += [(text, list(branch) + rest) for branch in arg[1]]
        elif op is C.MAX_REPEAT and arg[0] == 0 and arg[1] == 1:     # optional: with it or without
            ways += [(text, rest), (text, list(arg[2]) + rest)]
        elif op is C.MAX_REPEAT and arg[0] >= 1:                     # once at least, then stop
            ways.append((text, list(arg[2]) + [(None, None)]))
        elif op is C.IN and len(arg) <= 8 and all(kind is C.LITERAL for kind, _ in arg):
            ways += [(text + chr(c).lower(), rest) for _, c in arg]
        elif text:
            done.add(text)
        else:
            return None
    return done


def _led_by(pattern: str, keywords: tuple[str, ...]) -> bool:
    """Does every match of ``pattern`` begin with one of ``keywords`` (lower case)?

    >>> _led_by(r"\\b(?:ghu|ghs)_[0-9a-z]{36}", ("ghu_", "ghs_")), _led_by(r"[a-z]+key", ("key",))
    (True, False)
    """
    from re import _parser

    try:
        starts = _prefixes(_parser.parse(pattern, re.ASCII))
    except re.error:
        return False
    return bool(starts) and all(any(s.startswith(k) for k in keywords) for s in starts)


def _allowlist(raw: dict[str, Any]) -> Allowlist:
    never = raw.get("condition", "OR").upper() == "AND" and bool(raw.get("paths") or raw.get("commits"))
    return Allowlist(target=raw.get("regexTarget", "secret"), sources=tuple(raw.get("regexes", ())),
                     stopwords=tuple(w.lower() for w in raw.get("stopwords", ())), never=never)


@cache
def _load() -> tuple[tuple[Rule, ...], tuple[Allowlist, ...], tuple[tuple[str, str], ...]]:
    import json

    data = json.loads(PARSED_FILE.read_text(encoding="utf-8"))
    rules, skipped = [], []
    for raw in data.get("rules", ()):
        if "regex" not in raw:
            skipped.append((raw["id"], "no regex (a rule on file paths)"))
            continue
        rule = Rule(id=raw["id"], source=raw["regex"], keywords=tuple(k.lower() for k in raw.get("keywords", ())),
                    entropy=float(raw.get("entropy", 0.0)), secret_group=int(raw.get("secretGroup", 0)),
                    allowlists=tuple(_allowlist(a) for a in raw.get("allowlists", ())))
        rules.append(rule)
    top = data.get("allowlist", {})
    everywhere = (Allowlist(sources=tuple(top.get("regexes", ())),
                            stopwords=tuple(w.lower() for w in top.get("stopwords", ()))),)
    return tuple(rules), everywhere, tuple(skipped)


def rules() -> tuple[Rule, ...]:
    """Every rule with a pattern, in the file's order."""
    return _load()[0]


def skipped() -> tuple[tuple[str, str], ...]:
    """(rule id, why) of each rule not run: no pattern, or one ``re`` cannot compile."""
    _compiled()
    return _load()[2] + tuple(_BROKEN.items())


_BROKEN: dict[str, str] = {}


def _usable(rule: Rule, *, json: bool = False) -> bool:
    """Does the rule's pattern (or its JSON view) compile? Compiled on first use, and a failure
    recorded in :data:`_BROKEN` (none today: a test says so)."""
    key = rule.id + (" (in JSON)" if json else "")
    if key in _BROKEN:
        return False
    try:
        rule.in_json if json else rule.pattern
    except re.error as exc:
        _BROKEN[key] = f"re cannot compile {'its JSON view' if json else 'it'} ({exc})"
        return False
    return True


def _compiled() -> tuple[Rule, ...]:
    """The rules whose pattern and JSON view compile (every rule compiled now)."""
    return tuple(rule for rule in rules() if _usable(rule) & _usable(rule, json=True))


@cache
def _index() -> tuple[Any, tuple[str, ...], Mapping[str, tuple[Rule, ...]], tuple[Rule, ...]]:
    """An Aho-Corasick automaton of every keyword, and the rules each keyword names."""
    import ahocorasick_rs

    by_word: dict[str, list[Rule]] = {}
    always = []
    for rule in rules():
        if not rule.keywords:
            always.append(rule)
        for word in rule.keywords:
            by_word.setdefault(word, []).append(rule)
    words = sorted(by_word)
    # cached and shared: handed out as immutable types
    return (ahocorasick_rs.AhoCorasick(words), tuple(words),
            MappingProxyType({w: tuple(r) for w, r in by_word.items()}), tuple(always))


@cache
def _bytes_index() -> Any:
    import ahocorasick_rs

    return ahocorasick_rs.BytesAhoCorasick([w.encode() for w in _index()[1]],
                                           implementation=ahocorasick_rs.Implementation.DFA)


def keywords() -> tuple[str, ...]:
    """Every keyword of every rule (lower case)."""
    return tuple(_index()[1])


def may_match(data: bytes) -> bool:
    """A quick test of a JSON document's UTF-8 text: False means no string in it (keys
    included) holds a secret that :func:`find` finds.

    The keywords are found in one pass (Aho-Corasick, in Rust); each rule a keyword found
    names is then searched for in its JSON view (:attr:`Rule.in_json`), which never misses.

    >>> may_match(b'{"order": "W2378156"}'), may_match(b'{"k": "glpat-x"}')
    (False, False)
    >>> may_match(b'{"note": "token glpat-AbCdEf0123456789xYz_"}')
    True
    """
    hits = _bytes_index().find_matches_as_indexes(data.lower(), overlapping=True)
    if not hits:
        return False
    words = _index()[1]
    at: dict[str, list[int]] = {}
    for k, start, _ in hits:
        at.setdefault(words[k], []).append(start)
    return keywords_match(data, at)


def keywords_match(data: bytes, at: dict[str, list[int]]) -> bool:
    """The rest of :func:`may_match`, given where each keyword occurs in ``data`` (lower-cased):
    for a caller that found the keywords in a pass of its own (``fluke._redact.may_hold_secret``).

    >>> keywords_match(b'{"note": "token glpat-AbCdEf0123456789xYz_"}', {"glpat-": [16]})
    True
    """
    checks = _index()[2]
    text = data
    tried: set[str] = set()
    for word in at:
        for rule in checks[word]:
            if rule.id in tried:
                continue
            tried.add(rule.id)
            if not _usable(rule, json=True):   # then the keyword alone decides
                return True
            if rule.led:   # a match begins where a keyword does
                match = rule.in_json.match
                if any(match(text, p) for w in rule.keywords for p in at.get(w, ())):
                    return True
            elif rule.in_json.search(text):
                return True
    return False


def _lower(text: str) -> str:
    """Lower case for ASCII letters only, as ``bytes.lower`` does (``str.lower`` turns the
    Kelvin sign into "k"): a keyword found here is found in the UTF-8 bytes of a document too."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def has_keyword(text: str) -> bool:
    """Does ``text`` hold a keyword of some rule (ASCII case folded)? False: :func:`find` is empty.

    >>> has_keyword("W2378156"), has_keyword("hf_x")
    (False, True)
    """
    return _index()[0].find_matches_as_indexes(_lower(text), overlapping=False) != []


def find(text: str) -> list[tuple[int, int, str]]:
    """The secret spans of ``text``, (start, end, rule id), sorted, overlaps kept."""
    automaton, words, by_word, always = _index()
    hits = automaton.find_matches_as_indexes(_lower(text), overlapping=True)
    if not hits and not always:
        return []
    seen = {words[k] for k, _, _ in hits}
    todo: dict[str, Rule] = {r.id: r for r in always}
    for word in seen:
        for rule in by_word[word]:
            todo[rule.id] = rule
    everywhere = _load()[1]
    out = []
    for rule in todo.values():
        if _usable(rule):
            out += [(a, b, rule.id) for a, b in rule.spans(text, everywhere)]
    return sorted(out)
