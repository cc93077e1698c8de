"""A condition space: the axes a suite varies, each with its levels, declared before any run.

An axis is categorical (levels in no order: how a customer is named) or ordered (levels on a
scale: how many records a lookup returns). A point is one level of every axis. A run sits at
the point its ``condition`` names; a condition that names a level no axis declares, or a key no
axis has, is off the space ("never named").

The space is declared in code or in a small YAML file::

    name: refund desk
    axes:
      case: {levels: [unique, same_name, missing_id]}
      records: {levels: [1, 5, 20], ordered: true}

>>> space = Space.from_mapping({"axes": {"case": {"levels": ["unique", "same_name"]},
...                                       "records": {"levels": [1, 5, 20], "ordered": True}}})
>>> space.size, space.axes[1].ordered, space.key(space.points()[0])
(6, True, 'case=unique,records=1')
>>> space.point_of({"case": "same_name", "records": 5, "lang": "fr"})
('same_name', '5')
>>> space.locate({"case": "two_accounts", "records": 5}).unnamed
(('case', 'two_accounts'),)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InputError

Point = tuple[str, ...]


def level_text(value: Any) -> str:
    """A level as the condition key prints it (``True`` → ``True``, ``5`` → ``5``).

    >>> level_text(5), level_text("a"), level_text(0.5)
    ('5', 'a', '0.5')
    """
    return str(value)


@dataclass(frozen=True)
class Axis:
    """One axis: its name, its levels (as text, in the declared order) and whether they are ordered."""

    name: str
    levels: tuple[str, ...]
    ordered: bool = False

    def __post_init__(self) -> None:
        if not self.levels:
            raise InputError(None, f"axis {self.name!r}", "levels", "an axis needs at least one level")
        if len(set(self.levels)) != len(self.levels):
            raise InputError(None, f"axis {self.name!r}", "levels", "a level is listed twice")


@dataclass(frozen=True)
class Located:
    """Where a condition falls: its point on the space, or what in it the space never named."""

    point: Point | None
    unnamed: tuple[tuple[str, str], ...] = ()   # (axis or key, level) the space does not declare
    missing: tuple[str, ...] = ()               # axes the condition does not give


@dataclass(frozen=True)
class Space:
    """Axes with levels; the points are every combination of one level per axis."""

    axes: tuple[Axis, ...]
    name: str = ""

    def __post_init__(self) -> None:
        if not self.axes:
            raise InputError(None, "space", "axes", "a condition space needs at least one axis")
        names = [a.name for a in self.axes]
        if len(set(names)) != len(names):
            raise InputError(None, "space", "axes", "an axis is declared twice")

    @property
    def size(self) -> int:
        """How many points the space names."""
        out = 1
        for a in self.axes:
            out *= len(a.levels)
        return out

    def points(self) -> list[Point]:
        """Every point, the first axis slowest, each axis in its declared order."""
        return list(itertools.product(*(a.levels for a in self.axes)))

    def key(self, point: Point) -> str:
        """A point as a condition key (``axis=level`` sorted by axis, as runs print their condition)."""
        pairs = dict(zip((a.name for a in self.axes), point, strict=True))
        return ",".join(f"{k}={pairs[k]}" for k in sorted(pairs))

    def condition(self, point: Point) -> dict[str, str]:
        """A point as a condition mapping."""
        return dict(zip((a.name for a in self.axes), point, strict=True))

    def axis(self, name: str) -> Axis:
        return next(a for a in self.axes if a.name == name)

    def locate(self, condition: Mapping[str, Any], *, strict_keys: bool = False) -> Located:
        """The point ``condition`` names, or what it names that the space does not.

        Keys the space has no axis for are ignored unless ``strict_keys`` (an incident's conditions
        are all taken to matter; a run may carry extra bookkeeping keys)."""
        unnamed: list[tuple[str, str]] = []
        missing: list[str] = []
        point: list[str] = []
        for a in self.axes:
            if a.name not in condition:
                missing.append(a.name)
                continue
            level = level_text(condition[a.name])
            if level not in a.levels:
                unnamed.append((a.name, level))
            point.append(level)
        if strict_keys:
            known = {a.name for a in self.axes}
            unnamed += [(k, level_text(v)) for k, v in sorted(condition.items()) if k not in known]
        if unnamed or missing:
            return Located(None, tuple(unnamed), tuple(missing))
        return Located(tuple(point))

    def point_of(self, condition: Mapping[str, Any]) -> Point | None:
        """The point of a run's condition, or None when it is off the space."""
        return self.locate(condition).point

    @classmethod
    def from_mapping(cls, data: Any, *, file: str | None = None) -> "Space":
        """A space from its YAML/JSON form (see the module's docstring); a bad field names itself."""
        if not isinstance(data, Mapping):
            raise InputError(file, "space", None, "a condition space is a mapping with 'axes'")
        extra = set(data) - {"name", "axes"}
        if extra:
            raise InputError(file, "space", sorted(extra)[0], "unknown field (a space has 'name' and 'axes')")
        axes_in = data.get("axes")
        if not isinstance(axes_in, Mapping) or not axes_in:
            raise InputError(file, "space", "axes", "give 'axes' as a mapping of axis name to its levels")
        axes = []
        for name, body in axes_in.items():
            where = f"axis {name!r}"
            if isinstance(body, Sequence) and not isinstance(body, str):
                body = {"levels": body}
            if not isinstance(body, Mapping):
                raise InputError(file, where, None, "an axis is a list of levels or a mapping with 'levels'")
            bad = set(body) - {"levels", "ordered"}
            if bad:
                raise InputError(file, where, sorted(bad)[0], "unknown field (an axis has 'levels' and 'ordered')")
            levels = body.get("levels")
            if not isinstance(levels, Sequence) or isinstance(levels, str) or not levels:
                raise InputError(file, where, "levels", "give the levels as a non-empty list")
            if any(isinstance(v, (Mapping, list)) for v in levels):
                raise InputError(file, where, "levels", "a level is a string or a number")
            ordered = body.get("ordered", False)
            if not isinstance(ordered, bool):
                raise InputError(file, where, "ordered", "is true or false")
            try:
                axes.append(Axis(str(name), tuple(level_text(v) for v in levels), ordered))
            except InputError as exc:
                raise InputError(file, exc.record, exc.field, exc.message) from None
        name = data.get("name", "")
        if not isinstance(name, str):
            raise InputError(file, "space", "name", "is a string")
        try:
            return cls(tuple(axes), name)
        except InputError as exc:
            raise InputError(file, exc.record, exc.field, exc.message) from None


def load_space(path: str | Path) -> Space:
    """A condition space from a YAML (or JSON) file; a bad file gives one error naming the field.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "space.yaml")
    >>> _ = open(p, "w").write("axes:\\n  case: [unique, same_name]\\n  records: {levels: [1, 5], ordered: true}\\n")
    >>> load_space(p).size
    4
    """
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(str(path), None, None, f"cannot read the space ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(str(path), None, None, "is not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        raise InputError(str(path), where, None, "is not valid YAML") from None
    return Space.from_mapping(data, file=str(path))
