"""Comparing documents that hold floats: integers and strings exactly, floats to a relative tolerance.

A golden JSON file, or the same answer reached by two code paths, agrees with today's value to
about 1e-15; the last bit moves with the numpy, scipy or BLAS release a machine resolved (a
fresh install on numpy 2.4 printed ``0.20312976177708258`` where the golden file holds
``0.2031297617770826``). :func:`assert_same_doc` walks both documents and names the first path
that differs, so a failure says which field moved and by how much.

>>> assert_same_doc({"low": 0.20312976177708258, "n": [3, "a"]}, {"low": 0.2031297617770826, "n": [3, "a"]})
>>> assert_same_doc({"n": 3}, {"n": 3.0})
Traceback (most recent call last):
AssertionError: $.n: 3 (int) against 3.0 (float)
"""

from __future__ import annotations

import math

REL = 1e-12


def differences(actual, expected, *, rel: float = REL, abs_tol: float = 1e-14, path: str = "$") -> list[str]:
    """Every path where ``actual`` and ``expected`` differ: floats beyond ``rel``, anything else at all."""
    if isinstance(actual, bool) or isinstance(expected, bool) or not (
            isinstance(actual, float) or isinstance(expected, float)):
        if type(actual) is not type(expected) and not (
                isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple))):
            return [f"{path}: {actual!r} ({type(actual).__name__}) against {expected!r} ({type(expected).__name__})"]
    if isinstance(actual, dict):
        out = [f"{path}: keys {sorted(set(actual) ^ set(expected))} in one document only"] \
            if set(actual) != set(expected) else []
        for key in sorted(set(actual) & set(expected), key=str):
            out += differences(actual[key], expected[key], rel=rel, abs_tol=abs_tol, path=f"{path}.{key}")
        return out
    if isinstance(actual, (list, tuple)):
        if len(actual) != len(expected):
            return [f"{path}: {len(actual)} items against {len(expected)}"]
        out = []
        for i, (a, b) in enumerate(zip(actual, expected, strict=True)):
            out += differences(a, b, rel=rel, abs_tol=abs_tol, path=f"{path}[{i}]")
        return out
    if isinstance(actual, float) and isinstance(expected, float):
        if math.isnan(actual) and math.isnan(expected):
            return []
        if math.isclose(actual, expected, rel_tol=rel, abs_tol=abs_tol):
            return []
        return [f"{path}: {actual!r} against {expected!r}"]
    if isinstance(actual, float) or isinstance(expected, float):
        return [f"{path}: {actual!r} ({type(actual).__name__}) against {expected!r} ({type(expected).__name__})"]
    return [] if actual == expected else [f"{path}: {actual!r} against {expected!r}"]


def strings_in(value):
    """Every string inside a parsed JSON document, keys included.

    >>> list(strings_in({"a": ["b", 1, {"c": "d"}]}))
    ['a', 'b', 'c', 'd']
    """
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def assert_same_doc(actual, expected, *, rel: float = REL) -> None:
    """Fail naming the first differing path (floats compared to ``rel``; all else exactly)."""
    diff = differences(actual, expected, rel=rel)
    if diff:
        more = f" (and {len(diff) - 1} more)" if len(diff) > 1 else ""
        raise AssertionError(diff[0] + more)
