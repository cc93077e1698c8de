"""Writing an export whole or not at all, as ``fluke export`` and the report do: a ``.part``
file beside the target (made with the user's umask), renamed over it."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UsageError


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (``-``: standard output); an interrupted write leaves nothing behind.

    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "x.json")
    >>> write_atomic(target, b"{}"); open(target).read()
    '{}'
    """
    if str(path) == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"-o {path}: is a folder; name a file to write")
    if not target.parent.exists():
        raise UsageError(f"-o {path}: the folder {target.parent} does not exist (create it first)")
    part = target.with_name(target.name + ".part")
    try:
        part.write_bytes(data)
        part.replace(target)
    finally:
        part.unlink(missing_ok=True)
