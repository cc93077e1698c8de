"""Writing an export whole or not at all, as ``fluke export`` and the report do: a ``.part``
file beside the target (made with the user's umask), renamed over it."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import BinaryIO, Iterator

from ..errors import UsageError


@contextlib.contextmanager
def open_atomic(path: str | Path | None) -> Iterator[BinaryIO | None]:
    """A binary stream for ``path`` (``-``: standard output; None: no stream) that appears whole
    on success and leaves nothing behind on any error.

    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "y.json")
    >>> with open_atomic(target) as out:
    ...     _ = out.write(b"[1]")
    >>> open(target).read()
    '[1]'
    """
    if path is None:
        yield None
        return
    if str(path) == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    target = _checked(path)
    part = target.with_name(target.name + ".part")
    try:
        with open(part, "wb") as out:
            yield out
        part.replace(target)
    finally:
        part.unlink(missing_ok=True)


def _checked(path: str | Path) -> Path:
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"-o {path}: is a folder; name a file to write")
    if not target.parent.exists():
        raise UsageError(f"-o {path}: the folder {target.parent} does not exist (create it first)")
    return target


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (``-``: standard output); an interrupted write leaves nothing behind.

    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "x.json")
    >>> write_atomic(target, b"{}"); open(target).read()
    '{}'
    """
    with open_atomic(path) as out:
        out.write(data)
