"""Read the output of agent frameworks into :class:`fluke.record.Run` objects.

No adapter imports its framework: each reads the JSON the framework wrote. Each format is
a :class:`Reader`; they are registered in :data:`FORMATS` (fluke's own, then those other
packages register through the ``fluke.readers`` entry-point group); :func:`read_file`
detects the format of a file (or takes the one you force) and yields runs, raising
:class:`fluke.errors.InputError` naming the file, the record and the field on bad input.

:data:`FORMAT_NAMES` lists fluke's own format names without importing any reader (nor
pydantic), from the one list of them (``_builtin.BUILTIN``).

>>> from fluke.adapters import FORMATS
>>> sorted(FORMATS)[:3]
['crewai', 'deepeval', 'fluke']
>>> FORMAT_NAMES == tuple(FORMATS)[:len(FORMAT_NAMES)]
True
"""

from __future__ import annotations

from typing import Any

from ._builtin import BUILTIN
from ._reader import Reader

#: fluke's own format names, in detection order (plugins' come after them in :data:`FORMATS`).
FORMAT_NAMES: tuple[str, ...] = tuple(name for name, _ in BUILTIN)

__all__ = ["FORMATS", "FORMAT_NAMES", "Archive", "Format", "Reader", "detect_format", "read_document", "read_file",
           "refresh_formats"]

_LAZY = ("FORMATS", "Format", "detect_format", "read_file", "read_document", "refresh_formats")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import _registry

        return getattr(_registry, name)
    if name == "Archive":
        from ._archive import Archive

        return Archive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
