"""Readers other packages provide, through the ``fluke.readers`` entry-point group.

A package registers a reader for its own format in its ``pyproject.toml``::

    [project.entry-points."fluke.readers"]
    acme-log = "acme_fluke.reader:READER"

where ``READER`` is a :class:`fluke.adapters.Reader` whose ``name`` is the entry point's
name (``acme-log``). fluke then detects and reads the format in ``fluke ingest`` and
``read_file``, with no change to fluke; ``fluke formats`` lists it with its package. The
entry points are looked up when the registry is first imported; nothing of the plugin is
imported until its reader is needed (detection imports each plugin once).

>>> all(fmt.source != "fluke" for fmt in plugin_formats())
True
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._registry import Format

#: The entry-point group third-party readers register under.
GROUP = "fluke.readers"


def plugin_formats() -> list["Format"]:
    """The formats registered under :data:`GROUP`, ordered by name (the order detection tries them)."""
    from ._registry import Format

    found = []
    for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
        source = point.dist.name if point.dist is not None else "unknown package"
        found.append(Format(point.name, point.value, source))
    return found
