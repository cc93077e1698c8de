"""Writing an export whole or not at all: a temporary file beside the target, renamed over it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


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
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
