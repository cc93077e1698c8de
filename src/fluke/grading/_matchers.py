"""Argument matchers: how an expected call's arguments are compared with a made call's.

Without a matcher, arguments compare exactly: the same keys, equal values (``1 == 1.0``, but
``True`` is not ``1``), lists element by element. A spec's ``match`` table sets a matcher per
tool and per argument path (dotted; ``flights.0.date`` for one element, ``flights.*.date``
for every element of a list; ``*`` alone for the whole arguments):

========================  ==================================================================
``exact``                 the default, spelled out
``ignore``                anything (the argument may also be absent on either side)
``subset``                the made value's items are among the expected ones (dicts, lists)
``superset``              the made value holds every expected item (dicts, lists)
``case_insensitive``      strings equal after case folding (inside lists and dicts too)
``set_equal``             lists equal as sets: order and repeats do not matter
``{tolerance: x}``        numbers within ``x`` of each other
``{regex: p}``            the made value (as text) fully matches ``p``; the expected is ignored
``{callable: name}``      ``name(expected, made) -> bool``: a function in the spec's module
                          (``airline.py`` beside ``airline.yaml``) or ``package.module:function``
========================  ==================================================================

>>> rules = compile_rules({"reservation_id": "case_insensitive", "amount": {"tolerance": 0.5}})
>>> diffs({"reservation_id": "ZFA04Y", "amount": 10}, {"reservation_id": "zfa04y", "amount": 10.4}, rules)
[]
>>> diffs({"reservation_id": "ZFA04Y"}, {"reservation_id": "ZFA04Z", "note": "x"}, {})
["reservation_id='ZFA04Z'", "note='x' (not expected)"]
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

import orjson

from ._text import shown

#: The matchers named by a bare word, and those that take a parameter.
NAMED = ("exact", "ignore", "subset", "superset", "case_insensitive", "set_equal")
PARAMETRIC = ("tolerance", "regex", "callable")

Rule = Callable[[Any, Any], bool]
_NUMBER = (int, float)


def _num(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


def equal(a: Any, b: Any) -> bool:
    """Deep equality of JSON values where a boolean is never a number.

    >>> equal({"n": 1, "xs": [1.0, "a"]}, {"n": 1.0, "xs": [1, "a"]}), equal(True, 1)
    (True, False)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _num(a) and _num(b):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _key(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def _contains(big: Any, small: Any) -> bool:
    """Every item of ``small`` is in ``big`` (dict items by key; list items as a multiset)."""
    if isinstance(big, dict) and isinstance(small, dict):
        return all(k in big and equal(big[k], v) for k, v in small.items())
    if isinstance(big, list) and isinstance(small, list):
        pool = list(big)
        for item in small:
            at = next((i for i, x in enumerate(pool) if equal(x, item)), None)
            if at is None:
                return False
            pool.pop(at)
        return True
    return equal(big, small)


def _fold(value: Any) -> Any:
    if isinstance(value, str):
        return value.casefold()
    if isinstance(value, list):
        return [_fold(v) for v in value]
    if isinstance(value, dict):
        return {k: _fold(v) for k, v in value.items()}
    return value


def _set_equal(expected: Any, made: Any) -> bool:
    if not (isinstance(expected, list) and isinstance(made, list)):
        return equal(expected, made)
    return {_key(x) for x in expected} == {_key(x) for x in made}


def _tolerance(width: float) -> Rule:
    def within(expected: Any, made: Any) -> bool:
        if _num(expected) and _num(made):
            return abs(expected - made) <= width
        return equal(expected, made)
    return within


def _regex(pattern: str) -> Rule:
    compiled = re.compile(pattern)

    def matches(_expected: Any, made: Any) -> bool:
        text = made if isinstance(made, str) else orjson.dumps(made).decode()
        return compiled.fullmatch(text) is not None
    return matches


_RULES: dict[str, Rule] = {
    "exact": equal,
    "ignore": lambda _e, _m: True,
    "subset": lambda e, m: _contains(e, m),
    "superset": lambda e, m: _contains(m, e),
    "case_insensitive": lambda e, m: equal(_fold(e), _fold(m)),
    "set_equal": _set_equal,
}


def make_rule(spec: Any, callables: dict[str, Callable] | None = None) -> Rule:
    """One matcher from its spec form (a name, or ``{tolerance|regex|callable: value}``),
    already validated by the spec loader; ``callables`` resolves callable names.

    >>> make_rule({"regex": "[A-Z0-9]{6}"})(None, "ZFA04Y"), make_rule("set_equal")([1, 2], [2, 1])
    (True, True)
    """
    if isinstance(spec, str):
        return _RULES[spec]
    (kind, value), = spec.items()
    if kind == "tolerance":
        return _tolerance(float(value))
    if kind == "regex":
        return _regex(value)
    fn = (callables or {})[value]
    return lambda e, m: bool(fn(e, m))


def compile_rules(table: dict[str, Any], callables: dict[str, Callable] | None = None) -> dict[str, Rule]:
    """A tool's ``{path: matcher spec}`` table as ``{path: rule}``."""
    return {path: make_rule(spec, callables) for path, spec in table.items()}


def _rule_at(rules: dict[str, Rule], path: list[str]) -> Rule | None:
    if not rules:
        return None
    exact = ".".join(path)
    hit = rules.get(exact)
    if hit is None and any(p.isdigit() for p in path):
        hit = rules.get(".".join("*" if p.isdigit() else p for p in path))
    return hit


def _walk(expected: Any, made: Any, rules: dict[str, Rule], path: list[str], out: list[str],
          limit: int) -> None:
    if len(out) >= limit:
        return
    rule = _rule_at(rules, path) if path else rules.get("*")
    if rule is not None:
        if not rule(expected, made):
            out.append(f"{'.'.join(path) or 'arguments'}={shown(made, 40)}")
        return
    if isinstance(expected, dict) and isinstance(made, dict):
        for key, value in expected.items():
            sub = path + [str(key)]
            if key in made:
                _walk(value, made[key], rules, sub, out, limit)
            elif _rule_at(rules, sub) is not _RULES["ignore"]:
                out.append(f"no {'.'.join(sub)}")
        for key, value in made.items():
            sub = path + [str(key)]
            if key not in expected and _rule_at(rules, sub) is not _RULES["ignore"]:
                out.append(f"{'.'.join(sub)}={shown(value, 40)} (not expected)")
        return
    if isinstance(expected, list) and isinstance(made, list) and len(expected) == len(made):
        for i, (e, m) in enumerate(zip(expected, made, strict=True)):
            _walk(e, m, rules, path + [str(i)], out, limit)
        return
    if not equal(expected, made):
        out.append(f"{'.'.join(path) or 'arguments'}={shown(made, 40)}")


def matches(expected: Any, made: Any, rules: dict[str, Rule]) -> bool:
    """Whether ``made`` matches ``expected`` under ``rules`` (:func:`diffs` is empty), without
    building any text: the fast test every candidate pair gets.

    >>> matches({"a": 1, "b": [1]}, {"a": 1.0, "b": [1]}, {}), matches({"a": 1}, {"a": 2}, {})
    (True, False)
    """
    if not rules:
        # Python's == is looser than equal() only where a boolean meets a number (True == 1):
        # its False is final, and it is decided in C.
        return expected == made and equal(expected, made)
    return not diffs(expected, made, rules, limit=1)


def distance(expected: Any, made: Any) -> int:
    """How many top-level arguments differ (absent on one side counts): ranks near misses."""
    if not (isinstance(expected, dict) and isinstance(made, dict)):
        return 0 if equal(expected, made) else 1
    return (sum(1 for k, v in expected.items() if k not in made or not equal(v, made[k]))
            + sum(1 for k in made if k not in expected))


def diffs(expected: Any, made: Any, rules: dict[str, Rule], *, limit: int = 4) -> list[str]:
    """Where ``made`` departs from ``expected`` under ``rules`` (empty: they match), as short
    texts (``path=value``, ``no path``, ``path=value (not expected)``), at most ``limit``."""
    out: list[str] = []
    _walk(expected, made, rules, [], out, limit)
    return out


def restrict(args: Any, keys: list[str] | None) -> Any:
    """Only ``keys`` of a dict of arguments (τ²-bench's ``compare_args``); all when None."""
    if keys is None or not isinstance(args, dict):
        return args
    return {k: v for k, v in args.items() if k in keys}


def check_matcher(spec: Any) -> str | None:
    """What is wrong with one matcher's spec form, or None.

    >>> check_matcher("case-insensitive"), check_matcher({"tolerance": -1})
    ("unknown matcher 'case-insensitive' (did you mean 'case_insensitive'?)", 'tolerance must be a number at least 0,
    got -1')
    """
    from ._spec import suggest

    if isinstance(spec, str):
        if spec in NAMED:
            return None
        return f"unknown matcher {spec!r}{suggest(spec, NAMED + PARAMETRIC)}"
    if not isinstance(spec, dict) or len(spec) != 1:
        return (f"a matcher is one of {', '.join(NAMED)} or a mapping with one of "
                f"{', '.join(PARAMETRIC)}, got {spec!r}")
    (kind, value), = spec.items()
    if kind not in PARAMETRIC:
        return f"unknown matcher {kind!r}{suggest(kind, PARAMETRIC + NAMED)}"
    if kind == "tolerance":
        if not _num(value) or not math.isfinite(value) or value < 0:
            return f"tolerance must be a number at least 0, got {value!r}"
    elif not isinstance(value, str):
        return f"{kind} must be a string, got {value!r}"
    elif kind == "regex":
        try:
            re.compile(value)
        except re.error as exc:
            return f"regex {value!r} is not a valid regular expression ({exc})"
    return None
