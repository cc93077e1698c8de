"""msgspec structs made from the run model itself: the schema is declared once, in pydantic.

:func:`structs_of` walks a model's fields (their types, bounds and defaults) and builds a
msgspec :class:`~msgspec.Struct` for it and for every model inside it, unknown fields
refused, so the fast path of an ingest (:mod:`fluke.record._line`) decodes exactly the
fields the model has: a field added to :class:`fluke.record.Run` (or to an event, the
outcome, ...) is in the structs the next time fluke is imported, with no edit here or in
the readers.

What a type does not say, a model's *validators* do. The fast path knows the few the run
model has (:data:`KNOWN_VALIDATORS`: names free of NUL and not too long, the format version
not newer, free-form JSON not nested too deep); a model with any other validator leaves
:attr:`Plan.known` False, and the fast path then declines every line (the model decides each).

A float is bounded below 1e16 in magnitude (orjson, which writes the body of a run built in
code, writes larger ones with an exponent sign msgspec leaves out) and an integer to 64 bits.

>>> from pydantic import BaseModel
>>> from fluke.record import Run
>>> plan = structs_of(Run)
>>> sorted(plan.run.__struct_fields__) == sorted(set(Run.model_fields))
True
>>> plan.names, plan.known
(('scenario', 'unit', 'tape', 'tags', 'condition'), True)
>>> class Extended(Run):
...     attempt: int | None = None
>>> "attempt" in structs_of(Extended).run.__struct_fields__
True
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
import msgspec
from msgspec import UNSET, Meta, UnsetType
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from ._identity import Identity

#: orjson writes a float this large or larger with an exponent sign msgspec leaves out.
BIG = 1e16
_I64 = (-(2 ** 63), 2 ** 63 - 1)

#: The validators of the run's models the fast path honours, by name: ``names`` (every
#: string of the field is a storable name: no NUL, at most MAX_NAME characters; integers
#: within 64 bits), ``version`` (the format version is not newer than this fluke's) and
#: ``json`` (a free-form value a ledger can store). The identity is validated by its model
#: once per distinct value, so its validators need no fast form.
KNOWN_VALIDATORS = {"_name_storable": "names", "_tags_storable": "names", "_condition_storable": "names",
                    "_not_newer": "version", "_storable": "json"}


@dataclass
class Plan:
    """The structs of one run model: ``run`` (decodes a line), ``names`` (its fields holding
    names to check), ``free`` (per struct, its free-form fields), ``structs`` (each struct's
    model), ``known`` (every validator has a fast form)."""

    run: type
    names: tuple[str, ...] = ()
    free: dict[type, tuple[str, ...]] = field(default_factory=dict)
    structs: dict[type, type] = field(default_factory=dict)
    known: bool = True


def structs_of(model: type[BaseModel], *, outside: frozenset[str] = frozenset({"source"}),
               absent: frozenset[str] = frozenset({"gold"}), version: int | None = None) -> Plan:
    """The :class:`Plan` of ``model``: fields in ``outside`` (not in the body) and ``absent``
    (left out when None) may be unset, so the encoder writes neither; ``version`` bounds the
    field a ``_not_newer`` validator checks."""
    builder = _Builder(version)
    plan = Plan(run=builder.struct(model, unset=outside | absent))
    plan.free, plan.structs, plan.known = builder.free, builder.structs, builder.known
    plan.names = tuple(name for decorator in model.__pydantic_decorators__.field_validators.values()
                       if KNOWN_VALIDATORS.get(decorator.func.__name__) == "names" for name in decorator.info.fields)
    return plan


class _Builder:
    def __init__(self, version: int | None) -> None:
        self.version = version
        self.made: dict[tuple, type] = {}
        self.free: dict[type, tuple[str, ...]] = {}
        self.structs: dict[type, type] = {}
        self.known = True

    def struct(self, model: type[BaseModel], *, tag: str | None = None, unset: frozenset[str] = frozenset(),
               checked: bool = True) -> type:
        made = self.made.get((model, tag))
        if made is not None:
            return made
        checked = checked and not issubclass(model, Identity)   # an identity is validated by its model
        validated: dict[str, str] = {}
        for decorator in model.__pydantic_decorators__.field_validators.values():
            kind = KNOWN_VALIDATORS.get(decorator.func.__name__)
            if kind is None and checked:
                self.known = False
            for name in decorator.info.fields:
                validated[name] = kind or ""
        inner = checked
        fields, free = [], []
        for name, info in model.model_fields.items():
            if tag is not None and name == "kind":
                continue   # the tag itself
            kind = validated.get(name)
            spec = self.type_of(info.annotation, info.metadata, checked=inner)
            if kind == "version" and self.version is not None:
                spec = Annotated[int, Meta(ge=_I64[0], le=self.version)]
            if kind == "json" or _free(info.annotation):
                free.append(name)
            if name in unset:
                fields.append((name, Union[spec, None, UnsetType], UNSET))
            elif info.default_factory is not None:
                factory = info.default_factory
                if isinstance(factory, type) and issubclass(factory, BaseModel):   # the model's own default
                    factory = self.struct(factory, checked=inner)
                fields.append((name, spec, msgspec.field(default_factory=factory)))
            elif info.default is PydanticUndefined:
                fields.append((name, spec))
            else:
                fields.append((name, spec, info.default))
        options: dict[str, Any] = {"forbid_unknown_fields": True, "gc": False, "kw_only": True}
        if tag is not None:
            options.update(tag=tag, tag_field="kind", namespace={"kind": tag})   # read as the model's field
        # In key order: the body is encoded with sorted keys, and msgspec's sort of each struct's
        # fields then meets them sorted already (a sixth fewer instructions to encode a run of 20
        # events, counted by callgrind). The structs are keyword-only, so the order changes nothing else.
        fields.sort(key=lambda spec: spec[0])
        made = msgspec.defstruct(f"_{model.__name__}", fields, **options)
        self.made[(model, tag)] = made
        self.free[made] = tuple(free)
        self.structs[made] = model
        return made

    def type_of(self, annotation: Any, metadata: list | tuple = (), *, checked: bool = True) -> Any:
        """The msgspec type of a pydantic annotation and its constraints."""
        origin, args = get_origin(annotation), get_args(annotation)
        if origin is Annotated:
            inner, *extra = args
            info = next((e for e in extra if isinstance(e, FieldInfo)), None)
            if info is not None and info.discriminator is not None:
                members = get_args(inner)
                return Union[tuple(self.struct(m, tag=_tag(m, info.discriminator), checked=checked)
                                   for m in members)]
            more = [m for e in extra for m in (e.metadata if isinstance(e, FieldInfo) else [e])]
            return self.type_of(inner, [*metadata, *more], checked=checked)
        if origin is Union or origin is types.UnionType:
            return Union[tuple(self.type_of(a, metadata, checked=checked) for a in args)]
        if origin is list:
            return list[self.type_of(args[0], checked=checked)]
        if origin is dict:
            return dict[self.type_of(args[0], checked=checked), self.type_of(args[1], checked=checked)]
        if origin is Literal or annotation is Any or annotation is type(None) or annotation is None:
            return annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return self.struct(annotation, checked=checked)
        bounds = _bounds(metadata)
        if annotation is bool:
            return bool
        if annotation is int:
            return Annotated[int, Meta(ge=max(bounds.get("ge", _I64[0]), _I64[0]),
                                       le=min(bounds.get("le", _I64[1]), _I64[1]))]
        if annotation is float:
            return Annotated[float, Meta(gt=-BIG, lt=BIG)]
        if annotation is str:
            return Annotated[str, Meta(**{k: v for k, v in bounds.items() if k in ("min_length", "max_length")})] \
                if bounds else str
        self.known = False   # a type this does not know: the fast path stays off
        return Any


def _bounds(metadata: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in metadata:
        for name in ("ge", "le", "min_length", "max_length"):
            value = getattr(item, name, None)
            if value is not None:
                out[name] = value
        if isinstance(item, (annotated_types.Gt, annotated_types.Lt)):
            raise TypeError("strict bounds are not mapped")   # none in the run model
    return out


def _tag(model: type[BaseModel], discriminator: str) -> str:
    """The value a member of a tagged union carries in ``discriminator`` (its Literal)."""
    (value,) = get_args(model.model_fields[discriminator].annotation)
    return value


def _free(annotation: Any) -> bool:
    """Whether a field may hold free-form JSON (Any somewhere inside it)."""
    if annotation is Any:
        return True
    return any(_free(a) for a in get_args(annotation) if not isinstance(a, FieldInfo))
