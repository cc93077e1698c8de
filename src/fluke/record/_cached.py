"""Models whose cached values (a run's hash, an identity's version) belong to the object that
computed them: a copy made with changed fields computes its own.

pydantic's ``model_copy(update=...)`` copies the instance's ``__dict__``, where a
``functools.cached_property`` keeps its value, so without this the changed copy would carry
the original's hash.

>>> from functools import cached_property
>>> class Box(CachedModel):
...     size: int
...     @cached_property
...     def double(self) -> int:
...         return 2 * self.size
>>> box = Box(size=2)
>>> box.double, box.model_copy(update={"size": 5}).double, box.model_copy().double
(4, 10, 4)
"""

from __future__ import annotations

from functools import cache, cached_property
from typing import Any

from pydantic import BaseModel


@cache
def cached_names(cls: type) -> tuple[str, ...]:
    """The names of ``cls``'s cached properties (its own and inherited), as an immutable tuple."""
    return tuple(sorted({name for klass in cls.__mro__ for name, value in vars(klass).items()
                         if isinstance(value, cached_property)}))


class CachedModel(BaseModel):
    """A model whose ``model_copy(update=...)`` drops every cached property's value."""

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:
        copy = super().model_copy(update=update, deep=deep)
        if update:
            for name in cached_names(type(self)):
                copy.__dict__.pop(name, None)
        return copy
