"""Decode the ``flatted`` serialisation n8n uses for ``execution_data.data`` in its database.

A flatted document is a JSON array: element 0 is the root; inside every object or array of
the document, a string is an index (in decimal) into the array, and the strings of the
data are the array's top-level string elements. Shared and circular references decode to
the same Python object, as in the JavaScript original.

>>> unflatten([{"a": "1", "b": "2"}, "x", [2, "1"]])
{'a': 'x', 'b': [2, 'x']}
>>> looks_flatted([{"version": 1, "resultData": "1"}, {}])
True
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError


class FlattedError(InputError):
    """The array is not a valid flatted document (the n8n reader names the file and record)."""

    def __init__(self, message: str) -> None:
        super().__init__(None, None, None, message)


def looks_flatted(doc: Any) -> bool:
    """A cheap test: a list whose root object refers to later elements by index strings."""
    if not isinstance(doc, list) or len(doc) < 2 or not isinstance(doc[0], dict) or not doc[0]:
        return False
    refs = [v for v in doc[0].values() if isinstance(v, str)]
    return bool(refs) and all(v.isdecimal() and 0 < int(v) < len(doc) for v in refs)


def unflatten(doc: list[Any]) -> Any:
    """Rebuild the object graph of a flatted array (no recursion limit on width;
    depth is the data's own nesting)."""
    if not isinstance(doc, list) or not doc:
        raise FlattedError("a flatted document is a non-empty JSON array")
    built: dict[int, Any] = {}

    def ref(text: str) -> Any:
        if not text.isdecimal() or int(text) >= len(doc):
            raise FlattedError(f"reference {text!r} points outside the array of {len(doc)}")
        return node(int(text))

    def node(i: int) -> Any:
        value = doc[i]
        if not isinstance(value, (dict, list)):
            return value
        if i in built:
            return built[i]
        if isinstance(value, dict):
            out: Any = {}
            built[i] = out
            for key, item in value.items():
                out[key] = ref(item) if isinstance(item, str) else item
        else:
            out = []
            built[i] = out
            out.extend(ref(item) if isinstance(item, str) else item for item in value)
        return out

    try:
        return node(0)
    except RecursionError:
        raise FlattedError("its references nest too deep to rebuild") from None
